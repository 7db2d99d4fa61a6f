"""The two ncu CSV pages as launch tables: raw (a row per launch) and details (a row per metric)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from . import ncu_metrics as metrics
from .ncu_locale import choose_locale, not_numbers, not_numbers_message, to_floats
from .ncu_table import TEXT_METRICS, VALUE_COLUMNS, duplicate_ids, identity
from .values import unit_scale

NO_UNITS = "no units row after the header: values read as ncu base units (durations in ns)"


def from_raw(box: list[pa.Table], source: str, locale: str | None):
    """(launch table, notes, repairs) of a raw page; its first row may be the units row.
    The page comes in a one-item list, so that each string column is freed once converted."""
    table = box.pop()
    notes: list[str] = []
    if table.column("ID")[0].as_py() == "":
        units = {c: table.column(c)[0].as_py() for c in table.column_names}
        table = table.slice(1)
    else:  # ncu's base units are SI except time, which it counts in nanoseconds
        units = {metrics.DURATION: "ns"}
        notes.append(NO_UNITS)
    metric_cols = [c for c in table.column_names if metrics.wanted(c) and c not in TEXT_METRICS]
    locale = choose_locale([table.column(c) for c in metric_cols], locale, source)
    texts = [c for c in table.column_names if c not in metric_cols or c in _CC]
    frame = table.select(texts).to_pandas()
    wide, first, count = {}, None, 0
    for c in metric_cols:
        cells = table.column(c)
        table = table.drop_columns([c])
        wide[c] = to_floats(cells, locale) * unit_scale(units.get(c, ""))
        bad = not_numbers(cells, wide[c])
        if bad.any():
            count += int(bad.sum())
            row = int(np.argmax(bad))
            if first is None or row < first[0]:
                first = (row, c, cells[row].as_py())
        del cells
    del table
    unreadable = []
    if count:
        unreadable = not_numbers_message(count, first[1], first[2], frame["ID"].iloc[first[0]])
    wide = pd.DataFrame(wide, index=frame.index, copy=False)  # copy=False: no block copy
    launches = metrics.launch_table(wide, identity(frame), source, notes)
    return launches, notes, duplicate_ids(frame["ID"]) + unreadable


_CC = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")


def from_details(box: list[pa.Table], source: str, locale: str | None):
    """(launch table, notes, repairs) of a details page, pivoted to one row per launch; every
    per-row decision is made once per distinct metric name or unit."""
    table = box.pop()
    ids = table.column("ID").combine_chunks().dictionary_encode()
    launch = ids.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_launches = len(ids.dictionary)
    metric, metric_names = _codes(table.column("Metric Name"))
    if "Metric Unit" in table.column_names:
        unit, unit_names = _codes(table.column("Metric Unit"))
    else:
        unit, unit_names = np.zeros(table.num_rows, dtype=np.int64), [""]
    display = [metrics.DISPLAY_NAMES.get(m, m) for m in metric_names]
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
    per_launch["device__attribute_display_name"] = _texts(table, launch, kept & text, n_launches)
    del table
    wide = _pivot(launch[num_rows], metric[num_rows], values, n_launches, display)
    notes: list[str] = []
    launches = metrics.launch_table(wide, identity(per_launch), source, notes)
    return launches, notes, unreadable


def _codes(column) -> tuple[np.ndarray, list]:
    encoded = column.combine_chunks().dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary.to_pylist()


def _first_rows(table: pa.Table, launch: np.ndarray, n: int) -> pd.DataFrame:
    """Each launch's first row (launches in the order they first appear), without the values."""
    first = pa.array(np.unique(launch, return_index=True)[1])
    columns = ["ID"] + [c for c in table.column_names if c not in ("ID", *VALUE_COLUMNS)]
    return pa.table({c: table.column(c).take(first) for c in columns}).to_pandas()


def _texts(table: pa.Table, launch: np.ndarray, rows_mask: np.ndarray, n: int) -> np.ndarray:
    """Per launch, the first text metric value (the device name); NaN where there is none."""
    rows = np.flatnonzero(rows_mask)
    out = np.full(n, np.nan, dtype=object)
    if len(rows):
        with_text, first = np.unique(launch[rows], return_index=True)
        out[with_text] = table.column("Metric Value").take(pa.array(rows[first])).to_pylist()
    return out


def _pivot(launch: np.ndarray, metric: np.ndarray, values: np.ndarray, n: int, display: list[str]):
    """{metric: per-launch value} as a frame, the first row of each (launch, metric) winning,
    NaN where a launch lacks a metric; columns sorted by name, as DataFrame.pivot makes them."""
    distinct = sorted(set(display))
    code = np.array([distinct.index(d) for d in display], dtype=np.int64)
    code = code[metric] if len(metric) else np.zeros(0, dtype=np.int64)
    out = {}
    for c in np.unique(code):
        rows = np.flatnonzero(code == c)
        launches, first = np.unique(launch[rows], return_index=True)
        column = np.full(n, np.nan)
        column[launches] = values[rows[first]]
        out[distinct[c]] = column
    return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)


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
