"""torch.compile Triton kernels (parsers/kineto_triton.py): bytes and estimated FLOPs worked out by
hand from each kernel operator's arguments in the trace, and checked against TraceLens's own table.

The arguments are quoted from the traces (read with gzip + json in the test where it matters)."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pytest

import rooflint
from rooflint import parsers
from rooflint.core import verdicts
from rooflint.parsers import kineto_triton
from tests.helpers import FIXTURES, shared

WANT = (
    "triton_poi_fused_addmm_gelu_view_15",
    "triton_per_fused__to_copy_add_addmm_mean_mul_pow_rsqrt_transpose_view_8",
)
COMPILED = FIXTURES / "kineto" / "tracelens-torch_compile_triton-trace.json.gz"


def _by_kernel(launches, name):
    rows = launches[launches["kernel"] == name]
    assert len(rows) > 0, name
    return rows


@pytest.fixture(scope="module")
def compiled():
    return parsers.read(COMPILED).launches


def test_reduction_bytes_and_flops_by_hand(compiled):
    """triton_red_fused_add_mean_mul_pow_rsqrt_0 (an RMSNorm): Input Dims [[8,4096,2048], [2048],
    [8,4096,2048], [], []], all BF16, Concrete Inputs xnumel 32768, r0_numel 2048
    (kernel_kwargs XBLOCK=2,R0_BLOCK=2048): N = 32768 x 2048 = 67,108,864 = each big buffer's
    elements; bytes = (N + 2048 + N) x 2 = 268,439,552; FLOPs = N x (add, mean, mul, pow, rsqrt:
    1 each) = 335,544,320, estimated, against the FP32 vector roof."""
    (row,) = _by_kernel(compiled, "triton_red_fused_add_mean_mul_pow_rsqrt_0").itertuples()
    assert row.bytes_dram == (2 * 67_108_864 + 2048) * 2 == 268_439_552
    assert row.ops_vector_fp32 == 5 * 67_108_864
    assert row.flops_source == row.bytes_source == "estimate"
    assert kineto_triton.ESTIMATE_NOTE in row.notes


def test_pointwise_bytes_by_hand(compiled):
    """triton_poi_fused__unsafe_view_add_3: [8,4096,2048] x2 and [32768,2048], BF16, xnumel
    67,108,864: three full buffers, 3 x N x 2 bytes; FLOPs N (one add). triton_poi_fused__unsafe_
    view_mul_silu_2: [8,4096,8192] and [32768,8192], xnumel 268,435,456: 2 x N x 2 bytes (a lower
    bound: which of the two is updated in place is not recorded), FLOPs 2N (mul, silu)."""
    (add,) = _by_kernel(compiled, "triton_poi_fused__unsafe_view_add_3").itertuples()
    assert add.bytes_dram == 3 * 67_108_864 * 2 and add.ops_vector_fp32 == 67_108_864
    (silu,) = _by_kernel(compiled, "triton_poi_fused__unsafe_view_mul_silu_2").itertuples()
    assert silu.bytes_dram == 2 * 268_435_456 * 2 and silu.ops_vector_fp32 == 2 * 268_435_456


def test_the_trace_says_how_many_were_modelled():
    notes = parsers.read(COMPILED).notes
    assert (
        "4 torch.compile Triton kernels: 4 with bytes and FLOPs estimated from their operators' "
        "Input Dims" in " ".join(notes)
    )


@pytest.mark.parametrize(
    ("body", "found", "unknown"),
    [
        ("_to_copy_add_addmm_mean_mul_pow_rsqrt_transpose_view",
         ["_to_copy", "add", "addmm", "mean", "mul", "pow", "rsqrt", "transpose", "view"], None),
        ("_unsafe_view_add_clone_convolution_native_layer_norm_slice",
         ["_unsafe_view", "add", "clone", "convolution", "native_layer_norm", "slice"], None),
        ("_add_cumsum_mul", ["add"], "cumsum"),
        ("", [], None),
    ],
)  # fmt: skip
def test_fused_names_split_into_operations(body, found, unknown):
    assert kineto_triton.words(body) == (found, unknown)


def test_an_unknown_fused_operation_keeps_bytes_and_says_why():
    """triton_per_fused_cumsum_0([64, 512] float, xnumel 64, r0_numel 512): N = 32768; bytes
    = two buffers of N floats; no FLOP count for cumsum, so no FLOPs, and the reason names it."""
    work, why = kineto_triton.model(
        "triton_per_fused_cumsum_0",
        [[64, 512], [64, 512], [], []],
        ["float", "float", "Scalar", "Scalar"],
        ["", "", "64", "512"],
        "XBLOCK=8",
    )
    assert work.bytes_min == 2 * 32768 * 4 and np.isnan(work.flops)
    assert why == "fused operation 'cumsum' has no FLOP count (bytes estimated)"


def test_a_gemm_template_is_a_gemm():
    """triton_tem_fused_mm_0(A [128, 256], B [256, 64], out [128, 64], BF16): 2·M·N·K on the
    matrix unit, an exact model (not an estimate)."""
    work, why = kineto_triton.model(
        "triton_tem_fused_mm_0",
        [[128, 256], [256, 64], [128, 64]],
        ["c10::BFloat16"] * 3,
        ["", "", ""],
        None,
    )
    assert (work.flops, work.unit, work.precision) == (2 * 128 * 64 * 256, "matrix", "bf16")
    assert why == ""


def test_older_pytorch_without_kernel_kwargs():
    """HTA's triton_poi_fused_add_cos_sin_0: Input Dims [[10,10]] x3 float, Concrete Inputs
    ['', '', '', '100'], no kernel_kwargs: xnumel = 100; bytes = 3 x 100 x 4 = 1200; FLOPs 3 x 100
    (add, cos, sin)."""
    launches = parsers.read(shared("kineto/hta-a100-triton-example.json.gz")).launches
    (row,) = _by_kernel(launches, "triton_poi_fused_add_cos_sin_0").itertuples()
    assert (row.bytes_dram, row.ops_vector_fp32) == (1200, 300)


@pytest.mark.e2e
def test_xdit_bytes_agree_with_tracelens():
    """TraceLens's unified_perf_summary.csv models the same kernels. Data Moved (MB, 2^20 bytes):
    triton_poi_fused_addmm_gelu_view_15 ((2,4096,9728) BF16 updated in place, bias (9728,)):
    2 x 79,691,776 x 2 + 9728 x 2 = 318,786,560 B = 304.018555 MB, TraceLens's figure; the
    per kernel _8 (RMSNorm): 79,696,768 B = 76.004761 MB, TraceLens's. FLOPs differ: TraceLens
    counts 8 per element for gelu_view_15 (637.5 M), rooflint 2 (the bias add, the gelu, 1 each,
    as core.opmodels counts elementwise operators), an estimate either way."""
    path = shared("kineto/tracelens-mi300x-xdit-sd35-triton.json.gz")
    table = shared("kineto/tracelens-known-answers/mi300x-xdit-sd35-unified_perf_summary.csv")
    with open(table, encoding="utf-8") as fh:
        mb = {r["name"]: r["Data Moved (MB)"] for r in csv.DictReader(fh) if r["name"] in WANT}
    launches = parsers.read(path).launches
    for name, expected in zip(WANT, (318_786_560, 79_696_768), strict=True):
        got = _by_kernel(launches, name)["bytes_dram"]
        assert set(got) == {expected}
        assert expected / 2**20 == pytest.approx(float(mb[name]), abs=1e-5)
    gelu = _by_kernel(launches, "triton_poi_fused_addmm_gelu_view_15")
    assert set(gelu["ops_vector_fp32"]) == {2 * 79_691_776}


@pytest.mark.e2e
@pytest.mark.parametrize(
    "name", ["tracelens-mi300x-xdit-sd35-triton", "tracelens-torch_compile_triton-trace"]
)
def test_triton_time_has_a_verdict(name):
    """Done means >= 90 % of the Triton kernels' time with a verdict or a stated reason: all of
    it has a verdict on both traces (2,076 and 4 kernels)."""
    path = shared(f"kineto/{name}.json.gz")
    with gzip.open(path) as fh:
        count = sum(
            1
            for e in json.load(fh)["traceEvents"]
            if e.get("cat") == "kernel" and e["name"].startswith("triton_")
        )
    launches = rooflint.report(str(path)).launches
    launches = launches[launches["kernel"].astype(str).str.startswith("triton_")]
    judged = launches["verdict"] != verdicts.NOT_ANALYSABLE
    assert len(launches) <= count  # those outside the window are reported apart
    share = launches.loc[judged, "duration_s"].sum() / launches["duration_s"].sum()
    assert share >= 0.9


def test_a_triton_kernel_without_its_operator_says_why(tmp_path):
    """Older PyTorch: the Triton kernel runs under CompiledFunction with no operator of its own,
    so its buffers are unknown; the launch says so."""
    doc = {
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9,
                              "computeMinor": 0, "numSms": 132, "totalGlobalMem": 85018279936}],
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "CompiledFunction", "pid": 1, "tid": 1, "ts": 0,
             "dur": 50, "args": {"External id": 7}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cuLaunchKernel", "pid": 1, "tid": 1,
             "ts": 10, "dur": 5, "args": {"correlation": 3, "External id": 7}},
            {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7,
             "ts": 100, "dur": 4, "args": {"correlation": 3, "External id": 7, "device": 0,
                                           "stream": 7, "grid": [1, 1, 1], "block": [128, 1, 1]}},
        ],
    }  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    (row,) = parsers.read(path).launches.itertuples()
    assert np.isnan(row.bytes_dram) and kineto_triton.NAME_ONLY in row.missing


@pytest.mark.e2e
def test_xdit_totals_against_tracelens():
    """Summed over the 2,076 Triton launches: rooflint 151.87 GB, TraceLens 166.11 GB (Data
    Moved x operation_count, its unified_perf_summary.csv): -8.6 %. Kernel by kernel the two
    agree within 1 % on 12 of the 26 kernels, 82 % of TraceLens's bytes (the GEMM epilogues, the
    norms, the attention layout copy); they differ on copies of a slice
    (triton_poi_fused__unsafe_view_clone_slice_transpose_13 copies 1.6 M elements out of a
    21.5 M-element buffer: rooflint counts the 1.6 M read and written, at most the iteration
    space, TraceLens the whole buffer), which rooflint holds right: a kernel touches at most
    its iteration space of any buffer."""
    path = shared("kineto/tracelens-mi300x-xdit-sd35-triton.json.gz")
    table = shared("kineto/tracelens-known-answers/mi300x-xdit-sd35-unified_perf_summary.csv")
    theirs: dict[str, float] = {}
    with open(table, encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["name"].startswith("triton_"):
                moved = float(r["Data Moved (MB)"]) * 2**20 * int(r["operation_count"])
                theirs[r["name"]] = theirs.get(r["name"], 0.0) + moved
    launches = parsers.read(path).launches
    triton = launches[launches["kernel"].astype(str).str.startswith("triton_")]
    ours = triton.groupby(triton["kernel"].astype(str))["bytes_dram"].sum()
    assert ours.sum() / sum(theirs.values()) == pytest.approx(0.914, abs=0.001)
    agree = [k for k, v in theirs.items() if v and abs(ours[k] / v - 1) <= 0.01]
    assert sum(theirs[k] for k in agree) / sum(theirs.values()) >= 0.8
    slice_copy = "triton_poi_fused__unsafe_view_clone_slice_transpose_13"
    assert ours[slice_copy] == 148 * 2 * (2 * 333 * 2432) * 2  # 148 launches, N = 1,619,712
