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
    assert result.summary.accounting["repairs"] == []
    assert launches["verdict"].ne("not-analysable").all()
    assert _sum(launches, "nvjet") == GEMM_OPS


@pytest.mark.parametrize(
    "trace_name, ncu_name",
    [
        (
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16,"
            " float, false>(int, float, c10::BFloat16 const*)",
            "void at::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, 0>(int, T2)",
        ),
        (
            "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl("
            "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
            "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, std::array<char*, 2ul>)",
            "void at::vectorized_elementwise_kernel<8, at::GeluCUDAKernelImpl("
            "at::TensorIteratorBase &, at::GeluType)::[lambda() (instance 2)]::operator ()() "
            "const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, 2>>(int, T2, T3)",
        ),
        (
            "void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*)",
            "void cudnn::convert_dq_to_16bits<1>(const void *, void *)",
        ),
    ],
)
def test_trace_and_ncu_spellings_share_a_signature(trace_name, ncu_name):
    """Pairs of spellings of one kernel, copied from the two H200 captures."""
    assert names.signature(trace_name) == names.signature(ncu_name) != ""


def test_kernels_that_differ_keep_different_signatures():
    kernel = "void at::native::vectorized_elementwise_kernel<8, at::native::{}<float> >(int)"
    add, mul = kernel.format("CUDAFunctor_add"), kernel.format("MulFunctor")
    assert names.signature(add) != names.signature(mul)


def test_a_training_step_joins_launch_for_launch():
    """20 AdamW training steps of the same block: 1,280 kernels in each capture (30 kernel
    types, many sharing `vectorized_elementwise_kernel` or `multi_tensor_apply_kernel` and a
    grid), 400 memsets and copies in the trace only. Keying on the bare function name paired
    adds with pows and copies and put 17 launches above the roof."""
    result = rooflint.report(
        FIXTURES / "kineto" / "h200-train-trace.json.gz",
        FIXTURES / "ncu" / "h200-train-raw-stdout.csv.gz",
    )
    launches = result.launches
    assert len(launches) == 1680
    assert (launches["flops_source"] == "counters").sum() == 1280
    assert result.summary.accounting["repairs"] == []
    assert not launches["verdict"].eq("above-roof").any()


def test_anonymous_namespace_is_not_taken_for_the_parameter_list():
    full = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>(int)"
    assert names.short_name(full) == "vectorized_layer_norm_kernel<float>"
