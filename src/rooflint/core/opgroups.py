"""PyTorch-trace launches relabelled by operator, so runs on different GPUs compare op by op."""

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
    label = (
        out["op"].astype("string")
        + " "
        + out["op_input_dims"].astype("string").fillna("")
        + " "
        + out["op_input_types"].astype("string").fillna("").str.replace("c10::", "", regex=False)
    ).str.strip()
    for column, values in (
        ("kernel", label),
        ("grid", OPERATOR_CONFIG),
        ("block", OPERATOR_CONFIG),
    ):
        out[column] = out[column].astype("string").mask(has, values)
    return out


_SCALARS = {"", "Scalar", "ScalarList", "TensorList", "None"}


def short_label(group: str) -> str:
    """ "aten::addmm [[512],[141,512],[512,512],[],[]] c10::BFloat16, ..., Scalar" (an `op` group)
    -> "aten::addmm [[512],[141,512],[512,512]] BFloat16": empty shapes, scalars and repeated
    dtypes left out."""
    parts = str(group).split(" ", 2)
    if len(parts) > 1 and parts[1] == "(none)":  # an operator recorded without shapes
        return parts[0]
    if len(parts) < 2 or not parts[1].startswith("["):
        return str(group)
    dims = parts[1].replace(",[]", "").replace("[[],", "[").replace("[[]]", "[]")
    types = [
        t.strip().removeprefix("c10::") for t in (parts[2] if len(parts) > 2 else "").split(",")
    ]
    kept = list(dict.fromkeys(t for t in types if t not in _SCALARS))
    return " ".join([parts[0], dims] + ([", ".join(kept)] if kept else []))
