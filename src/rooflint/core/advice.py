"""Advice from the evidence: what a kernel group's own numbers say would help, most specific first.

Each rule reads facts the report already holds for a group (its launches and time, its grid, the
device's SM or CU count) and fires only where they show the cause; each piece of advice names
the evidence it rests on. The verdict's own sentence (core/explain.py) stays; these come after it.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

from rooflint.core.formatting import si
from rooflint.core.verdicts import LATENCY_BOUND, NOT_ANALYSABLE

# A launch this short is mostly launch overhead (a few µs on current drivers): fuse or graph it.
SHORT_LAUNCH_S = 5e-6
MANY_LAUNCHES = 50  # ... when the group has this many of them


class Rule(enum.StrEnum):
    LAUNCH_BOUND = "launch-bound"
    SMALL_GRID = "small-grid"
    PAGEABLE = "pageable-copy"


@dataclass(frozen=True)
class Advice:
    rule: Rule
    text: str
    evidence: str


def for_group(row: dict, units: int | None, vendor: str | None = None) -> list[Advice]:
    """The advice for one ranked group (a ranking.KERNEL_COLUMNS row); `units` is its device's
    SM (CU) count, None where no device was found."""
    found = [_launch_bound(row), _small_grid(row, units, vendor), _pageable(row)]
    return [advice for advice in found if advice is not None]


def _launch_bound(row: dict) -> Advice | None:
    launches, time = int(row.get("launches") or 0), _number(row.get("duration_s"))
    if row.get("verdict") not in (LATENCY_BOUND, NOT_ANALYSABLE) or launches < MANY_LAUNCHES:
        return None
    mean = time / launches
    if not mean < SHORT_LAUNCH_S:
        return None
    return Advice(
        Rule.LAUNCH_BOUND,
        f"launch-bound: {launches} launches of {si(mean, 's')} on average — fuse them into "
        "fewer kernels, or capture them in a CUDA graph",
        "launch count and durations",
    )


def _pageable(row: dict) -> Advice | None:
    """Host copies from or to pageable memory: the driver stages each through a pinned bounce
    buffer (CUDA C++ Best Practices Guide, "Pinned Memory"), two copies and no overlap."""
    count = row.get("comm_pageable")
    if count is None or not count == count or not count > 0:
        return None
    return Advice(
        Rule.PAGEABLE,
        f"pageable host memory ({int(count)} of its copies): the driver stages each copy "
        "through a pinned bounce buffer and the copy cannot overlap computation; pin the host "
        "memory (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
        "non_blocking=True",
        "the copies' names: Pageable",
    )


def _small_grid(row: dict, units: int | None, vendor: str | None) -> Advice | None:
    blocks = grid_blocks(row.get("grid"))
    if row.get("verdict") != LATENCY_BOUND or not units or blocks is None or blocks >= units:
        return None
    unit = "CUs" if vendor == "amd" else "SMs"
    return Advice(
        Rule.SMALL_GRID,
        f"its grid of {blocks} blocks leaves {units - blocks} of the {units} {unit} without "
        "work: give it more blocks (split-K, smaller tiles, several problems per launch)",
        f"the grid and the device's {unit[:-1]} count",
    )


_DIMS = re.compile(r"\d+")


def grid_blocks(grid) -> int | None:
    """Blocks in a grid written "(x, y, z)" (None where unknown)."""
    if not isinstance(grid, str):
        return None
    dims = [int(d) for d in _DIMS.findall(grid)]
    return math.prod(dims) if len(dims) == 3 else None


def _number(value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number
