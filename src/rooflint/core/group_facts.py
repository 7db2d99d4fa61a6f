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


def per_group(analysed: pd.DataFrame, group: np.ndarray, n: int) -> dict:
    """{fact column: per-group values} (NaN / NA where a group has no launch with facts)."""
    columns = present(analysed)
    if not columns:
        return {}
    has = np.zeros(len(analysed), dtype=bool)
    for column in columns:
        has |= analysed[column].notna().to_numpy()
    rows = np.flatnonzero(has)
    duration = np.nan_to_num(analysed["duration_s"].to_numpy(dtype=float)[rows], nan=-1.0)
    order = np.lexsort((rows, -duration, group[rows]))  # per group: longest first, then order
    chosen = rows[order]
    owner = group[chosen]
    first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner
    out = {}
    for column in columns:
        values = analysed[column]
        text = not pd.api.types.is_numeric_dtype(values.dtype)
        taken = pd.Series(pd.NA if text else np.nan, index=pd.RangeIndex(n), dtype=object)
        taken.iloc[owner[first]] = values.iloc[chosen[first]].to_numpy(dtype=object)
        out[column] = pd.array(taken, dtype="string") if text else taken.to_numpy(dtype=float)
    return out
