"""Helpers shared by the test modules: where the real profiles live, and the tools that edit them.

Test modules import from here (and pytest fixtures come from conftest.py); no test module imports
another test module (tests/test_layers.py checks it).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import importlib.util
import io
import json
import os
import sqlite3
import sys
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from rooflint.core import schema

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# The full set of real profiles beside the checkout; ROOFLINT_SHARED_FIXTURES=/nonexistent runs the
# suite as a clean clone does (the tests that need it skip, one by one).
SHARED = Path(os.environ.get("ROOFLINT_SHARED_FIXTURES") or ROOT.parent / "shared" / "fixtures")

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
RTX = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
B200_RAW = FIXTURES / "ncu" / "roofline-analysis-b200-ncu2025.x-raw.csv"
LEAN = "lean_reduction_kernel"  # 8 launches, 3.8 % of the B200 trace


def shared(relative: str) -> Path:
    """A file under ../shared/fixtures, skipping the test when the folder is absent."""
    if not SHARED.is_dir():
        pytest.skip("shared/fixtures is not present beside the checkout")
    return SHARED / relative


def with_launches(paths) -> list[Path]:
    """The files among `paths` that load into at least one launch (a roofline.csv loads, but
    holds ceilings, not launches; non-profiles do not load)."""
    from rooflint import parsers
    from rooflint.core.errors import RooflintError

    found = []
    for path in paths:
        try:
            if len(parsers.read(path).launches):
                found.append(path)
        except RooflintError:
            continue
    return found


# --- the real profiles, listed ------------------------------------------------------------------
# Listed, not found by reading the folders while pytest collects: a clean clone collects the same
# tests (those on shared files then skip one by one), and collection parses nothing.
# test_suite_layout.py checks both lists against the folders.

# The files under fixtures/ that load into at least one launch.
BUNDLED_PROFILES = (
    "kineto/h200-block-trace.json.gz",
    "kineto/h200-train-trace.json.gz",
    "kineto/hta-a100-nccl-backward-excerpt.json.gz",
    "kineto/hta-mi250-minitoy.json.gz",
    "kineto/tracelens-h100-bert-small-uncased.json.gz",
    "kineto/tracelens-mi300x-resnet18-train-excerpt.json.gz",
    "kineto/tracelens-torch_compile_triton-trace.json.gz",
    "ncu/a100-gemm-details.csv",
    "ncu/h200-block-raw-stdout.csv",
    "ncu/h200-tensor-ops/bf16_4096.csv",
    "ncu/h200-tensor-ops/bf16_splitk.csv",
    "ncu/h200-tensor-ops/clock-control-base-raw.csv",
    "ncu/h200-tensor-ops/details-default-stdout.csv",
    "ncu/h200-tensor-ops/details-full-stdout.csv",
    "ncu/h200-tensor-ops/fp16_1000.csv",
    "ncu/h200-tensor-ops/fp16_4096.csv",
    "ncu/h200-tensor-ops/fp64_2048.csv",
    "ncu/h200-tensor-ops/fp8_4096.csv",
    "ncu/h200-tensor-ops/gemm-bf16.ncu-rep",
    "ncu/h200-tensor-ops/imported-raw.csv",
    "ncu/h200-tensor-ops/int8_4096.csv",
    "ncu/h200-tensor-ops/printed-raw.csv",
    "ncu/h200-tensor-ops/tf32_4096.csv",
    "ncu/h200-train-raw-stdout.csv.gz",
    "ncu/nvprof-k20c-metrics.csv",
    "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",
    "ncu/rtx2080ti-sgemm-raw-base.csv",
    "ncu/rtx3070-nvtx-details-all_daxpy.csv",
    "ncu/rtx3070-nvtx-details-locale-de_DE_head.csv",
    "ncu/rtx3070-nvtx-raw.csv",
    "nsys/nsysai-2xh100-excerpt.sqlite",
    "rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv",
    "rocprof/omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv",
    "rocprof/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
    "rocprof/rocprofcompute31_mi350_rocprofv3_pmc_perf.csv",
    "rocprof/v1_mi200_rocm513_multipass_results_fp64_benchmark.csv",
    "rocprof/v1_mi250_rocm571_counters_basenames_no_timestamps_head.csv",
    "rocprof/v1_mi250_rocm571_results_head.db",
    "rocprof/v1_mi250_rocm571_stats_mode_results_head.csv",
    "rocprof/v3_docs_2024_counter_collection.csv",
    "rocprof/v3_docs_2025_counter_collection.csv",
    "rocprof/v3_docs_2025_kernel_trace.csv",
    "rocprof/v3_rocm621_mi300a_kernel_trace_head.csv",
    "rocprof/v3_rocm711_mi300a_rocpd2csv_kernel_trace_head.csv",
    "rocprof/v3_rocm7x_mi300a_counter_collection_head.csv",
)

# The files under ../shared/fixtures (ncu/, rocprof/, kineto/, nsys/) that load into at least one
# launch.
SHARED_PROFILES = (
    "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
    "ncu/actualparam-a100-ncu2021.2-sam-decoder.csv",
    "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv",
    "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv",
    "ncu/default-set-b200/flashinfer_paged_decode__gqa_bf16_b1_ctx128k_p64.ncu.csv",
    "ncu/default-set-b200/torch_sdpa_cudnn__mha_bf16_b16_ctx4k_p64.ncu.csv",
    "ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv",
    "ncu/nsight-compute-files-rtx2080ti-sgemm.ncu-rep",
    "ncu/nsight-training-CuVectorAddDrv.ncu-rep",
    "ncu/nsight-training-CuVectorAddDrv_2.ncu-rep",
    "ncu/nsight-training-manual_nvtx.ncu-rep",
    "ncu/nvprof-k20c-metrics.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-all.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-base.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-kernelbase-mangled.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-locale-de_DE.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-locale-en_US.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-metricname-name.csv",
    "ncu/reexport-ncu2024.2/nvtx-details-selected-metrics.csv",
    "ncu/reexport-ncu2024.2/nvtx-details.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw-auto-locale-en_US.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw-base-locale-en_US.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw-base.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw-instances.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw-selected-metrics.csv",
    "ncu/reexport-ncu2024.2/nvtx-raw.csv",
    "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details-all-names-base.csv",
    "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details-all.csv",
    "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details.csv",
    "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-raw-base.csv",
    "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-raw.csv",
    "ncu/reexport-ncu2024.2/vecadd-details.csv",
    "ncu/reexport-ncu2024.2/vecadd-raw.csv",
    "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",
    "ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv",
    "ncu/xplacer-v100-lassen-ncu2019.x-details-stdout.csv",
    "rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv",
    "rocprof/omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv",
    "rocprof/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
    "rocprof/rocprofcompute31_mi350_rocprofv3_pmc_perf.csv",
    "rocprof/rocprofcompute32_mi300x_rocm700_rocpd_pmc_perf_long.csv",
    "rocprof/v1_mi100_rocm42_single_pass_results.csv",
    "rocprof/v1_mi200_rocm513_multipass_results.csv",
    "rocprof/v1_mi250_rocm571_counters_basenames_no_timestamps.csv",
    "rocprof/v1_mi250_rocm571_results.db",
    "rocprof/v1_mi250_rocm571_stats_mode_results.csv",
    "rocprof/v3_docs_2024_counter_collection.csv",
    "rocprof/v3_docs_2025_counter_collection.csv",
    "rocprof/v3_docs_2025_kernel_trace.csv",
    "rocprof/v3_mi350x_rocm_json_results.json.gz",
    "rocprof/v3_rocm621_mi300a_kernel_trace_head.csv",
    "rocprof/v3_rocm711_mi300a_rocpd2csv_kernel_trace_head.csv",
    "rocprof/v3_rocm7x_mi300a_counter_collection_head.csv",
    "kineto/hta-2rank-sampled-rank-0.json.gz",
    "kineto/hta-2rank-sampled-rank-1.json.gz",
    "kineto/hta-a100-alexnet.json.gz",
    "kineto/hta-a100-cupti-counters.json.gz",
    "kineto/hta-a100-nccl-rank0.json.gz",
    "kineto/hta-a100-triton-example.json.gz",
    "kineto/hta-mi250-minitoy.json.gz",
    "kineto/tracelens-b200-eager_trace.json.gz",
    "kineto/tracelens-h100-bert-small-uncased.json.gz",
    "kineto/tracelens-torch_compile_triton-trace.json.gz",
    "kineto/tracelens-h100-nsfw_image_detection.json.gz",
    "kineto/tracelens-h100-timesformer.json.gz",
    "kineto/tracelens-mi300-bert-small-uncased.json.gz",
    "kineto/tracelens-mi300x-xdit-sd35-triton.json.gz",
    "kineto/tracelens-vllm-decode-graph-capture.json.gz",
    "kineto/tracelens-vllm-decode-graph-replay.json.gz",
    "nsys/dlprof-rtx2070s-nvtx-shapes.sqlite",
    "nsys/fuser-h200-matmul.sqlite",
    "nsys/nsysai-2xh100-1s.sqlite",
)


def profile_params(
    folders=("ncu", "rocprof", "kineto", "nsys"), bundled=True, shared_too=True
) -> list:
    """pytest params over the listed profiles in `folders`: "fixtures/…" (bundled) and
    "shared/…" paths (marked e2e), each turned into a file by real_path (a shared one skips
    when absent)."""
    picked = [
        pytest.param(f"fixtures/{p}", id=f"fixtures/{p}") for p in BUNDLED_PROFILES if bundled
    ]
    picked += [
        pytest.param(f"shared/{p}", id=f"shared/{p}", marks=pytest.mark.e2e)
        for p in SHARED_PROFILES
        if shared_too
    ]
    return [p for p in picked if p.values[0].split("/")[1] in folders]


def real_path(param: str) -> Path:
    """The file a profile_params value names."""
    kind, relative = param.split("/", 1)
    return shared(relative) if kind == "shared" else FIXTURES / relative


@functools.cache  # imported once
def benchmark_generator():
    """benchmarks/generate.py, the generator of synthetic ncu exports, imported as a module."""
    spec = importlib.util.spec_from_file_location(
        "rooflint_bench_generate", ROOT / "benchmarks" / "generate.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


# --- refusals through the CLI: one line, exit 2, nothing written -----------------------------


def report(tmp_path: Path, *inputs, extra=(), env=None):
    """`rooflint report INPUTS -q -o out.json`; returns (result, out path)."""
    from rooflint.cli import main  # the CLI only for the tests that run it

    out = tmp_path / "out.json"
    args = ["report", *map(str, inputs), "-q", "-o", str(out), *extra]
    result = CliRunner().invoke(main, args, env=env)
    return result, out


def diffed(tmp_path: Path, base, head, extra=()):
    """`rooflint diff BASE HEAD -o out.json`; returns (result, out path)."""
    from rooflint.cli import main

    out = tmp_path / "out.json"
    args = ["diff", str(base), str(head), "-o", str(out), *extra]
    return CliRunner().invoke(main, args), out


def assert_refused(result, out: Path, path, *expected: str) -> str:
    """Exit 2, exactly one `rooflint: error: <path>: ...` line with the expected words, no
    traceback, and neither the report nor a temporary file left in the output folder."""
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception  # not an escaped bug
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith(f"rooflint: error: {path}"), line
    assert "Traceback" not in result.stderr + result.stdout
    problem_and_fix = line.removeprefix(f"rooflint: error: {path}")
    assert ";" in problem_and_fix or " or " in problem_and_fix, f"no fix offered: {line}"
    for word in expected:
        assert word.lower() in line.lower(), f"{word!r} not in {line!r}"
    assert not out.exists()
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".out.json")] == []
    return line


def loaded(result, out: Path) -> dict:
    """Exit 0, nothing on stderr, and the JSON report that was written."""
    assert result.exit_code == 0, (result.exit_code, result.stderr, result.exception)
    assert result.exception is None, result.exception
    assert result.stderr == ""
    doc = json.loads(out.read_text(encoding="utf-8"))
    acc = doc["accounting"]
    outside = acc.get("outside_window", {}).get("launches", 0)  # a trace's, beyond its steps
    assert acc["launches_read"] == acc["analysed"] + acc["not_analysable"] + outside
    assert sum(acc["not_analysable_reasons"].values()) == acc["not_analysable"]
    return doc


def make_rocpd(path: Path) -> Path:
    """The three rocpd views the reader queries, as plain tables with the views' column names."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE rocpd_info_agent (id INTEGER, type TEXT, absolute_index INTEGER,
            logical_index INTEGER, name TEXT, product_name TEXT, extdata TEXT);
        INSERT INTO rocpd_info_agent VALUES (1, 'CPU', 0, 0, 'EPYC', 'EPYC', '{}');
        INSERT INTO rocpd_info_agent VALUES (2, 'GPU', 2, 1, 'gfx942', 'AMD Instinct MI300X',
            '{"cu_count": 304, "wave_front_size": 64}');
        CREATE TABLE kernels (dispatch_id INTEGER, pid INTEGER, agent_abs_index INTEGER,
            name TEXT, start INTEGER, "end" INTEGER, grid_x INTEGER, grid_y INTEGER,
            grid_z INTEGER, workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER);
        INSERT INTO kernels VALUES (1, 99, 2, 'vecCopy(double*, double*, double*, int, int)',
            1000000000000000, 1000000000008292, 1048576, 1, 1, 256, 1, 1);
        INSERT INTO kernels VALUES (2, 99, 2, 'gemm', 1000000000100000, 1000000000150000,
            4096, 4096, 1, 16, 16, 1);
        CREATE TABLE counters_collection (dispatch_id INTEGER, pid INTEGER, counter_name TEXT,
            value REAL);
        INSERT INTO counters_collection VALUES (1, 99, 'TCC_BUBBLE_sum', 65536);
        INSERT INTO counters_collection VALUES (1, 99, 'TCC_EA0_RDREQ_sum', 65757);
        INSERT INTO counters_collection VALUES (1, 99, 'TCC_EA0_RDREQ_32B_sum', 0);
        INSERT INTO counters_collection VALUES (1, 99, 'TCC_EA0_WRREQ_sum', 131072);
        INSERT INTO counters_collection VALUES (1, 99, 'TCC_EA0_WRREQ_64B_sum', 131072);
        INSERT INTO counters_collection VALUES (2, 99, 'SQ_INSTS_VALU_MFMA_MOPS_BF16', 1000);
    """)
    con.commit()
    con.close()
    return path


# --- building inputs from real exports ---------------------------------------------------------


def raw_rows(path: Path) -> tuple[str, list[list[str]]]:
    """The text before the CSV (==PROF== lines) and the CSV rows of a raw-page export."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return "".join(lines[:start]), list(csv.reader(lines[start:]))


def write_raw(path: Path, prelude: str, rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path.write_text(prelude + buf.getvalue(), encoding="utf-8")
    return path


def scaled_raw(src: Path, dest: Path, kernel_part: str, factor: float) -> Path:
    """A copy of a raw export with one kernel's gpu__time_duration.sum multiplied by `factor`."""
    prelude, rows = raw_rows(src)
    header = rows[0]
    t, k = header.index("gpu__time_duration.sum"), header.index("Kernel Name")
    assert rows[1][t] == "ns"  # the units row: the scaled values stay in nanoseconds
    for row in rows[2:]:
        if kernel_part in row[k]:
            row[t] = repr(float(row[t]) * factor)
    return write_raw(dest, prelude, rows)


def raw_durations(src: Path, kernel_part: str) -> list[float]:
    """Per-launch durations in seconds, read straight from the CSV (independently of rooflint)."""
    _, rows = raw_rows(src)
    header = rows[0]
    t, k = header.index("gpu__time_duration.sum"), header.index("Kernel Name")
    return [float(r[t]) * 1e-9 for r in rows[2:] if kernel_part in r[k]]


# --- a reader against the per-cell reference reader (tests/ncu_reference.py) ------------------


def reading(module, path, locale=None):
    """What `module.read` makes of `path`: the profile with its sources blanked, or the error
    text with the file's name blanked."""
    from rooflint.core.errors import RooflintError

    try:
        profile = module.read(path, locale=locale)
    except RooflintError as exc:
        return str(exc).replace(str(path), "FILE")
    profile.launches["source"] = "FILE"
    return profile


def assert_same(got, expected) -> None:
    """Two `reading` outcomes are the same: the same error, or the same launches, notes and
    repairs."""
    if isinstance(expected, str):
        assert got == expected
        return
    assert not isinstance(got, str), got
    assert (got.format, got.notes, got.repairs) == (
        expected.format,
        expected.notes,
        expected.repairs,
    )
    pd.testing.assert_frame_equal(got.launches, expected.launches, check_exact=True)


def assert_same_reading(reader, reference, path, reference_path, locale=None):
    """The reader reads `path` as the reference reader reads `reference_path`. The reference
    parses pages only: ncu's speed-of-light columns, derived by parsers/ncu_sol.py where an
    export lacks counters (tests/test_speed_of_light.py checks them on real files), are left
    out of the comparison."""
    got, expected = reading(reader, path, locale), reading(reference, reference_path, locale)
    assert_same(_without_sol(got), _without_sol(expected))


def _without_sol(read):
    """The reading without what the reference reader (tests/ncu_reference.py) leaves out: ncu's
    percentages, the launch facts the advice reads and a CUTLASS GEMM's minimum bytes (each
    tested on its own: test_speed_of_light, test_advice, test_ncu_display_names)."""
    if isinstance(read, str):
        return read
    extra = schema.SOL_COLUMNS + schema.LAUNCH_FACT_COLUMNS + schema.MODEL_COLUMNS
    dropped = [c for c in extra if c in read.launches]
    notes = [n for n in read.notes if not n.startswith(GEMM_NOTE_START)]
    return dataclasses.replace(read, launches=read.launches.drop(columns=dropped), notes=notes)


GEMM_NOTE_START = "minimum DRAM bytes of "  # parsers/ncu_launch.GEMM_NOTE


def distinct_piece_sizes(path: Path, sizes) -> list[int]:
    """The smallest of `sizes` for each different way the ncu reader cuts `path` into pieces
    (a plain file is mapped and cut at line ends: parsers/ncu_lines._mapped); other sizes cut
    it the same way as one of these, so reading in them tells nothing more."""
    import mmap

    from rooflint.parsers import ncu_lines

    first: dict[tuple, int] = {}
    whole_size = ncu_lines.PIECE_BYTES
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as whole:
        try:
            for size in sizes:
                ncu_lines.PIECE_BYTES = size
                pieces = list(ncu_lines._mapped(whole))
                first.setdefault(tuple(len(p) for p in pieces), size)
                for p in pieces:
                    p.release()
        finally:
            ncu_lines.PIECE_BYTES = whole_size
    return sorted(first.values())


def assert_reads_alike_in_pieces(path: Path, sizes) -> None:
    """The ncu CSV reader, reading `path` in pieces of each of `sizes` bytes, gives what the
    per-cell reference reader gives (read once: it does not read in pieces)."""
    from rooflint.parsers import ncu_csv, ncu_lines
    from tests import ncu_reference

    expected = reading(ncu_reference, path)
    whole = ncu_lines.PIECE_BYTES
    try:
        for size in sizes:
            ncu_lines.PIECE_BYTES = size
            assert_same(reading(ncu_csv, path), expected)
    finally:
        ncu_lines.PIECE_BYTES = whole


# Cells that have broken parsers elsewhere: signs, special floats, separators, quotes, huge
# numbers, locale-like grouping, units, control characters, non-ASCII.
NASTY_CELLS = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "n/a",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "-1",
            "-0",
            "0",
            "1e400",
            "-1e400",
            "1,234,567.89",
            "1.234.567,89",
            "84,480",
            "12 (3; 4; 5)",
            "abc",
            '"',
            '""',
            ",",
            ";",
            "\t",
            "\x00",
            "\u00e9",
            "\ufeff",
            "=1+1",
            "0x10",
            "1_000",
            "9" * 400,
            "(",
            ")",
        ]
    ),
    st.text(max_size=12),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)


# --- hand-built launches on a catalog device ---------------------------------------------------

DEVICE = "a100-sxm4-80gb"


def synthetic(launches: list[dict], source: str = "synthetic.csv"):
    """A diff.Side analysed on the A100 SXM4 80GB catalog ceilings (no clock, so no scaling)."""
    from rooflint import pipeline
    from rooflint.core import diff, schema
    from rooflint.core.profile import Profile

    rows = [
        {
            "source": source,
            "launch_id": i,
            "grid": "(1, 1, 1)",
            "block": "(256, 1, 1)",
            "ops_vector_fp32": 0.0,
            **launch,
        }
        for i, launch in enumerate(launches)
    ]
    profile = Profile(source, "synthetic", schema.conform(pd.DataFrame(rows)))
    return diff.Side(source, pipeline.assemble([profile], [], pipeline.Options(device_id=DEVICE)))


def dram_bytes(seconds: float) -> float:
    """Bytes that take `seconds` at the device's DRAM bandwidth."""
    from rooflint import hardware

    return hardware.get(DEVICE).memory["dram"].value * seconds


def timed(kernel: str, durations: list[float], roof: float = 1e-3, **extra) -> list[dict]:
    """Launches of `kernel` whose DRAM traffic alone takes `roof` seconds."""
    return [
        {"kernel": kernel, "duration_s": t, "bytes_dram": dram_bytes(roof), **extra}
        for t in durations
    ]


def tiny_roofs(folder: Path) -> Path:
    """An A100 PCIe 40GB with roofs far under what the A100 export reached (10 TFLOP/s FP16
    tensor, 100 GB/s DRAM): every launch of that export sits above them."""
    path = folder / "tiny.toml"
    path.write_text(
        'base = "a100-pcie-40gb"\nid = "tiny-a100"\nsource = "test"\n'
        "[compute_tflops]\nmatrix_fp16 = 10\n"
        "[bandwidth_gbps]\ndram = 100\n",
        encoding="utf-8",
    )
    return path


# --- Markdown as a reader sees it ----------------------------------------------------------------


class Tables(HTMLParser):
    """Every <table> in rendered HTML as rows of cell text."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def rendered(markdown: str) -> tuple[str, list[list[list[str]]]]:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    parser = Tables()
    parser.feed(html)
    return html, parser.tables


def as_dicts(table: list[list[str]]) -> list[dict]:
    return [dict(zip(table[0], row, strict=True)) for row in table[1:]]


# --- golden files ------------------------------------------------------------------------------

GOLDEN = ROOT / "tests" / "golden"
ACTUAL = ROOT / "tests" / "actual"  # git-ignored: the output of each golden test that failed
UPDATE = os.environ.get("ROOFLINT_UPDATE_GOLDEN") == "1"
REFRESH = (
    "ROOFLINT_UPDATE_GOLDEN=1 pytest tests/test_reporters.py tests/test_golden_html_diff.py "
    "tests/test_diff.py"
)


def report_formats() -> dict[str, str]:
    """The text formats of `rooflint report` in the registry, each with the file extension its
    golden files take (its first -o extension): a new format gets goldens without a test edit."""
    from rooflint import reporters

    return {
        name: f.extensions[0]
        for name, f in reporters.formats(reporters.REPORT).items()
        if not f.binary and f.extensions
    }


def diff_formats() -> list[str]:
    """The formats of `rooflint diff` in the registry (all text)."""
    from rooflint import reporters

    return list(reporters.formats(reporters.DIFF))


def check_golden(name: str, text: str) -> None:
    """`text` is tests/golden/NAME byte for byte; else it goes to tests/actual/NAME for review
    (as coverage.py's goldtest does) and the test fails saying where it is."""
    golden, actual = GOLDEN / name, ACTUAL / name
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8", newline="")
    if golden.is_file() and golden.read_bytes() == text.encode("utf-8"):
        actual.unlink(missing_ok=True)
        return
    actual.parent.mkdir(parents=True, exist_ok=True)
    actual.write_text(text, encoding="utf-8", newline="")
    problem = "differs from the output" if golden.is_file() else "is missing"
    pytest.fail(
        f"{golden.relative_to(ROOT)} {problem}; the output is in {actual.relative_to(ROOT)} "
        f"(compare them); if the change is intended, refresh with {REFRESH} and read the diff",
        pytrace=False,
    )


def plain_union(intervals: list[tuple[float, float]]) -> float:
    """The union's length, merged one interval at a time (µs)."""
    total, current = 0.0, None
    for start, end in sorted(intervals):
        if current and start <= current[1]:
            current[1] = max(current[1], end)
        else:
            total += current[1] - current[0] if current else 0.0
            current = [start, end]
    return total + (current[1] - current[0] if current else 0.0)


# --- a synthetic ncu export to join with a timeline -----------------------------------------


def ncu_details(rows: list[tuple[str, str, str, dict]], cc: str = "9.0") -> str:
    """A details-page ncu CSV: (kernel, block, grid, {metric: (unit, value)}) per launch, from a
    GPU of compute capability `cc`."""
    head = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"'
    )
    lines = [head]
    for i, (kernel, block, grid, metrics) in enumerate(rows):
        for metric, (unit, value) in metrics.items():
            lines.append(
                ",".join(
                    json.dumps(x)
                    for x in (
                        str(i),
                        "1",
                        "python",
                        "h",
                        kernel,
                        "1",
                        "7",
                        block,
                        grid,
                        "0",
                        cc,
                        "Command line profiler metrics",
                        metric,
                        unit,
                        value,
                    )
                )
            )
    return "\n".join(lines) + "\n"


REPLAY = "kineto/tracelens-vllm-decode-graph-replay.json.gz"  # TraceLens's vLLM decode step
CAPTURE = "kineto/tracelens-vllm-decode-graph-capture.json.gz"  # the capture of its graphs


def replay_folder(tmp_path: Path, layout: str) -> Path:
    """A folder of TraceLens's vLLM graph replay trace (shared fixtures) laid out as users keep
    them: "given" (the replay and its capture side by side), "beside" (two ranks' replays, the
    capture in capture_traces/, vLLM's layout), "alone" (the replay beside another job's trace,
    no capture anywhere)."""
    import shutil

    folder = tmp_path / layout
    folder.mkdir()
    ranks = 2 if layout == "beside" else 1
    for rank in range(ranks):
        shutil.copy(shared(REPLAY), folder / f"replay_rank_{rank}.json.gz")
    if layout == "given":
        shutil.copy(shared(CAPTURE), folder / "graph_capture_rank_0.json.gz")
    elif layout == "beside":
        (folder / "capture_traces").mkdir()
        shutil.copy(shared(CAPTURE), folder / "capture_traces" / "graph_capture_rank_0.json.gz")
    else:
        shutil.copy(FIXTURES / "kineto" / "h200-train-trace.json.gz", folder)
    return folder
