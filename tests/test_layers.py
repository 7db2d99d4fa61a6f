"""Imports run one way, core < parsers, hardware < reporters < API < cli, and never in a cycle."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.conftest import ROOT

API = {
    "rooflint",
    "rooflint.pipeline",
    "rooflint.saved",
    "rooflint.distributed",
    "rooflint.__main__",
}
# layer → the layers it must never import (None: anything outside rooflint.core is forbidden)
FORBIDDEN = {
    "core": (
        "rooflint.parsers",
        "rooflint.hardware",
        "rooflint.reporters",
        "rooflint.cli",
        "API",
        "click",
    ),
    "parsers": None,
    "hardware": None,
    "reporters": ("rooflint.parsers", "rooflint.hardware", "rooflint.cli", "API", "click"),
}


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name, found through pyproject's package-dir."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {}
    for package, folder in config["package-dir"].items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found.setdefault(name, path)
    return found


def imports(name: str, path: Path) -> list[str]:
    """Absolute names of everything `path` imports, at any depth (lazy imports count too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            out.extend(f"{base}.{alias.name}" for alias in node.names)
    return out


def layer(name: str) -> str:
    if name in API or name == "click" or name.startswith("click."):
        return "API" if name in API else "click"
    parts = name.split(".")
    return (
        parts[1]
        if len(parts) > 1 and parts[1] in ("core", "parsers", "hardware", "reporters", "cli")
        else "API"
    )


def _is_module(target: str, known: dict[str, Path]) -> str:
    """The module a `from x import y` names: x.y when that is a module, else x."""
    return target if target in known else target.rsplit(".", 1)[0]


def violations(known: dict[str, Path]) -> list[str]:
    found = []
    for name, path in sorted(known.items()):
        rule = FORBIDDEN.get(layer(name), ())
        for target in imports(name, path):
            target = _is_module(target, known)
            if not (target == "rooflint" or target.startswith(("rooflint.", "click"))):
                continue
            if layer(target) != layer(name) and _forbidden(rule, target):
                found.append(f"{name} ({layer(name)}) imports {target}")
    return found


def _forbidden(rule, target: str) -> bool:
    if rule is None:
        return not target.startswith("rooflint.core")
    for banned in rule:
        if banned == "API" and target.startswith("rooflint") and layer(target) == "API":
            return True
        if target == banned or target.startswith(banned + "."):
            return True
    return False


def test_imports_run_one_way():
    assert violations(modules()) == []


def test_the_rule_catches_an_upward_import(tmp_path):
    core = tmp_path / "bad.py"
    core.write_text(
        "import click\nfrom rooflint import pipeline\nfrom rooflint.parsers import read\n"
    )
    parser = tmp_path / "parser.py"
    parser.write_text("from rooflint.reporters import common\nfrom rooflint.core import schema\n")
    reporter = tmp_path / "rep.py"
    reporter.write_text("from rooflint import __version__\nfrom rooflint.core import names\n")
    known = {
        **modules(),
        "rooflint.core.bad": core,
        "rooflint.parsers.bad": parser,
        "rooflint.reporters.bad": reporter,
    }
    assert set(violations(known)) - set(violations(modules())) == {
        "rooflint.core.bad (core) imports click",
        "rooflint.core.bad (core) imports rooflint.pipeline",
        "rooflint.core.bad (core) imports rooflint.parsers",
        "rooflint.parsers.bad (parsers) imports rooflint.reporters.common",
        "rooflint.reporters.bad (reporters) imports rooflint",
    }


# --- no import cycles; the API reaches reporters only through the registry ------------------


def graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package modules it imports (lazy imports included)."""
    return {
        name: {t for t in (_is_module(t, known) for t in imports(name, path)) if t in known}
        - {name}
        for name, path in known.items()
    }


def cycles(known: dict[str, Path]) -> set[tuple[str, ...]]:
    """Every group of modules that import one another, directly or through others."""
    edges = graph(known)
    reach = {name: _reachable(edges, name) for name in edges}
    return {
        tuple(sorted(m for m in reach[name] if name in reach[m]))
        for name in edges
        if name in reach[name]
    }


def _reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in edges[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


def api_reporter_imports(known: dict[str, Path]) -> list[str]:
    """API modules importing a reporter module instead of the registry, rooflint.reporters."""
    return [
        f"{name} imports {target}"
        for name, path in sorted(known.items())
        if layer(name) == "API"
        for target in (_is_module(t, known) for t in imports(name, path))
        if target.startswith("rooflint.reporters.")
    ]


def test_no_import_cycles():
    assert cycles(modules()) == set()


def test_the_cycle_check_finds_lazy_and_indirect_cycles(tmp_path):
    planted = {
        "a": "from rooflint.core import b\n",
        "b": "def later():\n    from rooflint.core import c\n",  # lazy
        "c": "def later():\n    import rooflint.core.a\n",
        "d": "from rooflint.core import a\n",  # imports into the cycle, is not in it
    }
    for stem, text in planted.items():
        (tmp_path / f"{stem}.py").write_text(text)
    known = {**modules(), **{f"rooflint.core.{s}": tmp_path / f"{s}.py" for s in planted}}
    assert cycles(known) - cycles(modules()) == {
        ("rooflint.core.a", "rooflint.core.b", "rooflint.core.c")
    }


def test_the_api_imports_no_reporter_module():
    assert api_reporter_imports(modules()) == []


def test_the_api_reporter_check_finds_a_reporter_import(tmp_path):
    api = tmp_path / "bad_api.py"
    api.write_text(
        "from rooflint import reporters\n"  # the registry: allowed
        "from rooflint.reporters import render\n"  # a name of the registry: allowed
        "from rooflint.reporters import json_report\n"
        "def later():\n    import rooflint.reporters.chart\n"
    )
    known = {**modules(), "rooflint.bad_api": api}
    assert api_reporter_imports(known) == [
        "rooflint.bad_api imports rooflint.reporters.json_report",
        "rooflint.bad_api imports rooflint.reporters.chart",
    ]
