"""The analysis Result every reporter formats: launches, ranking, devices and accounting."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rooflint.core import analysis, coverage, schema, windows
from rooflint.core.formatting import plain
from rooflint.core.profile import Profile

# Every column of Result.launches: the canonical table, the roofline results, the kernel family.
LAUNCH_COLUMNS = list(dict.fromkeys(schema.COLUMNS + analysis.RESULT_COLUMNS + ["family"]))


@dataclass
class DeviceUse:
    """A device as used for some inputs: its final ceilings and where each came from."""

    device: object  # rooflint.hardware.Device, or None when no ceilings could be found
    provenance: list[str]
    sources: list[str]
    # The device each source was analysed with: same id, but each profile's own clock and peaks.
    by_source: dict[str, object] = field(default_factory=dict)
    # How the device was identified: the deciding evidence in one line and, when the evidence
    # leaves parts with other ceilings open, their ids (the pick first); verdicts are then
    # provisional until the user passes --device.
    evidence: str = ""
    candidates: list[str] = field(default_factory=list)
    provisional: bool = False

    @property
    def advice(self) -> str:
        """The flag that settles a provisional device ("" when nothing is open)."""
        return "pass --device " + " or --device ".join(self.candidates) if self.provisional else ""


@dataclass
class Result:
    launches: pd.DataFrame  # canonical columns + analysis.RESULT_COLUMNS + family
    kernels: pd.DataFrame  # ranking.KERNEL_COLUMNS
    group_by: str
    devices: list[DeviceUse]
    inputs: list[Profile]  # as read; each one's `launches` are its rows of `launches` (a view)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    latency_threshold: float = analysis.LATENCY_THRESHOLD
    # Traces: each one's timeline over its window, and the analysed launches outside every
    # window (the warm-up before the profiled steps), counted apart, never in the headline.
    timelines: list[windows.Windowed] = field(default_factory=list)
    outside: pd.DataFrame | None = None
    saved_timeline: dict | None = None  # the block of a saved report, as it was written
    _accounted: tuple = field(default=(), repr=False, compare=False)

    @property
    def timeline(self) -> dict | None:
        """The JSON-ready timeline block (core.windows.block); None without a timeline."""
        if not self.timelines:
            return self.saved_timeline
        return windows.block(self.timelines, self.outside_launches)

    @property
    def outside_launches(self) -> pd.DataFrame:
        return self.outside if self.outside is not None else self.launches.iloc[:0]

    @property
    def accounting(self) -> dict:
        """Computed once per set of launches, inputs and skipped files (every format asks)."""
        key = (id(self.launches), len(self.launches), id(self.inputs), id(self.skipped))
        if not self._accounted or self._accounted[0] != key:
            self._accounted = (
                key,
                accounting(self.launches, self.inputs, self.skipped, self.outside_launches),
            )
        return self._accounted[1]

    def per_source(self) -> pd.DataFrame:
        return per_source(self.launches)

    def __repr__(self) -> str:
        from rooflint.core import notebook

        return notebook.text(self)

    def _repr_html_(self) -> str:
        from rooflint.core import notebook

        return notebook.html(self)


def accounting(
    launches: pd.DataFrame, inputs: list[Profile], skipped, outside: pd.DataFrame | None = None
) -> dict:
    """launches read = analysed + not analysable (+ outside the window, for traces), with the
    reasons counted."""
    outside = launches.iloc[:0] if outside is None else outside
    not_ok = launches["verdict"] == analysis.NOT_ANALYSABLE
    reasons = launches.loc[not_ok, "reason"].value_counts(sort=False)
    reasons = reasons[reasons > 0]  # a Categorical counts each of its categories
    reasons = dict(
        sorted(((str(k), int(v)) for k, v in reasons.items()), key=lambda kv: (-kv[1], kv[0]))
    )
    out = {
        "launches_read": int(len(launches) + len(outside)),
        "analysed": int((~not_ok).sum()),
        "not_analysable": int(not_ok.sum()),
        "not_analysable_reasons": reasons,
        "inputs_read": len(inputs),
        "files_read": [f for p in inputs for f in (p.files or [p.source])],
        "inputs_skipped": [{"path": p, "reason": r} for p, r in skipped],
        "repairs": [f"{p.source}: {r}" for p in inputs for r in p.repairs],
        **coverage.accounting(launches),
    }
    if len(outside):
        out["outside_window"] = windows.outside(outside)
    return out


def per_source(launches: pd.DataFrame) -> pd.DataFrame:
    """Time, headroom and verdict mix per input file."""
    mix = pd.crosstab(launches["source"], launches["verdict"]).reindex(
        columns=list(analysis.VERDICTS), fill_value=0
    )
    sums = launches.groupby("source", sort=True).agg(
        launches=("duration_s", "size"),
        duration_s=("duration_s", "sum"),
        headroom_s=("headroom_s", "sum"),
    )
    return sums.join(mix).reset_index()


def summary_numbers(result: Result) -> dict:
    """The headline figures every format and gate shows (JSON-safe: NaN becomes None). The
    efficiency is Σ t_bound over the time the analysed launches occupy: their summed durations,
    or on a timeline the union of their intervals (kernels that share the GPU share its roofs)."""
    launches = result.launches
    ok = ~launches["verdict"].isin(analysis.UNPLACED).to_numpy()
    t_ok = windows.occupied_s(launches, ok) if ok.any() else 0.0
    by_verdict = {
        v: plain(launches.loc[launches["verdict"] == v, "duration_s"].sum())
        for v in analysis.VERDICTS
    }
    out = {
        "total_time_s": plain(launches["duration_s"].sum(min_count=1)),
        "total_headroom_s": plain(launches["headroom_s"].sum(min_count=1)),
        "time_weighted_efficiency": plain(launches.loc[ok, "t_bound_s"].sum() / t_ok)
        if t_ok > 0
        else None,
        "verdict_time_s": by_verdict,
        "above_roof_launches": int((launches["verdict"] == analysis.ABOVE_ROOF).sum()),
    }
    block = result.timeline
    if block is not None:
        times = windows.totals(block)
        overlapped = windows.overlapped(launches)
        out.update(
            busy_time_s=times["busy_s"],
            window_s=times["window_s"],
            idle_s=times["idle_s"],
            overlapped_headroom_s=plain(launches.loc[overlapped, "headroom_s"].sum()),
        )
    return out


def device_description(result: Result) -> str:
    """The devices a result used, as "name (id)"; "no device ceilings" where none was found."""
    parts = [
        f"{u.device.name} ({u.device.id})" if u.device is not None else "no device ceilings"
        for u in result.devices
    ]
    return "; ".join(parts) or "no device"
