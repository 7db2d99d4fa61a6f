"""Fuzzing every reader with damaged real exports: only RooflintError may escape, and whatever
loads is a valid canonical table.

Bounded by the hypothesis profile from tests/conftest.py: "ci" (30 examples per test) by
default, "long" (2000) with ROOFLINT_FUZZ=long.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import json
import os
import re
import shutil
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflint import parsers
from rooflint.core import schema
from rooflint.core.errors import RooflintError
from tests.helpers import A100, FIXTURES, NASTY_CELLS, ROOT, SHARED, make_rocpd, report

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


# Open bugs the fuzz found, each pinned by a strict xfail: (exception, module it escapes from),
# let through here only so that the fuzz keeps finding new ones; fixing one turns its xfail into
# a failure, and then it comes off this list. Empty now: the three it found in the rocprof and
# SQLite readers are fixed (test_found_* below).
KNOWN_BUGS: set[tuple[str, str]] = set()


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


# --- the command line's contract, on every format (issue 33) ------------------------------------
#
# Each seed is a real bundled input of one format (or one built like the real ones, for rocpd).
# Its bytes are damaged (bytes, lines, a JSON value replaced by one of another type, a TOML value
# out of range), optionally gzip'd, and given to the command that reads that format. The contract,
# whatever the damage: exit 0, 1 or 2 and no traceback; on exit 2 exactly one stderr line and no
# report or temporary file left; otherwise a report whose accounting adds up.

LONG = os.environ.get("ROOFLINT_FUZZ") == "long"
CLI_EXAMPLES = 2000 if LONG else 25  # about 0.3 s each: the default run stays well under 60 s
NCU = FIXTURES / "ncu"
ROCPROF = FIXTURES / "rocprof"


@dataclass(frozen=True)
class Seed:
    """A real input to damage: `name` (the file's name), how it is read (`command`: report,
    diff against the undamaged report, or --device-file beside a profile), its kind of text."""

    name: str
    source: Path | None
    command: str = "report"
    kind: str = "text"  # text, binary, json or toml
    folder: dict | None = None  # a profile folder: the other files beside the damaged one


def _seeds() -> list[Seed]:
    seeds = [
        Seed("raw.csv", NCU / "rtx2080ti-sgemm-raw-base.csv"),
        Seed("details.csv", NCU / "a100-gemm-details.csv"),
        Seed("stdout.csv", NCU / "h200-block-raw-stdout.csv"),
        Seed("locale.csv", NCU / "rtx3070-nvtx-details-locale-de_DE_head.csv"),
        Seed("nvprof.csv", NCU / "nvprof-k20c-metrics.csv"),
        Seed("counter_collection.csv", ROCPROF / "v3_docs_2025_counter_collection.csv"),
        Seed("kernel_trace.csv", ROCPROF / "v3_rocm621_mi300a_kernel_trace_head.csv"),
        Seed("pmc_perf.csv", ROCPROF / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv"),
        Seed(
            "pmc_perf.csv",
            ROCPROF / "rocprofcompute31_mi350_rocprofv3_pmc_perf.csv",
            folder={"sysinfo.csv": ROCPROF / "rocprofcompute31_mi350_sysinfo.csv"},
        ),
        Seed("results.db", ROCPROF / "v1_mi250_rocm571_results_head.db", kind="binary"),
        Seed("run_results.db", None, kind="binary"),  # rocpd: tests/helpers.make_rocpd
        Seed("trace.json", FIXTURES / "kineto" / "hta-mi250-minitoy.json.gz", kind="json"),
        Seed("block.json", FIXTURES / "kineto" / "h200-block-trace.json.gz", kind="json"),
        Seed("saved.json", NCU / "a100-gemm-details.csv", command="diff", kind="json"),
        Seed(
            "saved-trace.json",
            FIXTURES / "kineto" / "hta-mi250-minitoy.json.gz",
            command="diff",
            kind="json",
        ),
        Seed(
            "device.toml",
            ROOT / "hardware" / "devices" / "a100-sxm4-80gb.toml",
            command="device-file",
            kind="toml",
        ),
    ]
    if importlib.util.find_spec("ncu_report"):  # the ncu-rep extra
        seeds.append(
            Seed("gemm.ncu-rep", NCU / "h200-tensor-ops" / "gemm-bf16.ncu-rep", kind="binary")
        )
    return seeds


SEEDS = _seeds()
_SEED_BYTES: dict[tuple, bytes] = {}


def seed_bytes(seed: Seed, folder: Path) -> bytes:
    """The undamaged input (a trace decompressed, a saved report written by `report`)."""
    key = (seed.name, seed.source)
    if key not in _SEED_BYTES:
        if seed.source is None:
            data = make_rocpd(folder / "seed-rocpd.db").read_bytes()
        elif seed.command == "diff":
            made = folder / f"seed-{seed.name}"
            made.mkdir(exist_ok=True)
            result, out = report(made, seed.source, extra=("--format", "json"))
            assert result.exit_code == 0, result.stderr
            data = out.read_bytes()
        else:
            data = seed.source.read_bytes()
        _SEED_BYTES[key] = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return _SEED_BYTES[key]


def run_seed(seed: Seed, data: bytes, folder: Path):
    """Write the input where its command reads it and run that command: (result, out path)."""
    from rooflint.cli import main

    work = Path(tempfile.mkdtemp(dir=folder))
    path = work / seed.name
    if seed.folder:
        path = work / "workload" / seed.name
        path.parent.mkdir()
        for name, source in seed.folder.items():
            shutil.copy(source, path.parent / name)
    path.write_bytes(data)
    read = path.parent if seed.folder else path
    out = work / "out.json"
    if seed.command == "diff":
        original = work / "original.json"
        original.write_bytes(seed_bytes(seed, folder))
        args = ["diff", str(path), str(original), "-o", str(out)]
    elif seed.command == "device-file":
        args = ["report", str(A100), "--device-file", str(path), "-q", "-o", str(out)]
    else:
        args = ["report", str(read), "-q", "-o", str(out)]
    return CliRunner().invoke(main, args), out


def assert_contract(seed: Seed, result, out: Path) -> None:
    """Exit 0/1/2, no traceback; exit 2: one line, nothing left behind; else an accounted report."""
    escaped = result.exception if not isinstance(result.exception, SystemExit) else None
    if escaped is not None and _known_bug(escaped):
        return
    assert escaped is None, "".join(traceback.format_exception(escaped))
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(".out.json")]
    assert leftovers == [], f"temporary files left: {leftovers}"
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("rooflint: error: "), result.stderr
        assert not out.exists(), "a report written on exit 2"
        return
    doc = json.loads(out.read_text(encoding="utf-8"))
    if seed.command == "diff":
        assert doc.get("kind") == "diff" or "totals" in doc
        return
    acc = doc["accounting"]
    outside = acc.get("outside_window", {}).get("launches", 0)
    assert acc["launches_read"] == acc["analysed"] + acc["not_analysable"] + outside, acc
    assert sum(acc["not_analysable_reasons"].values()) == acc["not_analysable"], acc


@pytest.mark.parametrize("seed", SEEDS, ids=[f"{s.command}-{s.name}" for s in SEEDS])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_every_seed_reads_as_it_is(folder, seed, gz):
    """The undamaged seeds (plain and gzip'd) keep the contract, and the plain ones are read
    (exit 0), so the damage starts from an input of that format."""
    data = seed_bytes(seed, folder)
    result, out = run_seed(seed, gzip.compress(data, mtime=0) if gz else data, folder)
    assert_contract(seed, result, out)
    if not gz:
        assert result.exit_code == 0, result.stderr


HOSTILE_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
TOML_VALUES = st.sampled_from(
    ["nan", "inf", "-inf", "-1", "0", "1e300", '"x"', "[1]", "{}", "true", '""', "1e-300"]
)


def _json_spots(value, path=(), limit=400) -> list[tuple]:
    """Paths to values in a parsed JSON document (the first `limit`, breadth first)."""
    spots, queue = [], [(path, value)]
    while queue and len(spots) < limit:
        here, node = queue.pop(0)
        spots.append(here)
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        queue.extend((here + (k,), v) for k, v in items)
    return spots


def damage_json(data: bytes, draw) -> bytes:
    doc = json.loads(data)
    spots = _json_spots(doc)[1:]
    for _ in range(draw(st.integers(1, 3), label="values")):
        if not spots:
            break
        where = draw(st.sampled_from(spots), label="where")
        node = doc
        try:
            for key in where[:-1]:
                node = node[key]
            node[where[-1]] = draw(HOSTILE_JSON, label="value")
        except (KeyError, IndexError, TypeError):  # an earlier change moved it
            continue
    text = json.dumps(doc)
    if draw(st.booleans(), label="deep"):
        text = text.replace("null", "[" * 1100 + "]" * 1100, 1)
    return text.encode("utf-8", errors="surrogatepass")


def damage_toml(data: bytes, draw) -> bytes:
    lines = data.decode("utf-8").splitlines(keepends=True)
    values = [i for i, line in enumerate(lines) if re.match(r"\s*\w+\s*=", line)]
    for _ in range(draw(st.integers(1, 3), label="values")):
        i = draw(st.sampled_from(values), label="line")
        key = lines[i].split("=", 1)[0]
        lines[i] = f"{key}= {draw(TOML_VALUES, label='value')}\n"
    return "".join(lines).encode()


def damage_bytes(data: bytes, draw) -> bytes:
    raw = bytearray(data)
    for _ in range(draw(st.integers(1, 4), label="edits")):
        kind = draw(st.sampled_from(["insert", "overwrite", "truncate", "delete", "lines"]))
        at = draw(st.integers(0, len(raw)), label="at") % (len(raw) + 1)
        if kind == "insert":
            raw[at:at] = draw(st.binary(min_size=1, max_size=32), label="bytes")
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=16), label="bytes")
            raw[at : at + len(chunk)] = chunk
        elif kind == "truncate":
            del raw[at:]
        elif kind == "delete":
            del raw[at : at + draw(st.integers(1, 4096), label="length")]
        else:  # a line dropped or repeated
            lines = bytes(raw).splitlines(keepends=True)
            if lines:
                i = at % len(lines)
                lines[i:i] = [lines[i]] if draw(st.booleans(), label="repeat") else []
                if not draw(st.booleans(), label="keep"):
                    del lines[i]
                raw = bytearray(b"".join(lines))
    return bytes(raw)


@settings(
    max_examples=CLI_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_damaged_inputs_keep_the_command_line_contract(folder, data):
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    original = seed_bytes(seed, folder)
    structural = seed.kind in ("json", "toml") and data.draw(st.booleans(), label="structural")
    if structural and seed.kind == "json":
        damaged = damage_json(original, data.draw)
    elif structural:
        damaged = damage_toml(original, data.draw)
    else:
        damaged = damage_bytes(original, data.draw)
    if data.draw(st.booleans(), label="gzip"):
        damaged = gzip.compress(damaged, mtime=0)
    result, out = run_seed(seed, damaged, folder)
    assert_contract(seed, result, out)


def _refused(result) -> str:
    """The one stderr line of an exit-2 refusal."""
    assert result.exit_code == 2, (result.exit_code, result.exception)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    return result.stderr


def test_found_rocprof_sqlite_cut_after_its_header(tmp_path):
    """Found by the fuzz: the bundled rocprof SQLite database cut after its first 4,101 bytes
    raised IndexError in parsers/rocprof_columns.clean_kernel (no kernel name at all). Its header
    says 3 pages of 4,096 bytes: a copy cut short is refused before any table is read, and
    clean_kernel takes a column of missing names."""
    path = tmp_path / "results.db"
    path.write_bytes((ROCPROF / "v1_mi250_rocm571_results_head.db").read_bytes()[:4101])
    result, _ = report(tmp_path, path)
    assert "SQLite database is cut short (4,101 of its" in _refused(result)


def test_found_rocpd_cut_in_its_tables(tmp_path):
    """Found by the fuzz: a rocpd database (tests/helpers.make_rocpd) cut after 12,293 bytes read
    its dispatch ids as text and parsers/rocprof._rocpd_table's merge raised pandas' ValueError;
    the cut is now refused (12,293 of 16,384 bytes), and ids of two types merge as numbers."""
    path = make_rocpd(tmp_path / "run_results.db")
    path.write_bytes(path.read_bytes()[:12293])
    result, _ = report(tmp_path, path)
    assert "SQLite database is cut short (12,293 of its 16,384 bytes)" in _refused(result)


def test_found_sqlite_bad_schema_byte(tmp_path):
    """Found by the fuzz: two bytes (0x80 0x00) inserted at offset 3,841 of the bundled rocprof
    SQLite database make SQLite word its "malformed database schema" error with a byte that is
    not UTF-8, and listing the tables (any SQLite reader's sniff) raised UnicodeDecodeError."""
    data = (ROCPROF / "v1_mi250_rocm571_results_head.db").read_bytes()
    path = tmp_path / "results.db"
    path.write_bytes(data[:3841] + b"\x80\x00" + data[3841:])
    result, _ = report(tmp_path, path)
    assert "SQLite database is damaged (UnicodeDecodeError)" in _refused(result)
