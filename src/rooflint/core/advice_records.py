"""The advice's records: which rule spoke (Rule), what it says and on what evidence (Advice), and
what a rule may read of the group's device (Context)."""

from __future__ import annotations

import enum
import itertools
import math
from dataclasses import dataclass, field


class Rule(enum.StrEnum):
    """Every advice rule, most specific first: the order a group's advice is given in."""

    EXCESS_TRAFFIC = "excess-traffic"
    CACHE_BOUND = "cache-bound"
    LAUNCH_BOUND = "launch-bound"
    SMALL_GRID = "small-grid"
    TAIL_WAVE = "tail-wave"
    OCCUPANCY = "occupancy"
    WARP_STALL = "warp-stall"
    VECTOR_PIPE = "vector-pipe"
    PRECISION = "precision"
    MATRIX_CLOCK = "matrix-clock"
    PAGEABLE = "pageable-copy"
    COLLECT = "collect"  # none of the above could speak: what would let them


@dataclass(frozen=True)
class Advice:
    rule: Rule
    text: str
    evidence: str


@dataclass(frozen=True)
class Context:
    """What the rules know of the group's device: its SM (CU) count and vendor, its compute roofs
    by class (op/s), the clock its datasheet roofs are quoted at, and the group's achieved DRAM
    bandwidth as a fraction of the DRAM roof. Empty where no device was found."""

    units: int | None = None
    vendor: str | None = None
    roofs: dict[str, float] = field(default_factory=dict)
    datasheet_clock_hz: float = 0.0
    clock_measured: bool = False
    dram_fraction: float | None = None


def number(value) -> float:
    """A row's value as a float, NaN where missing or not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


# The resources whose limits bound the blocks an SM holds (ncu's launch__occupancy_limit_*), and
# the label of each set of them that can tie as the tightest: "registers and shared memory".
OCCUPANCY_RESOURCES = ("registers", "shared memory", "warps", "blocks")
LIMITERS = {
    " and ".join(subset): subset
    for size in range(1, len(OCCUPANCY_RESOURCES) + 1)
    for subset in itertools.combinations(OCCUPANCY_RESOURCES, size)
}
