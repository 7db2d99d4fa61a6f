"""CSV: one row per launch (canonical columns + verdict) or per kernel group, SI units, full names.

Cells are written exactly as the data holds them, so the file reads back to the same values
(floats in shortest round-trip form, NA as an empty cell). `excel_safe` is therefore off by
default: it prefixes cells that a spreadsheet would run as a formula (= + - @ tab CR) with a
single quote, which protects people who open the file in Excel but changes those cells' text.
"""

from __future__ import annotations

import pandas as pd

from rooflint.core import ranking, schema
from rooflint.core.errors import UsageError
from rooflint.core.result import LAUNCH_COLUMNS

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def render(result, per: str = "launch", excel_safe: bool = False, **_options) -> str:
    frame = table(result, per)
    if excel_safe:
        frame = defuse(frame)
    return frame.to_csv(index=False, lineterminator="\n")


def table(result, per: str = "launch") -> pd.DataFrame:
    """The rows the CSV holds: launches in input order, or kernel groups in rank order."""
    if per == "kernel":
        return result.kernels[
            [c for c in ranking.KERNEL_COLUMNS + ["excess_traffic"] if c in result.kernels]
        ]
    if per != "launch":
        raise UsageError(f"--per must be 'launch' or 'kernel', not {per!r}")
    columns = LAUNCH_COLUMNS + schema.TRACE_COLUMNS  # the trace columns when a trace was read
    return result.launches[[c for c in columns if c in result.launches.columns]]


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
