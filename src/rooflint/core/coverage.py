"""How much GPU time has a verdict, and the largest operators or kernels that have none."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import names, schema, windows
from rooflint.core.formatting import share_pct

TOP = 5


def unanalysed_times(launches: pd.DataFrame, rows: np.ndarray) -> pd.Series:
    """The time of the launches `rows` per name (operator, else short kernel name), by name.
    Names are hashed over the whole column and then picked by row: a selection of rows from an
    Arrow string column joins all its chunks first (the names of 200k launches: 36 MB)."""
    if not len(rows):
        return pd.Series(dtype=float)
    codes, kernels = pd.factorize(schema.filled(launches["kernel"], "(unnamed)"))
    short = np.array([names.short_name(k) for k in kernels], dtype=object)
    label = pd.Series(short[codes[rows]], index=launches.index[rows])
    if "op" in launches:
        label = launches["op"].iloc[rows].fillna(label)
    return pd.Series(launches["duration_s"].to_numpy()[rows]).groupby(label.to_numpy()).sum()


def largest(times: pd.Series, total: float, top: int = TOP) -> list[dict]:
    """The `top` names of `times` (time per name, by name) by time, each with its share."""
    if not len(times) or not total > 0:
        return []
    times = times.sort_values(ascending=False, kind="mergesort")
    times = times[times > 0].head(top)
    return [
        {"name": str(k), "time_s": float(v), "share": float(v / total)} for k, v in times.items()
    ]


def line(result) -> str | None:
    """ "Coverage: 69 % of GPU time has a verdict; none for aten::_foreach_add_ 12 %, ..." when
    some time has no verdict or a trace is among the inputs; None otherwise."""
    acc = result.summary.accounting
    traced = "op" in result.launches
    total, analysed = acc["time_s"], acc["time_analysed_s"]
    if total is None or analysed is None or not total > 0 or (analysed >= total and not traced):
        return None
    busy = "of the window's busy time" if windows.covers_all(result) else "of GPU time"
    text = f"coverage: {share_pct(analysed / total)} {busy} has a verdict"
    if acc["unanalysed_top"]:
        text += "; largest without: " + ", ".join(
            f"{u['name']} {share_pct(u['share'])}" for u in acc["unanalysed_top"]
        )
    if acc.get("graph_replay_launches"):
        text += f"; {acc['graph_replay_launches']} launches replayed from CUDA graphs"
    return text
