"""Which CPU operator, annotation range and module launched each GPU activity of a trace."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .kineto_events import NO_ID, TraceEvents

NONE = -1
_SPAN, _MODULE, _OP, _CALL = 0, 1, 2, 3


@dataclass
class Enclosing:
    """Per item (operator or runtime call): the innermost enclosing operator (index, or -1),
    the annotation ranges around it ("outer/inner") and the nn.Module path ("Model.Layer_0")."""

    op: np.ndarray
    range: list[str]
    module: list[str]


@dataclass
class Links:
    """Per GPU activity: its owning operator (index into the ops, -1 for none), the operator's
    parent, range, module, and whether a CUDA graph replayed it."""

    owner: np.ndarray
    parent: np.ndarray
    range: list[str]
    module: list[str]
    graph: np.ndarray
    runtime: np.ndarray  # index of its runtime call, -1 when none was recorded


def sweep(events: TraceEvents) -> tuple[Enclosing, Enclosing]:
    """One pass over every thread's intervals in time order, keeping a stack of what is open:
    (what encloses each operator, what encloses each runtime call)."""
    spans, ops, calls = events.spans, events.ops, events.runtime
    kind = np.concatenate(
        [spans.get("kind"), np.full(len(ops), _OP), np.full(len(calls), _CALL)]
    ).astype(int)
    own = np.concatenate(
        [np.arange(len(spans)), np.arange(len(ops)), np.arange(len(calls))]
    ).astype(int)
    names = spans.get("name") + ops.get("name") + [""] * len(calls)
    ts = np.concatenate([spans.get("ts"), ops.get("ts"), calls.get("ts")])
    dur = np.nan_to_num(np.concatenate([spans.get("dur"), ops.get("dur"), np.zeros(len(calls))]))
    thread = pd.Series(
        list(
            zip(
                spans.get("pid") + ops.get("pid") + calls.get("pid"),
                spans.get("tid") + ops.get("tid") + calls.get("tid"),
                strict=True,
            )
        ),
        dtype=object,
    )
    codes = pd.factorize(thread)[0] if len(thread) else np.zeros(0, dtype=int)
    end = ts + dur
    order = np.lexsort((kind, -end, ts, codes))
    result = {_OP: _blank(len(ops)), _CALL: _blank(len(calls))}
    _walk(order, codes, ts, end, kind, own, names, result)
    return tuple(
        Enclosing(np.asarray(r[0], dtype=int), r[1], r[2]) for r in (result[_OP], result[_CALL])
    )


def _blank(n: int) -> tuple[list, list, list]:
    return [NONE] * n, [""] * n, [""] * n


def _walk(order, codes, ts, end, kind, own, names, result) -> None:
    """The stack walk: entries are (end, innermost op, range path, module path). The arrays are
    read as lists (indexing a numpy array per item was half the walk's time)."""
    codes, ts, end, kind, own = (np.asarray(a).tolist() for a in (codes, ts, end, kind, own))
    stack: list[tuple[float, int, str, str]] = []
    thread = None
    for i in order.tolist():
        if codes[i] != thread:
            thread, stack = codes[i], []
        start = ts[i]
        while stack and stack[-1][0] < start:
            stack.pop()
        top = stack[-1] if stack else (np.inf, NONE, "", "")
        k = kind[i]
        if k >= _OP:
            ops, ranges, modules = result[k]
            ops[own[i]], ranges[own[i]], modules[own[i]] = top[1], top[2], top[3]
        if k == _CALL:
            continue
        name = names[i]
        stack.append(
            (
                end[i],
                own[i] if k == _OP else top[1],
                (top[2] + "/" + name if top[2] else name) if k == _SPAN else top[2],
                (top[3] + "." + name if top[3] else name) if k == _MODULE else top[3],
            )
        )


def link(events: TraceEvents) -> Links:
    """Attribute each GPU activity: through its `External id` to the operator that recorded it
    (the innermost one), else through its `correlation` to the runtime call and the operator
    around that call; kernels launched by cudaGraphLaunch belong to the graph launch's operator."""
    around_ops, around_calls = sweep(events)
    gpu, ops, calls = events.gpu, events.ops, events.runtime
    runtime = _lookup(calls.get("correlation"), gpu.get("correlation"))
    graph = _graph_launch(calls.get("name"))[runtime]
    by_id = _lookup(ops.get("external"), gpu.get("external"))
    by_call = np.append(around_calls.op, NONE)[runtime]
    owner = np.where((by_id != NONE) & ~graph, by_id, by_call)
    parent = np.append(around_ops.op, NONE)[owner]
    from_op = owner != NONE
    ranges = _pick(from_op, around_ops.range, owner, around_calls.range, runtime)
    modules = _pick(from_op, _modules(events, around_ops), owner, around_calls.module, runtime)
    return Links(owner, parent, ranges, modules, graph, runtime)


def _plain(values) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


def _lookup(keys, wanted) -> np.ndarray:
    """Per value of `wanted`, the position of its first occurrence in `keys` (NONE where absent;
    absent ids, None or NO_ID, match nothing): sorted search over integer ids, else a dict."""
    if not (_ints(keys) and _ints(wanted)):
        first = _index(keys)
        return np.array([first.get(x, NONE) for x in _plain(wanted)], dtype=int)
    keys, wanted = np.asarray(keys), np.asarray(wanted)
    where = np.flatnonzero(keys != NO_ID)
    distinct, at = np.unique(keys[where], return_index=True)  # at: each one's first occurrence
    pos = np.searchsorted(distinct, wanted)
    hit = pos < len(distinct)
    hit[hit] = distinct[pos[hit]] == wanted[hit]
    if not len(at):
        return np.full(len(wanted), NONE, dtype=int)
    return np.where(hit, where[at[np.minimum(pos, len(at) - 1)]], NONE)


def _ints(values) -> bool:
    return isinstance(values, np.ndarray) and values.dtype.kind == "i"


def _graph_launch(names: list) -> np.ndarray:
    """Per runtime call and one more (none recorded), whether it is a CUDA/HIP graph launch:
    each distinct name read once."""
    codes, distinct = pd.factorize(pd.Series(names + [""], dtype=object))
    return np.array(["GraphLaunch" in n for n in distinct], dtype=bool)[codes]


def _index(keys) -> dict:
    """key -> position of its first occurrence (absent ids, None or NO_ID, left out)."""
    out: dict = {}
    for i, key in enumerate(_plain(keys)):
        if key is not None and key != NO_ID and key not in out:
            out[key] = i
    return out


def _modules(events: TraceEvents, around_ops: Enclosing) -> list[str]:
    """An operator's module: its `Module Hierarchy` (TorchScript traces), else its nn.Module
    path."""
    recorded = events.ops.get("module")
    return [
        r if isinstance(r, str) and r else m
        for r, m in zip(recorded, around_ops.module, strict=True)
    ]


def _pick(
    use_first: np.ndarray,
    first: list[str],
    at_first: np.ndarray,
    second: list[str],
    at_second: np.ndarray,
) -> list[str]:
    a = np.array(first + [""], dtype=object)[at_first]
    b = np.array(second + [""], dtype=object)[at_second]
    return np.where(use_first, a, b).tolist()
