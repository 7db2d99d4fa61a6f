"""CSV: one row per launch (canonical columns + verdict) or per kernel group, SI units, full names.

Cells are written exactly as the data holds them, so the file reads back to the same values
(floats in shortest round-trip form, NA as an empty cell). `excel_safe` is therefore off by
default: it prefixes cells that a spreadsheet would run as a formula (= + - @ tab CR) with a
single quote, which protects people who open the file in Excel but changes those cells' text.

The text is what pandas' `to_csv(index=False, lineterminator="\\n")` writes, built column by
column with Arrow (pandas formats every cell in Python: 14 s and 5.8x the input's size in memory
for a 200k-launch export), CHUNK_ROWS rows at a time. tests/test_reporters_formats.py checks it
against to_csv.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core import ranking, schema
from rooflint.core.errors import UsageError
from rooflint.core.result import LAUNCH_COLUMNS
from rooflint.reporters import arrow_text, common

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CHUNK_ROWS = 10_000  # rows written at a time: bounds the writer's memory on any input size


def render(result, per: str = "launch", excel_safe: bool = False, **_options) -> str:
    return b"".join(chunks(result, per, excel_safe)).decode("utf-8")


def chunks(
    result, per: str = "launch", excel_safe: bool = False, **_options
) -> Iterator[bytes | memoryview]:
    """The file as consecutive pieces of UTF-8: the header, then CHUNK_ROWS rows at a time (a
    folder's launches kept on disk a file's table at a time: Result.launch_pieces)."""
    frames = [table(result, per)] if per != "launch" else _launch_tables(result)
    header = _launch_columns(result.launches) if per == "launch" else list(frames[0].columns)
    yield _row(header).encode("utf-8")
    for frame in frames:
        for start in range(0, len(frame), CHUNK_ROWS):
            part = frame.iloc[start : start + CHUNK_ROWS]
            if excel_safe:
                part = defuse(part)
            rows = _rows(part)
            yield rows
            del part, rows  # not held while the next chunk is made
        del frame


def table(result, per: str = "launch") -> pd.DataFrame:
    """The rows the CSV holds: launches in input order, or kernel groups in rank order."""
    if per == "kernel":
        kernels = result.kernels[
            [c for c in ranking.KERNEL_COLUMNS + ["excess_traffic"] if c in result.kernels]
        ].copy()
        kernels["advice"] = pd.array(
            [_advice(result, row) for row in result.kernels.to_dict("records")], dtype="string"
        )
        return kernels
    if per != "launch":
        raise UsageError(f"--per must be 'launch' or 'kernel', not {per!r}")
    return result.launches[_launch_columns(result.launches)]


def _launch_tables(result) -> Iterator[pd.DataFrame]:
    """The launch rows of the CSV, a table (a folder's file) at a time."""
    for launches in result.launch_pieces():
        yield launches[_launch_columns(launches)]


def _launch_columns(launches: pd.DataFrame) -> list[str]:
    columns = LAUNCH_COLUMNS + schema.OPTIONAL_COLUMNS  # the trace columns when a trace was read
    return [c for c in columns if c in launches.columns]


def _advice(result, row: dict) -> str:
    """A group's advice (reporters/common.group_advice) in one cell: "rule: text (from
    evidence)", joined by " | "; "" where no rule spoke."""
    found = common.group_advice(result, row)
    return " | ".join(f"{a.rule}: {a.text} (from {a.evidence})" for a in found)


def defuse(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells that start like a formula get a leading single quote; numbers are left alone."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        text = values.astype("string")
        risky = text.str.startswith(FORMULA_START).fillna(False)
        if risky.any():
            out[column] = text.mask(risky, "'" + text)
    return out


def _rows(frame: pd.DataFrame) -> bytes | memoryview:
    """The rows of `frame` as CSV lines; pandas' own writer for a column of another kind."""
    cells = [_cells(frame[c]) for c in frame.columns]
    if any(c is None for c in cells) or frame.columns.has_duplicates or len(frame.columns) < 2:
        return frame.to_csv(index=False, header=False, lineterminator="\n").encode("utf-8")
    ends = pa.array(["\n"] * len(frame), pa.large_string())  # an array even if no column is
    cells[-1] = pc.binary_join_element_wise(
        cells[-1], ends, arrow_text.large(""), null_handling="replace"
    )
    lines = pc.binary_join_element_wise(
        *cells, arrow_text.large(","), null_handling="replace", null_replacement=""
    )
    return arrow_text.back_to_back(lines)


def _cells(column: pd.Series) -> pa.Array | pa.Scalar | None:
    """Each cell's CSV field as pandas writes it, null for an empty one (NA, NaN); a scalar
    when every cell is the same; None for a kind of column not encoded here."""
    if len(column) > 1 and arrow_text.one_value(column):
        return _cells(column.iloc[:1])[0]
    dtype = column.dtype
    if dtype == np.float64 or isinstance(dtype, pd.Float64Dtype):  # a trace's model columns
        return _floats(column.to_numpy(dtype=np.float64, na_value=np.nan))
    if isinstance(dtype, pd.Int64Dtype) or dtype == np.int64:
        return pc.cast(pa.array(column, pa.int64(), from_pandas=True), pa.large_string())
    text = isinstance(dtype, pd.StringDtype | pd.CategoricalDtype | pd.BooleanDtype)
    if text or dtype in (np.bool_, np.object_):
        codes, uniques = pd.factorize(column, use_na_sentinel=True)  # each distinct value once
        fields = _fields([str(v) for v in uniques.tolist()]) + [None]
        return pa.array(fields, pa.large_string()).take(np.where(codes < 0, len(fields) - 1, codes))
    return None


def _floats(numbers: np.ndarray) -> pa.Array:
    """repr of each float (as pandas writes them), "inf" and "-inf"; null for NaN."""
    text = arrow_text.floats(numbers)
    infinite = np.isinf(numbers)
    if infinite.any():
        signs = pa.array(np.where(numbers > 0, "inf", "-inf"), pa.large_string())
        text = pc.if_else(pa.array(infinite), signs, text)
    return text


def _fields(values: list[str]) -> list[str]:
    """Each value as Python's csv writer writes a field (quoted when it holds , " or a line
    end): pandas' to_csv writes every cell through that writer."""
    out, fields = io.StringIO(), []
    writer = csv.writer(out, lineterminator="\n")
    for value in values:
        out.seek(0)
        out.truncate()
        writer.writerow([value, ""])  # a lone "" would be written quoted
        fields.append(out.getvalue()[:-2])
    return fields


def _row(values: list[str]) -> str:
    return ",".join(_fields(values)) + "\n"
