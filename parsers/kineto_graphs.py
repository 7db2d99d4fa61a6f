"""CUDA/HIP graph replays: each replayed kernel gets the operator that launched it at capture time.

A replay trace records a graph's kernels under one `cudaGraphLaunch`/`hipGraphLaunch` call (they
share its correlation) and no operator of their own. The trace recorded while the graph was
captured holds the launch calls of the same kernels, in the order they became the graph's nodes,
each with its operator (`External id`) and shapes, but no kernel ran: a captured launch is a
launch call whose correlation no GPU activity has. The k-th kernel of a replayed graph (in start
order) is the k-th node of a captured run of launches with the same length whose kernel names
agree one by one (the name is the check: a run whose names differ is not used). The name comes
from the launch call's `kernel` argument, which ROCm's HIP launch calls carry; a trace whose launch
calls name no kernel (CUDA's) has no captured launches to match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kineto_events import NO_ID, TraceEvents
from .kineto_link import NONE, sweep

LAUNCH = ("LaunchKernel", "ModuleLaunchKernel", "LaunchCooperativeKernel")


@dataclass
class Captured:
    """A capture trace's captured launches in node order: kernel name and operator (index into
    the capture's ops, -1 when none), and each operator's enclosing operator."""

    kernels: list[str]
    owner: np.ndarray
    parent: np.ndarray


def captured_rows(events: TraceEvents) -> list[int]:
    """The runtime calls that launched a kernel (named in their arguments) but no GPU activity:
    captured into a graph; in time order."""
    calls = events.runtime
    names, kernels = calls.get("name"), calls.get("kernel")
    if not any("Captur" in name for name in set(names)):  # cudaStreamBeginCapture, ...IsCapturing
        return []
    ran = set(events.gpu.get("correlation").tolist())
    correlation, ts = calls.get("correlation").tolist(), calls.get("ts")
    rows = [
        i
        for i, name in enumerate(names)
        if kernels[i]
        and any(w in name for w in LAUNCH)
        and "Graph" not in name
        and correlation[i] not in ran
    ]
    return sorted(rows, key=lambda i: ts[i])


def captured(events: TraceEvents) -> Captured:
    """The captured launches in node order, each with its operator."""
    rows = captured_rows(events)
    calls = events.runtime
    around_ops, around_calls = sweep(events)
    op_of = {x: i for i, x in enumerate(events.ops.get("external").tolist()) if x != NO_ID}
    external = calls.get("external")
    owner = np.array(
        [op_of.get(int(external[i]), int(around_calls.op[i])) for i in rows], dtype=int
    )
    parent = np.append(around_ops.op, NONE)[owner] if len(owner) else owner
    kernels = calls.get("kernel")
    return Captured([kernels[i] for i in rows], owner, parent)


def replayed_groups(events: TraceEvents, runtime: np.ndarray, graph: np.ndarray) -> list:
    """The replayed kernels of each graph launch, as GPU rows in start order."""
    ts = events.gpu.get("ts")
    groups: dict[int, list[int]] = {}
    for row in np.flatnonzero(graph).tolist():
        groups.setdefault(int(runtime[row]), []).append(row)
    return [sorted(rows, key=lambda r: ts[r]) for rows in groups.values()]


def match(names: list[str], groups: list[list[int]], capture: Captured) -> dict[int, int]:
    """GPU row -> captured node, for each replayed graph whose kernel names equal a captured run
    of launches one by one (the first such run)."""
    out: dict[int, int] = {}
    nodes = capture.kernels
    for rows in groups:
        wanted = [names[r] for r in rows]
        start = _run(nodes, wanted)
        if start is not None:
            out.update({r: start + k for k, r in enumerate(rows)})
    return out


def _run(nodes: list[str], wanted: list[str]) -> int | None:
    n = len(wanted)
    for start in range(len(nodes) - n + 1):
        if nodes[start] == wanted[0] and nodes[start : start + n] == wanted:
            return start
    return None


def lend(events: TraceEvents, capture: TraceEvents, runtime, graph) -> tuple[np.ndarray, ...]:
    """Append the capture's operators to `events.ops` and give each matched replayed kernel its
    captured operator: (owner, parent) per GPU row, -1 where none; and how many graphs and
    kernels matched, of how many replayed."""
    taken = captured(capture)
    groups = replayed_groups(events, runtime, graph)
    matched = match(events.gpu.get("name"), groups, taken)
    offset = len(events.ops)
    events.ops.extend(capture.ops)
    owner = np.full(len(events.gpu), NONE)
    parent = np.full(len(events.gpu), NONE)
    for row, node in matched.items():
        if taken.owner[node] != NONE:
            owner[row] = offset + taken.owner[node]
            parent[row] = offset + taken.parent[node] if taken.parent[node] != NONE else NONE
    whole = sum(1 for rows in groups if rows and rows[0] in matched)
    return owner, parent, np.array([whole, len(groups), len(matched), int(graph.sum())])
