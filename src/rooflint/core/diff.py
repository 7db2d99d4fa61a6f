"""Two analysed profiles compared kernel group by kernel group: time, efficiency, verdict, headroom.

Groups are matched in three passes, each over what the previous left unmatched:

1. exact: same kernel name and launch configuration (grid, block);
2. name: same kernel name, launch configuration changed;
3. base-name: same name once template arguments and parameters are elided (a fuzzy match,
   e.g. ``gemm<128, 64>`` against ``gemm<256, 128>``); reported as fuzzy everywhere.

Within a pass, several candidates on each side are paired longest first.

Noise rule (the statistics are in rooflint.core.diffstats). A matched group is **slower** (a
regression) only when its estimated change exceeds the threshold, the whole confidence interval
of that change lies above the threshold, and, with several runs on a side, the change also
exceeds the measured run-to-run noise; **faster** is the mirror image. A change within the
threshold is *unchanged* when its interval holds 0 (without an interval: when it is 0) or it is
within the run-to-run noise, else *slower (faster), within the threshold*; one beyond the
threshold that fails the other two conditions is *within noise*.
A group with fewer than 3 launches (or pairs) on a side is judged on the threshold (and run
noise) alone. Groups below ``min_time`` of total time in both profiles are ignored (shown, never
gated). A group that is above its roof in head (and was not in base, or got faster) is a
*measurement problem*, never a win; one above its roof on both sides, unchanged, is judged as any
other (the report of each side flags it). The total
uses the same rule on the summed duration of every launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import display, names, opgroups, ranking, units, verdicts, windows
from rooflint.core.diff_devices import device_changes
from rooflint.core.formatting import pct, si
from rooflint.core.result import Result
from rooflint.core.result import device_description as device_text
from rooflint.core.warnings import estimate_warning

# 2: change with its interval, method and run-to-run noise; runs per side. 3: two traces' totals
# are per-step busy time (`measure`), `short_id` unique within the diff, `unchanged` only where
# the interval holds 0 or run noise covers the change (docs/json-format.md).
DIFF_FORMAT_VERSION = 3
DEFAULT_THRESHOLD = 0.05  # labels slower/faster when no --fail-on-regression is given

EXACT, NAME, BASE_NAME, BASE_ONLY, HEAD_ONLY = (
    "exact",
    "name",
    "base-name",
    "base-only",
    "head-only",
)
FUZZY = (NAME, BASE_NAME)

# The same words and default as rooflint.core.diffstats (tests/test_diffstats.py checks), kept
# here so that importing this module (every command does, through the CLI) does not import the
# statistics.
SLOWER, FASTER, NOISE, UNCHANGED, NOT_COMPARABLE = (
    "slower",
    "faster",
    "within noise",
    "unchanged",
    "not comparable",
)
# A change under the threshold that is still a change: its interval (or, without one, the change
# itself) excludes 0 and it exceeds any measured run-to-run noise.
SLOWER_WITHIN, FASTER_WITHIN = "slower, within the threshold", "faster, within the threshold"
DEFAULT_LEVEL = 0.95
NEW, REMOVED, ABOVE_ROOF, IGNORED = "new", "removed", "measurement problem", "ignored"

KEYS = ["kernel", "grid", "block"]
# One kernel group on one side (a diff row holds each as f"{field}_base" and f"{field}_head"),
# in the order the JSON diff writes them.
SIDE_FIELDS = [
    "kernel",
    "launches",
    "duration_s",
    "mean_s",
    "min_s",
    "max_s",
    "spread",
    "cv",
    "time_share",
    "efficiency",
    "verdict",
    "limiter",
    "headroom_s",
    "above_roof_launches",
    "device_id",
    "grid",
    "block",
    "reason",
]
# A row's changes from base to head: of time (diffstats.ESTIMATE_COLUMNS add the estimated change
# with its interval), then against the roof.
TIME_DELTAS = ["delta_s", "delta_pct", "mean_delta_pct"]
ROOF_DELTAS = ["headroom_delta_s", "efficiency_delta"]

UNITS = {
    "time_s": "s",
    "delta_s": "s",
    "delta_pct": "fraction of base",
    "mean_s": "s",
    "min_s": "s",
    "max_s": "s",
    "spread": "fraction of mean ((max - min) / mean)",
    "cv": "fraction of mean (std / mean)",
    "time_share": "fraction of the side's total time",
    "efficiency": "fraction of attainable",
    "headroom_s": "s",
    "mean_delta_pct": "fraction of base mean",
    "change": "fraction (head / base - 1)",
    "change_low": "fraction",
    "change_high": "fraction",
    "run_noise": "fraction (largest ratio between two runs of one side - 1)",
    "level": "confidence level of the intervals",
    "threshold": "fraction",
    "min_time": "fraction of total time",
    "ceiling": " or ".join(units.RATE.values()),
}


@dataclass
class Side:
    """One side of the comparison: the input as given and its analysis."""

    label: str
    result: Result
    saved: str | None = None  # the tool that wrote a saved JSON report, None for a profile
    groups: pd.DataFrame = field(default=None, repr=False)  # SIDE_FIELDS, a row per group (per run)
    runs: int = 1  # runs combined in result (its launches then carry a "run" column)
    inputs: list[str] | None = None  # one path per run, when several runs make the side

    def __post_init__(self):
        if self.groups is None:
            self.groups = group_stats(self.result, self.runs)

    def samples(self) -> pd.DataFrame:
        """diffstats.SAMPLE_COLUMNS: every launch, with its group's row in `groups`, in order."""
        from rooflint.core import diffstats

        launches = opgroups.by_operator(self.result.launches)  # the keys group_stats used
        frame = launches[KEYS + ["duration_s"]].copy()
        for k in KEYS:
            frame[k] = frame[k].astype("string").fillna("(none)")
        frame["run"] = launches["run"].to_numpy() if "run" in launches else 0
        frame["range"] = launches["range"].to_numpy() if "range" in launches else None
        index = self.groups[KEYS].astype("string").reset_index(names="group")
        return frame.merge(index, on=KEYS, how="left", sort=False)[diffstats.SAMPLE_COLUMNS]


@dataclass
class Diff:
    base: Side
    head: Side
    groups: pd.DataFrame  # one row per matched or unmatched group, largest |time change| first
    totals: dict
    device_changed: bool
    ceiling_changes: list[dict]
    warnings: list[str]  # shown prominently at the top of every format
    notes: list[str]
    threshold: float
    min_time: float
    level: float = DEFAULT_LEVEL

    def __repr__(self) -> str:
        """The change in a line or two, as a Result's repr is its summary (core/display.py):
        never the group tables."""
        if display.show is None:
            return f"<rooflint.Diff: {len(self.groups)} kernel groups>"
        return display.show(self, "diff_text")

    @property
    def regressions(self) -> pd.DataFrame:
        return self.groups[(self.groups["status"] == SLOWER) & ~self.groups["ignored"]]

    @property
    def measurement_problems(self) -> pd.DataFrame:
        return self.groups[self.groups["status"] == ABOVE_ROOF]


def compare(
    base: Side,
    head: Side,
    threshold: float | None = None,
    min_time: float = 0.0,
    level: float | None = None,
) -> Diff:
    """The group-by-group comparison of head against base (see the module docstring for rules)."""
    from rooflint.core import diffstats

    threshold = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    level = DEFAULT_LEVEL if level is None else float(level)
    pairs = match(base.groups, head.groups)
    rows = pd.DataFrame(
        [_row(base.groups, head.groups, b, h, how) for b, h, how in pairs], columns=_ROW_COLUMNS
    )
    matched = [(b, h) for b, h, _ in pairs if b is not None and h is not None]
    stats_b = diffstats.prepare(base.samples(), base.runs)
    stats_h = diffstats.prepare(head.samples(), head.runs)
    estimates, positions = diffstats.estimate(stats_b, stats_h, matched, level)
    rows = _with_estimates(rows, pairs, estimates, base.runs, head.runs)
    rows = _classify(rows, threshold, min_time)
    rows = _sort(rows)
    rows["id"] = unique_ids(rows)
    devices_differ, ceiling_changes = device_changes(base.result, head.result)
    totals = _totals(base, head, rows)
    totals.update(diffstats.total(stats_b, stats_h, matched, estimates, positions, level))
    _step_totals(base, head, totals)
    totals["runs_base"], totals["runs_head"] = base.runs, head.runs
    warnings = _warnings(base, head, rows, devices_differ, ceiling_changes, totals)
    return Diff(
        base,
        head,
        rows,
        totals,
        devices_differ,
        ceiling_changes,
        warnings,
        _notes(base, head),
        threshold,
        min_time,
        level,
    )


def _with_estimates(rows: pd.DataFrame, pairs, estimates: pd.DataFrame, runs_b: int, runs_h: int):
    """diffstats.ESTIMATE_COLUMNS on the matched rows (empty on unmatched ones)."""
    from rooflint.core import diffstats

    at = [i for i, (b, h, _) in enumerate(pairs) if b is not None and h is not None]
    extra = pd.DataFrame(np.nan, index=rows.index, columns=diffstats.ESTIMATE_COLUMNS).astype(
        {"method": object}
    )
    extra["runs_base"], extra["runs_head"] = runs_b, runs_h
    if at:
        extra.loc[at, diffstats.ESTIMATE_COLUMNS] = estimates.set_axis(at).to_numpy()
    for col in diffstats.ESTIMATE_COLUMNS:
        if col != "method":
            extra[col] = pd.to_numeric(extra[col])
    return pd.concat([rows, extra], axis=1)


def group_stats(result: Result, runs: int = 1) -> pd.DataFrame:
    """Per kernel group (name + grid + block; for PyTorch traces operator + shapes + dtypes):
    time, per-launch spread, efficiency, verdict.

    With several runs combined, launch counts and times are per run (the mean over runs)."""
    launches = opgroups.by_operator(result.launches)  # traces: operator + shapes, not kernel
    kernels = ranking.rank(launches, "kernel", result.latency_threshold)
    frame = launches[KEYS + ["duration_s"]].copy()
    ranking.normalise_keys(frame, KEYS)  # the same keys, spelled as ranking.rank groups them
    timing = (
        frame.groupby(KEYS, sort=False, dropna=False)["duration_s"]
        .agg(timed="count", mean_s="mean", std_s="std")
        .reset_index()
        .astype({k: "string" for k in KEYS})  # as the group table holds them
    )
    out = kernels.merge(timing, on=KEYS, how="left", validate="one_to_one")
    out["min_s"], out["max_s"] = out["duration_min_s"], out["duration_max_s"]
    mean = out["mean_s"].where(out["mean_s"] > 0)
    out["spread"] = ((out["max_s"] - out["min_s"]) / mean).fillna(0.0).where(mean.notna())
    out["cv"] = (out["std_s"].fillna(0.0) / mean).where(mean.notna())
    for col in ("launches", "duration_s", "headroom_s", "above_roof_launches"):
        out[col] = out[col] / runs if runs > 1 else out[col]
    return out[SIDE_FIELDS].reset_index(drop=True)


def match(base: pd.DataFrame, head: pd.DataFrame) -> list[tuple[int | None, int | None, str]]:
    """Pairs of (base row, head row, how matched); unmatched rows pair with None."""
    free_b, free_h = list(base.index), list(head.index)
    pairs = []
    passes = [
        (EXACT, lambda g, i: (g.at[i, "kernel"], g.at[i, "grid"], g.at[i, "block"])),
        (NAME, lambda g, i: g.at[i, "kernel"]),
        (BASE_NAME, lambda g, i: names.base_name(g.at[i, "kernel"])),
    ]
    for how, key in passes:
        found, free_b, free_h = _pair(base, head, free_b, free_h, key)
        pairs += [(b, h, how) for b, h in found]
    pairs += [(b, None, BASE_ONLY) for b in free_b] + [(None, h, HEAD_ONLY) for h in free_h]
    return pairs


def _pair(base, head, free_b, free_h, key):
    """Pair rows with equal keys, longest first on both sides; return pairs and what is left."""
    by_key: dict = {}
    for i in sorted(free_h, key=lambda i: _time_order(head, i)):
        by_key.setdefault(key(head, i), []).append(i)
    found, left_b = [], []
    for i in sorted(free_b, key=lambda i: _time_order(base, i)):
        candidates = by_key.get(key(base, i))
        if candidates:
            found.append((i, candidates.pop(0)))
        else:
            left_b.append(i)
    taken = {h for _, h in found}
    return found, sorted(left_b), [i for i in free_h if i not in taken]


def _time_order(groups: pd.DataFrame, i) -> tuple:
    t = groups.at[i, "duration_s"]
    return (-(t if not pd.isna(t) else -1.0), str(groups.at[i, "grid"]), str(groups.at[i, "block"]))


_ROW_COLUMNS = (
    ["kernel", "match"]
    + [f"{f}_{side}" for side in ("base", "head") for f in SIDE_FIELDS]
    + TIME_DELTAS
    + ROOF_DELTAS
)


def _row(base: pd.DataFrame, head: pd.DataFrame, b, h, how: str) -> dict:
    row: dict[str, object] = {"match": how}
    for side, frame, i in (("base", base, b), ("head", head, h)):
        for f in SIDE_FIELDS:
            row[f"{f}_{side}"] = frame.at[i, f] if i is not None else None
    row["kernel"] = row["kernel_head"] if h is not None else row["kernel_base"]
    t_b, t_h = _num(row["duration_s_base"]), _num(row["duration_s_head"])
    row["delta_s"] = (
        (0.0 if np.isnan(t_h) else t_h) - (0.0 if np.isnan(t_b) else t_b)
        if not (np.isnan(t_b) and np.isnan(t_h))
        else np.nan
    )
    row["delta_pct"] = (t_h - t_b) / t_b if t_b > 0 else np.nan
    m_b, m_h = _num(row["mean_s_base"]), _num(row["mean_s_head"])
    row["mean_delta_pct"] = (m_h - m_b) / m_b if m_b > 0 else np.nan
    row["headroom_delta_s"] = _num(row["headroom_s_head"]) - _num(row["headroom_s_base"])
    row["efficiency_delta"] = _num(row["efficiency_head"]) - _num(row["efficiency_base"])
    return row


def present(row: dict, side: str) -> bool:
    """Whether a diff row's group exists on `side` ("base" or "head")."""
    return row["match"] != (HEAD_ONLY if side == "base" else BASE_ONLY)


def _num(value) -> float:
    if value is None or value is pd.NA:
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def _classify(rows: pd.DataFrame, threshold: float, min_time: float) -> pd.DataFrame:
    """Add ignored and status columns (the noise rule of the module docstring)."""
    if rows.empty:
        for col, dtype in (("ignored", "bool"), ("status", "object")):
            rows[col] = pd.Series(dtype=dtype)
        return rows
    share = rows[["time_share_base", "time_share_head"]].apply(pd.to_numeric).fillna(0.0)
    rows["ignored"] = (share < min_time).all(axis=1) if min_time > 0 else False
    from rooflint.core import diffstats

    decided = diffstats.decide(rows, threshold)
    records = rows.to_dict(orient="records")
    rows["status"] = [_status(r, s) for r, s in zip(records, decided, strict=True)]
    return rows


def _status(r: dict, decided: str) -> str:
    if r["match"] == HEAD_ONLY:
        return NEW
    if r["match"] == BASE_ONLY:
        return REMOVED
    if r["verdict_head"] == verdicts.ABOVE_ROOF and r["verdict_base"] != verdicts.ABOVE_ROOF:
        return ABOVE_ROOF  # newly above its roof: the measurement changed, not the code
    if r["verdict_head"] == verdicts.ABOVE_ROOF and decided == FASTER:
        return ABOVE_ROOF  # a speed-up of a launch above its roof is not counted as one
    if r["ignored"]:
        return IGNORED
    return decided


def unique_ids(rows: pd.DataFrame) -> list[str]:
    """A short id per row, unique within the diff: the name's hash, and ".1", ".2", ... where one
    name has several launch configurations (in the order of the configurations)."""
    from collections import Counter

    base = [names.short_id(str(k)) for k in rows["kernel"].tolist()] if len(rows) else []
    counts = Counter(base)
    config = [
        f"{r.get('grid_head') or r.get('grid_base')} {r.get('block_head') or r.get('block_base')}"
        for r in rows.to_dict("records")
    ]
    ids, nth = list(base), Counter[str]()
    for i in sorted(
        (i for i, b in enumerate(base) if counts[b] > 1), key=lambda i: (base[i], config[i], i)
    ):
        nth[base[i]] += 1
        ids[i] = f"{base[i]}.{nth[base[i]]}"
    return ids


def _sort(rows: pd.DataFrame) -> pd.DataFrame:
    order = rows.assign(_abs=rows["delta_s"].abs(), _name=rows["kernel"].astype(str))
    order = order.sort_values(
        ["_abs", "_name"], ascending=[False, True], na_position="last", kind="mergesort"
    )
    return order.drop(columns=["_abs", "_name"]).reset_index(drop=True)


def _totals(base: Side, head: Side, rows: pd.DataFrame) -> dict:
    s_b, s_h = base.result.summary, head.result.summary
    t_b, t_h = _num(s_b.total_time_s) / base.runs, _num(s_h.total_time_s) / head.runs
    counts = rows["status"].value_counts().to_dict() if not rows.empty else {}
    matches = rows["match"].value_counts().to_dict() if not rows.empty else {}
    return {
        "time_base_s": t_b,
        "time_head_s": t_h,
        "delta_s": t_h - t_b,
        "delta_pct": (t_h - t_b) / t_b if t_b > 0 else np.nan,
        "launches_base": _per_run(len(base.result.launches), base.runs),
        "launches_head": _per_run(len(head.result.launches), head.runs),
        "efficiency_base": _num(s_b.time_weighted_efficiency),
        "efficiency_head": _num(s_h.time_weighted_efficiency),
        # launches above their roof, inside the efficiencies above (the statuses set them apart)
        "above_roof_base": _per_run(s_b.above_roof_launches, base.runs),
        "above_roof_head": _per_run(s_h.above_roof_launches, head.runs),
        "headroom_base_s": _num(s_b.total_headroom_s) / base.runs,
        "headroom_head_s": _num(s_h.total_headroom_s) / head.runs,
        "groups_base": int(len(base.groups)),
        "groups_head": int(len(head.groups)),
        "matched": {k: int(matches.get(k, 0)) for k in (EXACT, NAME, BASE_NAME)},
        "base_only": int(matches.get(BASE_ONLY, 0)),
        "head_only": int(matches.get(HEAD_ONLY, 0)),
        "status": {
            k: int(counts.get(k, 0))
            for k in (
                SLOWER,
                FASTER,
                SLOWER_WITHIN,
                FASTER_WITHIN,
                NOISE,
                UNCHANGED,
                NEW,
                REMOVED,
                ABOVE_ROOF,
                IGNORED,
                NOT_COMPARABLE,
            )
        },
    }


TOTAL_TIME, STEP_TIME = "total time", "per-step busy time"


def _step_totals(base: Side, head: Side, totals: dict) -> None:
    """Two traces compare their busy time per step (the window's busy time without steps): the
    GPU's time, overlapping streams counted once, the same measure on any two devices. The change
    is exactly head / base - 1 of the two printed times; the threshold alone decides it."""
    from rooflint.core import diffstats

    t_b, t_h = (windows.step_time_s(side.result.timeline) for side in (base, head))
    totals["measure"] = TOTAL_TIME
    if t_b is None or t_h is None or base.runs > 1 or head.runs > 1:
        return
    change = t_h / t_b - 1 if t_b > 0 else np.nan
    totals.update(
        measure=STEP_TIME,
        time_base_s=t_b,
        time_head_s=t_h,
        delta_s=t_h - t_b,
        delta_pct=change,
        change=change,
        change_low=np.nan,
        change_high=np.nan,
        run_noise=np.nan,
        method=diffstats.THRESHOLD_ONLY,
    )


def _per_run(count: int, runs: int) -> int | float:
    """A count per run: exact when the runs divide it, else the mean."""
    return count // runs if count % runs == 0 else count / runs


def _warnings(
    base: Side,
    head: Side,
    rows: pd.DataFrame,
    devices_differ: bool,
    ceilings: list[dict],
    totals: dict,
) -> list[str]:
    out = []
    if devices_differ:
        out.append(
            f"different devices: base ran on {device_text(base.result)}, head on "
            f"{device_text(head.result)}; times and verdicts are compared across devices"
        )
    if ceilings:
        shown = [
            f"{c['ceiling']} {si(c['base'], _unit(c))} → {si(c['head'], _unit(c))}"
            for c in ceilings
        ]
        out.append(
            "ceilings changed: "
            + ", ".join(shown)
            + "; efficiencies and verdicts are measured against "
            "different roofs"
        )
    for r in rows[rows["status"] == ABOVE_ROOF].to_dict(orient="records"):
        out.append(
            f"measurement problem: {names.short_name(r['kernel'])} is above its roof in head "
            f"(efficiency {pct(r['efficiency_head'])}); its speed-up is not counted: "
            "check the device, clocks and counters"
        )
    for name, side in (("base", base), ("head", head)):
        estimates = estimate_warning(side.result)  # verdicts from ncu's percentages
        if estimates:
            out.append(f"{name} {estimates}")
    if totals["launches_base"] != totals["launches_head"]:
        out.append(
            f"launch count changed: base {totals['launches_base']}, "
            f"head {totals['launches_head']}; "
            "total time also counts the extra or missing launches"
        )
    return out


def _unit(change: dict) -> str:
    return units.shown(change["kind"])


def _notes(base: Side, head: Side) -> list[str]:
    out = []
    for name, side in (("base", base), ("head", head)):
        if side.saved:
            out.append(
                f"{name} {side.label} is a saved report ({side.saved}): its ceilings and "
                "per-launch verdicts are as saved; device options apply only to profiles"
            )
        for source, problem in side.result.skipped:
            out.append(f"{name}: skipped {source}: {problem}")
    return out


def regression_rule_text(threshold: float, level: float = DEFAULT_LEVEL) -> str:
    """The noise rule in one sentence, for reports."""
    from rooflint.core.diffstats import MIN_LAUNCHES

    return (
        f"a group is slower only when its estimated change and the whole of its "
        f"{level * 100:g} % interval exceed +{threshold * 100:g} % and, with several runs, "
        "the change exceeds the measured run-to-run noise (under "
        f"{MIN_LAUNCHES} launches a side: the threshold alone)"
    )
