"""Parquet: the launch table (or the ranked groups) with units and ceilings in the schema metadata.

`-o report.parquet` (or stdout) gets one file. `-o DIR/` gets a dataset folder partitioned the
Hive way by input file, `DIR/source_key=<file>/part-0.parquet`, which pandas, pyarrow.dataset,
Dask, Spark and DuckDB read as one table. The partition value is the `source` path made safe
for a folder name; `source` itself stays a column, unchanged. docs/parquet-schema.md lists
the columns.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rooflint.core import analysis, ranking, report_schema, schema
from rooflint.core.errors import UsageError
from rooflint.core.result import LAUNCH_COLUMNS
from rooflint.core.version import __version__

PARTITION = "source_key"
METADATA_KEY = report_schema.METADATA_KEY

KERNEL_INTS = {"rank", "launches", "analysed", "above_roof_launches"}
KERNEL_UNITS = {
    "duration_s": "s",
    "time_share": "fraction",
    "t_bound_s": "s",
    "headroom_s": "s",
    "headroom_share": "fraction",
    "efficiency": "fraction of attainable",
    "flops": "op",
    "bytes_dram": "byte",
    "intensity_dram": "op/byte",
    "achieved_flops_per_s": "op/s",
    "achieved_bytes_per_s": "byte/s",
    "duration_min_s": "s",
    "duration_max_s": "s",
}


# Rows converted to Arrow at a time for a single file, one row group each. On the 200k-launch raw
# export a 50k group's Arrow table is 37 MB beside the launch table and the peak was 3.03x the
# file; 20k groups: 2.90x, the file 0.2 % larger, the same rows, schema and metadata.
CHUNK_ROWS = 20_000


def render(result, per: str = "launch", output: str | None = None, **_options) -> bytes | None:
    """One Parquet file as bytes; or, when `output` names a folder, write the dataset there."""
    written = pieces(result, per, output)
    return None if written is None else b"".join(written)


def pieces(result, per: str = "launch", output: str | None = None, **_options):
    """`render` for the command line: the file as consecutive pieces of bytes, a row group at
    a time, so that neither the file nor the launch table is ever held whole in Arrow; None when
    a dataset folder was written."""
    if output not in (None, "-") and _is_folder(output):
        write_dataset(result, Path(output), per)
        return None
    return _row_groups(tables(result, per))


def tables(result, per: str = "launch") -> Iterator[pa.Table]:
    """The rows as Arrow tables, one a row group: per launch each input's rows (a folder's
    files never share a group), in slices of CHUNK_ROWS; the ranked groups in such slices."""
    if per == "launch" and result.pieces is not None:
        yield from _piece_tables(result)
        return
    keys = partition_values(result.launches["source"]) if per == "launch" else None
    for rows in _slices(result, per):
        yield arrow_table(result, per, rows, keys)


def _piece_tables(result) -> Iterator[pa.Table]:
    """`tables` of a folder whose launches are kept on disk: a file's table at a time
    (Result.launch_pieces), its partition values among those of every source."""
    names = _distinct([_filled(v) for v in result.pieces.sources])
    made = False
    for launches in result.launch_pieces():
        keys = partition_values(launches["source"], names)
        for rows in _cut(0, len(launches), False):
            made = True
            yield arrow_table(result, "launch", rows, keys, launches)
        del launches, keys
    if not made:  # no launch: a file with the schema
        yield arrow_table(result, "launch", slice(0, 0), None, result.launches)


def _slices(result, per: str) -> list[slice]:
    if per != "launch":
        return _cut(0, len(result.kernels))
    ends = np.cumsum([0, *(_rows_of(profile) for profile in result.inputs)])
    if ends[-1] != len(result.launches):  # a Result made otherwise (read back): no inputs' rows
        return _cut(0, len(result.launches))
    cuts = [part for a, b in zip(ends[:-1], ends[1:], strict=True) for part in _cut(a, b, False)]
    return cuts or _cut(0, 0)


def _rows_of(profile) -> int:
    return 0 if profile.launches is None else len(profile.launches)


def _cut(start: int, end: int, one: bool = True) -> list[slice]:
    """[start, end) in slices of CHUNK_ROWS; an empty range is one empty slice when `one`
    (a table without rows is still a file with its schema)."""
    cuts = [slice(a, min(a + CHUNK_ROWS, end)) for a in range(int(start), int(end), CHUNK_ROWS)]
    return cuts or ([slice(int(start), int(start))] if one else [])


def _row_groups(parts: Iterator[pa.Table]) -> Iterator[bytes]:
    """The Parquet file of the tables, each a row group, as pieces of bytes as they are made."""
    sink, writer = _Written(), None
    for table in parts:
        writer = writer or pq.ParquetWriter(
            pa.PythonFile(sink, mode="w"), table.schema, use_dictionary=dictionary(table.schema)
        )
        writer.write_table(table)
        del table
        yield sink.taken()
    if writer is not None:
        writer.close()
    yield sink.taken()


class _Written:
    """A file object for the Parquet writer that keeps what was written until `taken`."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.closed = False

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def taken(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def dictionary(schema: pa.Schema) -> list[str]:
    """The columns worth dictionary-encoding: the text ones (kernel names, verdicts repeat).
    Measured quantities and launch IDs rarely repeat; a dictionary for every column made the
    200k-launch file 38.2 MB instead of 31.4 MB and held 8 MB more while writing."""
    return [field.name for field in schema if pa.types.is_string(field.type)]


def _is_folder(output: str) -> bool:
    return output.endswith(("/", os.sep)) or Path(output).is_dir()


def arrow_table(
    result,
    per: str = "launch",
    rows: slice | None = None,
    keys: pa.DictionaryArray | None = None,
    launches: pd.DataFrame | None = None,
) -> pa.Table:
    """The rows (all, or the `rows` slice) as an Arrow table with explicit types, per-field units
    and the report metadata; `keys`, every launch's partition value when the caller has them
    (`partition_values` of the whole table: worked out once, not once per slice); `launches`
    the table the rows are of (default result.launches: a folder's piece, where it is kept on
    disk)."""
    if per == "kernel":
        kernels = result.kernels
        extra = ["excess_traffic"] if "excess_traffic" in kernels else []  # traces + counters
        frame, columns = kernels, ranking.KERNEL_COLUMNS + extra
        units = {**KERNEL_UNITS, "excess_traffic": "ratio"}
        types = {c: pa.int64() for c in KERNEL_INTS}
    elif per == "launch":
        launches = result.launches if launches is None else launches
        columns = LAUNCH_COLUMNS + schema.OPTIONAL_COLUMNS  # the trace's only in a trace report
        frame, columns = launches, [c for c in columns if c in launches.columns]
        units = {**schema.UNITS, **analysis.RESULT_UNITS}
        types = {
            c: pa.int64()
            for c in [*schema.INT_COLUMNS, "stream", "device_index", "comm_ranks", "rank"]
        }
        types["graph_replay"] = types["roof_assumed"] = pa.bool_()
    else:
        raise UsageError(f"--per must be 'launch' or 'kernel', not {per!r}")
    fields, arrays = [], []
    for column in columns:
        values = _rows(frame[column], rows)
        kind = types.get(column) or (
            pa.float64() if pd.api.types.is_float_dtype(values) else pa.string()
        )
        meta = {"unit": units[column]} if column in units else None
        fields.append(pa.field(column, kind, metadata=meta))
        arrays.append(_array(values, kind))
    if per == "launch":
        fields.append(pa.field(PARTITION, pa.string()))
        if keys is None:  # over every source: the same key in each group
            keys = partition_values(frame["source"])
        arrays.append((keys if rows is None else keys[rows]).cast(pa.string()))
    meta = {
        METADATA_KEY: json.dumps(_metadata(result, per, units), ensure_ascii=False).encode("utf-8")
    }
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))


def _rows(column: pd.Series, rows: slice | None) -> pd.Series:
    """The column's slice, a view: no copy of the table's rows is made beside the Arrow arrays."""
    return column if rows is None else column.iloc[rows]


def _array(values: pd.Series, kind: pa.DataType) -> pa.Array:
    if pa.types.is_floating(kind):  # missing is null (as SQL engines expect), never NaN
        return pa.array(
            values.to_numpy(dtype="float64", na_value=float("nan")), kind, from_pandas=True
        )
    if pa.types.is_integer(kind):
        return pa.array(values.astype("Int64"), kind)
    if pa.types.is_boolean(kind):
        return pa.array(values.astype("boolean"), kind)
    if isinstance(values.dtype, pd.CategoricalDtype):  # the launch table's text: Arrow decodes
        return pa.array(values, from_pandas=True).cast(pa.string())
    return pa.array(values.astype("string"), pa.string())


def _metadata(result, per: str, units: dict) -> dict:
    return {
        "format_version": schema.FORMAT_VERSION,
        "tool": f"rooflint {__version__}",
        "per": per,
        "group_by": result.group_by,
        "latency_threshold": result.latency_threshold,
        "units": units,
        "partitioning": {"flavor": "hive", "column": PARTITION, "from": "source"}
        if per == "launch"
        else None,
        "sources": [profile.source for profile in result.inputs],  # in the order they were read
        "devices": [report_schema.device_entry(use) for use in result.devices],
        # The exact ceilings each source was analysed with (one device id can differ per source:
        # each profile's own clock and peaks), so the analysis can be redone per partition.
        "source_ceilings": {
            source: report_schema.source_ceilings(device)
            for use in result.devices
            for source, device in use.by_source.items()
        },
        "accounting": result.summary.accounting,
    }


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def partition_values(sources: pd.Series, names: list[str] | None = None) -> pa.DictionaryArray:
    """A folder-safe partition value per source path (Arrow dictionary-encoded strings: the
    codes are all that is per launch), distinct for distinct sources; `names`, the distinct
    sources (NA as "") of every launch where `sources` are some of them (a folder's file).

    Letters, digits, `.`, `_` and `-` are kept, any other run becomes `_`; a value that had to
    be cut to 80 characters, or that two sources would share, ends in a hash of the source.
    """
    codes, distinct = pd.factorize(schema.filled(sources, ""))
    distinct = [str(s) for s in distinct]
    if names is not None:  # codes into all of them
        where = {name: i for i, name in enumerate(names)}
        codes = np.array([where[s] for s in distinct] + [-1], dtype=np.int64)[codes]
        distinct = names
    indices = pa.array(codes.astype(np.int32))
    return pa.DictionaryArray.from_arrays(indices, pa.array(_safe(distinct), pa.string()))


def _safe(distinct: list[str]) -> list[str]:
    """Each distinct source as a partition value (see partition_values)."""
    safe = [_UNSAFE.sub("_", s).strip("._") or "unnamed" for s in distinct]
    taken: dict[str, int] = {}
    for value in safe:
        taken[value] = taken.get(value, 0) + 1
    for i, (source, value) in enumerate(zip(distinct, safe, strict=True)):
        if taken[value] > 1 or len(value) > 80:
            digest = hashlib.sha1(source.encode("utf-8")).hexdigest()[:8]
            safe[i] = value[-71:].lstrip("._") + "-" + digest
    return safe


def _filled(source) -> str:
    return "" if source is None or pd.isna(source) else str(source)


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def write_dataset(result, target: Path, per: str = "launch") -> None:
    """Write the dataset next to `target`, then move it into place: never half a dataset there.
    A symbolic link to a folder is followed: the folder gets the dataset, the link stays.
    Per launch, each source's rows are one file of its partition, written a row group at a
    time (`tables`): the whole table is never one Arrow table."""
    label, target = str(target), Path(os.path.realpath(target))
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(
            f"output folder {parent} does not exist; create it or choose another -o path",
            path=label,
        )
    if target.exists() and not _empty_folder(target):
        raise UsageError(_refusal(target), path=label)
    try:
        _write_dataset(result, target, per)
    except OSError as exc:  # disk full, no permission: the user's to fix
        raise UsageError(
            f"cannot write the dataset ({exc.strerror or exc}); nothing was written; choose "
            "another -o path (or free some space)",
            path=label,
        ) from None


def _write_dataset(result, target: Path, per: str) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        if per == "launch" and result.launch_count:
            _partitions(tables(result, per), staging)
        else:
            _write_file(tables(result, per), staging / "part-0.parquet")
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _partitions(parts: Iterator[pa.Table], staging: Path) -> None:
    """Hive partitions by PARTITION, `staging/source_key=<value>/part-0.parquet`: each
    source's rows (they come together, an input at a time) one file, a row group a table, the
    partition column left out of the file (as pyarrow.dataset writes it; readers add it back
    from the folder's name). Rows of a value that come again later (a Result read back, whose
    rows are not an input's) go to the next file of its folder, part-1.parquet, ..."""
    runs = (run for table in parts for run in _by_key(table))
    files: dict[str, int] = {}
    for key, group in itertools.groupby(runs, key=lambda run: run[0]):
        n = files[key] = files.get(key, -1) + 1
        folder = staging / f"{PARTITION}={key}"
        folder.mkdir(exist_ok=True)
        _write_file((rows for _, rows in group), folder / f"part-{n}.parquet")


def _by_key(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """(partition value, its rows without the partition column) of a table, values in the
    order they first come (a table of one input has one)."""
    keys = table.column(PARTITION)
    distinct = pc.unique(keys).to_pylist()
    for key in distinct:
        rows = table if len(distinct) == 1 else table.filter(pc.equal(keys, key))
        yield key, rows.drop_columns([PARTITION])


def _write_file(parts: Iterator[pa.Table], path: Path) -> None:
    with open(path, "wb") as out:
        for piece in _row_groups(parts):
            out.write(piece)


def _empty_folder(target: Path) -> bool:
    return target.is_dir() and next(target.iterdir(), None) is None


def _refusal(target: Path) -> str:
    """Why -o cannot write into `target`, and the fix. An earlier dataset is never replaced
    nor mixed into: each run is its own folder, and rooflint.distributed reads the sub-folders
    of one folder as the shards of one dataset."""
    if not target.is_dir():
        return "output path exists and is not a folder; choose an empty or new folder"
    if all(
        p.name.startswith(f"{PARTITION}=") or p.name == "part-0.parquet" for p in target.iterdir()
    ):
        return (
            "output folder already holds a rooflint dataset, which is left as it is; write "
            f"this run to a new folder beside it (e.g. {target.parent / (target.name + '-2')}/: "
            "rooflint.distributed reads the sub-folders of one folder as one dataset), or "
            "delete the old one first"
        )
    return (
        "output folder is not empty and holds more than a rooflint dataset; choose an empty "
        "or new folder"
    )


def _swap_in(staging: Path, target: Path) -> None:
    """One rename: onto a new path, or onto the empty folder there (POSIX renames a folder over
    an empty one; one that filled meanwhile fails with ENOTEMPTY, and nothing is replaced)."""
    os.replace(staging, target)
