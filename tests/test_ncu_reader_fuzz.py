"""The ncu CSV reader against the per-cell reference reader (tests/ncu_reference.py) on damaged
real exports: the same launches, notes and repairs, or the same error, whatever the damage.

Bounded by the hypothesis profile from tests/conftest.py ("ci": 30 examples per test).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflint.parsers import ncu_csv
from tests.helpers import FIXTURES, NASTY_CELLS, SHARED, assert_same_reading

pytestmark = pytest.mark.e2e  # fuzzes the ncu reader

NCU = sorted([*(FIXTURES / "ncu").glob("*.csv"), *(SHARED / "ncu").rglob("*.csv")])
FUZZ = settings(
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ]
)
LINES = [
    b"==PROF== Disconnected from process 7",
    b'app says, "hi"',
    b"",
    b"\r",
    b'"',
    b'"1","2"',
    b'eval,"a quote left open',
    b"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o",  # as wide as a details page's header
]
# The reader's piece size: whole fixtures, or pieces of a few rows, where the lines that are not
# rows reach the parser among the rows of a later piece (ncu_lines.Loose).
PIECES = st.sampled_from([None, 300, 4000])


def _check(tmp_path, data: bytes, piece: int | None = None) -> None:
    from rooflint.parsers import ncu_lines
    from tests import ncu_reference

    path = tmp_path / "fuzzed.csv"
    path.write_bytes(data)
    whole = ncu_lines.PIECE_BYTES
    ncu_lines.PIECE_BYTES = piece or whole
    try:
        assert_same_reading(ncu_csv, ncu_reference, path, path)
    finally:
        ncu_lines.PIECE_BYTES = whole


@pytest.mark.skipif(not NCU, reason="no ncu exports")
@FUZZ
@given(data=st.data())
def test_lines_inserted_cells_replaced_file_cut(tmp_path, data):
    original = data.draw(st.sampled_from(NCU), label="fixture")
    lines = original.read_bytes().split(b"\n")
    for _ in range(data.draw(st.integers(0, 4), label="inserted lines")):
        at = data.draw(st.integers(0, len(lines)), label="at")
        lines.insert(at, data.draw(st.sampled_from(LINES), label="line"))
    for _ in range(data.draw(st.integers(0, 4), label="cells")):
        i = data.draw(st.integers(0, len(lines) - 1), label="row")
        cells = lines[i].split(b'","')
        if len(cells) > 2:
            j = data.draw(st.integers(1, len(cells) - 2), label="column")
            cells[j] = (
                data.draw(NASTY_CELLS, label="value").replace('"', "").encode("utf-8", "replace")
            )
            lines[i] = b'","'.join(cells)
    text = b"\n".join(lines)
    if data.draw(st.booleans(), label="crlf"):
        text = text.replace(b"\n", b"\r\n")
    cut = data.draw(st.sampled_from([None, 1, 5, 40, 300]), label="cut")
    _check(tmp_path, text[:-cut] if cut else text, data.draw(PIECES, label="piece bytes"))


@pytest.mark.skipif(not NCU, reason="no ncu exports")
@FUZZ
@given(data=st.data())
def test_random_bytes(tmp_path, data):
    original = data.draw(st.sampled_from(NCU), label="fixture")
    raw = bytearray(original.read_bytes())
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, len(raw)), label="at")
        raw[at:at] = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
    _check(tmp_path, bytes(raw), data.draw(PIECES, label="piece bytes"))
