"""rocprofv3 JSON (`rocprofv3 --output-format json`): kernel dispatches and copies as a timeline.

The rocprofiler-sdk tool's document holds the agents, the kernel symbols and buffer records
(kernel dispatches, memory copies). They become the events the Kineto path works from
(kineto_events.TraceEvents, µs), the GPU agents its deviceProperties records (product name,
gfx name, CU count), so that the Kineto reader's timeline columns, device columns and
communication kinds (RCCL's kernels) apply unchanged, as for an Nsight Systems export.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from . import kineto
from .compressed import open_binary
from .kineto_events import NO_ID, TraceEvents
from .rocprof_columns import clean_kernel

TOOL = "rocprofiler-sdk-tool"
_HEAD = re.compile(r'^\s*\{\s*"rocprofiler-sdk-tool"\s*:')
GPU_AGENT = 2  # agents[].type: 1 CPU, 2 GPU
NOT_READ = {
    "marker_api": "roctx ranges are not read from rocprofv3 JSON yet",
    "hip_api": "HIP API calls are not read from rocprofv3 JSON yet (no launch times)",
}
COUNTERS_NOT_READ = (
    "the run collected counters, which rooflint reads from rocprofv3's CSV output, not its "
    "JSON yet: collect again with --output-format csv"
)
MALFORMED = "rocprofv3 JSON whose records are not as rocprofv3 writes them"
AGAIN = "write it again with `rocprofv3 --kernel-trace --output-format json`"
NO_DISPATCH = (
    "rocprofv3 JSON with no kernel dispatches or memory copies; capture with "
    "`rocprofv3 --kernel-trace --memory-copy-trace --output-format json`"
)
# A copy's direction, from the operation names the document lists for MEMORY_COPY.
COPY_NAMES = {
    "HOST_TO_HOST": "HtoH", "HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH",
    "DEVICE_TO_DEVICE": "DtoD",
}  # fmt: skip


def sniff(path: Path, head: str) -> bool:
    """The rocprofiler-sdk tool's JSON document (plain or gzip)."""
    return bool(_HEAD.match(head.lstrip("\ufeff")))


def read(path) -> Profile:
    source = str(path)
    with open_binary(Path(path)) as fh:
        try:
            document = orjson.loads(fh.read())
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc}); export it again", path=source) from None
    runs = document.get(TOOL) or []
    if not runs:
        raise InputError(f"no {TOOL} run in the document; export it again", path=source)
    notes: list[str] = []
    try:
        events, devices = _events(runs, notes)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a record of other shape
        raise InputError(
            f"{MALFORMED} ({type(exc).__name__}: {exc}); {AGAIN}", path=source
        ) from None
    if not len(events.gpu):
        raise InputError(NO_DISPATCH, path=source)
    return kineto.profile(events, devices, source, InputFormat.ROCPROFV3_JSON, notes)


FORMATS = (InputFormat.ROCPROFV3_JSON,)
READER = Reader("rocprofv3 JSON", FORMATS, sniff, read, carries=Carries.TIMELINE)


def _events(runs: list[dict], notes: list[str]) -> tuple[TraceEvents, dict[int, dict]]:
    """Every run's dispatches and copies (one per process), in order of their start."""
    rows: list[dict] = []
    devices: dict[int, dict] = {}
    unread: list[str] = []
    for run in runs:
        gpus = {a["id"]["handle"]: a for a in run.get("agents", []) if a.get("type") == GPU_AGENT}
        index = {h: int(a.get("logical_node_type_id", i)) for i, (h, a) in enumerate(gpus.items())}
        devices.update({index[h]: _record(a) for h, a in gpus.items()})
        records = run.get("buffer_records", {})
        rows += _dispatches(run, records.get("kernel_dispatch", []), index)
        rows += _copies(run, records.get("memory_copy", []), index)
        unread += _unread(run, records)
    notes += dict.fromkeys(unread)  # each once, however many runs say it
    rows.sort(key=lambda r: r["start"])
    events = TraceEvents()
    frame = pd.DataFrame(rows, columns=["start", "end", "name", "cat", "grid", "block", "device",
                                        "stream", "correlation", "bytes"])  # fmt: skip
    start, end = frame["start"].to_numpy(np.int64), frame["end"].to_numpy(np.int64)
    origin = int(start.min()) if len(start) else 0  # ns, subtracted as integers: none lost
    events.gpu.replace(
        ts=(start - origin) / 1e3,
        dur=(end - start) / 1e3,
        bytes=frame["bytes"].to_numpy(np.float64),
        correlation=frame["correlation"].to_numpy(np.int64),
        external=np.full(len(frame), NO_ID, dtype=np.int64),
        stream=frame["stream"].to_numpy(np.int64),
        name=clean_kernel(frame["name"]).tolist(),
        cat=frame["cat"].tolist(),
        grid=frame["grid"].tolist(),
        block=frame["block"].tolist(),
        device=frame["device"].tolist(),
        comm=[None] * len(frame),
    )
    return events, devices


def _record(agent: dict) -> dict:
    """A GPU agent as a Kineto deviceProperties record (the Kineto path's device columns)."""
    return {
        "name": agent.get("product_name") or agent.get("name"),
        "gcnArchName": agent.get("name"),
        "numSms": agent.get("cu_count"),
    }


def _dispatches(run: dict, records: list[dict], index: dict) -> list[dict]:
    names = {
        k["kernel_id"]: k.get("demangled_kernel_name") or k.get("kernel_name")
        for k in run.get("kernel_symbols", [])
    }
    out = []
    shapes: dict[tuple, tuple] = {}  # (grid, workgroup) sizes -> (grid, block): a few distinct
    for r in records:
        info = r.get("dispatch_info", {})
        start, end = r["start_timestamp"], r["end_timestamp"]
        grid, block = info.get("grid_size", {}), info.get("workgroup_size", {})
        key = (*grid.values(), *block.values())
        if key not in shapes:  # HIP's grid is in work-items; as CUDA's, in workgroups (blocks)
            shapes[key] = (_dim(grid, block), _dim(block))
        out.append(
            {
                "start": start,
                "end": end,
                "name": names.get(info.get("kernel_id")),
                "cat": "kernel",
                "grid": shapes[key][0],
                "block": shapes[key][1],
                "device": index.get(info.get("agent_id", {}).get("handle")),
                "stream": info.get("queue_id", {}).get("handle", NO_ID),
                "correlation": r.get("correlation_id", {}).get("internal", NO_ID),
                "bytes": np.nan,
            }
        )
    return out


def _dim(size: dict, per: dict | None = None) -> tuple | None:
    if not size:
        return None
    axes = [int(size.get(a, 1)) for a in "xyz"]
    if per is not None:
        axes = [-(-n // max(int(per.get(a, 1)), 1)) for n, a in zip(axes, "xyz", strict=True)]
    return tuple(axes)


def _copies(run: dict, records: list[dict], index: dict) -> list[dict]:
    operations = _operations(run, "MEMORY_COPY")
    out = []
    for r in records:
        start, end = r["start_timestamp"], r["end_timestamp"]
        operation = operations.get(r.get("operation"), "")
        direction = next((v for k, v in COPY_NAMES.items() if operation.endswith(k)), "Unknown")
        agent = r.get("dst_agent_id" if direction == "HtoD" else "src_agent_id", {})
        out.append(
            {
                "start": start,
                "end": end,
                "name": f"Memcpy {direction}",
                "cat": "gpu_memcpy",
                "grid": None,
                "block": None,
                "device": index.get(agent.get("handle")),
                "stream": r.get("stream_id", {}).get("handle", NO_ID),
                "correlation": r.get("correlation_id", {}).get("internal", NO_ID),
                "bytes": float(r.get("bytes", np.nan)),
            }
        )
    return out


def _operations(run: dict, kind: str) -> dict[int, str]:
    for entry in run.get("strings", {}).get("buffer_records", []):
        if entry.get("kind") == kind:
            return dict(enumerate(entry.get("operations", [])))
    return {}


def _unread(run: dict, records: dict) -> list[str]:
    """What the run's document holds that is not read yet."""
    said = [why for key, why in NOT_READ.items() if records.get(key)]
    collected = run.get("callback_records", {}).get("counter_collection")
    return said + ([COUNTERS_NOT_READ] if collected or run.get("counters") else [])
