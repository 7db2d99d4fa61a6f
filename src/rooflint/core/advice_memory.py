"""Advice on memory traffic: bytes moved beyond the operator's minimum, a cache as the limiter."""

from __future__ import annotations

from rooflint.core.advice_records import Advice, Context, Rule, number
from rooflint.core.formatting import pct, ratio
from rooflint.core.verdicts import LATENCY_BOUND, MEMORY_BOUND

# Measured DRAM bytes this many times the operator's minimum: the data is read again and again.
EXCESS = 4.0
# A cache this busy (fraction of its peak) while DRAM ran under CACHE_DRAM_BELOW of its roof.
CACHE_BUSY = 0.8
CACHE_DRAM_BELOW = 0.5


def excess_traffic(row: dict) -> Advice | None:
    """Measured DRAM bytes many times the minimum, where memory may set the time: a
    compute-bound kernel's time is its arithmetic, so fewer bytes would not shorten it (its
    traffic/min column still shows the ratio)."""
    excess = number(row.get("excess_traffic"))
    if row.get("verdict") not in (LATENCY_BOUND, MEMORY_BOUND) or not excess >= EXCESS:
        return None
    return Advice(
        Rule.EXCESS_TRAFFIC,
        f"moves {ratio(excess, 2)}× the DRAM bytes its shapes need: the data is re-read — tile "
        "for reuse (larger tiles, a rasterisation that keeps tiles in L2) or fix the access "
        "pattern",
        "measured DRAM bytes against the operator's minimum from its shapes",
    )


def cache_bound(row: dict, context: Context) -> Advice | None:
    """L1 or L2 the busiest level, near its peak, while DRAM is not."""
    if row.get("verdict") not in (LATENCY_BOUND, MEMORY_BOUND) or context.dram_fraction is None:
        return None
    levels = {"L1": number(row.get("l1_throughput")), "L2": number(row.get("l2_throughput"))}
    level, busy = max(levels.items(), key=lambda kv: kv[1] if kv[1] == kv[1] else -1.0)
    if not busy >= CACHE_BUSY or not context.dram_fraction < CACHE_DRAM_BELOW:
        return None
    fix = (
        "shared-memory tiling that reuses loads, fewer redundant loads, wider (vectorised) accesses"
        if level == "L1"
        else "tiles that fit in L1/shared memory, fewer passes over the data"
    )
    return Advice(
        Rule.CACHE_BOUND,
        f"cache-bound: {level} throughput at {pct(busy)} of its peak while DRAM runs at "
        f"{pct(context.dram_fraction)} of its roof — the limit is {level}, not DRAM: {fix}",
        f"ncu's {level} throughput % and the achieved DRAM bandwidth",
    )


def pageable(row: dict) -> Advice | None:
    """Host copies from or to pageable memory: the driver stages each through a pinned bounce
    buffer (CUDA C++ Best Practices Guide, "Pinned Memory"), two copies and no overlap."""
    count = number(row.get("comm_pageable"))
    if not count > 0:
        return None
    return Advice(
        Rule.PAGEABLE,
        f"pageable host memory ({int(count)} of its copies): the driver stages each copy "
        "through a pinned bounce buffer and the copy cannot overlap computation; pin the host "
        "memory (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
        "non_blocking=True",
        "the copies' names: Pageable",
    )
