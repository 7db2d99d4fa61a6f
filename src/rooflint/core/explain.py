"""Verdicts in words: one deterministic line per kernel, drawn from the roofline theory."""

from __future__ import annotations

import math

from rooflint.core.analysis import ABOVE_ROOF, COMPUTE_BOUND, LATENCY_BOUND, MEMORY_BOUND

NEAR_CEILING = 0.85
_LEVELS = {"dram": "DRAM", "l2": "L2", "l1": "L1", "lds": "LDS"}


def roof_label(limiter: str | None, vendor: str | None = None) -> str:
    """"dram" → "DRAM", "matrix_bf16" → "BF16 tensor" (NVIDIA) / "BF16 matrix" (AMD)."""
    if not limiter or not isinstance(limiter, str):
        return "unknown"
    if limiter in _LEVELS:
        return _LEVELS[limiter]
    unit, _, precision = limiter.partition("_")
    if unit == "matrix":
        return f"{precision.upper()} {'matrix' if vendor == 'amd' else 'tensor'}"
    return f"{precision.upper()} {unit}"


def sentence(verdict: str, efficiency: float, limiter: str | None, reason: str = "",
             vendor: str | None = None) -> str:
    """One line that says what bounds the kernel and what would help."""
    roof = roof_label(limiter, vendor)
    pct = "?" if efficiency is None or (isinstance(efficiency, float) and math.isnan(efficiency)) else f"{efficiency * 100:.0f} %"
    if verdict == MEMORY_BOUND:
        return (f"memory-bound at {pct} of the {roof} roof: only moving fewer bytes helps "
                "(fuse, reuse, narrower types)")
    if verdict == COMPUTE_BOUND:
        if efficiency >= NEAR_CEILING:
            return f"compute-bound at {pct} of the {roof} roof: near the ceiling"
        if limiter and limiter.startswith("matrix"):
            return (f"compute-bound at {pct} of the {roof} roof: schedule better (pipelining, tile "
                    "shapes, occupancy) or narrow the precision")
        return (f"compute-bound at {pct} of the {roof} roof: reach the matrix units, narrow the "
                "precision, schedule better")
    if verdict == LATENCY_BOUND:
        return (f"latency-bound: {pct} of the nearest ({roof}) roof — neither bandwidth nor "
                "arithmetic is the problem; look at parallelism in flight, synchronisation, launch overhead")
    if verdict == ABOVE_ROOF:
        return f"above the roof ({pct} of the {roof} roof): check device, clocks and units"
    return f"not analysable: {reason or 'unknown reason'}"
