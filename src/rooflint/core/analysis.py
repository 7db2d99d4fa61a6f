"""The roofline math: per-launch bound time, efficiency, limiter, headroom and verdict.

Pure column arithmetic over a canonical launch table and one device's ceilings, so it runs
unchanged on one partition of a distributed dataframe.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rooflint.core import schema

# NVIDIA's guidance: latency-bound when both compute and memory throughput are under 60 % of peak.
LATENCY_THRESHOLD = 0.60
# Counters and clocks jitter by a few percent; beyond this a launch is above its roof: a data error.
ABOVE_ROOF_TOLERANCE = 0.05

MEMORY_BOUND = "memory-bound"
COMPUTE_BOUND = "compute-bound"
LATENCY_BOUND = "latency-bound"
ABOVE_ROOF = "above-roof"
NOT_ANALYSABLE = "not-analysable"
VERDICTS = (COMPUTE_BOUND, MEMORY_BOUND, LATENCY_BOUND, ABOVE_ROOF, NOT_ANALYSABLE)

RESULT_COLUMNS = ["device_id", "flops", "intensity_dram", "achieved_flops_per_s", "achieved_bytes_per_s",
                  "t_compute_s", "t_memory_s", "t_bound_s", "efficiency", "limiter", "headroom_s",
                  "verdict", "reason"]
# The GPU has no FLOP counters at all (MI100, RDNA): not a collection mistake. Such a launch has
# no compute verdict: it may be compute-bound, and calling it memory- or latency-bound would
# claim more than its counters say. It stays not analysable, and reporters show its achieved
# DRAM bandwidth against the DRAM roof instead (the bytes and duration were measured).
NO_FLOP_COUNTERS = "no FLOP counters on this GPU"
_NO_COUNTERS_MARK = "has no typed FLOP counters"

RESULT_UNITS = {"flops": "op", "intensity_dram": "op/byte", "achieved_flops_per_s": "op/s",
                "achieved_bytes_per_s": "byte/s", "t_compute_s": "s", "t_memory_s": "s",
                "t_bound_s": "s", "efficiency": "fraction of attainable", "headroom_s": "s"}


def analyze(launches: pd.DataFrame, device, latency_threshold: float = LATENCY_THRESHOLD) -> pd.DataFrame:
    """The launch table with the roofline result columns added (see RESULT_COLUMNS).

    `device` has `id`, `compute` {class: Ceiling} in op/s and `memory` {level: Ceiling} in
    byte/s (a `rooflint.hardware.Device`); None means no ceilings are known.
    """
    out = launches.copy()
    compute = _values(device.compute) if device is not None else {}
    memory = _values(device.memory) if device is not None else {}
    out["device_id"] = pd.array([device.id if device is not None else pd.NA] * len(out), dtype="string")
    duration = out["duration_s"]
    out["flops"] = schema.flops(out)
    out["intensity_dram"] = out["flops"] / out["bytes_dram"].where(out["bytes_dram"] > 0)
    out["achieved_flops_per_s"] = out["flops"] / duration.where(duration > 0)
    out["achieved_bytes_per_s"] = out["bytes_dram"] / duration.where(duration > 0)
    t_compute, compute_limiter, uncovered = _compute_time(out, compute)
    t_memory, memory_limiter = _memory_time(out, memory)
    t_bound = np.fmax(t_compute, t_memory)
    out["t_compute_s"], out["t_memory_s"], out["t_bound_s"] = t_compute, t_memory, t_bound
    reason = _reasons(out, device, uncovered)
    ok = reason == ""
    out["t_bound_s"] = out["t_bound_s"].where(ok)
    out["efficiency"] = (out["t_bound_s"] / duration).where(ok)
    out["headroom_s"] = (duration - out["t_bound_s"]).clip(lower=0).where(ok)
    memory_wins = t_memory >= t_compute
    out["limiter"] = pd.array(np.where(ok, np.where(memory_wins, memory_limiter, compute_limiter), None), dtype="string")
    out["verdict"] = pd.array(_verdicts(out["efficiency"], memory_wins, ok, latency_threshold), dtype="string")
    out["reason"] = pd.array(reason, dtype="string")
    return out[[c for c in launches.columns if c not in RESULT_COLUMNS] + RESULT_COLUMNS]


def _values(ceilings: Mapping) -> dict[str, float]:
    return {k: float(getattr(v, "value", v)) for k, v in ceilings.items() if getattr(v, "value", v)}


def _compute_time(frame: pd.DataFrame, compute: dict[str, float]):
    """Σ ops_c / P_c over classes; the biggest term names the compute limiter.

    Returns (time, limiter name, uncovered) where `uncovered` names, per row, a class with
    operations but no ceiling on this device (which makes the launch not analysable).
    """
    n = len(frame)
    total = np.zeros(n)
    best = np.full(n, -1.0)
    limiter = np.full(n, "", dtype=object)
    uncovered = np.full(n, "", dtype=object)
    for cls in schema.COMPUTE_CLASSES:
        ops = frame["ops_" + cls].fillna(0.0).to_numpy()
        peak = compute.get(cls)
        if peak is None:
            uncovered = np.where((ops > 0) & (uncovered == ""), cls, uncovered)
            continue
        t = ops / peak
        total += t
        better = t > best
        limiter = np.where(better, cls, limiter)
        best = np.where(better, t, best)
    return total, limiter, uncovered


def _memory_time(frame: pd.DataFrame, memory: dict[str, float]):
    """max_l bytes_l / BW_l over levels that have both bytes and a bandwidth."""
    n = len(frame)
    worst = np.full(n, np.nan)
    limiter = np.full(n, "", dtype=object)
    for level in schema.MEMORY_LEVELS:
        bw = memory.get(level)
        if bw is None:
            continue
        t = frame["bytes_" + level].to_numpy() / bw
        better = ~np.isnan(t) & (np.isnan(worst) | (t > worst))
        limiter = np.where(better, level, limiter)
        worst = np.where(better, t, worst)
    return worst, limiter


def _reasons(frame: pd.DataFrame, device, uncovered: np.ndarray) -> np.ndarray:
    """Why each launch cannot be placed on the roofline ("" when it can); first reason wins."""
    duration = frame["duration_s"].to_numpy()
    ops_missing = frame[schema.OPS].isna().all(axis=1).to_numpy()
    no_counters = frame["missing"].fillna("").str.contains(_NO_COUNTERS_MARK, regex=False).to_numpy()
    checks = [
        (np.full(len(frame), device is None), "no device ceilings (pass --device ID or --device-file)"),
        (np.isnan(duration), "missing duration"),
        (~np.isnan(duration) & (duration <= 0), "zero duration"),
        (frame["bytes_dram"].isna().to_numpy(), "missing DRAM bytes"),
        (ops_missing & ~no_counters, "missing FLOP counters"),
        (ops_missing & no_counters, NO_FLOP_COUNTERS),
        (uncovered != "", "no ceiling for " + uncovered.astype(str) + " on this device"),
    ]
    if device is not None and "dram" not in _values(device.memory):
        checks.insert(1, (np.ones(len(frame), bool), "device has no DRAM bandwidth"))
    reason = np.full(len(frame), "", dtype=object)
    for mask, text in reversed(checks):
        reason = np.where(mask, text, reason)
    return reason


def _verdicts(efficiency: pd.Series, memory_wins: np.ndarray, ok: np.ndarray, threshold: float) -> np.ndarray:
    eff = efficiency.to_numpy(dtype=float, na_value=np.nan)
    bound = np.where(memory_wins, MEMORY_BOUND, COMPUTE_BOUND)
    verdict = np.where(eff >= threshold, bound, LATENCY_BOUND)
    verdict = np.where(eff > 1 + ABOVE_ROOF_TOLERANCE, ABOVE_ROOF, verdict)
    return np.where(ok, verdict, NOT_ANALYSABLE)
