"""The versioned JSON report: every number with its unit, readable back by `rooflint diff`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rooflint.core import analysis, schema
from rooflint.core.formatting import plain
from rooflint.core.result import summary_numbers
from rooflint.core.version import __version__
from rooflint.reporters import common

LAUNCH_FIELDS = [c for c in schema.COLUMNS if c not in ("missing",)] + analysis.RESULT_COLUMNS + ["family"]


def launch_fields(launches: pd.DataFrame) -> list[str]:
    """LAUNCH_FIELDS, the trace columns when a PyTorch trace was among the inputs, "missing"."""
    return LAUNCH_FIELDS + [c for c in schema.TRACE_COLUMNS if c in launches] + ["missing"]


def render(result, top: int | None = None, **_options) -> str:
    head = json.dumps({**_head(result, top), "launches": _PLACEHOLDER}, indent=1, ensure_ascii=False,
                      allow_nan=False)
    at = head.rindex(json.dumps(_PLACEHOLDER))  # "launches" is the last value of the document
    text = launches_json(result.launches[launch_fields(result.launches)], head[:at],
                         head[at + len(json.dumps(_PLACEHOLDER)):] + "\n")
    if text is None:  # columns of a kind launches_json does not write: the general encoder
        return json.dumps(document(result, top), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    return text


def document(result, top: int | None = None) -> dict:
    return {**_head(result, top),
            "launches": [_launch(row) for row in _records(result.launches[launch_fields(result.launches)])]}


def _head(result, top: int | None) -> dict:
    """Every key of the document but "launches" (which comes last), in document order."""
    kernels = result.kernels if top is None else result.kernels.head(top)
    devices = [_device(use) for use in result.devices]
    return {
        "format_version": schema.FORMAT_VERSION,
        "tool": f"rooflint {__version__}",
        "units": {**schema.UNITS, **analysis.RESULT_UNITS, "time_share": "fraction", "headroom_share": "fraction"},
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
        return {"id": None, "name": None, "sources": use.sources, "provenance": use.provenance, "ceilings": []}
    ceilings = [{"name": k, "kind": "compute", "value": c.value, "unit": "op/s", "source": c.source,
                 "ridge_dram": common.ridge_dram(device, k)} for k, c in device.compute.items()]
    ceilings += [{"name": k, "kind": "memory", "value": c.value, "unit": "byte/s", "source": c.source}
                 for k, c in device.memory.items()]
    return {"id": device.id, "name": device.name, "vendor": device.vendor, "arch": device.arch,
            "evidence": getattr(use, "evidence", ""), "provisional": getattr(use, "provisional", False),
            "candidates": list(getattr(use, "candidates", [])), "choose": getattr(use, "advice", ""),
            "sources": use.sources, "provenance": use.provenance, "ceilings": ceilings}


def _kernel(result, row: dict) -> dict:
    row = dict(row)
    row["short_name"] = common.names.short_name(row.get("kernel") or row.get("group"))
    row["short_id"] = row["id"]
    row["explanation"] = common.kernel_sentence(result, pd.Series(row).fillna(float("nan")))
    return row


def _launch(row: dict) -> dict:
    row["missing"] = schema.missing_map(row.get("missing") or "")
    return row


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


# The launch list is most of a large report (200,000 launches: about 400 MB of JSON), and
# json.dumps with indent runs its pure-Python encoder over ~11 M values. launches_json writes the
# same text column by column: each distinct string, integer or float is encoded once, exactly as
# json.dumps encodes it (json.dumps for strings, repr for floats and ints), and Arrow joins the
# pieces. tests/test_batch.py checks it against json.dumps byte for byte.
_PLACEHOLDER = "\x00rooflint launches\x00"
_KEY_INDENT, _ITEM_INDENT, _LIST_INDENT = "   ", "  ", " "


def launches_json(frame: pd.DataFrame, before: str = "", after: str = "") -> str | None:
    """`before`, the "launches" value as json.dumps(indent=1) writes it in the document, then
    `after`; None when a column's dtype is not one it encodes exactly (use json.dumps then).

    Large reports are mostly this text, so it is built with as few big buffers as possible: each
    cell's piece carries its key (and the record's braces), every record ends in the separator,
    and the records' joined bytes are decoded once."""
    if frame.columns.has_duplicates or frame.columns[-1] != "missing":
        return None
    if frame.empty:
        return before + "[]" + after
    pieces, last = [], len(frame.columns) - 1
    for i, name in enumerate(frame.columns):
        key = f"{_ITEM_INDENT}{{\n" if i == 0 else ""
        key += f"{_KEY_INDENT}{json.dumps(name, ensure_ascii=False)}: "
        values = _encoded(frame[name], name == "missing", key, f"\n{_ITEM_INDENT}}},\n" if i == last else "")
        if values is None:
            return None
        pieces.append(values)
    records = pc.binary_join_element_wise(*pieces, pa.scalar(",\n", pa.large_string()))
    del pieces
    offsets, data = records.buffers()[1:3]
    end = np.frombuffer(offsets, dtype=np.int64, count=len(records) + 1, offset=records.offset * 8)
    body = memoryview(data)[int(end[0]):int(end[-1]) - 2]  # every record but the last ends in ",\n"
    return "".join((before, "[\n", str(body, "utf-8"), f"\n{_LIST_INDENT}]", after))


def _encoded(column: pd.Series, is_missing: bool, key: str = "", end: str = "") -> pa.Array | None:
    """key + JSON text + end for every cell (null for NA, NaN and infinities), as large_string."""
    dtype = column.dtype
    if is_missing:
        encode = _missing_json
    elif isinstance(dtype, pd.StringDtype):
        encode = _string_json
    elif dtype == np.float64:
        numbers = column.to_numpy()
        if np.signbit(numbers[numbers == 0]).any():  # factorize would merge -0.0 with 0.0
            return _texts(_floats(numbers), np.arange(len(numbers)), "null", key, end)
        codes, uniques = pd.factorize(numbers, use_na_sentinel=True)
        return _texts(_floats(uniques), codes, "null", key, end)
    elif isinstance(dtype, pd.Int64Dtype) or dtype == np.int64:
        encode = repr
    elif isinstance(dtype, pd.BooleanDtype) or dtype == np.bool_:
        encode = _bool_json
    else:
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return _texts([encode(plain(v)) for v in uniques.tolist()], codes, "{}" if is_missing else "null", key, end)


def _floats(numbers: np.ndarray) -> list[str]:
    """repr of each float (what json.dumps writes), "null" where plain gives None."""
    finite = np.isfinite(numbers)
    if finite.all():
        return list(map(float.__repr__, numbers.tolist()))
    out = np.full(len(numbers), "null", dtype=object)
    out[finite] = list(map(float.__repr__, numbers[finite].tolist()))
    return out.tolist()


def _texts(text: list[str], codes: np.ndarray, missing: str, key: str, end: str) -> pa.Array:
    """key + text[code] + end per row; `missing` where the code is -1 (NA)."""
    table = pa.array([key + t + end for t in text] + [key + missing + end], pa.large_string())
    return table.take(pa.array(np.where(codes < 0, len(text), codes)))


def _bool_json(value) -> str:
    return "true" if value else "false"


def _string_json(value) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _missing_json(value) -> str:
    pairs = schema.missing_map(value or "")
    if not pairs:
        return "{}"
    inner = _KEY_INDENT + " "
    lines = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in pairs.items()]
    return "{\n" + ",\n".join(lines) + f"\n{_KEY_INDENT}}}"
