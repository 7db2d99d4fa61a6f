"""parsers/kineto_bulk.py: events decoded into msgspec Structs gather into exactly the columns
the dict path (orjson + TraceEvents.take) gathers, on every real trace, and a batch whose
fields the Structs do not fit goes the dict path, errors and all."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import orjson
import pytest

from rooflint.core.errors import InputError
from rooflint.parsers import kineto_bulk
from rooflint.parsers.kineto_events import TraceEvents
from rooflint.parsers.kineto_stream import TraceStream
from tests.helpers import FIXTURES, shared

CHUNK = 64 << 10  # small batches, so that even a small trace is decoded batch by batch
TRACES = sorted((FIXTURES / "kineto").glob("*.json*"))
# ../shared/fixtures/kineto (HTA's and TraceLens's real traces, see its README), named here so that
# a clean clone collects the same tests (each skips where the folder is absent)
SHARED_TRACES = [
    "hta-2rank-sampled-rank-0.json.gz", "hta-2rank-sampled-rank-1.json.gz",
    "hta-a100-alexnet.json.gz", "hta-a100-cupti-counters.json.gz", "hta-a100-nccl-rank0.json.gz",
    "hta-a100-triton-example.json.gz", "hta-mi250-minitoy.json.gz",
    "tracelens-b200-eager_trace.json.gz", "tracelens-h100-bert-small-uncased.json.gz",
    "tracelens-h100-nsfw_image_detection.json.gz", "tracelens-h100-timesformer.json.gz",
    "tracelens-mi300-bert-small-uncased.json.gz", "tracelens-mi300x-xdit-sd35-triton.json.gz",
    "tracelens-torch_compile_triton-trace.json.gz", "tracelens-vllm-decode-graph-capture.json.gz",
    "tracelens-vllm-decode-graph-replay.json.gz",
]  # fmt: skip


def dict_path(path, chunk: int = CHUNK) -> TraceEvents:
    events = TraceEvents(source=str(path))
    for batch in TraceStream(path, chunk_bytes=chunk).batches():
        events.take(batch)
    return events


def bulk_path(path, chunk: int = CHUNK, kinds: dict | None = None) -> tuple[TraceEvents, int]:
    """The events by kineto_bulk, and how many batches it decoded into Structs; `kinds` counts
    the batches of each kind (strict, loose, dicts)."""
    events, structs, kinds = TraceEvents(source=str(path)), 0, {} if kinds is None else kinds
    for batch in TraceStream(path, chunk_bytes=chunk, parse=kineto_bulk.parse).batches():
        decoded = isinstance(batch, kineto_bulk.Structs)
        structs += decoded
        kind = "dicts" if not decoded else "loose" if batch.loose else "strict"
        kinds[kind] = kinds.get(kind, 0) + 1
        kineto_bulk.take(events, batch)
    return events, structs


def assert_same(old: TraceEvents, new: TraceEvents) -> None:
    assert (old.seen, old.comms) == (new.seen, new.comms)
    for kind in ("gpu", "ranges", "ops", "spans", "runtime", "steps"):
        a, b = getattr(old, kind), getattr(new, kind)
        assert a.columns.keys() == b.columns.keys(), kind
        for name in a.columns:
            x, y = a.get(name), b.get(name)
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), (kind, name)
            elif name == "arguments":  # packed JSON: the same values, spacing aside
                assert [orjson.loads(v) for v in x] == [orjson.loads(v) for v in y], kind
            else:
                assert _plain(x) == _plain(y), (kind, name)


def _plain(values: list) -> list:
    """NaN equal to NaN (a range's ts), everything else as it is."""
    return ["nan" if isinstance(v, float) and math.isnan(v) else v for v in values]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_bundled_traces_gather_the_same_events(path):
    """Every bundled trace (fixtures/kineto, real torch.profiler exports): the same columns as
    the dict path, and at least one batch decoded into Structs (the bulk path taken)."""
    new, structs = bulk_path(path)
    assert_same(dict_path(path), new)
    assert structs > 0


@pytest.mark.e2e
@pytest.mark.parametrize("name", SHARED_TRACES)
def test_shared_traces_gather_the_same_events(name):
    """Every trace under ../shared/fixtures/kineto (HTA's and TraceLens's real traces, see its
    README): the same columns as the dict path. The CUPTI counter-range trace goes the dict path
    (its ranges' args are kept whole); the others decode into Structs."""
    path = shared(f"kineto/{name}")
    new, structs = bulk_path(path)
    assert_same(dict_path(path), new)
    assert structs > 0 or "cupti-counters" in path.name, path.name


def test_every_shared_trace_is_listed():
    """A trace added to ../shared/fixtures/kineto is compared too."""
    found = {p.name for p in shared("kineto").glob("*.json*")}
    assert found == set(SHARED_TRACES)


def write_trace(tmp_path, events: list, name: str = "odd.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events, "deviceProperties": []}))
    return path


KERNEL = {
    "ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2,
    "args": {"correlation": 3, "External id": 2, "device": 0, "stream": 7,
             "grid": [4, 1, 1], "block": [128, 1, 1]},
}  # fmt: skip
OP = {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 9,
    "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"],
             "Concrete Inputs": ["", ""]},
}  # fmt: skip
CALL = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
        "ts": 2, "dur": 1, "args": {"correlation": 3, "External id": 2}}  # fmt: skip


def odd(tmp_path, events: list, expected: str) -> None:
    """Many copies of `events`, in several batches: both paths agree, and the batches were
    mostly of the `expected` kind (strict, loose, dicts)."""
    path = write_trace(tmp_path, events * 400)
    kinds: dict = {}
    new, _ = bulk_path(path, chunk=4096, kinds=kinds)
    assert_same(dict_path(path, chunk=4096), new)
    assert max(kinds, key=kinds.__getitem__) == expected, kinds


def test_string_ids_missing_fields_and_lists_in_args_fit_the_structs(tmp_path):
    """Minimal synthetic supplements of what real traces hold: a thread id as a string
    (torch.profiler's "Spans" rows), a missing dur, a null name, args with lists (Concrete
    Inputs, a collective's Input Dims) and keys rooflint does not read."""
    events = [
        {**OP, "tid": "Spans", "args": {**OP["args"], "Sequence number": [1, 2]}},
        {k: v for k, v in KERNEL.items() if k != "dur"},
        {**CALL, "name": None},
        {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1,
         "tid": "1", "ts": 0.5, "dur": 20, "args": {"Python id": 1}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100},
        {"ph": "s", "cat": "ac2g", "id": 3, "pid": 1, "tid": 1, "ts": 2},
        {**OP, "name": "record_param_comms",
         "args": {"Input Dims": [[1024]], "Input type": ["float"], "External id": 4}},
    ]  # fmt: skip
    odd(tmp_path, events, "strict")


def test_fields_of_other_types_go_the_loose_structs(tmp_path):
    """A timestamp written as a string, a boolean duration, an id as a float, a string stream
    and bytes (as ROCm writes them), a grid as text on an event rooflint does not read the grid
    of: the strict Structs refuse the batch, the loose ones read it as the dict path does (NaN,
    NO_ID)."""
    events = [
        {**KERNEL, "ts": "10.5", "args": {**KERNEL["args"], "stream": "7", "bytes": "64"}},
        {**OP, "dur": True, "args": {**OP["args"], "grid": "1,1,1"}},
        {**CALL, "args": {"correlation": 3.0}},
    ]
    odd(tmp_path, events, "loose")


def test_args_that_are_not_objects_go_the_dict_path(tmp_path):
    """args as a list on an event rooflint skips: neither Struct fits, orjson's dicts do."""
    events = [OP, CALL, KERNEL, {"ph": "i", "cat": "marker", "name": "m", "args": [1]}]
    odd(tmp_path, events, "dicts")


def test_a_wrong_field_is_the_dict_paths_error(tmp_path):
    """A kernel's grid given as a string, an operator's thread id as a float: the error names the
    event and field, as the dict path's does."""
    for bad, message in (
        ({**KERNEL, "args": {**KERNEL["args"], "grid": "4,1,1"}}, r"\.args\.grid is a string"),
        ({**OP, "tid": 1.5}, r"\.tid is a number, expected an integer or a string"),
    ):
        path = write_trace(tmp_path, [KERNEL] * 300 + [bad])
        with pytest.raises(InputError, match=r"traceEvents\[300\]" + message):
            bulk_path(path, chunk=4096)


def test_gzip_traces_decode_the_same(tmp_path):
    """A gzip copy of a synthetic trace: the same columns through both paths."""
    plain = write_trace(tmp_path, [OP, CALL, KERNEL] * 500)
    packed = tmp_path / "odd.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    new, structs = bulk_path(packed, chunk=4096)
    assert_same(dict_path(packed, chunk=4096), new)
    assert structs > 0
