"""The events of a PyTorch profiler trace that rooflint needs, gathered column by column."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field

import numpy as np
from orjson import dumps, loads

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
        size = COMM_DTYPES.get(str(a.get("dtype")))
        counts = [_float(a.get(k)) for k in (COMM_SIZE, "Out msg nelems")]
        counts = [x for x in counts if x == x]
        group = a.get("Group size")
        return cls(
            str(a["Collective name"]) if a.get("Collective name") else None,
            max(counts) * size if size and counts else None,
            group if isinstance(group, int) and group > 0 else None,
        )


@dataclass
class TraceEvents:
    """GPU activities, counter ranges, CPU operators, annotations, modules and runtime calls."""

    gpu: Columns = field(
        default_factory=lambda: Columns(
            ("ts", "dur", "bytes"),
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

    def take(self, batch: list[dict]) -> None:
        """Keep what matters from one batch of events (the batch itself is then dropped)."""
        shared = self.strings.setdefault
        for event in batch:
            cat = event.get("cat")
            if cat == "python_function":
                name = event.get("name", "")
                if name.startswith(MODULE_PREFIX):
                    self._span(
                        event, 1, shared(name[len(MODULE_PREFIX) :], name[len(MODULE_PREFIX) :])
                    )
            elif cat == "cpu_op":
                self._op(event, event.get("args") or {}, shared)
            elif cat in RUNTIME:
                self._call(event, event.get("args") or {}, shared)
            elif cat in GPU_ACTIVITIES:
                self._gpu(event, cat, event.get("args") or {}, shared)
            elif cat == "user_annotation":
                name = event.get("name", "")
                self._span(event, 0, shared(name, name))
                if name.startswith(STEP_PREFIX):
                    self._step(event, 0)
            elif cat == GPU_ANNOTATION and event.get("name", "").startswith(STEP_PREFIX):
                self._step(event, 1)
            elif cat == COUNTER_RANGE:
                c = self.ranges.columns
                for key, value in (
                    ("name", event.get("name", "")),
                    ("ts", event.get("ts")),
                    ("dur", event.get("dur")),
                    ("args", event.get("args") or {}),
                ):
                    c[key].append(value)

    def _gpu(self, event: dict, cat: str, a: dict, shared) -> None:
        c = self.gpu.columns
        name = event.get("name", "")
        c["name"].append(shared(name, name))
        c["cat"].append(shared(cat, cat))
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["bytes"].append(_float(a.get("bytes")))
        c["correlation"].append(_int(a.get("correlation")))
        c["external"].append(_int(a.get("External id")))
        c["stream"].append(_int(a.get("stream")))
        grid, block = _dim(a.get("grid")), _dim(a.get("block"))
        c["grid"].append(shared(grid, grid))
        c["block"].append(shared(block, block))
        c["device"].append(a.get("device", event.get("pid")))
        c["comm"].append(Comm.of(a) if COMM_SIZE in a else None)

    def _op(self, event: dict, a: dict, shared) -> None:
        c = self.ops.columns
        name = event.get("name", "")
        packed = dumps(
            (a.get("Input Dims"), a.get("Input type"), a.get("Concrete Inputs"))
            + ((a["kernel_kwargs"],) if "kernel_kwargs" in a else ())
        )
        pid, tid, module = event.get("pid"), event.get("tid"), a.get("Module Hierarchy")
        c["name"].append(shared(name, name))
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["arguments"].append(shared(packed, packed))
        c["module"].append(shared(module, module) if module else None)
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["external"].append(_int(a.get("External id")))
        if name == COMM_OP and COMM_SIZE in a:
            self.comms[len(c["name"]) - 1] = Comm.of(a)

    def _span(self, event: dict, kind: int, name: str) -> None:
        c = self.spans.columns
        shared = self.strings.setdefault
        pid, tid = event.get("pid"), event.get("tid")
        c["kind"].append(kind)
        c["name"].append(name)
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))

    def _step(self, event: dict, gpu: int) -> None:
        c = self.steps.columns
        c["name"].append(event["name"])
        c["ts"].append(_float(event.get("ts")))
        c["dur"].append(_float(event.get("dur")))
        c["gpu"].append(gpu)

    def _call(self, event: dict, a: dict, shared) -> None:
        c = self.runtime.columns
        name, pid, tid = event.get("name", ""), event.get("pid"), event.get("tid")
        c["name"].append(shared(name, name))
        c["pid"].append(shared(pid, pid))
        c["tid"].append(shared(tid, tid))
        c["ts"].append(_float(event.get("ts")))
        c["correlation"].append(_int(a.get("correlation")))
        c["external"].append(_int(a.get("External id")))
        kernel = a.get("kernel")
        c["kernel"].append(shared(kernel, kernel) if isinstance(kernel, str) else None)


def _float(value) -> float:
    return value if isinstance(value, float | int) and not isinstance(value, bool) else NAN


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else NO_ID


def _dim(value):
    """A grid or block [x, y, z] as a tuple (hashable, so one object per distinct shape)."""
    return tuple(value) if isinstance(value, list) else None


def arguments(packed: bytes) -> tuple[list | None, list | None, list | None]:
    """(Input Dims, Input type, Concrete Inputs) of an operator from its packed `arguments`."""
    dims, types, concrete = loads(packed)[:3]
    return dims, types, concrete


def kernel_kwargs(packed: bytes) -> str | None:
    """A Triton kernel operator's `kernel_kwargs` ("XBLOCK=64,R0_BLOCK=128"), or None."""
    unpacked = loads(packed)
    return str(unpacked[3]) if len(unpacked) > 3 else None
