"""Group analysed launches into kernels (or families, ranges, sources) and rank by headroom."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from rooflint.core import names, partials, schema, verdicts
from rooflint.core.groupings import GROUPINGS  # noqa: F401 - callers read it here
from rooflint.core.partials import (  # noqa: F401 - their former home, still read here
    ESTIMATED,
    NO_VALUE,
    UNMEASURED,
    group_codes,
    normalise_keys,
    unmeasured,
)
from rooflint.core.verdicts import LATENCY_THRESHOLD

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


def rank(
    analysed: pd.DataFrame, group_by: str = "kernel", latency_threshold: float = LATENCY_THRESHOLD
) -> pd.DataFrame:
    """One row per group, ranked by headroom seconds (ties: longer time, then name): the
    ranking of the table's partial sums (core.partials), as a folder's merged partials are."""
    return ranked(partials.of(analysed, group_by), latency_threshold)


def launch_rows(launches: pd.DataFrame, group_by: str, kernels: pd.DataFrame) -> np.ndarray:
    """Each launch's row in the ranked table `kernels` (-1 for a launch of no ranked group, as
    one outside the window), grouped exactly as `rank` groups them (keys, jobs apart, NA as
    NO_VALUE) and matched by the group's label."""
    keys, group, values = partials.grouped(launches, group_by)
    labels = _labels(keys, values)
    position = {label: i for i, label in enumerate(kernels["group"].astype(str).tolist())}
    rows = np.array([position.get(label, -1) for label in labels], dtype=np.int64)
    return rows[group] if len(group) else np.zeros(0, dtype=np.int64)


def ranked(partial: partials.Partial, latency_threshold: float = LATENCY_THRESHOLD) -> pd.DataFrame:
    """The ranking of one table's (or several tables' merged) partial sums: a row per group."""
    groups = partial.groups
    n = len(groups)
    out = {k: groups[k].array for k in partial.keys}
    out |= {c: groups[c].to_numpy() for c in partials.SUMS + partials.RANKED_COUNTS}
    out["duration_min_s"] = groups["duration_min_s"].to_numpy()
    out["duration_max_s"] = groups["duration_max_s"].to_numpy()
    out["device_id"] = groups["device_id"].array
    out["reason"] = groups["reason"].fillna("").array
    out["limiter"] = partials.time_weighted_limiter(partial.limiters, n)
    if partial.excess:
        out["excess_traffic"] = (groups["_excess_measured"] / groups["_excess_minimum"]).to_numpy()
    if partial.bus:
        sized = groups["_comm_bytes_count"].where(groups["_comm_bytes_count"] > 0)
        out["comm_message_bytes"] = (groups["_comm_bytes_sum"] / sized).to_numpy()
        out["comm_busbw_bytes_per_s"] = (groups["_comm_moved"] / groups["_comm_time"]).to_numpy()
        out["comm_pageable"] = groups["_comm_pageable"].to_numpy(dtype=np.int64)
    out |= partials.facts_of(groups)  # ncu's occupancy, waves, stalls: the longest launch's
    flags = {f: groups[f].to_numpy(dtype=bool) for f in partial.flags}
    out["unmeasured"] = partials.flag_text(flags, n)
    return _finish(out, partial.keys, partial.total_time_s, latency_threshold)


COMM_COLUMNS = ["comm_message_bytes", "comm_busbw_bytes_per_s", "comm_pageable"]


def _finish(out: dict, keys: list[str], total_time: float, threshold: float) -> pd.DataFrame:
    """The derived columns, the order by headroom, ids; one frame of KERNEL_COLUMNS."""
    n = len(out["launches"])
    analysed = out["analysed"] > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out["efficiency"] = out["t_bound_s"] / np.where(analysed, out["_t_ok"], np.nan)
        out["t_bound_s"] = np.where(analysed, out["t_bound_s"], np.nan)
        out["headroom_s"] = np.where(analysed, out["headroom_s"], np.nan)
        out["verdict"] = _group_verdicts(out, threshold)
        total_headroom = np.nansum(out["headroom_s"])
        duration, flops, dram = out["duration_s"], out["flops"], out["bytes_dram"]
        timed = np.where(duration > 0, duration, np.nan)
        out["time_share"] = duration / total_time if total_time > 0 else np.full(n, np.nan)
        out["headroom_share"] = (
            out["headroom_s"] / total_headroom if total_headroom > 0 else np.full(n, np.nan)
        )
        out["intensity_dram"] = flops / np.where(dram > 0, dram, np.nan)
        out["achieved_flops_per_s"] = flops / timed
        out["achieved_bytes_per_s"] = dram / timed
    group = _labels(keys, out)
    out["group"] = pd.array(group, dtype="string")
    for col in ("kernel", "grid", "block"):
        if col not in out:
            out[col] = np.full(n, pd.NA, dtype=object)
    # headroom, then time (both descending, NA last), then the group's name
    order = np.lexsort((np.array(group, dtype=object), -duration, -out["headroom_s"]))
    columns = [c for c in KERNEL_COLUMNS if c not in ("rank", "id")]
    columns += ["job"] if "job" in keys else []
    columns += ["excess_traffic"] if "excess_traffic" in out else []
    columns += [c for c in COMM_COLUMNS if c in out]
    columns += [c for c in schema.LAUNCH_FACT_COLUMNS if c in out]
    ranked = pd.DataFrame({c: out[c][order] for c in columns}, copy=False)
    ranked.insert(0, "rank", np.arange(1, n + 1))
    ranked.insert(1, "id", group_ids(ranked, [k for k in keys if k != "job"]))
    return ranked


def labels(partial: partials.Partial) -> list[str]:
    """Each group's label (the `group` column of its ranked row), in the partial's order."""
    return _labels(partial.keys, {k: partial.groups[k].array for k in partial.keys})


def _labels(keys: list[str], values: dict) -> list[str]:
    """Each group's label: its key values as text (_key_text), space-joined."""
    texts = (_key_text(k, np.asarray(values[k], dtype=object)) for k in keys)
    return [" ".join(parts) for parts in zip(*texts, strict=True)]


def _key_text(key: str, values: np.ndarray) -> np.ndarray:
    """A group key's values as its label shows them ("rank 0", else the value)."""
    if key != "rank":
        return values
    return np.array([v if v == NO_VALUE else f"rank {v}" for v in values], dtype=object)


def group_ids(out: pd.DataFrame, keys: list[str]) -> list[str]:
    """Stable short ids: a hash of the name (or group); one name in several launch
    configurations gets ".1", ".2", ... in the order of its configurations."""
    label = out["kernel"] if keys[0] == "kernel" else out["group"]
    base = [names.short_id(str(v)) for v in label.tolist()]
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


def _group_verdicts(out: dict, threshold: float) -> pd.array:
    """The verdict rule on the group's time-weighted efficiency and limiter; a group holding a
    launch above its roof is above-roof too."""
    eff = out["efficiency"]
    memory = np.isin(out["limiter"].to_numpy(dtype=object, na_value=None), MEMORY_LIMITERS)
    codes = verdicts.classify(
        eff,
        memory,
        ~np.isnan(eff),
        threshold,
        out["above_roof_launches"] > 0,
        communication=out["_comm"] == out["launches"],  # a group of collectives
    )
    return pd.array(verdicts.names(codes), dtype="string")
