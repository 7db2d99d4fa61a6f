"""Numbers of a Result beyond the ranking, for what reports show: one device's groups ranked
alone, groups at another memory level, achieved DRAM bandwidth against its roof."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from rooflint.core import ranking


def for_device(result, device_id: str):
    """The Result restricted to one device's launches, its groups ranked among themselves (time
    shares, ranks and ids are the device's own)."""
    launches = result.launches[(result.launches["device_id"] == device_id).fillna(False).to_numpy()]
    kernels = ranking.rank(launches, result.group_by, result.latency_threshold)
    uses = [u for u in result.devices if u.device is not None and u.device.id == device_id]
    inputs = [p for p in result.inputs if p.source in set(launches["source"].dropna())]
    return dataclasses.replace(
        result, launches=launches, kernels=kernels, devices=uses, inputs=inputs
    )


def at_level(result, level: str) -> pd.DataFrame:
    """Per row of result.kernels: `bytes` moved at `level` ("dram", "l2", "l1"), `intensity`
    (FLOP per byte), achieved `flops_per_s` and `bytes_per_s`. DRAM's are the ranking's own
    columns; another level's bytes are summed over each group's launches, grouped exactly as
    the ranking groups them."""
    k = result.kernels
    if level == "dram":
        return pd.DataFrame(
            {
                "bytes": k["bytes_dram"].astype("float64"),
                "intensity": k["intensity_dram"].astype("float64"),
                "flops_per_s": k["achieved_flops_per_s"].astype("float64"),
                "bytes_per_s": k["achieved_bytes_per_s"].astype("float64"),
            }
        )
    flops = k["flops"].astype("float64")
    duration = k["duration_s"].astype("float64")
    duration = duration.where(duration > 0)
    moved = pd.Series(_level_bytes(result, level).to_numpy(), index=k.index)
    return pd.DataFrame(
        {
            "bytes": moved,
            "intensity": flops / moved.where(moved > 0),
            "flops_per_s": flops / duration,
            "bytes_per_s": moved / duration,
        }
    )


def _level_bytes(result, level: str) -> pd.Series:
    """Bytes at `level` summed over each group's launches, in the order of result.kernels (NaN
    where none of a group's launches has them)."""
    rows = ranking.launch_rows(result.launches, result.group_by, result.kernels)
    moved = result.launches[f"bytes_{level}"].to_numpy(dtype="float64", na_value=np.nan)
    n = len(result.kernels)
    mine = (rows >= 0) & ~np.isnan(moved)
    sums = np.bincount(rows[mine], moved[mine], minlength=n)
    counted = np.bincount(rows[mine], minlength=n)
    return pd.Series(np.where(counted > 0, sums, np.nan))


def dram_fraction(result, device_id, achieved_bytes_per_s) -> float | None:
    """Achieved DRAM bandwidth as a fraction of the DRAM roof of device `device_id` (None when
    either is unknown)."""
    for use in result.devices:
        if use.device is not None and use.device.id == device_id and "dram" in use.device.memory:
            if achieved_bytes_per_s is not None and not pd.isna(achieved_bytes_per_s):
                return float(achieved_bytes_per_s) / use.device.memory["dram"].value
    return None
