"""Advice from the evidence: what a kernel group's own numbers say would help, most specific first.

Each rule reads facts the report already holds for a group (its launches and time, its grid, the
operator model's minimum bytes, ncu's occupancy, waves, cache throughput and warp stalls, the
device's SM or CU count and roofs) and fires only where they show the cause; each piece of advice
names the evidence it rests on. The verdict's own sentence (core/explain.py) stays, without its
generic "look at parallelism in flight" clause once a rule has spoken. The rules live by topic:
advice_memory, advice_launch, advice_compute; their records in advice_records.
"""

from __future__ import annotations

from rooflint.core import advice_compute, advice_launch, advice_memory
from rooflint.core.advice_records import Advice, Context, Rule  # noqa: F401 - the public names
from rooflint.core.verdicts import COMMUNICATION


def for_group(row: dict, context: Context | None = None) -> list[Advice]:
    """The advice for one ranked group (a ranking.KERNEL_COLUMNS row, with the launch facts and
    excess traffic where the table has them), in Rule order."""
    context = context or Context()
    copies = advice_memory.pageable(row)
    if row.get("verdict") == COMMUNICATION:  # collectives and host copies: their links' rules
        return [copies] if copies else []
    vector = advice_compute.vector_pipe(row, context)
    found = [
        advice_memory.excess_traffic(row),
        advice_memory.cache_bound(row, context),
        advice_launch.launch_bound(row),
        advice_launch.small_grid(row, context),
        advice_launch.tail_wave(row),
        advice_launch.occupancy(row),
        advice_launch.warp_stall(row),
        vector,
        None if vector else advice_compute.precision(row, context),  # one or the other
        advice_compute.matrix_clock(row, context),
        copies,
    ]
    given = [advice for advice in found if advice is not None]
    last = advice_launch.collect(row, context) if not given else None
    return given + ([last] if last else [])


def context(device, dram_fraction: float | None = None) -> Context:
    """The Context of a core.device.Device (None: an empty one)."""
    if device is None:
        return Context(dram_fraction=dram_fraction)
    return Context(
        units=device.sm_count or None,
        vendor=device.vendor,
        roofs={name: ceiling.value for name, ceiling in device.compute.items()},
        datasheet_clock_hz=device.boost_clock_hz,
        clock_measured=any(_measured(c) for c in device.compute.values()),
        dram_fraction=dram_fraction,
    )


def _measured(ceiling) -> bool:
    """Whether a roof was taken at, or scaled to, a clock the profile measured."""
    origin = ceiling.origin
    return not isinstance(origin, str) and (origin.scaled_hz > 0 or origin.origin != "datasheet")
