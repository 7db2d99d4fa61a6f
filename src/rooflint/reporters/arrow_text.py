"""Columns of values as Arrow text, written as Python writes each value; and the bytes of a
text column's cells back to back. The JSON and CSV reporters write a large launch table column by
column with these instead of value by value (Python's encoders run per value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def floats(numbers: np.ndarray) -> pa.Array:
    """repr of each float (what json.dumps writes), null where plain gives None (NaN,
    infinities). Arrow writes the same shortest round-trip digits as repr, laid out differently
    by magnitude. The values are sorted by layout, each run is rewritten with slices only (no
    regex, no pass over the other values), and the texts are put back in place."""
    layout = _layouts(numbers)
    order = np.argsort(layout, kind="stable")
    ordered, texts, start = numbers[order], [], 0
    for kind, count in enumerate(np.bincount(layout, minlength=len(_REWRITES)).tolist()):
        if count:
            texts.append(_REWRITES[kind](ordered[start : start + count], kind))
        start += count
    if not texts:
        return pa.array([], pa.large_string())
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return pa.concat_arrays(texts).take(pa.array(back))


# The layouts, by magnitude m = |x| (powers of ten are exact thresholds: a float's shortest
# digits are below 10^k exactly when the float is below the float nearest 10^k):
_AS_ARROW = 0  # m < 1e-9, 1e-4 <= m < 1e10, m >= 1e16: Arrow writes what repr writes
_PADDED = 1  # 1e-9 <= m < 1e-6: "1.5e-7" -> "1.5e-07"
_SHIFTED = (2, 3)  # 1e-6 <= m < 1e-5, 1e-5 <= m < 1e-4: "0.0000012" -> "1.2e-06"
_INTEGRAL = 4  # integral, m < 1e16: "100" -> "100.0"
_NOT_FINITE = 5  # null
_MOVED = 6  # 6..11: not integral, 1e10 <= m < 1e16: "2.96673352e+13" -> "29667335200000.5"
_MOVED_ABOVE = np.array([1e11, 1e12, 1e13, 1e14, 1e15])


def _layouts(numbers: np.ndarray) -> np.ndarray:
    size = np.abs(numbers)
    finite = np.isfinite(numbers)
    integral = finite & (size < 1e16) & (np.floor(numbers) == numbers)
    layout = np.full(len(numbers), _AS_ARROW, dtype=np.intp)
    layout[(size >= 1e-9) & (size < 1e-6)] = _PADDED
    layout[(size >= 1e-6) & (size < 1e-5)] = _SHIFTED[0]
    layout[(size >= 1e-5) & (size < 1e-4)] = _SHIFTED[1]
    moved = ~integral & (size >= 1e10) & (size < 1e16)
    layout[moved] = _MOVED + np.searchsorted(_MOVED_ABOVE, size[moved], side="right")
    layout[integral] = _INTEGRAL
    layout[~finite] = _NOT_FINITE
    return layout


def _as_arrow(values: np.ndarray, _kind: int) -> pa.Array:
    return pc.cast(pa.array(values), pa.large_string())


def _padded(values: np.ndarray, _kind: int) -> pa.Array:
    """One exponent digit (-7 to -9): a 0 before it."""
    return pc.utf8_replace_slice(_as_arrow(values, _kind), start=-1, stop=-1, replacement="0")


def _shifted(values: np.ndarray, kind: int) -> pa.Array:
    """Arrow's "0.0000d..." (exponent -5) or "0.00000d..." (-6) as "d.de-05": the digits
    after the zeros, a point after the first (none when it is the only one), the exponent."""
    exponent = 5 if kind == _SHIFTED[1] else 6
    digits = pc.utf8_slice_codeunits(_as_arrow(np.abs(values), kind), start=exponent + 1)
    text = pc.utf8_replace_slice(digits, start=1, stop=1, replacement=".")
    text = _join(text, f"e-0{exponent}")
    return _signed(pc.replace_substring(text, ".e", "e"), values)


def _moved(values: np.ndarray, kind: int) -> pa.Array:
    """Arrow's "d.ddddde+N" (N = 10 to 15, more than N digits after the point) with the point
    moved N places right and the exponent dropped."""
    exponent = 10 + kind - _MOVED
    text = pc.utf8_slice_codeunits(_as_arrow(np.abs(values), kind), start=0, stop=-4)
    text = pc.utf8_replace_slice(text, start=1, stop=2, replacement="")
    text = pc.utf8_replace_slice(text, start=exponent + 1, stop=exponent + 1, replacement=".")
    return _signed(text, values)


def _integral(values: np.ndarray, _kind: int) -> pa.Array:
    """Integral floats below 1e16 as integers with ".0" ("-0.0" for -0.0)."""
    text = pc.cast(pa.array(values.astype(np.int64)), pa.large_string())
    negative_zero = (values == 0) & np.signbit(values)
    if negative_zero.any():
        text = pc.if_else(pa.array(negative_zero), large("-0"), text)
    return _join(text, ".0")


def _not_finite(values: np.ndarray, _kind: int) -> pa.Array:
    return pa.nulls(len(values), pa.large_string())


def _signed(text: pa.Array, values: np.ndarray) -> pa.Array:
    negative = values < 0
    if not negative.any():
        return text
    return pc.if_else(
        pa.array(negative), pc.binary_join_element_wise(large("-"), text, large("")), text
    )


_REWRITES = [_as_arrow, _padded, *[_shifted] * 2, _integral, _not_finite, *[_moved] * 6]


def _join(text: pa.Array, suffix: str) -> pa.Array:
    return pc.binary_join_element_wise(text, large(suffix), large(""))


def large(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.large_string())


def one_value(column: pd.Series) -> bool:
    """Whether every cell holds the same value (or every cell is missing)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.array.codes
        return bool((codes == codes[0]).all())
    if column.dtype == np.float64:
        values = column.to_numpy()
        return bool((values == values[0]).all() or np.isnan(values).all())
    return column.nunique(dropna=False) == 1


def back_to_back(text: pa.Array) -> memoryview:
    """The UTF-8 of a large_string array's cells one after another, without a copy."""
    offsets, data = text.buffers()[1:3]
    end = np.frombuffer(offsets, dtype=np.int64, count=len(text) + 1, offset=text.offset * 8)
    return memoryview(data)[int(end[0]) : int(end[-1])]
