"""Imports run one way: core < parsers, hardware < reporters < API < cli (docs/architecture.md)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.helpers import ROOT

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
