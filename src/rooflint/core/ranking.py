"""Group analysed launches into kernels (or families, ranges, sources) and rank by headroom."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from rooflint.core import names
from rooflint.core.analysis import (
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
    "op": ["op", "op_input_dims", "op_input_types"],  # PyTorch traces: operator + shapes + dtypes
    "module": ["module"],  # PyTorch traces: nn.Module path
}
MEMORY_LIMITERS = ("dram", "l2", "l1", "lds")

KERNEL_COLUMNS = [
    "rank",
    "id",
    "group",
    "kernel",
    "grid",
    "block",
    "launches",
    "analysed",
    "duration_s",
    "time_share",
    "t_bound_s",
    "headroom_s",
    "headroom_share",
    "efficiency",
    "limiter",
    "verdict",
    "flops",
    "bytes_dram",
    "intensity_dram",
    "achieved_flops_per_s",
    "achieved_bytes_per_s",
    "duration_min_s",
    "duration_max_s",
    "above_roof_launches",
    "device_id",
    "reason",
    "unmeasured",
]
_SUMS = ["duration_s", "t_bound_s", "headroom_s", "flops", "bytes_dram"]


NO_VALUE = "(none)"  # a group key the profile did not give (no range, no grid)


def normalise_keys(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Group-key columns as strings with NA spelled NO_VALUE, so NA groups rank and match."""
    for k in keys:
        frame[k] = frame[k].astype("string").fillna(NO_VALUE)
    return frame


def rank(
    analysed: pd.DataFrame, group_by: str = "kernel", latency_threshold: float = LATENCY_THRESHOLD
) -> pd.DataFrame:
    """One row per group, ranked by headroom seconds (ties: longer time, then name)."""
    keys = GROUPINGS[group_by]
    analysed = analysed.assign(**{k: pd.NA for k in keys if k not in analysed})  # a non-trace input
    frame = analysed[
        list(dict.fromkeys(keys + _SUMS + ["verdict", "limiter", "device_id", "reason"]))
    ].copy()
    normalise_keys(frame, keys)
    group = group_codes(frame, keys)
    ok = (frame["verdict"] != NOT_ANALYSABLE).to_numpy()
    frame["_t_ok"] = frame["duration_s"].where(ok)
    frame["_above"] = (frame["verdict"] == ABOVE_ROOF).astype("int64")
    frame["_reason"] = frame["reason"].where(frame["reason"].fillna("") != "")
    frame["_group"] = group  # group i is row i of `out`
    grouped = frame.groupby("_group", sort=False)
    out = grouped[_SUMS].sum(min_count=1)
    out["launches"] = grouped.size()
    out["analysed"] = grouped["_t_ok"].count()
    out["_t_ok"] = grouped["_t_ok"].sum()
    out["duration_min_s"] = grouped["duration_s"].min()
    out["duration_max_s"] = grouped["duration_s"].max()
    out["above_roof_launches"] = grouped["_above"].sum()
    out["device_id"] = grouped["device_id"].first()
    out["reason"] = grouped["_reason"].first().fillna("")
    limiter = _time_weighted_mode(frame[ok], ["_group"], "limiter").reindex(range(len(out)))
    out["limiter"] = limiter.array
    if "excess_traffic" in analysed:  # PyTorch traces with counters lent by an ncu/rocprof export
        out["_excess"] = _excess(analysed, group)
    out["unmeasured"] = unmeasured(analysed, group)
    first_rows = np.unique(group, return_index=True)[1]
    out = pd.concat(
        [frame[keys].iloc[first_rows].reset_index(drop=True), out.reset_index(drop=True)], axis=1
    )
    return _finish(out, keys, frame["duration_s"].sum(), latency_threshold)


def group_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Each row's group: groups of equal `keys` values numbered 0, 1, ... in the order they
    first appear (as groupby(keys, sort=False) orders them), each key column hashed once."""
    group = np.zeros(len(frame), dtype=np.int64)
    for key in keys:
        codes, distinct = pd.factorize(frame[key], use_na_sentinel=False)
        group = pd.factorize(group * len(distinct) + codes)[0]
    return group


def _excess(analysed: pd.DataFrame, group: np.ndarray) -> np.ndarray:
    """Per group: measured DRAM bytes / the operators' minimum bytes, over launches with both."""
    both = analysed["excess_traffic"].notna()
    sums = pd.DataFrame(
        {
            "measured": analysed["bytes_dram"].where(both),
            "minimum": analysed["bytes_model_min"].where(both),
        }
    ).groupby(group, sort=False)
    return (sums["measured"].sum(min_count=1) / sums["minimum"].sum(min_count=1)).to_numpy()


def _finish(
    out: pd.DataFrame, keys: list[str], total_time: float, threshold: float
) -> pd.DataFrame:
    analysed = out["analysed"] > 0
    out["efficiency"] = out["t_bound_s"] / out["_t_ok"].where(analysed)
    out["t_bound_s"] = out["t_bound_s"].where(analysed)
    out["headroom_s"] = out["headroom_s"].where(analysed)
    out["verdict"] = pd.array(_group_verdicts(out, threshold), dtype="string")
    total_headroom = out["headroom_s"].sum()
    out["time_share"] = out["duration_s"] / total_time if total_time > 0 else np.nan
    out["headroom_share"] = out["headroom_s"] / total_headroom if total_headroom > 0 else np.nan
    out["intensity_dram"] = out["flops"] / out["bytes_dram"].where(out["bytes_dram"] > 0)
    out["achieved_flops_per_s"] = out["flops"] / out["duration_s"].where(out["duration_s"] > 0)
    out["achieved_bytes_per_s"] = out["bytes_dram"] / out["duration_s"].where(out["duration_s"] > 0)
    out["group"] = _joined(out, keys)
    for col in ("kernel", "grid", "block"):
        if col not in out:
            out[col] = pd.NA
    out = out.sort_values(
        ["headroom_s", "duration_s", "group"],
        ascending=[False, False, True],
        na_position="last",
        kind="mergesort",
    ).reset_index(drop=True)
    out["rank"] = np.arange(1, len(out) + 1)
    out["id"] = group_ids(out, keys)
    if "_excess" in out:
        out["excess_traffic"] = out["_excess"]
        return out[KERNEL_COLUMNS + ["excess_traffic"]]
    return out[KERNEL_COLUMNS]


# What the counters of a launch leave out, as flags the verdict sentence names (see explain).
UNMEASURED = {
    "vector": "ops_vector: ",  # tensor ops counted, vector FLOPs not
    "matrix": "ops_matrix: ",  # vector FLOPs counted, tensor ops not
}


def unmeasured(analysed: pd.DataFrame, group: np.ndarray) -> np.ndarray:
    """Per group (numbered as by group_codes), the comma-joined flags of what was not measured
    in any of its launches: `vector`, `matrix` (counters absent) and `half` (FP16 vector
    FLOPs, which count an HFMA2 as one FMA and so may be under-counted up to 2x)."""
    missing = analysed["missing"].fillna("")
    flags = {name: missing.str.contains(text, regex=False) for name, text in UNMEASURED.items()}
    flags["half"] = analysed["ops_vector_fp16"].fillna(0) > 0
    n = int(group.max()) + 1 if len(group) else 0
    text = np.full(n, "", dtype=object)
    for name, mask in flags.items():
        anyof = np.bincount(group, mask.to_numpy(dtype=bool), minlength=n) > 0
        text[anyof] = text[anyof] + "," + name
    return np.array([t.lstrip(",") for t in text], dtype=object)


def _joined(out: pd.DataFrame, keys: list[str]) -> pd.Series:
    text = out[keys[0]].astype("string")
    for key in keys[1:]:
        text = text + " " + out[key].astype("string")
    return text


def group_ids(out: pd.DataFrame, keys: list[str]) -> list[str]:
    """Stable short ids: a hash of the name (or group); one name in several launch
    configurations gets ".1", ".2", ... in the order of its configurations."""
    label = out["kernel"] if keys[0] == "kernel" else out["group"]
    base = [names.short_id(str(v)) for v in label]
    counts = Counter(base)
    shared = [i for i, b in enumerate(base) if counts[b] > 1]
    if not shared:
        return base
    ids = list(base)
    groups = out["group"].tolist()
    nth: Counter = Counter()
    for i in sorted(shared, key=lambda i: (base[i], groups[i])):  # stable: ties keep rank order
        nth[base[i]] += 1
        ids[i] = f"{base[i]}.{nth[base[i]]}"
    return ids


def _time_weighted_mode(frame: pd.DataFrame, keys: list[str], column: str) -> pd.Series:
    """Per group, the value of `column` that covers the most time."""
    if frame.empty:
        return pd.Series(
            pd.NA, index=pd.MultiIndex.from_arrays([[]] * len(keys), names=keys), dtype="string"
        )
    weights = frame.groupby(keys + [column], dropna=False)["duration_s"].sum().reset_index()
    weights = weights.sort_values("duration_s", ascending=False, kind="mergesort")
    return weights.drop_duplicates(keys).set_index(keys)[column]


def _group_verdicts(out: pd.DataFrame, threshold: float) -> np.ndarray:
    eff = out["efficiency"].to_numpy(dtype=float, na_value=np.nan)
    memory = out["limiter"].isin(MEMORY_LIMITERS).to_numpy()
    verdict = np.where(memory, MEMORY_BOUND, COMPUTE_BOUND)
    verdict = np.where(eff < threshold, LATENCY_BOUND, verdict)
    verdict = np.where(
        (eff > 1 + ABOVE_ROOF_TOLERANCE) | (out["above_roof_launches"] > 0), ABOVE_ROOF, verdict
    )
    return np.where(np.isnan(eff), NOT_ANALYSABLE, verdict)
