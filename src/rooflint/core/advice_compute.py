"""Advice on arithmetic: an FP32 kernel on the vector pipe of a device with tensor units, a
narrower precision the device runs much faster, an AMD matrix roof quoted at a clock the run
may not have reached."""

from __future__ import annotations

from rooflint.core import families
from rooflint.core.advice_records import Advice, Context, Rule, number
from rooflint.core.explain import roof_label
from rooflint.core.formatting import pct, ratio, si
from rooflint.core.verdicts import COMPUTE_BOUND, LATENCY_BOUND

# A roof this many times the kernel's own is worth naming.
MUCH_HIGHER = 4.0
BUSY_VECTOR = 0.5  # a latency-bound FP32 kernel this close to its vector roof counts as on it
LOW_MATRIX = 0.5  # an AMD GEMM under this share of its matrix roof: check the clock first
TENSOR_FAMILIES = ("gemm", "convolution")  # what cuBLAS/cuDNN run on the tensor units
# The narrower classes an FP32 (or FP16) kernel could run in, in the order they are offered.
NARROWER = {
    "vector_fp32": ("matrix_bf16", "matrix_fp16"),
    "matrix_tf32": ("matrix_bf16", "matrix_fp16"),
    "matrix_fp16": ("matrix_fp8",),
    "matrix_bf16": ("matrix_fp8",),
}


def vector_pipe(row: dict, context: Context) -> Advice | None:
    """FP32 arithmetic at the vector roof, or a GEMM or convolution (by its name's family) in
    FP32 vector arithmetic, where the device has TF32 tensor units."""
    limiter, eff = row.get("limiter"), number(row.get("efficiency"))
    kernel = row.get("kernel")
    matrix_op = isinstance(kernel, str) and families.classify_one(kernel) in TENSOR_FAMILIES
    on_roof = _on_the_roof(row.get("verdict"), eff)
    if limiter != "vector_fp32" or not (
        on_roof or matrix_op and row.get("verdict") == LATENCY_BOUND
    ):
        return None
    vector, tensor = context.roofs.get("vector_fp32"), context.roofs.get("matrix_tf32")
    if not vector or not tensor or tensor / vector < MUCH_HIGHER / 2:
        return None
    return Advice(
        Rule.VECTOR_PIPE,
        f"its FP32 arithmetic runs on the vector pipe at {pct(eff)} of that roof while the "
        f"device's TF32 tensor roof is {ratio(tensor / vector, 2)}× higher: a GEMM or "
        "convolution in TF32 (cuBLAS/cuDNN TF32 math, torch.backends.cuda.matmul.allow_tf32) "
        "would run on the tensor units",
        "the limiter (FP32 vector), "
        + ("the kernel's name (a GEMM or convolution), " if matrix_op else "")
        + "the device's TF32 and FP32 roofs",
    )


def precision(row: dict, context: Context) -> Advice | None:
    """An option, not a certainty: a narrower type whose roof is much higher on this device."""
    limiter = row.get("limiter")
    if row.get("verdict") not in (COMPUTE_BOUND, LATENCY_BOUND) or limiter not in NARROWER:
        return None
    own = context.roofs.get(limiter)
    offered = [(c, context.roofs[c]) for c in NARROWER[limiter] if context.roofs.get(c)]
    if not own or not offered:
        return None
    best, roof = max(offered, key=lambda kv: kv[1])
    if roof / own < MUCH_HIGHER:
        return None
    return Advice(
        Rule.PRECISION,
        f"an option, if its accuracy allows: in {roof_label(best, context.vendor)} its roof "
        f"would be {ratio(roof / own, 2)}× the {roof_label(limiter, context.vendor)} roof "
        "(mixed precision, autocast)",
        f"the device's {roof_label(best, context.vendor)} and "
        f"{roof_label(limiter, context.vendor)} roofs",
    )


def matrix_clock(row: dict, context: Context) -> Advice | None:
    """An AMD GEMM far under a matrix roof quoted at the datasheet's peak engine clock."""
    limiter, eff = row.get("limiter"), number(row.get("efficiency"))
    if context.vendor != "amd" or not isinstance(limiter, str) or not limiter.startswith("matrix"):
        return None
    if context.clock_measured or not context.datasheet_clock_hz or not eff < LOW_MATRIX:
        return None
    if row.get("verdict") not in (COMPUTE_BOUND, LATENCY_BOUND):
        return None
    return Advice(
        Rule.MATRIX_CLOCK,
        f"the {roof_label(limiter, 'amd')} roof is at the datasheet's peak engine clock "
        f"({si(context.datasheet_clock_hz, 'Hz')}), which sustained matrix work often does not "
        f"hold: {pct(eff)} may be the clock, not the kernel — check the clock during the run "
        "(`rocm-smi --showclocks`) and give it in a --device-file",
        "the roof's datasheet clock; the profile measured none",
    )


def _on_the_roof(verdict, efficiency: float) -> bool:
    return verdict == COMPUTE_BOUND or (verdict == LATENCY_BOUND and efficiency >= BUSY_VECTOR)
