"""Nsight Systems SQLite exports: every kernel, copy and fill, with NVTX ranges and operators.

The export's tables become the events the Kineto path works from (parsers/kineto_events.py's
TraceEvents, times in µs): GPU activities from the CUPTI tables, the CUDA runtime calls that
issued them (joined through their correlation id within a process), NVTX ranges as annotation
ranges or, for PyTorch's emit_nvtx and DLProf's markers, as operators. From there the Kineto
reader's linking, operator models, device records and steps apply unchanged.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from . import kineto, nsys_device, nsys_nvtx
from . import nsys_tables as tables
from .kineto_events import NO_ID, TraceEvents
from .sniff import SQLITE

NO_CUDA = (
    "Nsight Systems export with no CUDA kernel table (captured without CUDA tracing); "
    "capture again with `nsys profile --trace=cuda,nvtx` and export it with "
    "`nsys export --type sqlite`"
)
UNREADABLE = "Nsight Systems export whose tables cannot be read"
EXPORT_AGAIN = "export it again with `nsys export --type sqlite -o report.sqlite report.nsys-rep`"
NO_DEVICE_TABLE = "the export has no TARGET_INFO_GPU table: device from evidence, provisional: "
# CUPTI's memcpy kinds and memory kinds (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND), named as
# a PyTorch trace names copies ("Memcpy HtoD (Pinned -> Device)").
COPY_KINDS = {
    1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
    9: "HtoH", 10: "PtoP", 11: "HtoD", 12: "DtoH", 13: "DtoD",
}  # fmt: skip
MEMORY_KINDS = {
    0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
    6: "Managed Static",
}  # fmt: skip
PROFILER_STEP = re.compile(r"^ProfilerStep#\d+$")
PID_BITS = 0xFFFFFF  # a serialized GlobalId: hw (8 bits), vm (8), pid (24), tid (24)


def sniff(path: Path, head: str) -> bool:
    """A SQLite file with Nsight Systems' tables (rocprof's databases have none of them)."""
    if head != SQLITE:
        return False
    found = tables.tables(path)
    return bool(found) and (tables.KERNEL in found or all(t in found for t in tables.MARKERS))


def read(path, nvtx_step: str | None = None) -> Profile:
    """`nvtx_step`: the NVTX range that marks a step (numbered in time order unless its name
    ends in #N); by default ranges named ProfilerStep#N."""
    source = str(path)
    found = tables.tables(Path(path)) or set()
    if tables.KERNEL not in found:
        raise InputError(NO_CUDA, path=source)
    con = tables.connect(Path(path))
    try:
        events, devices, said = _events(con, found, nvtx_step)
    except (sqlite3.Error, ValueError) as exc:  # a damaged table, a cell of the wrong type
        raise InputError(f"{UNREADABLE} ({exc}); {EXPORT_AGAIN}", path=source) from None
    finally:
        con.close()
    if not len(events.gpu):
        raise InputError(NO_ACTIVITY, path=source)
    profile = kineto.profile(events, devices, source, InputFormat.NSYS_SQLITE)
    if not devices:
        _device_from_evidence(profile, said)
    return profile


NO_ACTIVITY = (
    "Nsight Systems export with no kernel, memcpy or memset rows; capture the part of the "
    "program that runs on the GPU (`nsys profile --trace=cuda,nvtx`)"
)

FORMATS = (InputFormat.NSYS_SQLITE,)
READER = Reader(
    "Nsight Systems SQLite export",
    FORMATS,
    sniff,
    read,
    ("nvtx_step",),
    carries=Carries.TIMELINE | Carries.OPERATORS,
)


def _events(con, found: set[str], step: str | None) -> tuple[TraceEvents, dict, list[str]]:
    """The events, the device records, and (without them) the export's recorded texts."""
    text = tables.strings(con)
    events = TraceEvents()
    origin = _gpu(events, con, found, text)
    _runtime(events, con, found, text, origin)
    if tables.NVTX in found:
        _nvtx(events, tables.nvtx(con, text), origin, step)
    devices = nsys_device.devices(tables.gpus(con, found))
    return events, devices, [] if devices else tables.metadata(con, found)


def _gpu(events: TraceEvents, con, found: set[str], text: np.ndarray) -> int:
    """Kernels, copies and fills, in order of their start on the GPU; returns the first start
    (ns), the origin every time is kept from: subtracted as integers, so that no nanosecond is
    lost to a float of ~1e11 ns."""
    parts = [_kernels(con, text)]
    if tables.MEMCPY in found:
        parts.append(_copies(con))
    if tables.MEMSET in found:
        parts.append(_fills(con))
    merged = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.argsort(merged["start"], kind="stable")
    c = {k: v[order] for k, v in merged.items()}
    n = len(order)
    origin = int(c["start"].min()) if n else 0
    events.gpu.replace(
        ts=(c["start"] - origin) / 1e3,
        dur=(c["end"] - c["start"]) / 1e3,
        bytes=c["bytes"],
        correlation=_key(c["pid"], c["correlation"]),
        external=np.full(n, NO_ID, dtype=np.int64),
        stream=c["stream"],
        name=c["name"].tolist(),
        cat=c["cat"].tolist(),
        grid=c["grid"].tolist(),
        block=c["block"].tolist(),
        device=c["device"].tolist(),
        comm=[None] * n,
    )
    return origin


def _common(rows: dict, cat: str, names: np.ndarray) -> dict[str, np.ndarray]:
    n = len(rows["start"])
    none = np.full(n, None, dtype=object)
    return {
        "start": rows["start"],
        "end": rows["end"],
        "device": rows["deviceId"],
        "stream": rows["streamId"],
        "correlation": rows["correlationId"],
        "pid": (rows["globalPid"] >> 24) & PID_BITS,
        "cat": np.full(n, cat, dtype=object),
        "name": names,
        "grid": none,
        "block": none,
        "bytes": rows["bytes"].astype(np.float64) if "bytes" in rows else np.full(n, np.nan),
    }


def _kernels(con, text: np.ndarray) -> dict[str, np.ndarray]:
    rows = tables.integers(con, tables.KERNEL, tables.KERNEL_COLUMNS)
    names = text[rows["demangledName"]]
    short = text[rows["shortName"]]
    names = np.where(names == None, short, names)  # noqa: E711 (an object array's None)
    out = _common(rows, "kernel", names)
    out["grid"] = _dims(rows, "grid")
    out["block"] = _dims(rows, "block")
    return out


def _dims(rows: dict, prefix: str) -> np.ndarray:
    """(x, y, z) per launch, one tuple object per distinct shape: the three packed into one
    int64 (CUDA: x < 2^31, y and z < 2^16) and hashed, not sorted row by row."""
    x, y, z = (rows[prefix + axis] for axis in "XYZ")
    codes, keys = pd.factorize((x << 32) | ((y & 0xFFFF) << 16) | (z & 0xFFFF))
    shapes = np.empty(len(keys), dtype=object)
    shapes[:] = [(int(k >> 32), int((k >> 16) & 0xFFFF), int(k & 0xFFFF)) for k in keys]
    return shapes[codes]


def _copies(con) -> dict[str, np.ndarray]:
    rows = tables.integers(con, tables.MEMCPY, tables.MEMCPY_COLUMNS)
    return _common(rows, "gpu_memcpy", _labels(rows, _copy_name, "copyKind", "srcKind", "dstKind"))


def _fills(con) -> dict[str, np.ndarray]:
    rows = tables.integers(con, tables.MEMSET, tables.MEMSET_COLUMNS)
    return _common(rows, "gpu_memset", _labels(rows, _fill_name, "memKind"))


def _labels(rows: dict, name, *columns: str) -> np.ndarray:
    """A name per row from a few small integer columns, worked out once per distinct value."""
    n = len(rows["start"])
    keys = np.stack([rows[c] for c in columns], axis=1).reshape(n, len(columns))
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    labels = np.empty(len(distinct), dtype=object)
    labels[:] = [name(*(int(v) for v in row)) for row in distinct]
    return labels[inverse.reshape(-1)]


def _copy_name(kind: int, src: int, dst: int) -> str:
    direction = COPY_KINDS.get(kind, "Unknown")
    if src == tables.ABSENT or dst == tables.ABSENT:
        return f"Memcpy {direction}"
    source, target = (MEMORY_KINDS.get(k, "Unknown") for k in (src, dst))
    return f"Memcpy {direction} ({source} -> {target})"


def _fill_name(kind: int) -> str:
    return "Memset" if kind == tables.ABSENT else f"Memset ({MEMORY_KINDS.get(kind, 'Unknown')})"


def _key(pid: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """A correlation id made unique over processes (CUPTI numbers them per process)."""
    return np.where(correlation == tables.ABSENT, NO_ID, (pid << 32) | (correlation & 0xFFFFFFFF))


def _runtime(events: TraceEvents, con, found: set[str], text: np.ndarray, origin: int) -> None:
    """The CUDA runtime calls (the launch and copy calls among them issued each activity)."""
    if tables.RUNTIME not in found:
        return
    rows = tables.integers(
        con, tables.RUNTIME, tables.RUNTIME_COLUMNS, 'WHERE "correlationId" IS NOT NULL'
    )
    thread = rows["globalTid"]
    pid = (thread >> 24) & PID_BITS
    events.runtime.replace(
        ts=(rows["start"] - origin) / 1e3,
        correlation=_key(pid, rows["correlationId"]),
        external=np.full(len(thread), NO_ID, dtype=np.int64),
        name=[str(n) for n in text[rows["nameId"]].tolist()],
        pid=pid.tolist(),
        tid=thread.tolist(),
        kernel=[None] * len(thread),  # the kernel a launch call names: HIP traces' only
    )


def _nvtx(events: TraceEvents, ranges: tables.Ranges, origin: int, step: str | None) -> None:
    """NVTX ranges: operators (emit_nvtx, DLProf) as the trace's CPU operators, the others as
    annotation ranges, and ProfilerStep#N ranges as steps too."""
    read = nsys_nvtx.read_all(ranges.text)
    if any(isinstance(r, nsys_nvtx.Operator) and r.shaped for r in read):
        # DLProf's markers carry the shapes; PyTorch's emit_nvtx ranges inside them do not:
        # the markers are the operators, the emit_nvtx ranges annotation ranges
        read = [r.name if isinstance(r, nsys_nvtx.Operator) and not r.shaped else r for r in read]
    if ranges.domains:  # an annotation range of a named domain: "Domain:name", as nsys shows it
        prefix = [ranges.domains.get(d) for d in ranges.domain.tolist()]
        read = [
            f"{p}:{r}" if p and isinstance(r, str) else r for p, r in zip(prefix, read, strict=True)
        ]
    is_op = np.array([isinstance(r, nsys_nvtx.Operator) for r in read], dtype=bool)
    named = np.array([isinstance(r, str) for r in read], dtype=bool)
    ts, dur = (ranges.start - origin) / 1e3, (ranges.end - ranges.start) / 1e3
    pid = ((ranges.thread >> 24) & PID_BITS).tolist()
    tid = ranges.thread.tolist()
    ops, spans = np.flatnonzero(is_op), np.flatnonzero(named)
    events.ops.replace(
        ts=ts[ops],
        dur=dur[ops],
        external=np.full(len(ops), NO_ID, dtype=np.int64),
        name=[read[i].name for i in ops.tolist()],
        pid=[pid[i] for i in ops.tolist()],
        tid=[tid[i] for i in ops.tolist()],
        arguments=[read[i].arguments for i in ops.tolist()],
        module=[None] * len(ops),
    )
    events.spans.replace(
        ts=ts[spans],
        dur=dur[spans],
        kind=np.zeros(len(spans), dtype=np.int64),
        name=[read[i] for i in spans.tolist()],
        pid=[pid[i] for i in spans.tolist()],
        tid=[tid[i] for i in spans.tolist()],
    )
    steps, names = _steps([str(read[i]) for i in spans.tolist()], ts[spans], step)
    events.steps.replace(
        ts=ts[spans][steps],
        dur=dur[spans][steps],
        gpu=np.zeros(len(steps), dtype=np.int64),
        name=names,
    )


def _steps(names: list[str], ts: np.ndarray, step: str | None) -> tuple[np.ndarray, list[str]]:
    """Which annotation ranges are steps (positions) and their step names: ProfilerStep#N, or
    the ranges named `step` (NAME or NAME#N), numbered 1, 2, ... in time order when unnumbered."""
    pattern = PROFILER_STEP if step is None else re.compile(rf"^{re.escape(step)}(#\d+)?$")
    picked = np.array([i for i, n in enumerate(names) if pattern.match(n)], dtype=np.int64)
    picked = picked[np.argsort(ts[picked], kind="stable")]
    if step is None:
        return picked, [names[i] for i in picked.tolist()]
    return picked, [
        names[i] if names[i] != step else f"{step}#{k}" for k, i in enumerate(picked.tolist(), 1)
    ]


def _device_from_evidence(profile: Profile, texts: list[str]) -> None:
    """No device table: the compute capability its names give away, said to be provisional."""
    names = schema.filled(profile.launches["kernel"], "").cat.categories.to_numpy()
    arch, how = nsys_device.evidence(texts, names)
    profile.notes.append(NO_DEVICE_TABLE + how)
    if arch is not None:
        profile.launches["arch"] = schema.repeated(arch, len(profile.launches))
