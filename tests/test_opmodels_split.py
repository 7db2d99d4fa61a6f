"""Operators split over their kernels: a convolution's backward (data and weight gradients) and
batch norm's two passes, each part on the kernel that does it, against values worked out by hand
from rows of TraceLens's ResNet-18 training trace (fixtures/kineto/, MI300X, MIOpen)."""

from __future__ import annotations

import functools

import pytest

import rooflint
from rooflint.core import opmodels_split
from rooflint.core.opmodels_split import DATA_GRAD, NORMALISE, STATISTICS, WEIGHT_GRAD
from tests.helpers import FIXTURES

RESNET = FIXTURES / "kineto" / "tracelens-mi300x-resnet18-train-excerpt.json.gz"
# layer4's first 3x3 convolution, stride 2 (the trace's External id 1452): Input Dims and
# Concrete Inputs as the trace records them
GRAD_OUT, INPUT, WEIGHT = [10, 512, 7, 7], [10, 256, 14, 14], [512, 256, 3, 3]
STRIDED = (
    [GRAD_OUT, INPUT, WEIGHT, [], [], [], [], [], [], [], []],
    ["c10::BFloat16"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"],
    [
        "",
        "",
        "",
        "[0]",
        "[2, 2]",
        "[1, 1]",
        "[1, 1]",
        "False",
        "[0, 0]",
        "1",
        "[True, True, False]",
    ],
)
# By hand: each gradient is the forward's product, 2·N·K·C·R·S·P·Q = 2·10·512·256·3·3·7·7
# = 1,156,055,040 FLOPs. Data gradient bytes: grad_output 10·512·7·7·2 = 501,760 + weight
# 512·256·3·3·2 = 2,359,296 read, grad_input 10·256·14·14·2 = 1,003,520 written = 3,864,576;
# the weight gradient reads grad_output and the input and writes grad_weight: the same sum.
# TraceLens's CONV_bwd.csv for this shape: GFLOPS 2.31211008 (both gradients) and Data Moved
# 7.37109375 MB (MiB: 7,729,152 bytes = 2 x 3,864,576).
FLOPS_EACH, BYTES_EACH = 1_156_055_040.0, 3_864_576.0


def test_convolution_backward_by_hand():
    parts = opmodels_split.parts("aten::convolution_backward", *STRIDED)
    assert [p.role for p in parts] == [DATA_GRAD, WEIGHT_GRAD]
    for part in parts:
        assert part.work.flops == FLOPS_EACH
        assert part.work.bytes_min == BYTES_EACH
        assert (part.work.unit, part.work.precision) == ("matrix", "bf16")
    both = opmodels_split.total(parts)
    assert both.flops == 2.31211008e9 and both.bytes_min == 7.37109375 * 2**20  # TraceLens's


def test_output_mask_leaves_out_the_gradients_not_asked_for():
    """The stem convolution (x [10,3,224,224], w [64,3,7,7], output_mask [False, True, False]):
    no gradient for the image, so only the weight gradient, 2·10·64·3·7·7·112·112 =
    2,360,279,040 FLOPs; bytes grad_output 16,056,320 + input 3,010,560 + grad_weight 18,816.
    TraceLens's CONV_bwd.csv counts both gradients (4.72055808 GFLOPs) although the trace ran
    only MIOpen's igemm_wrw kernel (and its transposes) for it."""
    dims = [[10, 64, 112, 112], [10, 3, 224, 224], [64, 3, 7, 7]] + [[]] * 8
    concrete = list(STRIDED[2])
    concrete[4:6], concrete[10] = ["[2, 2]", "[3, 3]"], "[False, True, False]"
    (part,) = opmodels_split.parts("aten::convolution_backward", dims, STRIDED[1], concrete)
    assert part.role == WEIGHT_GRAD
    assert part.work.flops == 2_360_279_040.0
    assert part.work.bytes_min == 16_056_320 + 3_010_560 + 18_816


@functools.cache
def _resnet():
    return rooflint.report(str(RESNET), steps="none").launches


def _of(op: str, dims_prefix: str):
    launches = _resnet()
    picked = (launches["op"].astype(object) == op) & launches["op_input_dims"].astype(
        str
    ).str.startswith(dims_prefix)
    return launches[picked]


def test_each_gradient_lands_on_its_kernel():
    """In the trace, the strided convolution's backward launches 12 kernels per step: MIOpen's
    igemm_bwd (data), CK's batched_gemm_xdlops_bwd_weight (weight), and transposes and casts,
    which keep no work of their own."""
    rows = _of("aten::convolution_backward", "[[10,512,7,7],[10,256,14,14],[512,256,3,3]")
    kernels = rows["kernel"].astype(str)
    data = rows[kernels.str.startswith("igemm_bwd_")]
    weight = rows[kernels.str.contains("bwd_weight")]
    assert len(data) == len(weight) == 3  # one per step
    for part in (data, weight):
        assert (part["flops"] == FLOPS_EACH).all()
        assert (part["bytes_dram"] == BYTES_EACH).all()
        assert (part["verdict"].astype(str) != "not-analysable").all()
    helpers = rows[~rows.index.isin(data.index.union(weight.index))]
    assert len(helpers) and helpers["flops"].isna().all()
    assert helpers["kernel"].astype(str).str.contains("transpose|SubTensorOp|Memset").all()


def test_batch_norm_passes_by_hand():
    """bn1 after the stem (x [10,64,112,112] bf16, training): statistics 4·8,028,160 FLOPs
    reading x (16,056,320 bytes); normalising 4 FLOPs per element, x read and y written plus
    the four [64] bf16 vectors (4·128 bytes) = 32,113,152 bytes."""
    rows = _of("aten::native_batch_norm", "[[10,64,112,112]")
    kernels = rows["kernel"].astype(str)
    stats = rows[kernels.str.contains("collect_statistics")]
    norm = rows[kernels.str.contains("transform_input")]
    assert len(stats) and len(norm)
    assert (stats["flops"] == 4 * 8_028_160).all() and (stats["bytes_dram"] == 16_056_320).all()
    assert (norm["flops"] == 4 * 8_028_160).all()
    assert (norm["bytes_dram"] == 2 * 16_056_320 + 4 * 128).all()


@pytest.mark.parametrize(
    ("kernel", "role"),
    [  # real names: the HTA A100 NCCL trace (cuDNN) and the ResNet-18 trace (MIOpen, CK)
        ("sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc", WEIGHT_GRAD),
        ("void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32>", DATA_GRAD),
        ("sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128", DATA_GRAD),
        ("igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8", WEIGHT_GRAD),
        ("igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8", DATA_GRAD),
        (
            "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47",
            WEIGHT_GRAD,
        ),
        ("void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*)", None),
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>", None),
        ("batched_transpose_32x32_half", None),
    ],
)
def test_kernel_roles(kernel, role):
    assert opmodels_split.role(kernel) == role


def test_a_part_no_name_claims_goes_to_the_longest_kernel_left():
    """cuDNN can run a gradient as a plain CUTLASS GEMM after a layout change (the A100 NCCL
    trace's convolution_backward: cutlass_80_tensorop_s1688gemm beside nchwToNhwcKernel): the
    weight gradient lands on the dgrad kernel's longest neighbour that is not a helper."""
    parts = opmodels_split.parts("aten::convolution_backward", *STRIDED)
    kernels = [
        "void cudnn::ops::nchwToNhwcKernel<float>",  # a layout helper: never the work
        "sm80_xmma_dgrad_implicit_gemm_tf32f32",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>",
        "void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>",
    ]
    given = opmodels_split.assign(parts, kernels, [9e-6, 5e-6, 4e-6, 8e-6])
    assert sorted(given) == [1, 2]
    assert given[1].flops == FLOPS_EACH
    assert given[2].flops == FLOPS_EACH  # nchwToNhwc and the wgrad helper keep nothing


def test_statistics_and_normalising_without_names_sum_on_one_kernel():
    dims = [[10, 64, 56, 56], [64], [64], [64], [64], [], [], []]
    types = ["c10::BFloat16"] * 5 + ["Scalar"] * 3
    parts = opmodels_split.parts("aten::native_batch_norm", dims, types, [""] * 5 + ["True"])
    assert [p.role for p in parts] == [STATISTICS, NORMALISE]
    (only,) = opmodels_split.assign(parts, ["some_fused_bn_kernel"], [1e-5]).values()
    assert only.flops == 8 * 10 * 64 * 56 * 56


def test_forward_convolution_work_skips_the_layout_helpers():
    """The same layer's forward (aten::miopen_convolution x [10,256,14,14], w [512,256,3,3],
    stride 2, padding 1: y [10,512,7,7]) runs six times in the trace (three steps, each
    recomputed once under activation checkpointing), each as MIOpen's igemm_fwd beside five
    transposes and casts. Before, the longest kernel took the work, and on this trace that was
    sometimes a transpose; now only igemm_fwd does: 2·10·512·256·3·3·7·7 FLOPs, bytes
    x 1,003,520 + w 2,359,296 + y 501,760."""
    rows = _of("aten::miopen_convolution", "[[10,256,14,14],[512,256,3,3]")
    modelled = rows[rows["flops"].notna()]
    assert len(modelled) == 6
    assert modelled["kernel"].astype(str).str.startswith("igemm_fwd_").all()
    assert (modelled["flops"] == FLOPS_EACH).all()
    assert (modelled["bytes_dram"] == 1_003_520 + 2_359_296 + 501_760).all()
    assert (
        rows.loc[rows["flops"].isna(), "kernel"]
        .astype(str)
        .str.contains("transpose|SubTensorOp")
        .all()
    )
