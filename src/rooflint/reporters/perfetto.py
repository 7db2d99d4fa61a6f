"""Perfetto / chrome://tracing: the input's timeline written back, each launch with its verdict.

Chrome's trace-event JSON (the format Kineto writes and Perfetto's UI opens): one complete
("X") slice per launch on its device (a process) and stream (a thread), its `args` the verdict,
efficiency, limiter, headroom, operator and kernel group. chrome://tracing colours a slice by its
`cname`; Perfetto ignores `cname` and colours slices by name, so each stream has a sibling track
whose slices are named by verdict: one colour per verdict in either viewer. A counter track per
device gives the headroom summed up to each moment. Exports without timestamps (Nsight Compute,
rocprof) are laid end to end, kernel group by kernel group in the order the groups first appear,
and their tracks say so. The report's warnings, notes and accounting ride in `otherData`, and
each warning is also an instant event at the start of the timeline, where the viewer shows it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from rooflint.core import ranking, verdicts
from rooflint.core.version import __version__
from rooflint.reporters import common

# chrome://tracing's reserved colour names nearest each verdict's colour in core/verdicts.py.
CNAME = {
    verdicts.COMPUTE_BOUND: "rail_response",  # blue
    verdicts.MEMORY_BOUND: "yellow",  # orange
    verdicts.LATENCY_BOUND: "bad",  # red-violet
    verdicts.ABOVE_ROOF: "black",
    verdicts.NOT_ANALYSABLE: "grey",
    verdicts.COMMUNICATION: "good",  # green
}
LAID_END_TO_END = "no timestamps in the export: launches laid end to end by kernel group"
VERDICT_TRACK = 1_000_000  # tid offset of a stream's verdict track
UNTIMED_STREAM = 0  # the one track of an export without timestamps
ARGS = {  # launch column: its name in a slice's args
    "verdict": "verdict",
    "efficiency": "efficiency",
    "limiter": "limiter",
    "headroom_s": "headroom_s",
    "duration_s": "duration_s",
    "op": "operator",
    "kind": "kind",
    "grid": "grid",
    "block": "block",
    "reason": "reason",
}


def render(result, **_options) -> str:
    """The document as JSON, one event per line (a readable diff, and any viewer's parser)."""
    doc = document(result)
    events = ",\n".join(_json(event) for event in doc.pop("traceEvents"))
    rest = _json(doc)[1:]  # the other keys, after the events
    return '{"traceEvents": [\n' + events + "\n], " + rest + "\n"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def document(result) -> dict:
    """The trace as a dict: traceEvents, then what the report says about it."""
    launches = _laid_out(result)
    events = []
    for pid, ((source, device), part) in enumerate(
        launches.groupby(["source", "device_index"], sort=False, observed=True, dropna=False)
    ):
        events += _device_events(result, pid, source, device, part)
    return {
        "traceEvents": events + _warning_events(result),
        "displayTimeUnit": "ns",
        "otherData": _about(result),
    }


def _laid_out(result) -> pd.DataFrame:
    """Every launch (the window's, then those outside it) with `ts_us` / `dur_us`, the group id
    and the stream it is drawn on; untimed inputs laid end to end."""
    frames = [result.launches.assign(outside_window=False)]
    if len(result.outside_launches):
        frames.append(result.outside_launches.assign(outside_window=True))
    launches = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()
    launches["group_id"] = _group_ids(result, launches)
    launches["_advice"] = pd.Series(launches["group_id"]).map(_advice(result)).to_numpy()
    if "start_s" not in launches:
        launches["start_s"] = np.nan
    for column in ("stream", "device_index"):
        if column not in launches:
            launches[column] = pd.array([pd.NA] * len(launches), dtype="Int64")
    launches["device_index"] = launches["device_index"].astype("Int64").fillna(0)
    launches["source"] = launches["source"].astype("string").fillna("")
    duration = launches["duration_s"].astype("float64").fillna(0.0)
    start = launches["start_s"].astype("float64")
    untimed = start.isna().to_numpy()
    if untimed.any():
        start = start.copy()
        start[untimed] = _end_to_end(launches[untimed], duration[untimed])
    launches["ts_us"] = start * 1e6
    launches["dur_us"] = duration * 1e6
    launches["untimed"] = untimed
    stream = launches["stream"].astype("Int64")
    launches["tid"] = stream.mask(untimed, UNTIMED_STREAM).fillna(0)
    return launches


def _advice(result) -> dict[str, list[str]]:
    """Each kernel group's advice as the other formats give it (reporters/common.group_advice)."""
    out = {}
    for row in result.kernels.to_dict("records"):
        found = common.group_advice(result, row)
        if found:
            out[row["id"]] = [f"{a.rule}: {a.text} (from {a.evidence})" for a in found]
    return out


def _group_ids(result, launches: pd.DataFrame) -> np.ndarray:
    """Each launch's kernel group id, as the report's tables print it ("" for none)."""
    rows = ranking.launch_rows(launches, result.group_by, result.kernels)
    ids = np.asarray(result.kernels["id"].astype(str).tolist() + [""], dtype=object)
    return ids[rows]  # row -1: the "" after the last id


def _end_to_end(untimed: pd.DataFrame, duration: pd.Series) -> np.ndarray:
    """Start times for launches without one: per source and device, group after group in the
    order the groups first appear, each group's launches in input order."""
    order = untimed.assign(_d=duration.to_numpy(), _i=np.arange(len(untimed)))
    starts = np.zeros(len(untimed))
    for _, part in order.groupby(["source", "device_index"], sort=False, observed=True):
        codes = pd.factorize(part["group_id"])[0]
        ranked = part.iloc[np.argsort(codes, kind="stable")]
        ends = np.cumsum(ranked["_d"].to_numpy())
        starts[ranked["_i"].to_numpy()] = ends - ranked["_d"].to_numpy()
    return starts


def _device_events(result, pid: int, source: str, device, part: pd.DataFrame) -> list[dict]:
    events = [_meta(pid, None, "process_name", f"{source} · GPU {device}")]
    for tid in pd.unique(part["tid"]):
        label = LAID_END_TO_END if tid == UNTIMED_STREAM else f"stream {tid}"
        events.append(_meta(pid, int(tid), "thread_name", label))
        events.append(_meta(pid, int(tid) + VERDICT_TRACK, "thread_name", f"{label} · verdict"))
    events.append(_meta(pid, None, "process_sort_index", pid))
    for row in part.to_dict("records"):
        events += _slices(pid, row)
    return events + _headroom_counter(pid, part)


def _slices(pid: int, row: dict) -> list[dict]:
    """A launch's slice on its stream and its twin, named by verdict, on the verdict track."""
    verdict = row["verdict"] if isinstance(row["verdict"], str) else verdicts.NOT_ANALYSABLE
    args = {name: _plain(row.get(column)) for column, name in ARGS.items()}
    args = {k: v for k, v in args.items() if v is not None and v != ""}
    args["group"] = row["group_id"]
    if isinstance(row.get("_advice"), list):
        args["advice"] = row["_advice"]
    if row["outside_window"]:
        args["outside_window"] = True
    if row["untimed"]:
        args["placement"] = LAID_END_TO_END
    base = {"ph": "X", "pid": pid, "ts": _us(row["ts_us"]), "dur": _us(row["dur_us"])}
    tid = int(row["tid"])
    name = str(row["kernel"]) if isinstance(row["kernel"], str) else str(row.get("op", ""))
    return [
        {**base, "tid": tid, "name": name, "cat": verdict, "cname": CNAME[verdict], "args": args},
        {
            **base,
            "tid": tid + VERDICT_TRACK,
            "name": verdict,
            "cat": "verdict",
            "cname": CNAME[verdict],
            "args": {"kernel": name, "group": row["group_id"]},
        },
    ]


def _headroom_counter(pid: int, part: pd.DataFrame) -> list[dict]:
    """The headroom summed over the launches that have ended, at each launch's end (ms)."""
    end = (part["ts_us"] + part["dur_us"]).to_numpy()
    headroom = part["headroom_s"].astype("float64").fillna(0.0).to_numpy()
    order = np.argsort(end, kind="stable")
    total = np.cumsum(headroom[order]) * 1e3
    events = [{"ph": "C", "pid": pid, "ts": 0.0, "name": "headroom so far", "args": {"ms": 0.0}}]
    for ts, value in zip(end[order].tolist(), total.tolist(), strict=True):
        events.append(
            {"ph": "C", "pid": pid, "ts": _us(ts), "name": "headroom so far", "args": {"ms": value}}
        )
    return events


def _warning_events(result) -> list[dict]:
    """Each warning, visible in the viewer: a global instant event at time 0."""
    return [
        {"ph": "i", "s": "g", "pid": 0, "tid": 0, "ts": 0.0, "name": f"WARNING: {text}"}
        for text in common.warnings(result)
    ]


def _about(result) -> dict:
    """What every other format says around the launches: the headline, accounting, warnings,
    the readers' notes and the files skipped."""
    return {
        "tool": f"rooflint {__version__}",
        "headline": common.total_text(result),
        "accounting": common.accounting_lines(result),
        "timeline": common.timeline_lines(result),
        "warnings": common.warnings(result),
        "notes": common.notes(result),
        "skipped": [f"{path}: {reason}" for path, reason in result.skipped],
        "devices": common.device_line(result),
        "colours": {
            "chrome://tracing": "each slice's cname, by verdict",
            "Perfetto": "the '· verdict' track under each stream: slices named by verdict",
        },
    }


def _meta(pid: int, tid: int | None, name: str, value) -> dict:
    event = {"ph": "M", "pid": pid, "name": name, "args": {"name": value}}
    if name.endswith("sort_index"):
        event["args"] = {"sort_index": value}
    if tid is not None:
        event["tid"] = tid
    return event


def _us(value: float) -> float:
    return round(float(value), 3)  # to the nanosecond


def _plain(value):
    """A cell as JSON: None for missing, Python scalars for numpy's."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value if isinstance(value, str | int | bool) else str(value)
