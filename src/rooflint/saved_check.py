"""A saved JSON report's types, checked at the input edge (issue 33): one record spec per kind of
object the report holds, and one error naming the field of another type
(`devices[0].ceilings[2].value is a string, expected a number`), never a traceback inside the
reader. A null, or a field left out, reads as absent unless the spec requires it.

The launches are checked column by column on their table (`launch_columns`); the accounting
against the launches it counts (`accounting_adds_up`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from rooflint.core import analysis, provenance, schema, verdicts, windows
from rooflint.core.errors import InputError
from rooflint.parsers.kineto_fields import json_kind

FIX = "the report was edited or damaged; save it again with `rooflint report --format json`"


@dataclass(frozen=True)
class Kind:
    """A JSON type: its name in messages and the test of a parsed value."""

    name: str
    test: Callable[[object], bool]


def _number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


STR = Kind("a string", lambda v: type(v) is str)
INT = Kind("an integer", lambda v: type(v) is int)
NUM = Kind("a number", _number)
BOOL = Kind("a boolean", lambda v: type(v) is bool)
ANY_OBJECT = Kind("an object", lambda v: type(v) is dict)
POSITIVE = Kind("a positive number", lambda v: _number(v) and float(v) > 0)  # type: ignore[arg-type]
FRACTION = Kind("a number from 0 to 1", lambda v: _number(v) and 0 <= float(v) <= 1)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Array:
    of: Kind | Record


@dataclass(frozen=True)
class Record:
    """An object whose listed fields have these types; `required` ones must be there."""

    fields: dict
    required: tuple = ()


Spec = Kind | Array | Record

CEILING = Record(
    {"name": STR, "kind": STR, "value": POSITIVE, "unit": STR, "source": STR, "ridge_dram": NUM},
    required=("name", "value"),
)
DEVICE = Record(
    {
        **dict.fromkeys(("id", "name", "vendor", "arch", "evidence", "choose"), STR),
        "provisional": BOOL,
        "highest_roofs": BOOL,
        **dict.fromkeys(("candidates", "sources", "provenance"), Array(STR)),
        "ceilings": Array(CEILING),
    }
)
NAMED_TIME = Record({"name": STR, "time_s": NUM, "share": NUM})
OUTSIDE = Record(
    {"launches": INT, "time_s": NUM, "largest": Array(NAMED_TIME)}, required=("launches",)
)
ACCOUNTING = Record(
    {
        **dict.fromkeys(("launches_read", "analysed", "not_analysable", "inputs_read"), INT),
        "inputs_skipped": Array(Record({"path": STR, "reason": STR})),
        "repairs": Array(STR),
        "outside_window": OUTSIDE,
    }
)
TIMELINE_DEVICE = Record(
    {k: INT if k == "device" else NUM for k in windows.DEVICE_FIELDS},
    required=tuple(k for k in windows.DEVICE_FIELDS if k != "device"),
)
STEP = Record({"name": STR, "window_s": NUM, "busy_s": NUM, "launches": INT})
STEPS = Record(
    {
        "count": INT,
        **dict.fromkeys(("busy_mean_s", "busy_min_s", "busy_max_s"), NUM),
        "each": Array(STEP),
    },
    required=("count",),
)
WINDOW = Record(
    {
        "kind": STR,
        "steps": Array(STR),
        "annotation": STR,
        "start_s": NUM,
        "end_s": NUM,
        "traces": INT,
        "alike": BOOL,
    },
    required=("kind",),
)
TIMELINE = Record(
    {
        "window": WINDOW,
        "devices": Array(TIMELINE_DEVICE),
        "steps": STEPS,
        "outside_window": OUTSIDE,
    },
    required=("window", "devices", "steps"),
)
DOCUMENT = Record(
    {
        "tool": STR,
        "group_by": STR,
        "latency_threshold": FRACTION,
        "units": ANY_OBJECT,
        "summary": ANY_OBJECT,
        "device": DEVICE,
        "devices": Array(DEVICE),
        "accounting": ACCOUNTING,
        "notes": Array(STR),
        "timeline": TIMELINE,
        "kernels": Array(ANY_OBJECT),
        "per_source": Array(ANY_OBJECT),
        "sources": Array(STR),
        "launches": Array(ANY_OBJECT),
    }
)


def kind_of(value) -> str:
    """The JSON name of a parsed value's type (kineto_fields.json_kind), numbers and strings
    shown with their value: a saved report's fields are checked for range too."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return json_kind(value)


def _wrong(where: str, value, expected: str, path) -> InputError:
    return InputError(f"{where} is {kind_of(value)}, expected {expected}; {FIX}", path=str(path))


def check(value, spec: Spec, where: str, path) -> None:
    """Raise the InputError naming the first field of `value` (at `where`) unlike `spec`."""
    if isinstance(spec, Kind):
        if not spec.test(value):
            raise _wrong(where, value, spec.name, path)
    elif isinstance(spec, Array):
        if type(value) is not list:
            raise _wrong(where, value, "an array", path)
        for i, item in enumerate(value):
            check(item, spec.of, f"{where}[{i}]", path)
    else:
        _record(value, spec, where, path)


def _record(value, spec: Record, where: str, path) -> None:
    if type(value) is not dict:
        raise _wrong(where, value, "an object", path)
    for key in spec.required:
        if value.get(key) is None:
            raise InputError(f"{where}.{key} is missing; {FIX}", path=str(path))
    for key, field in spec.fields.items():
        if value.get(key) is not None:
            check(value[key], field, f"{where}.{key}" if where else key, path)


def document(doc: dict, path) -> None:
    """The report's own fields (a launch table already read is checked by launch_columns)."""
    head = {k: v for k, v in doc.items() if not isinstance(v, pd.DataFrame)}
    _record(head, DOCUMENT, "", path)


# The launch fields by type; any other field is not read.
_RESULT_TEXT = ["device_id", "limiter", "reason", "family"]
_TRACE_TEXT = ["op", "op_parent", "op_input_dims", "op_input_types", "module", "activity", "kind"]
_TEXT = [c for c in schema.STRING_COLUMNS if c != "missing"] + _RESULT_TEXT + _TRACE_TEXT
_TRACE_NUMBERS = ["bytes_model_min", "excess_traffic", "start_s", "launch_s", "comm_bytes"]
_FACT_TEXT = [c for c, d in schema.LAUNCH_FACT_DTYPES.items() if d == "category"]
_FACT_NUMBERS = [c for c in schema.LAUNCH_FACT_COLUMNS if c not in _FACT_TEXT]
_INTS = [*schema.INT_COLUMNS, "source_index", "stream", "device_index", "comm_ranks"]
LAUNCH_KINDS = {
    **dict.fromkeys(_TEXT + ["collective", *provenance.COLUMNS, *_FACT_TEXT], STR),
    **dict.fromkeys(
        schema.FLOAT_COLUMNS + analysis.RESULT_NUMBERS + _TRACE_NUMBERS + _FACT_NUMBERS, NUM
    ),
    **dict.fromkeys(_INTS, INT),
    **dict.fromkeys(["graph_replay", "roof_assumed"], BOOL),
    "verdict": Kind("a verdict rooflint writes", lambda v: v in verdicts.VERDICTS),
    "missing": Kind(
        "an object of strings",
        lambda v: type(v) is str or (type(v) is dict and all(type(r) is str for r in v.values())),
    ),
}
# What a column of one type gives: its numpy dtype kinds, pandas' inferred types of an object one.
_DTYPES = {"a number": "fi", "an integer": "i", "a boolean": "b"}
_INFERRED = {
    "a string": ("string", "empty"),
    "a number": ("integer", "floating", "mixed-integer-float", "empty"),
    "an integer": ("integer", "empty"),
    "a boolean": ("boolean", "empty"),
}


def launch_columns(frame: pd.DataFrame, first: int, path) -> None:
    """Each launch field of the table read from launch records (`first`: the index of its first
    launch in the report) has its type: a column of one numeric dtype passes at once, any other
    is checked cell by cell."""
    for column in frame.columns:
        kind = LAUNCH_KINDS.get(column)
        if kind is None:
            continue
        values = frame[column]
        if _all_of(values, kind):
            continue
        for i, value in enumerate(values.tolist()):
            if value is None or (type(value) is float and math.isnan(value)):
                continue
            if not kind.test(value):
                raise _wrong(f"launches[{first + i}].{column}", value, kind.name, path)


def _all_of(values: pd.Series, kind: Kind) -> bool:
    """True when the whole column is of `kind` by its dtype (no cell to look at)."""
    if values.dtype.kind in _DTYPES.get(kind.name, ""):
        return True
    if values.dtype.kind == "f" and kind is INT:  # integers with a null among them
        return bool((values.dropna() % 1 == 0).all())
    if isinstance(values.dtype, pd.StringDtype):
        return kind is STR or kind is LAUNCH_KINDS["verdict"] and _verdicts(values)
    if values.dtype != object:
        return bool(values.isna().all())
    if kind is LAUNCH_KINDS["verdict"]:
        return _verdicts(values)
    return pd.api.types.infer_dtype(values, skipna=True) in _INFERRED.get(kind.name, ())


def _verdicts(values: pd.Series) -> bool:
    return bool((values.isin(verdicts.VERDICTS) | values.isna()).all())


def accounting_adds_up(doc: dict, launches: pd.DataFrame, path) -> None:
    """The report's accounting counts the launches it lists: launches read = those listed + those
    outside the window, analysed + not analysable = those listed."""
    acc = doc.get("accounting") or {}
    listed = len(launches)
    outside = (acc.get("outside_window") or {}).get("launches") or 0
    not_ok = int((launches["verdict"] == verdicts.NOT_ANALYSABLE).sum()) if listed else 0
    expected = {
        "launches_read": listed + outside,
        "analysed": listed - not_ok,
        "not_analysable": not_ok,
    }
    for key, count in expected.items():
        if acc.get(key) is not None and acc[key] != count:
            raise InputError(
                f"accounting.{key} is {acc[key]} but the launches listed give {count} "
                f"({listed} listed, {outside} outside the window); the report was cut or "
                "edited: save it again with `rooflint report --format json`",
                path=str(path),
            )
