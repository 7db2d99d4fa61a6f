"""Advice on how a kernel is launched: overhead, too few blocks, a last partial wave, occupancy
and what its warps wait on (ncu's launch facts: schema.LAUNCH_FACT_COLUMNS)."""

from __future__ import annotations

import math
import re

from rooflint.core import schema
from rooflint.core.advice_records import LIMITERS, Advice, Context, Rule, number
from rooflint.core.formatting import pct, ratio, si
from rooflint.core.verdicts import COMPUTE_BOUND, LATENCY_BOUND, MEMORY_BOUND, NOT_ANALYSABLE

# A launch this short is mostly launch overhead (a few µs on current drivers): fuse or graph it.
SHORT_LAUNCH_S = 5e-6
MANY_LAUNCHES = 50  # ... when the group has this many of them
# A last partial wave that leaves this much of the launch's SM time idle: worth a whole wave.
TAIL_IDLE = 0.2
MAX_TAIL_WAVES = 8  # beyond this many waves the tail is a small part of the time
LOW_OCCUPANCY = 0.5  # theoretical and achieved occupancy under this: too few warps in flight
TOP_STALL = 0.25  # a stall reason with this share of the warp cycles is worth naming
NEAR_CEILING = 0.85
FACT_NUMBERS = [c for c, d in schema.LAUNCH_FACT_DTYPES.items() if d != "category"]

# AMD's Tensile (hipBLASLt/rocBLAS `Cijk_*`) kernels are launched with the global work size, so a
# trace's grid for them counts work-items, not workgroups (MI300X traces: "(73728, 1, 1)" with
# blocks of 256 is 288 workgroups).
_WORK_ITEM_GRIDS = re.compile(r"^Cijk_")

# What each warp stall reason means and what helps, by ncu's reason names (Kernel Profiling Guide,
# "Warp Scheduler States").
STALLS = {
    "long_scoreboard": (
        "long scoreboard (waiting on L1TEX: global, local or texture memory)",
        "more independent loads in flight, prefetching, or reused data kept in shared memory",
    ),
    "short_scoreboard": (
        "short scoreboard (waiting on shared memory or special math)",
        "fewer shared-memory bank conflicts, fewer MUFU operations",
    ),
    "wait": (
        "wait (fixed-latency dependencies)",
        "more independent instructions per warp (unrolling, ILP)",
    ),
    "barrier": ("barrier (warps waiting at __syncthreads)", "balance the work between warps"),
    "mio_throttle": (
        "MIO throttle (the shared-memory instruction queue is full)",
        "fewer, wider shared-memory accesses",
    ),
    "lg_throttle": (
        "LG throttle (the global/local memory queue is full)",
        "fewer, wider (vectorised) memory instructions",
    ),
    "math_pipe_throttle": (
        "math pipe throttle (a math pipe is saturated)",
        "the pipe is the limit: spread the work over other pipes or the tensor units",
    ),
    "imc_miss": ("IMC miss (constant cache misses)", "fewer distinct constants per warp"),
    "no_instruction": ("no instruction (instruction cache misses)", "smaller hot loops"),
    "no_instructions": ("no instruction (instruction cache misses)", "smaller hot loops"),
    "branch_resolving": ("branch resolving", "fewer divergent branches"),
    "tex_throttle": ("texture throttle", "fewer texture fetches"),
    "membar": ("memory barrier", "fewer memory fences"),
    "dispatch_stall": ("dispatch stall", "look at the pipeline's dispatch conflicts"),
    "drain": ("drain (memory writes at exit)", "fewer writes at the kernel's end"),
    "sleeping": ("sleeping", "fewer nanosleep/yield calls"),
    "not_selected": ("not selected (eligible, the scheduler issued another warp)", "none needed"),
    "misc": ("misc", "see ncu's warp state section"),
}
OCCUPANCY_FIXES = {
    "registers": "fewer registers per thread (__launch_bounds__, -maxrregcount)",
    "shared memory": "less shared memory per block (smaller tiles, fewer pipeline stages)",
    "warps": "smaller blocks",
    "blocks": "larger blocks (more threads per block)",
}


def launch_bound(row: dict) -> Advice | None:
    launches, time = int(row.get("launches") or 0), number(row.get("duration_s"))
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


def small_grid(row: dict, context: Context) -> Advice | None:
    blocks = workgroups(row, context.vendor)
    units = context.units
    if row.get("verdict") != LATENCY_BOUND or not units or blocks is None or blocks >= units:
        return None
    amd = context.vendor == "amd"
    unit, block = ("CUs", "workgroups") if amd else ("SMs", "blocks")
    return Advice(
        Rule.SMALL_GRID,
        f"its grid of {blocks} {block} leaves {units - blocks} of the {units} {unit} without "
        f"work: give it more {block} (split-K, smaller tiles, several problems per launch)",
        f"the grid and the device's {unit[:-1]} count",
    )


def workgroups(row: dict, vendor: str | None) -> int | None:
    """Blocks (workgroups) in the group's grid; an AMD Tensile kernel's grid counts work-items,
    divided by its workgroup size."""
    blocks = grid_blocks(row.get("grid"))
    kernel = row.get("kernel")
    if blocks is None or vendor != "amd" or not isinstance(kernel, str):
        return blocks
    size = grid_blocks(row.get("block"))
    if _WORK_ITEM_GRIDS.match(kernel) and size and blocks % size == 0:
        return blocks // size
    return blocks


def tail_wave(row: dict) -> Advice | None:
    waves = number(row.get("waves"))
    if not 1 <= waves <= MAX_TAIL_WAVES or number(row.get("efficiency")) >= NEAR_CEILING:
        return None
    if row.get("verdict") not in (LATENCY_BOUND, MEMORY_BOUND, COMPUTE_BOUND):
        return None
    filled = waves - math.floor(waves)
    idle = (1 - filled) / math.ceil(waves) if filled > 0 else 0.0
    if idle < TAIL_IDLE:
        return None
    return Advice(
        Rule.TAIL_WAVE,
        f"tail effect: {ratio(waves, 3)} waves per SM — the last wave fills {pct(filled)} of "
        f"the SMs, so {pct(idle)} of the launch's SM time is idle: size the grid to whole waves "
        "(or a persistent kernel)",
        "ncu's waves per SM",
    )


def occupancy(row: dict) -> Advice | None:
    """Too few warps: a resource (or several, tied) holds the blocks per SM down."""
    limiter = row.get("occupancy_limiter")
    theoretical = number(row.get("occupancy_theoretical"))
    achieved = number(row.get("occupancy_achieved"))
    if row.get("verdict") != LATENCY_BOUND or limiter not in LIMITERS:
        return None
    if not theoretical < LOW_OCCUPANCY or achieved >= LOW_OCCUPANCY:  # achieved may be unknown
        return None
    blocks = number(row.get("occupancy_limit_blocks"))
    after = number(row.get("occupancy_limit_next"))
    nxt = f", against {after:.0f} by the next limit" if after == after else ""
    got = f", achieved {pct(achieved)}" if achieved == achieved else ""
    fixes = [OCCUPANCY_FIXES[r] for r in LIMITERS[limiter]]
    registers = number(row.get("registers_per_thread"))
    if "registers" in LIMITERS[limiter] and registers > 0:
        fixes[0] += f", now {registers:.0f} per thread"
    verb = "allows" if len(LIMITERS[limiter]) == 1 else "allow"
    return Advice(
        Rule.OCCUPANCY,
        f"occupancy: {limiter} {verb} {blocks:.0f} block{'' if blocks == 1 else 's'} per SM{nxt} "
        "— theoretical occupancy "
        f"{pct(theoretical)}{got}, too few warps to hide latency: {'; '.join(fixes)}",
        "ncu's block limits and occupancy",
    )


def warp_stall(row: dict) -> Advice | None:
    reason, share = row.get("stall_top"), number(row.get("stall_share"))
    if row.get("verdict") != LATENCY_BOUND or reason not in STALLS or not share >= TOP_STALL:
        return None
    words, fix = STALLS[reason]
    return Advice(
        Rule.WARP_STALL,
        f"warps stall most on {words}: {pct(share)} of the sampled warp cycles — {fix}",
        "ncu's warp stall reasons",
    )


def collect(row: dict, context: Context) -> Advice | None:
    """A latency-bound NVIDIA group whose profile has none of ncu's launch facts: which command
    collects them (the verdict's own line then leaves out its generic list)."""
    flags = str(row.get("unmeasured") or "").split(",")
    if row.get("verdict") != LATENCY_BOUND or context.vendor != "nvidia" or "vector" in flags:
        return None
    if any(number(row.get(c)) == number(row.get(c)) for c in FACT_NUMBERS):
        return None
    return Advice(
        Rule.COLLECT,
        "to see why, collect ncu's launch statistics, occupancy and warp-state sections "
        "(`rooflint metrics ncu` prints the command)",
        "what the profile lacks: occupancy, waves, warp stalls",
    )


_DIMS = re.compile(r"\d+")


def grid_blocks(grid) -> int | None:
    """Blocks in a grid written "(x, y, z)" (None where unknown)."""
    if not isinstance(grid, str):
        return None
    dims = [int(d) for d in _DIMS.findall(grid)]
    return math.prod(dims) if len(dims) == 3 else None
