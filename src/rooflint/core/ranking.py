"""Group analysed launches into kernels (or families, ranges, sources) and rank by headroom."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from rooflint.core import group_facts, hostcopies, names, provenance, schema, verdicts
from rooflint.core.groupings import GROUPINGS
from rooflint.core.provenance import Provenance
from rooflint.core.verdicts import ABOVE_ROOF, LATENCY_THRESHOLD, NOT_ANALYSABLE

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
    """Group-key columns as text with NA spelled NO_VALUE, so NA groups rank and match (the
    table's Categorical text stays one: no string per launch)."""
    for k in keys:
        column = frame[k]
        text = isinstance(column.dtype, pd.CategoricalDtype)
        frame[k] = schema.filled(column if text else column.astype("string"), NO_VALUE)
    return frame


def rank(
    analysed: pd.DataFrame, group_by: str = "kernel", latency_threshold: float = LATENCY_THRESHOLD
) -> pd.DataFrame:
    """One row per group, ranked by headroom seconds (ties: longer time, then name).

    Sums are pandas' (compensated) group sums; the other aggregates are numpy over group
    numbers, and the frame is built once: per-column pandas calls cost more than the numbers
    on a typical capture of a few thousand launches."""
    keys = _jobs_apart(analysed, GROUPINGS[group_by])
    frame = pd.DataFrame(
        {k: analysed[k] if k in analysed else pd.NA for k in keys}, index=analysed.index
    )
    normalise_keys(frame, keys)
    group, values = group_codes(frame, keys)
    out = _aggregated(analysed, group)
    out.update(values)
    return _finish(out, keys, analysed["duration_s"].sum(), latency_threshold)


def launch_rows(launches: pd.DataFrame, group_by: str, kernels: pd.DataFrame) -> np.ndarray:
    """Each launch's row in the ranked table `kernels` (-1 for a launch of no ranked group, as
    one outside the window), grouped exactly as `rank` groups them (keys, jobs apart, NA as
    NO_VALUE) and matched by the group's label."""
    keys = _jobs_apart(launches, GROUPINGS[group_by])
    frame = pd.DataFrame(
        {k: launches[k] if k in launches else pd.NA for k in keys}, index=launches.index
    )
    normalise_keys(frame, keys)
    group, values = group_codes(frame, keys)
    texts = (_key_text(k, np.asarray(values[k], dtype=object)) for k in keys)
    labels = [" ".join(parts) for parts in zip(*texts, strict=True)]
    position = {label: i for i, label in enumerate(kernels["group"].astype(str).tolist())}
    rows = np.array([position.get(label, -1) for label in labels], dtype=np.int64)
    return rows[group] if len(group) else np.zeros(0, dtype=np.int64)


def _jobs_apart(analysed: pd.DataFrame, keys: list[str]) -> list[str]:
    """The group keys, led by the job where the launches are of several jobs (the pipeline's
    `job` column, set only then): groups of different jobs are never summed."""
    return ["job", *keys] if "job" in analysed and "job" not in keys else keys


def _aggregated(analysed: pd.DataFrame, group: np.ndarray) -> dict:
    """Per group (numbered as by group_codes): sums, counts, extremes, first device and reason,
    limiter, what was not measured."""
    verdict = analysed["verdict"]  # compared as Arrow strings: no Python string per launch
    comm = (verdict == verdicts.COMMUNICATION).to_numpy(dtype=bool, na_value=False)
    placed = comm & analysed["t_bound_s"].notna().to_numpy()  # a collective on its link roof
    ok = (verdict != NOT_ANALYSABLE).to_numpy(dtype=bool, na_value=True) & (~comm | placed)
    duration = analysed["duration_s"].to_numpy(dtype=float)
    t_ok = np.where(ok, duration, np.nan)
    columns = {c: analysed[c] for c in _SUMS} | {"_t_ok": t_ok}
    sums = pd.DataFrame(columns, copy=False).groupby(group, sort=False)  # not copied into 2-D
    summed = sums.sum(min_count=1)
    n = len(summed)
    out = {c: summed[c].to_numpy() for c in summed.columns}
    out["_t_ok"] = np.nan_to_num(out["_t_ok"], nan=0.0)
    out["launches"] = np.bincount(group, minlength=n)
    out["analysed"] = np.bincount(group, ~np.isnan(t_ok), minlength=n).astype(np.int64)
    out["duration_min_s"], out["duration_max_s"] = _extremes(duration, group, n)
    above = np.bincount(group, (verdict == ABOVE_ROOF).to_numpy(bool, na_value=False), minlength=n)
    out["above_roof_launches"] = above.astype(np.int64)
    out["_comm"] = np.bincount(group, comm, minlength=n)
    out["device_id"] = _first_present(analysed["device_id"], group, n).array
    reason = analysed["reason"]
    out["reason"] = (
        _first_present(reason.where(schema.filled(reason, "") != ""), group, n).fillna("").array
    )
    out["limiter"] = _time_weighted_limiter(analysed["limiter"], duration, group, ok, n)
    if "excess_traffic" in analysed:  # PyTorch traces with counters lent by an ncu/rocprof export
        out["excess_traffic"] = _excess(analysed, group)
    if "comm_bytes" in analysed:  # traces: collectives and their bus bandwidth
        out.update(_bus(analysed, group, placed))
    out.update(group_facts.per_group(analysed, group, n))  # ncu's occupancy, waves, stalls
    out["unmeasured"] = unmeasured(analysed, group)
    return out


def _extremes(values: np.ndarray, group: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group the smallest and largest value, NaN left out (NaN where all are)."""
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    np.fmin.at(low, group, values)
    np.fmax.at(high, group, values)
    return low, high


def _first_present(column: pd.Series, group: np.ndarray, n: int) -> pd.Series:
    """Per group the first value that is not NA (NA where none is), in the column's dtype
    (text as "string": the group table holds a few rows)."""
    present = np.flatnonzero(column.notna().to_numpy())
    seen, first = schema.first_rows(group[present], n)
    text = isinstance(column.dtype, pd.CategoricalDtype)
    values = pd.Series(pd.NA, index=pd.RangeIndex(n), dtype="string" if text else column.dtype)
    values.iloc[seen] = column.iloc[present[first]].to_numpy()
    return values


def _time_weighted_limiter(
    limiter: pd.Series, duration: np.ndarray, group: np.ndarray, ok: np.ndarray, n: int
) -> pd.array:
    """Per group the limiter that covers the most analysed time (ties: the first by name); NA
    where no launch was analysed."""
    codes, names_ = pd.factorize(limiter[ok], sort=True, use_na_sentinel=False)
    if not len(codes):
        return pd.array([pd.NA] * n, dtype="string")
    pair = group[ok] * len(names_) + codes
    weight = pd.Series(duration[ok]).groupby(pair).sum()  # compensated, as the group sums
    pairs = weight.index.to_numpy()
    owner, choice = pairs // len(names_), pairs % len(names_)
    order = np.lexsort((choice, -weight.to_numpy(), owner))
    owner, choice = owner[order], choice[order]
    winners = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    result = np.full(n, -1)
    result[owner[winners]] = choice[winners]
    labels = list(names_) + [pd.NA]  # code -1: no analysed launch
    return pd.array([labels[c] for c in result.tolist()], dtype="string")


def group_codes(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, dict]:
    """Each row's group: groups of equal `keys` values numbered 0, 1, ... in the order they
    first appear (as groupby(keys, sort=False) orders them), each key column hashed once; and
    each key's value per group, taken from the few distinct values (a take from the whole
    column would first join its Arrow chunks: 36 MB for the names of 200k launches)."""
    group = np.zeros(len(frame), dtype=np.int64)
    factors = []
    for key in keys:
        codes, distinct = pd.factorize(frame[key], use_na_sentinel=False)
        factors.append((key, codes, distinct))
        group = pd.factorize(group * len(distinct) + codes)[0]
    first = schema.first_rows(group)[1]
    return group, {key: _text(distinct.take(codes[first])) for key, codes, distinct in factors}


def _text(values) -> pd.api.extensions.ExtensionArray:
    """Key values as the group table holds text: "string" (it has a few rows)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return pd.array(np.asarray(values, dtype=object), dtype="string")
    return values


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


COMM_COLUMNS = ["comm_message_bytes", "comm_busbw_bytes_per_s", "comm_pageable"]


def _bus(analysed: pd.DataFrame, group: np.ndarray, placed: np.ndarray) -> dict:
    """Per group: the collectives' mean message (over those with a size), and their bus bandwidth
    over the time of those placed on a link roof (Σ busBw x t / Σ t: Σ bytes x factor / Σ t)."""
    duration = analysed["duration_s"].to_numpy(dtype=float)
    bus = analysed["comm_busbw_bytes_per_s"].to_numpy(dtype=float)
    sums = pd.DataFrame(
        {
            "bytes": analysed["comm_bytes"].to_numpy(dtype=float),
            "moved": np.where(placed, bus * duration, np.nan),
            "time": np.where(placed, duration, np.nan),
        }
    ).groupby(group, sort=False)
    summed = sums.sum(min_count=1)
    pageable = np.bincount(group, hostcopies.pageable(analysed), minlength=len(summed))
    return {
        "comm_message_bytes": sums["bytes"].mean().to_numpy(),
        "comm_busbw_bytes_per_s": (summed["moved"] / summed["time"]).to_numpy(),
        "comm_pageable": pageable.astype(np.int64),  # host copies of pageable memory
    }


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
    texts = (_key_text(k, out[k].to_numpy(dtype=object)) for k in keys)  # NA: NO_VALUE
    group = [" ".join(parts) for parts in zip(*texts, strict=True)]
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


def _key_text(key: str, values: np.ndarray) -> np.ndarray:
    """A group key's values as its label shows them ("rank 0", else the value)."""
    if key != "rank":
        return values
    return np.array([v if v == NO_VALUE else f"rank {v}" for v in values], dtype=object)


# What the counters of a launch leave out, as flags the verdict sentence names (see explain):
# the flag of each missing quantity.
UNMEASURED = {
    "vector": "ops_vector",  # tensor ops counted, vector FLOPs not
    "matrix": "ops_matrix",  # vector FLOPs counted, tensor ops not
}
# What ncu's percentages stood in for: the flag of each estimate (core.analysis._SpeedOfLight).
ESTIMATED = {
    "dram_pct": ("bytes_source", Provenance.THROUGHPUT_PCT),
    "pipe_pct": ("compute_source", Provenance.PIPE_UTILISATION),
    "sm_pct": ("compute_source", Provenance.SM_THROUGHPUT_PCT),
}


def unmeasured(analysed: pd.DataFrame, group: np.ndarray) -> np.ndarray:
    """Per group (numbered as by group_codes), the comma-joined flags of what was not measured
    in any of its launches: `vector`, `matrix` (counters absent), `half` (FP16 vector
    FLOPs, which count an HFMA2 as one FMA and so may be under-counted up to 2x) and
    `fp32_assumed` (an FP32 GEMM whose kernel name leaves its roof open), and ESTIMATED's
    (DRAM bytes or compute time from ncu's percentages)."""
    flags = {name: schema.lacks(analysed, quantity) for name, quantity in UNMEASURED.items()}
    for name, (column, source) in ESTIMATED.items():
        if column in analysed:
            flags[name] = provenance.has(analysed[column], source)
    flags["half"] = (analysed["ops_vector_fp16"].fillna(0) > 0).to_numpy(dtype=bool)
    if "roof_assumed" in analysed:  # a trace's FP32 GEMM whose kernel name left its roof open
        flags["fp32_assumed"] = analysed["roof_assumed"].fillna(False).to_numpy(dtype=bool)
    n = int(group.max()) + 1 if len(group) else 0
    text = np.full(n, "", dtype=object)
    for name, mask in flags.items():
        anyof = np.bincount(group, mask, minlength=n) > 0
        text[anyof] = text[anyof] + "," + name
    return np.array([t.lstrip(",") for t in text], dtype=object)


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
