"""The versioned JSON report: every number with its unit, readable back by `rooflint diff`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core import analysis, schema
from rooflint.core.formatting import plain
from rooflint.core.result import summary_numbers
from rooflint.core.version import __version__
from rooflint.reporters import common

LAUNCH_FIELDS = (
    [c for c in schema.COLUMNS if c not in ("missing",)] + analysis.RESULT_COLUMNS + ["family"]
)


def launch_fields(launches: pd.DataFrame) -> list[str]:
    """LAUNCH_FIELDS, the trace columns when a PyTorch trace was among the inputs, "missing"."""
    return LAUNCH_FIELDS + [c for c in schema.TRACE_COLUMNS if c in launches] + ["missing"]


# The report's own version (docs/json-format.md). 2: launches one object a line with null fields
# left out, and each source named once in "sources" (a launch gives its "source_index").
FORMAT_VERSION = 2
CHUNK_ROWS = 10_000  # launches encoded at a time: bounds the writer's memory on any input size


def render(result, top: int | None = None, **_options) -> str:
    return b"".join(chunks(result, top)).decode("utf-8")


def chunks(result, top: int | None = None, **_options) -> Iterator[bytes | memoryview]:
    """The report as consecutive pieces of UTF-8, the launch list CHUNK_ROWS launches at a
    time, so a caller can write a report of any size without holding it (or its text)."""
    launches = result.launches
    sources, codes = _source_codes(launches)
    head = json.dumps(
        {**_head(result, top), "sources": sources, "launches": _PLACEHOLDER},
        indent=1,
        ensure_ascii=False,
        allow_nan=False,
    )
    at = head.rindex(json.dumps(_PLACEHOLDER))  # "launches" is the last value of the document
    yield (head[:at] + "[").encode("utf-8")
    columns = [c for c in launch_fields(launches) if c != "source"]
    for start in range(0, len(launches), CHUNK_ROWS):
        part = launches.iloc[start : start + CHUNK_ROWS][columns]  # copies one chunk only
        lines = launch_lines(part, codes[start : start + CHUNK_ROWS])
        if lines is None:  # columns of a kind launch_lines does not encode: the general encoder
            lines = ",\n".join(
                _LINE_INDENT + json.dumps(r, ensure_ascii=False, allow_nan=False)
                for r in _launch_records(part, codes[start : start + CHUNK_ROWS])
            ).encode("utf-8")
        yield b"\n" if start == 0 else b",\n"
        yield lines
        del part, lines  # not held while the next chunk is encoded
    tail = head[at + len(json.dumps(_PLACEHOLDER)) :]
    yield (("\n ]" if len(launches) else "]") + tail + "\n").encode("utf-8")


def document(result, top: int | None = None) -> dict:
    """The report as a dict, built record by record: the reference that `chunks` must equal."""
    sources, codes = _source_codes(result.launches)
    columns = [c for c in launch_fields(result.launches) if c != "source"]
    return {
        **_head(result, top),
        "sources": sources,
        "launches": _launch_records(result.launches[columns], codes),
    }


def _source_codes(launches: pd.DataFrame) -> tuple[list, np.ndarray]:
    """The distinct sources in order of first appearance, and each launch's index into them."""
    codes, uniques = pd.factorize(launches["source"], use_na_sentinel=False)
    return [plain(v) for v in uniques.tolist()], codes


def _launch_records(frame: pd.DataFrame, codes: np.ndarray) -> list[dict]:
    out = []
    for code, row in zip(codes.tolist(), _records(frame), strict=True):
        record = {"source_index": code}
        record.update((k, v) for k, v in row.items() if v is not None and k != "missing")
        missing = schema.missing_map(row.get("missing") or "")
        if missing:
            record["missing"] = missing
        out.append(record)
    return out


def _head(result, top: int | None) -> dict:
    """Every key of the document but "launches" (which comes last), in document order."""
    kernels = result.kernels if top is None else result.kernels.head(top)
    devices = [_device(use) for use in result.devices]
    return {
        "format_version": FORMAT_VERSION,
        "tool": f"rooflint {__version__}",
        "units": {
            **schema.UNITS,
            **analysis.RESULT_UNITS,
            "time_share": "fraction",
            "headroom_share": "fraction",
        },
        "group_by": result.group_by,
        "latency_threshold": result.latency_threshold,
        "device": devices[0] if devices else None,
        "devices": devices,
        "accounting": result.accounting,
        "notes": sorted({f"{p.source}: {n}" for p in result.inputs for n in p.notes}),
        "summary": summary_numbers(result),
        "kernels": [_kernel(result, row) for row in _records(kernels)],
        "per_source": _records(result.per_source()),
    }


def _device(use) -> dict:
    device = use.device
    if device is None:
        return {
            "id": None,
            "name": None,
            "sources": use.sources,
            "provenance": use.provenance,
            "ceilings": [],
        }
    ceilings = common.device_ceilings(device)
    return {
        "id": device.id,
        "name": device.name,
        "vendor": device.vendor,
        "arch": device.arch,
        "evidence": getattr(use, "evidence", ""),
        "provisional": getattr(use, "provisional", False),
        "candidates": list(getattr(use, "candidates", [])),
        "choose": getattr(use, "advice", ""),
        "sources": use.sources,
        "provenance": use.provenance,
        "ceilings": ceilings,
    }


def _kernel(result, row: dict) -> dict:
    row = dict(row)
    row["short_name"] = common.names.short_name(row.get("kernel") or row.get("group"))
    row["short_id"] = row["id"]
    row["explanation"] = common.kernel_sentence(result, pd.Series(row).fillna(float("nan")))
    return row


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


# The launch list is most of a large report, and json.dumps runs its pure-Python encoder over
# every value. launch_lines writes the same text column by column, exactly as json.dumps does:
# each distinct string (json.dumps) once; integers and floats by Arrow's cast, floats' layout
# then made repr's (_floats); Arrow joins the pieces. tests/test_batch.py checks it against
# json.dumps.
_PLACEHOLDER = "\x00rooflint launches\x00"
_LINE_INDENT = "  "


def launch_lines(frame: pd.DataFrame, codes: np.ndarray) -> memoryview | bytes | None:
    """As UTF-8, one line per launch, `  {"source_index": i, "key": value, ...}` with null
    fields left out (what json.dumps writes for document()'s records), joined by ",\n"; None
    when a column's dtype is not one it encodes exactly (use json.dumps then)."""
    if frame.columns.has_duplicates or frame.empty:
        return None if frame.columns.has_duplicates else b""
    first = pa.array(
        [f'{_LINE_INDENT}{{"source_index": {c}' for c in range(int(codes.max()) + 1)],
        pa.large_string(),
    ).take(pa.array(codes))
    pieces = [first]
    for name in frame.columns:
        values = _encoded(
            frame[name], name == "missing", f", {json.dumps(name, ensure_ascii=False)}: "
        )
        if values is None:
            return None
        pieces.append(values)
    pieces.append(pa.array(["},\n"] * len(frame), pa.large_string()))
    records = pc.binary_join_element_wise(
        *pieces, _large(""), null_handling="replace", null_replacement=""
    )
    del pieces
    offsets, data = records.buffers()[1:3]
    end = np.frombuffer(offsets, dtype=np.int64, count=len(records) + 1, offset=records.offset * 8)
    return memoryview(data)[int(end[0]) : int(end[-1]) - 2]  # the last ",\n" dropped


def _encoded(column: pd.Series, is_missing: bool, key: str) -> pa.Array | None:
    """key + JSON text for every cell, null where the value is null (NA, NaN, infinities) or,
    for `missing`, an empty map: such fields are left out."""
    if len(column) > 1 and _one_value(column):  # ceilings, a device's name, unmeasured counters
        return _encoded(column.iloc[:1], is_missing, key)[0]  # a scalar: the same on every line
    dtype = column.dtype
    if dtype == np.float64 and not is_missing:
        return _keyed(_floats(column.to_numpy()), key)
    if (isinstance(dtype, pd.Int64Dtype) or dtype == np.int64) and not is_missing:
        integers = pa.array(column, pa.int64(), from_pandas=True)  # <NA> is null
        return _keyed(pc.cast(integers, pa.large_string()), key)  # the digits repr writes
    if is_missing:
        encode = _missing_json
    elif isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
        encode = _string_json
    elif isinstance(dtype, pd.BooleanDtype) or dtype == np.bool_:
        encode = _bool_json
    else:
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)  # each distinct value once
    texts = [encode(plain(v)) for v in uniques.tolist()]
    texts = [key + t if t not in ("null", "{}") else None for t in texts] + [None]
    return pa.array(texts, pa.large_string()).take(np.where(codes < 0, len(texts) - 1, codes))


def _one_value(column: pd.Series) -> bool:
    """Whether every cell holds the same value (or every cell is missing)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.array.codes
        return bool((codes == codes[0]).all())
    if column.dtype == np.float64:
        values = column.to_numpy()
        return bool((values == values[0]).all() or np.isnan(values).all())
    return column.nunique(dropna=False) == 1


def _keyed(text: pa.Array, key: str) -> pa.Array:
    """key + text per cell, null where the text is null."""
    return pc.binary_join_element_wise(_large(key), text, _large(""))


def _floats(numbers: np.ndarray) -> pa.Array:
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
        text = pc.if_else(pa.array(negative_zero), _large("-0"), text)
    return _join(text, ".0")


def _not_finite(values: np.ndarray, _kind: int) -> pa.Array:
    return pa.nulls(len(values), pa.large_string())


def _signed(text: pa.Array, values: np.ndarray) -> pa.Array:
    negative = values < 0
    if not negative.any():
        return text
    return pc.if_else(
        pa.array(negative), pc.binary_join_element_wise(_large("-"), text, _large("")), text
    )


_REWRITES = [_as_arrow, _padded, *[_shifted] * 2, _integral, _not_finite, *[_moved] * 6]


def _join(text: pa.Array, suffix: str) -> pa.Array:
    return pc.binary_join_element_wise(text, _large(suffix), _large(""))


def _large(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.large_string())


def _bool_json(value) -> str:
    return "true" if value else "false"


def _string_json(value) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _missing_json(value) -> str:
    return json.dumps(schema.missing_map(value or ""), ensure_ascii=False)
