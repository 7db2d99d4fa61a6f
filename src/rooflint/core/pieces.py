"""A folder's launch rows kept out of memory: each file's analysed table written where it was
read (rooflint.spill), read back one at a time, in input order.

Every piece has the columns and dtypes of the table the full path joins (schema.concat of the
files' tables): its text columns are Categoricals over the union of every file's categories,
its index the joined table's positions of its rows, and with traces of several jobs it has
the `job` column (pipeline labels launches from all the files' timelines; a piece from its
source).

Files whose analysed tables differ in columns (ncu exports with counters beside ones of ncu's
default sections) are pieces too: the full path analyses them joined, and what that puts in a
file's rows follows from the row alone but for two things, both mechanical. A column some file
lacks is NA in its rows (of the joined dtype: a Categorical of other categories beside a
missing column is text), and the joined table's columns come in the order of the joined table
as read (core.analysis: its own columns, then what the analysis adds). Where any file had ncu's
percentages standing in, the analysis marks every row of the joined table
(speed_of_light.MARKS): a row of a file without them gets counters where counted
(speed_of_light.as_joined). Only tables as read that hold a column in two dtypes (beyond
Categoricals of other categories) are not joinable: their analysis reads values pandas joined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import analysis, provenance, schema, speed_of_light


@dataclass(frozen=True)
class Pieces:
    """The launch rows of a Result reduced file by file, a file's table at a time."""

    files: tuple[str, ...]  # each input's table as written, in input order
    read: Callable[[str], pd.DataFrame]  # a file's table back
    columns: pd.DataFrame  # no rows: the joined table's columns and dtypes
    job_of: dict[str, str]  # each source's job, with traces of several jobs (else empty)
    sources: list  # the distinct sources in order of first appearance over all rows
    per_source: pd.DataFrame  # core.result.per_source of all rows
    count: int  # the rows of all pieces
    owner: object = field(default=None, repr=False, compare=False)  # keeps the files
    # each file's columns as read, where the joined analysis marks rows its own did not
    # (`remarked`); else empty
    as_read: tuple[pd.Index, ...] = ()
    # each input's analysed launches outside its window, as written ("" for none), and each
    # input's distinct sources in and outside its window: what the Perfetto timeline lays out
    # (empty where they were not spilled: launches="pieces" rather than "timeline")
    outside: tuple[str, ...] = ()
    file_sources: tuple[list, ...] = ()

    def __iter__(self) -> Iterator[pd.DataFrame]:
        start = 0
        for n in range(len(self.files)):
            piece = self.piece(n, start)
            start += len(piece)
            yield piece
            del piece  # not held while the next is read

    def piece(self, n: int, start: int) -> pd.DataFrame:
        """Input `n`'s rows of the joined table, which start at row `start`: what iterating
        gives, for a caller that must let a piece go while it is still working (the iterator
        holds the piece it gave until the next is asked for)."""
        joined = pd.Index(list(dict.fromkeys(c for read in self.as_read for c in read)))
        table = self.read(self.files[n])
        marks = speed_of_light.as_joined(table, self.as_read[n], joined) if joined.size else {}
        return joined_like(table, self.columns, start, self.job_of, marks)

    def outside_piece(self, i: int) -> pd.DataFrame | None:
        """Input `i`'s launches outside its window (None for none) as the full path's `outside`
        has them: the joined categories, no `job` column (jobs label the windows' launches)."""
        path = self.outside[i] if self.outside else ""
        return joined_like(self.read(path), self.columns, 0, {}) if path else None


def joinable(read: list[pd.DataFrame]) -> bool:
    """Whether pieces of the files' analysed tables are the joined table's rows, from their
    tables as read (without rows): each column they share is of one dtype in all of them
    (Categoricals of any categories). A column one file lacks is NA in its rows; one of two
    dtypes pandas would join into a third, which the analysis would read."""
    kinds: dict[str, object] = {}
    return all(t.columns.is_unique for t in read) and all(
        kinds.setdefault(name, schema.kind(dtype)) == schema.kind(dtype)
        for table in read
        for name, dtype in table.dtypes.items()
    )


def columns_of(
    tables: list[pd.DataFrame], job_of: dict[str, str], read: list[pd.DataFrame] | None = None
) -> pd.DataFrame:
    """The joined table's columns, without rows, from the files' analysed tables without rows
    (and, where those differ in columns, their tables as read: `read`)."""
    joined = schema.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if read is not None and not schema.alike(tables):
        joined = _analysed_joined(joined, tables, read)
    return with_jobs(joined, job_of)


def _analysed_joined(joined: pd.DataFrame, tables: list, read: list) -> pd.DataFrame:
    """`joined` (the analysed tables, joined) in the columns of the joined table as read,
    analysed: its own but the result columns, then what the analysis adds, as it adds them to a
    file with estimates (speed_of_light.MARKS, of their dtype) or else to any file."""
    kept = list(
        dict.fromkeys(c for t in read for c in t.columns if c not in analysis.RESULT_COLUMNS)
    )
    marked = [t for t, r in zip(tables, read, strict=True) if estimated(t, r)]
    added = [c for c in (marked or tables)[0].columns if c not in kept]
    joined = joined[kept + added]
    if marked:
        joined = joined.astype(dict.fromkeys(speed_of_light.MARKS, provenance.DTYPE))
    return joined


def estimated(table: pd.DataFrame, read: pd.DataFrame) -> bool:
    """Whether the analysis of a file marked its rows (ncu's percentages stood in): it added
    compute_source (schema.ESTIMATE_COLUMNS), which no table as read has."""
    return "compute_source" in table and "compute_source" not in read


def remarked(tables: list[pd.DataFrame], read: list[pd.DataFrame]) -> bool:
    """Whether the joined analysis marks rows that a file's own did not: some files had
    estimates, and the tables differ in columns (those without estimates lack the marks)."""
    found = [estimated(t, r) for t, r in zip(tables, read, strict=True)]
    return any(found) and not all(found)


def with_jobs(table: pd.DataFrame, job_of: dict[str, str]) -> pd.DataFrame:
    """pipeline's `job` column: each launch's job by its source (nothing with one job)."""
    if job_of:
        table = table.copy()
        table["job"] = table["source"].map(job_of)
    return table


def joined_like(
    piece: pd.DataFrame,
    columns: pd.DataFrame,
    start: int,
    job_of: dict[str, str],
    marks: dict | None = None,
) -> pd.DataFrame:
    """A file's table as its rows of the joined table (`columns`), which starts at row `start`:
    in its columns, each text column recoded into the union of categories, a column of
    another dtype there made that dtype, one the file lacks NA, `marks` (columns the joined
    analysis gives its rows anew: speed_of_light.as_joined) as given, the job column added."""
    marks = marks or {}
    out = {}
    for name in columns.columns:
        if name == "job" and job_of:
            continue  # with_jobs
        out[name] = marks[name] if name in marks else _as(piece, name, columns[name])
    index = pd.RangeIndex(start, start + len(piece))
    return with_jobs(pd.DataFrame(out, index=index, copy=False), job_of)


def _as(piece: pd.DataFrame, name: str, joined: pd.Series):
    """The piece's column `name` as the joined table (`joined`, no rows) holds it; where the
    piece lacks it, the NA pd.concat fills in (NaN, NA or NaT as the dtype has it)."""
    if name not in piece:
        return joined.array.take(np.full(len(piece), -1), allow_fill=True)
    column, dtype = piece[name], joined.dtype
    if isinstance(column.dtype, pd.CategoricalDtype) and isinstance(dtype, pd.CategoricalDtype):
        return recoded(column.array, dtype)
    if column.dtype != dtype:
        column = column.astype(dtype)
    return column.to_numpy() if isinstance(dtype, np.dtype) else column.array


def recoded(values: pd.Categorical, dtype: pd.CategoricalDtype) -> pd.Categorical:
    """`values` over the categories of `dtype` (which hold all of its own), as schema.concat
    maps each table's codes into the union."""
    where = {label: i for i, label in enumerate(dtype.categories)}
    position = np.array([where[c] for c in values.categories] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(position[values.codes], dtype=dtype, validate=False)


def first_seen(lists: list[list]) -> list:
    """The values of the lists, each once, in order of first appearance: what pd.factorize of
    all the rows gives, from each file's own distinct values."""
    values = [v for each in lists for v in each]
    if not values:
        return []
    return pd.factorize(np.array(values, dtype=object), use_na_sentinel=False)[1].tolist()
