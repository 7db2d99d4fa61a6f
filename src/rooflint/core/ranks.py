"""One trace per rank: each rank's time, the slowest rank's steps, and collectives' start skew.

Ranks of one job are traces whose `distributedInfo` agree (backend, world size, process groups)
and whose rank numbers differ; a rank number met twice starts another job. Jobs are reported
apart. Collectives are matched across a job's ranks n-th with n-th by kernel name; their start
times are compared on the hosts' clocks (Kineto's timestamps), which NTP keeps within about a
millisecond across nodes, so skews under that are noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rooflint.core.formatting import pct, si


@dataclass(frozen=True)
class Rank:
    """Which rank of which job a trace is: `job` tells jobs apart (backend, world size, process
    groups as the trace gives them), `origin_s` is the host-clock time (s) of its start_s 0."""

    rank: int
    world_size: int | None
    job: str
    origin_s: float


@dataclass(frozen=True)
class RankTrace:
    """One rank's trace over its window: its time and its collectives inside the window."""

    source: str
    rank: Rank
    busy_s: float
    idle_s: float
    window_s: float
    communication_s: float
    exposed_communication_s: float
    steps: dict[str, float]  # step name -> its window (s)
    collectives: pd.DataFrame  # kernel, start_s (on the host clock), duration_s; in start order


def jobs(traces: list[RankTrace]) -> list[list[RankTrace]]:
    """The traces by job, in input order: same job key and a rank number not yet taken."""
    out: list[list[RankTrace]] = []
    for trace in traces:
        home = next(
            (
                job
                for job in out
                if job[0].rank.job == trace.rank.job
                and trace.rank.rank not in {t.rank.rank for t in job}
            ),
            None,
        )
        if home is None:
            out.append([trace])
        else:
            home.append(trace)
    return [sorted(job, key=lambda t: t.rank.rank) for job in out]


def job_of(traces: list[RankTrace]) -> dict[str, str]:
    """Each trace's job as the kernel groups name it ("job 1", "job 2", ... in `jobs` order),
    by source; empty when the traces are of one job (nothing to tell apart)."""
    found = jobs(traces)
    if len(found) < 2:
        return {}
    return {t.source: label(n) for n, job in enumerate(found, 1) for t in job}


def label(n: int) -> str:
    """The name of the n-th job (from 1) in the kernel groups, the ranks block and its lines."""
    return f"job {n}"


def block(traces: list[RankTrace]) -> list[dict] | None:
    """The JSON `ranks` block: per job its ranks, its straggler and its collectives' skew; with
    several jobs, each job's `label` as its kernel groups' `job` names it ("job 1", ...)."""
    if not traces:
        return None
    found = jobs(traces)
    if len(found) < 2:
        return [_job(job) for job in found]
    return [{"label": label(n), **_job(job)} for n, job in enumerate(found, 1)]


def _job(job: list[RankTrace]) -> dict:
    first = job[0].rank
    return {
        "job": first.job,
        "world_size": first.world_size,
        "ranks": [
            {
                "rank": t.rank.rank,
                "source": t.source,
                "window_s": t.window_s,
                "busy_s": t.busy_s,
                "idle_s": t.idle_s,
                "communication_s": t.communication_s,
                "exposed_communication_s": t.exposed_communication_s,
                "step_mean_s": float(np.mean(list(t.steps.values()))) if t.steps else None,
            }
            for t in job
        ],
        "straggler": straggler(job),
        "collectives": skew(job),
    }


def straggler(job: list[RankTrace]) -> dict | None:
    """The rank whose steps are slowest (mean over the steps every rank has; the busy time where
    the traces have no common step), by how much against the fastest, and in how many steps it
    was the slowest."""
    if len(job) < 2:
        return None
    common = sorted(set.intersection(*(set(t.steps) for t in job)))
    if common:
        times = np.array([[t.steps[s] for s in common] for t in job])  # rank x step
        mean, measure = times.mean(axis=1), "step"
        slowest_in = np.bincount(times.argmax(axis=0), minlength=len(job))
    else:
        mean, measure = np.array([t.busy_s for t in job]), "busy"
        slowest_in = np.zeros(len(job), dtype=int)
    slow, fast = int(mean.argmax()), int(mean.argmin())
    return {
        "measure": measure,  # mean step window, or busy time
        "steps": common,
        "rank": job[slow].rank.rank,
        "time_s": float(mean[slow]),
        "fastest_rank": job[fast].rank.rank,
        "fastest_s": float(mean[fast]),
        "behind_s": float(mean[slow] - mean[fast]),
        "slowest_in_steps": int(slowest_in[slow]),
    }


def skew(job: list[RankTrace]) -> dict | None:
    """Collectives matched across the ranks (n-th with n-th of each kernel name, where every
    rank has it): start skew (last start - first start) and each rank's wait for the last."""
    if len(job) < 2:
        return None
    keyed = [_nth(t.collectives) for t in job]
    common = set.intersection(*(set(k.index) for k in keyed))
    if not common:
        return {"matched": 0, "unmatched": int(sum(len(k) for k in keyed))}
    order = sorted(common)
    starts = np.array([k.loc[order, "start_s"].to_numpy() for k in keyed])  # rank x collective
    last = starts.max(axis=0)
    skews = last - starts.min(axis=0)
    lateness = np.bincount(starts.argmax(axis=0), minlength=len(job))
    waits = (last - starts).sum(axis=1)
    late = int(lateness.argmax())
    return {
        "matched": len(order),
        "unmatched": int(sum(len(k) for k in keyed) - len(job) * len(order)),
        "skew_median_s": float(np.median(skews)),
        "skew_max_s": float(skews.max()),
        "last_rank": job[late].rank.rank,
        "last_in": int(lateness[late]),
        "wait_s": {str(t.rank.rank): float(w) for t, w in zip(job, waits, strict=True)},
    }


def _nth(collectives: pd.DataFrame) -> pd.DataFrame:
    """The collectives indexed by (kernel name, its n-th occurrence)."""
    frame = collectives.reset_index(drop=True)
    nth = frame.groupby("kernel", sort=False).cumcount()
    frame.index = pd.MultiIndex.from_arrays([frame["kernel"].to_numpy(), nth.to_numpy()])
    return frame


# ---- the lines every format shows ---------------------------------------------------------


def lines(block_: list[dict] | None) -> list[str]:
    """Per job: a line per rank, the straggler line, the collectives' skew line."""
    if not block_:
        return []
    if len(block_) == 1 and len(block_[0]["ranks"]) == 1:
        return _lone_rank(block_[0])
    out = []
    if len(block_) > 1:
        out.append(
            f"{len(block_)} jobs in these inputs: their ranks and kernel groups are reported "
            "apart, each group one job's (its name starts with the job's number)"
        )
    for n, job in enumerate(block_, 1):
        out.append(_job_line(n, job, len(block_)))
        out += [_rank_line(r) for r in job["ranks"]]
        out += [x for x in (_straggler_line(job["straggler"]), _skew_line(job["collectives"])) if x]
    return out


def _lone_rank(job: dict) -> list[str]:
    """One trace of one job: its time is the headline's; say only what more ranks would add
    (nothing for a job of one rank)."""
    world = job["world_size"]
    if not world or world < 2:
        return []
    return [
        f"rank {job['ranks'][0]['rank']} of a job of {world} ranks ({job['job']}): pass the "
        "other ranks' traces for the straggler view and the collectives' start skew"
    ]


def _job_line(n: int, job: dict, jobs_: int) -> str:
    count = len(job["ranks"])
    traces = f"{count} trace{'s' if count != 1 else ''}"
    splits = "(--group-by rank splits them)"
    if jobs_ == 1:
        return f"ranks: {traces} of one job ({job['job']}); the kernel groups sum them {splits}"
    return f"{label(n)}: {traces} ({job['job']}); its kernel groups sum its ranks {splits}"


def _rank_line(r: dict) -> str:
    idle = r["idle_s"] / r["window_s"] if r["window_s"] else float("nan")
    step = f", step mean {si(r['step_mean_s'], 's')}" if r["step_mean_s"] is not None else ""
    return (
        f"  rank {r['rank']}: busy {si(r['busy_s'], 's')}, idle {pct(idle, 1)}, exposed "
        f"communication {si(r['exposed_communication_s'], 's')} of "
        f"{si(r['communication_s'], 's')}{step} ({r['source']})"
    )


def _straggler_line(s: dict | None) -> str | None:
    if s is None:
        return None
    share = s["behind_s"] / s["fastest_s"] if s["fastest_s"] else float("nan")
    if s["measure"] == "step":
        return (
            f"straggler: rank {s['rank']}, its steps {si(s['time_s'], 's')} on average (GPU span), "
            f"{si(s['behind_s'], 's')} ({pct(share, 1)}) longer than rank {s['fastest_rank']}'s; "
            f"slowest in {s['slowest_in_steps']} of {len(s['steps'])} steps"
        )
    return (
        f"straggler: rank {s['rank']}, busy {si(s['time_s'], 's')}, {si(s['behind_s'], 's')} "
        f"({pct(share, 1)}) more than rank {s['fastest_rank']} (the traces share no step)"
    )


def _skew_line(c: dict | None) -> str | None:
    if c is None:
        return None
    if not c["matched"]:
        return f"collectives: none matched across the ranks ({c['unmatched']} unmatched)"
    waits = ", ".join(f"rank {r} {si(w, 's')}" for r, w in c["wait_s"].items())
    return (
        f"collectives: {c['matched']} matched across the ranks (n-th with n-th by kernel name; "
        f"{c['unmatched']} unmatched), start skew median {si(c['skew_median_s'], 's')}, max "
        f"{si(c['skew_max_s'], 's')} (host clocks); rank {c['last_rank']} started last in "
        f"{c['last_in']}; waiting for the last rank: {waits}"
    )
