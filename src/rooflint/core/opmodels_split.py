"""Operators whose work is done by several kernels, each kernel given its own part (pure maths).

A convolution's backward computes the data gradient and the weight gradient: two products of the
forward's size, which cuDNN and MIOpen run as two kernels (dgrad and wgrad; igemm_bwd and
igemm_wrw), beside layout transposes and casts. Batch norm's forward in PyTorch's own kernels is a
statistics pass and a normalising pass. Each part is a Work with the role of the kernel that does
it; `assign` gives every part to the longest kernel of its operator whose name says that role,
and the parts whose kernel the names do not show to the operator's longest other kernel, summed.
The parts' minimum bytes are each kernel's own (the data gradient reads grad_output and the
weight, writes grad_input; the weight gradient reads grad_output and the input, writes
grad_weight), as TraceLens's CONV_bwd table counts them: grad_output is read once per gradient.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from rooflint.core.opmodels import DTYPES, Work, _size, _tensors

DATA_GRAD, WEIGHT_GRAD, BIAS_GRAD = "data gradient", "weight gradient", "bias gradient"
STATISTICS, NORMALISE = "statistics", "normalise"

# role -> the kernel names that do that part. Weight first: CK's conv_bwd_weight would match a
# data pattern too. cuDNN/CUTLASS: dgrad / wgrad (sm80_xmma_wgrad_implicit_gemm, cutlass_tensorop_
# s1688dgrad_optimized, cudnn::detail::dgrad_engine); MIOpen: igemm_bwd / igemm_wrw, naive_conv
# ..._bwd / _wrw; Composable Kernel: batched_gemm_xdlops_bwd_weight, conv_bwd_data.
KERNEL_ROLES = (
    (WEIGHT_GRAD, re.compile(r"wgrad|wrw|bwd_weight|BwdWeight", re.IGNORECASE)),
    (DATA_GRAD, re.compile(r"dgrad|igemm_bwd|bwd_data|BwdData|naive_conv\w*_bwd", re.IGNORECASE)),
    (STATISTICS, re.compile(r"collect_statistics|batch_norm_stats")),
    (NORMALISE, re.compile(r"batch_norm_transform_input|batch_norm_elemt")),
)
# Kernels that help an operator's work and never do it, however long they run: cuBLAS's and
# CUTLASS's split-K reductions (measured on HTA's 2-rank trace, a splitKreduce_kernel outlasted
# its s1688gemm), cuDNN's helpers (reduce_wgrad_nchw_helper), and the layout transposes and casts
# cuDNN and MIOpen run around their NHWC convolution kernels (nchwToNhwcKernel,
# batched_transpose_32x32_half, transpose_NCHW2CNHW, SubTensorOpWithCastTensor1d): on TraceLens's
# HIP ResNet-18 trace they outlast the convolution itself.
HELPERS = re.compile(
    r"splitKreduce|splitK_reduce|ReduceSplitK|_helper\b|nchwToNhwc|nhwcToNchw|batched_transpose_"
    r"|transpose_(?:NCHW|CNHW)|SubTensorOp",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Part:
    """One kernel's share of an operator's work: `role` names the kernel that does it."""

    role: str
    work: Work


def role(kernel: str) -> str | None:
    """The part a kernel of a split operator does, by its name (None: the name does not say)."""
    if HELPERS.search(kernel or ""):
        return None
    return next((r for r, pattern in KERNEL_ROLES if pattern.search(kernel or "")), None)


def total(parts: list[Part]) -> Work:
    """The parts summed, at the first part's unit and precision (a bias gradient's additions,
    one per element of grad_output, ride along with a gradient's products when one kernel does
    both)."""
    first = parts[0].work
    return Work(
        sum(p.work.flops for p in parts),
        first.unit,
        first.precision,
        sum(p.work.bytes_min for p in parts),
    )


def assign(parts: list[Part], kernels: list[str], durations: list[float]) -> dict[int, Work]:
    """Which of an operator's kernels (index) does which work: each part on the longest kernel
    whose name says its role; the parts no name claims, summed, on the longest kernel left
    (else on the longest kernel given a part)."""
    roles = [role(k) for k in kernels]
    by_length = sorted(range(len(kernels)), key=lambda i: (-durations[i], i))
    given: dict[int, list[Part]] = {}
    unclaimed = []
    for part in parts:
        doer = next((i for i in by_length if roles[i] == part.role and i not in given), None)
        if doer is None:
            unclaimed.append(part)
        else:
            given[doer] = [part]
    if unclaimed and by_length:
        free = [i for i in by_length if i not in given and not HELPERS.search(kernels[i] or "")]
        home = free[0] if free else next((i for i in by_length if i in given), by_length[0])
        given[home] = given.get(home, []) + unclaimed
    return {i: total(p) for i, p in given.items()}


# ---- convolution backward ---------------------------------------------------------------------


def convolution_backward(dims, types, concrete) -> list[Part] | None:
    """aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
    dilation, transposed, output_padding, groups, output_mask): each gradient output_mask asks
    for. The data and weight gradients are each 2·N·K·(C/groups)·(R·S…)·(P·Q…) FLOPs, the
    forward's (P·Q… the spatial size of grad_output; of the input for a transposed convolution,
    whose weight is [C_in, C_out/groups, R, S…]); the bias gradient N·K·(P·Q…) additions.
    The stride, padding and dilation are in the shapes already."""
    (dy, ty), (x, tx), (w, tw) = _tensors(dims, types)[:3]
    transposed = len(concrete) > 7 and str(concrete[7]).strip() == "True"
    mask = _mask(concrete[10] if len(concrete) > 10 else "")
    spatial = x[2:] if transposed else dy[2:]
    flops = 2.0 * x[0] * w[0] * w[1] * math.prod(w[2:]) * math.prod(spatial)
    precision = DTYPES[tx][0]
    parts = []
    if mask[0]:
        parts.append(Part(DATA_GRAD, Work(flops, "matrix", precision, _grad(dy, ty, w, tw, x))))
    if mask[1]:
        parts.append(Part(WEIGHT_GRAD, Work(flops, "matrix", precision, _grad(dy, ty, x, tx, w))))
    if mask[2]:
        bias = _size(dy, ty) + dy[1] * DTYPES[ty][1]  # grad_output read, K sums written
        parts.append(Part(BIAS_GRAD, Work(float(math.prod(dy)), "vector", "fp32", bias)))
    return parts or None


def _grad(dy, ty: str, other, t_other: str, result) -> float:
    """Bytes of one gradient: grad_output and the other operand read, the result (shaped like
    the tensor it is the gradient of, in that operand's dtype) written."""
    return _size(dy, ty) + _size(other, t_other) + math.prod(result) * DTYPES[t_other][1]


def _mask(text) -> list[bool]:
    """output_mask "[True, True, False]" (all three when not recorded)."""
    words = re.findall(r"True|False", str(text))
    return [w == "True" for w in words] if len(words) == 3 else [True, True, True]


# ---- batch norm forward in PyTorch's kernels ----------------------------------------------------


def batch_norm(dims, types, concrete) -> list[Part] | None:
    """aten::native_batch_norm(input, weight, bias, running_mean, running_var, training,
    momentum, eps): in training, the statistics pass reads the input (4 FLOPs per element:
    Welford's mean and variance updates) and the normalising pass reads it again and writes the
    output (4 FLOPs per element: subtract, multiply by the inverse deviation, scale, shift); the
    per-channel vectors are read by the normalising pass. In inference only the second pass
    runs, with the running statistics."""
    tensors = _tensors(dims, types)
    (x, tx), vectors = tensors[0], tensors[1:]
    training = len(concrete) > 5 and str(concrete[5]).strip() == "True"
    elements = float(math.prod(x))
    read_x = _size(x, tx)
    normalise = Part(
        NORMALISE,
        Work(4 * elements, "vector", "fp32", 2 * read_x + sum(_size(s, t) for s, t in vectors)),
    )
    if not training:
        return [normalise]
    return [Part(STATISTICS, Work(4 * elements, "vector", "fp32", read_x)), normalise]


SPLIT: dict[str, Callable] = {
    "aten::convolution_backward": convolution_backward,
    "aten::native_batch_norm": batch_norm,
}


def handles(name: str) -> bool:
    return name in SPLIT


def parts(name: str, dims, types, concrete) -> list[Part] | None:
    """The parts of operator `name` with these arguments; None without shapes that fit."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return None
    try:
        return SPLIT[name](dims, types, concrete or [])
    except (ValueError, IndexError, TypeError, KeyError):
        return None  # shapes that do not fit the formula: unmodelled, never a guess
