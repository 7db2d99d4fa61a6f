"""Numbers of a Result beyond the ranking, for what reports show: one device's groups ranked
alone, groups at another memory level, achieved DRAM bandwidth against its roof."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from rooflint.core import partials, ranking


def for_device(result, device_id: str):
    """The Result restricted to one device's launches, its groups ranked among themselves (time
    shares, ranks and ids are the device's own): from the device's partial sums, so a Result
    without its launches (rooflint.reduced) has the same view."""
    part = device_partial(result, device_id)
    on = (result.launches["device_id"] == device_id).fillna(False).to_numpy(dtype=bool)
    uses = [u for u in result.devices if u.device is not None and u.device.id == device_id]
    sources = {s for u in uses for s in u.sources}
    return dataclasses.replace(
        result,
        launches=result.launches[on],
        kernels=ranking.ranked(part, result.latency_threshold),
        devices=uses,
        inputs=[p for p in result.inputs if p.source in sources],
        partial=part,
        device_partials={device_id: part},
    )


def partial(result) -> partials.Partial:
    """The partial sums the Result ranks (core.partials): kept with it, else of its launches."""
    if result.partial is not None:
        return result.partial
    return partials.of(result.launches, result.group_by)


def device_partial(result, device_id: str) -> partials.Partial:
    """The partial sums of one device's launches (empty where it has none)."""
    if result.device_partials is None:
        found = partials.by_device(result.launches, partial(result), result.group_by)
    else:
        found = result.device_partials
    if device_id in found:
        return found[device_id]
    return partials.of(result.launches.iloc[:0], result.group_by)


def used_classes(result, device_id: str) -> list[str]:
    """The compute classes with any operations in the device's launches, canonical order."""
    return device_partial(result, device_id).classes


def off_devices(result, device_ids: list[str]) -> int:
    """How many launches of the ranking ran on none of `device_ids`."""
    on = sum(int(device_partial(result, d).groups["launches"].sum()) for d in device_ids)
    return int(partial(result).groups["launches"].sum()) - on


def at_level(result, level: str) -> pd.DataFrame:
    """Per row of result.kernels: `bytes` moved at `level` ("dram", "l2", "l1"), `intensity`
    (FLOP per byte), achieved `flops_per_s` and `bytes_per_s`. DRAM's are the ranking's own
    columns; another level's are the group's partial sums (core.partials.LEVEL_SUMS)."""
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
    moved = pd.Series(_level_bytes(result, level), index=k.index)
    return pd.DataFrame(
        {
            "bytes": moved,
            "intensity": flops / moved.where(moved > 0),
            "flops_per_s": flops / duration,
            "bytes_per_s": moved / duration,
        }
    )


def _level_bytes(result, level: str) -> np.ndarray:
    """Bytes at `level` of each row of result.kernels, from the partial's group sums matched
    by the group's label (NaN where none of a group's launches has them)."""
    part = partial(result)
    column = f"bytes_{level}"
    if column not in part.groups:
        return np.full(len(result.kernels), np.nan)
    row_of = dict(zip(ranking.labels(part), part.groups[column].to_numpy(dtype=float), strict=True))
    return np.array([row_of.get(g, np.nan) for g in result.kernels["group"].astype(str)])


def dram_fraction(result, device_id, achieved_bytes_per_s) -> float | None:
    """Achieved DRAM bandwidth as a fraction of the DRAM roof of device `device_id` (None when
    either is unknown)."""
    for use in result.devices:
        if use.device is not None and use.device.id == device_id and "dram" in use.device.memory:
            if achieved_bytes_per_s is not None and not pd.isna(achieved_bytes_per_s):
                return float(achieved_bytes_per_s) / use.device.memory["dram"].value
    return None
