"""Numbers as ncu prints them: locale grouping, auto-scaled units, instance lists, `n/a`."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pandas as pd

_DE = re.compile(
    r"^-?\d{1,3}(\.\d{3}){2,}(,\d+)?$|^-?\d{1,3}(\.\d{3})+,\d+$|^-?\d+,(\d{1,2}|\d{4,})$"
)
_EN = re.compile(
    r"^-?\d{1,3}(,\d{3}){2,}(\.\d+)?$|^-?\d{1,3}(,\d{3})+\.\d+$|^-?\d+\.(\d{1,2}|\d{4,})$"
)
_AMBIGUOUS_COMMA = re.compile(r"^-?\d{1,3},\d{3}$")


def detect_locale(cells: pd.Series) -> str | None:
    """The number locale of value cells: "C", "en_US" or "de_DE"; None when truly ambiguous.

    de_DE writes "6.684.848.484,85" and "84,48"; en_US writes "6,684,848,484.85"; C has no
    grouping. A cell like "84,480" fits both en_US (84480) and de_DE (84.48); "124.056" fits
    both C (124.056) and de_DE (124056): such cells decide nothing on their own.
    """
    sample = cells.dropna().astype(str)
    sample = sample[sample.str.len() > 0]
    sample = sample.str.split(" (", n=1, regex=False).str[0]
    de = sample.str.match(_DE).any()
    en = sample.str.match(_EN).any()
    if de and not en:
        return "de_DE"
    if en and not de:
        return "en_US" if sample.str.contains(",", regex=False).any() else "C"
    if de and en:
        return None
    if sample.str.match(_AMBIGUOUS_COMMA).any():
        return None
    return "C"


def to_float(cells: pd.Series, locale: str) -> np.ndarray:
    """Parse value cells to float64; `n/a`, empty and text become NaN."""
    text = cells.astype("string").str.strip()
    if text.str.contains("(", regex=False).any():  # "32 (32; 32; ...)": value, then instances
        text = text.str.split(" (", n=1, regex=False).str[0]
    if locale == "de_DE":
        text = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    else:
        text = text.str.replace(",", "", regex=False)
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


_PREFIX = {
    "": 1.0,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 1024.0,
    "Mi": 1024.0**2,
    "Gi": 1024.0**3,
    "Ti": 1024.0**4,
}
_TIME = {
    "nsecond": 1e-9,
    "ns": 1e-9,
    "usecond": 1e-6,
    "us": 1e-6,
    "msecond": 1e-3,
    "ms": 1e-3,
    "second": 1.0,
    "s": 1.0,
    "sec": 1.0,
}
_PER_TIME = {
    "nsecond": 1e9,
    "ns": 1e9,
    "usecond": 1e6,
    "us": 1e6,
    "msecond": 1e3,
    "ms": 1e3,
    "second": 1.0,
    "s": 1.0,
    "sec": 1.0,
}
_HZ = re.compile(r"^(K|M|G|T)?hz$", re.IGNORECASE)


@cache
def unit_scale(unit: str) -> float:
    """The factor that turns a value printed in `unit` into SI base units.

    "Kbyte" → 1e3 bytes, "usecond"/"us" → 1e-6 s, "cycle/nsecond" and "Ghz" → 1e9 Hz,
    "Gbyte/s" → 1e9 byte/s. Unknown or dimensionless units ("inst", "%", "") scale by 1.
    """
    unit = (unit or "").strip()
    if not unit or unit == "%":
        return 1.0
    hz = _HZ.match(unit)
    if hz:
        return _PREFIX[hz.group(1) or ""]
    if "/" in unit:
        num, den = unit.split("/", 1)
        return _counted(num) * _PER_TIME.get(den, 1.0)
    if unit in _TIME:
        return _TIME[unit]
    return _counted(unit)


def _counted(unit: str) -> float:
    """Scale of a counted unit with an optional SI prefix: "Kbyte", "Msector", "inst"."""
    if unit in _TIME:
        return _TIME[unit]
    for prefix in ("Ki", "Mi", "Gi", "Ti", "K", "M", "G", "T", "P"):
        rest = unit[len(prefix) :]
        binary = len(prefix) == 2
        if unit.startswith(prefix) and rest[:1].islower() and (rest == "byte" or not binary):
            return _PREFIX[prefix]
    return 1.0
