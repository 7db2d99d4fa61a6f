"""JSON inputs with fields of the wrong JSON type, or nested too deep (issue 33, items 17, 18 and
9b): one exit-2 line naming the field, never an AttributeError, TypeError or RecursionError.

Each bad trace is the bundled ROCm trace (fixtures/kineto/hta-mi250-minitoy.json.gz, 220 events:
event 0 is a cpu_op, 38 a user_annotation, 81 a cuda_runtime call, 125 the first kernel) with one
field changed. Each bad saved report is `rooflint report --format json` of a bundled input (the
A100 details page: 11 launches, 4 latency-bound and 7 compute-bound; the ROCm trace: 8 launches
in its window and 8 outside) with one field changed, given to `diff`."""

from __future__ import annotations

import copy
import gzip
import json

import pytest

from rooflint import saved
from tests.helpers import A100, FIXTURES, assert_refused, diffed, loaded, report

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


# --- saved reports given to diff ---------------------------------------------------------------


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, bytes]:
    """The saved reports, as `rooflint report --format json` writes them."""
    folder = tmp_path_factory.mktemp("saved")
    out = {}
    for name, source in {"a100": A100, "trace": TRACE}.items():
        (folder / name).mkdir()
        result, path = report(folder / name, source, extra=("--format", "json"))
        assert result.exit_code == 0, result.stderr
        out[name] = path.read_bytes()
    return out


def _put(*keys_and_value):
    *keys, value = keys_and_value

    def edit(d):
        for key in keys[:-1]:
            d = d[key]
        d[keys[-1]] = value

    return edit


SAVED_WRONG = {
    "devices-string": ("a100", _put("devices", "garbage"), "devices is the string 'garbage'"),
    "devices-numbers": ("a100", _put("devices", [1, 2]), "devices[0] is 1, expected an object"),
    "devices-object": ("a100", _put("devices", {"id": "x"}), "devices is an object"),
    "device-id-array": ("a100", _put("devices", 0, "id", [1]), "devices[0].id is an array"),
    "ceilings-numbers": (
        "a100",
        _put("devices", 0, "ceilings", [1]),
        "devices[0].ceilings[0] is 1",
    ),
    "ceiling-name-array": (
        "a100",
        _put("devices", 0, "ceilings", 0, "name", [1]),
        "devices[0].ceilings[0].name is an array, expected a string",
    ),
    "ceiling-value-negative": (
        "a100",
        _put("devices", 0, "ceilings", 0, "value", -5),
        "devices[0].ceilings[0].value is -5, expected a positive number",
    ),
    "accounting-array": ("a100", _put("accounting", []), "accounting is an array"),
    "skipped-numbers": (
        "a100",
        _put("accounting", "inputs_skipped", [1]),
        "accounting.inputs_skipped[0] is 1, expected an object",
    ),
    "notes-numbers": ("a100", _put("notes", [1]), "notes[0] is 1, expected a string"),
    "kernels-object": (
        "a100",
        _put("kernels", {"a": 1}),
        "kernels is an object, expected an array",
    ),
    "launches-object": ("a100", _put("launches", {"a": 1}), "launches is an object"),
    "sources-numbers": ("a100", _put("sources", [1]), "sources[0] is 1, expected a string"),
    "threshold-string": ("a100", _put("latency_threshold", "x"), "latency_threshold is the string"),
    "launch-kernel-array": ("a100", _put("launches", 3, "kernel", [1]), "launches[3].kernel is an"),
    "launch-duration-string": (
        "a100",
        _put("launches", 3, "duration_s", "abc"),
        "launches[3].duration_s is the string 'abc', expected a number",
    ),
    "launch-flops-boolean": (
        "a100",
        _put("launches", 3, "flops", True),
        "launches[3].flops is a bo",
    ),
    "launch-verdict-unknown": (
        "a100",
        _put("launches", 3, "verdict", "fast"),
        "launches[3].verdict is the string 'fast', expected a verdict rooflint writes",
    ),
    "launch-id-string": ("a100", _put("launches", 3, "launch_id", "x"), "launches[3].launch_id"),
    "launch-missing-array": ("a100", _put("launches", 3, "missing", [1]), "launches[3].missing is"),
    "steps-without-count": (
        "trace",
        _put("timeline", "steps", {"a": [1]}),
        "timeline.steps.count is missing",
    ),
    "window-array": ("trace", _put("timeline", "window", [1]), "timeline.window is an array"),
    "timeline-devices-numbers": (
        "trace",
        _put("timeline", "devices", [1]),
        "timeline.devices[0] is 1, expected an object",
    ),
    "launch-stream-string": ("trace", _put("launches", 0, "stream", "x"), "launches[0].stream is"),
    "launch-graph-string": (
        "trace",
        _put("launches", 0, "graph_replay", "x"),
        "launches[0].graph_replay is the string 'x', expected a boolean",
    ),
    "launches-do-not-add-up": (
        "a100",
        lambda d: d["launches"].append(copy.deepcopy(d["launches"][0])),
        "accounting.launches_read is 11 but the launches listed give 12",
    ),
    "analysed-do-not-add-up": (
        "a100",
        _put("launches", 6, "verdict", "not-analysable"),
        "accounting.analysed is 11 but the launches listed give 10",
    ),
    "outside-window-do-not-add-up": (
        "trace",
        _put("accounting", "launches_read", 9),
        "accounting.launches_read is 9 but the launches listed give 16 (8 listed, 8 outside",
    ),
}


@pytest.mark.parametrize("case", SAVED_WRONG)
def test_a_saved_report_field_of_the_wrong_type_is_one_line(tmp_path, reports, case):
    name, edit, expected = SAVED_WRONG[case]
    doc = json.loads(reports[name])
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc), encoding="utf-8")  # one line: read whole
    result, out = diffed(tmp_path, path, path)
    assert_refused(result, out, path, expected, "save it again")


def test_devices_null_reads_as_no_devices(tmp_path, reports):
    """null is absent: the report diffs (its launches keep the verdicts they were saved with)."""
    doc = json.loads(reports["a100"])
    doc["devices"] = doc["device"] = None
    path = tmp_path / "no-devices.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result, out = diffed(tmp_path, path, path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_text())["totals"]["launches_base"] == 11


def _as_written(data: bytes, line: int, edit) -> bytes:
    """The report in the writer's layout (one launch a line) with launch `line` edited (None:
    dropped)."""
    head, _, rest = data.partition(b'"launches": [\n')
    body, _, tail = rest.rpartition(b"\n ]\n}\n")
    lines = body.split(b",\n")
    record = json.loads(lines[line])
    changed = edit(record)
    if changed is None:
        del lines[line]
    else:
        lines[line] = b"  " + json.dumps(changed).encode()
    return head + b'"launches": [\n' + b",\n".join(lines) + b"\n ]\n}\n"


def test_a_launch_line_read_in_chunks_is_named_by_its_place(tmp_path, reports, monkeypatch):
    """Read a chunk every line or two, launch 9's field is still named launches[9]."""
    monkeypatch.setattr(saved, "CHUNK_BYTES", 300)
    path = tmp_path / "chunked.json"
    path.write_bytes(_as_written(reports["a100"], 9, lambda r: {**r, "bytes_dram": {"x": 1}}))
    assert saved._as_written(path.read_bytes()) is not None, "not in the writer's layout"
    result, out = diffed(tmp_path, path, path)
    assert_refused(result, out, path, "launches[9].bytes_dram is an object, expected a number")


def test_a_dropped_launch_line_does_not_add_up(tmp_path, reports):
    """A launch line lost (a bad merge, a hand edit): the accounting still says 11."""
    path = tmp_path / "dropped.json"
    path.write_bytes(_as_written(reports["a100"], 4, lambda r: None))
    result, out = diffed(tmp_path, path, A100)
    assert_refused(result, out, path, "accounting.launches_read is 11 but", "give 10")


@pytest.mark.parametrize("where", ["notes", "launch"])
def test_a_saved_report_nested_too_deep_is_one_line(tmp_path, reports, where):
    doc = json.loads(reports["a100"])
    if where == "notes":
        doc["notes"] = DEEP
    else:
        doc["launches"][0]["x"] = DEEP
    path = written(tmp_path, doc, "deep.json", depth=100_000)
    result, out = diffed(tmp_path, path, path)
    assert_refused(result, out, path, "nested over 1,000 levels deep", "save it again")


def test_a_cut_saved_report_is_called_cut(tmp_path, reports):
    """Half a report: said to be a cut rooflint report, not "neither a trace nor a profile"."""
    path = tmp_path / "cut.json"
    path.write_bytes(reports["a100"][: len(reports["a100"]) // 2])
    result, out = diffed(tmp_path, path, A100)
    assert_refused(result, out, path, "rooflint JSON report that is not valid JSON", "cut")
