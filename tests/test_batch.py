"""Batch triage: many inputs and folders in one call, non-profiles skipped and accounted for."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import rooflint
from rooflint import inputs, pipeline
from rooflint.cli import main
from tests.helpers import (
    FIXTURES,
    assert_reads_alike_in_pieces,
    assert_same,
    assert_same_reading,
    benchmark_generator,
    distinct_piece_sizes,
    reading,
)

NOTES = "just some notes about the run\n"


@pytest.fixture
def mixed(tmp_path) -> Path:
    """A folder as people keep them: ncu exports, rocprof CSVs in a subfolder, a text file that
    is not a profile, and a hidden file."""
    (tmp_path / "nv").mkdir()
    amd = tmp_path / "amd"
    amd.mkdir()
    shutil.copy(FIXTURES / "ncu" / "a100-gemm-details.csv", tmp_path / "nv")
    shutil.copy(FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv", tmp_path / "nv")
    shutil.copy(FIXTURES / "ncu" / "roofline-analysis-b200-ncu2025.x-raw.csv", tmp_path)
    shutil.copy(FIXTURES / "rocprof" / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv", amd)
    shutil.copy(FIXTURES / "rocprof" / "v3_docs_2025_counter_collection.csv", amd)
    (tmp_path / "notes.txt").write_text(NOTES)
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x01binary")
    return tmp_path


PROFILES = [
    "amd/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
    "amd/v3_docs_2025_counter_collection.csv",
    "nv/a100-gemm-details.csv",
    "nv/rtx2080ti-sgemm-raw-base.csv",
    "roofline-analysis-b200-ncu2025.x-raw.csv",
]


def _json(args) -> dict:
    out = CliRunner().invoke(main, ["report", *args, "--format", "json", "--quiet"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.mark.e2e  # over a second
def test_folder_of_mixed_inputs_reports_every_profile_and_accounts_for_the_rest(mixed):
    doc = _json([str(mixed)])
    acc = doc["accounting"]
    singles = {p: len(rooflint.load(mixed / p)) for p in PROFILES}
    assert acc["inputs_read"] == len(PROFILES)
    assert acc["launches_read"] == sum(singles.values())
    assert acc["launches_read"] == acc["analysed"] + acc["not_analysable"]
    assert [s["path"] for s in acc["inputs_skipped"]] == [
        str(mixed / ".DS_Store"),
        str(mixed / "notes.txt"),
    ]
    assert acc["inputs_skipped"][0]["reason"] == "hidden file"  # listed, not even tried
    assert acc["inputs_skipped"][1]["reason"].startswith("not a profile rooflint reads")
    per_source = {row["source"]: row for row in doc["per_source"]}
    assert set(per_source) == {str(mixed / p) for p in PROFILES}
    for p, n in singles.items():
        assert per_source[str(mixed / p)]["launches"] == n


@pytest.mark.e2e  # over a second
def test_one_combined_ranking_across_files_and_vendors(mixed):
    doc = _json([str(mixed)])
    kernels = doc["kernels"]
    assert [k["rank"] for k in kernels] == list(range(1, len(kernels) + 1))
    headroom = [k["headroom_s"] for k in kernels if k["headroom_s"] is not None]
    assert headroom == sorted(headroom, reverse=True)
    assert all(k["headroom_s"] is None for k in kernels[len(headroom) :])  # not analysable: last
    assert sum(k["time_share"] for k in kernels) == pytest.approx(1.0)
    assert sum(k["launches"] for k in kernels) == doc["accounting"]["launches_read"]
    names = " ".join(k["group"] for k in kernels)
    assert (
        "cutlass::Kernel" in names and "vecCopy" in names and "volta_sgemm" in names
    )  # NVIDIA and AMD


@pytest.mark.e2e  # over a second
def test_combined_numbers_are_the_single_file_numbers(mixed):
    combined = pipeline.build([str(mixed)]).kernels.set_index("group")
    alone = pipeline.build([str(mixed / "nv" / "a100-gemm-details.csv")]).kernels.set_index("group")
    for group, row in alone.iterrows():
        assert combined.loc[group, "headroom_s"] == row["headroom_s"]
        assert combined.loc[group, "duration_s"] == row["duration_s"]
        assert combined.loc[group, "launches"] == row["launches"]


@pytest.mark.e2e  # over a second
def test_per_source_summary_adds_up(mixed):
    res = pipeline.build([str(mixed)])
    table = res.per_source()
    assert table["launches"].sum() == len(res.launches)
    assert table["duration_s"].sum() == pytest.approx(res.launches["duration_s"].sum())
    assert table["headroom_s"].sum() == pytest.approx(res.launches["headroom_s"].sum())
    verdicts = table[
        ["compute-bound", "memory-bound", "latency-bound", "above-roof", "not-analysable"]
    ].sum(axis=1)
    assert (verdicts == table["launches"]).all()


@pytest.mark.e2e  # over a second
def test_files_and_folders_mixed_on_the_command_line(mixed):
    doc = _json(
        [str(mixed / "nv" / "a100-gemm-details.csv"), str(mixed / "amd"), str(mixed / "notes.txt")]
    )
    assert doc["accounting"]["inputs_read"] == 3
    assert [s["path"] for s in doc["accounting"]["inputs_skipped"]] == [str(mixed / "notes.txt")]


@pytest.mark.e2e  # over a second
def test_group_by_source_ranks_the_files(mixed):
    doc = _json([str(mixed), "--group-by", "source"])
    assert {k["group"] for k in doc["kernels"]} == {str(mixed / p) for p in PROFILES}
    assert doc["kernels"][0]["group"] == str(
        mixed / "nv" / "a100-gemm-details.csv"
    )  # most headroom


@pytest.mark.e2e  # over a second
def test_table_lists_the_skipped_file(mixed):
    out = CliRunner().invoke(main, ["report", str(mixed), "--quiet"])
    assert out.exit_code == 0
    text = " ".join(out.stdout.split())  # long lines wrap at the terminal width
    assert f"skipped {mixed / 'notes.txt'}: not a profile rooflint reads" in text


def test_no_usable_profile_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text(NOTES)
    (tmp_path / "empty.csv").write_text("")
    out = CliRunner().invoke(main, ["report", str(tmp_path), "-o", str(tmp_path / "r.json")])
    assert out.exit_code == 2
    assert "no usable profile among 2 file(s)" in out.stderr
    assert not (tmp_path / "r.json").exists()


def test_empty_folder_is_an_error(tmp_path):
    out = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert out.exit_code == 2
    assert "no profile files found" in out.stderr


@pytest.mark.e2e  # over a second
def test_strict_fails_listing_every_file_not_read(mixed, tmp_path):
    target = tmp_path / "report.json"
    out = CliRunner().invoke(main, ["report", str(mixed), "--strict", "-o", str(target)])
    assert out.exit_code == 2
    assert out.stderr.startswith(
        f"rooflint: error: {mixed}: --strict: 2 file(s) not read: "
        f"{mixed / '.DS_Store'} (hidden file); {mixed / 'notes.txt'} "
        "(not a profile rooflint reads"
    )
    assert len(out.stderr.strip().splitlines()) == 1
    assert not target.exists()


@pytest.mark.e2e  # over a second
def test_strict_passes_when_every_input_is_a_profile(mixed):
    (mixed / "notes.txt").unlink()
    (mixed / ".DS_Store").unlink()
    (
        mixed / "amd" / "v3_docs_2025_counter_collection.csv"
    ).unlink()  # names no device: an error under --strict
    out = CliRunner().invoke(main, ["report", str(mixed), "--strict", "--quiet", "-f", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["accounting"]["inputs_skipped"] == []


# --- the reader gives exactly what the per-cell reference reader (tests/ncu_reference.py) gives --


@functools.cache  # bytes: each test edits its own copy
def _generated_raw(launches: int = 300, seed: int = 5) -> bytes:
    return benchmark_generator().raw(launches, kernel_count=25, seed=seed)


@functools.cache
def _generated_details(launches: int = 60, grouping: bool = True) -> bytes:
    return benchmark_generator().details(launches, kernel_count=12, seed=7, grouping=grouping)


def _cell(data: bytes, row: int, metric: str, value: str) -> bytes:
    """Replace one metric cell of data row `row` (0 = the first launch) of a raw page."""
    import csv
    import io

    lines = data.decode("utf-8").split("\n")
    header = next(csv.reader([lines[0]]))
    fields = next(csv.reader([lines[2 + row]]))
    fields[header.index(metric)] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="").writerow(fields)
    lines[2 + row] = out.getvalue()
    return "\n".join(lines).encode("utf-8")


def _name(data: bytes, inject: bytes) -> bytes:
    """Put `inject` at the start of the first launch's kernel name (the cell after Host Name)."""
    marker = b'"127.0.0.1","'
    assert marker in data
    return data.replace(marker, marker + inject, 1)


def _later(data: bytes, inserted: dict[int, bytes], cr_row: int | None = None) -> bytes:
    """Lines inserted before the given rows, and a lone CR put inside a kernel name: far from
    the header, in a piece of their own when the file is read in small pieces."""
    lines = data.split(b"\n")
    if cr_row is not None:
        lines[cr_row] = _name(lines[cr_row], b"kernel\rname")
    for at in sorted(inserted, reverse=True):
        lines.insert(at, inserted[at])
    return b"\n".join(lines)


def _split_units(data: bytes) -> bytes:
    """A line end inside the units row, right after a cell's opening quote (found by fuzzing
    a real re-export): the quote runs the row on into the next line."""
    lines = data.split(b"\n")
    cut = lines[1].index(b',"', 10) + 2
    lines[1] = lines[1][:cut] + b"\n" + lines[1][cut:]
    return b"\n".join(lines)


DRAM = "dram__bytes.sum"
VARIANTS = {
    "clean": lambda d: d,
    "n/a and dash cells": lambda d: _cell(_cell(d, 3, DRAM, "n/a"), 4, "lts__t_bytes.sum", "-"),
    "NaN spelled two ways": lambda d: _cell(_cell(d, 3, DRAM, "NaN"), 5, DRAM, "-nan"),
    "text in a metric cell": lambda d: _cell(d, 7, DRAM, "(!) overflow"),
    "negative zero": lambda d: _cell(d, 2, DRAM, "-0"),
    "infinity": lambda d: _cell(d, 2, DRAM, "inf"),
    "negative count": lambda d: _cell(d, 2, DRAM, "-5"),
    "en_US grouping": lambda d: _cell(d, 1, DRAM, "1,234,567"),
    "spaces around a number": lambda d: _cell(d, 1, DRAM, " 42 "),
    "compute capability text": lambda d: _cell(
        d, 0, "device__attribute_compute_capability_major", "9a"
    ),
    "CC left empty on some launches": lambda d: _cell(_cell(d, 0, "CC", ""), 3, "CC", ""),
    "CRLF line ends": lambda d: d.replace(b"\n", b"\r\n"),
    "lone CR inside a row": lambda d: _name(d, b"kernel\rname"),
    "no final newline": lambda d: d.rstrip(b"\n"),
    "cut off mid-row": lambda d: d[: d.rindex(b'","') + 2],
    "ragged row": lambda d: d.replace(b'"0","0","0"\n', b'"0","0"\n', 1),
    "ncu messages after the header": lambda d: d.replace(
        b"\n", b"\n==PROF== Disconnected from process 1\n", 3
    ),
    "ncu messages before the header": lambda d: (
        b"==PROF== Connected to process 1\nsome app output\n" + d
    ),
    "blank line": lambda d: d.replace(b"\n", b"\n\n", 5),
    "UTF-8 kernel name and BOM": lambda d: b"\xef\xbb\xbf" + _name(d, "café_kernel".encode()),
    "latin-1 byte": lambda d: _name(d, b"caf\xe9_kernel"),
    "vertical tab": lambda d: _name(d, b"kernel\x0bname"),
    "line separator": lambda d: _name(d, "kernel\u2028name".encode()),
    "duplicate launch IDs": lambda d: d.replace(b'\n"1","', b'\n"0","', 1),
    "no units row": lambda d: b"\n".join(d.split(b"\n")[:1] + d.split(b"\n")[2:]),
    "header and units only": lambda d: b"\n".join(d.split(b"\n")[:2]) + b"\n",
    "ncu stdout: messages around the rows, app output among them": lambda d: _stdout(d),
    "ncu stdout, CRLF": lambda d: _stdout(d).replace(b"\n", b"\r\n"),
    "ncu stdout, cut off mid-row": lambda d: _stdout(d)[:-70],
    "app output among later rows: row-shaped, quotes, an open quote": lambda d: _later(
        d,
        {
            150: b",".join([b"x"] * d.split(b"\n")[0].count(b'","') + [b"x"]),  # header's width
            180: b'[rank0] saved "ckpt.pt", 1,024 tensors',
            200: b'eval,"unterminated',  # a quote opened at a field start runs into the next row
        },
    ),
    "lone CR inside a later row": lambda d: _later(d, {}, cr_row=170),
    "units row split by a line end after a quote": lambda d: _split_units(d),
    "en_US grouping everywhere": lambda d: _grouped(d, b","),
    "de_DE grouping everywhere": lambda d: _grouped(d, b"."),
}


def _stdout(data: bytes) -> bytes:
    """As `ncu --csv > file` captures a live run: ==PROF== lines before the header and after the
    last row, the application's prints (some with quotes and commas) among the rows."""
    lines = data.split(b"\n")
    for at in (40, 25, 9, 3):
        lines.insert(
            at, b'step 3: loss 2.25, "lr" 0.001' if at % 2 else b"==PROF== Profiling kernel"
        )
    return (
        b"==PROF== Connected to process 1 (/usr/bin/python3)\nwarming up\n"
        + b"\n".join(lines)
        + b"==PROF== Disconnected from process 1\n"
    )


def _grouped(data: bytes, mark: bytes) -> bytes:
    """Every integer cell of 4+ digits grouped by thousands with `mark` (en_US "," / de_DE ".")."""
    import re

    def group(match):
        digits = match.group(1).decode()
        return b'"' + f"{int(digits):,}".replace(",", mark.decode()).encode() + b'"'

    return re.sub(rb'"([0-9]{4,})"', group, data)


def _value(data: bytes, metric: str, value: str, nth: int = 0) -> bytes:
    """Replace the Metric Value of the `nth` details row of `metric`."""
    lines = data.decode("utf-8").split("\n")
    at = [i for i, line in enumerate(lines) if f'"{metric}",' in line][nth]
    head, _, _ = lines[at].rpartition(',"')
    lines[at] = f'{head},"{value}"'
    return "\n".join(lines).encode("utf-8")


def _swap_separators(data: bytes) -> bytes:
    return (
        data.replace(b",", b"\x00")
        .replace(b".", b",")
        .replace(b"\x00", b".")
        .replace(b'"."', b'","')
    )


DETAILS = {
    "en_US grouping": lambda d: d,
    "de_DE grouping": _swap_separators,
    "n/a and text values": lambda d: _value(
        _value(d, DRAM, "n/a"), "lts__t_bytes.sum", "(!) overflow", 2
    ),
    "instance lists": lambda d: _value(d, DRAM, "1,024 (512; 512)", 1),
    "negative zero": lambda d: _value(d, DRAM, "-0"),
    "infinity": lambda d: _value(d, DRAM, "inf"),
    "ambiguous only": lambda d: _value(d, DRAM, "84,480"),
    "display names": lambda d: d.replace(
        b'"gpu__time_duration.sum","nsecond"', b'"Duration","usecond"'
    ),
    "memory throughput as a percentage": lambda d: d.replace(
        b'"dram__bytes.sum","byte"', b'"Memory Throughput","%"', 1
    ),
    "a metric twice for one launch": lambda d: d.replace(
        b'"lts__t_bytes.sum","byte"', b'"dram__bytes.sum","byte"', 1
    ),
    "non-ASCII value": lambda d: _value(d, DRAM, "１２"),
    "ncu stdout shape": lambda d: _stdout(d),
    "app output among later rows, an open quote": lambda d: _later(
        d, {300: b'[rank0] saved "ckpt.pt", 1,024 tensors', 420: b'eval,"unterminated'}
    ),
    "lone CR inside a later row": lambda d: _later(d, {}, cr_row=500),
}


@pytest.mark.parametrize(
    ("kind", "variant", "locale"),
    [("raw", v, None) for v in VARIANTS]
    + [("details", v, None) for v in DETAILS]
    + [
        ("raw", "clean", "en_US"),
        ("raw", "clean", "de_DE"),
        ("details", "en_US grouping", "de_DE"),
        ("details", "en_US grouping", "C"),
        ("details", "ambiguous only", "en_US"),
    ],
)
def test_reader_matches_the_reference_reader(kind, variant, locale, tmp_path):
    from rooflint.parsers import ncu_csv
    from tests import ncu_reference

    path = tmp_path / f"{kind}.csv"
    if kind == "raw":
        path.write_bytes(VARIANTS[variant](_generated_raw()))
    else:
        path.write_bytes(DETAILS[variant](_generated_details()))
    assert_same_reading(ncu_csv, ncu_reference, path, path, locale)


@pytest.mark.parametrize("kind", ["raw", "details"])
def test_gzip_export_reads_like_the_plain_file(kind, tmp_path):
    """A gzip stream (found by its magic bytes: the name says .csv) gives exactly what the
    reference reader gives for the decompressed file, through parsers.read's detection."""
    import gzip

    from rooflint import parsers
    from tests import ncu_reference

    data = _stdout(_generated_raw()) if kind == "raw" else _generated_details()
    plain, packed = tmp_path / "plain.csv", tmp_path / "packed.csv"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    assert_same_reading(parsers, ncu_reference, packed, plain)


@pytest.mark.parametrize(
    "piece, rows",
    [
        (b'"a","1"\n"b","2"\n', b'"a","1"\n"b","2"\n'),  # rows only: unchanged
        (b'==PROF== x\n"a"\n', b'"a"\n'),  # a message first
        (b'"a"\nloss 0.5\nepoch 2\n"b"\n', b'"a"\n"b"\n'),  # two app lines in a row
        (b'"a"\n\n"b"\n==PROF== Disconnected', b'"a"\n"b"\n'),  # empty line; no final \n
        (b'"a"\nsaid "hi"\n', b'"a"\n'),  # a quote inside a line is not a row start
        (b"only text\n", b""),
        (b"", b""),
    ],
)
def test_only_the_quoted_lines_are_kept(piece, rows):
    """The rule of ncu_lines: a row is a line that starts with a double quote."""
    from parsers.ncu_lines import quoted_lines

    assert bytes(quoted_lines(bytearray(piece))) == rows


def test_quoted_lines_while_a_profiler_holds_its_frames():
    """A profiler or debugger may keep the frames it sees: the piece is resized all the same
    (a frame holding a numpy view of it made `del piece[kept:]` raise BufferError)."""
    import sys

    from parsers.ncu_lines import quoted_lines

    held = []
    sys.setprofile(lambda frame, event, arg: held.append(frame) if event == "return" else None)
    try:
        rows = quoted_lines(bytearray(b'==PROF== x\n"a"\napp print\n"b"\n'))
    finally:
        sys.setprofile(None)
    assert bytes(rows) == b'"a"\n"b"\n' and held


def test_pieces_cut_inside_the_file_change_nothing(tmp_path, monkeypatch):
    """The reader streams the file in pieces cut at line ends: pieces of a few hundred bytes
    (many cuts, some right after the header, some inside runs of app output) change nothing."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    path = tmp_path / "stdout.csv"
    path.write_bytes(_stdout(_cell(_generated_raw(60), 20, DRAM, "n/a")).replace(b"\n", b"\r\n"))
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 333)
    assert_same_reading(ncu_csv, ncu_reference, path, path)


@pytest.mark.e2e  # over a second
@pytest.mark.parametrize(
    ("kind", "variant"), [("raw", v) for v in VARIANTS] + [("details", v) for v in DETAILS]
)
def test_every_variant_read_in_small_pieces_reads_as_the_reference(
    kind, variant, tmp_path, monkeypatch
):
    """Pieces of a few rows: the lines that are not rows sit among the rows of a later piece,
    where the parser is given the piece as it is (its invalid-row handler drops them) unless
    one of them could be read as a row or a quote left open runs a line into the next."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    path = tmp_path / f"{kind}.csv"
    data = _generated_raw() if kind == "raw" else _generated_details()
    path.write_bytes((VARIANTS if kind == "raw" else DETAILS)[variant](data))
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 4000)
    expected = reading(ncu_reference, path)  # read once: the reference reads no pieces
    assert_same(reading(ncu_csv, path), expected)
    packed = tmp_path / f"{kind}.csv.gz"  # read as a stream: pieces in buffers of their own
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert_same(reading(ncu_csv, packed), expected)


def test_details_page_in_many_pieces_reads_as_the_reference(tmp_path, monkeypatch):
    """A details page read in pieces of a few hundred bytes: each launch's identity comes from
    its first row, wherever the piece (and Arrow chunk) boundaries fall."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    path = tmp_path / "details.csv"
    path.write_bytes(_generated_details())
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 333)
    assert_same_reading(ncu_csv, ncu_reference, path, path)


@pytest.mark.parametrize(
    "late",
    [
        ("1,5", "2.000.000,25"),  # de_DE shows only in the second launch: the first was read as C
        ("1.25", "2,000,000.25"),  # en_US: C and en_US read numbers alike, nothing to read again
        ("-0", "7"),  # a "-0" reads as 0.0 or -0.0 by its whole column, not by its piece
    ],
)
def test_values_read_a_piece_at_a_time_as_one_read_of_the_file(tmp_path, monkeypatch, late):
    """The raw page's values are made numbers piece by piece, in the locale the rows so far show;
    when a later piece shows another (or a cell needs its whole column) the file is read again
    as one table. Expected: what the reference reader gives for the whole file, e.g. for de_DE
    the first launch's DRAM bytes are 1.500 = 1500 and the second's duration 1,5 ns = 1.5e-9 s."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    lines = [
        '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum"',
        '"","","nsecond","byte"',
        '"0","k","100","1.500"',  # 1.5 in C and en_US, 1500 in de_DE: no evidence alone
        f'"1","k","{late[0]}","{late[1]}"',
    ]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 40)  # a piece per row
    again = []
    read = ncu_csv._read
    monkeypatch.setattr(ncu_csv, "_read", lambda *a, **k: again.append(k) or read(*a, **k))
    assert_same_reading(ncu_csv, ncu_reference, path, path)
    assert len(again) == (1 if late[1] == "2,000,000.25" else 2)
    if late[0] == "1,5":
        launches = ncu_csv.read(path).launches
        assert launches["duration_s"].tolist() == pytest.approx([100e-9, 1.5e-9], rel=1e-15)
        assert launches["bytes_dram"].tolist() == [1500.0, 2000000.25]


# --- the JSON report's launch list, written column by column, is what json.dumps writes -------


def _json_dumps(res, top=None) -> str:
    """The report as json.dumps writes it: the head indented, then one launch a line."""
    from rooflint.reporters import json_report

    doc = json_report.document(res, top)
    launches = doc.pop("launches")
    head = json.dumps({**doc, "launches": "\x00"}, indent=1, ensure_ascii=False, allow_nan=False)
    lines = ",\n".join("  " + json.dumps(r, ensure_ascii=False, allow_nan=False) for r in launches)
    return head.replace('"\\u0000"', f"[\n{lines}\n ]" if launches else "[]") + "\n"


@pytest.mark.e2e  # over a second
def test_json_report_is_byte_identical_to_json_dumps(mixed, monkeypatch):
    from rooflint.reporters import json_report

    res = pipeline.build([str(mixed)])
    assert json_report.render(res) == _json_dumps(res)
    assert json_report.render(res, top=2) == _json_dumps(res, 2)
    monkeypatch.setattr(json_report, "CHUNK_ROWS", 7)  # written in many chunks: the same text
    assert json_report.render(res) == _json_dumps(res)
    assert json.loads(json_report.render(res)) == json_report.document(res)


def test_json_chunk_is_let_go_before_the_next_is_encoded(tmp_path, monkeypatch):
    """Writing a streamed report holds one chunk of launch lines at a time: neither the writer
    nor the generator keeps the last chunk while the next is made (the 200k-launch JSON peak
    was 10 MB higher when both did)."""
    import weakref

    from rooflint.cli import output
    from rooflint.reporters import json_report

    class Lines(bytearray):  # bytes cannot be weakly referenced; a bytearray subclass can
        pass

    made = []
    encode = json_report.launch_lines

    def tracked(frame, codes):
        assert all(ref() is None for ref in made), "an earlier chunk is still held"
        lines = Lines(encode(frame, codes))
        made.append(weakref.ref(lines))
        return lines

    res = pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv")])  # 11 launches
    expected = json_report.render(res)
    monkeypatch.setattr(json_report, "launch_lines", tracked)
    monkeypatch.setattr(json_report, "CHUNK_ROWS", 3)
    output.write(str(tmp_path / "out.json"), json_report.chunks(res))
    assert len(made) == 4  # 3 + 3 + 3 + 2 launches
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == expected


@pytest.mark.e2e  # over a second
def test_json_report_names_each_source_once_and_leaves_nulls_out(mixed):
    from rooflint.reporters import json_report

    res = pipeline.build([str(mixed)])
    doc = json.loads(json_report.render(res))
    assert doc["format_version"] == 3
    assert doc["sources"] == list(dict.fromkeys(res.launches["source"]))
    for saved, (_, row) in zip(doc["launches"], res.launches.iterrows(), strict=True):
        assert doc["sources"][saved["source_index"]] == row["source"] and "source" not in saved
        assert None not in saved.values() and saved.get("missing", {"x": 1}) != {}


def test_json_report_byte_identical_on_awkward_values(tmp_path):
    import numpy as np

    from rooflint.reporters import json_report

    path = tmp_path / "raw.csv"
    path.write_bytes(_generated_raw(40))
    res = pipeline.build([str(path)])
    launches = res.launches
    names = [
        'quote " and \\ backslash',
        "new\nline\ttab\x01ctl",
        "café µs …",
        "line\u2028sep 😀",
        "",
    ]
    launches["kernel"] = pd.array(
        [names[i % len(names)] for i in range(len(launches))], dtype="string"
    )
    launches.loc[launches.index[:3], "kernel"] = pd.NA
    duration = launches["duration_s"].to_numpy().copy()
    duration[0], duration[1], duration[2], duration[3] = -0.0, 0.0, np.inf, np.nan
    duration[4], duration[5] = 1e16, 1e-5
    launches["duration_s"] = duration
    launches.loc[launches.index[:4], "launch_id"] = pd.NA
    launches["missing"] = launches["missing"].astype("string")  # a Categorical takes no new text
    launches.loc[launches.index[5], "missing"] = 'bytes_dram: no "DRAM" counter; ops: none'
    launches.loc[launches.index[6], "missing"] = pd.NA
    columns = [c for c in json_report.LAUNCH_FIELDS if c != "source"] + ["missing"]
    codes = np.zeros(len(launches), dtype="int64")
    assert json_report.launch_lines(launches[columns], codes) is not None
    assert json_report.render(res) == _json_dumps(res)
    res = dataclasses.replace(res, launches=launches.iloc[:0])  # a Result is frozen
    assert json_report.render(res) == _json_dumps(res)


def test_json_lines_of_identical_launches(tmp_path):
    """A chunk whose every column holds one value (the same launch three times) is written as
    json.dumps writes it: columns of one value are joined onto the lines as scalars."""
    from rooflint.reporters import json_report

    res = pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv")])
    res = dataclasses.replace(res, launches=res.launches.iloc[[0, 0, 0]].reset_index(drop=True))
    assert json_report.render(res) == _json_dumps(res)


# --- several large files are read by a pool of processes, with the same outcome --------------


@pytest.fixture
def pooled(monkeypatch):
    """Make read_all use its process pool even for small files."""
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_FILES", 2)


@pytest.mark.e2e  # over a second
def test_pool_reads_the_same_profiles_in_the_same_order(mixed, pooled):
    candidates, hidden = inputs.expand_folder(mixed)
    assert hidden == [(str(mixed / ".DS_Store"), "hidden file")]
    assert pipeline._workers(candidates) >= 2 or os.cpu_count() == 1
    pooled, skipped = pipeline.read_all([str(mixed)], pipeline.Options())
    serial = [pipeline.read_one(c, None) for c in candidates]
    assert [p.source for p in pooled] == [p.source for p in serial if not isinstance(p, Exception)]
    assert skipped == [
        *hidden,
        (str(mixed / "notes.txt"), next(p.problem for p in serial if isinstance(p, Exception))),
    ]
    for got, want in zip(pooled, [p for p in serial if not isinstance(p, Exception)], strict=True):
        pd.testing.assert_frame_equal(got.launches, want.launches, check_exact=True)
        assert (got.notes, got.repairs) == (want.notes, want.repairs)


@pytest.mark.e2e  # over a second
def test_each_input_holds_its_rows_of_the_result(mixed, pooled):
    # the joined table is the only copy: each profile's launches are its rows of it, analysed
    result = pipeline.build([str(mixed)])
    start = 0
    for profile in result.inputs:
        rows = result.launches.iloc[start : start + len(profile.launches)]
        assert (profile.launches["source"] == profile.source).all()
        pd.testing.assert_frame_equal(profile.launches, rows, check_exact=True)
        start += len(profile.launches)
    assert start == len(result.launches) and len(result.inputs) >= 2


@pytest.mark.e2e  # over a second
def test_pool_keeps_strict_and_progress(mixed, pooled):
    with pytest.raises(Exception) as raised:
        pipeline.build([str(mixed)], pipeline.Options(strict=True))
    assert str(raised.value).startswith(
        f"{mixed}: --strict: 2 file(s) not read: {mixed / '.DS_Store'}"
    )
    seen = []
    pipeline.build([str(mixed)], progress=lambda path, n: seen.append(path))
    assert seen == [str(c) for c in inputs.expand_folder(mixed)[0] if c.name != "notes.txt"]


def test_en_us_evidence_in_a_piece_read_as_numbers_still_counts(tmp_path, monkeypatch):
    """A piece whose cells are all plain numbers is parsed as float64, so its cells are not
    looked at for locale evidence. Here launch 0's "12.34" (two decimals: en_US, or C) is in
    such a piece and launch 1's "84,480" (en_US 84480 or de_DE 84.48) in a later one: the
    file shows en_US, as the reference reader decides from both, so 84,480 is 84480 bytes and
    not an "ambiguous" refusal. The reader reads the file again as one table to see that."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    lines = [
        '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum"',
        '"","","nsecond","byte"',
        '"0","k","12.34","1"',
        '"1","k","100","84,480"',
    ]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 40)  # a piece per row
    assert_same_reading(ncu_csv, ncu_reference, path, path)
    assert ncu_csv.read(path).launches["bytes_dram"].tolist() == [1.0, 84480.0]


@pytest.mark.parametrize(
    "cell, typed",
    [("1279", True), ("n/a", True), ("", True), ("1,279", False), ("-nan", False)],
)
def test_number_columns_come_as_float64_when_every_cell_is_a_plain_number(cell, typed):
    """ncu_table.parse tries the columns `numbers` names as float64; the units row is parsed on
    its own, as text. A cell that is not a plain number or a no-value cell ("1,279", "-nan",
    whose text the reference rules judge) makes the piece text, and every piece after it."""
    import pyarrow as pa

    from rooflint.parsers import ncu_table

    header = ["ID", "Kernel Name", "dram__bytes.sum"]
    rows = b'"","","byte"\n"0","k","5"\n"1","k","' + cell.encode() + b'"\n'
    tables = []
    ncu_table.parse([rows, b'"2","k","7"\n'], header, "x.csv", tables.append, lambda c: "__" in c)
    units, first, second = (t.column("dram__bytes.sum") for t in tables)
    assert units.to_pylist() == ["byte"]
    assert first.type == (pa.float64() if typed else pa.string())
    assert second.type == first.type


def test_json_floats_are_written_as_repr_writes_them():
    """The JSON writer formats floats with Arrow (the same shortest round-trip digits as repr)
    and rewrites the layouts that differ: integers ("100" vs "100.0"), small values ("1.5e-7"
    vs "1.5e-07", "0.000012" vs "1.2e-05"), large ones Arrow writes with an exponent below 1e16
    ("2.96673352e+13"). Expected: repr of every float, over magnitudes 1e-12 to 1e22, rounded
    and single-precision values, and the edge cases named below."""
    from rooflint.reporters.arrow_text import floats as _floats

    rng = np.random.default_rng(7)
    spread = 10 ** rng.uniform(-12, 22, 50_000) * rng.choice([-1, 1], 50_000)
    edges = [0.0, -0.0, 1e-4, 1e-6, 1e-5, 1.2e-5, 1e16, 5e-324, 1.7976931348623157e308]
    edges += [0.1 + 0.2, 2.0**53 + 2, 1e15 + 0.5, 123456789012345.6, -123456789012345.6]
    edges += [3e-6, 7e-5, 2e-8, 4.5e-10]  # one digit: no point ("3e-06")
    for limit in [1e-9, 1e-6, 1e-5, 1e-4, *(10.0**k for k in range(10, 17))]:  # layout edges
        edges += [limit, np.nextafter(limit, 0), np.nextafter(limit, np.inf), limit * 1.5]
    edges += [-v for v in edges]
    values = np.concatenate([spread, np.round(spread * 1e3) / 1e3, np.round(spread % 1e17), edges])
    values = np.concatenate([values, values.astype(np.float32).astype(np.float64)])
    values = values[np.isfinite(values)]
    assert _floats(values).to_pylist() == [repr(v) for v in values.tolist()]
    assert _floats(np.array([np.nan, np.inf, -np.inf, 1.0])).to_pylist() == [None] * 3 + ["1.0"]


def test_loose_pieces_while_a_profiler_holds_its_frames(tmp_path, monkeypatch):
    """A gzip capture read in small pieces (bytearrays, some read as they are and again as their
    quoted lines alone) while a profiler keeps every frame it saw: no buffer is resized while
    a kept frame holds a view of it (ROOFLINT_FUZZ=long, whose tracer keeps frames, hit a
    BufferError; here the reader's readinto and an ndarray.max did)."""
    import sys

    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    path = tmp_path / "raw.csv.gz"
    plain = VARIANTS["app output among later rows: row-shaped, quotes, an open quote"](
        _generated_raw()
    )
    path.write_bytes(gzip.compress(plain))  # a stream: its pieces are bytearrays
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 4000)
    expected = ncu_reference.read(_written(tmp_path / "raw.csv", plain))
    held = []
    sys.setprofile(lambda frame, event, arg: held.append(frame) if event == "return" else None)
    try:
        got = ncu_csv.read(path)
    finally:
        sys.setprofile(None)
    assert held and len(got.launches) == len(expected.launches)
    assert got.launches["launch_id"].tolist() == expected.launches["launch_id"].tolist()


def _written(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.e2e  # over a second
@pytest.mark.parametrize("damage", [b'"0","\x1e0","', b'"\n0","'])
def test_a_quote_left_open_reads_alike_wherever_a_piece_ends(damage, tmp_path):
    """A row that leaves a quote open (a line break inside its cell) takes the next row into
    one record when the file is parsed whole; read in pieces, its rest goes with the next
    piece, so every piece size gives what one parse gives (ROOFLINT_FUZZ=long found both:
    a record separator in the real A100 export's first row, a line end after a quote)."""
    data = (FIXTURES / "ncu" / "a100-gemm-details.csv").read_bytes()
    rows = data.split(b"\n")
    at = next(i for i, line in enumerate(rows) if line.startswith(b'"0","'))
    rows[at + 3] = damage + rows[at + 3][len(b'"0","') :]
    path = tmp_path / "damaged.csv"
    path.write_bytes(b"\n".join(rows))
    assert_reads_alike_in_pieces(path, range(150, 1400, 83))


@pytest.mark.e2e  # over a second
@pytest.mark.parametrize(
    "inserted",
    [
        [(2, b'"'), (2, b'"')],  # a quote opened, then closed by the next lone quote
        [(2, b'"'), (2, b"==PROF== Disconnected from process 7"), (2, b'"')],
        [(3, b'"')],  # opened in the units row's place
    ],
)
def test_lone_quotes_near_the_header_read_alike_wherever_a_piece_ends(inserted, tmp_path):
    """Lines of a lone double quote among the first rows (ROOFLINT_FUZZ=long, 300-byte
    pieces: a TypeError, a csv.Error and a lost launch ID before the fix): every piece size
    gives what one parse of the file gives. Each way the reader can cut the file is read once,
    from a line a piece to the whole file in one (7 to 12 ways here; the 31 sizes from 150 to
    2,000 bytes this test used to read all cut it one way, as every row is longer)."""
    lines = (FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv").read_bytes().split(b"\n")
    for at, line in inserted:
        lines.insert(at, line)
    path = tmp_path / "quotes.csv"
    data = b"\n".join(lines)
    path.write_bytes(data)
    assert_reads_alike_in_pieces(path, distinct_piece_sizes(path, range(1, len(data) + 2)))
