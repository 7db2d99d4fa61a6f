"""One file's totals behind the headline Summary and the accounting, and totals merged.

`of(launches, outside)` counts and sums what `core.result.Summary` shows (time, headroom, the
efficiency's numerator and occupied time, time per verdict, launches above the roof and the
worst of them, estimates, the accounting and the coverage); `merge` adds the totals of several
files in input order. A Result's Summary is made from the totals of its launch table, and a
folder reduced file by file (rooflint.reduced) makes its Summary from the files' merged totals:
the same code. Occupied time is per source and device (core.windows.occupied_s), so it adds up
over files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import coverage, provenance, verdicts, windows
from rooflint.core.verdicts import NOT_ANALYSABLE


@dataclass(frozen=True)
class Worst:
    """The launch furthest above its roof: its kernel and efficiency (NaN when unknown)."""

    kernel: object  # its name (NA where the profile gave none)
    efficiency: float

    def beats(self, other: Worst | None) -> bool:
        """Whether this launch ranks before `other` (higher efficiency; NaN last)."""
        if other is None:
            return True
        if math.isnan(other.efficiency):
            return not math.isnan(self.efficiency)
        return not math.isnan(self.efficiency) and self.efficiency > other.efficiency


@dataclass
class Totals:
    """Sums and counts over launches (NaN-skipping sums, with how many values they had)."""

    launches: int = 0
    time_s: float = 0.0
    timed: int = 0  # launches with a duration
    headroom_s: float = 0.0
    headroomed: int = 0  # launches with a headroom
    t_bound_s: float = 0.0  # over the placed launches
    placed_s: float = 0.0  # the time the placed launches occupy
    verdict_time_s: dict[str, float] = field(default_factory=dict)
    above_roof_launches: int = 0
    above_roof_time_s: float = 0.0
    worst: Worst | None = None  # the launch furthest above its roof
    estimated_launches: int = 0
    estimated_time_s: float = 0.0
    overlapped_headroom_s: float = 0.0
    analysed: int = 0
    not_analysable: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    occupied_s: float = 0.0  # coverage: all launches, then those with a verdict
    occupied_analysed_s: float = 0.0
    unanalysed: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))
    graph_replay: tuple[int, float] | None = None  # (launches, time) replayed from CUDA graphs
    outside: int = 0
    outside_time_s: float = 0.0
    outside_names: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))


def of(launches: pd.DataFrame, outside: pd.DataFrame | None = None) -> Totals:
    """The totals of one analysed launch table and the launches outside its window."""
    with np.errstate(invalid="ignore"):  # inf - inf in a hand-made table: NaN, shown as such
        return _of(launches, launches.iloc[:0] if outside is None else outside)


def _of(launches: pd.DataFrame, outside: pd.DataFrame) -> Totals:
    """The efficiency is Σ t_bound over the time the analysed launches occupy: their summed
    durations, or on a timeline the union of their intervals (kernels that share the GPU
    share its roofs); communication has a verdict but no placement."""
    duration, verdict = launches["duration_s"], launches["verdict"]
    ok = ~verdict.isin(verdicts.UNPLACED).to_numpy()
    above = (verdict == verdicts.ABOVE_ROOF).to_numpy(dtype=bool, na_value=False)
    estimated = provenance.estimated(launches) & (verdict != verdicts.COMMUNICATION).to_numpy()
    not_ok = (verdict == NOT_ANALYSABLE).to_numpy()
    outside_duration = np.nan_to_num(outside["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    headroom = launches["headroom_s"]
    return Totals(
        launches=len(launches),
        time_s=_sum(duration),
        timed=int(duration.notna().sum()),
        headroom_s=_sum(headroom),
        headroomed=int(headroom.notna().sum()),
        t_bound_s=_sum(launches["t_bound_s"], ok),
        placed_s=windows.occupied_s(launches, ok) if ok.any() else 0.0,
        verdict_time_s=_verdict_times(duration, verdict),
        above_roof_launches=int(above.sum()),
        above_roof_time_s=_sum(duration, above),
        worst=_worst(launches["kernel"][above], launches["efficiency"][above]),
        estimated_launches=int(estimated.sum()),
        estimated_time_s=_sum(duration, estimated),
        overlapped_headroom_s=_sum(headroom, windows.overlapped(launches)),
        analysed=int((~not_ok).sum()),
        not_analysable=int(not_ok.sum()),
        reasons=_reasons(launches, not_ok),
        occupied_s=windows.occupied_s(launches),
        occupied_analysed_s=windows.occupied_s(launches, ~not_ok),
        unanalysed=coverage.unanalysed_times(launches, np.flatnonzero(not_ok)),
        graph_replay=_graph_replay(launches),
        outside=len(outside),
        outside_time_s=float(outside_duration.sum()),
        outside_names=windows.outside_times(outside),
    )


def _sum(column: pd.Series, rows: np.ndarray | None = None) -> float:
    """Series.sum of the column (of its `rows`, a mask, where given), NaN skipped: for float64
    in NumPy, as pandas sums it (NaN as 0, then numpy's sum of the same values in the same
    order), without a Series per mask."""
    if column.dtype != np.float64:  # a nullable or text column sums its own way
        return float((column if rows is None else column[rows]).sum())
    values = column.to_numpy()
    return float(np.nansum(values if rows is None else values[rows]))


def _verdict_times(duration: pd.Series, verdict: pd.Series) -> dict[str, float]:
    """Each verdict's summed duration, NaN skipped: Series.sum of its launches (NaN as 0, then
    numpy's sum of the same values in the same order), from the verdicts' codes in one pass."""
    if duration.dtype != np.float64:  # a nullable or text column sums its own way
        return {v: float(duration[verdict == v].sum()) for v in verdicts.VERDICTS}
    values = duration.to_numpy()
    codes, names = pd.factorize(verdict)
    code = {name: k for k, name in enumerate(names)}
    return {
        v: float(np.nansum(values[codes == code[v]])) if v in code else 0.0
        for v in verdicts.VERDICTS
    }


def _worst(kernel: pd.Series, efficiency: pd.Series) -> Worst | None:
    """Of the launches above their roof, the first of the highest efficiency (NaN only where
    all are): the first row of a stable sort by efficiency, descending, NaN last."""
    if not len(kernel):
        return None
    eff = efficiency.to_numpy(dtype=float, na_value=np.nan)
    known = np.flatnonzero(~np.isnan(eff))
    first = int(known[np.argmax(eff[known])]) if len(known) else 0
    return Worst(kernel.iloc[first], float(eff[first]))


def _reasons(launches: pd.DataFrame, not_ok: np.ndarray) -> dict[str, int]:
    if not not_ok.any():
        return {}
    counts = launches.loc[not_ok, "reason"].value_counts(sort=False)
    return {str(k): int(v) for k, v in counts.items() if v > 0}  # a Categorical counts each


def _graph_replay(launches: pd.DataFrame) -> tuple[int, float] | None:
    if "graph_replay" not in launches:
        return None
    graph = launches["graph_replay"].fillna(False).to_numpy(dtype=bool)
    return int(graph.sum()), float(launches["duration_s"][graph].sum())


def merge(parts: list[Totals]) -> Totals:
    """The totals of the joined launch tables of `parts`, in input order."""
    if len(parts) == 1:
        return parts[0]
    worst = None
    for part in parts:
        if part.worst is not None and part.worst.beats(worst):
            worst = part.worst
    replays = [p.graph_replay for p in parts if p.graph_replay is not None]
    return Totals(
        **{name: sum(getattr(p, name) for p in parts) for name in _ADDED},
        verdict_time_s={v: sum(p.verdict_time_s[v] for p in parts) for v in verdicts.VERDICTS},
        worst=worst,
        reasons=_added_counts([p.reasons for p in parts]),
        unanalysed=_added_times([p.unanalysed for p in parts]),
        graph_replay=(sum(n for n, _ in replays), sum(t for _, t in replays)) if replays else None,
        outside_names=_added_times([p.outside_names for p in parts]),
    )


_ADDED = (
    "launches",
    "time_s",
    "timed",
    "headroom_s",
    "headroomed",
    "t_bound_s",
    "placed_s",
    "above_roof_launches",
    "above_roof_time_s",
    "estimated_launches",
    "estimated_time_s",
    "overlapped_headroom_s",
    "analysed",
    "not_analysable",
    "occupied_s",
    "occupied_analysed_s",
    "outside",
    "outside_time_s",
)


def _added_counts(counts: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for each in counts:
        for key, value in each.items():
            out[key] = out.get(key, 0) + value
    return out


def _added_times(times: list[pd.Series]) -> pd.Series:
    """Time per name, summed over files, by name (as one groupby over the joined files)."""
    present = [t for t in times if len(t)]
    if not present:
        return pd.Series(dtype=float)
    return pd.concat(present).groupby(level=0).sum()


def finite(value: float) -> float | None:
    """A sum for the JSON document: None when a bad duration made it infinite."""
    return value if math.isfinite(value) else None


def coverage_block(t: Totals) -> dict:
    """The accounting's coverage entries: `time_s` (all launches), `time_analysed_s` (launches
    with a verdict), `unanalysed_top` [{name, time_s, share}] (by operator where the trace names
    one, else by kernel) and the launches replayed from CUDA graphs, counted apart. Times are
    occupied time (core.windows.occupied_s): on a timeline, busy time, overlapping streams
    counted once."""
    total = finite(t.occupied_s)
    out = {
        "time_s": total,
        "time_analysed_s": finite(t.occupied_analysed_s),
        "unanalysed_top": coverage.largest(t.unanalysed, total or 0.0),
    }
    if t.graph_replay is not None:
        out["graph_replay_launches"] = t.graph_replay[0]
        out["graph_replay_time_s"] = finite(t.graph_replay[1])
    return out


def reasons_sorted(t: Totals) -> dict[str, int]:
    """The not-analysable reasons, most launches first (ties: by name)."""
    return dict(sorted(t.reasons.items(), key=lambda kv: (-kv[1], kv[0])))


def outside_block(t: Totals) -> dict:
    return windows.outside_block(t.outside, t.outside_time_s, t.outside_names)
