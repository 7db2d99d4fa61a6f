"""The events of a PyTorch profiler trace that rooflint needs, gathered column by column."""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field

import numpy as np
from orjson import dumps, loads

from . import kineto_fields as fields

NAN = math.nan

GPU_ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME = ("cuda_runtime", "cuda_driver")
COUNTER_RANGE = "cuda_profiler_range"
MODULE_PREFIX = "nn.Module: "
STEP_PREFIX = "ProfilerStep#"
GPU_ANNOTATION = "gpu_user_annotation"


class Columns:
    """One kind of event, column by column: numbers in typed arrays (8 bytes each, no Python
    object), text through one shared table of strings, so that what is kept of a parsed batch
    is compact and does not pin the batch's freed memory (pymalloc releases an arena only when
    every object in it is gone). `get(field)` gives a float64/int64 array or a list; a number
    column's array is a view of it, so rows are added before `get`, never while a view is held
    (array.array then refuses to grow, with BufferError)."""

    def __init__(self, floats: tuple = (), ints: tuple = (), objects: tuple = ()):
        self.columns: dict = {}
        for name in floats:
            self.columns[name] = array("d")
        for name in ints:
            self.columns[name] = array("q")
        for name in objects:
            self.columns[name] = []

    def get(self, key: str):
        column = self.columns[key]
        if isinstance(column, array):
            return (
                np.frombuffer(column, dtype=np.float64 if column.typecode == "d" else np.int64)
                if len(column)
                else np.zeros(0, dtype=np.float64 if column.typecode == "d" else np.int64)
            )
        return column

    def replace(self, **columns) -> None:
        """Use these columns instead (same length for all)."""
        self.columns = dict(columns)

    def extend(self, other: Columns) -> None:
        """Append `other`'s rows (the same columns); no view of a column may be held."""
        for name, column in self.columns.items():
            column.extend(other.columns[name])

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))


NO_ID = -1  # an absent correlation, External id or stream in an int column
COMM_OP = "record_param_comms"  # the operator PyTorch records around each collective
COMM_SIZE = "In msg nelems"
# record_param_comms dtype names -> bytes per element
COMM_DTYPES = {
    "Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2,
    "Char": 1, "Byte": 1, "Bool": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1,
    "Float8_e4m3fnuz": 1, "Float8_e5m2fnuz": 1,
}  # fmt: skip
# record_param_comms of older PyTorch (HTA's 2023 traces) has no message fields: the tensor's shape
# and C++ type are its first Input Dims and Input type (a TensorList has no shape: no size).
LEGACY_TYPES = {
    "unsigned char": 1, "signed char": 1, "bool": 1, "short": 2, "c10::Half": 2,
    "c10::BFloat16": 2, "int": 4, "float": 4, "long": 8, "long int": 8, "double": 8,
}  # fmt: skip


@dataclass(frozen=True)
class Comm:
    """A collective's arguments as record_param_comms gives them (on the kernel in recent
    PyTorch, else on the operator): its name, message size in bytes (the larger of input and
    output, as nccl-tests count it; None for a dtype not listed) and the group size."""

    collective: str | None
    bytes: float | None
    ranks: int | None

    @classmethod
    def of(cls, a: dict) -> Comm:
        if COMM_SIZE not in a:
            return cls.legacy(a)
        size = COMM_DTYPES.get(str(a.get("dtype")))
        counts = [_float(a.get(k)) for k in (COMM_SIZE, "Out msg nelems")]
        counts = [x for x in counts if x == x]
        group = a.get("Group size")
        return cls(
            str(a["Collective name"]) if a.get("Collective name") else None,
            max(counts) * size if size and counts else None,
            group if isinstance(group, int) and group > 0 else None,
        )

    @classmethod
    def legacy(cls, a: dict) -> Comm:
        """The message size from the first input's shape and type; no name, no group size."""
        dims, types = a.get("Input Dims") or [[]], a.get("Input type") or [""]
        shape, size = dims[0], LEGACY_TYPES.get(str(types[0]))
        known = isinstance(shape, list) and shape and all(isinstance(d, int) for d in shape)
        return cls(None, float(np.prod(shape)) * size if known and size else None, None)


@dataclass
class TraceEvents:
    """GPU activities, counter ranges, CPU operators, annotations, modules and runtime calls."""

    gpu: Columns = field(
        default_factory=lambda: Columns(
            ("ts", "dur", "bytes", "blocks_per_sm"),
            ("correlation", "external", "stream"),
            ("name", "cat", "grid", "block", "device", "comm"),
        )
    )
    ranges: Columns = field(default_factory=lambda: Columns(objects=("name", "ts", "dur", "args")))
    ops: Columns = field(
        default_factory=lambda: Columns(
            ("ts", "dur"), ("external",), ("name", "pid", "tid", "arguments", "module")
        )
    )
    spans: Columns = field(
        default_factory=lambda: Columns(  # user_annotation (kind 0), nn.Module (1)
            ("ts", "dur"), ("kind",), ("name", "pid", "tid")
        )
    )
    runtime: Columns = field(  # "kernel": the kernel a launch call names (HIP/ROCm traces)
        default_factory=lambda: Columns(
            ("ts",), ("correlation", "external"), ("name", "pid", "tid", "kernel")
        )
    )
    steps: Columns = field(  # ProfilerStep#N annotations: host-side (0) or device-side (1)
        default_factory=lambda: Columns(("ts", "dur"), ("gpu",), ("name",))
    )
    strings: dict = field(default_factory=dict)
    comms: dict = field(default_factory=dict)  # op index -> Comm of a record_param_comms op
    source: str = ""  # the trace's path, for errors
    seen: int = 0  # events taken so far: the index in traceEvents of the next batch's first

    def take(self, batch: list) -> None:
        """Keep what matters from one batch of events (the batch itself is then dropped). Each
        field read is checked for its JSON type as it is read (kineto_fields)."""
        src = self.source
        for at, value in enumerate(batch, self.seen):
            event = fields.event(value, at, src)
            cat = event.get("cat")
            if cat == "python_function":
                name = fields.text(event, "name", at, src)
                if name.startswith(MODULE_PREFIX):
                    self._span(event, at, 1, name[len(MODULE_PREFIX) :])
            elif cat == "cpu_op":
                self._op(event, at, fields.obj(event, "args", at, src))
            elif cat in RUNTIME:
                self._call(event, at, fields.obj(event, "args", at, src))
            elif cat in GPU_ACTIVITIES:
                self._gpu(event, at, cat, fields.obj(event, "args", at, src))
            elif cat == "user_annotation":
                name = fields.text(event, "name", at, src)
                self._span(event, at, 0, name)
                if name.startswith(STEP_PREFIX):
                    self._step(event, name, 0)
            elif cat == GPU_ANNOTATION:
                name = fields.text(event, "name", at, src)
                if name.startswith(STEP_PREFIX):
                    self._step(event, name, 1)
            elif cat == COUNTER_RANGE:
                self._range(event, at)
        self.seen += len(batch)

    def _gpu(self, event: dict, at: int, cat: str, a: dict) -> None:
        c, src, shared = self.gpu.columns, self.source, self.strings.setdefault
        name = fields.text(event, "name", at, src)
        c["name"].append(shared(name, name))
        c["cat"].append(shared(cat, cat))
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["bytes"].append(_float(a.get("bytes")))
        c["blocks_per_sm"].append(_float(a.get("blocks per SM")))  # CUPTI: grid blocks / SMs
        c["correlation"].append(_int(a.get("correlation")))
        c["external"].append(_int(a.get("External id")))
        c["stream"].append(_int(a.get("stream")))
        grid = fields.dim3(a, "grid", at, src, ".args")
        block = fields.dim3(a, "block", at, src, ".args")
        c["grid"].append(shared(grid, grid))
        c["block"].append(shared(block, block))
        device = fields.integer(a, "device", at, src, ".args")
        c["device"].append(fields.ident(event, "pid", at, src) if device is None else device)
        c["comm"].append(Comm.of(a) if COMM_SIZE in a else None)

    def _op(self, event: dict, at: int, a: dict) -> None:
        c, src, shared = self.ops.columns, self.source, self.strings.setdefault
        name = fields.text(event, "name", at, src)
        packed = _pack(a)
        pid, tid = fields.ident(event, "pid", at, src), fields.ident(event, "tid", at, src)
        module = fields.text(a, "Module Hierarchy", at, src, ".args")
        c["name"].append(shared(name, name))
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["arguments"].append(shared(packed, packed))
        c["module"].append(shared(module, module) if module else None)
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["external"].append(_int(a.get("External id")))
        if name == COMM_OP:
            self.comms[len(c["name"]) - 1] = Comm.of(a)

    def _span(self, event: dict, at: int, kind: int, name: str) -> None:
        c, src, shared = self.spans.columns, self.source, self.strings.setdefault
        pid, tid = fields.ident(event, "pid", at, src), fields.ident(event, "tid", at, src)
        c["kind"].append(kind)
        c["name"].append(shared(name, name))
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))

    def _step(self, event: dict, name: str, gpu: int) -> None:
        c = self.steps.columns
        c["name"].append(name)
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["gpu"].append(gpu)

    def _call(self, event: dict, at: int, a: dict) -> None:
        c, src, shared = self.runtime.columns, self.source, self.strings.setdefault
        name = fields.text(event, "name", at, src)
        pid, tid = fields.ident(event, "pid", at, src), fields.ident(event, "tid", at, src)
        c["name"].append(shared(name, name))
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["ts"].append(_float(event.get("ts")))
        c["correlation"].append(_int(a.get("correlation")))
        c["external"].append(_int(a.get("External id")))
        kernel = a.get("kernel")
        c["kernel"].append(shared(kernel, kernel) if isinstance(kernel, str) else None)

    def _range(self, event: dict, at: int) -> None:
        c, src = self.ranges.columns, self.source
        c["name"].append(fields.text(event, "name", at, src))
        c["ts"].append(event.get("ts"))
        c["dur"].append(event.get("dur"))
        c["args"].append(fields.obj(event, "args", at, src))


def _float(value) -> float:
    return value if isinstance(value, float | int) and not isinstance(value, bool) else NAN


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else NO_ID


def _pack(a: dict) -> bytes:
    """An operator's (Input Dims, Input type, Concrete Inputs[, kernel_kwargs]) as JSON bytes.
    An integer beyond 64 bits (which orjson cannot write) is written by json, and so reads back
    as a float, as orjson reads such a number in the trace."""
    arguments = (a.get("Input Dims"), a.get("Input type"), a.get("Concrete Inputs")) + (
        (a["kernel_kwargs"],) if "kernel_kwargs" in a else ()
    )
    try:
        return dumps(arguments)
    except TypeError:
        return json.dumps(arguments).encode()


def arguments(packed: bytes) -> tuple[list | None, list | None, list | None]:
    """(Input Dims, Input type, Concrete Inputs) of an operator from its packed `arguments`."""
    dims, types, concrete = loads(packed)[:3]
    return dims, types, concrete


def kernel_kwargs(packed: bytes) -> str | None:
    """A Triton kernel operator's `kernel_kwargs` ("XBLOCK=64,R0_BLOCK=128"), or None."""
    unpacked = loads(packed)
    return str(unpacked[3]) if len(unpacked) > 3 else None
