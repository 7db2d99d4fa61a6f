"""The roofline math: per-launch bound time, efficiency, limiter, headroom and verdict.

Pure column arithmetic over a canonical launch table and one device's ceilings, so it runs
unchanged on one partition of a distributed dataframe.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

import numpy as np
import pandas as pd

from rooflint.core import collectives, hostcopies, schema, speed_of_light, verdicts
from rooflint.core.device import HOST_PREFIX, Device, LinkKind
from rooflint.core.verdicts import LATENCY_THRESHOLD, VERDICTS

RESULT_COLUMNS = [
    "device_id",
    "flops",
    "intensity_dram",
    "achieved_flops_per_s",
    "achieved_bytes_per_s",
    "t_compute_s",
    "t_memory_s",
    "t_bound_s",
    "efficiency",
    "limiter",
    "headroom_s",
    "verdict",
    "reason",
    "comm_algbw_bytes_per_s",
    "comm_busbw_bytes_per_s",
]
RESULT_TEXT = ["device_id", "limiter", "verdict", "reason"]
RESULT_NUMBERS = [c for c in RESULT_COLUMNS if c not in RESULT_TEXT]  # float64


class Reason(StrEnum):
    """Why a launch cannot be placed on the roofline, in the words every format prints; where
    several apply, the first in this order is given."""

    NO_DEVICE = "no device ceilings (pass --device ID or --device-file)"
    NO_DRAM_ROOF = "device has no DRAM bandwidth"
    NO_DURATION = "missing duration"
    ZERO_DURATION = "zero duration"
    # ncu's percentages gave the compute side (pipes, SM) but none gave DRAM: no verdict, as
    # the memory side may be the larger (a decode kernel at 54 % ALU may be DRAM-bound).
    SM_ONLY = "missing DRAM bytes: ncu's percentages here cover only the SM"
    NO_DRAM_BYTES = "missing DRAM bytes"
    NO_FLOPS = "missing FLOP counters"
    # The GPU has no FLOP counters at all (MI100, RDNA): not a collection mistake. Such a
    # launch has no compute verdict: it may be compute-bound, and calling it memory- or
    # latency-bound would claim more than its counters say. It stays not analysable, and
    # reporters show its achieved DRAM bandwidth against the DRAM roof instead (the bytes and
    # duration were measured).
    NO_FLOP_COUNTERS = "no FLOP counters on this GPU"


def no_ceiling(cls: str) -> str:
    """The reason of a launch with operations of a class its device has no ceiling for."""
    return f"no ceiling for {cls} on this device"


# The `reason` column's codes: "" (analysable), each Reason, no_ceiling of each class, then why a
# collective has no bus bandwidth against a link roof.
REASONS = [
    "",
    *(r.value for r in Reason),
    *(no_ceiling(c) for c in schema.COMPUTE_CLASSES),
    *(m.value for m in collectives.Missing),
    *(m.value for m in hostcopies.Missing),
]

RESULT_UNITS = {
    "flops": "op",
    "intensity_dram": "op/byte",
    "achieved_flops_per_s": "op/s",
    "achieved_bytes_per_s": "byte/s",
    "t_compute_s": "s",
    "t_memory_s": "s",
    "t_bound_s": "s",
    "efficiency": "fraction of attainable",
    "headroom_s": "s",
    "comm_algbw_bytes_per_s": "byte/s",
    "comm_busbw_bytes_per_s": "byte/s",
}


def analyze(
    launches: pd.DataFrame, device: Device | None, latency_threshold: float = LATENCY_THRESHOLD
) -> pd.DataFrame:
    """The launch table with the roofline result columns added (see RESULT_COLUMNS).

    `device` has `id`, `compute` {class: Ceiling} in op/s and `memory` {level: Ceiling} in
    byte/s (a `rooflint.core.device.Device`); None means no ceilings are known.
    """
    return analyze_each(launches, [(device, len(launches))], latency_threshold)


def analyze_each(
    launches: pd.DataFrame, devices: list[tuple[Device | None, int]], latency_threshold: float
) -> pd.DataFrame:
    """`analyze` where consecutive rows have their own device: `devices` is [(device, row
    count)] in row order (a folder of profiles, each with its own clock-scaled ceilings).

    The math runs on numpy arrays taken once from the table, with each ceiling spread to a value
    per launch (NaN where that launch's device lacks it), and the result columns join it in one
    step: a per-column pandas assignment costs more than the arithmetic on a 10k-launch file.
    """
    if sum(n for _, n in devices) != len(launches):
        raise ValueError(f"devices cover {sum(n for _, n in devices)} rows of {len(launches)}")
    ceilings = _Ceilings(devices)
    duration = launches["duration_s"].to_numpy(dtype=float)
    dram_roof = ceilings.memory.get("dram", np.nan) * ceilings.dram_clock_ratio(launches)
    sol = speed_of_light.Estimates(launches, duration, dram_roof, ceilings.known)
    bytes_dram = sol.bytes_dram
    flops = schema.flops(launches).to_numpy()
    t_compute, compute_limiter, uncovered = _compute_time(launches, ceilings.compute)
    t_compute = np.where(sol.compute, sol.t_compute, t_compute)
    t_memory, memory_limiter = _memory_time(launches, ceilings.memory, {"dram": bytes_dram})
    reason = _reasons(launches, duration, bytes_dram, ceilings, uncovered, sol.compute)
    host = hostcopies.is_host_copy(launches)
    link = _Link(launches, duration, ceilings, _communication(launches), host)
    comm = link.comm  # collectives and host copies: judged against a link, not the roofline
    reason = (np.where(comm, link.reason, reason[0]), reason[1])
    ok = (reason[0] == 0) & ~comm
    with np.errstate(divide="ignore", invalid="ignore"):
        timed = np.where(duration > 0, duration, np.nan)
        t_bound = np.where(ok, np.fmax(t_compute, t_memory), link.t_bound)
        efficiency = np.where(ok | link.placed, t_bound / duration, np.nan)
        limiter, labels = _limiters(
            t_memory >= t_compute, compute_limiter, memory_limiter, ok, sol.limiter
        )
        columns = {
            "device_id": ceilings.ids,
            "flops": flops,
            "intensity_dram": flops / np.where(bytes_dram > 0, bytes_dram, np.nan),
            "achieved_flops_per_s": flops / timed,
            "achieved_bytes_per_s": bytes_dram / timed,
            "t_compute_s": t_compute,
            "t_memory_s": t_memory,
            "t_bound_s": t_bound,
            "efficiency": efficiency,
            "limiter": schema.strings(np.where(link.placed, link.limiter, limiter), labels),
            "headroom_s": np.where(ok | link.placed, np.maximum(duration - t_bound, 0.0), np.nan),
            "verdict": schema.strings(
                verdicts.classify(
                    efficiency, t_memory >= t_compute, ok, latency_threshold, communication=comm
                ),
                list(VERDICTS),
            ),
            "reason": schema.strings(*reason),
            "comm_algbw_bytes_per_s": link.algbw,
            "comm_busbw_bytes_per_s": np.where(host, np.nan, link.algbw * link.factor),
        }
    kept = sol.marked(launches[[c for c in launches.columns if c not in RESULT_COLUMNS]])
    results = pd.DataFrame(columns, index=launches.index, copy=False)
    return pd.concat([kept, results], axis=1)


def _communication(launches: pd.DataFrame) -> np.ndarray:
    """Launches a timeline reader marked as communication (kind column)."""
    if "kind" not in launches:
        return np.zeros(len(launches), dtype=bool)
    return (launches["kind"].astype(object) == verdicts.COMMUNICATION).to_numpy(dtype=bool)


class _Ceilings:
    """Each launch's ceilings, from [(device, row count)]: `compute` {class: op/s per launch},
    `memory` {level: byte/s per launch} (NaN where the launch's device has no such ceiling),
    `known` (the launch has a device) and `ids` (its device id, as a text column)."""

    def __init__(self, devices: list[tuple[Device | None, int]]):
        present = [d for d, _ in devices]
        counts = np.array([n for _, n in devices], dtype=np.int64)
        self.known = np.repeat(np.array([d is not None for d in present], dtype=bool), counts)
        ids = [str(d.id) if d is not None else "" for d in present]
        codes = np.array([i if d is not None else -1 for i, d in enumerate(present)], np.int64)
        self.ids = schema.strings(np.repeat(codes, counts), ids)
        self.compute = _spread(
            [_values(d.compute) if d is not None else {} for d in present], counts
        )
        self.memory = _spread([_values(d.memory) if d is not None else {} for d in present], counts)
        self.link, self.link_code = _link_roof(present, counts, "link", "")
        self.host_link, self.host_code = _link_roof(present, counts, "host_link", HOST_PREFIX)
        nominal = [getattr(d, "memory_clock_hz", 0.0) if d is not None else 0.0 for d in present]
        self.memory_clock = np.repeat(np.array(nominal, dtype=float), counts)

    def dram_clock_ratio(self, launches: pd.DataFrame) -> np.ndarray:
        """Each launch's measured DRAM clock over its device's nominal one: the DRAM roof at
        the clock the launch ran (1 where either clock is unknown)."""
        measured = launches["dram_clock_hz"].to_numpy(dtype=float)
        known = (measured > 0) & (self.memory_clock > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(known, measured / self.memory_clock, 1.0)


def _link_roof(
    present: list[Device | None], counts: np.ndarray, table: str, prefix: str
) -> tuple[np.ndarray, np.ndarray]:
    """Each launch's bandwidth of its device's link `table` ([link], [host_link]; NaN where it
    has none), and its limiter code (the link's kind after `prefix`; none where it has none)."""
    links = [getattr(d, table, None) for d in present]
    roof = _spread([{table: k.value} if k else {} for k in links], counts).get(table, np.nan)
    kinds = [_LIMITERS.index(prefix + k.kind.value) if k else _NO_LIMITER for k in links]
    each = np.broadcast_to(np.asarray(roof, dtype=float), (int(counts.sum()),))  # not copied
    return each, np.repeat(np.array(kinds, dtype=np.int64), counts)


def _spread(values: list[dict[str, float]], counts: np.ndarray) -> dict[str, np.ndarray | float]:
    """{key: the value on each launch}; one number where every launch has the same (one
    profile, or bandwidths no clock scales): 14 arrays of 200k launches would be 22 MB."""
    out = {}
    for key in dict.fromkeys(k for v in values for k in v):
        each = np.array([v.get(key, np.nan) for v in values], dtype=float)
        same = (each == each[0]).all() or np.isnan(each).all()
        out[key] = float(each[0]) if same else np.repeat(each, counts)
    return out


def _limiters(memory_wins, compute_limiter, memory_limiter, ok, estimated):
    """The limiter column's codes and labels: compute classes, then memory levels (offset), ""
    where none, then the pipes of compute times estimated from ncu's percentages (`estimated`:
    codes, labels)."""
    codes, labels = estimated
    compute_limiter = np.where(codes >= 0, codes + len(_LIMITERS), compute_limiter)
    limiter = np.where(
        memory_wins,
        np.where(memory_limiter >= 0, memory_limiter + len(schema.COMPUTE_CLASSES), -1),
        compute_limiter,
    )
    return np.where(ok, np.where(limiter >= 0, limiter, _NO_LIMITER), -1), _LIMITERS + labels


# The limiters: compute classes, memory levels, the link roofs (a collective's), latency (a
# collective's message under collectives.LATENCY_BYTES), the host links (a host copy's), a host
# copy's latency (under hostcopies.LATENCY_BYTES), "".
_LINKS = [k.value for k in LinkKind]
_HOST_LINKS = [HOST_PREFIX + k.value for k in LinkKind]
_LIMITERS = (
    schema.COMPUTE_CLASSES + schema.MEMORY_LEVELS + _LINKS + [collectives.LATENCY]
    + _HOST_LINKS + [hostcopies.LATENCY, ""]
)  # fmt: skip
_NO_LIMITER = len(_LIMITERS) - 1


class _Link:
    """Each collective against its device's link roof and each host copy against its host link:
    bus-bandwidth factor (1 for a copy), algorithm bandwidth, the time at the roof (bytes x
    factor / link bandwidth), the limiter (its link, or latency for a small message or copy) and
    the reason code where it has none (`placed` False); `comm` marks both."""

    def __init__(self, launches, duration, ceilings: _Ceilings, comm, host):
        link, host_link = ceilings.link, ceilings.host_link
        size = (
            launches["comm_bytes"].to_numpy(dtype=float)
            if "comm_bytes" in launches
            else np.full(len(launches), np.nan)
        )
        factor, why = collectives.judge(launches, duration, link)
        copy_factor, copy_why = hostcopies.judge(host, size, duration, host_link)
        self.factor = np.where(host, copy_factor, factor)
        reasons = np.where(host, np.asarray(copy_why, dtype=object), np.asarray(why, dtype=object))
        self.comm = comm | host
        with np.errstate(divide="ignore", invalid="ignore"):
            self.algbw = np.where(self.comm & (duration > 0), size / duration, np.nan)
            self.t_bound = size * self.factor / np.where(host, host_link, link)
        self.placed = self.comm & ~np.isnan(self.t_bound)
        small = size < collectives.LATENCY_BYTES
        small_copy = size < hostcopies.LATENCY_BYTES
        self.limiter = np.where(
            host,
            np.where(small_copy, _LIMITERS.index(hostcopies.LATENCY), ceilings.host_code),
            np.where(small, _LIMITERS.index(collectives.LATENCY), ceilings.link_code),
        )
        found, distinct = pd.factorize(reasons)  # each distinct reason looked up once
        codes = {r: i for i, r in enumerate(REASONS)}
        self.reason = np.array([codes[r] for r in distinct], dtype=np.int64)[found]


def _values(ceilings: Mapping) -> dict[str, float]:
    return {k: float(getattr(v, "value", v)) for k, v in ceilings.items() if getattr(v, "value", v)}


def _compute_time(frame: pd.DataFrame, compute: dict):
    """Σ ops_c / P_c over classes; the biggest term names the compute limiter.

    Returns (time, limiter, uncovered) where limiter is an index into COMPUTE_CLASSES (-1:
    none) and `uncovered` the index of a class with operations but no ceiling on the launch's
    device (which makes the launch not analysable), -1 where there is none.
    """
    n = len(frame)
    total = np.zeros(n)
    best = np.full(n, -1.0)
    limiter = np.full(n, -1, dtype=np.int16)
    uncovered = np.full(n, -1, dtype=np.int16)
    for i, cls in enumerate(schema.COMPUTE_CLASSES):
        ops = np.nan_to_num(frame["ops_" + cls].to_numpy(dtype=float), nan=0.0)
        peak = compute.get(cls, np.nan)  # NaN: no such ceiling on the launch's device
        lacking = np.isnan(peak)
        uncovered = np.where(lacking & (ops > 0) & (uncovered < 0), i, uncovered)
        if np.all(lacking):
            continue
        with np.errstate(invalid="ignore"):
            t = ops / peak  # NaN where the device lacks the class: never the limiter
        total += np.where(lacking, 0.0, t)
        better = t > best
        limiter = np.where(better, i, limiter)
        best = np.where(better, t, best)
    return total, limiter, uncovered


def _memory_time(frame: pd.DataFrame, memory: dict, given: dict):
    """max_l bytes_l / BW_l over levels that have both bytes and a bandwidth (NaN bandwidth:
    none on the launch's device); the limiter is an index into MEMORY_LEVELS (-1: none).
    `given` {level: bytes per launch} replaces the table's bytes of that level."""
    n = len(frame)
    worst = np.full(n, np.nan)
    limiter = np.full(n, -1, dtype=np.int16)
    for i, level in enumerate(schema.MEMORY_LEVELS):
        bw = memory.get(level)
        if bw is None:
            continue
        moved = given.get(level)
        moved = frame["bytes_" + level].to_numpy(dtype=float) if moved is None else moved
        t = moved / bw
        better = ~np.isnan(t) & (np.isnan(worst) | (t > worst))
        limiter = np.where(better, i, limiter)
        worst = np.where(better, t, worst)
    return worst, limiter


def _reasons(frame: pd.DataFrame, duration, bytes_dram, ceilings: _Ceilings, uncovered, timed):
    """Why each launch cannot be placed on the roofline, as (codes into REASONS, REASONS):
    code 0 (it can), else the first Reason that applies, else a class without a ceiling.
    `timed`: launches whose compute time ncu's percentages gave (no FLOP counters needed)."""
    ops_missing = schema.all_na(frame, schema.OPS) & ~timed
    no_counters = schema.lacks(frame, "ops", schema.Absence.NO_COUNTERS)
    applies = {
        Reason.NO_DEVICE: ~ceilings.known,
        Reason.NO_DRAM_ROOF: ceilings.known & np.isnan(ceilings.memory.get("dram", np.nan)),
        Reason.NO_DURATION: np.isnan(duration),
        Reason.ZERO_DURATION: ~np.isnan(duration) & (duration <= 0),
        Reason.SM_ONLY: np.isnan(bytes_dram) & timed,
        Reason.NO_DRAM_BYTES: np.isnan(bytes_dram),
        Reason.NO_FLOPS: ops_missing & ~no_counters,
        Reason.NO_FLOP_COUNTERS: ops_missing & no_counters,
    }
    reason = np.where(uncovered >= 0, len(Reason) + 1 + uncovered, 0)
    for code, why in reversed(list(enumerate(Reason, start=1))):
        reason = np.where(applies[why], code, reason)
    return reason, REASONS
