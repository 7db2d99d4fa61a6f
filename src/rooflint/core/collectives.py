"""Collectives against the link roof: NCCL's algorithm and bus bandwidth of each collective.

nccl-tests' doc/PERFORMANCE.md defines them: algorithm bandwidth algBw = message bytes / time,
and bus bandwidth busBw = algBw x a factor of the collective and its group size n, "so that it
reflects how optimally the hardware is used" and compares with the link's bandwidth each way,
whatever the number of ranks. The message bytes are nccl-tests' `size`: the larger of a
collective's input and output (all-gather: the gathered output; reduce-scatter: the input).
"""

from __future__ import annotations

import re
from enum import StrEnum

import numpy as np
import pandas as pd

# Below this message size NCCL's time is latency (a few µs per ring or tree step), not bytes over
# the link: the all_reduce_perf curves published for NVLink systems (nccl-tests) reach a small
# part of their peak bus bandwidth under 1 MiB and approach it only from tens of MiB. A fixed
# threshold read off those curves, not a fit to this system: the report says so.
LATENCY_BYTES = 1 << 20
LATENCY = "latency"  # the limiter of a collective under LATENCY_BYTES


class Pattern(StrEnum):
    """How a collective moves its message, which sets its bus-bandwidth factor."""

    ALL_REDUCE = "all-reduce"
    ALL_GATHER = "all-gather"
    REDUCE_SCATTER = "reduce-scatter"
    ALL_TO_ALL = "all-to-all"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    SEND_RECV = "send/recv"


# busBw / algBw by pattern, of the group size n (nccl-tests doc/PERFORMANCE.md)
FACTORS = {
    Pattern.ALL_REDUCE: lambda n: 2 * (n - 1) / n,
    Pattern.ALL_GATHER: lambda n: (n - 1) / n,
    Pattern.REDUCE_SCATTER: lambda n: (n - 1) / n,
    Pattern.ALL_TO_ALL: lambda n: (n - 1) / n,
    Pattern.BROADCAST: lambda n: 1.0,
    Pattern.REDUCE: lambda n: 1.0,
    Pattern.SEND_RECV: lambda n: 1.0,
}
NEEDS_GROUP = {Pattern.ALL_REDUCE, Pattern.ALL_GATHER, Pattern.REDUCE_SCATTER, Pattern.ALL_TO_ALL}

# record_param_comms' "Collective name" (PyTorch's ProcessGroupNCCL), by pattern
NAMES = {
    Pattern.ALL_REDUCE: ("allreduce", "allreduce_coalesced", "all_reduce"),
    Pattern.ALL_GATHER: (
        "allgather", "_allgather_base", "all_gather", "all_gather_into_tensor",
        "allgather_coalesced", "allgather_into_tensor_coalesced",
    ),
    Pattern.REDUCE_SCATTER: (
        "reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor",
        "reduce_scatter_tensor_coalesced",
    ),
    Pattern.ALL_TO_ALL: ("alltoall", "alltoall_base", "all_to_all"),
    Pattern.BROADCAST: ("broadcast", "_broadcast_oop"),
    Pattern.REDUCE: ("reduce", "_reduce_oop"),
    Pattern.SEND_RECV: ("send", "recv", "recvAnysource"),
}  # fmt: skip
_BY_NAME = {name: pattern for pattern, names in NAMES.items() for name in names}
# NCCL and RCCL kernel names carry the collective (ncclKernel_AllReduce_RING_LL_Sum_float,
# ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL): the name of a record without one
KERNEL_WORDS = (
    (re.compile(r"AllReduce"), Pattern.ALL_REDUCE),
    (re.compile(r"AllGather"), Pattern.ALL_GATHER),
    (re.compile(r"ReduceScatter"), Pattern.REDUCE_SCATTER),
    (re.compile(r"AllToAll|Alltoall"), Pattern.ALL_TO_ALL),
    (re.compile(r"SendRecv|_Send_|_Recv_"), Pattern.SEND_RECV),
    (re.compile(r"Broadcast"), Pattern.BROADCAST),
    (re.compile(r"_Reduce_"), Pattern.REDUCE),
)


class Missing(StrEnum):
    """Why a collective has no bus bandwidth, in the words every format prints."""

    NO_SIZE = "no message size for the collective (record_param_comms)"
    NO_GROUP = "no group size for the collective (record_param_comms)"
    NO_PATTERN = "collective not known (record_param_comms name or NCCL kernel name)"
    NO_LINK = "device has no link roof"
    NO_DURATION = "missing duration"


def pattern_of(collective: str | None, kernel: str | None) -> Pattern | None:
    """The pattern of a collective: from record_param_comms' name, else the kernel's name."""
    if collective and collective in _BY_NAME:
        return _BY_NAME[collective]
    for words, pattern in KERNEL_WORDS:
        if kernel and words.search(kernel):
            return pattern
    return None


def judge(
    launches: pd.DataFrame, duration: np.ndarray, link: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Per launch, busBw / algBw of its collective (NaN where it has none against a link roof:
    no collective, or the reason given) and that reason ("" where there is none)."""
    factor, reasons = np.full(len(launches), np.nan), [""] * len(launches)
    if "collective" not in launches:
        return factor, reasons
    collective = launches["collective"].astype(object).to_numpy()
    kernel = launches["kernel"].astype(object).to_numpy()
    ranks = pd.to_numeric(launches["comm_ranks"], errors="coerce").to_numpy(dtype=float)
    size = launches["comm_bytes"].to_numpy(dtype=float)
    for row in np.flatnonzero(_is_comm(launches)).tolist():
        pattern = pattern_of(_text(collective[row]), _text(kernel[row]))
        n = ranks[row]
        why = [
            (np.isnan(link[row]), Missing.NO_LINK),
            (not duration[row] > 0, Missing.NO_DURATION),
            (not size[row] > 0, Missing.NO_SIZE),
            (pattern is None, Missing.NO_PATTERN),
            (pattern in NEEDS_GROUP and not n >= 1, Missing.NO_GROUP),
        ]
        reasons[row] = next((str(reason) for bad, reason in why if bad), "")
        if not reasons[row] and pattern is not None:
            factor[row] = FACTORS[pattern](n if n >= 1 else 1.0)
    return factor, reasons


def _is_comm(launches: pd.DataFrame) -> np.ndarray:
    if "kind" not in launches:
        return np.zeros(len(launches), dtype=bool)
    return (launches["kind"].astype(object) == "communication").to_numpy(dtype=bool)


def _text(value) -> str | None:
    return value if isinstance(value, str) else None
