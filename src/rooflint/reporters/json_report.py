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
# every value. launch_lines writes the same text column by column: each distinct string, integer
# or float is encoded once, exactly as json.dumps encodes it (json.dumps for strings, repr for
# floats and ints), and Arrow joins the pieces. tests/test_batch.py checks it against json.dumps.
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
    dtype = column.dtype
    if dtype == np.float64 and not is_missing:
        return _keyed(_floats(column.to_numpy()), key)
    if is_missing:
        encode = _missing_json
    elif isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
        encode = _string_json
    elif isinstance(dtype, pd.Int64Dtype) or dtype == np.int64:
        encode = repr
    elif isinstance(dtype, pd.BooleanDtype) or dtype == np.bool_:
        encode = _bool_json
    else:
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)  # each distinct value once
    texts = [encode(plain(v)) for v in uniques.tolist()]
    texts = pa.array([t if t not in ("null", "{}") else None for t in texts] + [None])
    return _keyed(texts.take(pa.array(np.where(codes < 0, len(texts) - 1, codes))), key)


def _keyed(text: pa.Array, key: str) -> pa.Array:
    """key + text per cell, null where the text is null."""
    return pc.binary_join_element_wise(_large(key), text.cast(pa.large_string()), _large(""))


def _floats(numbers: np.ndarray) -> pa.Array:
    """repr of each float (what json.dumps writes), null where plain gives None (NaN,
    infinities). Arrow writes the same shortest round-trip digits, laid out differently in
    places; those are rewritten (and the few left, if any, given repr itself)."""
    finite = np.isfinite(numbers)
    arrow = pc.cast(pa.array(numbers, mask=~finite), pa.large_string())
    exponent = pc.fill_null(pc.match_substring(arrow, "e"), False).to_numpy(zero_copy_only=False)
    size = np.abs(np.where(finite, numbers, 0))
    integral = finite & (size < 1e16) & (np.floor(numbers) == numbers)  # "100" -> "100.0"
    small = ~integral & (size < 1e-4)  # repr writes an exponent; Arrow does only below 1e-6
    placed = ~integral & ~small & (size < 1e16)  # repr writes these positionally
    forms = (
        (integral, lambda _: _join(_integers(numbers[integral]), ".0")),  # -0.0 too
        (small & exponent, _padded),  # "1.5e-7" -> "1.5e-07"
        (small & ~exponent, _shifted),  # "0.000012" -> "1.2e-05"
        (placed & exponent, _positional),  # "2.96673352e+13" -> "29667335200000.5"
    )
    text = arrow
    for mask, rewrite in forms:
        if mask.any():
            text = pc.replace_with_mask(text, pa.array(mask), rewrite(arrow.filter(mask)))
    rest = pc.fill_null(pc.match_substring(text, "e+"), False).to_numpy(zero_copy_only=False)
    rest &= placed  # an exponent _positional did not move (none is known): repr itself
    if rest.any():
        exact = list(map(float.__repr__, numbers[rest].tolist()))
        text = pc.replace_with_mask(text, pa.array(rest), pa.array(exact, pa.large_string()))
    return text


def _integers(values: np.ndarray) -> pa.Array:
    """Integral floats below 1e16 as integers ("-0" for -0.0)."""
    text = pc.cast(pa.array(values.astype(np.int64)), pa.large_string())
    negative_zero = (values == 0) & np.signbit(values)
    if negative_zero.any():
        text = pc.if_else(pa.array(negative_zero), _large("-0"), text)
    return text


def _join(text: pa.Array, suffix: str) -> pa.Array:
    return pc.binary_join_element_wise(text, _large(suffix), _large(""))


def _padded(text: pa.Array) -> pa.Array:
    return pc.replace_substring_regex(text, r"e-([0-9])$", r"e-0\1")


def _shifted(text: pa.Array) -> pa.Array:
    """0.0000d... (1e-6 <= x < 1e-4) as repr writes it: d.de-05 or d.de-06."""
    for zeros, exp in (("00000", "06"), ("0000", "05")):
        head = rf"^(-?)0\.{zeros}([1-9])"
        text = pc.replace_substring_regex(text, head + r"([0-9]+)$", rf"\1\2.\3e-{exp}")
        text = pc.replace_substring_regex(text, head + "$", rf"\1\2e-{exp}")
    return text


def _positional(text: pa.Array) -> pa.Array:
    """d.ddddde+N of a value that is not an integer (so more than N digits follow the point)
    as repr writes it below 1e16: the point moved N places (one pass per exponent present)."""
    exponents = pc.extract_regex(text, r"e\+(?P<n>[0-9]+)$").field("n")
    exponents = pc.cast(exponents, pa.int64()).to_numpy()
    for n in np.unique(exponents):
        mask = exponents == n
        pattern = rf"^(-?[0-9])\.([0-9]{{{n}}})([0-9]+)e\+0?{n}$"
        moved = pc.replace_substring_regex(text.filter(mask), pattern, r"\1\2.\3")
        text = pc.replace_with_mask(text, pa.array(mask), moved)
    return text


def _large(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.large_string())


def _bool_json(value) -> str:
    return "true" if value else "false"


def _string_json(value) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _missing_json(value) -> str:
    return json.dumps(schema.missing_map(value or ""), ensure_ascii=False)
