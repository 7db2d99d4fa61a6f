"""The analysis Result every reporter formats: launches, ranking, devices and accounting."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import analysis, coverage, display, provenance, schema, verdicts, windows
from rooflint.core.device import Device
from rooflint.core.formatting import plain
from rooflint.core.profile import Profile

# Every column of Result.launches: the canonical table, the roofline results, the kernel family.
LAUNCH_COLUMNS = list(dict.fromkeys(schema.COLUMNS + analysis.RESULT_COLUMNS + ["family"]))


@dataclass
class DeviceUse:
    """A device as used for some inputs: its final ceilings and where each came from."""

    device: Device | None  # None when no ceilings could be found
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
    # The pick has the highest roofs of the candidates: efficiencies are lower bounds, headrooms
    # upper bounds, whichever candidate the GPU is.
    highest_roofs: bool = False

    @property
    def advice(self) -> str:
        """The flag that settles a provisional device ("" when nothing is open)."""
        return "pass --device " + " or --device ".join(self.candidates) if self.provisional else ""


@dataclass(frozen=True)
class Summary:
    """The headline numbers and the accounting of a Result, worked out once, when it is made:
    every format, gate and warning reads them here."""

    total_time_s: float | None
    total_headroom_s: float | None
    time_weighted_efficiency: float | None  # None when no launch has a verdict
    verdict_time_s: dict[str, float | None]  # in the order of VERDICTS
    above_roof_launches: int
    above_roof_share: float  # of the total time (NaN when there is none)
    analysed_time_s: float  # the time the placed launches occupy (the efficiency's denominator)
    accounting: dict  # launches read = analysed + not analysable, the inputs, the coverage
    # A trace's timeline: the JSON block (core.windows.block) and its busy time, window and idle
    # time, and the headroom of launches that overlap another stream (None without a timeline).
    timeline: dict | None = None
    busy_time_s: float | None = None
    window_s: float | None = None
    idle_s: float | None = None
    overlapped_headroom_s: float | None = None
    # Launches whose verdict rests on ncu's percentages (an estimate), or that they left open
    # (the SM side only), and their share of the total time: what core.warnings names.
    estimated_launches: int = 0
    estimated_share: float = float("nan")

    @classmethod
    def of(
        cls, launches: pd.DataFrame, inputs: list[Profile], skipped, timeline=None, outside=None
    ) -> Summary:
        with np.errstate(invalid="ignore"):  # inf - inf in a hand-made table: NaN, shown as such
            return cls._of(launches, inputs, skipped, timeline, outside)

    @classmethod
    def _of(cls, launches: pd.DataFrame, inputs: list[Profile], skipped, timeline, outside):
        """The efficiency is Σ t_bound over the time the analysed launches occupy: their summed
        durations, or on a timeline the union of their intervals (kernels that share the GPU
        share its roofs); communication has a verdict but no placement."""
        duration, verdict = launches["duration_s"], launches["verdict"]
        ok = ~verdict.isin(verdicts.UNPLACED).to_numpy()
        above = verdict == verdicts.ABOVE_ROOF
        t_ok = windows.occupied_s(launches, ok) if ok.any() else 0.0
        total = duration.sum()
        times = windows.totals(timeline) if timeline else {}
        overlapped = windows.overlapped(launches) if timeline else None
        estimated = provenance.estimated(launches) & (verdict != verdicts.COMMUNICATION).to_numpy()
        return cls(
            total_time_s=plain(duration.sum(min_count=1)),
            total_headroom_s=plain(launches["headroom_s"].sum(min_count=1)),
            time_weighted_efficiency=plain(launches.loc[ok, "t_bound_s"].sum() / t_ok)
            if t_ok > 0
            else None,
            verdict_time_s={v: plain(duration[verdict == v].sum()) for v in verdicts.VERDICTS},
            above_roof_launches=int(above.sum()),
            above_roof_share=duration[above].sum() / total if total > 0 else float("nan"),
            analysed_time_s=t_ok,
            accounting=accounting(launches, inputs, skipped, outside),
            timeline=timeline,
            busy_time_s=times.get("busy_s"),
            window_s=times.get("window_s"),
            idle_s=times.get("idle_s"),
            overlapped_headroom_s=plain(launches.loc[overlapped, "headroom_s"].sum())
            if timeline
            else None,
            estimated_launches=int(estimated.sum()),
            estimated_share=duration[estimated].sum() / total if total > 0 else float("nan"),
        )

    def numbers(self) -> dict:
        """The headline figures as every format and gate shows them (JSON-safe: NaN is None)."""
        out = {
            "total_time_s": self.total_time_s,
            "total_headroom_s": self.total_headroom_s,
            "time_weighted_efficiency": self.time_weighted_efficiency,
            "verdict_time_s": dict(self.verdict_time_s),
            "above_roof_launches": self.above_roof_launches,
        }
        if self.estimated_launches:  # verdicts from ncu's percentages: said where there are any
            out.update(
                estimated_launches=self.estimated_launches,
                estimated_share=plain(self.estimated_share),
            )
        if self.timeline is not None:
            out.update(
                busy_time_s=self.busy_time_s,
                window_s=self.window_s,
                idle_s=self.idle_s,
                overlapped_headroom_s=self.overlapped_headroom_s,
            )
        return out


@dataclass(frozen=True)
class Result:
    """What a report formats. Frozen: its Summary is made with it and stays true to it (a new
    set of launches is a new Result: `dataclasses.replace(result, launches=...)`)."""

    launches: pd.DataFrame  # canonical columns + analysis.RESULT_COLUMNS + family
    kernels: pd.DataFrame  # ranking.KERNEL_COLUMNS
    group_by: str
    devices: list[DeviceUse]
    inputs: list[Profile]  # as read; each one's `launches` are its rows of `launches` (a view)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    latency_threshold: float = verdicts.LATENCY_THRESHOLD
    # Traces: each one's timeline over its window, and the analysed launches outside every
    # window (the warm-up before the profiled steps), counted apart, never in the headline;
    # a saved report's timeline block as it was written.
    timelines: list[windows.Windowed] = field(default_factory=list)
    outside: pd.DataFrame | None = None
    saved_timeline: dict | None = None
    summary: Summary = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        outside = self.outside_launches
        block = windows.block(self.timelines, outside) if self.timelines else self.saved_timeline
        summary = Summary.of(self.launches, self.inputs, self.skipped, block, outside)
        object.__setattr__(self, "summary", summary)  # frozen: set once, here

    @property
    def timeline(self) -> dict | None:
        """The JSON-ready timeline block (core.windows.block); None without a timeline."""
        return self.summary.timeline

    @property
    def outside_launches(self) -> pd.DataFrame:
        return self.outside if self.outside is not None else self.launches.iloc[:0]

    def per_source(self) -> pd.DataFrame:
        return per_source(self.launches)

    def __repr__(self) -> str:
        return _shown(self, "text")

    def _repr_html_(self) -> str:
        return _shown(self, "html")


def _shown(result: Result, how: str) -> str:
    """The view the API package installed (core/display.py); a plain one without it."""
    if display.show is None:
        return f"<rooflint.Result: {len(result.launches)} launches>"
    return display.show(result, how)


def accounting(
    launches: pd.DataFrame, inputs: list[Profile], skipped, outside: pd.DataFrame | None = None
) -> dict:
    """launches read = analysed + not analysable (+ outside the window, for traces), with the
    reasons counted."""
    outside = launches.iloc[:0] if outside is None else outside
    not_ok = launches["verdict"] == verdicts.NOT_ANALYSABLE
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
        columns=list(verdicts.VERDICTS), fill_value=0
    )
    sums = launches.groupby("source", sort=True).agg(
        launches=("duration_s", "size"),
        duration_s=("duration_s", "sum"),
        headroom_s=("headroom_s", "sum"),
    )
    return sums.join(mix).reset_index()


def device_description(result: Result) -> str:
    """The devices a result used, as "name (id)"; "no device ceilings" where none was found."""
    parts = [
        f"{u.device.name} ({u.device.id})" if u.device is not None else "no device ceilings"
        for u in result.devices
    ]
    return "; ".join(parts) or "no device"
