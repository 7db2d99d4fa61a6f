"""The timeline layer: step windows, busy and idle time, the breakdown, against worked answers.

Interval sums are worked by hand for the small tables; for real traces busy time is computed
here independently (a plain-Python union of the kernel, copy and fill intervals read with json
from the trace) and compared with TraceLens's own `gpu_timeline.csv` for three traces
(../shared/fixtures/kineto/tracelens-known-answers/)."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pandas as pd
import pytest

from rooflint import parsers
from rooflint.core import timeline
from rooflint.core.errors import UsageError
from rooflint.core.timeline import Step
from tests.helpers import FIXTURES, plain_union, shared

# Trace time stamps are absolute (~1.4e12 µs): the plain unions below round each to ~2e-4 µs,
# and each run adds two such roundings; over up to a thousand runs they agree with rooflint's
# (kept from the trace's first GPU activity) to 1e-7 s (the xdit memset TraceLens leaves out
# is 1.9e-6 s).
CLOCK = 1e-7

GPU = ("kernel", "gpu_memcpy", "gpu_memset")
EXCERPT = FIXTURES / "kineto" / "hta-a100-nccl-backward-excerpt.json.gz"


def table(rows: list[tuple]) -> pd.DataFrame:
    """(start_s, duration_s, kind[, device, launch_s]) rows as a launch table."""
    frame = pd.DataFrame(
        rows, columns=["start_s", "duration_s", "kind", "device_index", "launch_s"][: len(rows[0])]
    )
    if "device_index" in frame:
        frame["device_index"] = frame["device_index"].astype("Int64")
    return frame


def test_union_counts_overlapping_streams_once():
    """[0,4) ∪ [1,2) ∪ [3,6) ∪ [8,9) = [0,6) + [8,9): 7 s; touching intervals join."""
    start = np.array([3.0, 0.0, 8.0, 1.0])
    end = np.array([6.0, 4.0, 9.0, 2.0])
    assert timeline.union_s(start, end) == 7.0
    assert timeline.union_s(np.array([0.0, 2.0]), np.array([2.0, 3.0])) == 3.0
    assert timeline.union_s(np.array([]), np.array([])) == 0.0


def test_breakdown_exposed_parts():
    """Compute [0,10), communication [8,14) (exposed: [10,14) = 4), memcpy [12,13) under the
    communication (exposed 0) and [20,22) alone (exposed 2), memset [14,15)."""
    frame = table(
        [
            (0.0, 10.0, "kernel"),
            (8.0, 6.0, "communication"),
            (12.0, 1.0, "memcpy"),
            (20.0, 2.0, "memcpy"),
            (14.0, 1.0, "memset"),
        ]
    )
    tl = timeline.build(frame, [])
    (device,) = tl.devices
    assert tl.window.kind == "trace"
    assert (tl.window.start_s, tl.window.end_s) == (0.0, 22.0)
    assert device.busy_s == 10 + 4 + 1 + 2  # [0,15) and [20,22)
    assert device.idle_s == 22 - 17
    assert device.computation_s == 10
    assert device.communication_s == 6
    assert device.exposed_communication_s == 4
    assert device.memcpy_s == 3
    assert device.exposed_memcpy_s == 2
    assert device.memset_s == 1
    assert device.kernel_sum_s == 10 + 6 + 1 + 2 + 1


def test_device_side_steps_window_and_outside_launches():
    """Two device-side steps [10,20) and [20,30); a warm-up kernel at 0 and one after 30 lie
    outside. Busy is per device: device 1's kernel overlapping device 0's counts apart."""
    frame = table(
        [
            (0.0, 5.0, "kernel", 0),  # warm-up: outside
            (10.0, 4.0, "kernel", 0),
            (12.0, 4.0, "kernel", 1),
            (21.0, 2.0, "kernel", 0),
            (31.0, 1.0, "kernel", 0),  # after the steps: outside
        ]
    )
    steps = [
        Step("ProfilerStep#7", 10.0, 20.0, "gpu"),
        Step("ProfilerStep#8", 20.0, 30.0, "gpu"),
        Step("ProfilerStep#7", 9.0, 19.0, "cpu"),  # the host side: not used when the GPU's is
    ]
    tl = timeline.build(frame, steps)
    assert tl.window.steps == ("ProfilerStep#7", "ProfilerStep#8")
    assert tl.window.side == "gpu"
    assert (tl.window.start_s, tl.window.end_s) == (10.0, 30.0)
    assert [d.device for d in tl.devices] == [0, 1]
    assert [d.busy_s for d in tl.devices] == [6.0, 4.0]
    assert [d.idle_s for d in tl.devices] == [14.0, 16.0]
    assert (tl.outside_launches, tl.outside_time_s) == (2, 6.0)
    assert tl.inside.tolist() == [False, True, True, True, False]
    assert [(s.name, s.busy_s, s.launches) for s in tl.steps] == [
        ("ProfilerStep#7", 8.0, 2),
        ("ProfilerStep#8", 2.0, 1),
    ]
    only = timeline.build(frame, steps, "8")
    assert only.window.steps == ("ProfilerStep#8",) and only.busy_s == 2.0
    whole = timeline.build(frame, steps, "none")
    assert whole.window.kind == "trace" and whole.outside_launches == 0


def test_host_side_step_holds_the_launches_it_issued():
    """A host-side step [0,5) issued kernels that ran at 4-9 and 10-12; the kernel issued at 6
    (after the step) belongs to no step although it ran at 12.5. The window is the step's GPU
    work, 4 to 12; ProfilerStep#2 issued nothing (torch.profiler's last, empty step)."""
    frame = table(
        [
            (4.0, 5.0, "kernel", 0, 1.0),
            (10.0, 2.0, "kernel", 0, 3.0),
            (12.5, 1.0, "kernel", 0, 6.0),
        ]
    )
    steps = [Step("ProfilerStep#1", 0.0, 5.0, "cpu"), Step("ProfilerStep#2", 5.5, 5.6, "cpu")]
    tl = timeline.build(frame, steps)
    assert tl.window.steps == ("ProfilerStep#1",) and tl.window.side == "cpu"
    assert (tl.window.start_s, tl.window.end_s) == (4.0, 12.0)
    assert tl.busy_s == 7.0 and tl.idle_s == 1.0
    assert tl.outside_launches == 1


def test_device_side_markers_give_way_to_the_host_steps():
    """Device-side annotations that hold under half the launches the host-side steps issued are
    markers: a 1-unit GPU-side step holding one of the three kernels the host step issued gives
    way to the host step, whose window is its GPU work, 4 to 12."""
    frame = table(
        [
            (4.0, 5.0, "kernel", 0, 1.0),
            (10.0, 2.0, "kernel", 0, 3.0),
            (11.0, 1.0, "kernel", 0, 4.0),
        ]
    )
    marker = Step("ProfilerStep#1", 4.0, 5.0, "gpu")
    steps = [Step("ProfilerStep#1", 0.0, 5.0, "cpu"), marker]
    tl = timeline.build(frame, steps)
    assert tl.window.side == "cpu" and (tl.window.start_s, tl.window.end_s) == (4.0, 12.0)
    assert tl.busy_s == 7.0 and tl.outside_launches == 0
    spans = Step("ProfilerStep#1", 4.0, 10.5, "gpu")  # holds two of the three: a span, kept
    assert timeline.build(frame, [steps[0], spans]).window.side == "gpu"


def test_rocm_step_markers_on_the_resnet_trace():
    """TraceLens's MI300X ResNet-18 trace: its gpu_user_annotation ProfilerStep#15-17 last 18.0,
    16.2 and 17.4 µs and hold 11 of the 3,653 GPU activities; the host-side steps issued all of
    them, so the window is theirs and nothing lies outside (before: a 38 ms window 99.9 % idle)."""
    profile = parsers.read(FIXTURES / "kineto" / "tracelens-mi300x-resnet18-train-excerpt.json.gz")
    gpu = [s for s in profile.steps if s.side == "gpu"]
    assert sorted(round((s.end_s - s.start_s) * 1e6, 1) for s in gpu) == [16.2, 17.4, 18.0]
    tl = timeline.build(profile.launches, profile.steps)
    assert tl.window.side == "cpu"
    assert tl.window.steps == ("ProfilerStep#15", "ProfilerStep#16", "ProfilerStep#17")
    assert tl.outside_launches == 0 and len(profile.launches) == 3653


@pytest.mark.parametrize("text", ["x", "6-", "5-3", "-1"])
def test_bad_steps_option(text):
    with pytest.raises(UsageError, match="--steps"):
        timeline.parse_steps(text)


def test_step_not_in_trace():
    frame = table([(10.0, 1.0, "kernel")])
    with pytest.raises(UsageError, match=r"its steps: 7"):
        timeline.build(frame, [Step("ProfilerStep#7", 10.0, 20.0, "gpu")], "9")


def test_no_start_times_no_timeline():
    assert timeline.build(pd.DataFrame({"duration_s": [1.0]}), []) is None


# ---- real traces ----------------------------------------------------------------------------


def events(path) -> list[dict]:
    with gzip.open(path) as fh:
        return json.load(fh)["traceEvents"]


def tracelens_window(raw: list[dict]) -> tuple[float, float]:
    """TraceLens's window (µs): the GPU-side ProfilerStep annotation, else the whole trace."""
    steps = [
        e
        for e in raw
        if e.get("cat") == "gpu_user_annotation" and e["name"].startswith("ProfilerStep#")
    ]
    if steps:
        return steps[0]["ts"], steps[0]["ts"] + steps[0]["dur"]
    gpu = [e for e in raw if e.get("cat") in GPU]
    return min(e["ts"] for e in gpu), max(e["ts"] + e["dur"] for e in gpu)


def known(name: str) -> dict[str, float]:
    path = shared(f"kineto/tracelens-known-answers/{name}-gpu_timeline.csv")
    with open(path) as fh:
        return {row["type"]: float(row["time ms"]) * 1e-3 for row in csv.DictReader(fh)}


KNOWN = [  # (trace, TraceLens answers, --steps that gives TraceLens's window)
    ("tracelens-h100-timesformer", "h100-timesformer", "all"),
    ("tracelens-mi300x-xdit-sd35-triton", "mi300x-xdit-sd35", "all"),
    ("tracelens-vllm-decode-graph-replay", "vllm-decode", "all"),
]


@pytest.mark.parametrize(("name", "answers", "steps"), KNOWN)
def test_busy_and_idle_against_tracelens(name, answers, steps):
    """Busy within 0.5 % and idle within 2 % of TraceLens's gpu_timeline.csv, and busy equal to
    the union computed here. timesformer: the GPU-side ProfilerStep#6 (159.99 ms); xdit-sd3.5:
    only a host-side ProfilerStep#3, whose 8,066 launches span the whole trace (TraceLens's
    window there); vllm replay: no steps, the whole trace. On xdit TraceLens's busy is 1.882 µs
    short: the trace's one gpu_memset ("Memset (Device)", 1.882 µs, overlapping nothing) is
    not in it; it is GPU time, and the union here counts it."""
    path = shared(f"kineto/{name}.json.gz")
    raw = events(path)
    lo, hi = tracelens_window(raw)
    inside = [
        (e["ts"], e["ts"] + e["dur"]) for e in raw if e.get("cat") in GPU and lo <= e["ts"] < hi
    ]
    profile = parsers.read(path)
    tl = timeline.build(profile.launches, profile.steps, steps)
    (device,) = tl.devices
    expected = known(answers)
    assert device.busy_s == pytest.approx(plain_union(inside) * 1e-6, abs=CLOCK)
    assert device.window_s == pytest.approx((hi - lo) * 1e-6, abs=CLOCK)
    assert device.busy_s == pytest.approx(expected["busy_time"], rel=0.005)
    assert device.idle_s == pytest.approx(expected["idle_time"], rel=0.02)
    assert tl.outside_launches == 0


def test_timesformer_breakdown_against_tracelens():
    """TraceLens counts fills as computation: its computation_time is the union of kernels and
    memsets (154.969 ms); its exposed memcpy is rooflint's (3.464 ms, overlapping nothing)."""
    path = shared("kineto/tracelens-h100-timesformer.json.gz")
    raw = events(path)
    expected = known("h100-timesformer")
    profile = parsers.read(path)
    (device,) = timeline.build(profile.launches, profile.steps).devices
    fills_and_kernels = plain_union(
        [(e["ts"], e["ts"] + e["dur"]) for e in raw if e.get("cat") in ("kernel", "gpu_memset")]
    )
    assert fills_and_kernels * 1e-6 == pytest.approx(expected["computation_time"], rel=1e-6)
    assert device.computation_s + device.memset_s == pytest.approx(
        fills_and_kernels * 1e-6, abs=CLOCK
    )  # no fill overlaps a kernel in this trace
    assert device.exposed_memcpy_s == pytest.approx(expected["exposed_memcpy_time"], rel=1e-6)


def test_excerpt_communication_overlap():
    """The A100 NCCL excerpt (fixtures/README.md): five allreduces on stream 40 beside the
    backward pass on stream 7. Exposed communication, worked here with the same unions from the
    JSON: |nccl ∪ compute| − |compute|."""
    raw = [e for e in events(EXCERPT) if e.get("cat") in GPU]
    nccl = [e for e in raw if e["name"].startswith("ncclKernel_")]
    compute = [e for e in raw if e["cat"] == "kernel" and e not in nccl]
    span = lambda es: [(e["ts"], e["ts"] + e["dur"]) for e in es]  # noqa: E731
    profile = parsers.read(EXCERPT)
    (device,) = timeline.build(profile.launches, profile.steps).devices
    assert len(nccl) == 5
    assert device.communication_s == pytest.approx(plain_union(span(nccl)) * 1e-6, abs=CLOCK)
    exposed = plain_union(span(nccl + compute)) - plain_union(span(compute))
    assert device.exposed_communication_s == pytest.approx(exposed * 1e-6, abs=CLOCK)
    assert 0 < device.exposed_communication_s < device.communication_s
    assert device.busy_s == pytest.approx(plain_union(span(raw)) * 1e-6, abs=CLOCK)
    assert device.busy_s < device.kernel_sum_s  # streams overlap: summed durations overcount


def test_nccl_trace_steps():
    """HTA's A100 NCCL trace: three host-side steps, each issuing 1,258 GPU activities (counted
    here: runtime calls inside each ProfilerStep whose correlation a GPU activity carries)."""
    path = shared("kineto/hta-a100-nccl-rank0.json.gz")
    raw = events(path)
    profile = parsers.read(path)
    tl = timeline.build(profile.launches, profile.steps)
    assert tl.window.steps == ("ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6")
    assert tl.window.side == "cpu"
    gpu = {e["args"]["correlation"]: e for e in raw if e.get("cat") in GPU}
    for step in tl.steps:
        (cpu,) = [e for e in raw if e.get("cat") == "user_annotation" and e["name"] == step.name]
        mine = [
            gpu[e["args"]["correlation"]]
            for e in raw
            if e.get("cat") == "cuda_runtime"
            and cpu["ts"] <= e["ts"] < cpu["ts"] + cpu["dur"]
            and e["args"].get("correlation") in gpu
        ]
        assert step.launches == len(mine) == 1258
        assert step.busy_s == pytest.approx(
            plain_union([(e["ts"], e["ts"] + e["dur"]) for e in mine]) * 1e-6, abs=CLOCK
        )


def test_reader_timeline_columns_and_communication():
    """The excerpt's launches carry start and issue times (s) and a kind; its five NCCL kernels
    are communication with their record_param_comms arguments: allreduce of Float (4 bytes)
    over a group of 2, message = In msg nelems × 4 (read here from the kernels' args)."""
    raw = [e for e in events(EXCERPT) if e.get("cat") in GPU]
    launches = parsers.read(EXCERPT).launches
    origin = min(e["ts"] for e in raw)  # times are kept from the first GPU activity
    assert launches["start_s"].tolist() == pytest.approx([(e["ts"] - origin) * 1e-6 for e in raw])
    nccl = [e["name"].startswith("ncclKernel_") for e in raw]
    kinds = launches["kind"].tolist()
    assert [k == "communication" for k in kinds] == nccl
    expected_kind = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    assert all(
        k == expected_kind[e["cat"]] for k, e, n in zip(kinds, raw, nccl, strict=True) if not n
    )
    comm = launches[np.array(nccl)]
    sizes = [4 * e["args"]["In msg nelems"] for e in raw if e["name"].startswith("ncclKernel_")]
    assert comm["comm_bytes"].tolist() == sizes
    assert set(comm["collective"]) == {"allreduce"} and set(comm["comm_ranks"]) == {2}
    assert launches.loc[~np.array(nccl), "comm_bytes"].isna().all()
    calls = {
        e["args"]["correlation"]: e["ts"] for e in events(EXCERPT) if e.get("cat") == "cuda_runtime"
    }
    issued = [(calls.get(e["args"]["correlation"], np.nan) - origin) * 1e-6 for e in raw]
    assert launches["launch_s"].to_numpy() == pytest.approx(np.array(issued), nan_ok=True)


def test_communication_bytes_from_the_operator(tmp_path):
    """An older trace: the NCCL kernel has no collective arguments; its record_param_comms
    operator (same External id) has them: 1,000 BFloat16 elements in, 8,000 out (an allgather
    over 8 ranks) -> the larger, 16,000 bytes."""
    doc = {
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
             "ts": 0, "dur": 20, "args": {"External id": 5, "In msg nelems": 1000,
                                         "Out msg nelems": 8000, "dtype": "BFloat16",
                                         "Group size": 8, "Collective name": "allgather"}},
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0,
             "tid": 9, "ts": 30, "dur": 10, "args": {"External id": 5, "correlation": 2,
                                                    "device": 0, "stream": 9}},
        ]
    }  # fmt: skip
    path = tmp_path / "comm.json"
    path.write_text(json.dumps(doc))
    (row,) = parsers.read(path).launches.itertuples()
    assert (row.kind, row.collective, row.comm_bytes, row.comm_ranks) == (
        "communication",
        "allgather",
        16000.0,
        8,
    )


def test_hta_temporal_breakdown_is_steps_4_to_5():
    """HTA's get_temporal_breakdown on its A100 NCCL trace, worked here by its own rules: with
    several ProfilerSteps it drops the last (ProfilerStep#6) and keeps the GPU activities whose
    runtime call came before that step began; kernel_time = last end - first start of those,
    idle = kernel_time - their union, compute = the union of the non-NCCL kernels. rooflint's
    --steps 4-5 has the same window, idle and computation."""
    path = shared("kineto/hta-a100-nccl-rank0.json.gz")
    raw = events(path)
    calls = {e["args"].get("correlation"): e["ts"] for e in raw if e.get("cat") == "cuda_runtime"}
    last = max(
        e["ts"] for e in raw if e.get("cat") == "user_annotation" and e["name"].startswith("Prof")
    )
    kept = [
        e
        for e in raw
        if e.get("cat") in GPU and calls.get(e["args"]["correlation"], float("inf")) < last
    ]
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in kept]
    kernel_time = max(b for _, b in spans) - min(a for a, _ in spans)
    idle = kernel_time - plain_union(spans)
    compute = plain_union(
        [
            (e["ts"], e["ts"] + e["dur"])
            for e in kept
            if e["cat"] == "kernel" and "nccl" not in e["name"]
        ]
    )
    profile = parsers.read(path)
    (device,) = timeline.build(profile.launches, profile.steps, "4-5").devices
    assert device.window_s == pytest.approx(kernel_time * 1e-6, abs=CLOCK)
    assert device.idle_s == pytest.approx(idle * 1e-6, abs=CLOCK)
    assert device.computation_s == pytest.approx(compute * 1e-6, abs=CLOCK)
