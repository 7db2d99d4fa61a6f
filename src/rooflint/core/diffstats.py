"""Diff statistics: each group's change with a confidence interval, launch paired with launch.

A group's launches on the two sides are paired when they correspond: the same number of launches
in every run of both sides (the k-th launch of base with the k-th of head) or, where launches carry
NVTX ranges, the same number in every range (paired by range and order within it). The change is
then the geometric mean of the head/base ratios, and its interval a Student-t interval on the log
ratios: launches of different sizes under one name cancel out. Where launches cannot be paired,
the change is the ratio of the two sides' geometric means with a Welch t interval on the log
durations. With several runs on a side, run-to-run noise is measured per group (the largest ratio
between two runs of one side) and the run-to-run variance widens the interval. Fewer than
MIN_LAUNCHES launches (or pairs) on a side: the group is judged on the threshold alone.

Pure numpy/pandas; no random numbers, so the same inputs always give the same numbers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

DEFAULT_LEVEL = 0.95
MIN_LAUNCHES = 3

PAIRED, PAIRED_RANGE, UNPAIRED, THRESHOLD_ONLY = (
    "paired",
    "paired by range",
    "unpaired",
    "threshold only",
)
PARTLY_PAIRED = "partly paired"  # the total, when some groups were paired and others not
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

SAMPLE_COLUMNS = ["group", "run", "range", "duration_s"]  # one row per launch, in launch order
NO_RANGE = "(none)"
ESTIMATE_COLUMNS = [
    "change",
    "change_low",
    "change_high",
    "method",
    "pairs",
    "compared_base",
    "compared_head",
    "run_noise",
    "runs_base",
    "runs_head",
]
RUNS = ["runs_base", "runs_head"]  # how many runs each side combined: the same on every row


@dataclass
class _Side:
    """Per-group summaries of one side's launch samples."""

    samples: pd.DataFrame  # SAMPLE_COLUMNS + log, k (order in its run), kr (order in its range)
    runs: int
    per_group: (
        pd.DataFrame
    )  # n, mean/var of log, per-run count min/max, range signature, run levels


def t_quantile(p: float, df) -> np.ndarray:
    """Student-t quantile for df >= 1: exact at df 1 and 2, a Cornish-Fisher series in the normal
    quantile from df 3 on (within 1 % there at 99 %, closer at lower levels), linear in 1/df in
    between (wider than exact); the normal at df = inf."""
    from statistics import NormalDist  # here: `rooflint report` never pays for the import

    z = NormalDist().inv_cdf(p)
    v = np.maximum(np.asarray(df, dtype="float64"), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        series = _cornish_fisher(z, np.maximum(v, 3.0))
    exact = [
        np.tan(np.pi * (p - 0.5)),
        (2 * p - 1) * np.sqrt(2 / (4 * p * (1 - p))),
        float(_cornish_fisher(z, 3.0)),
    ]
    low = np.interp(1 / v, [1 / 3, 1 / 2, 1.0], exact[::-1])
    return np.where(np.isinf(v), z, np.where(v < 3, low, series))


def _cornish_fisher(z: float, v):
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


def prepare(samples: pd.DataFrame, runs: int) -> _Side:
    """Summaries of one side; launches without a positive duration stay out of the statistics."""
    duration = pd.to_numeric(samples["duration_s"], errors="coerce").to_numpy(dtype="float64")
    keep = (duration > 0) & samples["group"].notna().to_numpy()
    s = pd.DataFrame(
        {
            "group": samples["group"].to_numpy()[keep].astype("int64"),
            "run": samples["run"].to_numpy()[keep].astype("int64"),
            "range": samples["range"]
            .astype("string")
            .fillna(NO_RANGE)
            .to_numpy(dtype=object)[keep],
            "duration_s": duration[keep],
        }
    )
    s["log"] = np.log(s["duration_s"].to_numpy())
    size = int(s["group"].max()) + 1 if len(s) else 0
    cell = s["group"].to_numpy() * runs + s["run"].to_numpy()  # (group, run)
    s["k"] = _cumcount(cell)
    ranged = bool((s["range"] != NO_RANGE).any())
    s["kr"] = _cumcount(cell * (len(s) + 1) + pd.factorize(s["range"])[0]) if ranged else s["k"]
    g = pd.DataFrame(index=pd.RangeIndex(size, name="group"))
    g["n"], g["mean"], g["var"] = _moments(s["group"].to_numpy(), s["log"].to_numpy(), size)
    g["dur_n"], _, g["dur_var"] = _moments(s["group"].to_numpy(), s["duration_s"].to_numpy(), size)
    counts = np.bincount(cell, minlength=size * runs).reshape(size, runs)
    g["count_min"], g["count_max"] = counts.min(axis=1), counts.max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        levels = np.bincount(cell, s["log"].to_numpy(), size * runs).reshape(size, runs) / counts
    present = counts > 0
    g["level_runs"] = present.sum(axis=1)
    lv = np.where(present, levels, np.nan)
    with warnings.catch_warnings():  # groups absent from every run: all-NaN rows, NaN is right
        warnings.simplefilter("ignore", RuntimeWarning)
        g["level_spread"] = np.nanmax(lv, axis=1) - np.nanmin(lv, axis=1)
        g["level_var"] = np.where(g["level_runs"] >= 2, np.nanvar(lv, axis=1, ddof=1), np.nan)
    g["ranges"] = _range_signatures(s, runs).reindex(g.index) if ranged else None
    g = g[g["n"] > 0]
    return _Side(s, runs, g)


def _cumcount(keys: np.ndarray) -> np.ndarray:
    """The position of each element among the earlier elements with the same key."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    starts = (
        np.r_[0, np.flatnonzero(ranked[1:] != ranked[:-1]) + 1] if len(keys) else np.array([], int)
    )
    first = np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    out = np.empty(len(keys), dtype="int64")
    out[order] = np.arange(len(keys)) - first
    return out


def _moments(group: np.ndarray, x: np.ndarray, size: int):
    """Per group: count, mean and sample variance (two passes, so no cancellation)."""
    n = np.bincount(group, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, x, size) / n
        var = np.bincount(group, (x - mean[group]) ** 2, size) / (n - 1)
    return n, mean, np.where(n > 1, var, np.nan)


def _range_signatures(s: pd.DataFrame, runs: int) -> pd.Series:
    """Per group: "range=count;..." when every run has the same count in every range, else None."""
    ranged = (s["range"] != NO_RANGE).groupby(s["group"]).any()
    s = s[s["group"].isin(ranged.index[ranged])]
    if s.empty:
        return pd.Series(None, index=ranged.index, dtype=object)
    per = (
        s.groupby(["group", "range", "run"])
        .size()
        .unstack("run")
        .reindex(columns=range(runs))
        .fillna(0)
    )
    same = (per.min(axis=1) == per.max(axis=1)).groupby(level="group").all()
    text = [
        f"{name}={int(count)}"
        for name, count in zip(per.index.get_level_values("range"), per[0], strict=True)
    ]  # one per group and range
    sig = pd.Series(text, index=per.index.get_level_values("group")).groupby(level=0).agg(";".join)
    return sig.where(same).reindex(ranged.index)


def estimate(
    base: _Side, head: _Side, pairs: list[tuple[int, int]], level: float = DEFAULT_LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ESTIMATE_COLUMNS for each (base group, head group) pair, in the order given; and the paired
    positions (row, log_b, log_h, dur_b, dur_h) the paired estimates were made from."""
    rows = pd.DataFrame(pairs, columns=["b", "h"], dtype="int64")
    gb = base.per_group.reindex(rows["b"]).reset_index(drop=True)
    gh = head.per_group.reindex(rows["h"]).reset_index(drop=True)
    by_order = (
        (gb["count_min"] == gb["count_max"])
        & (gh["count_min"] == gh["count_max"])
        & (gb["count_min"] == gh["count_min"])
        & (gb["count_min"] > 0)
    )
    by_range = gb["ranges"].notna() & (gb["ranges"] == gh["ranges"])
    positions = _positions(base, head, rows, by_order, by_range)
    n, mean, var = _moments(
        positions["row"].to_numpy(), (positions["log_h"] - positions["log_b"]).to_numpy(), len(rows)
    )
    paired = pd.DataFrame(
        {"n": np.where(n > 0, n, np.nan), "mean": mean, "var": var}, index=rows.index
    )
    is_paired = (by_order | by_range).to_numpy()
    welch = _welch(gb, gh)
    est = np.where(is_paired, paired["mean"], gh["mean"] - gb["mean"])
    se = np.where(is_paired, np.sqrt(paired["var"] / paired["n"]), welch["se"])
    df = np.where(is_paired, paired["n"] - 1, welch["df"])
    compared = np.where(is_paired, paired["n"], np.minimum(gb["n"], gh["n"]))
    few = ~(compared >= MIN_LAUNCHES)
    method = np.where(by_range, PAIRED_RANGE, np.where(by_order, PAIRED, UNPAIRED))
    half = _half_width(
        se, df, _run_se(gb, gh, base.runs, head.runs), base.runs + head.runs - 2, level
    )
    out = pd.DataFrame(
        {
            "change": np.expm1(est),
            "change_low": np.where(few, np.nan, np.expm1(est - half)),
            "change_high": np.where(few, np.nan, np.expm1(est + half)),
            "method": np.where(few & np.isfinite(est), THRESHOLD_ONLY, method),
            "pairs": np.where(is_paired, paired["n"], np.nan),
            "compared_base": gb["n"].to_numpy(),
            "compared_head": gh["n"].to_numpy(),
            "run_noise": _run_noise(gb, gh, base.runs, head.runs),
            "runs_base": base.runs,
            "runs_head": head.runs,
        },
        index=rows.index,
    )
    return out[ESTIMATE_COLUMNS], positions


def _positions(base: _Side, head: _Side, rows, by_order, by_range) -> pd.DataFrame:
    """Paired positions of every paired row: a position's value on a side is its mean log (and
    mean duration) over that side's runs."""
    columns = ["row", "log_b", "log_h", "dur_b", "dur_h"]
    parts = [
        pd.DataFrame({c: np.array([], dtype="int64" if c == "row" else "float64") for c in columns})
    ]
    in_order = rows[(by_order & ~by_range).to_numpy()]
    if len(in_order):
        parts.append(_order_positions(base, head, in_order))
    in_range = rows[by_range.to_numpy()]
    if len(in_range):
        key = ["range", "kr"]
        sides = [
            _side_positions(side.samples, in_range[col], in_range.index, key)
            for side, col in ((base, "b"), (head, "h"))
        ]
        parts.append(sides[0].merge(sides[1], on=["row", *key], suffixes=("_b", "_h"))[columns])
    return pd.concat(parts, ignore_index=True)


def _order_positions(base: _Side, head: _Side, sel: pd.DataFrame) -> pd.DataFrame:
    """Positions of rows paired by order: every run holds each position exactly once."""
    n = base.per_group.loc[sel["b"], "count_min"].to_numpy().astype("int64")
    offset, total = np.r_[0, np.cumsum(n)[:-1]], int(n.sum())
    out = {"row": np.repeat(sel.index.to_numpy(), n)}
    for side, col, tag in ((base, "b", "_b"), (head, "h", "_h")):
        s = side.samples
        group = s["group"].to_numpy()
        lookup = np.full(max(int(group.max()), int(sel[col].max())) + 1, -1)
        lookup[sel[col].to_numpy()] = np.arange(len(sel))
        row = lookup[group]
        mine = row >= 0
        pos = offset[row[mine]] + s["k"].to_numpy()[mine]
        out["log" + tag] = np.bincount(pos, s["log"].to_numpy()[mine], total) / side.runs
        out["dur" + tag] = np.bincount(pos, s["duration_s"].to_numpy()[mine], total) / side.runs
    return pd.DataFrame(out)


def _side_positions(samples: pd.DataFrame, groups: pd.Series, rows: pd.Index, key: list[str]):
    own = samples.loc[
        samples["group"].isin(groups.to_numpy()), ["group", *key, "log", "duration_s"]
    ]
    pos = own.groupby(["group", *key], sort=False).mean().reset_index()
    pos = pos.rename(columns={"duration_s": "dur"})
    return pos.merge(pd.DataFrame({"group": groups.to_numpy(), "row": rows}), on="group")


def total(
    base: _Side,
    head: _Side,
    pairs: list[tuple[int, int]],
    estimates: pd.DataFrame,
    positions: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
) -> dict:
    """The same estimate for the summed time of all launches (mean over runs): the ratio of the
    sums, with launch noise from each group (paired where the group was) and run-to-run noise."""
    sums = [
        pd.Series(
            np.bincount(
                side.samples["run"].to_numpy(), side.samples["duration_s"].to_numpy(), side.runs
            )
        )
        for side in (base, head)
    ]
    t_b, t_h = float(sums[0].mean()), float(sums[1].mean())
    if not (t_b > 0 and t_h > 0):
        return {
            "change": np.nan,
            "change_low": np.nan,
            "change_high": np.nan,
            "run_noise": np.nan,
            "method": NOT_COMPARABLE,
        }
    r = t_h / t_b
    resid = positions["dur_h"] - r * positions["dur_b"]
    count, _, spread = _moments(positions["row"].to_numpy(), resid.to_numpy(), len(pairs))
    var = float(np.nansum(count * spread))
    paired_b = {b for (b, _), m in zip(pairs, estimates["pairs"].notna(), strict=True) if m}
    paired_h = {h for (_, h), m in zip(pairs, estimates["pairs"].notna(), strict=True) if m}
    for side, done, scale in ((base, paired_b, r * r), (head, paired_h, 1.0)):
        g = side.per_group[~side.per_group.index.isin(list(done))]
        var += scale * float((g["dur_n"] * g["dur_var"].fillna(0.0)).sum()) / side.runs**2
    logs = [np.log(s[s > 0]) for s in sums]
    run_var = sum((len(x) - 1) * float(x.var()) for x in logs if len(x) > 1)
    run_df = base.runs + head.runs - 2
    run_se = np.sqrt(run_var / run_df * (1 / base.runs + 1 / head.runs)) if run_df >= 1 else 0.0
    half = float(_half_width(np.sqrt(var) / t_h, np.inf, run_se, run_df, level))
    spreads = [float(x.max() - x.min()) for x in logs if len(x) > 1]
    est = np.log(r)
    return {
        "change": float(np.expm1(est)),
        "change_low": float(np.expm1(est - half)),
        "change_high": float(np.expm1(est + half)),
        "run_noise": float(np.expm1(max(spreads))) if spreads else np.nan,
        "method": _total_method(base, head, paired_b, paired_h),
    }


def _total_method(base: _Side, head: _Side, paired_b: set, paired_h: set) -> str:
    if paired_b == set(base.per_group.index) and paired_h == set(head.per_group.index):
        return PAIRED
    return PARTLY_PAIRED if paired_b else UNPAIRED


def _welch(gb: pd.DataFrame, gh: pd.DataFrame) -> dict:
    """Standard error and Welch-Satterthwaite degrees of freedom of a difference of log means."""
    vb, vh = gb["var"] / gb["n"], gh["var"] / gh["n"]
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vb + vh) ** 2 / (vb**2 / (gb["n"] - 1) + vh**2 / (gh["n"] - 1))
    df = df.where(vb + vh > 0, np.inf)  # no spread at all: the difference is exact
    return {"se": np.sqrt(vb + vh).to_numpy(), "df": df.to_numpy()}


def _run_se(gb: pd.DataFrame, gh: pd.DataFrame, runs_b: int, runs_h: int) -> np.ndarray:
    """Standard error that run-to-run variance adds to a difference of two sides' run means."""
    if runs_b + runs_h <= 2:
        return np.zeros(len(gb))
    dof = (runs_b - 1) * gb["level_var"].fillna(0.0) + (runs_h - 1) * gh["level_var"].fillna(0.0)
    pooled = dof / (runs_b + runs_h - 2)
    return np.sqrt(pooled * (1 / runs_b + 1 / runs_h)).to_numpy()


def _half_width(se, df, run_se, run_df: int, level: float) -> np.ndarray:
    p = 0.5 + level / 2
    se, df = np.asarray(se, dtype="float64"), np.asarray(df, dtype="float64")
    launch = np.where(se > 0, se * t_quantile(p, np.maximum(df, 1.0)), 0.0)
    runs = run_se * t_quantile(p, max(run_df, 1)) if run_df >= 1 else 0.0
    return np.sqrt(launch**2 + runs**2)


def _run_noise(gb: pd.DataFrame, gh: pd.DataFrame, runs_b: int, runs_h: int) -> np.ndarray:
    """exp(largest spread of run levels on either side) - 1; NaN with one run per side."""
    spreads = [
        g["level_spread"].where(g["level_runs"] >= 2)
        for g, r in ((gb, runs_b), (gh, runs_h))
        if r >= 2
    ]
    if not spreads:
        return np.full(len(gb), np.nan)
    return np.expm1(pd.concat(spreads, axis=1).max(axis=1).to_numpy(dtype="float64"))


def decide(est: pd.DataFrame, threshold: float) -> np.ndarray:
    """Status of each estimate: a change beyond the threshold, its whole interval beyond it too,
    and beyond the measured run-to-run noise, is slower or faster; otherwise within noise. Under
    the threshold, a change is unchanged only when its interval holds 0 (without an interval:
    when it is 0) or it is within the measured run-to-run noise; else it is slower or faster
    within the threshold (a +30 % kernel under a 50 % gate did change)."""
    change = est["change"].to_numpy(dtype="float64")
    low, high = (
        est["change_low"].to_numpy(dtype="float64"),
        est["change_high"].to_numpy(dtype="float64"),
    )
    noise = est["run_noise"].to_numpy(dtype="float64")
    alone = (est["method"] == THRESHOLD_ONLY).to_numpy()
    beyond_noise = ~(np.abs(change) <= noise)  # NaN noise (one run per side) never holds back
    slower = (change > threshold) & beyond_noise & (alone | (low > threshold))
    faster = (change < -threshold) & beyond_noise & (alone | (high < -threshold))
    status = np.where(slower, SLOWER, np.where(faster, FASTER, NOISE)).astype(object)
    steady = np.where(alone, change == 0, (low <= 0) & (high >= 0)) | (np.abs(change) <= noise)
    within = np.abs(change) <= threshold
    status[within] = np.where(
        steady, UNCHANGED, np.where(change > 0, SLOWER_WITHIN, FASTER_WITHIN)
    )[within]
    status[np.isnan(change)] = NOT_COMPARABLE
    return status
