"""Op families from kernel names: a documented rule table, first match wins.

Kernel names are whatever the libraries chose, so the rules read the naming of each library
(library: family: examples):

- cuBLAS / cuBLASLt: GEMM: `ampere_s16816gemm_*`, `sm90_xmma_gemm_*`, `nvjet_*`, `gemv2T_kernel`,
  `splitKreduce_kernel`
- CUTLASS: GEMM: `cutlass::Kernel<cutlass_80_tensorop_*gemm*>`,
  `cutlass::gemm::kernel::GemmUniversal`; attention: `cutlass_fmha`; conv: `*fprop*`,
  `ImplicitGemmConvolution`
- cuDNN: attention: `*_sdpa_*`, `*flash_fprop*`; conv: `implicit_convolve_sgemm`,
  `*_xmma_fprop_implicit_gemm_*`, `dgrad`, `wgrad`, `winograd`; norm: `bn_fw_tr_*`
- PyTorch ATen: `vectorized_elementwise_kernel`, `reduce_kernel`, `cunn_SoftMaxForward`,
  `vectorized_layer_norm_kernel`, `CatArrayBatchedCopy`
- Triton (Inductor): GEMM: `triton_tem_fused_mm_*`; `triton_poi_*` pointwise, `triton_red_*` /
  `triton_per_*` reductions
- FlashAttention / xFormers: attention: `flash_fwd_kernel`, `flash_bwd_*`, `fmha_*`,
  `*MemEffAttention*`
- hipBLASLt / rocBLAS (Tensile): GEMM: `Cijk_Ailk_Bljk_*`
- Composable Kernel: GEMM: `ck::kernel_gemm_xdl_*`; attention: `*gemm_softmax_gemm*`; conv:
  `kernel_grouped_conv_fwd_*`
- MIOpen: conv: `naive_conv_*`, `igemm_fwd_gtc*`, `miopenSp3AsmConv*`; norm: `MIOpenBatchNorm*`
- NCCL / RCCL: communication: `ncclDevKernel_AllReduce_*`, `ncclKernel_*`
- ROCclr / CUDA runtime: copy: `__amd_rocclr_copyBuffer`, `__amd_rocclr_fillBuffer`,
  `[CUDA memcpy HtoD]`, `[CUDA memset]`

Order matters where names carry several hints: communication first (`AllReduce_Sum`), attention
before GEMM and convolution (FlashAttention names hold `gemm` and `fprop` pieces), Triton's own
kernel kind before op names fused into it, normalization and softmax before reductions (they
reduce too), convolution before GEMM (implicit GEMM convolutions), copies before elementwise.
Letters around short words are checked (`conv` is not `Converter`, `cast` is not `broadcast`),
and collective names must start a word (`small_reduce_*` is a reduction, not an all-reduce).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from rooflint.core import schema

FAMILIES = (
    "gemm",
    "attention",
    "convolution",
    "normalization",
    "softmax",
    "reduction",
    "elementwise",
    "copy",
    "communication",
    "other",
)

# A word that is not part of a longer word: no letter right before or after it.
_W = r"(?<![a-z])({})(?![a-z])"
# A word that starts a word: no letter before it, or a camelCase hump (`doAllReduce`), so that
# `all_reduce` is found in `ncclDevKernel_AllReduce_Sum` but not in `small_reduce_kernel`.
_START = r"(?:(?<![a-z])|(?<=[a-z])(?-i:(?=[A-Z])))({})"

# (family, pattern); patterns are case-insensitive; the first rule that matches wins.
RULES: list[tuple[str, str]] = [
    # NCCL/RCCL kernels, custom all-reduce kernels (vLLM), MSCCL, NVSHMEM
    (
        "communication",
        r"nccl|rccl|msccl|nvshmem|cross_device_reduce|"
        + _START.format(r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|send_?recv"),
    ),
    # FlashAttention 1-3, cuDNN SDPA, xFormers/PyTorch memory-efficient attention, CK fused
    # attention, paged attention (vLLM, FlashInfer)
    (
        "attention",
        r"flash|fmha|attention|attn|sdpa|" + _W.format("mha") + r"|mem_?eff|"
        r"gemm_softmax_gemm|paged_?kv|paged_?attention|decode_?attention",
    ),
    # Triton (Inductor) says what kind of kernel it generated before the fused op names
    ("elementwise", r"^triton_poi_"),
    ("gemm", r"^triton_(tem|mm)_"),
    # Positional embeddings are arithmetic, not the table look-up that `embedding` means below
    ("elementwise", r"rotary|" + _W.format("rope")),
    (
        "normalization",
        r"layer_?norm|rms_?norm|batch_?norm|group_?norm|instance_?norm|l2_?norm|"
        r"(?<![a-z])bn_(fw|bw)|rowwise_?moments|welford",
    ),
    ("softmax", r"softmax"),
    ("reduction", r"^triton_(red|per)_"),
    # cuDNN (implicit GEMM fprop/dgrad/wgrad, winograd, FFT), CUTLASS conv, MIOpen, CK
    (
        "convolution",
        r"conv(?!ert)|fprop|dgrad|wgrad|winograd|im2col|col2im|implicit_?gemm|igemm|"
        r"depthwise|miopen\w*(fwd|bwd|wrw)",
    ),
    # CUTLASS's reference kernels: a GEMM, or filling and comparing tensors
    ("gemm", r"cutlass::reference::\w+::kernel::gemm"),
    ("elementwise", r"cutlass::reference"),
    # cuBLAS/cuBLASLt (incl. Hopper `nvjet`), CUTLASS, Tensile (`Cijk_`: hipBLASLt, rocBLAS),
    # CK, generic
    (
        "gemm",
        r"gemm|gemv|matmul|" + _W.format("mm|bmm|addmm") + r"|cublas|cutlass|xmma|nvjet|Cijk_|"
        r"hipblaslt|tensorop|mfma|wmma|splitk_?reduce",
    ),
    (
        "reduction",
        r"reduc|" + _W.format("sum|mean|dot|norm|loss") + r"|cumsum|cumprod|"
        r"argmax|argmin|max_?kernel|min_?kernel|scan|topk|sort|histogram|pool|nll_?loss|"
        r"cross_?entropy",
    ),
    (
        "copy",
        r"memcpy|memset|copy|fill|transpose|permute|cat_?array|concat|gather|scatter|"
        r"index_?select|embedding|" + _W.format("pad") + r"|constant_pad|to_?contiguous|"
        r"(?<!broad)cast|nchw_?to_?nhwc|nhwc_?to_?nchw|reshape",
    ),
    (
        "elementwise",
        r"elementwise|vectorized|unrolled|pointwise|add|mul|"
        + _W.format("sub|subtract|div|divide")
        + r"|relu|gelu|silu|swish|sigmoid|tanh|"
        + _W.format("exp|log|pow|sqrt|rsqrt|abs|neg|where")
        + r"|clamp|axpy|scale|bias|dropout|activation|distribution|uniform|normal|random|"
        r"vecadd|vec_?add|init|adam|sgd|multi_tensor|upsample|interpolat",
    ),
]

_COMPILED = [(family, re.compile(pattern, re.IGNORECASE)) for family, pattern in RULES]


# A folder's files repeat the same few hundred kernel names, and each file (reduced where it is
# read, rooflint.reduced) is classified alone: a name's family is worked out once per process.
# The rules are fixed, so a cached family is the one the rules give.
@functools.lru_cache(maxsize=4096)
def classify_one(name: str) -> str:
    """The op family of one kernel name ("other" when no rule matches)."""
    for family, pattern in _COMPILED:
        if pattern.search(name or ""):
            return family
    return "other"


def classify(names: pd.Series) -> pd.Series:
    """Families for a column of kernel names; each distinct name is classified once."""
    codes, distinct = pd.factorize(names)
    families = [classify_one(name) for name in distinct]
    return pd.Series(
        schema.strings(np.where(codes < 0, len(families), codes), families + ["other"]),
        index=names.index,
    )
