"""The events of a PyTorch profiler trace that rooflint needs, gathered column by column."""

from __future__ import annotations

from dataclasses import dataclass, field

from orjson import dumps, loads

GPU_ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME = ("cuda_runtime", "cuda_driver")
COUNTER_RANGE = "cuda_profiler_range"
MODULE_PREFIX = "nn.Module: "


class Columns:
    """Rows of one kind of event as tuples of `fields`; `get(field)` gives one column as a list."""

    def __init__(self, *fields: str):
        self.fields = fields
        self.rows: list[tuple] = []
        self._columns: dict[str, list] = {}

    def get(self, key: str) -> list:
        if key not in self._columns:
            at = self.fields.index(key)
            self._columns[key] = [row[at] for row in self.rows]
        return self._columns[key]

    def replace(self, **columns: list) -> None:
        """Use these columns instead of the rows' (same length for all)."""
        self.fields = tuple(columns)
        self.rows = list(zip(*columns.values(), strict=True))
        self._columns = dict(columns)

    def __len__(self) -> int:
        return len(self.rows)


GPU_FIELDS = ("name", "cat", "ts", "dur", "correlation", "external", "grid", "block", "stream", "device", "bytes")
# An operator's "Input Dims", "Input type" and "Concrete Inputs" are kept packed as one JSON
# bytes object (`arguments`): a few hundred Python objects per operator otherwise, and only the
# operators that launch kernels ever need them.
OP_FIELDS = ("name", "pid", "tid", "ts", "dur", "external", "arguments", "module")
SPAN_FIELDS = ("kind", "name", "pid", "tid", "ts", "dur")
CALL_FIELDS = ("name", "pid", "tid", "ts", "correlation", "external")


@dataclass
class TraceEvents:
    """GPU activities, counter ranges, CPU operators, annotations, modules and runtime calls."""

    gpu: Columns = field(default_factory=lambda: Columns(*GPU_FIELDS))
    ranges: Columns = field(default_factory=lambda: Columns("name", "ts", "dur", "args"))
    ops: Columns = field(default_factory=lambda: Columns(*OP_FIELDS))
    spans: Columns = field(default_factory=lambda: Columns(*SPAN_FIELDS))  # annotations, modules
    runtime: Columns = field(default_factory=lambda: Columns(*CALL_FIELDS))

    def take(self, batch: list[dict]) -> None:
        """Keep what matters from one batch of events (the batch itself is then dropped)."""
        gpu, ops, spans, calls = self.gpu.rows, self.ops.rows, self.spans.rows, self.runtime.rows
        for event in batch:
            cat = event.get("cat")
            if cat == "python_function":
                name = event.get("name", "")
                if name.startswith(MODULE_PREFIX):
                    spans.append((1, name[len(MODULE_PREFIX):], event.get("pid"), event.get("tid"),
                                  event.get("ts"), event.get("dur")))
            elif cat == "cpu_op":
                a = event.get("args") or {}
                ops.append((event.get("name", ""), event.get("pid"), event.get("tid"), event.get("ts"),
                            event.get("dur"), a.get("External id"),
                            dumps((a.get("Input Dims"), a.get("Input type"), a.get("Concrete Inputs"))),
                            a.get("Module Hierarchy")))
            elif cat in RUNTIME:
                a = event.get("args") or {}
                calls.append((event.get("name", ""), event.get("pid"), event.get("tid"), event.get("ts"),
                              a.get("correlation"), a.get("External id")))
            elif cat in GPU_ACTIVITIES:
                a = event.get("args") or {}
                gpu.append((event.get("name", ""), cat, event.get("ts"), event.get("dur"), a.get("correlation"),
                            a.get("External id"), a.get("grid"), a.get("block"), a.get("stream"),
                            a.get("device", event.get("pid")), a.get("bytes")))
            elif cat == "user_annotation":
                spans.append((0, event.get("name", ""), event.get("pid"), event.get("tid"), event.get("ts"),
                              event.get("dur")))
            elif cat == COUNTER_RANGE:
                self.ranges.rows.append((event.get("name", ""), event.get("ts"), event.get("dur"),
                                         event.get("args") or {}))


def arguments(packed: bytes) -> tuple[list | None, list | None, list | None]:
    """(Input Dims, Input type, Concrete Inputs) of an operator from its packed `arguments`."""
    dims, types, concrete = loads(packed)
    return dims, types, concrete
