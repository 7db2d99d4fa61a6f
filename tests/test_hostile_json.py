"""JSON inputs with fields of the wrong JSON type, or nested too deep (issue 33, item 17): one
exit-2 line naming the field, never an AttributeError, TypeError or RecursionError.

Each bad trace is the bundled ROCm trace (fixtures/kineto/hta-mi250-minitoy.json.gz, 220 events:
event 0 is a cpu_op, 38 a user_annotation, 81 a cuda_runtime call, 125 the first kernel) with one
field changed."""

from __future__ import annotations

import copy
import gzip
import json

import pytest

from tests.helpers import FIXTURES, assert_refused, loaded, report

TRACE = FIXTURES / "kineto" / "hta-mi250-minitoy.json.gz"
DEEP = "\x00deep\x00"  # replaced by that many levels of [ ] in the written text


@pytest.fixture(scope="module")
def trace() -> dict:
    with gzip.open(TRACE) as fh:
        return json.load(fh)


def first(doc: dict, cat: str) -> dict:
    return next(e for e in doc["traceEvents"] if e.get("cat") == cat)


def written(tmp_path, doc, name="bad.json", depth=0):
    text = json.dumps(doc).replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_event_numbers_in_the_docstring(trace):
    events = trace["traceEvents"]
    assert [events[i]["cat"] for i in (0, 38, 81, 125)] == [
        "cpu_op",
        "user_annotation",
        "cuda_runtime",
        "kernel",
    ]
    assert events.index(first(trace, "kernel")) == 125


def _insert(value):
    return lambda d: d["traceEvents"].insert(5, value)


def _set(cat, key, value, inside=None):
    def edit(d):
        event = first(d, cat)
        (event[inside] if inside else event)[key] = value

    return edit


def _device(key, value):
    return lambda d: d["deviceProperties"][0].__setitem__(key, value)


WRONG_TYPES = {
    "event-array": (_insert([1, 2]), "traceEvents[5] is an array, expected an object"),
    "event-number": (_insert(7), "traceEvents[5] is a number, expected an object"),
    "last-event-string": (
        lambda d: d["traceEvents"].append("x"),
        "traceEvents[220] is a string, expected an object",
    ),
    "kernel-args-array": (_set("kernel", "args", [1]), "traceEvents[125].args is an array"),
    "op-args-array": (_set("cpu_op", "args", [1]), "traceEvents[0].args is an array"),
    "runtime-args-string": (_set("cuda_runtime", "args", "x"), "traceEvents[81].args is a string"),
    "kernel-name-array": (_set("kernel", "name", ["a"]), "traceEvents[125].name is an array"),
    "annotation-name-array": (
        _set("user_annotation", "name", ["a"]),
        "traceEvents[38].name is an array, expected a string",
    ),
    "op-pid-object": (
        _set("cpu_op", "pid", {"a": 1}),
        "traceEvents[0].pid is an object, expected an integer or a string",
    ),
    "kernel-device-array": (
        _set("kernel", "device", [1], inside="args"),
        "traceEvents[125].args.device is an array",
    ),
    "kernel-grid-string": (
        _set("kernel", "grid", "1,1,1", inside="args"),
        "traceEvents[125].args.grid is a string",
    ),
    "kernel-grid-object-in-it": (
        _set("kernel", "grid", [{}, 1, 1], inside="args"),
        "traceEvents[125].args.grid[0] is an object, expected a number",
    ),
    "module-array": (
        _set("cpu_op", "Module Hierarchy", [1], inside="args"),
        "traceEvents[0].args.Module Hierarchy is an array",
    ),
    "numSms-array": (
        _device("numSms", [1]),
        "deviceProperties[0].numSms is an array, expected an integer",
    ),
    "numSms-huge": (_device("numSms", 10**30), "deviceProperties[0].numSms is a number"),
    "device-name-array": (_device("name", [1]), "deviceProperties[0].name is an array"),
    "device-memory-object": (_device("totalGlobalMem", {}), "deviceProperties[0].totalGlobalMem"),
    "properties-object": (
        lambda d: d.__setitem__("deviceProperties", {"a": 1}),
        "deviceProperties is an object, expected an array",
    ),
}


@pytest.mark.parametrize("case", WRONG_TYPES)
def test_a_field_of_the_wrong_type_is_one_line_naming_it(tmp_path, trace, case):
    edit, expected = WRONG_TYPES[case]
    doc = copy.deepcopy(trace)
    edit(doc)
    path = written(tmp_path, doc)
    result, out = report(tmp_path, path)
    assert_refused(result, out, path, expected, "export it again")


@pytest.mark.parametrize(
    "edit",
    [_set("kernel", "name", None), _set("gpu_user_annotation", "name", None)],
    ids=["kernel", "gpu-annotation"],
)
def test_a_null_reads_as_the_field_left_out(tmp_path, trace, edit):
    """As in the saved report (format 2 on): null is absent. 16 GPU activities (14 kernels, 2
    copies) are read whatever the first kernel's or a step's name."""
    doc = copy.deepcopy(trace)
    edit(doc)
    result, out = report(tmp_path, written(tmp_path, doc))
    assert loaded(result, out)["accounting"]["launches_read"] == 16


def test_dims_beyond_64_bits_are_read_as_orjson_reads_them(tmp_path, trace):
    """orjson reads an integer beyond 64 bits as a float; the end of the event list, read by
    json, keeps it an int, which orjson then could not write back (TypeError). Both are read as
    floats now: every launch is still read."""
    doc = copy.deepcopy(trace)
    for event in doc["traceEvents"]:
        dims = event.get("args", {}).get("Input Dims")
        if event.get("cat") == "cpu_op" and dims:
            event["args"]["Input Dims"] = [
                [10**30 for _ in d] if isinstance(d, list) else d for d in dims
            ]
    result, out = report(tmp_path, written(tmp_path, doc))
    assert loaded(result, out)["accounting"]["launches_read"] == 16


@pytest.mark.parametrize("where", ["header", "last-event"])
def test_deep_nesting_is_one_line(tmp_path, trace, where):
    """1,100 levels of arrays in the device properties (orjson stops at 1,024), or 100,000 in
    the last event (json's recursion limit): the trace is refused as damaged."""
    doc = copy.deepcopy(trace)
    if where == "header":
        doc["deviceProperties"][0]["x"], depth = DEEP, 1100
    else:
        doc["traceEvents"].append(DEEP)
        depth = 100_000
    path = written(tmp_path, doc, depth=depth)
    result, out = report(tmp_path, path)
    assert_refused(result, out, path, "nested over 1,000 levels deep", "export the trace again")


def test_deep_nesting_in_a_field_not_read_is_no_error(tmp_path, trace):
    """1,000 levels in an argument rooflint does not read: the trace reads as before."""
    doc = copy.deepcopy(trace)
    first(doc, "kernel")["args"]["x"] = DEEP
    result, out = report(tmp_path, written(tmp_path, doc, depth=1000))
    assert loaded(result, out)["accounting"]["launches_read"] == 16


def test_a_byte_order_mark_before_a_trace(tmp_path, trace):
    """A UTF-8 BOM (Windows editors write one) before the object: the trace reads, not
    "truncated"."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(trace).encode())
    result, out = report(tmp_path, path)
    assert loaded(result, out)["accounting"]["launches_read"] == 16
