"""The analysis Result every reporter formats: launches, ranking, devices and accounting."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import analysis, coverage, display, schema, verdicts
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
    analysed_time_s: float  # the time of the launches with a verdict
    accounting: dict  # launches read = analysed + not analysable, the inputs, the coverage

    @classmethod
    def of(cls, launches: pd.DataFrame, inputs: list[Profile], skipped) -> Summary:
        with np.errstate(invalid="ignore"):  # inf - inf in a hand-made table: NaN, shown as such
            return cls._of(launches, inputs, skipped)

    @classmethod
    def _of(cls, launches: pd.DataFrame, inputs: list[Profile], skipped) -> Summary:
        duration, verdict = launches["duration_s"], launches["verdict"]
        ok = verdict != verdicts.NOT_ANALYSABLE
        above = verdict == verdicts.ABOVE_ROOF
        t_ok = float(duration[ok].sum())
        total = duration.sum()
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
            accounting=accounting(launches, inputs, skipped),
        )

    def numbers(self) -> dict:
        """The headline figures as every format and gate shows them (JSON-safe: NaN is None)."""
        return {
            "total_time_s": self.total_time_s,
            "total_headroom_s": self.total_headroom_s,
            "time_weighted_efficiency": self.time_weighted_efficiency,
            "verdict_time_s": dict(self.verdict_time_s),
            "above_roof_launches": self.above_roof_launches,
        }


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
    summary: Summary = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        summary = Summary.of(self.launches, self.inputs, self.skipped)
        object.__setattr__(self, "summary", summary)  # frozen: set once, here

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


def accounting(launches: pd.DataFrame, inputs: list[Profile], skipped) -> dict:
    """launches read = analysed + not analysable, with the reasons counted."""
    not_ok = launches["verdict"] == verdicts.NOT_ANALYSABLE
    reasons = launches.loc[not_ok, "reason"].value_counts(sort=False)
    reasons = reasons[reasons > 0]  # a Categorical counts each of its categories
    reasons = dict(
        sorted(((str(k), int(v)) for k, v in reasons.items()), key=lambda kv: (-kv[1], kv[0]))
    )
    return {
        "launches_read": int(len(launches)),
        "analysed": int((~not_ok).sum()),
        "not_analysable": int(not_ok.sum()),
        "not_analysable_reasons": reasons,
        "inputs_read": len(inputs),
        "files_read": [f for p in inputs for f in (p.files or [p.source])],
        "inputs_skipped": [{"path": p, "reason": r} for p, r in skipped],
        "repairs": [f"{p.source}: {r}" for p in inputs for r in p.repairs],
        **coverage.accounting(launches),
    }


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
