"""Collectives against the link roof: NCCL's algorithm and bus bandwidth, verdict, headroom."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rooflint
from rooflint.core import analysis, collectives, explain
from rooflint.core.collectives import FACTORS, Pattern, pattern_of
from rooflint.hardware import get
from tests.helpers import FIXTURES, shared

EXCERPT = FIXTURES / "kineto" / "hta-a100-nccl-backward-excerpt.json.gz"
NVLINK3 = 300e9  # A100 SXM4: NVLink 600 GB/s both directions, 300 GB/s each way (test_links)


@pytest.fixture(scope="module")
def excerpt():
    return rooflint.report(EXCERPT)


def test_one_all_reduce_by_hand(excerpt):
    # The excerpt's first ncclKernel_AllReduce_RING_LL_Sum_float: dur 2520.607 µs, and its
    # record_param_comms arguments on the kernel: In/Out msg nelems 2,049,000, dtype Float
    # (4 bytes), Group size 2. Message: 2,049,000 x 4 = 8,196,000 bytes.
    # algBw = 8,196,000 B / 2520.607e-6 s = 3.2516 GB/s; all-reduce busBw = algBw x 2(n-1)/n
    # = algBw x 1 for n = 2. NVLink roof of the a100-sxm4-40gb the trace is identified as:
    # 300 GB/s per direction: 3.2516 / 300 = 1.084 %. Time at the roof: 8,196,000 x 1 / 300e9
    # = 27.32 µs; headroom 2520.607 - 27.32 = 2493.29 µs.
    launches = excerpt.launches
    comm = launches[launches["kind"].astype(str) == "communication"].iloc[0]
    assert comm["comm_bytes"] == 2_049_000 * 4
    assert comm["duration_s"] == pytest.approx(2520.607e-6)
    assert comm["comm_algbw_bytes_per_s"] == pytest.approx(3.25160e9, rel=1e-5)
    assert comm["comm_busbw_bytes_per_s"] == pytest.approx(3.25160e9, rel=1e-5)
    assert comm["efficiency"] == pytest.approx(0.010839, rel=1e-4)
    assert comm["t_bound_s"] == pytest.approx(27.32e-6, rel=1e-4)
    assert comm["headroom_s"] == pytest.approx(2493.287e-6, rel=1e-6)
    assert comm["limiter"] == "nvlink" and comm["verdict"] == "communication"
    assert get(comm["device_id"]).link.value == NVLINK3


def test_the_group_sentence_names_the_roof_and_its_bus_bandwidth(excerpt):
    from rooflint.reporters import common

    row = excerpt.kernels[excerpt.kernels["verdict"] == "communication"].iloc[0]
    # five all-reduces: Σ bytes x 1 / Σ time = Σ t_bound x 300 GB/s / Σ t
    assert row["comm_busbw_bytes_per_s"] == pytest.approx(
        row["t_bound_s"] * NVLINK3 / row["duration_s"]
    )
    text = common.kernel_sentence(excerpt, row)
    assert text.startswith("communication-bound at 3 % of the NVLink roof (NCCL bus bandwidth")
    assert "bus bandwidth 8.34 GB/s, messages 20.4 MB on average" in text


@pytest.mark.parametrize(
    "pattern, n, factor",
    [
        (Pattern.ALL_REDUCE, 8, 2 * 7 / 8),  # nccl-tests PERFORMANCE.md: 2(n-1)/n
        (Pattern.ALL_GATHER, 8, 7 / 8),  # (n-1)/n
        (Pattern.REDUCE_SCATTER, 4, 3 / 4),
        (Pattern.ALL_TO_ALL, 2, 1 / 2),
        (Pattern.BROADCAST, 8, 1.0),
        (Pattern.REDUCE, 8, 1.0),
        (Pattern.SEND_RECV, 128, 1.0),
    ],
)
def test_bus_factors(pattern, n, factor):
    assert FACTORS[pattern](n) == pytest.approx(factor)


def test_patterns_from_record_names_else_kernel_names():
    assert pattern_of("_allgather_base", None) is Pattern.ALL_GATHER
    assert pattern_of("allreduce", "ncclKernel_Broadcast_RING_LL") is Pattern.ALL_REDUCE
    assert pattern_of(None, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL") is (
        Pattern.REDUCE_SCATTER
    )
    assert pattern_of(None, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t") is Pattern.SEND_RECV
    assert pattern_of("wait", "ncclKernel_Broadcast_RING_LL_Sum_int8_t") is Pattern.BROADCAST
    assert pattern_of(None, "multimem_all_reduce_kernel") is None


def _reanalysed(excerpt, **columns):
    launches = excerpt.launches.copy()
    comm = launches["kind"].astype(str) == "communication"
    for name, value in columns.items():
        launches.loc[comm, name] = value
    device = get("a100-sxm4-40gb")
    return analysis.analyze(launches, device)[comm.to_numpy()]


def test_small_messages_are_latency_bound(excerpt):
    # 512 KiB all-reduces on 8 ranks: under collectives.LATENCY_BYTES (1 MiB)
    out = _reanalysed(excerpt, comm_bytes=512 * 1024.0, comm_ranks=8)
    first = out.iloc[0]
    assert first["limiter"] == collectives.LATENCY
    # busBw = 524,288 B / 2520.607 µs x 2 x 7 / 8; against 300 GB/s
    bus = 524_288 / 2520.607e-6 * 14 / 8
    assert first["comm_busbw_bytes_per_s"] == pytest.approx(bus)
    assert first["efficiency"] == pytest.approx(bus / NVLINK3)
    text = explain.sentence("communication", first["efficiency"], collectives.LATENCY)
    assert text.startswith("latency-bound collective at 0 % of the link roof: messages under 1 MiB")


def test_collectives_without_a_size_or_group_say_why(excerpt):
    out = _reanalysed(excerpt, comm_bytes=np.nan)
    assert set(out["reason"].astype(str)) == {collectives.Missing.NO_SIZE.value}
    assert out["efficiency"].isna().all() and out["verdict"].eq("communication").all()
    out = _reanalysed(excerpt, comm_ranks=pd.NA)
    assert set(out["reason"].astype(str)) == {collectives.Missing.NO_GROUP.value}
    text = explain.sentence("communication", float("nan"), None, collectives.Missing.NO_GROUP)
    assert "not placed against a link roof (no group size for the collective" in text


def test_legacy_record_param_comms_gives_the_message_from_its_input():
    # HTA's 2023 rank-0 trace: record_param_comms without message fields, its first input
    # [419430400] of 'unsigned char' (1 byte); the kernel, ncclKernel_SendRecv, is send/recv
    # (factor 1, no group size needed)
    result = rooflint.report(
        shared("kineto/hta-2rank-sampled-rank-0.json.gz"), device="a100-sxm4-80gb"
    )
    comm = result.launches[result.launches["kind"].astype(str) == "communication"]
    sized = comm[comm["comm_bytes"] == 419_430_400.0]
    assert len(sized) >= 1
    row = sized.iloc[0]
    assert row["comm_busbw_bytes_per_s"] == pytest.approx(419_430_400 / row["duration_s"])
    assert row["limiter"] == "nvlink"
