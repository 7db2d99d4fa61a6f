"""GPU timelines: step windows, busy time as the union of intervals, idle time and its breakdown.

Every timeline reader (Kineto now; Nsight Systems and rocprofv3 later) gives the same columns
per launch — `start_s`, `duration_s`, `device_index`, `stream`, `kind` and, where the profiler
recorded the host call that issued it, `launch_s` — and the step annotations as `Step` records.
Busy time is the union of a device's intervals (streams that overlap count once), idle time the
window's length less it; the breakdown follows TraceLens's conventions: communication exposed
where no computation runs, memcpy exposed where neither computation nor communication runs.
All of it is sorting and cumulative maxima over columns: no Python loop per launch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core.errors import UsageError

KERNEL, MEMCPY, MEMSET, COMMUNICATION = "kernel", "memcpy", "memset", "communication"
KINDS = (KERNEL, MEMCPY, MEMSET, COMMUNICATION)
GPU_SIDE, CPU_SIDE = "gpu", "cpu"
STEPS, TRACE = "steps", "trace"  # what a window covers
STEP_NAME = re.compile(r"#(\d+)$")  # ProfilerStep#6, or an --nvtx-step range numbered so
# NCCL's and RCCL's kernels (collectives and point-to-point transfers), and PyTorch's
# symmetric-memory collectives (symm_mem: multimem / one-shot / two-shot all-reduce over NVLink).
COMMUNICATION_NAME = re.compile(
    r"^(ncclDevKernel_|ncclKernel_|rccl)"
    r"|\b(multimem_all_reduce|multimem_all_gather|one_shot_all_reduce|two_shot_all_reduce)_kernel"
)


@dataclass(frozen=True)
class Step:
    """One annotated step: `side` "gpu" for a device-side annotation (the span of the step's
    GPU work, as Kineto's gpu_user_annotation records it), "cpu" for the host range."""

    name: str
    start_s: float
    end_s: float
    side: str

    @property
    def number(self) -> int | None:
        found = STEP_NAME.search(self.name)
        return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Window:
    """What the timeline covers: `kind` "steps" (the steps named, located by the annotations of
    `side`) or "trace" (first start to last end of every launch)."""

    kind: str
    steps: tuple[str, ...]
    side: str | None
    start_s: float
    end_s: float

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class DeviceTime:
    """One device over the window (seconds); `launches` counts its launches inside."""

    device: int | None
    window_s: float
    busy_s: float
    idle_s: float
    computation_s: float
    communication_s: float
    exposed_communication_s: float
    memcpy_s: float
    exposed_memcpy_s: float
    memset_s: float
    kernel_sum_s: float
    launches: int


@dataclass(frozen=True)
class StepTime:
    """One step's own window on the GPU and its busy time (summed over devices)."""

    name: str
    start_s: float
    end_s: float
    busy_s: float
    launches: int

    @property
    def window_s(self) -> float:
        return self.end_s - self.start_s


@dataclass
class Timeline:
    """The window, each device's time in it, each step's, and what fell outside."""

    window: Window
    devices: list[DeviceTime]
    steps: list[StepTime]
    outside_launches: int
    outside_time_s: float
    inside: np.ndarray = field(repr=False, compare=False)  # per launch: in the window

    @property
    def busy_s(self) -> float:
        return float(sum(d.busy_s for d in self.devices))

    @property
    def window_s(self) -> float:
        return float(sum(d.window_s for d in self.devices))

    @property
    def idle_s(self) -> float:
        return float(sum(d.idle_s for d in self.devices))


# ---- interval arithmetic --------------------------------------------------------------------


def union_s(start: np.ndarray, end: np.ndarray) -> float:
    """Length of the union of the intervals [start, end): sorted by start, a new run begins
    where a start lies beyond every end before it."""
    if not len(start):
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(s)) - 1
    return float(np.sum(reach[last] - s[first]))


def breakdown(start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> dict[str, float]:
    """Busy time and its split for one device's intervals (kind: one of KINDS per interval).

    Exposed communication = |communication ∪ computation| − |computation|; exposed memcpy =
    |memcpy ∪ computation ∪ communication| − |computation ∪ communication|."""

    def over(*kinds: str) -> float:
        mask = np.isin(kind, kinds)
        return union_s(start[mask], end[mask])

    computation = over(KERNEL)
    compute_comm = over(KERNEL, COMMUNICATION)
    return {
        "busy_s": union_s(start, end),
        "computation_s": computation,
        "communication_s": over(COMMUNICATION),
        "exposed_communication_s": compute_comm - computation,
        "memcpy_s": over(MEMCPY),
        "exposed_memcpy_s": over(KERNEL, COMMUNICATION, MEMCPY) - compute_comm,
        "memset_s": over(MEMSET),
    }


# ---- the launches and the steps -------------------------------------------------------------


def has_timeline(launches: pd.DataFrame) -> bool:
    """A table with start times (a timeline reader's): the layer applies."""
    return "start_s" in launches and bool(np.isfinite(_floats(launches, "start_s")).any())


def kinds(activity: np.ndarray, names: np.ndarray) -> np.ndarray:
    """The kind of each GPU activity from a reader's activity ("kernel", "memcpy", "memset") and
    name: a kernel of NCCL or RCCL is communication."""
    out = np.asarray(activity, dtype=object).copy()
    kernel = out == KERNEL
    comm = np.array([bool(COMMUNICATION_NAME.search(str(n))) for n in pd.unique(names[kernel])])
    if comm.any():
        named = pd.unique(names[kernel])[comm]
        out[kernel & np.isin(names, named)] = COMMUNICATION
    return out


def parse_steps(text: str | None) -> tuple[str, int | None, int | None]:
    """`--steps` as ("all"|"none"|"range", first, last): all, none, N or A-B."""
    value = (text or "all").strip().lower()
    if value in ("all", "none"):
        return value, None, None
    found = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", value)
    if not found:
        raise UsageError(
            f"--steps {text!r}: expected all, none, a step number (6) or a range (4-6)"
        )
    first = int(found.group(1))
    last = int(found.group(2) or first)
    if last < first:
        raise UsageError(f"--steps {text!r}: the range ends before it starts; write {last}-{first}")
    return "range", first, last


def build(launches: pd.DataFrame, steps: list[Step], which: str | None = "all") -> Timeline | None:
    """The timeline of a launch table (None when it has no start times) over the steps chosen by
    `which` (see `parse_steps`); without steps, or with "none", over the whole trace."""
    if not has_timeline(launches):
        return None
    mode, first, last = parse_steps(which)
    start = _floats(launches, "start_s")
    duration = np.nan_to_num(_floats(launches, "duration_s"))
    timed = np.isfinite(start)
    chosen = [] if mode == "none" else complete_steps(steps, launches)
    if mode == "range":
        chosen = _in_range(chosen, first, last, which)
    if not chosen:
        inside = timed
        window = Window(TRACE, (), None, *_hull(start, start + duration, inside))
        owner = np.where(inside, 0, -1)
    else:
        owner, bounds, side = _members(launches, chosen, start, duration)
        inside = owner >= 0
        window = Window(
            STEPS,
            tuple(s.name for s in chosen),
            side,
            float(min(b[0] for b in bounds)),
            float(max(b[1] for b in bounds)),
        )
    return _timeline(launches, window, chosen, owner, start, duration)


# Device-side step annotations holding under this share of the launches the host-side ranges
# issued are markers, not spans: ROCm's gpu_user_annotation ProfilerStep#N on TraceLens's
# MI300X ResNet-18 trace last 16-18 µs and hold 11 of its 3,653 launches (the host-side steps
# issued all 3,653). On the CUDA traces of the fixtures both sides hold the same launches; HTA's
# MI250 minitoy's device-side step (a 1 ms span) holds 8 of its host step's 16: kept.
MARKERS_BELOW = 0.5


def complete_steps(steps: list[Step], launches: pd.DataFrame) -> list[Step]:
    """The steps to report, in order: the device-side annotations where the trace has them and
    they span the GPU work (TraceLens's choice), else the host ranges; a step with no GPU work
    (the ProfilerStep torch.profiler opens as it stops) is not a complete step."""
    named = [s for s in steps if s.number is not None and s.end_s > s.start_s]
    gpu = _distinct([s for s in named if s.side == GPU_SIDE])
    cpu = _distinct([s for s in named if s.side == CPU_SIDE])
    start = _floats(launches, "start_s")
    issued = _issue_times(launches, start)
    spans = _held(gpu, start) >= MARKERS_BELOW * _held(cpu, issued)
    pool = gpu if gpu and (spans or not cpu) else cpu
    out = []
    for step in pool:
        at = start if step.side == GPU_SIDE else issued
        if np.any((at >= step.start_s) & (at < step.end_s)):
            out.append(step)
    return out


def _held(steps: list[Step], at: np.ndarray) -> int:
    """How many launches (by their times `at`) fall in the steps."""
    inside = np.zeros(len(at), dtype=bool)
    for step in steps:
        inside |= (at >= step.start_s) & (at < step.end_s)
    return int(inside.sum())


def _distinct(steps: list[Step]) -> list[Step]:
    """One record per step name (several devices' annotations of one step: their hull)."""
    by_name: dict[str, Step] = {}
    for s in sorted(steps, key=lambda s: (s.start_s, s.name)):
        seen = by_name.get(s.name)
        by_name[s.name] = (
            s
            if seen is None
            else Step(s.name, min(seen.start_s, s.start_s), max(seen.end_s, s.end_s), s.side)
        )
    return sorted(by_name.values(), key=lambda s: s.start_s)


def _in_range(steps: list[Step], first, last, which) -> list[Step]:
    picked = [s for s in steps if first <= s.number <= last]
    if not picked:
        have = ", ".join(str(s.number) for s in steps) or "none"
        raise UsageError(
            f"--steps {which}: the trace has no complete step numbered so (its steps: {have}); "
            "pass one of them, all, or none"
        )
    return picked


def _issue_times(launches: pd.DataFrame, start: np.ndarray) -> np.ndarray:
    """When each launch was issued on the host (`launch_s`), its GPU start where not recorded."""
    if "launch_s" not in launches:
        return start
    issued = _floats(launches, "launch_s")
    return np.where(np.isfinite(issued), issued, start)


def _members(launches, chosen: list[Step], start, duration):
    """Per launch, the index of the chosen step it belongs to (-1: outside), each step's window
    and the side of the annotations used. A device-side step holds the launches that start in
    it; a host-side step the launches issued during it, and spans their GPU work."""
    side = chosen[0].side
    at = start if side == GPU_SIDE else _issue_times(launches, start)
    lows = np.array([s.start_s for s in chosen])
    highs = np.array([s.end_s for s in chosen])
    slot = np.searchsorted(lows, at, side="right") - 1
    ok = (slot >= 0) & np.isfinite(at) & np.isfinite(start)
    ok[ok] = at[ok] < highs[slot[ok]]
    owner = np.where(ok, slot, -1)
    bounds = []
    for i, step in enumerate(chosen):
        if side == GPU_SIDE:
            bounds.append((step.start_s, step.end_s))
        else:
            bounds.append(_hull(start, start + duration, owner == i))
    return owner, bounds, side


def _hull(start, end, mask) -> tuple[float, float]:
    if not mask.any():
        return (0.0, 0.0)
    return float(np.min(start[mask])), float(np.max(end[mask]))


def _timeline(launches, window: Window, chosen, owner, start, duration) -> Timeline:
    inside = owner >= 0
    lo, hi = window.start_s, window.end_s
    s, e = _relative(start, duration, lo, hi)
    device = _devices(launches)
    kind = _kinds(launches)
    devices = []
    for d in pd.unique(device[inside]).tolist():
        rows = inside & (device == d)
        parts = breakdown(s[rows], e[rows], kind[rows])
        devices.append(
            DeviceTime(
                device=None if d < 0 else int(d),
                window_s=window.length_s,
                idle_s=window.length_s - parts["busy_s"],
                kernel_sum_s=float(duration[rows].sum()),
                launches=int(rows.sum()),
                **parts,
            )
        )
    devices.sort(key=lambda t: (t.device is None, t.device or 0))
    steps = [_step_time(step, owner == i, start, duration, device) for i, step in enumerate(chosen)]
    outside = ~inside
    return Timeline(
        window,
        devices,
        steps,
        int(outside.sum()),
        float(np.nan_to_num(_floats(launches, "duration_s"))[outside].sum()),
        inside,
    )


def _relative(start, duration, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Intervals as offsets from `lo`, clipped to the window [lo, hi]: only time inside counts.
    Offsets keep the lengths exact: a trace's absolute times (~1e6 s) round each end to ~1e-9 s,
    and a kernel that overlaps nothing must add its own duration, not that plus rounding."""
    s = start - lo
    return np.clip(s, 0.0, hi - lo), np.clip(s + duration, 0.0, hi - lo)


def _step_time(step: Step, rows, start, duration, device) -> StepTime:
    end = start + duration
    lo, hi = _hull(start, end, rows) if step.side == CPU_SIDE else (step.start_s, step.end_s)
    s, e = _relative(start, duration, lo, hi)
    busy = sum(
        union_s(s[rows & (device == d)], e[rows & (device == d)])
        for d in pd.unique(device[rows]).tolist()
    )
    return StepTime(step.name, lo, hi, float(busy), int(rows.sum()))


def _floats(launches: pd.DataFrame, column: str) -> np.ndarray:
    if column not in launches:
        return np.full(len(launches), np.nan)
    return pd.to_numeric(launches[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _devices(launches: pd.DataFrame) -> np.ndarray:
    if "device_index" not in launches:
        return np.zeros(len(launches), dtype=np.int64)
    return pd.array(launches["device_index"], dtype="Int64").to_numpy(dtype=np.int64, na_value=-1)


def _kinds(launches: pd.DataFrame) -> np.ndarray:
    if "kind" not in launches:
        return np.full(len(launches), KERNEL, dtype=object)
    return launches["kind"].astype(object).fillna(KERNEL).to_numpy(dtype=object)
