"""The analysis Result every reporter formats: launches, ranking, devices and accounting."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import analysis, display, partials, pieces, schema, totals, verdicts, windows
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

    launches: int = 0  # the launches of the ranking (in the window, on a timeline)
    worst_above_roof: totals.Worst | None = None  # what --fail-if-above-roof names

    @classmethod
    def from_totals(
        cls,
        t: totals.Totals,
        inputs: list[Profile],
        skipped,
        timelines: list[windows.Windowed],
        saved_timeline: dict | None = None,
    ) -> Summary:
        """The Summary of launches whose totals are `t` (one table's, or a folder's merged), on
        the `timelines` of their traces (else a saved report's timeline block, as written)."""
        outside = totals.outside_block(t)  # the launches outside the windows, grouped once
        timeline = windows.block(timelines, outside) if timelines else saved_timeline
        with np.errstate(invalid="ignore", divide="ignore"):
            share = lambda time: time / t.time_s if t.time_s > 0 else float("nan")  # noqa: E731
            times = windows.totals(timeline) if timeline else {}
            return cls(
                total_time_s=plain(t.time_s) if t.timed else None,
                total_headroom_s=plain(t.headroom_s) if t.headroomed else None,
                time_weighted_efficiency=plain(t.t_bound_s / t.placed_s)
                if t.placed_s > 0
                else None,
                verdict_time_s={v: plain(t.verdict_time_s[v]) for v in verdicts.VERDICTS},
                above_roof_launches=t.above_roof_launches,
                above_roof_share=share(t.above_roof_time_s),
                analysed_time_s=t.placed_s,
                accounting=accounting_of(t, inputs, skipped, outside),
                timeline=timeline,
                busy_time_s=times.get("busy_s"),
                window_s=times.get("window_s"),
                idle_s=times.get("idle_s"),
                overlapped_headroom_s=plain(t.overlapped_headroom_s) if timeline else None,
                estimated_launches=t.estimated_launches,
                estimated_share=share(t.estimated_time_s),
                launches=t.launches,
                worst_above_roof=t.worst,
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
    # A folder reduced file by file (rooflint.reduced): its launches' merged totals, the Summary
    # made from them; `launches` is then an empty table of their columns.
    totals: totals.Totals | None = field(default=None, repr=False, compare=False)
    # Such a folder's launch rows, kept on disk a file's table each (rooflint.spill), for the
    # formats that write every row: `launch_pieces` reads them back one at a time.
    pieces: pieces.Pieces | None = field(default=None, repr=False, compare=False)
    # The partial sums the ranking ranks, and each device's (core.partials.by_device): what a
    # chart places and draws roofs from (core.views), with or without the launches.
    partial: partials.Partial | None = field(default=None, repr=False, compare=False)
    device_partials: dict | None = field(default=None, repr=False, compare=False)
    summary: Summary = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.totals is not None:  # a folder reduced file by file: its merged totals
            summary = Summary.from_totals(self.totals, self.inputs, self.skipped, self.timelines)
        else:
            summary = Summary.from_totals(
                _totals(self.launches, self.outside_launches, self.inputs),
                self.inputs,
                self.skipped,
                self.timelines,
                self.saved_timeline,
            )
        object.__setattr__(self, "summary", summary)  # frozen: set once, here

    @property
    def timeline(self) -> dict | None:
        """The JSON-ready timeline block (core.windows.block); None without a timeline."""
        return self.summary.timeline

    @property
    def outside_launches(self) -> pd.DataFrame:
        return self.outside if self.outside is not None else self.launches.iloc[:0]

    @property
    def launch_count(self) -> int:
        """The rows of `launch_pieces` (those of `launches`, or of a folder's pieces)."""
        return self.pieces.count if self.pieces is not None else len(self.launches)

    def launch_pieces(self) -> Iterator[pd.DataFrame]:
        """The launch rows a table at a time, in input order: `launches` whole, or a folder
        reduced file by file with its rows kept on disk, each file's rows as they are in the
        joined table (columns, dtypes, categories, positions): the same rows either way."""
        if self.pieces is None:
            yield self.launches
        else:
            yield from self.pieces

    def per_source(self) -> pd.DataFrame:
        """Time, headroom and verdict mix per input file: each input's own sums (a folder's
        figures for a file are those of the file alone, however many are beside it)."""
        if self.pieces is not None:
            return self.pieces.per_source
        tables = [p.launches for p in self.inputs if p.launches is not None and len(p.launches)]
        if len(tables) > 1 and sum(map(len, tables)) == len(self.launches):
            return per_source_of([per_source(t) for t in tables])
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


def _totals(launches: pd.DataFrame, outside: pd.DataFrame, inputs: list[Profile]) -> totals.Totals:
    """The totals of the launches: of several inputs, each one's merged in input order, as a
    folder reduced file by file merges them (one sum over the joined table would differ in the
    last bits, and the JSON report of a folder with it); one table's else."""
    parts = _by_input(launches, outside, inputs)
    if parts is None:
        return totals.of(launches, outside)
    return totals.merge([totals.of(rows, out) for rows, out in parts])


def _by_input(launches: pd.DataFrame, outside: pd.DataFrame, inputs: list[Profile]):
    """Each input's launches and those of its source outside the window, where the inputs'
    rows (views of `launches`) make up the table and their sources all of `outside`; else
    None (a Result read back, made by hand)."""
    tables = [p.launches for p in inputs]
    if len(tables) < 2 or any(t is None for t in tables):
        return None
    if sum(len(t) for t in tables) != len(launches):
        return None
    if not len(outside):
        return [(t, outside) for t in tables]
    source = outside["source"]
    parts = [outside[(source == p.source).to_numpy(dtype=bool, na_value=False)] for p in inputs]
    if sum(len(o) for o in parts) != len(outside):
        return None
    return list(zip(tables, parts, strict=True))


def accounting_of(t: totals.Totals, inputs: list[Profile], skipped, outside: dict) -> dict:
    """The accounting from launches' totals (one table's, or a folder's merged) and the block
    of the launches outside the windows (totals.outside_block)."""
    out = {
        "launches_read": int(t.launches + t.outside),
        "analysed": t.analysed,
        "not_analysable": t.not_analysable,
        "not_analysable_reasons": totals.reasons_sorted(t),
        "inputs_read": len(inputs),
        "files_read": [f for p in inputs for f in (p.files or [p.source])],
        "inputs_skipped": [{"path": p, "reason": r} for p, r in skipped],
        "repairs": [f"{p.source}: {r}" for p in inputs for r in p.repairs],
        **totals.coverage_block(t),
    }
    if t.outside:
        out["outside_window"] = outside
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


def per_source_of(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The per_source of several files, from each file's: their rows in source order (a
    source in several files with its sums added). One groupby over the joined table would sum
    a file's launches in an order that depends on the other files (pandas sorts the rows by
    group), so its last bits would change with them."""
    if not tables:  # no launch at all
        return per_source(
            pd.DataFrame({c: [] for c in ("source", "verdict", "duration_s", "headroom_s")})
        )
    joined = pd.concat(tables, ignore_index=True)
    joined["source"] = joined["source"].astype("str")
    if joined["source"].duplicated().any():
        joined = joined.groupby("source", sort=False).sum().reset_index()
    return joined.sort_values("source", kind="stable").reset_index(drop=True)


def device_description(result: Result) -> str:
    """The devices a result used, as "name (id)"; "no device ceilings" where none was found."""
    parts = [
        f"{u.device.name} ({u.device.id})" if u.device is not None else "no device ceilings"
        for u in result.devices
    ]
    return "; ".join(parts) or "no device"
