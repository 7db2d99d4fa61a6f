"""PyTorch profiler (Kineto) traces: each GPU kernel, copy and fill, with the operator behind it."""

from __future__ import annotations

import contextlib
import gc
import re
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core import provenance, ranks, schema, timeline
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from . import kineto_bulk, kineto_fields, kineto_graphs, kineto_models, ncu_metrics
from .kineto_events import NO_ID, TraceEvents
from .kineto_link import link
from .kineto_stream import TraceStream

_TRACE_HEAD = re.compile(r'"traceEvents"|"ph"\s*:\s*"[XBEisfM]"')
SM_FROM_GRID = "grid blocks / CUPTI's blocks per SM"  # where a trace's SM count came from
AMBIGUOUS_NAMES = {"AMD Radeon Graphics": "ROCm names the GPU only 'AMD Radeon Graphics'"}
RANGE_NO_TIME = (
    "CUPTI range-profiler ranges carry counters but no kernel time (the trace spaces "
    "them evenly); pair the trace with an ncu export or a plain trace for durations"
)
LENT = "rooflint.lent"  # launches.attrs key: replayed kernels given operators by the capture
CAPTURE_NOTE = (
    "{} kernel launches were captured into CUDA/HIP graphs (they ran later, when the graphs "
    "were replayed): pass the replay trace with this one to give its kernels their operators"
)
GRAPH_NOTE = (
    "{} kernels were replayed from CUDA/HIP graphs: they keep their time and kernel name, "
    "attributed to the graph launch; pass the capture trace of the same graphs beside this one "
    "(the trace recorded while they were captured) to give each its operator, shapes and a "
    "verdict"
)
NO_GPU = (
    "trace has no GPU activity (no kernel, gpu_memcpy or gpu_memset events): profile with "
    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
)


def sniff(path: Path, head: str) -> bool:
    """A JSON object with "traceEvents", or a bare list of trace events (plain or gzip)."""
    text = head.lstrip("\ufeff \t\r\n")
    return text[:1] in ("{", "[") and bool(_TRACE_HEAD.search(text))


def read(path) -> Profile:
    with _no_gc():
        return _read(str(path))


def read_replay(path, capture) -> tuple[Profile, int]:
    """A graph replay trace whose replayed kernels take their operators and shapes from the
    capture trace `capture` (parsers/kineto_graphs.py), and how many kernels got one."""
    with _no_gc():
        profile = _read(str(path), str(capture))
    return profile, int(profile.launches.attrs.pop(LENT, 0))


def captured_launches(path) -> int:
    """How many kernel launches a trace recorded into CUDA/HIP graphs (0: not a capture trace)."""
    with _no_gc():
        return len(kineto_graphs.captured_rows(_events(str(path))))


READER = Reader(
    "PyTorch profiler trace",
    (InputFormat.PYTORCH_TRACE,),
    sniff,
    read,
    carries=Carries.COUNTERS | Carries.TIMELINE | Carries.OPERATORS,
)


def _events(source: str, header: dict | None = None) -> TraceEvents:
    stream = TraceStream(Path(source), parse=kineto_bulk.parse)
    events = TraceEvents(source=source)
    for batch in stream.batches():
        kineto_bulk.take(events, batch)
    if header is not None:
        header.update(stream.header)
    return events


def _read(source: str, capture: str | None = None) -> Profile:
    header: dict = {}
    events = _events(source, header)
    if not len(events.gpu) and not len(events.ranges):
        raise InputError(NO_GPU, path=source)
    devices = _devices(header, source)
    rank = _rank(header, events)
    return profile(events, devices, source, InputFormat.PYTORCH_TRACE, capture=capture, rank=rank)


def profile(
    events: TraceEvents,
    devices: dict[int, dict],
    source: str,
    fmt: InputFormat,
    notes: list[str] | None = None,
    capture: str | None = None,
    rank: ranks.Rank | None = None,
) -> Profile:
    """The Profile of a timeline's events, however they were read (a Kineto trace, an Nsight
    Systems export, rocprofv3 JSON): launches linked to their operators, operator models,
    device hints, steps. `devices` are deviceProperties records by device index (name,
    computeMajor/Minor, numSms, totalGlobalMem); `capture`, a graph capture trace's path; `rank`,
    which rank of which distributed job the trace is."""
    notes = [] if notes is None else notes
    taken = _events(capture) if capture else None
    launches = (
        _counter_ranges(events, devices, source, notes)
        if not len(events.gpu)
        else _activities(events, devices, source, notes, (capture, taken))
    )
    launches = kineto_models.apply(launches, _vendor(devices), notes, events.ops)
    captured = len(kineto_graphs.captured_rows(events)) if capture is None else 0
    if captured:
        notes.append(CAPTURE_NOTE.format(captured))
    launches["rank"] = pd.array(  # NA for a trace of no distributed job
        [None if rank is None else rank.rank] * len(launches), dtype="Int64"
    )
    return Profile(
        source=source,
        format=fmt,
        launches=launches,
        notes=notes,
        device_hints=_hints(devices, notes, launches),
        steps=_steps(events),
        captured_launches=captured,
        rank=rank,
    )


def _rank(header: dict, events: TraceEvents) -> ranks.Rank | None:
    """Which rank of which job the trace is, from its distributedInfo (None without one): the
    job is told by the backend, world size and process groups (their names and sizes)."""
    info = header.get("distributedInfo")
    if not isinstance(info, dict) or not isinstance(info.get("rank"), int):
        return None
    world = info.get("world_size") if isinstance(info.get("world_size"), int) else None
    groups = info.get("pg_config") if isinstance(info.get("pg_config"), list) else []
    sizes = ", ".join(
        f"{g.get('pg_name')}:{g.get('pg_size')}" for g in groups if isinstance(g, dict)
    )
    job = f"{info.get('backend', 'unknown backend')}, world size {world}"
    job += f", process groups {sizes}" if sizes else ""
    return ranks.Rank(info["rank"], world, job, origin_us(events) * 1e-6)


def origin_us(events: TraceEvents) -> float:
    """The trace's time origin: its first GPU activity (µs). Times are kept from it: as seconds
    since the epoch (~1.7e9 s) a float64 resolves only 0.24 µs, and kernels last a few µs."""
    if "ts" not in events.gpu.columns:  # a counter-range trace: its ranges carry no GPU time
        return 0.0
    ts = events.gpu.get("ts")
    finite = ts[np.isfinite(ts)]
    return float(finite.min()) if len(finite) else 0.0


def _steps(events: TraceEvents) -> list[timeline.Step]:
    """The ProfilerStep#N annotations, host-side (user_annotation) and device-side, in seconds
    from the trace's origin."""
    c = events.steps
    start, dur = (c.get("ts") - origin_us(events)) * 1e-6, c.get("dur") * 1e-6
    sides = [timeline.GPU_SIDE if g else timeline.CPU_SIDE for g in c.get("gpu").tolist()]
    return [
        timeline.Step(name, float(s), float(s + d), side)
        for name, s, d, side in zip(c.get("name"), start, dur, sides, strict=True)
        if np.isfinite(s + d)
    ]


@contextlib.contextmanager
def _no_gc():
    """The cyclic garbage collector off while events are parsed: JSON makes no reference cycles,
    and with millions of live objects each automatic full collection rescans all of them
    (measured: most of the reader's own time on a 20 MB trace)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _devices(header: dict, source: str) -> dict[int, dict]:
    props = kineto_fields.devices(header, source)
    return {p.get("id", i): p for i, p in enumerate(props)}


def _vendor(devices: dict[int, dict]) -> str:
    """AMD by the name, or, where ROCm leaves the name empty (vLLM's traces), by the 64-lane
    wavefront (NVIDIA's warps have 32 lanes)."""
    names = " ".join(str(d.get("name", "")) for d in devices.values())
    wave64 = any(d.get("warpSize") == 64 for d in devices.values())
    return "AMD" if "AMD" in names or "Radeon" in names or wave64 else "NVIDIA"


def _hints(devices: dict[int, dict], notes: list[str], launches: pd.DataFrame) -> dict:
    """The vendor, CU count and HIP compute version (AMD) and device memory (totalGlobalMem) for
    device matching, and a note when the GPU's name is ambiguous. A trace without
    deviceProperties whose kernels gave an SM count (CUPTI's `blocks per SM`) is NVIDIA's."""
    if not devices:
        sms = launches["sm_count"] if "sm_count" in launches else pd.Series(dtype=float)
        return {"vendor": "nvidia", "sm_count_from": SM_FROM_GRID} if sms.notna().any() else {}
    counts = {d.get("numSms") for d in devices.values()}
    memory = {d.get("totalGlobalMem") for d in devices.values()}
    vendor = _vendor(devices)
    hints: dict = {"vendor": vendor.lower()}
    if len(counts) == 1 and vendor == "AMD":
        hints["cu_count"] = counts.pop()
    versions = {(d.get("computeMajor"), d.get("computeMinor")) for d in devices.values()}
    if vendor == "AMD" and len(versions) == 1 and None not in (version := versions.pop()):
        hints["compute_version"] = f"{version[0]}.{version[1]}"
    if len(memory) == 1:
        hints["memory_bytes"] = memory.pop()
    for device in devices.values():
        why = AMBIGUOUS_NAMES.get(str(device.get("name", "")).strip())
        if why:
            notes.append(
                f"{why}, which fits several GPUs: pass --device ID (e.g. mi250, mi300x; "
                "see `rooflint devices`)"
            )
            break
    return {k: v for k, v in hints.items() if v}


def _device_columns(index: pd.Series, devices: dict[int, dict], gpu) -> dict[str, pd.Series]:
    """Device name and arch per launch from deviceProperties. ROCm numbers GPUs after the CPU
    agents in activities ("device": 2 for the first GPU) but from 0 in deviceProperties: an
    index not listed falls back to the one GPU model the trace lists, when there is one. With no
    deviceProperties, each kernel's SM count from its grid and CUPTI's `blocks per SM`."""
    if not devices:
        return {
            "device_name": pd.Series(pd.NA, index=index.index, dtype="string"),
            "arch": pd.Series(pd.NA, index=index.index, dtype="string"),
            "sm_count": pd.Series(_sm_from_grid(gpu), index=index.index),
        }
    names = {k: d.get("name") for k, d in devices.items()}
    arch = {k: _arch(d) for k, d in devices.items()}
    sms = {k: d.get("numSms") if _vendor({0: d}) == "NVIDIA" else None for k, d in devices.items()}
    name, arch_col, sm = index.map(names), index.map(arch), index.map(sms)
    if len(set(names.values())) == 1 and len(set(arch.values())) == 1:
        name = name.fillna(next(iter(names.values())))
        arch_col = arch_col.fillna(next(iter(arch.values())))
        sm = sm.fillna(next(iter(sms.values())))
    return {
        "device_name": name.astype("string"),
        "arch": arch_col.astype("string"),
        "sm_count": pd.to_numeric(sm, errors="coerce"),
    }


def _sm_from_grid(gpu) -> np.ndarray:
    """Each kernel's SM count: its grid's blocks / CUPTI's `blocks per SM` (which CUPTI works
    out as blocks / SMs: 2400 / 22.222221 = 108.0 on HTA's A100 traces), rounded; NaN where a
    kernel has no grid or no blocks per SM (a memcpy, another reader's events)."""
    if gpu is None or "blocks_per_sm" not in gpu.columns:
        return np.nan
    per_sm = gpu.get("blocks_per_sm")
    codes, grids = pd.factorize(pd.Series(gpu.get("grid"), dtype=object))
    blocks = np.array([float(np.prod(g)) if g else np.nan for g in grids] + [np.nan])[codes]
    with np.errstate(divide="ignore", invalid="ignore"):
        count = np.round(blocks / np.where(per_sm > 0, per_sm, np.nan))
    return np.where(count >= 1, count, np.nan)


def _arch(device: dict):
    """NVIDIA compute capability "8.0"; AMD's gfx name when the trace gives it, else gfx942 for
    computeMajor/Minor 9.4: of the gfx94x family ROCm 6 and later run only gfx942 (MI300A,
    MI300X, MI325X; gfx940/941 were pre-production parts)."""
    if device.get("gcnArchName"):
        return str(device["gcnArchName"]).split(":")[0]
    version = (device.get("computeMajor"), device.get("computeMinor"))
    if _vendor({0: device}) == "AMD":
        return "gfx942" if version == (9, 4) else None
    if "computeMajor" in device:
        return f"{device['computeMajor']}.{device.get('computeMinor', 0)}"
    return None


def _dim3(values: list) -> pd.Series:
    """(x, y, z) tuples as "(x, y, z)", the way the other readers print grid and block."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    text = [f"({', '.join(str(x) for x in u)})" for u in uniques]
    return pd.Series(np.array(text + [None], dtype=object)[codes], dtype="string")


def _activities(events: TraceEvents, devices, source: str, notes: list[str], capture=(None, None)):
    gpu = events.gpu
    links = link(events)
    captured = _lent(events, links, capture, notes)
    device = pd.Series(pd.to_numeric(pd.Series(gpu.get("device"), dtype=object), errors="coerce"))
    frame = pd.DataFrame(
        {
            "source": source,
            "launch_id": np.arange(len(gpu)),
            "kernel": pd.array(gpu.get("name"), dtype="string"),
            "grid": _dim3(gpu.get("grid")),
            "block": _dim3(gpu.get("block")),
            **_device_columns(device, devices, gpu),
            "duration_s": gpu.get("dur") * 1e-6,
            "range": pd.array([r or None for r in links.range], dtype="string"),
        }
    )
    trace = _trace_columns(events, links, device)
    trace["_captured"] = captured
    frame = schema.conform(frame)
    frame.attrs[LENT] = int(captured.sum())
    for name, values in trace.items():
        frame[name] = values
    _note_unlinked(frame, notes, capture[0] is not None)
    return frame


def _lent(events: TraceEvents, links, capture: tuple, notes: list[str]) -> np.ndarray:
    """The replayed kernels given their captured operators (links changed in place): a mask."""
    path, taken = capture
    if taken is None:
        return np.zeros(len(events.gpu), dtype=bool)
    owner, parent, (graphs, launches, kernels, replayed) = kineto_graphs.lend(
        events, taken, links.runtime, links.graph
    )
    lent = owner != -1
    links.owner = np.where(lent, owner, links.owner)
    links.parent = np.where(lent, parent, links.parent)
    notes.append(
        f"{int(lent.sum())} of {replayed} kernels replayed from CUDA/HIP graphs have their "
        f"operator and shapes from the capture trace {path} ({graphs} of {launches} graph "
        f"launches matched node by node, kernel names agreeing; {kernels} kernels matched)"
    )
    return lent


def _trace_columns(events: TraceEvents, links, device: pd.Series) -> dict[str, object]:
    """The trace-only columns: operator, its parent, shapes, dtypes, module, activity, stream."""
    ops, gpu = events.ops, events.gpu
    names = np.array(ops.get("name") + [None], dtype=object)
    call_names = np.array(events.runtime.get("name") + [None], dtype=object)[links.runtime]
    op = names[links.owner]
    op = np.where(links.graph & (links.owner < 0), call_names, op)
    used = np.unique(links.owner[links.owner >= 0])
    dims, types = kineto_models.argument_text(ops, used)
    return {
        "op": pd.array(op, dtype="string"),
        "op_parent": pd.array(names[links.parent], dtype="string"),
        "op_input_dims": pd.array(np.append(dims, None)[_pos(used, links.owner)], dtype="string"),
        "op_input_types": pd.array(np.append(types, None)[_pos(used, links.owner)], dtype="string"),
        "module": pd.array([m or None for m in links.module], dtype="string"),
        "activity": pd.array(gpu.get("cat"), dtype="string"),
        "stream": pd.array(
            np.where(gpu.get("stream") == NO_ID, None, gpu.get("stream")), dtype="Int64"
        ),
        "device_index": pd.array(device, dtype="Int64"),
        "graph_replay": pd.array(links.graph, dtype="boolean"),
        **_timeline_columns(events, links),
        "_op_index": links.owner,
        "_bytes_arg": gpu.get("bytes"),
    }


ACTIVITY_KINDS = {
    "kernel": timeline.KERNEL,
    "gpu_memcpy": timeline.MEMCPY,
    "gpu_memset": timeline.MEMSET,
}


def _timeline_columns(events: TraceEvents, links) -> dict[str, object]:
    """Start and issue times (s), kind, and a collective's arguments (from the kernel, else from
    the record_param_comms operator that launched it)."""
    gpu = events.gpu
    origin = origin_us(events)
    issued = (np.append(events.runtime.get("ts"), np.nan)[links.runtime] - origin) * 1e-6
    names = np.asarray(gpu.get("name"), dtype=object)
    activity = pd.Series(gpu.get("cat"), dtype=object).map(ACTIVITY_KINDS).to_numpy()
    kind = timeline.kinds(activity, names)
    return {
        "start_s": (gpu.get("ts") - origin) * 1e-6,
        "launch_s": issued,
        "kind": pd.array(kind, dtype="string"),
        **_comm_columns(events, links, kind),
    }


def _comm_columns(events: TraceEvents, links, kind: np.ndarray) -> dict[str, object]:
    """Each communication kernel's collective, message bytes and group size: from its own
    arguments, else from the record_param_comms operator that launched it (a loop over the
    communication kernels alone)."""
    n = len(kind)
    collective, size, ranks = np.full(n, None, dtype=object), np.full(n, np.nan), np.full(n, None)
    own = events.gpu.get("comm")
    for row in np.flatnonzero(kind == timeline.COMMUNICATION).tolist():
        comm = own[row] or events.comms.get(int(links.owner[row]))
        if comm is not None:
            collective[row], ranks[row] = comm.collective, comm.ranks
            size[row] = np.nan if comm.bytes is None else comm.bytes
    return {
        "collective": pd.array(collective, dtype="string"),
        "comm_bytes": size,
        "comm_ranks": pd.array(ranks, dtype="Int64"),
    }


def _pos(used: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Position of each owner in `used` (len(used) for none)."""
    at = np.searchsorted(used, owner)
    hit = (owner >= 0) & (at < len(used))
    hit[hit] = used[at[hit]] == owner[hit]
    return np.where(hit, at, len(used))


def _note_unlinked(frame: pd.DataFrame, notes: list[str], paired: bool = False) -> None:
    unlinked = frame["op"].isna()
    if unlinked.any():
        notes.append(
            f"{int(unlinked.sum())} GPU activities have no CPU operator in the trace (launched "
            "outside any recorded operator, or their runtime call was not recorded)"
        )
    graph = frame["graph_replay"].to_numpy()
    if graph.any() and not paired:
        notes.append(GRAPH_NOTE.format(int(graph.sum())))


def _counter_ranges(events: TraceEvents, devices, source: str, notes: list[str]) -> pd.DataFrame:
    """A trace of CUPTI range-profiler ranges (one per kernel): counters, names, no kernel time.

    The n-th range is the n-th kernel launch call (ranges are recorded in launch order), which
    links it to its operator when the counts agree."""
    ranges = events.ranges
    wide = pd.DataFrame.from_records(ranges.get("args")).apply(pd.to_numeric, errors="coerce")
    names = pd.Series(ranges.get("name"), dtype="string").replace("__missing__", pd.NA)
    quantities, _ = ncu_metrics.quantities(
        wide, names.fillna(""), pd.Series(pd.NA, index=wide.index)
    )
    quantities["duration_s"] = pd.Series(np.nan, index=wide.index)
    device = pd.Series(np.zeros(len(wide)))
    frame = pd.DataFrame(
        {
            "source": source,
            "launch_id": np.arange(len(wide)),
            "kernel": names,
            **_device_columns(device, devices, None),
            **quantities,
        }
    )
    frame = schema.conform(frame)
    schema.mark_missing(
        frame,
        {
            "duration_s": RANGE_NO_TIME,
            "bytes_dram": "the trace's counter ranges have no dram__bytes counters",
        },
    )
    notes.append(RANGE_NO_TIME)
    _link_ranges(events, frame, notes)
    counted = schema.flops(frame).notna().to_numpy()
    frame["flops_source"] = provenance.column(len(frame), (counted, provenance.Provenance.COUNTERS))
    return frame


def _link_ranges(events: TraceEvents, frame: pd.DataFrame, notes: list[str]) -> None:
    calls = events.runtime
    launches = [i for i, n in enumerate(calls.get("name")) if "LaunchKernel" in n]
    ts, correlation = calls.get("ts"), calls.get("correlation")
    order = sorted(launches, key=lambda i: ts[i])
    owner = np.full(len(frame), -1)
    if len(order) == len(frame):
        correlations = correlation[order]
        events.gpu.replace(correlation=correlations, external=[None] * len(order))
        owner = link(events).owner
    else:
        notes.append(
            f"{len(frame)} counter ranges but {len(order)} kernel launch calls: ranges not "
            "linked to operators"
        )
    names = np.array(events.ops.get("name") + [None], dtype=object)
    frame["op"] = pd.array(names[owner], dtype="string")
    frame["_op_index"] = owner
