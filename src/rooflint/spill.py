"""A folder's launch rows written to disk file by file, for the formats that write every row.

`rooflint.report(..., launches="pieces")`: each file is read, analysed and reduced where it is
read (rooflint.reduced), and its analysed launch table is written there to a file of a
temporary folder the parent owns (`Folder`); the Result's `pieces` (core.pieces.Pieces) read
them back one at a time, in input order, so JSON, CSV and Parquet write a folder's launches
while the parent holds one file's table at most. The folder goes when the Result is let go
(or at exit), and at once when the run fails.

Each table is an Arrow IPC file, uncompressed, read back memory-mapped: data, not code, so a
file in the folder cannot run anything when it is read. pandas' metadata in the
schema brings back every dtype (the Categoricals' categories in their order, the string and
nullable dtypes, the RangeIndex) but one: a Categorical without categories comes back with
object ones, which `_text_categories` makes pandas' str again, so that a piece is the full
path's rows bit for bit (tests/test_spill.py round-trips every bundled fixture's). It costs
about 2.3x the round trip of Python's own object serialiser (20k launches x 58 columns: 12 ms
against 5 ms), which would run code from the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

from rooflint.core import pieces, result, schema
from rooflint.core.errors import UsageError


class Folder:
    """A temporary folder of spilled tables, removed when the last holder lets it go (a
    Result's pieces), at exit, or by `remove`."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="rooflint-launches-")
        self._remove = weakref.finalize(self, shutil.rmtree, self.path, True)

    def remove(self) -> None:
        self._remove()


@dataclass(frozen=True)
class Spilled:
    """One file's analysed launch table, written: where, and what the parent needs of its rows
    before reading them (the distinct sources for JSON's list, the per-source sums)."""

    path: str
    rows: int
    sources: list
    per_source: pd.DataFrame | None  # None without rows (all outside the window)
    # its table as read, without rows: the columns the joined analysis starts from (files whose
    # analysed tables differ in columns: core.pieces)
    read: pd.DataFrame | None = None

    @classmethod
    def of(cls, launches: pd.DataFrame, folder: str) -> Spilled:
        """`launches` (a file's analysed table) written to a new file in `folder`."""
        sources = pd.factorize(launches["source"], use_na_sentinel=False)[1].tolist()
        sums = result.per_source(launches) if len(launches) else None
        return cls(write(launches, folder), len(launches), sources, sums)


def write(table: pd.DataFrame, folder: str) -> str:
    """`table` written to a new file in `folder`, its path; a disk that refuses it is a
    UsageError (a temporary folder with room is the fix)."""
    try:
        arrow = pa.Table.from_pandas(table, preserve_index=None)  # before a file is made
        handle, path = tempfile.mkstemp(dir=folder, suffix=".arrow")
        with os.fdopen(handle, "wb") as out, ipc.new_file(out, arrow.schema) as writer:
            writer.write_table(arrow)
    except OSError as exc:
        raise UsageError(
            f"cannot keep the launch rows on disk ({exc.strerror or exc}); set TMPDIR to a "
            "folder with room for the launch tables",
            path=folder,
        ) from None
    return path


def read(path: str) -> pd.DataFrame:
    """A spilled table back (written by this run, in a folder of its own)."""
    with pa.memory_map(path) as spilled:
        table = ipc.open_file(spilled).read_all().to_pandas()
    return _text_categories(table)


def _text_categories(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with each Categorical without categories made text as the table holds it
    (schema.text: over str; Arrow's empty dictionary comes back over object)."""
    for name, dtype in table.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.empty:
            table[name] = schema.text(table[name])
    return table


def pieces_of(
    spilled: list[Spilled],
    tables: list[pd.DataFrame],
    job_of: dict,
    folder: Folder,
    outside: list[Spilled | None] | None = None,
) -> pieces.Pieces:
    """The Result's pieces: the files' spilled tables; `tables` each file's analysed table
    without rows; `outside` each file's launches outside its window, spilled (None for none;
    the list None where they were not spilled: Pieces.outside empty)."""
    known = [s.read for s in spilled if s.read is not None]
    as_read = known if len(known) == len(spilled) else None
    marked = as_read is not None and pieces.remarked(tables, as_read)
    kept = outside is not None
    outside = outside or [None] * len(spilled)
    return pieces.Pieces(
        tuple(s.path for s in spilled),
        read,
        pieces.columns_of(tables, job_of, as_read),
        job_of,
        pieces.first_seen([s.sources for s in spilled]),
        result.per_source_of([s.per_source for s in spilled if s.per_source is not None]),
        sum(s.rows for s in spilled),
        folder,
        as_read=tuple(r.columns for r in known) if marked else (),
        outside=tuple(o.path if o is not None else "" for o in outside) if kept else (),
        file_sources=tuple(
            s.sources + (o.sources if o else []) for s, o in zip(spilled, outside, strict=True)
        ),
    )
