"""No decision is taken by searching free text: facts cross the code as codes (issue 34).

The package source (src/, parsers/, hardware/) is read as Python syntax. Two things fail:
- a text search over a column (`.str.contains`, `.str.find`, `.str.match`, `.str.fullmatch`,
  `np.char.find`), unless it is listed in PARSING (reading a profile's cells is parsing);
- any text test (`in`, `.startswith`, `.endswith`, `.find`, `.replace`, `.index`, `.count`,
  a pattern's `search`, `match` or `fullmatch`) on the words of a launch's bookkeeping: the
  `missing`, `notes` and `reason` texts and the names bound by iterating over them, unless
  listed in PARSING too (reading back a saved report is parsing).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ["src", "parsers", "hardware"]
COLUMN_SEARCHES = {"contains", "find", "match", "fullmatch"}
TEXT_TESTS = {"startswith", "endswith", "find", "rfind", "replace", "index", "count", "search"}
BOOKKEEPING = re.compile(r"missing|notes?|reason")  # a launch's words, as columns name them
# (path, a piece of the line): why reading that text is parsing, not deciding on words.
PARSING = {
    ("parsers/values.py", 'sample.str.contains(",", regex=False)'): "thousands separator",
    ("parsers/values.py", "sample.str.match(_DE)"): "a locale's number layout",
    ("parsers/values.py", "sample.str.match(_EN)"): "a locale's number layout",
    ("parsers/values.py", "sample.str.match(_AMBIGUOUS_COMMA)"): "a locale's number layout",
    ("parsers/values.py", 'text.str.contains("(", regex=False)'): "ncu's per-instance cells",
    ("parsers/ncu_locale.py", "str.match(_REFERENCE[name])"): "a locale's number layout",
    ("parsers/ncu_locale.py", 'original.str.contains("-", regex=False)'): "a sign in a cell",
    ("parsers/kineto_models.py", '["DtoD" in n for n in name[dtod]]'): "a memcpy's kind",
    ("src/rooflint/saved.py", "n.startswith(prefix)"): "a saved report's notes, per source",
    # the words of a saved report or Parquet dataset read back into codes (schema.conform)
    ("src/rooflint/core/schema.py", "_NO_FLOP_COUNTERS_READ.fullmatch(reason)"): "read back",
}


def sources() -> list[Path]:
    return sorted(p for folder in PACKAGE for p in (ROOT / folder).rglob("*.py"))


def findings(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each text search the rules above forbid, in one file."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    bound = _bookkeeping_names(tree)

    def names_words(node) -> bool:
        return any(_names_bookkeeping(n) or getattr(n, "id", None) in bound for n in ast.walk(node))

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, receiver = node.func.attr, node.func.value
            accessor = isinstance(receiver, ast.Attribute) and receiver.attr in ("str", "char")
            if accessor and attr in COLUMN_SEARCHES:
                out.append((node.lineno, f".{receiver.attr}.{attr}"))
            elif attr in ("search", "match", "fullmatch") and any(map(names_words, node.args)):
                out.append((node.lineno, f"a pattern's .{attr} on bookkeeping words"))
            elif attr in TEXT_TESTS and names_words(receiver):
                out.append((node.lineno, f".{attr} on bookkeeping words"))
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            if any(names_words(c) for c in node.comparators) and _is_text(node.left):
                out.append((node.lineno, "`in` on bookkeeping words"))
    return out


def _names_bookkeeping(node) -> bool:
    """`missing`, `notes`, `x.reason`, `row["missing"]`, `row.get("notes")`: the words."""
    if isinstance(node, ast.Name):
        return bool(BOOKKEEPING.fullmatch(node.id))
    if isinstance(node, ast.Attribute):
        return bool(BOOKKEEPING.fullmatch(node.attr))
    key = None
    if isinstance(node, ast.Subscript):
        key = node.slice
    elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args:
        key = node.args[0]
    return isinstance(key, ast.Constant) and bool(BOOKKEEPING.fullmatch(str(key.value)))


def _bookkeeping_names(tree: ast.AST) -> set[str]:
    """Names bound by a loop or comprehension over the words (`for n in notes`), file-wide."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.comprehension):
            if any(_names_bookkeeping(n) for n in ast.walk(node.iter)):
                names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


def _is_text(node) -> bool:
    """A piece of text looked for: a string literal, an f-string or a CONSTANT (a lowercase
    name, `quantity in reasons`, is a key looked up in a dict, not a search)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return isinstance(node, ast.JoinedStr) or (name.isupper() and name.strip("_") != "")


def unlisted(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        f"{rel}:{line}: {what}: {lines[line - 1].strip()}"
        for line, what in findings(path)
        if not any(rel == p and piece in lines[line - 1] for p, piece in PARSING)
    ]


def test_no_decision_searches_free_text():
    found = [f for path in sources() for f in unlisted(path)]
    assert found == [], "decisions taken on text (make the fact a code):\n" + "\n".join(found)


def test_every_listed_parse_is_still_there():
    """An entry of PARSING whose line is gone would let a new search through unseen."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in sources()}
    stale = [(p, piece) for p, piece in PARSING if piece not in texts.get(p, "")]
    assert stale == []


MAIN_BEFORE_ISSUE_34 = {  # the searches this test was written to catch, as they were
    "analysis.py": (
        "def _reasons(frame):\n"
        '    no_counters = (\n        schema.filled(frame["missing"], "").str.contains('
        "_NO_COUNTERS_MARK, regex=False).to_numpy()\n    )\n"
    ),
    "ranking.py": (
        "def unmeasured(analysed):\n"
        '    missing = schema.filled(analysed["missing"], "")\n'
        "    flags = {name: missing.str.contains(text, regex=False) for name, text in "
        "UNMEASURED.items()}\n"
    ),
    "schema.py": (
        "def invalid_rows(frame):\n"
        '    return int(frame["notes"].str.contains(INVALID_NOTE, regex=False).sum())\n'
    ),
    "join.py": (
        'def _mark_counters(launches):\n    notes = launches["notes"].to_numpy(dtype=object)\n'
        '    fixed = [n.replace(MODEL_BYTES, "measured DRAM bytes from counters") for n in '
        "notes[measured]]\n"
    ),
    "explain.py": 'def f(row):\n    return "has no typed FLOP counters" in row["missing"]\n',
}


@pytest.mark.parametrize("name", list(MAIN_BEFORE_ISSUE_34))
def test_the_rules_catch_the_searches_they_were_written_for(name, tmp_path):
    path = tmp_path / name
    path.write_text(MAIN_BEFORE_ISSUE_34[name])
    assert findings(path), name
