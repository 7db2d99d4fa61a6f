"""The versioned JSON report: every number with its unit, readable back by `rooflint diff`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core import analysis, report_schema, schema
from rooflint.core.formatting import plain
from rooflint.core.version import __version__
from rooflint.reporters import arrow_text, common

LAUNCH_FIELDS = (
    [c for c in schema.COLUMNS if c not in ("missing",)] + analysis.RESULT_COLUMNS + ["family"]
)


def launch_fields(launches: pd.DataFrame) -> list[str]:
    """LAUNCH_FIELDS, the trace columns when a PyTorch trace was among the inputs, "missing"."""
    return LAUNCH_FIELDS + [c for c in schema.OPTIONAL_COLUMNS if c in launches] + ["missing"]


CHUNK_ROWS = 10_000  # launches encoded at a time: bounds the writer's memory on any input size


def render(result, top: int | None = None, **_options) -> str:
    return b"".join(chunks(result, top)).decode("utf-8")


def chunks(result, top: int | None = None, **_options) -> Iterator[bytes | memoryview]:
    """The report as consecutive pieces of UTF-8, the launch list CHUNK_ROWS launches at a
    time (a folder's kept on disk a file's table at a time: Result.launch_pieces), so a caller
    can write a report of any size without holding it (or its text)."""
    sources = _sources(result)
    head = json.dumps(
        {**_head(result, top), "sources": [plain(v) for v in sources], "launches": _PLACEHOLDER},
        indent=report_schema.INDENT,
        ensure_ascii=False,
        allow_nan=False,
    )
    at = head.rindex(json.dumps(_PLACEHOLDER))  # "launches" is the last value of the document
    yield (head[:at] + "[").encode("utf-8")
    columns = [c for c in launch_fields(result.launches) if c != "source"]
    written = 0
    for launches in result.launch_pieces():
        codes = _codes(launches, sources)
        for start in range(0, len(launches), CHUNK_ROWS):
            yield b"\n" if written == 0 else b",\n"
            yield _lines(launches.iloc[start : start + CHUNK_ROWS][columns], codes[start:])
            written += 1
        del launches, codes  # not held while the next piece is read
    tail = head[at + len(json.dumps(_PLACEHOLDER)) :]
    close = "\n" + " " * report_schema.INDENT + "]" if written else "]"
    yield (close + tail + "\n").encode("utf-8")


def _lines(part: pd.DataFrame, codes: np.ndarray) -> memoryview | bytes:
    """One chunk's launch lines (its `codes` may run on past it)."""
    codes = codes[: len(part)]
    lines = launch_lines(part, codes)
    if lines is None:  # columns of a kind launch_lines does not encode: the general encoder
        lines = ",\n".join(
            _LINE_INDENT + json.dumps(r, ensure_ascii=False, allow_nan=False)
            for r in _launch_records(part, codes)
        ).encode("utf-8")
    return lines


def document(result, top: int | None = None) -> dict:
    """The report as a dict, built record by record: the reference that `chunks` must equal."""
    sources = _sources(result)
    columns = [c for c in launch_fields(result.launches) if c != "source"]
    records = [
        record
        for launches in result.launch_pieces()
        for record in _launch_records(launches[columns], _codes(launches, sources))
    ]
    return {**_head(result, top), "sources": [plain(v) for v in sources], "launches": records}


def _sources(result) -> list:
    """The distinct sources of the launches in order of first appearance."""
    if result.pieces is not None:
        return result.pieces.sources
    return pd.factorize(result.launches["source"], use_na_sentinel=False)[1].tolist()


def _codes(launches: pd.DataFrame, sources: list) -> np.ndarray:
    """Each launch's index into `sources`."""
    codes, uniques = pd.factorize(launches["source"], use_na_sentinel=False)
    known = np.array(sources + uniques.tolist(), dtype=object)
    where = pd.factorize(known, use_na_sentinel=False)[0]
    return where[len(sources) :][codes] if len(sources) else codes


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
    devices = [report_schema.device_entry(use) for use in result.devices]
    return {
        "format_version": report_schema.FORMAT_VERSION,
        "tool": f"rooflint {__version__}",
        "units": report_schema.UNITS,
        "group_by": result.group_by,
        "latency_threshold": result.latency_threshold,
        "device": devices[0] if devices else None,
        "devices": devices,
        "accounting": result.summary.accounting,
        "notes": sorted({f"{p.source}: {n}" for p in result.inputs for n in p.notes}),
        "warnings": common.warnings(result),
        "summary": result.summary.numbers(),
        "timeline": result.timeline,
        "kernels": [_kernel(result, row) for row in _records(kernels)],
        "per_source": _records(result.per_source()),
    }


def _kernel(result, row: dict) -> dict:
    row = dict(row)
    row["short_name"] = common.names.short_name(row.get("kernel") or row.get("group"))
    row["short_id"] = row["id"]
    series = pd.Series(row).fillna(float("nan"))
    row["explanation"] = common.kernel_sentence(result, series)
    row["advice"] = [
        {"rule": str(a.rule), "text": a.text, "evidence": a.evidence}
        for a in common.group_advice(result, series)
    ]
    return row


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


# The launch list is most of a large report, and json.dumps runs its pure-Python encoder over
# every value. launch_lines writes the same text column by column, exactly as json.dumps does:
# each distinct string (json.dumps) once; integers and floats by Arrow's cast, floats' layout
# then made repr's (arrow_text.floats); Arrow joins the pieces. tests/test_batch.py checks it
# against json.dumps.
_PLACEHOLDER = "\x00rooflint launches\x00"
_LINE_INDENT = report_schema.LAUNCH_INDENT


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
        *pieces, arrow_text.large(""), null_handling="replace", null_replacement=""
    )
    del pieces
    return arrow_text.back_to_back(records)[:-2]  # the last ",\n" dropped


def _encoded(column: pd.Series, is_missing: bool, key: str) -> pa.Array | None:
    """key + JSON text for every cell, null where the value is null (NA, NaN, infinities) or,
    for `missing`, an empty map: such fields are left out."""
    if len(column) > 1 and arrow_text.one_value(column):  # ceilings, the device, unmeasured
        one = _encoded(column.iloc[:1], is_missing, key)
        return None if one is None else one[0]  # a scalar: the same on every line
    dtype = column.dtype
    if dtype == np.float64 and not is_missing:
        return _keyed(arrow_text.floats(column.to_numpy()), key)
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


def _keyed(text: pa.Array, key: str) -> pa.Array:
    """key + text per cell, null where the text is null."""
    return pc.binary_join_element_wise(arrow_text.large(key), text, arrow_text.large(""))


def _bool_json(value) -> str:
    return "true" if value else "false"


def _string_json(value) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _missing_json(value) -> str:
    return json.dumps(schema.missing_map(value or ""), ensure_ascii=False)
