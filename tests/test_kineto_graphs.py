"""CUDA/HIP graph replays (parsers/kineto_graphs.py, rooflint/graphs.py): the vLLM decode replay
trace paired with the capture trace of its graph, against the traces read here with gzip + json
and against TraceLens's gpu_timeline.csv for the same replay."""

from __future__ import annotations

import csv
import gzip
import json
import shutil

import pytest

import rooflint
from rooflint.parsers import kineto
from tests.helpers import shared

pytestmark = pytest.mark.e2e
REPLAY = "kineto/tracelens-vllm-decode-graph-replay.json.gz"
CAPTURE = "kineto/tracelens-vllm-decode-graph-capture.json.gz"
GRAPH_LAUNCH = 505113  # the replay's one hipGraphLaunch correlation


def _events(path) -> list[dict]:
    with gzip.open(path) as fh:
        return json.load(fh)["traceEvents"]


def _captured_by_hand(path) -> list[tuple[str, str]]:
    """(kernel, operator) of each launch call in the capture trace whose correlation no kernel
    has (captured, not run), in time order; the operator is the cpu_op with its External id."""
    events = _events(path)
    ran = {e["args"].get("correlation") for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ops = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    calls = sorted(
        (
            e
            for e in events
            if e.get("cat") == "cuda_runtime"
            and "LaunchKernel" in e["name"]
            and e["args"].get("correlation") not in ran
        ),
        key=lambda e: e["ts"],
    )
    return [(e["args"]["kernel"], ops[e["args"]["External id"]]) for e in calls]


@pytest.fixture(scope="module")
def paired():
    return rooflint.report(str(shared(REPLAY)), str(shared(CAPTURE)))


def test_each_replayed_kernel_gets_its_captured_operator(paired):
    """The replay's 421 kernels under hipGraphLaunch (correlation 505113), in start order, are
    the capture's 421 captured launches one by one: same kernel names, and each gets the
    operator that launched it at capture time."""
    replayed = sorted(
        (
            e
            for e in _events(shared(REPLAY))
            if e.get("cat") == "kernel" and e["args"].get("correlation") == GRAPH_LAUNCH
        ),
        key=lambda e: e["ts"],
    )
    expected = _captured_by_hand(shared(CAPTURE))
    assert len(replayed) == len(expected) == 421
    assert [e["name"] for e in replayed] == [k for k, _ in expected]
    launches = paired.launches
    graph = launches[launches["graph_replay"].fillna(False).astype(bool)]
    graph = graph.sort_values("start_s", kind="mergesort")
    assert graph["kernel"].astype(str).tolist() == [k for k, _ in expected]
    assert graph["op"].astype(str).tolist() == [op for _, op in expected]
    assert [p.source for p in paired.inputs] == [str(shared(REPLAY))]  # the capture lent, once


def test_shapes_reach_the_models(paired):
    """A replayed aten::addmm now has the capture's shapes, so a model and a verdict; at least
    90 % of the replayed kernels' time has an operator (all of it here)."""
    launches = paired.launches
    graph = launches[launches["graph_replay"].fillna(False).astype(bool)]
    addmm = graph[graph["op"] == "aten::addmm"]
    assert len(addmm) == 72 and addmm["flops_source"].eq("model").all()
    named = graph["op"].notna() & ~graph["op"].astype(str).str.endswith("GraphLaunch")
    assert graph.loc[named, "duration_s"].sum() / graph["duration_s"].sum() >= 0.9


def test_busy_and_idle_agree_with_tracelens(paired):
    """TraceLens's gpu_timeline.csv for this replay: busy 10.717697 ms, idle 0.025484 ms,
    computation 10.674507 ms, exposed memcpy 0.043190 ms: within 1 % (replayed kernels count as
    busy time like any other: no false idle)."""
    path = shared("kineto/tracelens-known-answers/vllm-decode-gpu_timeline.csv")
    with open(path, encoding="utf-8") as fh:
        ms = {r["type"]: float(r["time ms"]) * 1e-3 for r in csv.DictReader(fh)}
    (device,) = paired.timeline["devices"]
    assert device["busy_s"] == pytest.approx(ms["busy_time"], rel=0.01)
    assert device["idle_s"] == pytest.approx(ms["idle_time"], rel=0.01)
    assert device["computation_s"] == pytest.approx(ms["computation_time"], rel=0.01)
    assert device["exposed_memcpy_s"] == pytest.approx(ms["exposed_memcpy_time"], rel=0.01)


def test_a_capture_beside_the_replay_is_found(tmp_path):
    """The replay alone, in a folder with a capture_traces/ folder holding the capture: paired."""
    replay = tmp_path / "graph_execution.json.gz"
    shutil.copy(shared(REPLAY), replay)
    (tmp_path / "capture_traces").mkdir()
    shutil.copy(shared(CAPTURE), tmp_path / "capture_traces" / "graph_capture_rank_0.json.gz")
    launches = rooflint.report(str(replay)).launches
    assert (launches["op"] == "aten::addmm").sum() == 72


def test_without_the_capture_kernels_keep_time_and_name_and_the_note_says_what_to_pass(tmp_path):
    replay = tmp_path / "graph_execution.json.gz"
    shutil.copy(shared(REPLAY), replay)
    result = rooflint.report(str(replay))
    launches = result.launches
    graph = launches[launches["graph_replay"].fillna(False).astype(bool)]
    assert len(graph) == 421 and graph["duration_s"].notna().all()
    assert set(graph["op"].astype(str)) == {"hipGraphLaunch"}
    assert kineto.GRAPH_NOTE.format(421) in result.inputs[0].notes


def test_the_capture_alone_says_it_holds_captured_launches():
    profile = kineto.read(shared(CAPTURE))
    assert profile.captured_launches == 421
    assert kineto.CAPTURE_NOTE.format(421) in profile.notes
