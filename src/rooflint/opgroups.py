"""PyTorch-trace launches relabelled by operator, so that runs on different GPUs compare op by op."""

from __future__ import annotations

import pandas as pd

OPERATOR_CONFIG = "(operator)"  # grid and block of an operator group: it spans its kernels


def by_operator(launches: pd.DataFrame) -> pd.DataFrame:
    """Launches with an operator get `kernel` = "op dims types" and a shared grid/block, so kernel
    grouping becomes operator + shapes + dtypes: an A100 and an MI300X run of one model launch
    different kernels for the same aten::addmm. dtypes lose their "c10::" so that the short name
    (which keeps the part after the last "::" of a long name) still shows the operator. Other
    launches are left as they are."""
    if "op" not in launches or not launches["op"].notna().any():
        return launches
    out = launches.copy()
    has = out["op"].notna().to_numpy()
    label = (out["op"].astype("string") + " " + out["op_input_dims"].astype("string").fillna("") + " "
             + out["op_input_types"].astype("string").fillna("").str.replace("c10::", "", regex=False)).str.strip()
    for column, values in (("kernel", label), ("grid", OPERATOR_CONFIG), ("block", OPERATOR_CONFIG)):
        out[column] = out[column].astype("string").mask(has, values)
    return out
