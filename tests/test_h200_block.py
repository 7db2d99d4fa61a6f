"""A PyTorch trace and an ncu export of the same two iterations, made on an H200.

benchmarks/h200_trace/capture.py ran a bf16 transformer block (batch 8, sequence 1024, width
2048, 16 heads of 128, MLP 4x, causal attention through cuDNN) twice under torch.profiler
(fixtures/kineto/h200-block-trace.json.gz) and twice under ncu with the metrics
`rooflint metrics ncu --arch hopper` prints (fixtures/ncu/h200-block-raw-stdout.csv). The
expected counts are worked out from those shapes, not read from the files.
"""

from __future__ import annotations

import pytest

import rooflint
from rooflint.core import names

from .conftest import FIXTURES

TRACE = FIXTURES / "kineto" / "h200-block-trace.json.gz"
EXPORT = FIXTURES / "ncu" / "h200-block-raw-stdout.csv"
ROWS = 8 * 1024  # batch x sequence: the M of every linear layer
# (K, N) of qkv, out, fc1, fc2; 2*M*K*N each, four per iteration, two iterations
GEMM_OPS = 2 * sum(
    2 * ROWS * k * n for k, n in [(2048, 6144), (2048, 2048), (2048, 8192), (8192, 2048)]
)
# causal attention 4*B*H*S*S*D/2 per call, two calls
ATTENTION_OPS = 2 * 4 * 8 * 16 * 1024 * 1024 * 128 // 2


def _sum(launches, prefix, column="ops_matrix_bf16"):
    return launches.loc[launches["kernel"].str.startswith(prefix), column].sum()


def test_operator_models_match_the_shapes():
    launches = rooflint.load(TRACE)
    assert _sum(launches, "nvjet") == GEMM_OPS
    assert _sum(launches, "cudnn") == ATTENTION_OPS  # aten::_cudnn_attention_forward, causal


def test_counters_of_the_export():
    launches = rooflint.load(EXPORT)
    assert _sum(launches, "nvjet") == GEMM_OPS  # tile-aligned shapes: no padding
    # the causal kernel computes whole 128-wide tiles on the diagonal: with 64-row query tiles,
    # 72 of the 16 x 8 (query, key) tile pairs run, 72/128 = 36/64 of the full product
    assert _sum(launches, "cudnn") == ATTENTION_OPS * 2 * 36 // 64


def test_every_export_launch_finds_its_trace_kernel():
    """ncu and CUPTI spell one kernel differently (`at::<unnamed>::` / `at::native::(anonymous
    namespace)::`, `0` / `false`, `3` / `3ul`): the join must still pair all 20."""
    result = rooflint.report(TRACE, EXPORT)
    launches = result.launches
    assert len(launches) == 30  # 20 kernels + 10 memsets, from the trace
    assert (launches["flops_source"] == "counters").sum() == 20
    assert result.accounting["repairs"] == []
    assert launches["verdict"].ne("not-analysable").all()
    assert _sum(launches, "nvjet") == GEMM_OPS


@pytest.mark.parametrize(
    "full, expected",
    [
        (
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16,"
            " float, false>(int, float, c10::BFloat16 const*)",
            "vectorized_layer_norm_kernel",
        ),
        (
            "void at::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, 0>(int, T2)",
            "vectorized_layer_norm_kernel",
        ),
        (
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        ),
    ],
)
def test_function_name_is_shared_by_both_spellings(full, expected):
    assert names.function_name(full) == expected


def test_anonymous_namespace_is_not_taken_for_the_parameter_list():
    full = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>(int)"
    assert names.short_name(full) == "vectorized_layer_norm_kernel<float>"
