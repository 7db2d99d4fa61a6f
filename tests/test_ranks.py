"""One trace per rank: ranks by job, the straggler, collectives' start skew and wait."""

from __future__ import annotations

import dataclasses
import gzip
import json

import numpy as np
import pandas as pd
import pytest

import rooflint
from rooflint.core import ranks
from rooflint.core.ranks import Rank, RankTrace
from tests.helpers import shared

JOB = "nccl, world size 4"


def _trace(rank: int, steps: dict, starts: list[float], job: str = JOB, busy: float = 1.0):
    collectives = pd.DataFrame(
        {"kernel": ["ncclAllReduce"] * len(starts), "start_s": starts, "duration_s": 0.01}
    )
    return RankTrace(
        f"rank{rank}.json", Rank(rank, 4, job, 0.0), busy, 0.5, 1.5, 0.2, 0.1, steps, collectives
    )


def test_a_rank_number_met_twice_or_another_job_key_starts_another_job():
    a0, a1 = _trace(0, {}, []), _trace(1, {}, [])
    again0 = _trace(0, {}, [])
    other = _trace(1, {}, [], job="nccl, world size 8")
    grouped = ranks.jobs([a0, a1, again0, other])
    assert [[t.rank.rank for t in job] for job in grouped] == [[0, 1], [0], [1]]
    assert grouped[0] == [a0, a1] and grouped[1] == [again0] and grouped[2] == [other]


def test_straggler_by_hand():
    # rank 0 steps 1.00 + 1.10 s (mean 1.05), rank 1 1.20 + 1.00 (mean 1.10): rank 1 is 0.05 s
    # (4.76 %) behind; slowest in step 1 only (rank 0 is slower in step 2)
    job = [_trace(0, {"s1": 1.0, "s2": 1.1}, []), _trace(1, {"s1": 1.2, "s2": 1.0}, [])]
    s = ranks.straggler(job)
    assert s["rank"] == 1 and s["fastest_rank"] == 0
    assert s["time_s"] == pytest.approx(1.10) and s["behind_s"] == pytest.approx(0.05)
    assert s["slowest_in_steps"] == 1 and s["steps"] == ["s1", "s2"]
    line = ranks._straggler_line(s)
    assert line == (
        "straggler: rank 1, its steps 1.1 s on average (GPU span), 50 ms (4.8 %) longer than "
        "rank 0's; slowest in 1 of 2 steps"
    )


def test_skew_and_wait_by_hand():
    # two all-reduces: rank 0 starts them at 10.000 and 20.000 s, rank 1 at 10.003 and 19.999,
    # rank 2 at 10.001 and 20.010. Skews 3 ms and 11 ms: median 7 ms, max 11 ms. Waits for the
    # last: rank 0 3 + 10 = 13 ms, rank 1 0 + 11 = 11 ms, rank 2 2 + 0 = 2 ms; rank 1 is last in
    # the first, rank 2 in the second (a tie: the first rank of the tie, rank 1)
    job = [
        _trace(0, {}, [10.000, 20.000]),
        _trace(1, {}, [10.003, 19.999]),
        _trace(2, {}, [10.001, 20.010, 30.0]),  # a third one nobody else has: unmatched
    ]
    c = ranks.skew(job)
    assert c["matched"] == 2 and c["unmatched"] == 1
    assert c["skew_median_s"] == pytest.approx(0.007) and c["skew_max_s"] == pytest.approx(0.011)
    assert c["wait_s"] == pytest.approx({"0": 0.013, "1": 0.011, "2": 0.002})
    assert c["last_rank"] == 1 and c["last_in"] == 1


def _kernel_starts(path) -> np.ndarray:
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    return np.sort([e["ts"] for e in events if e.get("cat") == "kernel" and "nccl" in e["name"]])


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("job")
    for r in (0, 1):
        name = f"hta-2rank-sampled-rank-{r}.json.gz"
        (folder / name).write_bytes(shared(f"kineto/{name}").read_bytes())
    return folder, rooflint.report(folder, device="a100-sxm4-80gb")


def test_two_hta_ranks_as_a_folder(two_ranks):
    folder, result = two_ranks
    window = result.timeline["window"]
    assert (window["traces"], window["alike"]) == (2, True)  # both: ProfilerStep#551 to #552
    (job,) = result.timeline["ranks"]
    assert job["world_size"] == 128 and job["job"] == "nccl, world size 128"
    assert [r["rank"] for r in job["ranks"]] == [0, 1]
    for row, device in zip(job["ranks"], result.timeline["devices"], strict=True):
        assert row["busy_s"] == device["busy_s"] and row["idle_s"] == device["idle_s"]
        assert row["exposed_communication_s"] == device["exposed_communication_s"]
    # by hand from the raw traces: the 10 NCCL kernels of each rank in start order (µs on the
    # hosts' clocks), paired n-th with n-th: |t0 - t1| has median 37,589.5 µs and max 164,191 µs,
    # rank 1 starts later in 8 of 10; waits Σ(max - t) = 381,329 µs (rank 0), 132,166 µs (rank 1)
    t0 = _kernel_starts(folder / "hta-2rank-sampled-rank-0.json.gz")
    t1 = _kernel_starts(folder / "hta-2rank-sampled-rank-1.json.gz")
    assert len(t0) == len(t1) == 10
    c = job["collectives"]
    assert c["matched"] == 10 and c["unmatched"] == 0
    assert c["skew_median_s"] == pytest.approx(37_589.5e-6, abs=1e-6)
    assert c["skew_max_s"] == pytest.approx(164_191e-6, abs=1e-6)
    assert c["last_rank"] == 1 and c["last_in"] == 8 == int((t1 > t0).sum())
    assert c["wait_s"] == pytest.approx({"0": 381_329e-6, "1": 132_166e-6}, abs=1e-6)
    s = job["straggler"]
    means = {r["rank"]: r["step_mean_s"] for r in job["ranks"]}
    assert s["rank"] == 1 and s["behind_s"] == pytest.approx(means[1] - means[0])
    lines = ranks.lines(result.timeline["ranks"])
    assert lines[0].startswith("ranks: 2 traces of one job (nccl, world size 128)")
    assert lines[3].startswith("straggler: rank 1, its steps 612 ms on average (GPU span)")


def test_every_nccl_kernel_of_the_two_ranks_has_its_size_or_says_why(two_ranks):
    _, result = two_ranks
    launches = result.launches
    comm = launches[launches["kind"].astype(str) == "communication"]
    assert len(comm) == 20
    placed = comm["efficiency"].notna()
    small = comm["comm_bytes"] < 1 << 20  # latency-bound under 1 MiB, else on the NVLink roof
    assert (comm.loc[placed & small, "limiter"] == "latency").all()
    assert (comm.loc[placed & ~small, "limiter"] == "nvlink").all()
    # the others' record_param_comms holds a TensorList: no shape, so no size
    assert set(comm.loc[~placed, "reason"].astype(str)) <= {
        "no message size for the collective (record_param_comms)"
    }
    assert placed.sum() == comm["comm_bytes"].notna().sum() == 8


def test_group_by_rank_splits_the_kernel_groups(two_ranks):
    folder, result = two_ranks
    split = rooflint.report(folder, device="a100-sxm4-80gb", group_by="rank")
    assert len(split.kernels) > len(result.kernels)
    nccl = split.kernels[split.kernels["kernel"].str.startswith("ncclKernel_SendRecv")]
    assert {g.split()[1] for g in nccl["group"]} == {"0", "1"}  # "rank 0 ncclKernel_..."
    assert split.kernels["duration_s"].sum() == pytest.approx(result.kernels["duration_s"].sum())


def test_the_ranks_reach_json_and_markdown(two_ranks):
    folder, result = two_ranks
    from rooflint.reporters import json_report, markdown

    doc = json.loads(json_report.render(result))
    assert doc["timeline"]["ranks"][0]["straggler"]["rank"] == 1
    assert "straggler: rank 1" in markdown.render(result)


def test_two_jobs_are_reported_apart_and_say_the_groups_sum_them():
    job_a = [_trace(0, {"s": 1.0}, [1.0]), _trace(1, {"s": 1.2}, [1.1])]
    job_b = [_trace(0, {"s": 2.0}, [5.0], job="gloo, world size 2")]
    block = ranks.block(job_a + job_b)
    assert [len(j["ranks"]) for j in block] == [2, 1]
    assert block[1]["straggler"] is None and block[1]["collectives"] is None  # one rank alone
    text = ranks.lines(block)
    assert text[0].startswith("2 jobs in these inputs: their ranks and kernel groups are reported")
    assert text[1].startswith("job 1: 2 traces (nccl, world size 4)")
    assert any(t.startswith("job 2: 1 trace (gloo, world size 2)") for t in text)
    other = dataclasses.replace(job_b[0], source="gloo-rank0.json")
    assert ranks.job_of([*job_a, other]) == {
        "rank0.json": "job 1",
        "rank1.json": "job 1",
        "gloo-rank0.json": "job 2",
    }
    assert ranks.job_of(job_a) == {}  # one job: nothing to tell apart


def test_kernel_groups_of_two_jobs_are_never_summed(tmp_path):
    """HTA's two sampled ranks (nccl, world size 128) and its A100 NCCL trace (world size 2) in
    one folder: two jobs. Every kernel group holds one job's launches, and a kernel both jobs
    ran (PyTorch's fill kernel) is two groups whose times are each job's own sums."""
    names = [f"hta-2rank-sampled-rank-{r}.json.gz" for r in (0, 1)] + [
        "hta-a100-nccl-rank0.json.gz"
    ]
    for name in names:
        (tmp_path / name).write_bytes(shared(f"kineto/{name}").read_bytes())
    result = rooflint.report(tmp_path, device="a100-sxm4-80gb")
    assert [(j["label"], len(j["ranks"])) for j in result.timeline["ranks"]] == [
        ("job 1", 2),
        ("job 2", 1),
    ]
    launches, kernels = result.launches, result.kernels
    job = (
        launches["source"]
        .astype(str)
        .map(lambda s: "job 2" if s.endswith("hta-a100-nccl-rank0.json.gz") else "job 1")
    )
    assert (launches["job"].astype(str) == job).all()
    assert set(kernels["job"]) == {"job 1", "job 2"}
    assert kernels["group"].str.startswith(tuple(kernels["job"] + " ")).all()
    both = set(launches.loc[job == "job 1", "kernel"].astype(str)) & set(
        launches.loc[job == "job 2", "kernel"].astype(str)
    )
    name = sorted(both, key=len)[0]
    groups = kernels[kernels["kernel"] == name]
    assert set(groups["job"]) == {"job 1", "job 2"}
    for label, part in groups.groupby("job"):
        mine = launches[(job == label) & (launches["kernel"].astype(str) == name)]
        assert part["duration_s"].sum() == pytest.approx(mine["duration_s"].sum())
    assert kernels["duration_s"].sum() == pytest.approx(launches["duration_s"].sum())
    from rooflint.reporters import table

    shown = table.render(result, top=3)
    assert "job 1 · ncclKernel_SendRecv" in shown
    # the headline sums the three traces' windows and says so, naming no one trace's steps
    # (ProfilerStep#551 to #552 for job 1, #4 to #6 for job 2); per step pools 2 + 2 + 3 steps
    window = result.timeline["window"]
    assert (window["traces"], window["alike"]) == (3, False)
    text = " ".join(shown.split())
    assert "windows of 3 traces, summed (each trace's own steps, which differ)" in text
    assert "ProfilerStep#551" not in text.split("busy time:")[0]
    assert "per step (7 steps pooled over 3 traces)" in text


def test_one_trace_of_a_job_says_only_what_more_ranks_would_add():
    # One rank's trace: its busy time and idle share are the headline's; the ranks block of a job
    # of 4 ranks says what the other ranks' traces add, and a job of one rank says nothing.
    lone = ranks.block([_trace(2, {}, [0.0])])
    assert ranks.lines(lone) == [
        "rank 2 of a job of 4 ranks (nccl, world size 4): pass the other ranks' traces for the "
        "straggler view and the collectives' start skew"
    ]
    single = _trace(0, {}, [])
    single = dataclasses.replace(single, rank=Rank(0, 1, "nccl, world size 1", 0.0))
    assert ranks.lines(ranks.block([single])) == []
    assert ranks.block([single])[0]["ranks"][0]["busy_s"] == 1.0  # the JSON keeps the data
