"""A PyTorch trace and a counter export of one program: counters lent to the trace's kernels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import names, provenance, schema
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.provenance import Provenance

TRACE_FORMAT = InputFormat.PYTORCH_TRACE
COUNTERS = schema.OPS + schema.BYTES
_KEY = ["_name", "grid", "block"]


def pair(profiles: list[Profile]) -> list[Profile]:
    """When the inputs hold one PyTorch trace and counter profiles (ncu, rocprof), the counters
    fill the trace's matching launches (same kernel name, grid and block, n-th with n-th) and the
    counter profiles are folded into the trace; otherwise the profiles are returned as they are.
    Either way each trace's sources are then settled and its launches get their notes: call
    it once on the profiles as read."""
    traces = [p for p in profiles if p.format == TRACE_FORMAT]
    counters = [p for p in profiles if p.format != TRACE_FORMAT]
    lending = len(traces) == 1 and bool(counters)
    for trace in traces:
        modelled = provenance.has(trace.launches["bytes_source"], Provenance.MODEL)  # as read
        for profile in counters if lending else []:
            lend(trace, profile)
        provenance.note_bytes(trace.launches, modelled)
    return traces if lending else profiles


def lend(trace: Profile, counters: Profile) -> None:
    """Fill `counters`' measured FLOPs and bytes into the matching launches of `trace`."""
    launches = trace.launches
    left = _keyed(launches)
    right = _keyed(counters.launches)
    matched = left.merge(right, on=_KEY + ["_nth"], how="inner", suffixes=("", "_c"))
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
    if matched < total:
        trace.repairs.append(
            f"{total - matched} launches of {counters.source} matched no kernel of "
            "the trace (name, grid and block) and are not reported"
        )
