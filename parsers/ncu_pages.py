"""The two ncu CSV pages as launch tables: raw (a row per launch) and details (a row per metric)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core import schema
from rooflint.core.choices import LOCALES
from rooflint.core.errors import InputError

from . import ncu_metrics as metrics
from .ncu_locale import (
    checked_locale,
    choose_locale,
    decided_locale,
    locale_evidence,
    not_numbers,
    not_numbers_message,
    to_floats,
)
from .ncu_table import TEXT_METRICS, VALUE_COLUMNS, duplicate_ids, identity
from .values import unit_scale

NO_UNITS = "no units row after the header: values read as ncu base units (durations in ns)"
OTHER_UNITS = (
    "a units row in the middle of the page with other units than the first (exports with other "
    "--print-units joined into one file?); export each run to a file of its own"
)
# A row without a launch ID (ncu writes none on its units row alone) after a first row that is
# a launch: the units the values are in are not known (the fuzzer's line break inside the units
# row of a B200 export: its cells became a ragged row, padded, read after the launches).
UNITS_ROW_LATE = (
    "a units row (a row without a launch ID) among the launches of a page whose first row is a "
    "launch: the page's units are unknown (a units row broken across two lines?); export the "
    "run again with `--print-units base`"
)


class NotPiecewise(Exception):
    """The page cannot be read a piece at a time (a piece was read in a locale the whole file
    turned out not to have, or a "-0" needs its whole column): read it again in one piece."""


class RawPage:
    """A raw page read a table at a time (`add`), the value cells of each made float64 at once so
    that no string column of the whole page is ever held; `finish` builds the launch table.

    `rows` counts the rows added, `units_row` says whether the first was ncu's units row.
    `whole`: the page comes as one table, so whole-column rules apply to it directly."""

    def __init__(self, source: str, locale: str | None, whole: bool = False):
        self.source, self.forced, self.whole = source, locale, whole
        self.rows, self.units_row, self.units = 0, False, None
        self.units_again = 0  # units rows after the first, dropped
        self.notes: list[str] = []
        self.evidence = [False, False, False]  # a de_DE, an en_US, an ambiguous cell seen
        self.read_de: set[bool] = set()  # whether pieces were read as de_DE (or C/en_US)
        self.typed = False  # whether the parser gave some piece's values as float64
        self.values: dict[str, list[np.ndarray]] = {}
        self.texts: dict[str, list[pa.Array]] = {}
        self.unreadable, self.first = 0, None  # (row, metric, cell, launch ID) of the first

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.rows += table.num_rows
        if self.units is None:
            table = self._units(table)
        table = self._repeated_units(table)
        if table.num_rows == 0:  # the units row alone: no values, no locale evidence
            return
        offset = sum(len(v) for v in next(iter(self.texts.values()), []))
        metric_cols = [c for c in table.column_names if _is_metric(c)]
        for c in table.column_names:
            if c not in metric_cols or c in _CC:
                self.texts.setdefault(c, []).extend(table.column(c).chunks)
        text = [c for c in metric_cols if not pa.types.is_floating(table.schema.field(c).type)]
        if len(text) < len(metric_cols):  # the parser made these float64: plain numbers, as C
            self.typed = True
            self.read_de.add(False)
        locale = self._locale([table.column(c) for c in text])
        ids = table.column("ID")
        # the metric columns taken out at once (one drop, not one a column), each let go
        # once its values are made
        metric_columns = {c: table.column(c) for c in metric_cols}
        table = table.drop_columns(metric_cols)
        for c in metric_cols:
            cells = metric_columns.pop(c)
            values = self._numbers(cells, locale, c not in text)
            self.values.setdefault(c, []).append(values * unit_scale(self.units.get(c, "")))
            bad = not_numbers(cells, values) if c in text else None
            if bad is not None and bad.any():
                self.unreadable += int(bad.sum())
                row = int(np.argmax(bad))
                if self.first is None or offset + row < self.first[0]:
                    self.first = (offset + row, c, cells[row].as_py(), ids[row].as_py())

    def numbers(self, column: str) -> bool:
        """Whether the parser may try `column` as float64 (ncu_table.parse's `numbers`): the
        metric columns, unless the locale is forced to de_DE (where "1.5" means 15) or the
        page is read whole (the reference rules, cell by cell where needed)."""
        plain = not self.whole and self.forced != "de_DE"
        return plain and _is_metric(column) and column not in _CC

    def _numbers(self, cells, locale: str | None, typed: bool) -> np.ndarray:
        """The cells as float64; a -0 (whose sign the whole column decides) is NotPiecewise."""
        if typed:
            values = cells.to_numpy()
            # a sign bit (rare: a negative value) is looked at closer: is it on a zero?
            if np.signbit(values).any() and np.signbit(values[values == 0]).any():
                raise NotPiecewise
            return values
        values = to_floats(cells, locale or "C", self.whole)
        if values is None:
            raise NotPiecewise
        return values

    def _units(self, table: pa.Table) -> pa.Table:
        """The units of the page's first row when it is ncu's units row (no launch ID)."""
        if table.column("ID")[0].as_py() == "":
            self.units_row = True
            self.units = table.slice(0, 1).to_pylist()[0]
            return table.slice(1)
        # ncu's base units are SI except time, which it counts in nanoseconds
        self.units = {metrics.DURATION: "ns"}
        self.notes.append(NO_UNITS)
        return table

    def _repeated_units(self, table: pa.Table) -> pa.Table:
        """The table without rows that repeat the units row (two exports joined into one
        file); a units row with other units than the first (or on a page without one) is
        refused: the values after it are in other units."""
        again = pc.fill_null(pc.equal(table.column("ID"), ""), False)
        if not pc.any(again).as_py():
            return table
        for row in table.filter(again).to_pylist():
            if not self.units_row:
                raise InputError(UNITS_ROW_LATE, path=self.source)
            if any(self.units.get(c) != v for c, v in row.items()):
                raise InputError(OTHER_UNITS, path=self.source)
        self.units_again += int(pc.sum(again).as_py())
        return table.filter(pc.invert(again))

    def _locale(self, columns: list) -> str | None:
        """The locale to read this piece's text `columns` with: the forced one, else the one
        the evidence so far points to (None: a forced locale that is unknown, reported by
        `finish`). Columns the parser made float64 held no grouping comma and no second dot,
        so no de_DE evidence, and are not among `columns`."""
        if self.forced:
            return self.forced if self.forced in LOCALES else None
        if not columns:
            return "C"
        self.evidence = list(locale_evidence(columns, tuple(self.evidence)))
        de_de = self.evidence[0] and not self.evidence[1]
        self.read_de.add(de_de)
        return "de_DE" if de_de else "C"

    def finish(self) -> tuple[pd.DataFrame, list[str], list[str]]:
        """(launch table, notes, repairs) of the rows added."""
        if self.forced:
            checked_locale(self.forced, self.source)
        else:
            de, en, ambiguous = self.evidence
            if ambiguous and not de and not en and self.typed:
                raise NotPiecewise  # en_US evidence may sit in the pieces read as float64
            locale = decided_locale(de, en, ambiguous, self.source)
            if self.read_de - {locale == "de_DE"}:
                raise NotPiecewise
        frame = pa.table({c: pa.chunked_array(v) for c, v in self.texts.items()})  # as parsed
        self.texts = {}
        unreadable = []
        if self.unreadable:
            unreadable = not_numbers_message(self.unreadable, *self.first[1:])
        notes = self.notes
        launches = metrics.launch_table(
            [self._wide(frame.num_rows)], identity(frame), self.source, notes
        )
        repeated = [f"{self.units_again} repeated units row(s) skipped"] if self.units_again else []
        return (
            launches,
            notes,
            repeated + duplicate_ids(frame.column("ID"), launches["launch_id"]) + unreadable,
        )

    def _wide(self, n: int) -> metrics.Wide:
        """The metric columns, each joined from its pieces (handed over in a box: nothing else
        holds them, so launch_table can let them go)."""
        return metrics.Wide({c: _joined(self.values.pop(c)) for c in list(self.values)}, n)


def _joined(pieces: list[np.ndarray]) -> np.ndarray:
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


def _is_metric(column: str) -> bool:
    return metrics.wanted(column) and column not in TEXT_METRICS


_CC = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")


def from_details(box: list[pa.Table], source: str, locale: str | None):
    """(launch table, notes, repairs) of a details page, pivoted to one row per launch; every
    per-row decision is made once per distinct metric name or unit."""
    table = box.pop()
    ids = table.column("ID").combine_chunks().dictionary_encode()
    launch = ids.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_launches = len(ids.dictionary)
    table, launch, cut = _without_cut_launch(table, launch, n_launches)
    n_launches -= len(cut)
    metric, metric_names = _codes(table.column("Metric Name"))
    if "Metric Unit" in table.column_names:
        unit, unit_names = _codes(table.column("Metric Unit"))
    else:
        unit, unit_names = np.zeros(table.num_rows, dtype=np.int64), [""]
    display = [metrics.metric_name(m) for m in metric_names]
    # "Memory Throughput" is a % on one section and a byte/s rate on another: only the rate
    percent = (
        np.array([m == "Memory Throughput" for m in metric_names], dtype=bool)[metric]
        & ~np.array(["/" in u for u in unit_names], dtype=bool)[unit]
    )
    kept = np.array([bool(metrics.wanted(d)) for d in display], dtype=bool)[metric] & ~percent
    text = np.array([d in TEXT_METRICS for d in display], dtype=bool)[metric]
    num_rows = np.flatnonzero(kept & ~text)
    cells = table.column("Metric Value").take(pa.array(num_rows))
    locale = choose_locale([cells], locale, source)
    scales = np.array([unit_scale(u) for u in unit_names], dtype="float64")[unit[num_rows]]
    values = to_floats(cells, locale) * scales
    unreadable = _unreadable_details(cells, values, num_rows, table)
    per_launch = _first_rows(table, launch, n_launches)
    names = pa.array(_texts(table, launch, kept & text, n_launches), pa.string(), from_pandas=True)
    per_launch = per_launch.append_column("device__attribute_display_name", names)
    del table
    pivoted = [_pivot(launch[num_rows], metric[num_rows], values, n_launches, display)]
    notes: list[str] = []
    launches = metrics.launch_table(pivoted, identity(per_launch), source, notes)
    return launches, notes, cut + unreadable


def _without_cut_launch(table: pa.Table, launch: np.ndarray, n: int):
    """(table, launch codes, repairs) without the last launch when its metric rows stop short:
    they are the first rows of the launch before it, and fewer (the file ends mid-launch;
    ncu writes every launch's sections in the same order, so a whole one has them all)."""
    if n < 2 or launch[-1] != n - 1:
        return table, launch, []
    start = int(np.argmax(launch == n - 1))
    before = int(np.argmax(launch == n - 2))
    if not (launch[start:] == n - 1).all() or not (launch[before:start] == n - 2).all():
        return table, launch, []  # the two launches' rows interleave: not ncu's order
    names = table.column("Metric Name")
    last = names.slice(start).to_pylist()
    whole = names.slice(before, start - before).to_pylist()
    if len(last) >= len(whole) or whole[: len(last)] != last:
        return table, launch, []
    ident = table.column("ID")[start].as_py()
    repair = (
        f"last launch (ID {ident}) cut short: {len(last)} of its {len(whole)} metric rows "
        "(the file ends mid-launch: a truncated copy?), left out"
    )
    return table.slice(0, start), launch[:start], [repair]


def _codes(column) -> tuple[np.ndarray, list]:
    """(code per row, distinct texts) of a text column; a dictionary column (as the parser
    reads the metric names and units) is combined over one unified dictionary."""
    encoded = column.combine_chunks()
    if not pa.types.is_dictionary(encoded.type):
        encoded = encoded.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary.to_pylist()


def _first_rows(table: pa.Table, launch: np.ndarray, n: int) -> pa.Table:
    """Each launch's first row (launches in the order they first appear), without the values."""
    first = schema.first_rows(launch, n)[1]
    columns = ["ID"] + [c for c in table.column_names if c not in ("ID", *VALUE_COLUMNS)]
    columns = [c for c in columns if c != "device__attribute_display_name"]  # from the values
    return _take_sorted(table.select(columns), first)


def _take_sorted(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """table.take(rows) for ascending `rows`, a record batch at a time: Arrow's take of a
    chunked string column joins its chunks first (0.5 s for the kernel names of a 262 MB
    details page, against 0.03 s this way)."""
    batches = table.to_batches()
    bounds = np.cumsum([0] + [batch.num_rows for batch in batches])
    cuts = np.searchsorted(rows, bounds)
    parts = [
        batch.take(pa.array(rows[cuts[k] : cuts[k + 1]] - bounds[k]))
        for k, batch in enumerate(batches)
        if cuts[k + 1] > cuts[k]
    ]
    return pa.Table.from_batches(parts, table.schema)


def _texts(table: pa.Table, launch: np.ndarray, rows_mask: np.ndarray, n: int) -> np.ndarray:
    """Per launch, the first text metric value (the device name); NaN where there is none."""
    rows = np.flatnonzero(rows_mask)
    out = np.full(n, np.nan, dtype=object)
    if len(rows):
        with_text, first = schema.first_rows(launch[rows], n)
        out[with_text] = table.column("Metric Value").take(pa.array(rows[first])).to_pylist()
    return out


def _pivot(launch: np.ndarray, metric: np.ndarray, values: np.ndarray, n: int, display: list[str]):
    """{metric: per-launch value} as a frame, the first row of each (launch, metric) winning,
    NaN where a launch lacks a metric; columns sorted by name, as DataFrame.pivot makes them.
    One scatter into a (metric, launch) grid of the metrics present."""
    distinct = sorted(set(display))
    code = np.array([distinct.index(d) for d in display], dtype=np.int64)
    code = code[metric] if len(metric) else np.zeros(0, dtype=np.int64)
    present = np.flatnonzero(np.bincount(code, minlength=len(distinct)))
    position = np.zeros(len(distinct), dtype=np.int64)
    position[present] = np.arange(len(present))
    cell = position[code] * n + launch  # (metric, launch) as one number
    cell, first = schema.first_rows(cell, len(present) * n)  # a metric twice: first row wins
    grid = np.full(len(present) * n, np.nan)
    grid[cell] = values[first]
    grid = grid.reshape(len(present), n)
    return metrics.Wide({distinct[c]: grid[i] for i, c in enumerate(present)}, n)


def _unreadable_details(cells, values, rows: np.ndarray, table: pa.Table) -> list[str]:
    bad = not_numbers(cells, values)
    if not bad.any():
        return []
    where = int(np.argmax(bad))
    row = int(rows[where])
    return not_numbers_message(
        int(bad.sum()),
        table.column("Metric Name")[row].as_py(),
        cells[where].as_py(),
        table.column("ID")[row].as_py(),
    )
