"""Verdicts in words: one deterministic line per kernel, drawn from the roofline theory."""

from __future__ import annotations

import math

from rooflint.core import collectives, hostcopies
from rooflint.core.analysis import Reason
from rooflint.core.device import HOST_PREFIX, LinkKind
from rooflint.core.verdicts import (
    ABOVE_ROOF,
    COMMUNICATION,
    COMPUTE_BOUND,
    LATENCY_BOUND,
    MEMORY_BOUND,
)

NEAR_CEILING = 0.85
# What the latency-bound line ends with where no evidence says more (core/advice.py).
GENERIC_LATENCY = "; look at parallelism in flight, synchronisation, launch overhead"
_LEVELS = {"dram": "DRAM", "l2": "L2", "l1": "L1", "lds": "LDS"}
_LINKS = {k.value for k in LinkKind}
_HOST_LINKS = {HOST_PREFIX + k.value: k for k in LinkKind}
_COPY_LIMITERS = {*_HOST_LINKS, hostcopies.LATENCY}
_COPY_REASONS = {m.value for m in hostcopies.Missing}
# ncu's percentages a verdict rests on, by the flags of core.ranking.ESTIMATED, in clause order.
_ESTIMATES = {
    "dram_pct": "DRAM throughput %",
    "pipe_pct": "busiest SM pipe's utilisation",
    "sm_pct": "SM throughput %",
}


def roof_label(limiter: str | None, vendor: str | None = None) -> str:
    """ "dram" → "DRAM", "matrix_bf16" → "BF16 tensor" (NVIDIA) / "BF16 matrix" (AMD)."""
    if not limiter or not isinstance(limiter, str):
        return "unknown"
    if limiter in _LEVELS:
        return _LEVELS[limiter]
    if limiter in _LINKS:
        return LinkKind(limiter).label
    if limiter in _HOST_LINKS:
        return _HOST_LINKS[limiter].label
    if limiter == "sm":  # a compute time from ncu's SM throughput %
        return "SM throughput"
    if limiter.startswith("pipe_"):  # one from the busiest pipe's utilisation ("pipe_alu")
        return f"{limiter.removeprefix('pipe_').upper()} pipe"
    unit, _, precision = limiter.partition("_")
    if unit == "matrix":
        return f"{precision.upper()} {'matrix' if vendor == 'amd' else 'tensor'}"
    return f"{precision.upper()} {unit}"


def sentence(
    verdict: str,
    efficiency: float,
    limiter: str | None,
    reason: str = "",
    vendor: str | None = None,
    unmeasured: str = "",
    dram_fraction: float | None = None,
    specific: bool = False,
) -> str:
    """One line that says what bounds the kernel and what would help, and what the counters
    did not measure (`unmeasured`: flags from rooflint.core.ranking.unmeasured) where that limits
    the conclusion. `specific`: advice from the evidence follows (core/advice.py), so the
    latency-bound line leaves out its generic list of what to look at."""
    flags = set(filter(None, (unmeasured or "").split(",")))
    text = _verdict_text(verdict, efficiency, limiter, reason, vendor, flags, dram_fraction)
    if specific:
        text = text.removesuffix(GENERIC_LATENCY)
    return text + _caveats(verdict, flags, vendor)


def _verdict_text(verdict, efficiency, limiter, reason, vendor, flags, dram_fraction) -> str:
    roof = roof_label(limiter, vendor)
    pct = _pct(efficiency)
    if verdict == MEMORY_BOUND:
        return (
            f"memory-bound at {pct} of the {roof} roof: only moving fewer bytes helps "
            "(fuse, reuse, narrower types)"
        )
    if verdict == COMPUTE_BOUND:
        if efficiency >= NEAR_CEILING:
            return f"compute-bound at {pct} of the {roof} roof: near the ceiling"
        if limiter and limiter.startswith("matrix"):
            return (
                f"compute-bound at {pct} of the {roof} roof: schedule better (pipelining, tile "
                "shapes, occupancy) or narrow the precision"
            )
        return (
            f"compute-bound at {pct} of the {roof} roof: reach the matrix units, narrow the "
            "precision, schedule better"
        )
    if verdict == LATENCY_BOUND:
        if "vector" in flags:
            return (
                f"latency-bound as far as measured: {pct} of the nearest ({roof}) roof, but "
                "the profile has no vector FLOP counters, so arithmetic may be the limit; "
                f"collect them ({_metrics_command(vendor)}) before concluding"
            )
        if flags & {"pipe_pct", "sm_pct"}:  # ncu's SM percentages count every instruction
            return (
                f"latency-bound: {pct} of the nearest ({roof}) roof — neither DRAM bandwidth "
                "nor the SM's busiest pipe explains the time" + GENERIC_LATENCY
            )
        return (
            f"latency-bound: {pct} of the nearest ({roof}) roof — neither bandwidth nor "
            "floating-point arithmetic explains the time (integer and other instructions are "
            "not counted)" + GENERIC_LATENCY
        )
    if verdict == ABOVE_ROOF:
        return f"above the roof ({pct} of the {roof} roof): check device, clocks and units"
    if verdict == COMMUNICATION and (limiter in _COPY_LIMITERS or reason in _COPY_REASONS):
        return _copy_text(efficiency, limiter, reason)
    if verdict == COMMUNICATION:
        return _collective_text(efficiency, limiter, reason)
    if reason == Reason.NO_FLOP_COUNTERS:
        return (
            "no FLOP verdict: this GPU has no FLOP counters (as on MI100 and RDNA parts), so "
            "its arithmetic cannot be placed; DRAM traffic ran at "
            f"{_pct(dram_fraction)} of the DRAM roof"
        )
    return f"not analysable: {reason or 'unknown reason'}"


def _collective_text(efficiency: float, limiter: str | None, reason: str) -> str:
    """A collective against its link roof: NCCL's bus bandwidth as a share of the link's
    bandwidth per direction, latency-bound under collectives.LATENCY_BYTES."""
    if math.isnan(efficiency):
        return (
            "communication: a collective between GPUs (NCCL/RCCL), not placed against a link "
            f"roof ({reason or 'no bus bandwidth'}); what costs the step is its exposed part, not "
            "hidden behind computation (the timeline's breakdown)"
        )
    pct = _pct(efficiency)
    if limiter == collectives.LATENCY:
        return (
            f"latency-bound collective at {pct} of the link roof: messages under "
            f"{collectives.LATENCY_BYTES >> 20} MiB, where NCCL's time is per-step latency, not "
            "bytes over the link (a fixed threshold read off NCCL's published curves); fewer, "
            "larger collectives help (bucket them)"
        )
    roof = roof_label(limiter)
    if efficiency >= NEAR_CEILING:
        return (
            f"communication-bound at {pct} of the {roof} roof (NCCL bus bandwidth against the "
            "link's bandwidth per direction): near the link's peak; move fewer bytes (lower "
            "precision, compression) or hide it behind computation"
        )
    return (
        f"communication-bound at {pct} of the {roof} roof (NCCL bus bandwidth against the link's "
        "bandwidth per direction): the link is not the limit; look at the algorithm and protocol "
        "(ring/tree, LL/Simple), channels, contention or a slower path between the ranks (another "
        "node, PCIe); only its exposed part costs the step"
    )


def _copy_text(efficiency: float, limiter: str | None, reason: str) -> str:
    """A host copy against its host link: bytes / time as a share of the link's bandwidth per
    direction, latency-bound under hostcopies.LATENCY_BYTES."""
    if math.isnan(efficiency):
        return (
            f"communication: a host copy, not placed against a host-link roof ({reason}); what "
            "costs the step is its exposed part, not hidden behind computation"
        )
    pct = _pct(efficiency)
    if limiter == hostcopies.LATENCY:
        return (
            f"latency-bound copy at {pct} of the host link's roof: copies under "
            f"{hostcopies.LATENCY_BYTES >> 10} KiB, where the fixed cost of each copy (µs of "
            "driver and DMA set-up), not bytes over the link, is the time (a fixed threshold read "
            "off published cudaMemcpy measurements); batch them into fewer, larger copies"
        )
    roof = roof_label(limiter)
    if efficiency >= NEAR_CEILING:
        return (
            f"communication-bound at {pct} of the {roof} roof (host copy: bytes / time against "
            "the host link's bandwidth per direction): near the link's peak; copy fewer bytes, "
            "keep the data on the GPU, or overlap the copy with computation"
        )
    return (
        f"communication-bound at {pct} of the {roof} roof (host copy: bytes / time against the "
        "host link's bandwidth per direction): the link is not the limit; look at pageable "
        "host memory, small copies, or a copy on the default stream waiting for others"
    )


def _caveats(verdict: str, flags: set[str], vendor: str | None) -> str:
    """What the counters left out, named after the verdict they qualify."""
    if verdict not in (MEMORY_BOUND, COMPUTE_BOUND, LATENCY_BOUND, ABOVE_ROOF):
        return ""
    out = []
    estimates = [words for flag, words in _ESTIMATES.items() if flag in flags]
    if estimates:
        out.append(
            f"an estimate from ncu's percentages ({', '.join(estimates)}), not from counted "
            "bytes and FLOPs"
        )
    if "vector" in flags and verdict != LATENCY_BOUND:  # the latency sentence says it already
        out.append("no vector FLOP counters: vector arithmetic is not in the compute time")
    if "matrix" in flags:
        out.append("no tensor-core counters: matrix arithmetic is not in the compute time")
    if "half" in flags and vendor != "amd":
        out.append(
            "packed half math (HFMA2) counts as one FMA: FP16 FLOPs may be under-counted up to 2x"
        )
    if "fp32_assumed" in flags:
        out.append(
            "the kernel name does not say whether FP32 ran on the TF32 tensor path: FP32 vector "
            "roof assumed (PyTorch's default); if TF32 was allowed, the TF32 roof applies"
        )
    return "".join(f"; {c}" for c in out)


# The command that prints the profiler line collecting every counter rooflint reads, per vendor
# (whole literals, so that tests/test_named_commands.py finds and runs them).
_METRICS = {"nvidia": "`rooflint metrics ncu`", "amd": "`rooflint metrics rocprof`"}


def _metrics_command(vendor: str | None) -> str:
    return _METRICS["amd" if vendor == "amd" else "nvidia"]


def _pct(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    return f"{value * 100:.0f} %"
