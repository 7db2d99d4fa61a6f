"""A Result's timeline figures: busy time, what has a verdict, overlap, and what fell outside.

Time on a timeline is occupied time: the union of the launches' intervals per input and device
(streams that overlap count once); launches without start times (a counter export) add their
durations, as before. Coverage and efficiency are shares of it, so a report of a trace speaks of
the window's busy time, not of a sum over streams.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rooflint.core import names, ranks, timeline
from rooflint.core.formatting import pct, si
from rooflint.core.timeline import Timeline

TOP = 5


@dataclass
class Windowed:
    """One input's timeline: its source and what `core.timeline.build` made of it."""

    source: str
    timeline: Timeline
    ranked: ranks.RankTrace | None = None  # a rank of a job: its time and its collectives


def rank_trace(
    source: str, rank: ranks.Rank, built: Timeline, rows: pd.DataFrame
) -> ranks.RankTrace:
    """One rank's time over its window and its collectives inside it (host-clock starts)."""
    comm = built.inside & (rows["kind"].astype(object) == timeline.COMMUNICATION).to_numpy()
    picked = rows.loc[comm, ["kernel", "start_s", "duration_s"]]
    collectives = pd.DataFrame(
        {
            "kernel": picked["kernel"].astype(object).to_numpy(),
            "start_s": picked["start_s"].to_numpy(dtype=float) + rank.origin_s,
            "duration_s": picked["duration_s"].to_numpy(dtype=float),
        }
    ).sort_values("start_s", kind="stable")
    devices = built.devices
    return ranks.RankTrace(
        source=source,
        rank=rank,
        busy_s=float(sum(d.busy_s for d in devices)),
        idle_s=float(sum(d.idle_s for d in devices)),
        window_s=float(sum(d.window_s for d in devices)),
        communication_s=float(sum(d.communication_s for d in devices)),
        exposed_communication_s=float(sum(d.exposed_communication_s for d in devices)),
        steps={s.name: s.window_s for s in built.steps},
        collectives=collectives,
    )


def occupied_s(launches: pd.DataFrame, mask: np.ndarray | None = None) -> float:
    """The time the launches (all, or those selected by `mask`) occupy: the union of their
    intervals per source and device where they have start times, their summed durations where
    they have none."""
    mask = np.ones(len(launches), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    duration = np.nan_to_num(launches["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    if "start_s" not in launches:
        return float(duration[mask].sum())
    start = pd.to_numeric(launches["start_s"], errors="coerce").to_numpy(dtype=float)
    timed = mask & np.isfinite(start)
    total = float(duration[mask & ~timed].sum())
    keys = _lanes(launches)
    for lane in np.unique(keys[timed]).tolist():
        rows = timed & (keys == lane)
        offset = start[rows] - start[rows].min()  # lengths exact (see timeline._relative)
        total += timeline.union_s(offset, offset + duration[rows])
    return total


def overlapped(launches: pd.DataFrame) -> np.ndarray:
    """Per launch: whether it runs at the same time as a launch of another stream on its device
    (its headroom is then an upper bound on what the window gains)."""
    out = np.zeros(len(launches), dtype=bool)
    if "start_s" not in launches or "stream" not in launches:
        return out
    start = pd.to_numeric(launches["start_s"], errors="coerce").to_numpy(dtype=float)
    end = start + np.nan_to_num(launches["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    stream = pd.array(launches["stream"], dtype="Int64").to_numpy(dtype=np.int64, na_value=-1)
    lanes = _lanes(launches)
    timed = np.isfinite(start)
    for lane in np.unique(lanes[timed]).tolist():
        here = timed & (lanes == lane)
        for s in np.unique(stream[here]).tolist():
            mine, others = here & (stream == s), here & (stream != s)
            if others.any():
                out[mine] = _hits(start[mine], end[mine], start[others], end[others])
    return out


def _hits(start, end, other_start, other_end) -> np.ndarray:
    """Whether each [start, end) meets the union of the other intervals (as merged runs)."""
    order = np.argsort(other_start, kind="stable")
    s, e = other_start[order], np.maximum.accumulate(other_end[order])
    # the last other interval starting before `end`: the runs' running maximum end covers it
    at = np.searchsorted(s, end, side="left") - 1
    ok = at >= 0
    hit = np.zeros(len(start), dtype=bool)
    hit[ok] = e[at[ok]] > start[ok]
    return hit


def _lanes(launches: pd.DataFrame) -> np.ndarray:
    """A code per (source, device): the lanes whose intervals are joined."""
    device = (
        pd.array(launches["device_index"], dtype="Int64").to_numpy(dtype=np.int64, na_value=-1)
        if "device_index" in launches
        else np.zeros(len(launches), dtype=np.int64)
    )
    source = pd.factorize(launches["source"])[0] if "source" in launches else 0
    return np.asarray(source, dtype=np.int64) * (int(device.max(initial=0)) + 2) + device + 1


def outside(launches: pd.DataFrame, top: int = TOP) -> dict:
    """The launches outside the window: how many, their time, the largest by name."""
    duration = np.nan_to_num(launches["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    return outside_block(len(launches), float(duration.sum()), outside_times(launches), top)


def outside_times(launches: pd.DataFrame) -> pd.Series:
    """The time of the launches per name (operator, else short kernel name), by name."""
    if not len(launches):
        return pd.Series(dtype=float)
    duration = np.nan_to_num(launches["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    return pd.Series(duration).groupby(_labels(launches)).sum()


def outside_block(count: int, total: float, times: pd.Series, top: int = TOP) -> dict:
    """The `outside_window` entry from the launches' count, time and time per name."""
    times = times.sort_values(ascending=False, kind="mergesort")
    return {
        "launches": int(count),
        "time_s": total,
        "largest": [
            {"name": str(k), "time_s": float(v), "share": float(v / total) if total else None}
            for k, v in times[times > 0].head(top).items()
        ],
    }


def _labels(launches: pd.DataFrame) -> np.ndarray:
    """The operator where the trace names one, else the kernel's short name."""
    codes, kernels = pd.factorize(launches["kernel"].astype(object).fillna("(unnamed)"))
    short = np.array([names.short_name(str(k)) for k in kernels], dtype=object)
    label = short[codes] if len(codes) else np.array([], dtype=object)
    if "op" in launches:
        op = launches["op"].astype(object).to_numpy()
        label = np.where(pd.isna(op), label, op)
    return label.astype(object)


def block(windowed: list[Windowed], outside_launches: pd.DataFrame | dict) -> dict | None:
    """The JSON `timeline` block (None without a timeline): the window, each device's busy time
    and breakdown, the steps, and the launches outside."""
    if not windowed:
        return None
    first = windowed[0].timeline.window
    steps = [s for w in windowed for s in w.timeline.steps]
    busy = [s.busy_s for s in steps]
    return {
        "window": {
            "kind": first.kind,
            "steps": list(first.steps),
            "annotation": first.side,
            "start_s": first.start_s,
            "end_s": first.end_s,
            "traces": len(windowed),
            "alike": all(_alike(w.timeline.window, first) for w in windowed),
        },
        "devices": [
            {"source": w.source, **_device(d)} for w in windowed for d in w.timeline.devices
        ],
        "steps": {
            "count": len(steps),
            "busy_mean_s": float(np.mean(busy)) if busy else None,
            "busy_min_s": float(np.min(busy)) if busy else None,
            "busy_max_s": float(np.max(busy)) if busy else None,
            "each": [
                {"name": s.name, "window_s": s.window_s, "busy_s": s.busy_s, "launches": s.launches}
                for s in steps
            ],
        },
        "outside_window": outside_launches
        if isinstance(outside_launches, dict)  # already counted (core.totals)
        else outside(outside_launches),
        **_ranks(windowed),
    }


def _alike(window: timeline.Window, other: timeline.Window) -> bool:
    """Whether two traces' windows are described alike (same kind, steps and annotation)."""
    return (window.kind, tuple(window.steps), window.side) == (
        other.kind,
        tuple(other.steps),
        other.side,
    )


def _ranks(windowed: list[Windowed]) -> dict:
    """The `ranks` entry, for traces of a distributed job (none otherwise)."""
    found = ranks.block([w.ranked for w in windowed if w.ranked is not None])
    return {"ranks": found} if found else {}


DEVICE_FIELDS = (
    "device",
    "window_s",
    "busy_s",
    "idle_s",
    "computation_s",
    "communication_s",
    "exposed_communication_s",
    "memcpy_s",
    "exposed_memcpy_s",
    "memset_s",
    "kernel_sum_s",
)


def _device(d: timeline.DeviceTime) -> dict:
    return {k: getattr(d, k) for k in DEVICE_FIELDS}


def totals(block_: dict) -> dict:
    """Busy, window and idle time summed over the block's devices, and each part of the
    breakdown."""
    devices = block_["devices"]
    return {k: float(sum(d[k] for d in devices)) for k in DEVICE_FIELDS if k != "device"}


def step_time_s(block_: dict | None) -> float | None:
    """The time a diff compares: the mean busy time per step, else the window's busy time."""
    if not block_:
        return None
    steps = block_["steps"]
    if steps["count"]:
        return steps["busy_mean_s"]
    return totals(block_)["busy_s"]


# ---- the headline lines, the same in every format -------------------------------------------


def window_text(block_: dict) -> str:
    """ "window ProfilerStep#6 (GPU-side annotation)", "window ProfilerStep#4 to #6 (3 steps,
    host-side annotations)" or "trace (its first GPU activity to its last; no step chosen)";
    for several traces, said to be summed over them, and never named by one trace's steps
    where theirs differ."""
    window = block_["window"]
    traces = window.get("traces", 1)
    if not window.get("alike", True):
        return f"windows of {traces} traces, summed (each trace's own steps, which differ)"
    text = _one_window(window)
    return text if traces == 1 else f"{text}, summed over {traces} traces"


def _one_window(window: dict) -> str:
    if window["kind"] == timeline.TRACE:
        return "trace (its first GPU activity to its last; no profiler step chosen)"
    steps = window["steps"]
    side = "GPU-side" if window["annotation"] == timeline.GPU_SIDE else "host-side"
    if len(steps) == 1:
        return f"window {steps[0]} ({side} annotation)"
    last = steps[-1].rsplit("#", 1)[-1]
    return f"window {steps[0]} to #{last} ({len(steps)} steps, {side} annotations)"


def headline(summary: dict, block_: dict, untimed: int = 0) -> str:
    """ "busy 31.9 ms of the 34.9 ms window ProfilerStep#6 (GPU-side annotation), idle 8.6 %";
    where `untimed` inputs (profiles without a timeline) were read beside the traces, the
    launches' summed time of all inputs follows, since the window holds only the traces'."""
    idle = summary["idle_s"] / summary["window_s"] if summary["window_s"] else float("nan")
    text = (
        f"busy {si(summary['busy_time_s'], 's')} of the {si(summary['window_s'], 's')} "
        f"{window_text(block_)}, idle {pct(idle, 1)}"
    )
    if untimed:
        inputs = "input" if untimed == 1 else "inputs"
        text += (
            f"; with {untimed} {inputs} without a timeline, launches total "
            f"{si(summary['total_time_s'], 's')}"
        )
    return text


def untimed(result) -> int:
    """How many of a Result's inputs have no timeline beside those that do (0 without one)."""
    if result.timeline is None:
        return 0
    timed = {d["source"] for d in result.timeline["devices"]}
    return sum(1 for p in result.inputs if p.source not in timed)


def covers_all(result) -> bool:
    """Whether a Result's launches all lie on a timeline (its traces, and no other input)."""
    return result.timeline is not None and not untimed(result)


def breakdown_line(block_: dict) -> str:
    """The busy time's split, in one line."""
    t = totals(block_)
    return (
        f"busy time: computation {si(t['computation_s'], 's')}, communication "
        f"{si(t['communication_s'], 's')} (exposed {si(t['exposed_communication_s'], 's')}), "
        f"memcpy {si(t['memcpy_s'], 's')} (exposed {si(t['exposed_memcpy_s'], 's')}), memset "
        f"{si(t['memset_s'], 's')}; kernels summed over streams {si(t['kernel_sum_s'], 's')}"
    )


def steps_line(block_: dict) -> str | None:
    """Per-step busy time when the window holds several steps."""
    steps = block_["steps"]
    if steps["count"] < 2:
        return None
    traces = block_["window"].get("traces", 1)
    pooled = f" pooled over {traces} traces" if traces > 1 else ""
    return (
        f"per step ({steps['count']} steps{pooled}): busy mean "
        f"{si(steps['busy_mean_s'], 's')}, min {si(steps['busy_min_s'], 's')}, "
        f"max {si(steps['busy_max_s'], 's')}"
    )


def outside_line(accounting: dict) -> str | None:
    """The launches outside the window, named apart."""
    out = accounting.get("outside_window")
    if not out:
        return None
    largest = ", ".join(f"{x['name']} {si(x['time_s'], 's')}" for x in out["largest"])
    return (
        f"outside the window: {out['launches']} launches, {si(out['time_s'], 's')}, not in the "
        "headline, coverage or ranking (--steps none reports the whole trace)"
        + (f"; largest: {largest}" if largest else "")
    )


def overlap_text(summary: dict) -> str:
    """ "; 12 µs of it on kernels that overlap other streams (...)" or ""."""
    overlapped = summary.get("overlapped_headroom_s")
    if not overlapped:
        return ""
    return (
        f" ({si(overlapped, 's')} of it on kernels overlapping other streams: an upper bound on "
        "what the window gains)"
    )
