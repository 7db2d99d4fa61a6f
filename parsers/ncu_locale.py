"""ncu's value cells to numbers, a column at a time: the number locale, then float64.

The rules are those of values.detect_locale and values.to_float (which read a pandas Series
cell by cell); here they run as Arrow kernels over whole columns. Locale evidence is one RE2
scan of a column joined with newlines (a DFA pass, not a regex call per cell); conversion is a
cast of the cleaned column. Cells those shortcuts cannot vouch for (non-ASCII or control
characters, text, a `-0` whose sign pandas decides from the whole column) get the reference
functions themselves, on those cells or that column only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core.choices import LOCALES
from rooflint.core.errors import InputError

from .values import _AMBIGUOUS_COMMA, _DE, _EN, to_float

_PATTERNS = {
    name: "(?m)" + rx.pattern
    for name, rx in (("de", _DE), ("en", _EN), ("ambiguous", _AMBIGUOUS_COMMA))
}
_REFERENCE = {"de": _DE, "en": _EN, "ambiguous": _AMBIGUOUS_COMMA}
_CONTROL = bytes(range(32)) + b"\x7f"
_PLAIN_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
# Cells pandas reads as NaN that a cast refuses: made null before the cast.
# The ways ncu writes "no value" (any case counts); a parser may make exactly these null.
NO_VALUE_CELLS = ["", "-", "n/a", "N/A", "nan", "NaN"]
_NO_VALUE = {cell.lower() for cell in NO_VALUE_CELLS}
_NA_TOKENS = pa.array([*NO_VALUE_CELLS, "-nan"])  # "-nan": NaN too, but reported as text


def choose_locale(columns: list, forced: str | None, source: str) -> str:
    """The locale to read `columns` (Arrow string arrays) with: `forced`, else detected."""
    if forced:
        return checked_locale(forced, source)
    return decided_locale(*locale_evidence(columns), source)


def checked_locale(forced: str, source: str) -> str:
    if forced not in LOCALES:
        raise InputError(f"unknown locale {forced!r}; use one of {', '.join(LOCALES)}", path=source)
    return forced


def locale_evidence(columns: list, seen: tuple = (False, False, False)) -> tuple[bool, bool, bool]:
    """Whether some cell of `columns` is written (de_DE, en_US, ambiguously), or-ed with the
    evidence `seen` in earlier pieces of the file: each is an "any cell" test, so a test whose
    answer is already yes is not run again, and the ambiguous one, which only matters when
    neither locale shows, runs only while neither has."""
    if seen[0] and seen[1]:
        return tuple(seen)
    cells = [c for c in (_combined(column) for column in columns) if _has_separator(c)]
    de = seen[0] or _any_match(cells, "de")
    en = seen[1] or _any_match(cells, "en")
    ambiguous = seen[2] or (not de and not en and _any_match(cells, "ambiguous"))
    return de, en, ambiguous


def decided_locale(de: bool, en: bool, ambiguous: bool, source: str) -> str:
    """The locale the evidence points to; both or an ambiguous cell alone is an error."""
    if de and not en:
        return "de_DE"
    if en and not de:
        return "en_US"  # C and en_US read numbers alike: commas dropped
    if not de and not ambiguous:
        return "C"
    raise InputError(
        'number format is ambiguous (e.g. "84,480" could be en_US 84480 or de_DE '
        "84.48); pass --locale en_US or --locale de_DE, or export with LC_ALL=C",
        path=source,
    )


def _combined(column) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column.drop_null() if column.null_count else column


def _has_separator(cells: pa.Array) -> bool:
    """Every locale pattern needs a "," or a "."; most columns of a C export have neither."""
    data = _data(cells)
    return b"," in data or b"." in data


def _chunks(column) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def _data(cells: pa.Array) -> bytes:
    """The bytes of the cells' characters, back to back."""
    if len(cells) == 0:
        return b""
    offsets = np.frombuffer(cells.buffers()[1], dtype=np.int32)
    offsets = offsets[cells.offset : cells.offset + len(cells) + 1]
    return memoryview(cells.buffers()[2])[offsets[0] : offsets[-1]].tobytes()


def _any_match(columns: list[pa.Array], name: str) -> bool:
    """Whether a cell (its part before " (") matches pattern `name`, as re.match would say."""
    return any(_matches(cells, name) for cells in columns)


def _matches(cells: pa.Array, name: str) -> bool:
    if len(cells) == 0:
        return False
    data = _data(cells)
    if b"(" in data:
        cells = pc.list_element(pc.split_pattern(cells, " (", max_splits=1), 0)
    if not data.isascii():  # Python's \d also takes non-ASCII digits: those cells by re itself
        ascii_cells = pc.string_is_ascii(cells)
        others = cells.filter(pc.invert(ascii_cells)).to_pandas()
        if pd.Series(others, dtype=object).str.match(_REFERENCE[name]).any():
            return True
        cells = cells.filter(ascii_cells)
    # one DFA scan of the column joined by newlines; (?m) anchors ^ $ at each cell
    one_list = pa.ListArray.from_arrays(pa.array([0, len(cells)], pa.int32()), cells)
    joined = pc.binary_join(one_list, "\n")
    return bool(pc.match_substring_regex(joined, _PATTERNS[name])[0].as_py())


def to_floats(column, locale: str, whole: bool = True) -> np.ndarray | None:
    """values.to_float(column, locale) for an Arrow string column. A "-0" cell reads as 0.0 or
    -0.0 depending on the whole column: when `column` is only part of one (not `whole`), such a
    cell gives None instead of values."""
    values, odd_zero = _floats(_combined_keep_nulls(column), locale)
    if odd_zero and not whole:
        return None
    if odd_zero:
        return to_float(pd.Series(_combined_keep_nulls(column).to_pandas()), locale)
    return values


def _combined_keep_nulls(column) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def _floats(cells: pa.Array, locale: str) -> tuple[np.ndarray, bool]:
    """(values, whether a zero may carry a sign only the whole column decides)."""
    if cells.null_count:
        cells = cells.fill_null("")
    data = _data(cells)
    odd = None
    if not data.isascii() or len(data.translate(None, _CONTROL)) != len(data):
        odd = pc.or_(
            pc.invert(pc.string_is_ascii(cells)),
            pc.match_substring_regex(cells, "[\\x00-\\x1f\\x7f]"),
        )
    text = cells
    if b" " in data:
        text = pc.ascii_trim(text, " ")
    if b"(" in data:
        text = pc.list_element(pc.split_pattern(text, " (", max_splits=1), 0)
    if locale == "de_DE" and (b"." in data or b"," in data):
        text = _edited(text, ".", swap=(",", "."))
    elif locale != "de_DE" and b"," in data:
        text = _edited(text, ",")
    if odd is not None:  # left to the reference conversion below
        text = pc.if_else(odd, pa.scalar(None, pa.string()), text)
    values, refused = _cast(text)
    if odd is not None:
        refused = refused | odd.to_numpy(zero_copy_only=False)
    odd_zero = bool(np.signbit(values[values == 0]).any())
    rest = np.flatnonzero(refused)
    if len(rest):
        original = pd.Series(cells.take(pa.array(rest)).to_pandas(), dtype="string")
        values[rest] = to_float(original, locale)
        odd_zero = odd_zero or bool(
            (
                (values[rest] == 0)
                & original.str.contains("-", regex=False).to_numpy(dtype=bool, na_value=False)
            ).any()
        )
    return values, odd_zero


def _edited(text: pa.Array, drop: str, swap: tuple[str, str] | None = None) -> pa.Array:
    """The cells with every `drop` character removed, then `swap[0]` written as `swap[1]`:
    pc.replace_substring's result, by numpy passes over the characters (a grouped 200k-launch
    export: en_US 218 -> 154 ms, de_DE's two replacements 370 -> 167 ms)."""
    if text.null_count or text.type != pa.string():
        text = pc.replace_substring(text, drop, "")
        return pc.replace_substring(text, *swap) if swap else text
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int32)
    offsets = offsets[text.offset : text.offset + len(text) + 1]
    chars = np.frombuffer(text.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    hit = chars == ord(drop)
    dropped = np.flatnonzero(hit)
    starts = offsets - offsets[0]
    if len(dropped):
        chars = chars[~hit]  # a copy: Arrow's buffers are never written
        starts = starts - np.searchsorted(dropped, starts).astype(np.int32)
    elif swap:
        chars = chars.copy()
    else:
        return text
    if swap:
        chars[chars == ord(swap[0])] = ord(swap[1])
    return pa.StringArray.from_buffers(len(text), pa.py_buffer(starts), pa.py_buffer(chars))


def _cast(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(float64 values, mask of cells the cast could not read: NaN there for now)."""
    refused = np.zeros(len(text), dtype=bool)
    try:
        return pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False).astype("float64"), refused
    except pa.ArrowInvalid:
        pass
    blank = pc.fill_null(pc.is_in(text, value_set=_NA_TOKENS), False)
    text = pc.if_else(blank, pa.scalar(None, pa.string()), text)
    try:
        values = pc.cast(text, pa.float64())
    except pa.ArrowInvalid:
        plain = pc.fill_null(pc.match_substring_regex(text, _PLAIN_NUMBER), False)
        refused = pc.and_(pc.invert(plain), pc.invert(blank)).to_numpy(zero_copy_only=False)
        values = pc.cast(pc.if_else(plain, text, pa.scalar(None, pa.string())), pa.float64())
    return values.to_numpy(zero_copy_only=False).astype("float64"), refused


def not_numbers(cells, values: np.ndarray) -> np.ndarray:
    """Mask of cells read as NaN that hold text, not one of the ways of writing "no value"."""
    bad = np.zeros(len(values), dtype=bool)
    nan = np.flatnonzero(np.isnan(values))
    if not len(nan):
        return bad
    column = cells if isinstance(cells, pa.Array) else pa.chunked_array(_chunks(cells), pa.string())
    text = pd.Series(column.take(pa.array(nan)).to_pandas(), dtype="string").str.strip()
    bad[nan] = (text.notna() & ~text.str.lower().isin(_NO_VALUE)).to_numpy(dtype=bool)
    return bad


def not_numbers_message(count: int, metric: str, value: str, launch) -> list[str]:
    if not count:
        return []
    value = value.strip()
    shown = value[:40] + ("..." if len(value) > 40 else "")
    return [
        f"{count} metric value(s) that are not numbers read as missing (first: {metric} = "
        f"{shown!r} for launch ID {launch})"
    ]
