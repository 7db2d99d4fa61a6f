"""The per-launch facts of an ncu export (schema.LAUNCH_FACT_COLUMNS) per ranked group.

Each group takes every fact from one launch: its longest launch that has any fact (ties: the
first). One launch, so that the facts belong together — a limiter with the block count it allows,
a wave count with its own tail — where a mean of wave counts (1.5 and 2.5 make 2.0) would hide
both tails; and the longest, as the one that costs the group most time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import schema


def present(analysed: pd.DataFrame) -> list[str]:
    """The fact columns the launch table has."""
    return [c for c in schema.LAUNCH_FACT_COLUMNS if c in analysed]


def per_group(analysed: pd.DataFrame, group: np.ndarray, n: int) -> tuple[dict, np.ndarray]:
    """{fact column: per-group values} (NaN / NA where a group has no launch with facts), and
    the duration of the launch they are from (-1 where unknown, NaN where none has facts)."""
    columns = present(analysed)
    if not columns:
        return {}, np.full(n, np.nan)
    has = np.zeros(len(analysed), dtype=bool)
    for column in columns:
        has |= analysed[column].notna().to_numpy()
    duration = np.nan_to_num(analysed["duration_s"].to_numpy(dtype=float), nan=-1.0)
    return longest(analysed, columns, np.where(has, duration, np.nan), group, n)


def longest(
    table: pd.DataFrame, columns: list[str], time: np.ndarray, group: np.ndarray, n: int
) -> tuple[dict, np.ndarray]:
    """Per group, `columns` of its row of the longest `time` (ties: the first row; a row of NaN
    time is never taken), and that time: a launch table's facts, or merged partials' rows."""
    rows = np.flatnonzero(~np.isnan(time))
    order = np.lexsort((rows, -time[rows], group[rows]))  # per group: longest first, then order
    chosen = rows[order]
    owner = group[chosen]
    first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner
    owner, chosen = owner[first], chosen[first]
    out = {}
    for column in columns:
        values = table[column]
        text = not pd.api.types.is_numeric_dtype(values.dtype)
        taken = pd.Series(pd.NA if text else np.nan, index=pd.RangeIndex(n), dtype=object)
        taken.iloc[owner] = values.iloc[chosen].to_numpy(dtype=object)
        out[column] = pd.array(taken, dtype="string") if text else taken.to_numpy(dtype=float)
    chosen_time = np.full(n, np.nan)
    chosen_time[owner] = time[chosen]
    return out, chosen_time
