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
from collections.abc import Iterator

import numpy as np
import pandas as pd

from rooflint.core import ranking, schema, verdicts
from rooflint.core.errors import UsageError
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


CHUNK_ROWS = 2_000  # launches made into events at a time: bounds the writer's memory


def render(result, **_options) -> str:
    """The document as JSON, one event per line (a readable diff, and any viewer's parser)."""
    return b"".join(chunks(result)).decode("utf-8")


def chunks(result, **_options) -> Iterator[bytes]:
    """The document as consecutive pieces of UTF-8, CHUNK_ROWS launches' events at a time (a
    folder's launches kept on disk a file's table at a time: Result.pieces), so a caller can
    write a timeline of any size without holding it."""
    yield b'{"traceEvents": [\n'
    written = False
    for batch in _event_batches(result):
        if batch:
            text = ",\n".join(_json(event) for event in batch)
            yield ((",\n" if written else "") + text).encode("utf-8")
            written = True
    rest = _json({"displayTimeUnit": "ns", "otherData": _about(result)})[1:]
    yield ("\n], " + rest + "\n").encode("utf-8")


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def document(result) -> dict:
    """The trace as a dict: traceEvents, then what the report says about it."""
    return {
        "traceEvents": [event for batch in _event_batches(result) for event in batch],
        "displayTimeUnit": "ns",
        "otherData": _about(result),
    }


def _event_batches(result) -> Iterator[list[dict]]:
    """The events in document order, a batch at a time: each device's (a pid) in order of first
    appearance over the windows' launches and then those outside them (so a device seen only
    outside the windows comes after every other), then the warnings."""
    advice = _advice(result)
    pid = 0
    later = []  # (input, its devices with launches outside the window alone)
    for i, held in enumerate(_inputs(result)):
        launches = _laid_out(result, held, advice)  # the input let go once laid out
        alone = []
        for key, part in _devices(launches):
            if part["outside_window"].all():
                alone.append(key)
                continue
            yield from _device_events(pid, *key, part)
            pid += 1
        if alone:
            later.append((i, set(alone)))
        del launches
    for i, alone in later:  # that input's launches outside its window read again
        launches = _laid_out(result, [(result.launches.iloc[:0], _outside(result, i))], advice)
        for key, part in _devices(launches):
            if key in alone:
                yield from _device_events(pid, *key, part)
                pid += 1
    yield _warning_events(result)


def _devices(launches: pd.DataFrame) -> Iterator[tuple[tuple, pd.DataFrame]]:
    """Each (source, device_index) and its launches, in order of first appearance (one
    device's table is `launches` itself, not a copy)."""
    grouped = launches.groupby(["source", "device_index"], sort=False, observed=True, dropna=False)
    codes = grouped.ngroup().to_numpy()
    count = grouped.ngroups
    del grouped
    for code in range(count):
        part = launches if count == 1 else launches.iloc[np.flatnonzero(codes == code)]
        first = part.iloc[0]
        yield (first["source"], first["device_index"]), part
        del part, first


def _inputs(result) -> Iterator[list[tuple[pd.DataFrame, pd.DataFrame | None]]]:
    """[(the launches in the windows, those outside them)], a list the caller empties (so no
    frame here holds an input while it is laid out: a folder's piece and its laid-out copy
    were both held, ~2x one file): the whole tables, or a folder's kept on disk an input at a
    time where no source is in two inputs (each device's launches are then one input's: laid
    out from it alone, they are laid out as joined)."""
    pieces = result.pieces
    if pieces is not None and not pieces.outside and "outside_window" in result.summary.accounting:
        raise UsageError(
            "the timeline draws the launches outside the windows, which this Result did not "
            "keep: report the folder with launches='timeline' (Perfetto's rows)"
        )
    if pieces is None:
        yield [(result.launches, result.outside_launches)]
    elif _apart(pieces.file_sources, len(pieces.files)):
        start = 0
        for i in range(len(pieces.files)):
            window = pieces.piece(i, start)
            start += len(window)
            held = [(window, _outside(result, i))]
            del window
            yield held
    else:  # a source in several inputs: the inputs joined (every row in memory)
        yield [(schema.concat(list(pieces), ignore_index=True), _outside(result, None))]


def _outside(result, i: int | None) -> pd.DataFrame | None:
    """Input i's launches outside its window (None: every input's)."""
    pieces = result.pieces
    if pieces is None:
        return result.outside_launches
    if i is not None:
        return pieces.outside_piece(i)
    found = [t for t in map(pieces.outside_piece, range(len(pieces.files))) if t is not None]
    return schema.concat(found, ignore_index=True) if found else None


def _apart(file_sources: tuple[list, ...], inputs: int) -> bool:
    """Whether no source (as the timeline spells it: NA as "") is in two inputs."""
    if len(file_sources) != inputs:
        return False
    seen: set[str] = set()
    for sources in file_sources:
        mine = {"" if pd.isna(s) else str(s) for s in sources}
        if mine & seen:
            return False
        seen |= mine
    return True


def _laid_out(result, held: list, advice) -> pd.DataFrame:
    """The launches (`held`'s one (window, outside): the window's, then those outside it, taken
    from the list so that once joined they are let go) with `ts_us` / `dur_us`, the group id
    and the stream it is drawn on; untimed inputs laid end to end."""
    window, outside = held.pop()
    frames = [window.assign(outside_window=False)]
    if outside is not None and len(outside):
        frames.append(outside.assign(outside_window=True))
    del window, outside
    launches = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    del frames  # copy-on-write: the columns set below leave the input's table as it was
    launches["group_id"] = _group_ids(result, launches)
    launches["_advice"] = pd.Series(launches["group_id"]).map(advice).to_numpy()
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


def _device_events(pid: int, source: str, device, part: pd.DataFrame) -> Iterator[list[dict]]:
    events = [_meta(pid, None, "process_name", f"{source} · GPU {device}")]
    for tid in pd.unique(part["tid"]):
        label = LAID_END_TO_END if tid == UNTIMED_STREAM else f"stream {tid}"
        events.append(_meta(pid, int(tid), "thread_name", label))
        events.append(_meta(pid, int(tid) + VERDICT_TRACK, "thread_name", f"{label} · verdict"))
    events.append(_meta(pid, None, "process_sort_index", pid))
    yield events
    read = [c for c in SLICE_COLUMNS if c in part]  # not the table's other columns
    for start in range(0, len(part), CHUNK_ROWS):
        rows = part.iloc[start : start + CHUNK_ROWS][read].to_dict("records")
        yield [e for row in rows for e in _slices(pid, row)]
        del rows
    yield from _headroom_counter(pid, part)


# The columns a launch's slices are made of (_slices): a row of all ~60 columns as a dict held
# 10k rows x 60 Python objects (~60 MB of a 48 MB trace's timeline, its writer's peak).
SLICE_COLUMNS = list(
    dict.fromkeys([*ARGS, "kernel", "op", "group_id", "_advice", "outside_window", "untimed"])
) + ["ts_us", "dur_us", "tid"]


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


def _headroom_counter(pid: int, part: pd.DataFrame) -> Iterator[list[dict]]:
    """The headroom summed over the launches that have ended, at each launch's end (ms)."""
    end = (part["ts_us"] + part["dur_us"]).to_numpy()
    headroom = part["headroom_s"].astype("float64").fillna(0.0).to_numpy()
    order = np.argsort(end, kind="stable")
    ends, total = end[order], np.cumsum(headroom[order]) * 1e3
    yield [{"ph": "C", "pid": pid, "ts": 0.0, "name": "headroom so far", "args": {"ms": 0.0}}]
    for start in range(0, len(ends), CHUNK_ROWS):
        at = slice(start, start + CHUNK_ROWS)
        yield [
            {"ph": "C", "pid": pid, "ts": _us(ts), "name": "headroom so far", "args": {"ms": value}}
            for ts, value in zip(ends[at].tolist(), total[at].tolist(), strict=True)
        ]


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
