"""One file's per-group partial sums, and partials merged: what the ranking needs, without the
launches.

A `Partial` holds, per group of an analysed launch table, every sum, count, extreme, first
value and flag `core.ranking` ranks from (`of`); `merge` combines the partials of several files
in input order into the partial of their joined table. `ranking.rank(table)` is
`ranking.ranked(of(table))`, so ranking merged partials and ranking the whole table are the same
code: a folder can be reduced file by file and its launches let go.

Merged sums add the files' sums (each a compensated pandas group sum), so they may differ from
the sum over the joined table in the last bits; counts, extremes, first values and flags are
exact.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import group_facts, hostcopies, provenance, schema, verdicts
from rooflint.core.groupings import GROUPINGS
from rooflint.core.provenance import Provenance
from rooflint.core.verdicts import ABOVE_ROOF, NOT_ANALYSABLE

NO_VALUE = "(none)"  # a group key the profile did not give (no range, no grid)

# Per group, how each column merges: summed (NaN where no file had a value), counted, the
# smallest, the largest, the first value present (in input order), any flag set.
SUMS = ["duration_s", "t_bound_s", "headroom_s", "flops", "bytes_dram", "_t_ok"]
EXCESS_SUMS = ["_excess_measured", "_excess_minimum"]
BUS_SUMS = ["_comm_bytes_sum", "_comm_moved", "_comm_time"]
RANKED_COUNTS = ["launches", "analysed", "above_roof_launches", "_comm"]
COUNTS = [*RANKED_COUNTS, "_comm_bytes_count", "_comm_pageable"]
# Bytes at the memory levels beyond DRAM, summed: what a chart places a group by at that level
# (core.views.at_level), not ranked.
LEVEL_SUMS = ["bytes_l2", "bytes_l1"]
FIRSTS = ["device_id", "reason"]

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
FLAGS = [*UNMEASURED, *ESTIMATED, "half", "fp32_assumed"]  # in the order the text names them


@dataclass
class Partial:
    """Per group (rows of `groups`, in the order the groups first appear): the key values as
    text, then the columns above; `limiters`: per group and limiter the analysed time it covers
    (`group` is a row of `groups`); `total_time_s`: the summed launch time of the table."""

    keys: list[str]
    groups: pd.DataFrame
    limiters: pd.DataFrame
    total_time_s: float
    excess: bool = False  # PyTorch traces with counters lent by an ncu/rocprof export
    bus: bool = False  # traces: collectives and their bus bandwidth
    flags: list[str] = field(default_factory=list)  # the FLAGS this table can set
    classes: list[str] = field(default_factory=list)  # compute classes with any operations

    def with_job(self, job: str | None) -> Partial:
        """This file's groups as one job's (NO_VALUE for an input of no job), led by the job."""
        groups = self.groups.copy()
        groups.insert(0, "job", pd.array([job or NO_VALUE] * len(groups), dtype="string"))
        keys = self.keys if "job" in self.keys else ["job", *self.keys]
        return dataclasses.replace(self, keys=keys, groups=groups)


def keys_of(analysed: pd.DataFrame, group_by: str) -> list[str]:
    """The group keys, led by the job where the launches are of several jobs (the pipeline's
    `job` column, set only then): groups of different jobs are never summed."""
    keys = GROUPINGS[group_by]
    return ["job", *keys] if "job" in analysed and "job" not in keys else keys


def normalise_keys(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Group-key columns as text with NA spelled NO_VALUE, so NA groups rank and match (the
    table's Categorical text stays one: no string per launch)."""
    for k in keys:
        frame[k] = normalised(frame[k])
    return frame


def normalised(column: pd.Series) -> pd.Series:
    """One group-key column as normalise_keys spells it."""
    text = isinstance(column.dtype, pd.CategoricalDtype)
    return schema.filled(column if text else column.astype("string"), NO_VALUE)


def group_codes(frame: pd.DataFrame | dict, keys: list[str]) -> tuple[np.ndarray, dict]:
    """Each row's group: groups of equal `keys` values numbered 0, 1, ... in the order they
    first appear (as groupby(keys, sort=False) orders them), each key column hashed once; and
    each key's value per group, taken from the few distinct values (a take from the whole
    column would first join its Arrow chunks: 36 MB for the names of 200k launches). `frame`:
    a table, or its key columns by name."""
    group = np.zeros(len(frame[keys[0]]), dtype=np.int64)
    factors = []
    for key in keys:
        codes, distinct = _key_codes(frame[key])
        factors.append((key, codes, distinct))
        group = pd.factorize(group * len(distinct) + codes)[0]
    first = schema.first_rows(group)[1]
    return group, {key: _text(distinct.take(codes[first])) for key, codes, distinct in factors}


def _key_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index | pd.api.extensions.ExtensionArray]:
    """A key column's codes and the values they stand for: a Categorical's own codes (equal
    codes, equal values: no hash of its values), else pd.factorize's, NA a value of its own."""
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.hasnans:
        return column.array.codes.astype(np.int64), column.cat.categories
    return pd.factorize(column, use_na_sentinel=False)


def _text(values) -> pd.api.extensions.ExtensionArray:
    """Key values as the group table holds text: "string" (it has a few rows)."""
    if isinstance(values, pd.Index) or isinstance(values.dtype, pd.CategoricalDtype):
        return pd.array(np.asarray(values, dtype=object), dtype="string")
    return values


def grouped(launches: pd.DataFrame, group_by: str) -> tuple[list[str], np.ndarray, dict]:
    """A launch table's group keys (keys_of), each launch's group and each key's value per group
    (group_codes), the keys spelled as normalise_keys spells them: how the ranking groups."""
    keys = keys_of(launches, group_by)
    absent = pd.Series(pd.NA, index=launches.index, dtype="string")  # a key the table lacks
    columns = {k: normalised(launches[k] if k in launches else absent) for k in keys}
    group, values = group_codes(columns, keys)  # no frame of the keys: its columns suffice
    return keys, group, values


def of(analysed: pd.DataFrame, group_by: str = "kernel") -> Partial:
    """The partial sums of one analysed launch table, grouped by `group_by`."""
    keys, group, values = grouped(analysed, group_by)
    columns, limiters = _aggregated(analysed, group)
    flags = _flags(analysed)
    n = len(columns["launches"])
    for name, mask in flags.items():
        columns[name] = np.bincount(group, mask, minlength=n) > 0
    columns |= _facts(analysed, group, n)
    groups = pd.DataFrame({**values, **columns}, copy=False)
    return Partial(
        list(keys),
        groups,
        limiters,
        float(analysed["duration_s"].sum()),
        excess="excess_traffic" in analysed,
        bus="comm_bytes" in analysed,
        flags=list(flags),
        classes=_classes(analysed),
    )


def _classes(analysed: pd.DataFrame) -> list[str]:
    """The compute classes with any operations in the table, canonical order."""
    present = set(analysed.columns)  # one hash per class, then a NumPy test of the column
    columns = [(c, f"ops_{c}") for c in schema.COMPUTE_CLASSES if f"ops_{c}" in present]
    return [c for c, ops in columns if _any_positive(analysed[ops])]


def _any_positive(column: pd.Series) -> bool:
    """Whether any value is above zero (NA is not), as fillna(0).gt(0).any() but in NumPy."""
    return bool((column.to_numpy(dtype=float, na_value=np.nan) > 0).any())


def by_device(analysed: pd.DataFrame, whole: Partial, group_by: str = "kernel") -> dict:
    """The partial of each device's launches, by device id in order of first appearance
    (`whole`, the table's partial, where every launch is on one device); launches on no device
    are in none."""
    ids = analysed["device_id"]
    distinct = [d for d in pd.unique(ids.dropna().to_numpy()) if isinstance(d, str)]
    if len(distinct) == 1 and ids.notna().all():
        return {distinct[0]: whole}
    on = {d: (ids == d).to_numpy(dtype=bool, na_value=False) for d in distinct}
    return {d: of(analysed[mask], group_by) for d, mask in on.items()}


def merge_by_device(each: list[dict], wholes: list[Partial], merged: Partial) -> dict:
    """Files' partials by device (by_device, of the files' partials `wholes`) merged per device
    in input order: `merged` (the merge of `wholes`) where every file is on one device."""
    ids = list(dict.fromkeys(d for parts in each for d in parts))
    if len(ids) == 1 and all(
        parts.get(ids[0]) is whole for parts, whole in zip(each, wholes, strict=True)
    ):
        return {ids[0]: merged}
    return {d: merge([parts[d] for parts in each if d in parts]) for d in ids}


def _aggregated(analysed: pd.DataFrame, group: np.ndarray) -> tuple[dict, pd.DataFrame]:
    """Per group (numbered as by group_codes): sums, counts, extremes, first device and reason;
    and the analysed time per group and limiter."""
    verdict = analysed["verdict"]  # compared as Arrow strings: no Python string per launch
    comm = (verdict == verdicts.COMMUNICATION).to_numpy(dtype=bool, na_value=False)
    placed = comm & analysed["t_bound_s"].notna().to_numpy()  # a collective on its link roof
    ok = (verdict != NOT_ANALYSABLE).to_numpy(dtype=bool, na_value=True) & (~comm | placed)
    duration = analysed["duration_s"].to_numpy(dtype=float)
    t_ok = np.where(ok, duration, np.nan)
    columns = {c: analysed[c] for c in SUMS[:-1]} | {"_t_ok": t_ok}
    columns |= {c: analysed[c] for c in LEVEL_SUMS if c in analysed}
    if "excess_traffic" in analysed:
        both = analysed["excess_traffic"].notna()
        columns["_excess_measured"] = analysed["bytes_dram"].where(both)
        columns["_excess_minimum"] = analysed["bytes_model_min"].where(both)
    if "comm_bytes" in analysed:
        bus = analysed["comm_busbw_bytes_per_s"].to_numpy(dtype=float)
        columns["_comm_bytes_sum"] = analysed["comm_bytes"].to_numpy(dtype=float)
        columns["_comm_moved"] = np.where(placed, bus * duration, np.nan)
        columns["_comm_time"] = np.where(placed, duration, np.nan)
    out = _group_sums(columns, group)
    n = int(group.max()) + 1 if len(group) else 0
    out["_t_ok"] = np.nan_to_num(out["_t_ok"], nan=0.0)
    out["launches"] = np.bincount(group, minlength=n)
    out["analysed"] = np.bincount(group, ~np.isnan(t_ok), minlength=n).astype(np.int64)
    out["duration_min_s"], out["duration_max_s"] = _extremes(duration, group, n)
    above = np.bincount(group, (verdict == ABOVE_ROOF).to_numpy(bool, na_value=False), minlength=n)
    out["above_roof_launches"] = above.astype(np.int64)
    out["_comm"] = np.bincount(group, comm, minlength=n)
    if "comm_bytes" in analysed:
        sized = analysed["comm_bytes"].notna().to_numpy()
        out["_comm_bytes_count"] = np.bincount(group, sized, minlength=n).astype(np.int64)
        pageable = hostcopies.pageable(analysed)  # host copies of pageable memory
        out["_comm_pageable"] = np.bincount(group, pageable, minlength=n).astype(np.int64)
    out["device_id"] = _first_present(analysed["device_id"], group, n)
    out["reason"] = _first_present(analysed["reason"], group, n, blank="")
    return out, _limiter_time(analysed["limiter"], duration, group, ok)


def _group_sums(columns: dict, group: np.ndarray) -> dict[str, np.ndarray]:
    """Per group (numbered as by group_codes) each column's sum, NaN where it has no value: the
    float64 columns summed by pandas as two 2-D blocks, those without NaN and those with (how
    pandas sums a block depends on whether it holds NaN: np.add.reduceat for groups in order,
    else a compensated sum), the sums of each column alone at a fraction of the cost; columns
    of other dtypes summed apart, as they sum."""
    plain = [c for c, v in columns.items() if _float64(v)]
    values = {c: np.asarray(columns[c]) for c in plain}
    nan = {c: bool(np.isnan(v).any()) for c, v in values.items()}
    blocks = [[c for c in plain if nan[c] is has] for has in (False, True)]
    frames = [
        pd.DataFrame(np.column_stack([values[c] for c in block]), columns=block, copy=False)
        for block in blocks
        if block
    ]
    other = {c: v for c, v in columns.items() if c not in values}
    frames += [pd.DataFrame(other, copy=False)] if other else []
    out: dict[str, np.ndarray] = {}
    for frame in frames:
        summed = frame.groupby(group, sort=False).sum(min_count=1)
        out |= {c: summed[c].to_numpy() for c in summed.columns}
    return {c: out[c] for c in columns}


def _float64(values) -> bool:
    """Whether a column is plain float64 (NumPy's, not a nullable or Arrow one)."""
    return isinstance(values, np.ndarray | pd.Series) and values.dtype == np.float64


def _extremes(values: np.ndarray, group: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group the smallest and largest value, NaN left out (NaN where all are)."""
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    np.fmin.at(low, group, values)
    np.fmax.at(high, group, values)
    return low, high


def _first_present(
    column: pd.Series, group: np.ndarray, n: int, blank: str | None = None
) -> pd.api.extensions.ExtensionArray:
    """Per group the first value that is not NA (nor `blank`, where given: text), NA where none
    is, in the column's dtype (text as "string": the group table holds a few rows)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return _first_text(column, group, n, blank)
    if blank is not None:
        column = column.where(schema.filled(column, blank) != blank)
    present = np.flatnonzero(column.notna().to_numpy())
    seen, first = schema.first_rows(group[present], n)
    values = pd.Series(pd.NA, index=pd.RangeIndex(n), dtype=column.dtype)
    values.iloc[seen] = column.iloc[present[first]].to_numpy()
    return values.array


def _first_text(
    column: pd.Series, group: np.ndarray, n: int, blank: str | None
) -> pd.api.extensions.ExtensionArray:
    """_first_present of a Categorical, from its codes: one text per group, not per launch."""
    codes = column.array.codes
    categories = column.cat.categories
    present = codes >= 0
    if blank is not None and blank in categories:
        present &= codes != categories.get_loc(blank)
    rows = np.flatnonzero(present)
    seen, first = schema.first_rows(group[rows], n)
    values = np.full(n, pd.NA, dtype=object)
    values[seen] = np.asarray(categories, dtype=object)[codes[rows[first]]]
    return pd.array(values, dtype="string")


def _limiter_time(
    limiter: pd.Series, duration: np.ndarray, group: np.ndarray, ok: np.ndarray
) -> pd.DataFrame:
    """Per group and limiter (NA among them) the analysed time it covers."""
    return _limiter_sums(group[ok], limiter[ok], duration[ok])


def _limiter_sums(group: np.ndarray, limiter, weight: np.ndarray) -> pd.DataFrame:
    """Per group and limiter (NA among them), ordered by both, the summed weight."""
    codes, names_ = pd.factorize(limiter, sort=True, use_na_sentinel=False)
    if not len(codes):
        return _limiters(np.array([], dtype=np.int64), [], np.array([], dtype=float))
    pair = group * len(names_) + codes
    summed = pd.Series(weight).groupby(pair).sum()  # compensated, as the group sums
    pairs = summed.index.to_numpy()
    labels = np.asarray(names_, dtype=object)[pairs % len(names_)]
    return _limiters(pairs // len(names_), labels, summed.to_numpy())


def _limiters(group, limiter, weight) -> pd.DataFrame:
    return pd.DataFrame(
        {"group": group, "limiter": pd.array(limiter, dtype=object), "weight": weight}
    )


def time_weighted_limiter(limiters: pd.DataFrame, n: int) -> pd.array:
    """Per group the limiter that covers the most analysed time (ties: the first by name); NA
    where no launch was analysed."""
    if not len(limiters):
        return pd.array([pd.NA] * n, dtype="string")
    choice, names_ = pd.factorize(limiters["limiter"], sort=True, use_na_sentinel=False)
    owner = limiters["group"].to_numpy()
    order = np.lexsort((choice, -limiters["weight"].to_numpy(), owner))
    owner, choice = owner[order], choice[order]
    winners = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    result = np.full(n, -1)
    result[owner[winners]] = choice[winners]
    labels = list(names_) + [pd.NA]  # code -1: no analysed launch
    return pd.array([labels[c] for c in result.tolist()], dtype="string")


def _flags(analysed: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per launch, each flag of what was not measured: `vector`, `matrix` (counters absent),
    `half` (FP16 vector FLOPs, which count an HFMA2 as one FMA and so may be under-counted up
    to 2x) and `fp32_assumed` (an FP32 GEMM whose kernel name leaves its roof open), and
    ESTIMATED's (DRAM bytes or compute time from ncu's percentages)."""
    flags = {name: schema.lacks(analysed, quantity) for name, quantity in UNMEASURED.items()}
    for name, (column, source) in ESTIMATED.items():
        if column in analysed:
            flags[name] = provenance.has(analysed[column], source)
    flags["half"] = (analysed["ops_vector_fp16"].fillna(0) > 0).to_numpy(dtype=bool)
    if "roof_assumed" in analysed:  # a trace's FP32 GEMM whose kernel name left its roof open
        flags["fp32_assumed"] = analysed["roof_assumed"].fillna(False).to_numpy(dtype=bool)
    return flags


def unmeasured(analysed: pd.DataFrame, group: np.ndarray) -> np.ndarray:
    """Per group (numbered as by group_codes), the comma-joined flags of what was not measured
    in any of its launches (see _flags)."""
    n = int(group.max()) + 1 if len(group) else 0
    flags = {
        name: np.bincount(group, mask, minlength=n) > 0 for name, mask in _flags(analysed).items()
    }
    return flag_text(flags, n)


def flag_text(flags: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Per group the names of the flags set, comma-joined in FLAGS order."""
    text = np.full(n, "", dtype=object)
    for name in [f for f in FLAGS if f in flags]:
        anyof = flags[name]
        text[anyof] = text[anyof] + "," + name
    return np.array([t.lstrip(",") for t in text], dtype=object)


FACTS_TIME = "_facts_duration_s"  # the duration of the launch a group's facts are from


def _facts(analysed: pd.DataFrame, group: np.ndarray, n: int) -> dict:
    """ncu's launch facts per group (core.group_facts: its longest launch with any fact) and
    that launch's duration (-1 where unknown; NaN where no launch has facts), for the merge."""
    facts, longest = group_facts.per_group(analysed, group, n)
    return {**facts, FACTS_TIME: longest} if facts else {}


def facts_of(groups: pd.DataFrame) -> dict:
    """The launch-fact columns of a partial's groups, as group_facts gives them."""
    return {
        c: groups[c].array if groups[c].dtype == "string" else groups[c].to_numpy(dtype=float)
        for c in schema.LAUNCH_FACT_COLUMNS
        if c in groups
    }


def _merged_facts(joined: pd.DataFrame, group: np.ndarray, n: int) -> dict:
    """Per merged group, the facts of the partial row whose launch was longest (ties: the
    first file's), as group_facts picks over the joined launches."""
    if FACTS_TIME not in joined:
        return {}
    columns = [c for c in schema.LAUNCH_FACT_COLUMNS if c in joined]
    time = joined[FACTS_TIME].to_numpy(dtype=float)
    facts, chosen_time = group_facts.longest(joined, columns, time, group, n)
    return {**facts, FACTS_TIME: chosen_time}


def merge(partials: list[Partial]) -> Partial:
    """The partial of the joined tables of `partials` (in input order): groups of equal keys
    combined, in the order they first appear."""
    if len(partials) == 1:
        return partials[0]
    keys = partials[0].keys
    if any(p.keys != keys for p in partials):
        partials = [p if "job" in p.keys else p.with_job(None) for p in partials]
        keys = partials[0].keys
    flags = [f for f in FLAGS if any(f in p.flags for p in partials)]
    frames = [_with_columns(p.groups, flags) for p in partials]
    joined = pd.concat(frames, ignore_index=True)
    group, values = group_codes(joined, keys)
    grouped = joined.drop(columns=keys).groupby(group, sort=False)
    sums = [c for c in SUMS + EXCESS_SUMS + BUS_SUMS + LEVEL_SUMS if c in joined]
    out = {c: grouped[c].sum(min_count=1).to_numpy() for c in sums}
    out["_t_ok"] = np.nan_to_num(out["_t_ok"], nan=0.0)
    out |= {c: grouped[c].sum().to_numpy().astype(np.int64) for c in COUNTS if c in joined}
    out["duration_min_s"] = grouped["duration_min_s"].min().to_numpy()
    out["duration_max_s"] = grouped["duration_max_s"].max().to_numpy()
    out |= {c: grouped[c].first().array for c in FIRSTS}  # first not NA, in input order
    out |= {c: grouped[c].any().to_numpy(dtype=bool) for c in flags}
    out |= _merged_facts(joined, group, len(values[keys[0]]))
    return Partial(
        list(keys),
        pd.DataFrame({**values, **out}, copy=False),
        _merged_limiters(partials, group),
        float(sum(p.total_time_s for p in partials)),
        excess=any(p.excess for p in partials),
        bus=any(p.bus for p in partials),
        flags=flags,
        classes=[c for c in schema.COMPUTE_CLASSES if any(c in p.classes for p in partials)],
    )


def _with_columns(groups: pd.DataFrame, flags: list[str]) -> pd.DataFrame:
    """A partial's groups with every flag the merge has (False where it cannot be set)."""
    missing = {f: np.zeros(len(groups), dtype=bool) for f in flags if f not in groups}
    return groups.assign(**missing) if missing else groups


def _merged_limiters(partials: list[Partial], group: np.ndarray) -> pd.DataFrame:
    """Each file's time per limiter, its groups numbered as the merged ones, summed."""
    offsets = np.cumsum([0, *[len(p.groups) for p in partials]])
    frames = [
        p.limiters.assign(group=group[p.limiters["group"].to_numpy() + offset])
        for p, offset in zip(partials, offsets[:-1], strict=True)
        if len(p.limiters)
    ]
    if not frames:
        return _limiters(np.array([], dtype=np.int64), [], np.array([], dtype=float))
    joined = pd.concat(frames, ignore_index=True)
    return _limiter_sums(joined["group"].to_numpy(), joined["limiter"], joined["weight"].to_numpy())
