"""A PyTorch trace and a counter export of one program: counters lent to the trace's kernels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import names, schema
from rooflint.core.profile import InputFormat, Profile

TRACE_FORMAT = InputFormat.PYTORCH_TRACE
COUNTERS = schema.OPS + schema.BYTES
_KEY = ["_name", "grid", "block"]
MODEL_BYTES = "DRAM bytes = operator minimum from shapes"  # the trace reader's per-launch note


def pair(profiles: list[Profile]) -> list[Profile]:
    """When the inputs hold one PyTorch trace and counter profiles (ncu, rocprof), the counters
    fill the trace's matching launches (same kernel name, grid and block, n-th with n-th) and the
    counter profiles are folded into the trace; otherwise the profiles are returned as they are."""
    traces = [p for p in profiles if p.format == TRACE_FORMAT]
    counters = [p for p in profiles if p.format != TRACE_FORMAT]
    if len(traces) != 1 or not counters:
        return profiles
    trace = traces[0]
    for profile in counters:
        lend(trace, profile)
    return [trace]


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
    flops = schema.flops(source).notna().to_numpy()
    dram = source["bytes_dram"].notna().to_numpy()
    for column, has in (("flops_source", flops), ("bytes_source", dram)):
        values = launches[column].astype(object).to_numpy(copy=True)
        values[rows[has]] = "counters"
        launches[column] = pd.array(values, dtype="string")
    measured = (launches["bytes_source"] == "counters").fillna(False).to_numpy()
    minimum = launches["bytes_model_min"].to_numpy(dtype=float)
    ratio = launches["bytes_dram"].to_numpy(dtype=float) / np.where(minimum > 0, minimum, np.nan)
    launches["excess_traffic"] = np.where(measured, ratio, np.nan)
    launches["missing"] = schema.filled(launches["missing"].where(~_now_counted(launches)), "")
    notes = launches["notes"].to_numpy(dtype=object, na_value="")
    fixed = [n.replace(MODEL_BYTES, "measured DRAM bytes from counters") for n in notes[measured]]
    notes[measured] = fixed
    launches["notes"] = schema.text(pd.array(notes, dtype="string"))


def _now_counted(launches: pd.DataFrame) -> np.ndarray:
    """Launches whose quantities now all come from counters: their "no model" entries are moot."""
    counted = schema.flops(launches).notna() & launches["bytes_dram"].notna()
    return (counted & (launches["flops_source"] == "counters").fillna(False)).to_numpy()


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
