"""A PyTorch trace and a counter export of one program: counters lent to the trace's kernels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import names, provenance, schema
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.provenance import Provenance

# The timelines an export's counters join: traces whose launches carry operators and models.
TRACE_FORMATS = (InputFormat.PYTORCH_TRACE, InputFormat.NSYS_SQLITE)
COUNTERS = schema.OPS + schema.BYTES
_KEY = ["_name", "grid", "block"]


# An export is joined to a trace only when most of its launches find their kernel in it: then
# they are one run seen by two tools. Below that, they are other programs (a folder of exports
# beside a trace) and each file is reported on its own.
SAME_RUN = 0.5


def pair(profiles: list[Profile]) -> list[Profile]:
    """A PyTorch trace and counter profiles (ncu, rocprof) of the same run: the counters fill the
    trace's matching launches (same kernel name, grid and block, n-th with n-th). An export is of
    the same run when it comes from the same GPU and more than half of its launches match the
    trace's; it goes to the trace it matches best. Its launches that matched nothing are reported
    with their own file, and an export of another run is reported as it is: no launch is lost.
    Either way each trace's sources are then settled and its launches get their notes: call it
    once on the profiles as read."""
    traces = [p for p in profiles if p.format in TRACE_FORMATS]
    if not traces:
        return profiles
    modelled = {
        id(t): provenance.has(t.launches["bytes_source"], Provenance.MODEL, Provenance.ESTIMATE)
        for t in traces
    }  # as read
    out = []
    for profile in profiles:
        if profile.format in TRACE_FORMATS:
            out.append(profile)
            continue
        trace, matched = _same_run(profile, traces)
        if trace is None:
            out.append(profile)
            continue
        rest = lend(trace, profile, matched)
        if rest is not None:
            out.append(rest)
    for trace in traces:
        provenance.note_bytes(trace.launches, modelled[id(trace)])
    return out


def _same_run(counters: Profile, traces: list[Profile]) -> tuple[Profile | None, pd.DataFrame]:
    """The trace `counters` belongs to (None when none), with the matched (row, row) pairs."""
    best, pairs = None, pd.DataFrame()
    for trace in traces:
        if not _same_gpu(trace.launches, counters.launches):
            continue
        found = _matches(trace.launches, counters.launches)
        if len(found) > SAME_RUN * len(counters.launches) and len(found) > len(pairs):
            best, pairs = trace, found
    return best, pairs


def _same_gpu(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """The device names agree (by their words, as the catalog matches them), and where either
    names none, the architectures do."""
    name_a, name_b = _most_common(a, "device_name"), _most_common(b, "device_name")
    if name_a and name_b:
        return names_agree(name_a, name_b)
    arch_a, arch_b = _most_common(a, "arch"), _most_common(b, "arch")
    return not (arch_a and arch_b) or arch_a == arch_b


def names_agree(a: str, b: str) -> bool:
    """ "NVIDIA H200" and "H200": one's words are all in the other's."""
    words_a, words_b = set(a.lower().split()), set(b.lower().split())
    words_a.discard("nvidia")
    words_b.discard("nvidia")
    return words_a <= words_b or words_b <= words_a


def _most_common(frame: pd.DataFrame, column: str) -> str | None:
    if column not in frame or not frame[column].notna().any():
        return None
    return str(frame[column].astype(object).dropna().mode().iloc[0]).strip() or None


def _matches(trace: pd.DataFrame, counters: pd.DataFrame) -> pd.DataFrame:
    """(_row, _row_c) of the launches with the same name signature, grid, block and occurrence."""
    return _keyed(trace).merge(
        _keyed(counters), on=_KEY + ["_nth"], how="inner", suffixes=("", "_c")
    )[["_row", "_row_c"]]


def lend(trace: Profile, counters: Profile, matched: pd.DataFrame | None = None) -> Profile | None:
    """Fill `counters`' measured FLOPs and bytes into the matching launches of `trace`; the
    export's launches that matched nothing, as a profile of their own file (None when all did)."""
    launches = trace.launches
    matched = _matches(launches, counters.launches) if matched is None else matched
    rows = matched["_row"].to_numpy()
    source = counters.launches.iloc[matched["_row_c"].to_numpy()]
    for column in COUNTERS:
        values = source[column].to_numpy(dtype=float)
        has = ~np.isnan(values)
        target = launches[column].to_numpy(copy=True)
        target[rows[has]] = values[has]
        launches[column] = target
    _mark_counters(launches, rows, source)
    _account(trace, counters, len(matched))
    left = np.ones(len(counters.launches), dtype=bool)
    left[matched["_row_c"].to_numpy()] = False
    if not left.any():
        return None
    counters.launches = counters.launches[left].reset_index(drop=True)
    counters.notes.append(
        f"{int(left.sum())} launches matched no kernel of {trace.source} (name, grid and block): "
        "reported here with their own counters"
    )
    return counters


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """Join keys: the kernel's name signature (a trace and ncu spell namespaces, literals and
    lambdas differently), grid, block, and which occurrence of that key the launch is (0, 1,
    2, ... in launch order)."""
    codes, kernels = pd.factorize(schema.filled(frame["kernel"], ""))
    signatures = np.array([names.signature(k) for k in kernels], dtype=object)
    out = pd.DataFrame(
        {
            "_name": signatures[codes],  # worked out once per distinct kernel name
            "grid": schema.filled(frame["grid"], ""),
            "block": schema.filled(frame["block"], ""),
            "_row": np.arange(len(frame)),
        }
    )
    out["_nth"] = out.groupby(_KEY, sort=False).cumcount()
    return out


def _mark_counters(launches: pd.DataFrame, rows: np.ndarray, source: pd.DataFrame) -> None:
    """The lent launches' sources, excess traffic and what they still miss."""
    lent = {
        "flops_source": schema.flops(source).notna().to_numpy(),
        "bytes_source": source["bytes_dram"].notna().to_numpy(),
    }
    for column, has in lent.items():
        launches[column] = provenance.changed(launches[column], rows[has], Provenance.COUNTERS)
    measured = provenance.has(launches["bytes_source"], Provenance.COUNTERS)
    minimum = launches["bytes_model_min"].to_numpy(dtype=float)
    ratio = launches["bytes_dram"].to_numpy(dtype=float) / np.where(minimum > 0, minimum, np.nan)
    launches["excess_traffic"] = np.where(measured, ratio, np.nan)
    schema.clear_missing(launches, _now_counted(launches))


def _now_counted(launches: pd.DataFrame) -> np.ndarray:
    """Launches whose quantities now all come from counters: their "no model" entries are moot."""
    counted = (schema.flops(launches).notna() & launches["bytes_dram"].notna()).to_numpy()
    return counted & provenance.has(launches["flops_source"], Provenance.COUNTERS)


def _account(trace: Profile, counters: Profile, matched: int) -> None:
    total = len(counters.launches)
    trace.notes.append(
        f"counters from {counters.source} filled {matched} of its {total} launches "
        "into the trace's kernels with the same name, grid and block (in order); "
        "kernel times stay the trace's"
    )
