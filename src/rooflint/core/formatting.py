"""Numbers as people read them: one SI formatter, one ratio formatter and one family of
percentage formatters."""

from __future__ import annotations

import math
import sys

_SI = [
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
]
MISSING = "—"


def is_missing(value) -> bool:
    """None, pandas NA or a float NaN: a number the profile or the maths did not give."""
    return value is None or _is_na(value) or (isinstance(value, float) and math.isnan(value))


def _is_na(value) -> bool:
    """pandas' NA, without importing pandas (the commands that print no table never load it)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and value is pandas.NA


def si(value, unit: str = "", digits: int = 3) -> str:
    """3.2e-6, "s" → "3.2 µs"; NaN → "—"."""
    if is_missing(value):
        return MISSING
    value = float(value)
    if value == 0:
        return f"0 {unit}".strip()
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def ratio(value, digits: int = 3) -> str:
    """A dimensionless ratio (FLOP/byte, a ridge point, bytes over their minimum) as a plain
    number, never with an SI prefix: 0.0132 → "0.0132", 116.4 → "116", 6680.2 → "6680",
    1.5e-05 → "1.5e-05"; NaN → "—". An SI prefix on a ratio ("13.2 m") reads as a unit."""
    if is_missing(value):
        return MISSING
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 10**digits:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def pct(value, digits: int = 0) -> str:
    """0.123 → "12 %" (fixed digits); NaN → "—"."""
    if is_missing(value):
        return MISSING
    return f"{float(value) * 100:.{digits}f} %"


def share_pct(fraction: float) -> str:
    """A share in whole percent that never rounds a part to none or to all: 0.004 → "<1 %",
    0.9996 → ">99 %", 0.123 → "12 %"; NaN → "—"."""
    text = pct(fraction)
    if text == "0 %" and fraction > 0:
        return "<1 %"
    if text == "100 %" and fraction < 1:
        return ">99 %"
    return text


def show_pct(fraction: float, digits: int = 1) -> str:
    """0.1 → "10 %", 0.123 → "12.3 %" (trailing zeros dropped): thresholds as a user typed them."""
    text = f"{fraction * 100:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} %"


def signed_pct(fraction: float, digits: int = 1) -> str:
    """A change: 0.05 → "+5.0 %"; NaN → "—"."""
    if is_missing(fraction) or math.isnan(fraction):
        return MISSING
    return f"{fraction * 100:+.{digits}f} %"


def plain(value):
    """A JSON-safe scalar: NA/NaN/inf → None, numpy scalars → Python."""
    if value is None or _is_na(value):
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value
