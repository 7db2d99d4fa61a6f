"""Op families from kernel names: a documented rule table, first match wins.

The rules cover the naming of cuBLAS/cuBLASLt (`ampere_s16816gemm`, `sm90_xmma_gemm`),
CUTLASS (`cutlass::gemm`), cuDNN (`cudnn::`, `implicit_convolve`), Triton (`triton_`),
FlashAttention (`flash_fwd`, `fmha`), PyTorch ATen (`at::native::`), hipBLASLt (`Cijk_`),
rocBLAS, MIOpen (`MIOpen`, `naive_conv`) and NCCL/RCCL. Order matters: attention before GEMM
(FlashAttention kernels contain "gemm" pieces), communication before copy.
"""

from __future__ import annotations

import re

import pandas as pd

FAMILIES = ("communication", "attention", "convolution", "gemm", "normalization", "softmax",
            "reduction", "copy", "elementwise", "other")

RULES: list[tuple[str, str]] = [
    ("communication", r"nccl|rccl|all_?reduce|allgather|all_?gather|reduce_?scatter|alltoall|sendrecv|ncclDevKernel"),
    ("attention", r"flash|fmha|attention|attn|sdpa|_mha_|mha_fwd|mha_bwd|paged_?decode|xformers|cutlass_?fmha|decode_?attention"),
    ("convolution", r"conv|implicit_?gemm_?conv|wgrad|dgrad|fprop|winograd|im2col|col2im|miopen.*(fwd|bwd|wrw)|naive_conv|igemm"),
    ("gemm", r"gemm|matmul|_mm_|\bmm\b|bmm|cublas|cutlass|xmma|hgemm|sgemm|dgemm|Cijk_|rocblas|hipblaslt|tensorop|mfma|wmma|linear|dot_?product|splitkreduce|gemv"),
    ("normalization", r"layer_?norm|rms_?norm|batch_?norm|group_?norm|instance_?norm|bn_fw|bn_bw|norm_?kernel|welford"),
    ("softmax", r"softmax|log_?softmax"),
    ("reduction", r"triton_red|triton_per|reduc|\bsum\b|_sum_|mean|argmax|argmin|max_?kernel|min_?kernel|scan|cumsum|topk|sort|histogram|lean_reduction"),
    ("copy", r"memcpy|memset|copy|fill|transpose|permute|cat_?array|concat|gather|scatter|index_?select|embedding|pad|to_?contiguous|cast"),
    ("elementwise", r"elementwise|vectorized|unrolled|pointwise|triton_poi|add|mul|relu|gelu|silu|sigmoid|tanh|exp|axpy|scale|bias|dropout|activation|distribution|uniform|normal|random|vecadd|vec_?add|init"),
]

_COMPILED = [(family, re.compile(pattern, re.IGNORECASE)) for family, pattern in RULES]


def classify_one(name: str) -> str:
    """The op family of one kernel name ("other" when no rule matches)."""
    for family, pattern in _COMPILED:
        if pattern.search(name or ""):
            return family
    return "other"


def classify(names: pd.Series) -> pd.Series:
    """Families for a column of kernel names; each distinct name is classified once."""
    distinct = pd.Series(names.dropna().unique())
    mapping = dict(zip(distinct, distinct.map(classify_one), strict=True))
    return names.map(mapping).fillna("other").astype("string")
