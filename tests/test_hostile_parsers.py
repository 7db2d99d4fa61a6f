"""Damaged and hostile inputs at the parsers (issue 33): each test builds its bad input in
tmp_path from a bundled export, and checks that no launch is merged, invented or lost without a
word."""

from __future__ import annotations

import csv
import gzip
import io
import re
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from rooflint import parsers
from rooflint.core.errors import InputError
from rooflint.parsers import ncu_csv, ncu_lines
from tests import ncu_reference
from tests.helpers import A100, FIXTURES, assert_same_reading, raw_rows, shared, write_raw

H200_BLOCK = FIXTURES / "ncu" / "h200-block-raw-stdout.csv"  # 20 launches among app prints
FLASHINFER = "flashinfer_paged_decode__gqa_bf16_b1_ctx128k_p64.ncu.csv"  # a B200 default-set export
BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"]


def _with_name(rows: list[list[str]], row: int, name: str) -> list[list[str]]:
    k = rows[0].index("Kernel Name")
    rows[row][k] = name
    return rows


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return buf.getvalue()


# --- item 2: a line break inside a quoted kernel name ------------------------------------------


@pytest.mark.parametrize("brk", BREAKS)
@pytest.mark.parametrize("where", ["middle", "start", "end"])
@pytest.mark.parametrize("piece", [None, 2000])
def test_line_break_in_a_quoted_kernel_name_keeps_every_launch(tmp_path, brk, where, piece):
    # h200-block-raw-stdout.csv: 20 launches (header, units row, 20 rows: counted in the file)
    prelude, rows = raw_rows(H200_BLOCK)
    assert len(rows) == 22
    k = rows[0].index("Kernel Name")
    name = rows[4][k]
    broken = {"middle": name[:5] + brk + name[5:], "start": brk + name, "end": name + brk}[where]
    path = write_raw(tmp_path / "broken.csv", prelude, _with_name(rows, 4, broken))
    whole = ncu_lines.PIECE_BYTES
    ncu_lines.PIECE_BYTES = piece or whole
    try:
        profile = parsers.read(path)
    finally:
        ncu_lines.PIECE_BYTES = whole
    launches = profile.launches
    assert len(launches) == 20
    assert launches["launch_id"].tolist() == [int(r[0]) for r in rows[2:]]
    # the name keeps both sides of the break (every break reads as "\n", as splitlines gives it)
    assert launches["kernel"].iloc[2] == broken.replace("\r\n", "\n").replace(brk, "\n")
    assert not profile.repairs


def test_line_break_in_a_kernel_name_on_a_details_page(tmp_path):
    # a100-gemm-details.csv: 11 launches; every metric row of launch ID 0 gets the broken name
    lines = A100.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    k = rows[0].index("Kernel Name")
    first = rows[1][0]
    for row in rows[1:]:
        if row[0] == first:
            row[k] = row[k][:4] + "\n" + row[k][4:]
    path = tmp_path / "details.csv"
    path.write_text("".join(lines[:start]) + _csv(rows), encoding="utf-8")
    reference = parsers.read(A100).launches
    launches = parsers.read(path).launches
    assert len(launches) == len(reference) == 11
    for column in ("duration_s", "ops_matrix_fp16", "bytes_dram"):
        assert launches[column].tolist() == reference[column].tolist()
    assert "\n" in launches["kernel"].iloc[0]


# --- item 5: a repeated header row -------------------------------------------------------------


def _lines(path) -> tuple[list[str], int]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return lines, next(i for i, line in enumerate(lines) if line.startswith('"ID"'))


def test_two_raw_exports_joined_keep_their_launches_and_no_header_row(tmp_path):
    # h200-block-raw-stdout.csv twice: 2 x 20 launches; the second header and units row are
    # not launches (they were read as 2 more, with no launch ID)
    path = tmp_path / "twice.csv"
    path.write_text(H200_BLOCK.read_text(encoding="utf-8") * 2, encoding="utf-8")
    once = parsers.read(H200_BLOCK).launches
    profile = parsers.read(path)
    assert len(profile.launches) == 40
    assert profile.launches["launch_id"].tolist() == once["launch_id"].tolist() * 2
    assert profile.launches["duration_s"].tolist() == once["duration_s"].tolist() * 2
    assert profile.repairs[:2] == [
        "1 repeated header line(s) skipped (exports joined into one file?)",
        "1 repeated units row(s) skipped",
    ]
    assert "40 rows share 20 launch ID(s)" in profile.repairs[2]


@pytest.mark.parametrize("units", [False, True])
def test_a_header_printed_again_among_the_rows_is_not_a_launch(tmp_path, units):
    lines, h = _lines(H200_BLOCK)
    again = [lines[h], lines[h + 1]] if units else [lines[h]]
    path = tmp_path / "again.csv"
    path.write_text("".join(lines[: h + 8] + again + lines[h + 8 :]), encoding="utf-8")
    profile = parsers.read(path)
    assert len(profile.launches) == 20
    assert profile.launches["launch_id"].tolist() == list(range(20))  # IDs 0..19 in the file


def test_two_details_exports_joined(tmp_path):
    # a100-gemm-details.csv twice: the same 11 launch IDs, each metric's first row wins
    path = tmp_path / "twice.csv"
    path.write_text(A100.read_text(encoding="utf-8") * 2, encoding="utf-8")
    once = parsers.read(A100).launches
    profile = parsers.read(path)
    assert profile.launches["launch_id"].tolist() == once["launch_id"].tolist()
    assert profile.launches["duration_s"].tolist() == once["duration_s"].tolist()
    assert "1 repeated header line(s) skipped (exports joined into one file?)" in profile.repairs


def test_a_second_header_with_other_columns_is_refused(tmp_path):
    lines, h = _lines(H200_BLOCK)
    other = lines[h].replace('"Kernel Name"', '"Kernel Name (demangled)"')
    path = tmp_path / "other.csv"
    path.write_text("".join(lines[: h + 8] + [other] + lines[h + 8 :]), encoding="utf-8")
    with pytest.raises(InputError, match="second header line names other columns") as err:
        parsers.read(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


def test_a_units_row_with_other_units_is_refused(tmp_path):
    lines, h = _lines(H200_BLOCK)
    assert '"ns"' in lines[h + 1]
    other = lines[h + 1].replace('"ns"', '"usecond"')
    path = tmp_path / "units.csv"
    path.write_text("".join(lines[: h + 8] + [other] + lines[h + 8 :]), encoding="utf-8")
    with pytest.raises(InputError, match="units row in the middle of the page"):
        parsers.read(path)


def _units_row_broken(data: bytes, cells: int) -> bytes:
    """A line end inside the units row after its first `cells` cells, between two of them (not
    after an opening quote): both halves become ragged rows, the page's first row a launch."""
    lines = data.split(b"\n")
    h = next(i for i, line in enumerate(lines) if line.startswith(b'"ID"'))
    assert lines[h + 1].startswith(b'"","') and b'"ns"' in lines[h + 1]  # the units row
    cut = len(b'"",') * cells
    lines[h + 1] = lines[h + 1][:cut] + b"\n" + lines[h + 1][cut:]
    return b"\n".join(lines)


def test_a_units_row_broken_across_two_lines_is_refused_as_such(tmp_path):
    """h200-block-raw-stdout.csv with a line end after the units row's 4th cell: the first row
    is then launch ID 0 and the units row's cells come as a row without an ID after the
    launches. The units the values are in are not known: refused, saying so (it said "with
    other units than the first", which there was none of)."""
    path = tmp_path / "broken.csv"
    path.write_bytes(_units_row_broken(H200_BLOCK.read_bytes(), 4))
    with pytest.raises(InputError, match="units row broken across two lines") as err:
        parsers.read(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)
    assert "other units than the first" not in str(err.value)


@pytest.mark.e2e
def test_the_fuzzers_broken_units_row_reads_as_the_reference_reads_it(tmp_path):
    """tests/test_ncu_reader_fuzz.py::test_random_bytes found this: b"\\n" inserted at byte
    22871 of the B200 flashinfer export, 12 bytes (4 cells) into its units row (which starts at
    byte 22859, after 2 ==PROF== lines and the 22757-byte header). The reference reader read the
    units row's cells as a 66th launch with no ID and "block" as its duration; both readers
    now refuse the file with the same words (issue 33's rule, in the reference too)."""
    original = shared(f"ncu/default-set-b200/{FLASHINFER}")
    data = bytearray(original.read_bytes())
    assert data[22859:22871] == b'"","","","",'
    data[22871:22871] = b"\n"
    path = tmp_path / "fuzzed.csv"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="units row broken across two lines"):
        parsers.read(path)
    assert_same_reading(ncu_csv, ncu_reference, path, path)


# --- item 3: a details page cut mid-launch -----------------------------------------------------


def _cut_in_last_launch(data: bytes, rows_kept: int, then: bytes) -> bytes:
    """a100-gemm-details.csv up to `rows_kept` metric rows of its last launch (ID 10, the
    last 6 lines: every launch has 6 metric rows, counted in the file), then `then`."""
    lines = data.rstrip(b"\n").split(b"\n")
    assert lines[-6].startswith(b'"10",') and not lines[-7].startswith(b'"10",')
    return b"\n".join(lines[: len(lines) - 6 + rows_kept]) + b"\n" + then


@pytest.mark.parametrize(
    "rows_kept, then, cut_line",
    [
        (4, b"", False),  # cut at a line end: nothing tells but the launch's missing rows
        (4, b'"', True),  # right after the opening quote of the next row
        (5, b'"10","5","', True),  # right after an opening quote inside the row
        (1, b'"10","5","python3.10","' + b"x" * 10, True),
    ],
)
def test_a_details_page_cut_mid_launch_leaves_that_launch_out(tmp_path, rows_kept, then, cut_line):
    path = tmp_path / "cut.csv"
    path.write_bytes(_cut_in_last_launch(A100.read_bytes(), rows_kept, then))
    whole = parsers.read(A100).launches
    profile = parsers.read(path)
    # the ten whole launches, with the numbers of the whole file; launch 10 listed, not kept
    assert profile.launches["launch_id"].tolist() == list(range(10))
    for column in ("duration_s", "ops_matrix_fp16", "bytes_dram"):
        assert profile.launches[column].tolist() == whole[column].iloc[:10].tolist()
    expected = (
        f"last launch (ID 10) cut short: {rows_kept} of its 6 metric rows (the file ends "
        "mid-launch: a truncated copy?), left out"
    )
    assert profile.repairs[-1] == expected
    assert (profile.repairs[0].startswith("last line cut short")) == cut_line


def test_a_whole_last_launch_is_kept(tmp_path):
    # cut after launch 10's sixth and last row: nothing is missing
    path = tmp_path / "whole.csv"
    path.write_bytes(_cut_in_last_launch(A100.read_bytes(), 6, b""))
    profile = parsers.read(path)
    assert len(profile.launches) == 11 and not profile.repairs


# --- item 4: quantities derived from negative metrics ------------------------------------------


@pytest.mark.parametrize("cycles, clock", [("-1", "-1"), ("-1,708,634.20", "765,001,631.38")])
def test_negative_cycles_over_a_negative_clock_is_no_duration(tmp_path, cycles, clock):
    # a100-gemm-details.csv has no gpu__time_duration: each duration is sm__cycles_elapsed.avg
    # / sm__cycles_elapsed.avg.per_second (launch 0: 1,708,634.20 cycles / 765,001,631.38 Hz)
    text = A100.read_text(encoding="utf-8")
    for metric, value in (
        ("sm__cycles_elapsed.avg", cycles),
        ("sm__cycles_elapsed.avg.per_second", clock),
    ):
        row = re.compile(rf'^("0",.*"{re.escape(metric)}","[^"]*",)"[^"]*"$', re.M)
        text, count = row.subn(rf'\g<1>"{value}"', text, 1)
        assert count == 1
    path = tmp_path / "negative.csv"
    path.write_text(text, encoding="utf-8")
    launches = parsers.read(path).launches
    whole = parsers.read(A100).launches
    assert whole["duration_s"].iloc[0] == pytest.approx(1_708_634.20 / 765_001_631.38)
    assert pd.isna(launches["duration_s"].iloc[0])  # not 1.0 s (-1 / -1), nor |cycles| / clock
    assert (
        "duration_s negative or infinite in the input, read as missing"
        in (launches["notes"].iloc[0])
    )
    assert launches["duration_s"].iloc[1:].tolist() == whole["duration_s"].iloc[1:].tolist()


# --- items 14 and 16: gzip bombs and damaged gzip streams --------------------------------------

ROCPROF_V3 = FIXTURES / "rocprof" / "v3_docs_2025_counter_collection.csv"
ROCPROF_PMC = FIXTURES / "rocprof" / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv"


@pytest.mark.e2e  # decompresses 100 MB under tracemalloc: ~4 s
def test_a_gzip_bomb_is_refused_within_the_limit_and_bounded_memory(tmp_path, monkeypatch):
    # h200-block raw page with one launch row repeated 40,000 times: ~0.6 MB of gzip that
    # decompresses to ~100 MB, under a 2 MB limit on the compressed size and the decompressed one
    lines, h = _lines(H200_BLOCK)
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write("".join(lines[: h + 3]).encode())
        fh.write(lines[h + 3].encode() * 40_000)
    expanded = len(gzip.decompress(path.read_bytes()))
    assert path.stat().st_size < 2_000_000 < 10 * 2_000_000 < expanded
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", "2000000")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="decompresses to more than the input limit") as err:
            parsers.read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "2,000,000 bytes" in str(err.value) and "\n" not in str(err.value)
    assert peak < expanded / 4  # a buffer at a time: the limit and a piece (8 MB), not it all


def test_a_gzip_stream_within_the_limit_loads(tmp_path, monkeypatch):
    path = tmp_path / "ok.csv.gz"
    path.write_bytes(gzip.compress(H200_BLOCK.read_bytes()))
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", str(H200_BLOCK.stat().st_size))
    assert len(parsers.read(path).launches) == 20
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", str(H200_BLOCK.stat().st_size - 1))
    with pytest.raises(InputError, match="decompresses to more than"):
        parsers.read(path)


def _damaged(data: bytes, how: str) -> bytes:
    if how == "truncated":
        return data[: len(data) // 2]
    if how == "end cut":
        return data[:-3]
    if how == "crc":  # the trailer's CRC-32, one bit off
        return data[:-8] + bytes([data[-8] ^ 1]) + data[-7:]
    if how == "length":  # the trailer's length
        return data[:-4] + b"\xff\xff\xff\x7f"
    return data[:40] + bytes([data[40] ^ 0xFF]) + data[41:]  # a flipped byte in the stream


@pytest.mark.parametrize("how", ["truncated", "end cut", "crc", "length", "flipped"])
@pytest.mark.parametrize("source", [ROCPROF_V3, ROCPROF_PMC, H200_BLOCK], ids=lambda p: p.name)
def test_a_damaged_gzip_export_is_one_clear_error(tmp_path, how, source):
    path = tmp_path / (source.name + ".gz")
    path.write_bytes(_damaged(gzip.compress(source.read_bytes()), how))
    with pytest.raises(InputError, match="gzip stream is damaged") as err:
        parsers.read(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


# --- item 15: a huge nvprof Invocations count --------------------------------------------------

NVPROF = FIXTURES / "ncu" / "nvprof-k20c-metrics.csv"  # 3 invocations of one kernel


def _invocations(tmp_path, count: str):
    text = NVPROF.read_text(encoding="utf-8")
    assert text.count('",3,"') == 19  # every metric row of the one kernel says 3 invocations
    path = tmp_path / "nvprof.csv"
    path.write_text(text.replace('",3,"', f'",{count},"'), encoding="utf-8")
    return path


@pytest.mark.parametrize("count", ["100000000", "1000001", "1e30", "9" * 40])
def test_a_huge_invocation_count_is_refused_not_allocated(tmp_path, count):
    path = _invocations(tmp_path, count)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="claims more than 1,000,000 invocations") as err:
            parsers.read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6 and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "count, launches", [("3", 3), ("1000", 1000), ("-5", 1), ("x", 1), ("2.5", 1)]
)
def test_an_invocation_count_within_reason_is_repeated(tmp_path, count, launches):
    assert len(parsers.read(_invocations(tmp_path, count)).launches) == launches


# --- item 9a: an .ncu-rep cut short --------------------------------------------------------------

GEMM_REP = FIXTURES / "ncu" / "h200-tensor-ops" / "gemm-bf16.ncu-rep"
# Its container, walked by hand (parsers/ncu_rep._walk): the session and source blocks end at
# byte 23,618, the one result block at 55,707, then the device block and the other session
# blocks up to the file's 65,919 bytes.
RESULT_END = 55_707


@pytest.fixture
def ncu_report():
    from rooflint.parsers import ncu_rep

    pytest.importorskip("ncu_report")
    if ncu_rep.too_old():
        pytest.skip("ncu-report older than 2026.2 crashes alongside pandas")


@pytest.mark.parametrize("size", [40_960, 53_248])  # disk blocks inside the result block
def test_a_report_cut_inside_its_result_is_refused_not_one_empty_launch(tmp_path, ncu_report, size):
    path = tmp_path / "cut.ncu-rep"
    path.write_bytes(GEMM_REP.read_bytes()[:size])
    with pytest.raises(InputError, match="report is truncated or damaged") as err:
        parsers.read(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


def test_a_report_cut_at_a_block_boundary_says_so(tmp_path, ncu_report):
    whole = parsers.read(GEMM_REP)
    assert not whole.repairs and len(whole.launches) == 1
    path = tmp_path / "cut.ncu-rep"
    path.write_bytes(GEMM_REP.read_bytes()[:RESULT_END])  # the result whole, nothing after it
    profile = parsers.read(path)
    assert profile.launches["duration_s"].tolist() == whole.launches["duration_s"].tolist()
    assert profile.repairs == [
        "report ends before the device block ncu writes after the first result (cut at a "
        "block boundary?): results after the cut are missing; copy or save it again"
    ]


# --- minor: encodings, byte-order marks, long fields, one-line errors ----------------------------

KINETO = FIXTURES / "kineto" / "hta-mi250-minitoy.json.gz"


@pytest.mark.parametrize(
    "codec, named",
    [("utf-32", "UTF-32"), ("utf-32-be", "UTF-32"), ("utf-16", "UTF-16"), ("utf-16-be", "UTF-16")],
)
def test_utf16_and_utf32_are_named_as_what_they_are(tmp_path, codec, named):
    text = H200_BLOCK.read_text(encoding="utf-8")
    bom = {"utf-32-be": "\ufeff", "utf-16-be": "\ufeff"}.get(codec, "")
    path = tmp_path / "wide.csv"
    path.write_bytes((bom + text).encode(codec))
    with pytest.raises(InputError, match=f"this is {named} text; convert it to UTF-8 "):
        parsers.read(path)


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_trace_with_a_byte_order_mark_is_not_called_truncated(tmp_path, gzipped):
    """A UTF-8 BOM (Windows editors write one) was read as a truncated trace; the Kineto
    reader now reads through it, plain or gzip'd, as it reads the file without it."""
    data = b"\xef\xbb\xbf" + gzip.decompress(KINETO.read_bytes())
    path = tmp_path / "trace.json"
    path.write_bytes(gzip.compress(data) if gzipped else data)
    assert len(parsers.read(path).launches) == len(parsers.read(KINETO).launches)


NAME_COLUMNS = ("Kernel_Name", "KernelName", "Kernel Name")


def _long_name(source, tmp_path, quoting) -> Path:
    """A copy of `source` (in a folder of its own) whose third launch's kernel name is 10 MB:
    longer than Arrow's blocks (1 MB for pandas, 4 MB for the ncu reader)."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if any(c in line for c in NAME_COLUMNS))
    rows = list(csv.reader(lines[start:]))
    k = next(i for i, c in enumerate(rows[0]) if c in NAME_COLUMNS)
    rows[3][k] = "k" * (10 << 20)
    buf = io.StringIO()
    csv.writer(buf, quoting=quoting, lineterminator="\n").writerows(rows)
    folder = tmp_path / "long"
    folder.mkdir()
    path = folder / source.name
    path.write_text("".join(lines[:start]) + buf.getvalue(), encoding="utf-8")
    return path


@pytest.mark.e2e  # parses 10 MB fields: 1-3 s each
@pytest.mark.parametrize(
    "source, quoting",
    [
        (H200_BLOCK, csv.QUOTE_ALL),
        (ROCPROF_V3, csv.QUOTE_MINIMAL),
        (ROCPROF_PMC, csv.QUOTE_MINIMAL),
    ],
    ids=lambda p: getattr(p, "name", ""),
)
def test_a_ten_megabyte_field_is_read(tmp_path, source, quoting):
    path = _long_name(source, tmp_path, quoting)
    whole = parsers.read(source)
    profile = parsers.read(path)
    assert len(profile.launches) == len(whole.launches) and profile.repairs == whole.repairs
    assert (profile.launches["kernel"].astype(str).str.len() == 10 << 20).sum() == 1
    for column in ("duration_s", "bytes_dram"):
        assert profile.launches[column].equals(whole.launches[column])


def test_a_roofline_csv_error_is_one_line(tmp_path):
    text = (FIXTURES / "rocprof" / "omniperf2_mi200_roofline.csv").read_text(encoding="utf-8")
    path = tmp_path / "roofline.csv"
    path.write_text(text + "1" + ",2" * 60 + "\n", encoding="utf-8")  # 61 fields under 34
    with pytest.raises(InputError, match="cannot parse as CSV") as err:
        parsers.read_roofline(path)
    assert "Expected 34 fields in line 3, saw 61" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_gzip_trace_is_held_to_the_limit_on_its_decompressed_bytes(tmp_path, monkeypatch):
    """Kineto traces opened gzip themselves (parsers/kineto_stream.py) and escaped the limit."""
    trace = FIXTURES / "kineto" / "h200-block-trace.json.gz"
    expanded = len(gzip.decompress(trace.read_bytes()))
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", str(expanded))
    assert len(parsers.read(trace).launches)
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", str(expanded - 1))
    with pytest.raises(InputError, match="decompresses to more than the input limit"):
        parsers.read(trace)
