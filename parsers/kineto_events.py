"""The events of a PyTorch profiler trace that rooflint needs, gathered column by column."""

from __future__ import annotations

from dataclasses import dataclass, field

GPU_ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME = ("cuda_runtime", "cuda_driver")
COUNTER_RANGE = "cuda_profiler_range"
MODULE_PREFIX = "nn.Module: "


@dataclass
class Columns:
    """Parallel lists, one entry per event of one kind."""

    names: dict[str, list] = field(default_factory=dict)

    def add(self, **values) -> None:
        for key, value in values.items():
            self.names.setdefault(key, []).append(value)

    def get(self, key: str) -> list:
        return self.names.get(key, [])

    def __len__(self) -> int:
        return len(next(iter(self.names.values()), []))


@dataclass
class TraceEvents:
    """GPU activities, counter ranges, CPU operators, annotations, modules and runtime calls."""

    gpu: Columns = field(default_factory=Columns)
    ranges: Columns = field(default_factory=Columns)  # cuda_profiler_range: counters per kernel
    ops: Columns = field(default_factory=Columns)
    spans: Columns = field(default_factory=Columns)  # user_annotation and nn.Module intervals
    runtime: Columns = field(default_factory=Columns)

    def take(self, batch: list[dict]) -> None:
        """Keep what matters from one batch of events (the batch itself is then dropped)."""
        for event in batch:
            cat = event.get("cat")
            if cat in GPU_ACTIVITIES:
                self._gpu(event, cat)
            elif cat == "cpu_op":
                self._op(event)
            elif cat in RUNTIME:
                self._runtime(event)
            elif cat == "user_annotation":
                self._span(event, 0, event.get("name", ""))
            elif cat == "python_function":
                name = event.get("name", "")
                if name.startswith(MODULE_PREFIX):
                    self._span(event, 1, name[len(MODULE_PREFIX):])
            elif cat == COUNTER_RANGE:
                self.ranges.add(name=event.get("name", ""), ts=event.get("ts"), dur=event.get("dur"),
                                args=event.get("args") or {})

    def _gpu(self, event: dict, cat: str) -> None:
        args = event.get("args") or {}
        self.gpu.add(name=event.get("name", ""), cat=cat, ts=event.get("ts"), dur=event.get("dur"),
                     correlation=args.get("correlation"), external=args.get("External id"),
                     grid=args.get("grid"), block=args.get("block"), stream=args.get("stream"),
                     device=args.get("device", event.get("pid")), bytes=args.get("bytes"))

    def _op(self, event: dict) -> None:
        args = event.get("args") or {}
        self.ops.add(name=event.get("name", ""), pid=event.get("pid"), tid=event.get("tid"),
                     ts=event.get("ts"), dur=event.get("dur"), external=args.get("External id"),
                     dims=args.get("Input Dims"), types=args.get("Input type"),
                     concrete=args.get("Concrete Inputs"), module=args.get("Module Hierarchy"))

    def _span(self, event: dict, kind: int, name: str) -> None:
        self.spans.add(kind=kind, name=name, pid=event.get("pid"), tid=event.get("tid"),
                       ts=event.get("ts"), dur=event.get("dur"))

    def _runtime(self, event: dict) -> None:
        args = event.get("args") or {}
        self.runtime.add(name=event.get("name", ""), pid=event.get("pid"), tid=event.get("tid"),
                         ts=event.get("ts"), correlation=args.get("correlation"),
                         external=args.get("External id"))
