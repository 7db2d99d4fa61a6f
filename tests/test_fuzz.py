"""Fuzzing every reader with damaged real exports: only RooflintError may escape, and whatever
loads is a valid canonical table.

Bounded by the hypothesis profile from tests/conftest.py: "ci" (30 examples per test) by
default, "long" (2000) with ROOFLINT_FUZZ=long.
"""

from __future__ import annotations

import csv
import io
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflint import parsers
from rooflint.core import schema
from rooflint.core.errors import RooflintError
from tests.helpers import FIXTURES, NASTY_CELLS, SHARED

pytestmark = pytest.mark.e2e  # fuzzes every reader

TEXT_SUFFIXES = {".csv", ".txt"}


def _profiles() -> list[Path]:
    folders = [FIXTURES / "ncu", FIXTURES / "rocprof", SHARED / "ncu", SHARED / "rocprof"]
    return sorted(
        p for folder in folders if folder.is_dir() for p in folder.rglob("*") if p.is_file()
    )


FILES = _profiles()
TEXT_FILES = [p for p in FILES if p.suffix in TEXT_SUFFIXES]
_BYTES: dict[Path, bytes] = {}


def content(path: Path) -> bytes:
    if path not in _BYTES:
        _BYTES[path] = path.read_bytes()
    return _BYTES[path]


# Open bugs in readers this suite does not own, each pinned by a strict xfail in
# tests/test_bad_inputs.py (test_rocprof_*): (exception, module it escapes from). They are let
# through here only so that the fuzz keeps finding new bugs; fixing one turns its xfail into a
# failure, and then it comes off this list.
KNOWN_BUGS: set[tuple[str, str]] = set()  # (exception type, module) pairs still open; none now


def _known_bug(exc: BaseException) -> bool:
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "rooflint" in f.filename or "parsers" in f.filename
    ]
    return bool(frames) and (type(exc).__name__, Path(frames[-1].filename).name) in KNOWN_BUGS


def check_read(folder: Path, original: Path, data: bytes) -> None:
    """The contract: a RooflintError, or a Profile whose launch table passes schema.validate."""
    path = folder / original.name  # the same name: readers detect by content, names only label
    path.write_bytes(data)
    try:
        profile = parsers.read(path)
    except RooflintError:
        return
    except Exception as exc:
        if _known_bug(exc):
            return
        raise
    schema.validate(profile.launches)
    assert (profile.launches["source"] == str(path)).all(), "a launch lost track of its file"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_there_is_something_to_fuzz():
    assert len(FILES) >= 3 and len(TEXT_FILES) >= 3


FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(data=st.data())
def test_rows_dropped_duplicated_shuffled(folder, data):
    original = data.draw(st.sampled_from(FILES), label="fixture")
    lines = content(original).splitlines(keepends=True)
    index = st.integers(0, max(len(lines) - 1, 0))
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        if not lines:
            break
        kind = data.draw(
            st.sampled_from(["drop", "duplicate", "swap", "shuffle-tail"]), label="kind"
        )
        i, j = data.draw(index, label="i") % len(lines), data.draw(index, label="j") % len(lines)
        if kind == "drop":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(j, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            tail = lines[i:]
            order = (
                data.draw(st.permutations(range(len(tail))), label="order")
                if len(tail) < 50
                else list(reversed(range(len(tail))))
            )
            lines[i:] = [tail[k] for k in order]
    check_read(folder, original, b"".join(lines))


def _table(path: Path) -> tuple[list[str], list[list[str]], list[bool]]:
    """Prefix lines kept as they are, CSV rows (latin-1, so every byte round-trips), quoting."""
    text = content(path).decode("latin-1")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.count(",") >= 2), 0)
    rows = list(csv.reader(lines[start:]))
    quoted = [line.startswith('"') for line in lines[start:]]
    return lines[:start], rows, quoted


def _join(
    prefix: list[str], rows: list[list[str]], quoted: list[bool], newline: str = "\n"
) -> bytes:
    out = io.StringIO()
    for row, q in zip(rows, quoted, strict=True):
        csv.writer(
            out, quoting=csv.QUOTE_ALL if q else csv.QUOTE_MINIMAL, lineterminator=newline
        ).writerow(row)
    return ("".join(line + newline for line in prefix) + out.getvalue()).encode(
        "latin-1", errors="replace"
    )


@FUZZ
@given(data=st.data())
def test_columns_dropped_duplicated_swapped(folder, data):
    original = data.draw(st.sampled_from(TEXT_FILES), label="fixture")
    prefix, rows, quoted = _table(original)
    width = max((len(r) for r in rows), default=0)
    if width == 0:
        return
    column = st.integers(0, width - 1)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        kind = data.draw(st.sampled_from(["drop", "duplicate", "swap"]), label="kind")
        i, j = data.draw(column, label="i"), data.draw(column, label="j")
        for row in rows:
            if kind == "drop" and i < len(row):
                del row[i]
            elif kind == "duplicate" and i < len(row):
                row.insert(min(j, len(row)), row[i])
            elif kind == "swap" and max(i, j) < len(row):
                row[i], row[j] = row[j], row[i]
    newline = data.draw(st.sampled_from(["\n", "\r\n"]), label="newline")
    check_read(folder, original, _join(prefix, rows, quoted, newline))


@FUZZ
@given(data=st.data())
def test_cells_corrupted(folder, data):
    original = data.draw(st.sampled_from(TEXT_FILES), label="fixture")
    prefix, rows, quoted = _table(original)
    if not rows:
        return
    for _ in range(data.draw(st.integers(1, 8), label="cells")):
        r = data.draw(st.integers(0, len(rows) - 1), label="row")
        if rows[r]:
            c = data.draw(st.integers(0, len(rows[r]) - 1), label="column")
            rows[r][c] = data.draw(NASTY_CELLS, label="value")
    check_read(folder, original, _join(prefix, rows, quoted))


@FUZZ
@given(data=st.data())
def test_random_bytes_inserted_flipped_truncated(folder, data):
    original = data.draw(st.sampled_from(FILES), label="fixture")
    raw = bytearray(content(original))
    position = st.integers(0, len(raw))
    for _ in range(data.draw(st.integers(1, 5), label="edits")):
        kind = data.draw(
            st.sampled_from(["insert", "overwrite", "truncate", "delete"]), label="kind"
        )
        at = data.draw(position, label="at") % (len(raw) + 1)
        if kind == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=64), label="bytes")
        elif kind == "overwrite":
            chunk = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
            raw[at : at + len(chunk)] = chunk
        elif kind == "truncate":
            del raw[at:]
        else:
            del raw[at : at + data.draw(st.integers(1, 4096), label="length")]
    check_read(folder, original, bytes(raw))
