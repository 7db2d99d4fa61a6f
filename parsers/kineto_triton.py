"""torch.compile (Inductor) Triton kernels: bytes and estimated FLOPs from the kernel's operator.

Inductor records each Triton launch as a CPU operator named like the kernel
(`triton_{poi,red,per,tem}_fused_<ops>_<n>`) whose arguments are the kernel's: every buffer it
reads or writes (`Input Dims`, `Input type`), then its scalars (`Concrete Inputs`), which end with
the sizes of its iteration space (xnumel, ynumel, ..., r0_numel), and the block sizes it was
launched with (`kernel_kwargs`, "XBLOCK=64,R0_BLOCK=128"). From them:

- iteration space N = the product of those trailing sizes: one per X/Y/Z block in
  `kernel_kwargs`, plus one per reduction dimension (R0_BLOCK, R1_BLOCK ... in a `red` kernel's
  kwargs; a `per`sistent reduction passes no R block but its r0_numel is among the scalars);
  a kernel with its sizes compiled in passes none, and gets no model (its buffers can be far
  larger than what it touches: vLLM's triton_poi_fused_0 writes into a 579 M-element cache);
- bytes = Σ over buffers of min(elements, N) × bytes per element: a buffer larger than the
  iteration space (a slice of a bigger one) is touched at most N times, a smaller one (a bias,
  a reduction's output) once per element. A pointwise kernel with one buffer of N elements
  (the others smaller) updates it in place (Inductor's in_out_ptr, a GEMM epilogue's bias and
  activation): it is read and written, counted twice, unless the kernel creates its values
  (arange, full). An estimate: which buffers are read and which written is not recorded, and
  a buffer read through a broadcast is counted once;
- FLOPs = N × Σ FLOPs per element of the fused operations the name lists, where every one of
  them is known (`FLOPS_PER_ELEMENT`: 1 for elementwise arithmetic, as core.opmodels counts
  its operators; layout and copies 0); an estimate too, on the FP32 vector units (Triton
  computes 16-bit values in FP32). A name with an operation not listed has bytes but no FLOPs,
  and says which operation;
- `triton_tem_*` templates that name a GEMM (mm, addmm, bmm) get 2·M·N·K from the buffers'
  shapes, on the matrix unit at the inputs' precision.
"""

from __future__ import annotations

import math
import re

import numpy as np

from rooflint.core import opmodels
from rooflint.core.opmodels import DTYPES, Work

NAME = re.compile(r"^triton_(poi|red|per|tem)_(?:fused)?(.*?)(?:_\d+)?$")
KIND_WORDS = {"poi": "pointwise", "red": "reduction", "per": "persistent reduction",
              "tem": "template"}  # fmt: skip
BLOCK = re.compile(r"\b([XYZ]|R\d*)_?BLOCK\s*=", re.IGNORECASE)
# FLOPs per element of the iteration space, by the operation names Inductor fuses into a name
ARITHMETIC_1 = (
    "add sub mul div neg abs exp exp2 log log1p sin cos tanh sigmoid relu gelu silu pow rsqrt "
    "sqrt reciprocal maximum minimum clamp clamp_min clamp_max lt le gt ge eq ne where "
    "masked_fill mean sum amax amin max min addmm convolution erf lerp addcmul hardtanh "
    "leaky_relu elu softplus sign floor ceil round fmod remainder"
).split()
NO_ARITHMETIC = (
    "view _unsafe_view clone slice transpose permute cat split unsqueeze squeeze _to_copy "
    "copy copy_ arange constant_pad_nd expand select index embedding full zeros ones fill "
    "reshape flip stack empty new_zeros alias t as_strided split_with_sizes narrow "
    "_scaled_dot_product_flash_attention _scaled_dot_product_efficient_attention "
    "scaled_dot_product_attention bitwise_and bitwise_or bitwise_not bitwise_xor logical_and "
    "logical_or logical_not moe_forward unbind repeat"
).split()
FLOPS_PER_ELEMENT: dict[str, float] = {
    **dict.fromkeys(ARITHMETIC_1, 1.0),
    **dict.fromkeys(NO_ARITHMETIC, 0.0),
    "native_layer_norm": 8.0,  # as core.opmodels' layer_norm
    "layer_norm": 8.0,
    "native_group_norm": 8.0,
    "native_batch_norm": 8.0,
    "_native_batch_norm_legit_no_training": 8.0,
    "rms_norm": 4.0,
    "_softmax": 5.0,
    "softmax": 5.0,
    "_log_softmax": 6.0,
}
_WORDS = sorted(FLOPS_PER_ELEMENT, key=len, reverse=True)  # longest first: native_layer_norm
# operations that make values without reading any: a pointwise kernel naming one may write its
# one full-size buffer without reading it
CREATION = {"arange", "full", "zeros", "ones", "empty", "new_zeros", "fill"}
GEMM_TEMPLATE = re.compile(r"(?:^|_)(b?mm|addmm|baddbmm)(?:_|$)")
NAME_ONLY = (
    "a torch.compile Triton kernel recorded without its own operator (older PyTorch records no "
    "arguments for it): which buffers it reads and writes, and how large, is not in the trace"
)
ESTIMATE_NOTE = (
    "FLOPs and DRAM bytes of a torch.compile Triton kernel estimated from its operator's "
    "arguments (buffers x element size, iteration space from xnumel/rnumel) and fused op names"
)


def count_note(total: int, flops, bytes_moved) -> str:
    """How many Triton kernels were modelled, and from what."""
    both = int((~np.isnan(flops) & ~np.isnan(bytes_moved)).sum())
    only = int((np.isnan(flops) & ~np.isnan(bytes_moved)).sum())
    return (
        f"{total} torch.compile Triton kernels: {both} with bytes and FLOPs estimated from their "
        "operators' Input Dims, Input type, Concrete Inputs (xnumel, rnumel) and kernel_kwargs "
        f"and the fused op names, {only} with bytes only (a fused op without a FLOP count), "
        f"{total - both - only} without (their reasons are on the launches)"
    )


def is_triton(name: str) -> bool:
    return bool(NAME.match(name or ""))


def words(body: str) -> tuple[list[str], str | None]:
    """The fused operation names in `body` ("add_addmm_native_layer_norm"), the longest known
    name first at each point; and the first unknown piece, or None."""
    found: list[str] = []
    rest = body
    while rest:
        hit = _known(rest) or _known(rest[1:] if rest.startswith("_") else "")
        if hit is None:
            return found, rest.strip("_").split("_")[0]
        found.append(hit)
        rest = rest[rest.index(hit) + len(hit) :].removeprefix("_")
    return found, None


def _known(text: str) -> str | None:
    """The longest known operation name `text` starts with, ending at "_" or the end."""
    return next(
        (w for w in _WORDS if text.startswith(w) and text[len(w) : len(w) + 1] in ("", "_")),
        None,
    )


def _buffers(dims, types) -> list[tuple[int, int]]:
    """(elements, bytes per element) of every tensor argument."""
    return [
        (math.prod(d), DTYPES[t][1])
        for d, t in zip(dims, types, strict=False)
        if t in DTYPES and isinstance(d, list) and d and all(isinstance(x, int) for x in d)
    ]


def numels(kind: str, types, concrete, kwargs: str | None) -> list[int] | None:
    """The iteration-space sizes among the trailing scalar arguments (None when they are not
    there as integers)."""
    scalars = [str(c) for c, t in zip(concrete or [], types or [], strict=False) if t == "Scalar"]
    blocks = BLOCK.findall(kwargs or "")
    count = len(blocks) or 1  # no kwargs recorded (older PyTorch): one x dimension
    if kind == "per" or (kind == "red" and not any(b.upper().startswith("R") for b in blocks)):
        count += 1  # the reduction size, passed though no R block is
    tail = scalars[-count:] if len(scalars) >= count else []
    if not tail or not all(re.fullmatch(r"\d+", s) for s in tail):
        return None
    return [int(s) for s in tail]


def model(name: str, dims, types, concrete, kwargs: str | None) -> tuple[Work | None, str]:
    """The estimated Work of Triton kernel operator `name`, and why there is none or why it has
    bytes only ("" when it has both)."""
    match = NAME.match(name or "")
    if match is None or not isinstance(dims, list) or not isinstance(types, list):
        return None, "not a Triton kernel operator with arguments"
    kind, body = match.groups()
    buffers = _buffers(dims, types)
    if not buffers:
        return None, f"Triton {KIND_WORDS[kind]} kernel: no tensor arguments recorded"
    if kind == "tem":
        return _template(body, dims, types)
    sizes = numels(kind, types, concrete, kwargs)
    if sizes is None:
        return None, (
            f"Triton {KIND_WORDS[kind]} kernel with its sizes compiled in (no xnumel among its "
            "arguments): how many elements of its buffers it touches is not recorded"
        )
    space = math.prod(sizes)
    found, unknown = words(body)
    moved = float(sum(min(n, space) * size for n, size in buffers))
    full = [size for n, size in buffers if n >= space]
    if kind == "poi" and len(full) == 1 and not CREATION.intersection(found):
        moved += space * full[0]  # its one full-size buffer is updated in place: read and written
    if unknown is not None:
        why = f"fused operation '{unknown}' has no FLOP count (bytes estimated)"
        return Work(math.nan, "vector", "fp32", moved), why
    flops = space * sum(FLOPS_PER_ELEMENT[w] for w in found)
    return Work(float(flops), "vector", "fp32", moved), ""


def _template(body: str, dims, types) -> tuple[Work | None, str]:
    """A GEMM template: A [.., M, K] and B [.., K, N] are the first two tensors whose inner
    sizes agree; 2·batch·M·N·K."""
    if not GEMM_TEMPLATE.search(body):
        return None, "Triton template kernel that names no GEMM (mm, addmm, bmm)"
    tensors = [(d, t) for d, t in zip(dims, types, strict=False) if t in DTYPES and d]
    for i, (a, ta) in enumerate(tensors):
        for b, _ in tensors[i + 1 :]:
            if len(a) >= 2 and len(b) >= 2 and a[-1] == b[-2] and len(a) == len(b):
                batch = math.prod(a[:-2]) if len(a) > 2 else 1
                return opmodels.gemm(a[-2], b[-1], a[-1], batch, ta), ""
    return None, "Triton GEMM template whose arguments give no A [M, K] x B [K, N] pair"
