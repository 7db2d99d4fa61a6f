"""Malformed inputs: one clear error line, exit 2 (or a counted partial result), nothing written."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import assert_refused, loaded, report

ROOT = Path(__file__).resolve().parents[1]
NCU = ROOT / "fixtures" / "ncu"
BAD = ROOT / "fixtures" / "bad"
RAW = NCU / "rtx2080ti-sgemm-raw-base.csv"  # header, units row, one launch
DETAILS = NCU / "a100-gemm-details.csv"  # details page, app output mixed in, 11 launches
DURATION = "gpu__time_duration.sum"
# Numbers that must survive a change of encoding, line endings or width unchanged.
COMPARED = [
    "launch_id",
    "kernel",
    "duration_s",
    "bytes_dram",
    "bytes_l2",
    "ops_vector_fp32",
    "flops",
    "efficiency",
    "verdict",
]


# ---------------------------------------------------------------- building inputs from real exports


def raw_rows() -> tuple[list[str], list[str], list[str]]:
    """Header, units row and the launch row of the real sgemm raw export."""
    header, units, launch = list(csv.reader(RAW.read_text(encoding="utf-8").splitlines()))
    return header, units, launch


def raw_page(launches: int = 3, units: bool = True, edit=None) -> str:
    """A raw page of `launches` copies of the real launch (IDs 0..n-1); `edit(rows, header)`
    may change the launch rows in place before they are written the way ncu writes them."""
    header, unit_row, launch = raw_rows()
    rows = []
    for i in range(launches):
        row = list(launch)
        row[0] = str(i)
        rows.append(row)
    if edit:
        edit(rows, header)
    return to_csv([header] + ([unit_row] if units else []) + rows)


def to_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def set_cell(row: int, column: str, value: str):
    def edit(rows, header):
        rows[row][header.index(column)] = value

    return edit


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def numbers(doc: dict) -> list[dict]:
    return [{k: launch.get(k) for k in COMPARED} for launch in doc["launches"]]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> dict:
    """The report of the untouched three-launch raw page, for variants that must not change it."""
    folder = tmp_path_factory.mktemp("baseline")
    result, out = report(folder, write(folder, "plain.csv", raw_page()))
    return loaded(result, out)


# ---------------------------------------------------------------- files that are not profiles

REFUSED = {
    # name: (bytes, words the message must hold)
    "empty.csv": (b"", ["empty", "export"]),
    "bom-only.csv": (b"\xef\xbb\xbf\r\n", ["empty", "export"]),
    "binary.csv": (bytes(range(256)) * 64, ["binary", "ncu --csv"]),
    "damaged.csv.gz": (None, ["gzip stream is damaged", "gunzip"]),
    "report.ncu-rep.gz": (None, ["gzip-compressed binary", "gunzip"]),
    "profile.zip": (None, ["zip", "extract"]),
    "utf16.csv": (None, ["UTF-16", "iconv"]),
    "header-only.csv": (None, ["no launches", "--page raw"]),
    "header-and-units.csv": (None, ["units row but no launches", "--page raw"]),
    "single-row-truncated.csv": (None, ["ends mid-row", "truncated"]),
    "not-csv.txt": (b"this is a log file\nwith nothing in it\n", ["not a profile", "ncu --csv"]),
}


def _refused_bytes(name: str) -> bytes:
    raw = RAW.read_bytes()
    header, units, _ = raw_rows()
    built = {
        "damaged.csv.gz": lambda: gzip.compress(raw)[:-40],
        "report.ncu-rep.gz": lambda: gzip.compress(b"NVR\x00" + bytes(range(256)) * 8),
        "profile.zip": lambda: _zipped(raw),
        "utf16.csv": lambda: raw.decode("utf-8").encode("utf-16"),
        "header-only.csv": lambda: to_csv([header]).encode(),
        "header-and-units.csv": lambda: to_csv([header, units]).encode(),
        "single-row-truncated.csv": lambda: raw_page(1).encode()[:-5000],
    }
    return built[name]() if name in built else REFUSED[name][0]


def _zipped(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("profile.csv", data)
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_one_clear_line(tmp_path, name):
    path = write(tmp_path, name, _refused_bytes(name))
    result, out = report(tmp_path, path)
    assert_refused(result, out, path, *REFUSED[name][1])


@pytest.mark.parametrize(
    "name, words",
    [
        ("prof-lines-only.csv", ["==PROF==", "--kernel-name"]),
        ("nsys-cuda-gpu-kern-sum.csv", ["nsys stats", "nsys export --type sqlite"]),
        ("pytorch-key-averages.csv", ["PyTorch profiler", "Nsight Compute"]),
    ],
)
def test_other_tools_exports_are_named(tmp_path, name, words):
    path = BAD / name
    result, out = report(tmp_path, path)
    assert_refused(result, out, path, *words)


def test_missing_path(tmp_path):
    path = tmp_path / "no-such-profile.csv"
    result, out = report(tmp_path, path)
    assert_refused(result, out, path, "no such file", "check the path")


def test_folder_without_profiles(tmp_path):
    folder = tmp_path / "empty-folder"
    folder.mkdir()
    result, out = report(tmp_path, folder)
    assert_refused(result, out, folder, "no profile files found", "Nsight Compute")


def test_folder_with_only_non_profiles_names_the_file(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder, "run.log", "epoch 1 loss 0.3\n")
    write(folder, "notes.md", "# notes\n")
    result, out = report(tmp_path, folder)
    line = assert_refused(result, out, folder, "no usable profile among 2 file(s)")
    assert "notes.md" in line


def test_unreadable_file(tmp_path):
    path = write(tmp_path, "locked.csv", raw_page(1))
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user (root) whom chmod 000 does not stop from reading")
        result, out = report(tmp_path, path)
        assert_refused(result, out, path, "permission denied", "chmod")
    finally:
        path.chmod(0o644)


def test_output_folder_that_does_not_exist(tmp_path):
    path = write(tmp_path, "ok.csv", raw_page(1))
    out = tmp_path / "missing" / "out.json"
    result = CliRunner().invoke(main, ["report", str(path), "-q", "-o", str(out)])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert "does not exist" in result.stderr and str(out) in result.stderr
    assert not out.parent.exists()


# ---------------------------------------------------------------- damaged profiles that still load


@pytest.mark.parametrize("where", ["mid-row", "mid-quote"])
def test_truncated_last_row_is_dropped_and_counted(tmp_path, where):
    text = raw_page(3)
    cut = len(text) - 4000 if where == "mid-row" else text.rindex('"volta_sgemm') + 4
    path = write(tmp_path, f"truncated-{where}.csv", text[:cut])
    result, out = report(tmp_path, path)
    doc = loaded(result, out)
    assert doc["accounting"]["launches_read"] == 2
    assert [launch["launch_id"] for launch in doc["launches"]] == [0, 1]
    assert doc["accounting"]["repairs"] == [
        f"{path}: last line cut short (the file ends mid-row: a truncated copy?) skipped"
    ]


def test_truncated_details_page(tmp_path):
    text = DETAILS.read_text(encoding="utf-8").rstrip("\n")
    path = write(tmp_path, "details-cut.csv", text[:-30])
    doc = loaded(*report(tmp_path, path))
    # the cut row was the last of launch 10's 6 metric rows: launch 10 is left out, and listed
    assert doc["accounting"]["launches_read"] == 10
    assert doc["accounting"]["repairs"] == [
        f"{path}: last line cut short (the file ends mid-row: a truncated copy?) skipped",
        f"{path}: last launch (ID 10) cut short: 5 of its 6 metric rows (the file ends "
        "mid-launch: a truncated copy?), left out",
    ]


def test_units_row_missing_loads_with_a_note(tmp_path):
    header, units, launch = raw_rows()
    column = header.index(DURATION)
    assert units[column] == "ns"
    expected_s = float(launch[column]) * 1e-9  # ncu's base unit of time is the nanosecond
    path = write(tmp_path, "no-units.csv", raw_page(2, units=False))
    doc = loaded(*report(tmp_path, path))
    assert (
        f"{path}: no units row after the header: values read as ncu base units (durations in ns)"
        in doc["notes"]
    )
    assert [launch["duration_s"] for launch in doc["launches"]] == [pytest.approx(expected_s)] * 2


def test_duplicate_launch_ids_are_counted_and_named(tmp_path):
    path = write(tmp_path, "dup.csv", raw_page(3, edit=set_cell(2, "ID", "0")))
    doc = loaded(*report(tmp_path, path))
    assert doc["accounting"]["launches_read"] == 3  # every row kept: none is known to be a copy
    assert doc["accounting"]["repairs"] == [
        f"{path}: 2 rows share 1 launch ID(s): 0 (2 rows); all rows "
        "kept (two exports joined into one file?)"
    ]


def test_text_in_a_metric_column(tmp_path):
    path = write(tmp_path, "text.csv", raw_page(3, edit=set_cell(1, DURATION, "fast")))
    doc = loaded(*report(tmp_path, path))
    acc = doc["accounting"]
    assert acc["not_analysable_reasons"] == {"missing duration": 1}
    assert doc["launches"][1]["reason"] == "missing duration"
    assert acc["repairs"] == [
        f"{path}: 1 metric value(s) that are not numbers read as missing (first: "
        f"{DURATION} = 'fast' for launch ID 1)"
    ]


def test_text_in_a_details_metric_value(tmp_path):
    text = DETAILS.read_text(encoding="utf-8")
    old = '"dram__bytes.sum","byte","823,404,288"'
    assert text.count(old) == 1
    path = write(tmp_path, "details-text.csv", text.replace(old, '"dram__bytes.sum","byte","lots"'))
    doc = loaded(*report(tmp_path, path))
    assert doc["accounting"]["not_analysable_reasons"] == {"missing DRAM bytes": 1}
    assert doc["accounting"]["repairs"] == [
        f"{path}: 1 metric value(s) that are not numbers read as "
        "missing (first: dram__bytes.sum = 'lots' for launch ID 0)"
    ]


def test_negative_nan_and_infinite_values(tmp_path):
    def edit(rows, header):
        rows[0][header.index(DURATION)] = "-5"
        rows[1][header.index(DURATION)] = "nan"
        rows[2][header.index(DURATION)] = "inf"
        rows[3][header.index("dram__bytes_read.sum")] = "-100"

    path = write(tmp_path, "signs.csv", raw_page(5, edit=edit))
    doc = loaded(*report(tmp_path, path))
    acc = doc["accounting"]
    assert acc["launches_read"] == 5
    assert [launch["reason"] for launch in doc["launches"]] == [
        "missing duration",
        "missing duration",
        "missing duration",
        "missing DRAM bytes",
        "",
    ]
    assert acc["repairs"] == [
        f"{path}: 3 launch(es) with a negative or infinite value, read as missing "
        "(each launch's notes name the quantity)"
    ]
    assert "duration_s negative or infinite" in doc["launches"][0]["notes"]
    assert "bytes_dram negative or infinite" in doc["launches"][3]["notes"]
    for launch in doc["launches"]:
        for key in ("duration_s", "bytes_dram", "flops", "efficiency", "headroom_s"):
            assert launch.get(key) is None or launch[key] >= 0  # null fields are left out


def test_zero_and_missing_durations_are_listed_not_analysable(tmp_path):
    def edit(rows, header):
        rows[0][header.index(DURATION)] = "0"
        rows[1][header.index(DURATION)] = ""

    path = write(tmp_path, "durations.csv", raw_page(3, edit=edit))
    doc = loaded(*report(tmp_path, path))
    acc = doc["accounting"]
    assert (acc["launches_read"], acc["analysed"], acc["not_analysable"]) == (3, 1, 2)
    assert acc["not_analysable_reasons"] == {"missing duration": 1, "zero duration": 1}
    assert [(launch["verdict"], launch["reason"]) for launch in doc["launches"][:2]] == [
        ("not-analysable", "zero duration"),
        ("not-analysable", "missing duration"),
    ]


def test_latin1_bytes_in_a_kernel_name(tmp_path):
    text = raw_page(2, edit=set_cell(0, "Kernel Name", "sgemm_\xe9tape_\xb5"))
    path = write(tmp_path, "latin1.csv", text.encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")
    doc = loaded(*report(tmp_path, path))
    assert [launch["kernel"] for launch in doc["launches"]] == [
        "sgemm_\xe9tape_\xb5",
        "volta_sgemm_32x128_nn",
    ]


@pytest.mark.e2e  # over a second
def test_one_megabyte_kernel_name(tmp_path):
    name = "void k<" + "float, " * 150_000 + "int>()"
    assert len(name) > 1 << 20
    path = write(tmp_path, "long-name.csv", raw_page(2, edit=set_cell(0, "Kernel Name", name)))
    doc = loaded(*report(tmp_path, path))
    assert doc["launches"][0]["kernel"] == name
    assert doc["accounting"]["analysed"] == 2


@pytest.mark.e2e  # over a second
def test_hundred_thousand_columns(tmp_path, baseline):
    header, units, launch = raw_rows()
    extra = 100_000
    rows = [header + [f"extra__metric_{i}.sum" for i in range(extra)], units + ["byte"] * extra]
    rows += [[str(i)] + launch[1:] + ["7"] * extra for i in range(3)]
    path = write(tmp_path, "wide.csv", to_csv(rows))
    doc = loaded(*report(tmp_path, path))
    assert numbers(doc) == numbers(baseline)


@pytest.mark.parametrize("variant", ["crlf", "bom", "bom+crlf", "gzip", "gzip+bom+crlf"])
def test_line_endings_and_bom_give_the_same_numbers(tmp_path, baseline, variant):
    data = raw_page().encode("utf-8")
    if "crlf" in variant:
        data = data.replace(b"\n", b"\r\n")
    if "bom" in variant:
        data = b"\xef\xbb\xbf" + data
    if "gzip" in variant:  # read as a stream, recognised by its magic bytes (the name says .csv)
        data = gzip.compress(data)
    path = write(tmp_path, f"{variant}.csv", data)
    doc = loaded(*report(tmp_path, path))
    assert numbers(doc) == numbers(baseline)
    assert doc["accounting"]["repairs"] == []


def test_one_bad_file_among_good_ones_is_skipped_and_named(tmp_path):
    good = write(tmp_path, "good.csv", raw_page(2))
    bad = write(tmp_path, "bad.csv", b"\x1f\x8b\x08\x00garbage")
    doc = loaded(*report(tmp_path, good, bad))
    assert doc["accounting"]["launches_read"] == 2
    assert doc["accounting"]["inputs_skipped"] == [
        {
            "path": str(bad),
            "reason": "gzip stream is damaged (Compressed file ended before the "
            "end-of-stream marker was reached); copy the file again or decompress it with gunzip "
            "to see how much survives",
        }
    ]


def test_strict_turns_a_skipped_file_into_an_error(tmp_path):
    good = write(tmp_path, "good.csv", raw_page(2))
    bad = write(tmp_path, "bad.csv", "")
    result, out = report(tmp_path, good, bad, extra=["--strict"])
    assert_refused(result, out, bad, "empty")


# ---------------------------------------------------------------- device files


@pytest.mark.parametrize(
    "name, words",
    [
        (
            "device-missing-key.toml",
            ["missing key 'bandwidth_gbps'", "add a [bandwidth_gbps] table"],
        ),
        (
            "device-wrong-type.toml",
            ["compute_tflops.vector_fp32", "positive number", "fix the value"],
        ),
        ("device-negative-bandwidth.toml", ["bandwidth_gbps.dram", "-616", "fix the value"]),
        ("device-bad-syntax.toml", ["not valid TOML", "line 3", "fix the syntax"]),
    ],
)
def test_bad_device_file(tmp_path, name, words):
    device = BAD / name
    result, out = report(tmp_path, RAW, extra=["--device-file", str(device)])
    assert_refused(result, out, device, *words)


# ---------------------------------------------------------------- saved reports


def test_json_report_from_a_future_format_version(tmp_path):
    result, saved = report(tmp_path, RAW)
    doc = loaded(result, saved)
    doc["format_version"] += 1
    future = write(tmp_path, "future.json", json.dumps(doc))
    out = tmp_path / "diff.json"
    result = CliRunner().invoke(main, ["diff", str(future), str(RAW), "-o", str(out)])
    assert_refused(result, out, future, "newer rooflint", "upgrade rooflint")


# ---------------------------------------------------------------- limits


def test_input_larger_than_the_limit_is_refused_before_reading(tmp_path):
    size = RAW.stat().st_size
    for limit in (1024, size - 1):
        result, out = report(tmp_path, RAW, env={"ROOFLINT_MAX_INPUT_BYTES": str(limit)})
        assert_refused(
            result,
            out,
            RAW,
            f"file is {size:,} bytes",
            f"limit of {limit:,} bytes",
            "split the export",
            "ROOFLINT_MAX_INPUT_BYTES",
        )
    loaded(*report(tmp_path, RAW, env={"ROOFLINT_MAX_INPUT_BYTES": str(size)}))


@pytest.mark.parametrize("value", ["lots", "-5", "0"])
def test_bad_limit_value_is_a_usage_error(tmp_path, value):
    result, out = report(tmp_path, RAW, env={"ROOFLINT_MAX_INPUT_BYTES": value})
    assert_refused(
        result, out, f"ROOFLINT_MAX_INPUT_BYTES='{value}'", "whole number of bytes", "unset it"
    )


# ---------------------------------------------------------------- the real process


@pytest.mark.e2e  # a subprocess
@pytest.mark.parametrize("make", ["empty", "missing"])
def test_real_process_prints_one_line_and_exits_2(tmp_path, make):
    path = tmp_path / "input.csv"
    if make == "empty":
        path.write_bytes(b"")
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "rooflint", "report", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"rooflint: error: {path}: ")
    assert not out.exists()


# ---------------------------------------------------------------- rocprof (owned elsewhere)

TRACE = ROOT / "fixtures" / "rocprof" / "v3_rocm621_mi300a_kernel_trace_head.csv"


def _trace_with(old: bytes, new: bytes) -> bytes:
    data = TRACE.read_bytes()
    assert old in data
    return data.replace(old, new, 1)


@pytest.mark.parametrize("size", ["inf", "1e30"])
def test_rocprof_trace_with_an_impossible_grid_size(tmp_path, size):
    path = write(tmp_path, TRACE.name, _trace_with(b",233472,1,1\n", f",{size},1,1\n".encode()))
    result, out = report(tmp_path, path)
    assert result.exit_code in (0, 2) and isinstance(result.exception, SystemExit | None), (
        result.exception
    )


def test_rocprof_latin1_bytes_in_a_kernel_name(tmp_path):
    path = write(
        tmp_path, TRACE.name, _trace_with(b"__omp_offloading_32_2f3c6", b"__omp_\xe9offloading")
    )
    doc = loaded(*report(tmp_path, path))
    assert doc["launches"][0]["kernel"].startswith("__omp_\xe9offloading")


def test_rocprof_latin1_bytes_in_a_counter_name(tmp_path):
    source = ROOT / "fixtures" / "rocprof" / "v3_docs_2024_counter_collection.csv"
    data = source.read_bytes()
    assert b'"SQ_WAVES"' in data
    path = write(tmp_path, source.name, data.replace(b'"SQ_WAVES"', b'"SQ_\xe9WAVES"', 1))
    result, out = report(tmp_path, path)
    assert result.exit_code in (0, 2) and isinstance(result.exception, SystemExit | None), (
        result.exception
    )


# ---------------------------------------------------------------- reading is inert, writing atomic

FORBIDDEN = {
    r"\beval\(": "eval()",
    r"\bexec\(": "exec()",
    r"\bpickle\b": "pickle",
    r"\bmarshal\b": "marshal",
    r"\bpd\.eval\(": "pandas.eval",
    r"\.query\(": "DataFrame.query",
    r"\bos\.system\(": "os.system",
    r"shell\s*=\s*True": "a shell",
}


def test_no_code_path_evaluates_input():
    import re

    found = []
    for folder in ("src", "parsers", "hardware"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                found += [
                    f"{path.relative_to(ROOT)}:{number}: {what}"
                    for pattern, what in FORBIDDEN.items()
                    if re.search(pattern, code)
                ]
    assert found == []


def test_code_in_a_kernel_name_stays_text(tmp_path):
    payload = "__import__('os').system('touch PWNED'); =cmd|' /C calc'!A0 <script>x</script>"
    path = write(tmp_path, "payload.csv", raw_page(1, edit=set_cell(0, "Kernel Name", payload)))
    doc = loaded(*report(tmp_path, path))
    assert doc["launches"][0]["kernel"] == payload
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


PREVIOUS = b'{"previous": "report"}\n'


def test_a_reporter_that_crashes_leaves_the_previous_file(tmp_path, monkeypatch):
    from rooflint.reporters import json_report

    def crash(result, **_options):
        yield from list(json_report.chunks(result))[
            :2
        ]  # the report is part written, then the crash
        raise RuntimeError("reporter bug")

    monkeypatch.setattr(json_report, "chunks", crash)
    out = tmp_path / "out.json"
    out.write_bytes(PREVIOUS)
    result = CliRunner().invoke(main, ["report", str(RAW), "-q", "-o", str(out)])
    assert isinstance(result.exception, RuntimeError)  # a bug keeps its traceback
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


@pytest.mark.parametrize("failure", ["disk-full", "interrupt"])
def test_a_write_that_fails_halfway_leaves_no_partial_file(tmp_path, monkeypatch, failure):
    import errno

    real_fdopen = os.fdopen
    seen = {}

    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            seen["partial"] = [(p.name, p.stat().st_size) for p in temps]
            if failure == "disk-full":
                raise OSError(errno.ENOSPC, "No space left on device")
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: HalfWriter(real_fdopen(fd, *a, **k)))
    out = tmp_path / "out.json"
    out.write_bytes(PREVIOUS)
    result = CliRunner().invoke(main, ["report", str(RAW), "-q", "-o", str(out)])
    assert len(seen["partial"]) == 1 and seen["partial"][0][1] > 0  # the output had started
    if failure == "disk-full":
        assert result.exit_code == 2
        assert result.stderr == (
            f"rooflint: error: {out}: cannot write (No space left on device); nothing "
            "was written; choose another -o path (or free some space)\n"
        )
    else:
        assert result.exit_code != 0
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_an_unwritable_target_is_one_line(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    result = CliRunner().invoke(main, ["report", str(RAW), "-q", "-f", "json", "-o", str(folder)])
    assert result.exit_code == 2, result.exception
    assert result.stderr.splitlines() == [
        f"rooflint: error: {folder}: cannot write (Is a directory); nothing was "
        "written; choose another -o path (or free some space)"
    ]
    assert list(folder.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "a-folder"
    ]
