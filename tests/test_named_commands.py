"""Every `rooflint ...` command that a message, an advice line or a note names exists and takes
what the text gives it (issue 31: advice said `rooflint metrics`, which exits 2, and a rocprof
note said "pass arch=...", an option that does not exist).

The texts are the string literals of the package (docstrings and comments left out: they are
for readers of the code). A named command with no placeholder and no required input is run and
must exit 0 (a command that reads inputs is named, not run); and its options must be options of
that command, their values accepted."""

from __future__ import annotations

import ast
import re

import click
import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import ROOT

SOURCES = [ROOT / "src" / "rooflint", ROOT / "parsers", ROOT / "hardware"]
NAMED = re.compile(r"`(rooflint(?: [^`]*)?)`")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.]*$|\.\.\.|^\|$")  # ID, FILE.toml, BASE, ..., a pipe


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _texts() -> list[tuple[str, str]]:
    """(where, string) of every string literal that is not a docstring; f-strings by parts."""
    found = []
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if id(node) not in skip:
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        found.append((where, node.value))
    return found


def _named() -> list[tuple[str, str]]:
    # adjacent literals are joined by Python before ast sees them, so a span never breaks
    return sorted({(m, where) for where, text in _texts() for m in NAMED.findall(text)})


NAMED_COMMANDS = _named()


def test_the_messages_name_commands():
    """The scan finds what it is meant to (the advice's metrics command among them)."""
    named = {command for command, _ in NAMED_COMMANDS}
    assert {"rooflint metrics ncu", "rooflint devices"} <= named


def _resolve(words: list[str]):
    """(the command the leading words name, the words left)."""
    command: click.Command = main
    while words and isinstance(command, click.Group):
        sub = command.get_command(click.Context(command), words[0])
        if sub is None:
            break
        command, words = sub, words[1:]
    return command, words


@pytest.mark.parametrize(("named", "where"), NAMED_COMMANDS, ids=lambda v: v)
def test_every_named_command_exists_and_takes_what_it_is_given(named, where):
    words = named.split()[1:]
    command, rest = _resolve(words)
    assert command is not main or not rest, f"{where}: `{named}` names no command"
    params = {opt: p for p in command.params for opt in p.opts}
    placeholders = False
    i = 0
    while i < len(rest):
        word = rest[i]
        if PLACEHOLDER.search(word):
            placeholders = True
        elif word.startswith("-"):
            for option in word.split("/"):
                assert option in params, f"{where}: `{named}`: {command.name} has no {option}"
            param = params[word.split("/")[0]]
            if not getattr(param, "is_flag", False) and i + 1 < len(rest):
                value = rest[i + 1]
                if not PLACEHOLDER.search(value):
                    param.type.convert(value, param, None)  # raises on a value it refuses
                i += 1
        else:
            pytest.fail(f"{where}: `{named}`: {command.name} takes no {word!r} here")
        i += 1
    inputs = any(p.required or isinstance(p, click.Argument) for p in command.params)
    if placeholders or inputs:  # a command that reads inputs is named, not run, by a message
        return
    result = CliRunner().invoke(main, words)
    assert result.exit_code == 0, f"{where}: `{named}` exits {result.exit_code}: {result.output}"


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_the_latency_advice_names_the_metrics_command_of_its_vendor(vendor):
    """Without vector FLOP counters the advice says which command collects them."""
    from rooflint.core import explain

    text = explain.sentence("latency-bound", 0.24, "dram", vendor=vendor, unmeasured="vector")
    expected = {"nvidia": "rooflint metrics ncu", "amd": "rooflint metrics rocprof"}[vendor]
    assert NAMED.findall(text) == [expected]
    assert (expected, "src/rooflint/core/explain.py") in {
        (c, w.rsplit(":", 1)[0]) for c, w in NAMED_COMMANDS
    }
