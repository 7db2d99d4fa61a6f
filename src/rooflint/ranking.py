"""Group analysed launches into kernels (or families, ranges, sources) and rank by headroom."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.analysis import (
    ABOVE_ROOF,
    ABOVE_ROOF_TOLERANCE,
    COMPUTE_BOUND,
    LATENCY_BOUND,
    LATENCY_THRESHOLD,
    MEMORY_BOUND,
    NOT_ANALYSABLE,
)

GROUPINGS = {
    "kernel": ["kernel", "grid", "block"],  # name and launch configuration
    "name": ["kernel"],
    "source": ["source"],
    "range": ["range"],
    "family": ["family"],
}

KERNEL_COLUMNS = ["rank", "group", "kernel", "grid", "block", "launches", "analysed", "duration_s",
                  "time_share", "t_bound_s", "headroom_s", "headroom_share", "efficiency", "limiter",
                  "verdict", "flops", "bytes_dram", "intensity_dram", "achieved_flops_per_s",
                  "achieved_bytes_per_s", "duration_min_s", "duration_max_s", "above_roof_launches",
                  "device_id", "reason"]


def rank(analysed: pd.DataFrame, group_by: str = "kernel",
         latency_threshold: float = LATENCY_THRESHOLD) -> pd.DataFrame:
    """One row per group, ranked by headroom seconds (ties: longer time, then name)."""
    keys = GROUPINGS[group_by]
    frame = analysed.copy()
    for k in keys:
        frame[k] = frame[k].astype("string").fillna("(none)")
    ok = frame["verdict"] != NOT_ANALYSABLE
    frame["_t_ok"] = frame["duration_s"].where(ok)
    frame["_above"] = (frame["verdict"] == ABOVE_ROOF).astype(int)
    grouped = frame.groupby(keys, sort=False, dropna=False)
    out = grouped.agg(
        launches=("duration_s", "size"),
        analysed=("_t_ok", "count"),
        duration_s=("duration_s", lambda s: s.sum(min_count=1)),
        duration_min_s=("duration_s", "min"),
        duration_max_s=("duration_s", "max"),
        _t_ok=("_t_ok", "sum"),
        t_bound_s=("t_bound_s", "sum"),
        headroom_s=("headroom_s", "sum"),
        flops=("flops", lambda s: s.sum(min_count=1)),
        bytes_dram=("bytes_dram", lambda s: s.sum(min_count=1)),
        above_roof_launches=("_above", "sum"),
        device_id=("device_id", "first"),
        reason=("reason", _first_reason),
    ).reset_index()
    out["limiter"] = _time_weighted_mode(frame[ok], keys, "limiter").reindex(
        pd.MultiIndex.from_frame(out[keys]) if len(keys) > 1 else out[keys[0]]).to_numpy()
    out["efficiency"] = out["t_bound_s"] / out["_t_ok"].where(out["analysed"] > 0)
    out["t_bound_s"] = out["t_bound_s"].where(out["analysed"] > 0)
    out["headroom_s"] = out["headroom_s"].where(out["analysed"] > 0)
    out["verdict"] = _group_verdicts(out, latency_threshold)
    total_time = frame["duration_s"].sum()
    total_headroom = out["headroom_s"].sum()
    out["time_share"] = out["duration_s"] / total_time if total_time > 0 else np.nan
    out["headroom_share"] = out["headroom_s"] / total_headroom if total_headroom > 0 else np.nan
    out["intensity_dram"] = out["flops"] / out["bytes_dram"].where(out["bytes_dram"] > 0)
    out["achieved_flops_per_s"] = out["flops"] / out["duration_s"].where(out["duration_s"] > 0)
    out["achieved_bytes_per_s"] = out["bytes_dram"] / out["duration_s"].where(out["duration_s"] > 0)
    out["group"] = out[keys].astype(str).agg(" ".join, axis=1) if len(keys) > 1 else out[keys[0]]
    for col in ("kernel", "grid", "block"):
        if col not in out:
            out[col] = pd.NA
    out = out.sort_values(["headroom_s", "duration_s", "group"], ascending=[False, False, True],
                          na_position="last", kind="mergesort").reset_index(drop=True)
    out["rank"] = np.arange(1, len(out) + 1)
    return out[KERNEL_COLUMNS]


def _first_reason(s: pd.Series):
    values = s.dropna()
    values = values[values != ""]
    return values.iloc[0] if len(values) else ""


def _time_weighted_mode(frame: pd.DataFrame, keys: list[str], column: str) -> pd.Series:
    """Per group, the value of `column` that covers the most time."""
    if frame.empty:
        return pd.Series(dtype="string")
    weights = frame.groupby(keys + [column], dropna=False)["duration_s"].sum().reset_index()
    weights = weights.sort_values("duration_s", ascending=False, kind="mergesort")
    return weights.drop_duplicates(keys).set_index(keys)[column]


def _group_verdicts(out: pd.DataFrame, threshold: float) -> np.ndarray:
    eff = out["efficiency"].to_numpy(dtype=float, na_value=np.nan)
    memory = out["limiter"].isin(["dram", "l2", "l1", "lds"]).to_numpy()
    verdict = np.where(memory, MEMORY_BOUND, COMPUTE_BOUND)
    verdict = np.where(eff < threshold, LATENCY_BOUND, verdict)
    verdict = np.where((eff > 1 + ABOVE_ROOF_TOLERANCE) | (out["above_roof_launches"] > 0), ABOVE_ROOF, verdict)
    return np.where(np.isnan(eff), NOT_ANALYSABLE, verdict)
