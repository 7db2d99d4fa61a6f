"""A folder's launch rows kept out of memory: each file's analysed table written where it was
read (rooflint.spill), read back one at a time, in input order.

Every piece has the columns and dtypes of the table the full path joins (schema.concat of the
files' tables): its text columns are Categoricals over the union of every file's categories,
its index the joined table's positions of its rows, and with traces of several jobs it has
the `job` column (pipeline labels launches from all the files' timelines; a piece from its
source).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import schema


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
    # each input's analysed launches outside its window, as written ("" for none), and each
    # input's distinct sources in and outside its window: what the Perfetto timeline lays out
    outside: tuple[str, ...] = ()
    file_sources: tuple[list, ...] = ()

    def __iter__(self) -> Iterator[pd.DataFrame]:
        start = 0
        for file in self.files:
            piece = joined_like(self.read(file), self.columns, start, self.job_of)
            start += len(piece)
            yield piece
            del piece  # not held while the next is read

    def outside_piece(self, i: int) -> pd.DataFrame | None:
        """Input `i`'s launches outside its window (None for none) as the full path's `outside`
        has them: the joined categories, no `job` column (jobs label the windows' launches)."""
        path = self.outside[i] if self.outside else ""
        return joined_like(self.read(path), self.columns, 0, {}) if path else None


def joinable(tables: list[pd.DataFrame]) -> bool:
    """Whether the files' tables join as they stand: the same columns, of one dtype each
    (Categoricals of any categories). The full path analyses the joined table: a column one file
    lacks is NA for its rows there, and what the analysis adds for a table (ncu's percentages
    standing in: compute_source for every row) is added to every file's rows; pieces of
    tables that differ so would not be the full path's rows."""
    return len(tables) < 2 or schema.alike(tables)


def columns_of(tables: list[pd.DataFrame], job_of: dict[str, str]) -> pd.DataFrame:
    """The joined table's columns, without rows, from the files' tables without rows."""
    joined = schema.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    return with_jobs(joined, job_of)


def with_jobs(table: pd.DataFrame, job_of: dict[str, str]) -> pd.DataFrame:
    """pipeline's `job` column: each launch's job by its source (nothing with one job)."""
    if job_of:
        table = table.copy()
        table["job"] = table["source"].map(job_of)
    return table


def joined_like(
    piece: pd.DataFrame, columns: pd.DataFrame, start: int, job_of: dict[str, str]
) -> pd.DataFrame:
    """A file's table as its rows of the joined table, which starts at row `start`: each text
    column recoded into the union of categories, the job column added."""
    out = {}
    for name, dtype in piece.dtypes.items():
        column = piece[name]
        if isinstance(dtype, pd.CategoricalDtype):
            out[name] = recoded(column.array, columns[name].dtype)
        elif isinstance(dtype, np.dtype):
            out[name] = column.to_numpy()
        else:
            out[name] = column.array
    index = pd.RangeIndex(start, start + len(piece))
    return with_jobs(pd.DataFrame(out, index=index, copy=False), job_of)


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
