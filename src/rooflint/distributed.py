"""Roofline analysis of a rooflint Parquet dataset with Dask: one partition at a time, one ranking.

`rooflint.analyze` is pure column arithmetic on a launch table and a device, so it runs unchanged
on each partition of a `dask.dataframe`. The ceilings are resolved once, up front, from the
dataset's own metadata (the ceilings the report that wrote it used) or from a device you name;
only the columns the ranking needs travel back, and `rooflint.core.ranking.rank` ranks them as the
single-machine report does. Needs the `dask` extra: `pip install "rooflint[dask]"`.

Example (docs/dask.md has more)::

    rooflint report traces/ --format parquet -o launches/      # once, anywhere
    >>> from rooflint import distributed
    >>> kernels = distributed.rank_dataset("launches/", group_by="family")
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from rooflint import hardware, saved
from rooflint.core import analysis, families, ranking, report_schema, schema, verdicts
from rooflint.core.errors import UsageError
from rooflint.hardware import Device

# What ranking.rank reads, besides the grouping keys.
RANK_INPUTS = [
    "duration_s",
    "t_bound_s",
    "headroom_s",
    "flops",
    "bytes_dram",
    "limiter",
    "verdict",
    "device_id",
    "reason",
    "missing_codes",
    "ops_vector_fp16",
]


def rank_dataset(
    path: str | Path,
    group_by: str = "kernel",
    device: str | Device | None = None,
    latency_threshold: float = verdicts.LATENCY_THRESHOLD,
    scheduler: str | None = None,
    **read_options,
) -> pd.DataFrame:
    """Rank the launches of a rooflint Parquet dataset (a folder or file) using Dask.

    `device` (a catalog id or a Device) replaces the ceilings recorded in the dataset: its
    ceilings are used as they are for every source (no scaling to each profile's clock).
    `scheduler` is passed to `compute` ("synchronous", "threads", "processes", or None for Dask's
    default or a distributed Client); `read_options` go to `dask.dataframe.read_parquet`.
    Returns the ranking.KERNEL_COLUMNS frame, as `rooflint.report(...).kernels`.
    """
    import dask.dataframe as dd

    meta = dataset_metadata(path)
    devices = resolve_devices(meta, device)
    # Each shard on its own: runs write their own columns (a trace's kind, collective and
    # comm_bytes; none in an ncu run's), and one read of several takes the first's schema,
    # dropping the others' columns (its host copies and collectives then had no link roof).
    parts = [
        _gathered(dd.read_parquet(str(folder), **read_options), devices, group_by, args)
        for folder in _shard_folders(path, meta)
        for args in [(latency_threshold, scheduler)]
    ]
    gathered = parts[0] if len(parts) == 1 else schema.concat(parts)
    # Rows back in input order (sources as the report read them, rows as in each file) so that
    # groups and sums come in the same order as on one machine.
    order = {source: i for i, source in enumerate(meta.get("sources", []))}
    position = gathered["source"].map(lambda s: order.get(s, len(order))).astype("int64")
    gathered = gathered.iloc[position.argsort(kind="stable")].reset_index(drop=True)
    return ranking.rank(gathered, group_by, latency_threshold)


def _shard_folders(path: str | Path, meta: dict) -> list[Path]:
    """The folders of the dataset's shards ([path] for a dataset written by one run)."""
    shards = meta.get("shards") or ["."]
    return [Path(path) / shard if shard != "." else Path(path) for shard in shards]


def _gathered(launches, devices: dict, group_by: str, args: tuple) -> pd.DataFrame:
    """One shard's launches analysed partition by partition, the columns ranking reads."""
    latency_threshold, scheduler = args
    analysed = launches.map_partitions(
        analyze_partition,
        devices,
        latency_threshold,
        meta=analyze_partition(launches._meta, devices, latency_threshold),
    )
    keys = [  # trace-only keys (op, module): NA, as in rank
        k for k in ranking.GROUPINGS[group_by] if k in analysed.columns
    ]
    columns = list(dict.fromkeys(["source"] + keys + RANK_INPUTS))
    return analysed[columns].compute(scheduler=scheduler)


def analyze_partition(part: pd.DataFrame, devices: dict, latency_threshold: float) -> pd.DataFrame:
    """The roofline columns and op family for one partition; each source gets its own device."""
    launches = schema.conform_all(part)  # ncu's percentages and a trace's columns kept
    runs = [(devices.get(source, devices.get(None)), n) for source, n in _runs(launches["source"])]
    out = analysis.analyze_each(launches, runs, latency_threshold)
    out["family"] = families.classify(out["kernel"])
    return out


def _runs(sources: pd.Series) -> list[tuple[object, int]]:
    """(source, row count) of each run of consecutive rows from one source (NA: None)."""
    codes, uniques = pd.factorize(sources)
    starts = np.flatnonzero(np.diff(codes, prepend=-2) != 0)
    counts = np.diff(starts, append=len(codes))
    return [
        (uniques[codes[i]] if codes[i] >= 0 else None, int(n))
        for i, n in zip(starts.tolist(), counts.tolist(), strict=True)
    ]


def resolve_devices(meta: dict, device: str | Device | None = None) -> dict:
    """{source: Device or None} from the dataset metadata; {None: device} when one is named."""
    if device is not None:
        return {None: hardware.get(device) if isinstance(device, str) else device}
    return {
        source: device_from_metadata(entry)
        for source, entry in meta.get("source_ceilings", {}).items()
    }


def dataset_metadata(path: str | Path) -> dict:
    """The `rooflint` metadata of a Parquet dataset ({} when it has none), merged over its
    shards: a folder whose sub-folders are datasets written by separate runs (`-o runs/a/`,
    `-o runs/b/`) is read as one, its sources in shard order. A folder that mixes datasets which
    cannot be one (a source in two shards, launches beside ranked groups, another format
    version) is a UsageError naming the two shards."""
    runs = _runs_of(path)
    if not runs:
        return {}
    merged = dict(runs[0][1])
    merged["sources"], merged["source_ceilings"] = [], {}
    seen: dict[str, str] = {}
    for shard, meta in runs:
        _check_same_kind(path, runs[0], (shard, meta))
        for source in meta.get("sources", []):
            if source in seen:
                raise UsageError(
                    f"mixes datasets: {source} is in both {seen[source]} and {shard}; "
                    "rank one of them, or write each run to its own folder once",
                    path=str(path),
                )
            seen[source] = shard
            merged["sources"].append(source)
        merged["source_ceilings"].update(meta.get("source_ceilings", {}))
    merged["shards"] = [shard for shard, _ in runs]
    return merged


def _runs_of(path: str | Path) -> list[tuple[str, dict]]:
    """(shard, metadata) of each run that wrote files under `path`, in file-path order; the
    shard is the folder the run wrote, relative to `path` ("." for the dataset itself)."""
    key = report_schema.METADATA_KEY
    runs: dict[str, bytes] = {}
    root = Path(path)
    for file in sorted(ds.dataset(str(path), format="parquet", partitioning="hive").files):
        shard = _shard(root, Path(file))
        if shard not in runs:  # one run wrote every file of its folder: its first one says it
            meta = pq.read_schema(file).metadata or {}
            if key in meta:
                runs[shard] = meta[key]
    return [(shard, json.loads(raw)) for shard, raw in runs.items()]


def _shard(root: Path, file: Path) -> str:
    """The folder of `file` that a run wrote: its parent above any `key=value` partition."""
    folder = file.parent
    while "=" in folder.name and folder != root:
        folder = folder.parent
    return str(folder.relative_to(root)) if folder != root and root.is_dir() else "."


def _check_same_kind(path, first: tuple[str, dict], other: tuple[str, dict]) -> None:
    for field in ("format_version", "per"):
        if first[1].get(field) != other[1].get(field):
            raise UsageError(
                f"mixes datasets: {first[0]} has {field} {first[1].get(field)!r} and "
                f"{other[0]} {other[1].get(field)!r}; rank each folder on its own",
                path=str(path),
            )


def device_from_metadata(entry: dict | None) -> Device | None:
    """A Device with exactly the ceilings a report used for one source (None when it had none)."""
    if entry is None:
        return None
    return saved.saved_device(
        report_schema.read_source_ceilings(entry), "rooflint Parquet metadata"
    )
