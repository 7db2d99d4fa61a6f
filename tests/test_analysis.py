"""The roofline math on hand-built launches with round ceilings, every number worked by hand."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from rooflint.core import analysis, ranking, schema, verdicts
from rooflint.hardware import Ceiling, Device

# A round device: 10 TFLOP/s FP32 vector, 100 TFLOP/s FP16 tensor, 1 TB/s DRAM, 4 TB/s L2.
DEVICE = Device(
    id="round",
    name="Round GPU",
    vendor="nvidia",
    arch="9.9",
    profiler_names=(),
    sm_count=1,
    boost_clock_hz=1e9,
    source="test",
    compute={"vector_fp32": Ceiling(10e12, "test"), "matrix_fp16": Ceiling(100e12, "test")},
    memory={"dram": Ceiling(1e12, "test"), "l2": Ceiling(4e12, "test")},
)


def launches(*rows):
    frame = schema.conform(pd.DataFrame(rows))
    frame["source"] = "hand"
    return frame


def one(**row):
    return analysis.analyze(launches({"kernel": "k", "launch_id": 0, **row}), DEVICE).iloc[0]


def test_memory_bound_copy():
    # 8 GB moved at 1 TB/s takes 8 ms at best; it ran 10 ms -> 80 % of the DRAM roof
    r = one(duration_s=10e-3, bytes_dram=8e9, ops_vector_fp32=0.0)
    assert r["t_bound_s"] == pytest.approx(8e-3)
    assert r["efficiency"] == pytest.approx(0.8)
    assert r["limiter"] == "dram" and r["verdict"] == verdicts.MEMORY_BOUND
    assert r["headroom_s"] == pytest.approx(2e-3)


def test_compute_bound_vector_gemm():
    # 9e10 FP32 FLOP at 10 TFLOP/s = 9 ms; 1e9 B at 1 TB/s = 1 ms; ran 10 ms -> 90 %
    r = one(duration_s=10e-3, bytes_dram=1e9, ops_vector_fp32=9e10)
    assert r["efficiency"] == pytest.approx(0.9)
    assert r["limiter"] == "vector_fp32" and r["verdict"] == verdicts.COMPUTE_BOUND
    assert r["intensity_dram"] == pytest.approx(90.0)


def test_compute_bound_tensor_gemm():
    # 2*4096^3 = 1.374e11 FLOP on the 100 TFLOP/s tensor roof = 1.374 ms; ran 1.6 ms -> 85.9 %
    flops = 2 * 4096**3
    r = one(duration_s=1.6e-3, bytes_dram=3 * 4096**2 * 2, ops_matrix_fp16=float(flops))
    assert r["t_bound_s"] == pytest.approx(flops / 100e12)
    assert r["efficiency"] == pytest.approx(flops / 100e12 / 1.6e-3)
    assert r["limiter"] == "matrix_fp16" and r["verdict"] == verdicts.COMPUTE_BOUND


def test_mixed_precision_adds_compute_times():
    # 5e10 FP32 (5 ms) + 2e11 FP16 tensor (2 ms) = 7 ms > 1 ms of DRAM; ran 7 ms -> 100 %
    r = one(duration_s=7e-3, bytes_dram=1e9, ops_vector_fp32=5e10, ops_matrix_fp16=2e11)
    assert r["t_compute_s"] == pytest.approx(7e-3)
    assert r["efficiency"] == pytest.approx(1.0)
    assert r["limiter"] == "vector_fp32"  # the larger of the two compute terms


def test_zero_flop_memset_is_on_the_memory_roof():
    r = one(duration_s=2e-3, bytes_dram=1.5e9, ops_vector_fp32=0.0, ops_matrix_fp16=0.0)
    assert r["efficiency"] == pytest.approx(0.75) and r["verdict"] == verdicts.MEMORY_BOUND
    assert pd.isna(r["intensity_dram"]) or r["intensity_dram"] == 0


def test_l2_can_be_the_limiter():
    # DRAM 1e9 B -> 1 ms; L2 8e9 B at 4 TB/s -> 2 ms; ran 2.5 ms -> 80 % on L2
    r = one(duration_s=2.5e-3, bytes_dram=1e9, bytes_l2=8e9, ops_vector_fp32=0.0)
    assert r["limiter"] == "l2" and r["efficiency"] == pytest.approx(0.8)


def test_latency_bound_tiny_kernel():
    # 4 KB in 5 us: t_bound = 4 ns -> 0.08 % of the nearest (DRAM) roof
    r = one(duration_s=5e-6, bytes_dram=4096.0, ops_vector_fp32=1024.0)
    assert r["efficiency"] == pytest.approx(4096 / 1e12 / 5e-6 + 0.0, rel=0.03)
    assert r["verdict"] == verdicts.LATENCY_BOUND and r["limiter"] == "dram"


def test_threshold_is_configurable():
    row = launches(
        {
            "kernel": "k",
            "launch_id": 0,
            "duration_s": 10e-3,
            "bytes_dram": 5e9,
            "ops_vector_fp32": 0.0,
        }
    )
    assert analysis.analyze(row, DEVICE).iloc[0]["verdict"] == verdicts.LATENCY_BOUND  # 50 % < 60 %
    assert analysis.analyze(row, DEVICE, 0.4).iloc[0]["verdict"] == verdicts.MEMORY_BOUND


def test_above_roof_is_flagged_not_hidden():
    # 2e9 B in 1 ms would need 2 TB/s on a 1 TB/s device: 200 %
    r = one(duration_s=1e-3, bytes_dram=2e9, ops_vector_fp32=0.0)
    assert r["efficiency"] == pytest.approx(2.0) and r["verdict"] == verdicts.ABOVE_ROOF
    assert r["headroom_s"] == 0


def test_just_above_one_within_tolerance_is_not_above_roof():
    r = one(duration_s=1e-3, bytes_dram=1.04e9, ops_vector_fp32=0.0)
    assert r["verdict"] == verdicts.MEMORY_BOUND


def test_precision_without_a_ceiling_is_not_analysable():
    r = one(duration_s=1e-3, bytes_dram=1e6, ops_matrix_bf16=1e9)
    assert r["verdict"] == verdicts.NOT_ANALYSABLE
    assert r["reason"] == "no ceiling for matrix_bf16 on this device"
    assert pd.isna(r["efficiency"])


@pytest.mark.parametrize(
    "row, reason",
    [
        ({"bytes_dram": 1e6, "ops_vector_fp32": 1.0}, "missing duration"),
        ({"duration_s": 0.0, "bytes_dram": 1e6, "ops_vector_fp32": 1.0}, "zero duration"),
        ({"duration_s": 1e-3, "ops_vector_fp32": 1.0}, "missing DRAM bytes"),
        ({"duration_s": 1e-3, "bytes_dram": 1e6}, "missing FLOP counters"),
    ],
)
def test_not_analysable_reasons(row, reason):
    r = one(**row)
    assert r["verdict"] == verdicts.NOT_ANALYSABLE and r["reason"] == reason


def test_no_device_means_not_analysable_with_the_fix():
    frame = launches(
        {
            "kernel": "k",
            "launch_id": 0,
            "duration_s": 1e-3,
            "bytes_dram": 1e6,
            "ops_vector_fp32": 1.0,
        }
    )
    r = analysis.analyze(frame, None).iloc[0]
    assert r["verdict"] == verdicts.NOT_ANALYSABLE and "--device" in r["reason"]


# The round device at half its clock (a profile locked low): half of every compute ceiling.
HALF_CLOCK = dataclasses.replace(
    DEVICE,
    compute={k: Ceiling(v.value / 2, "test") for k, v in DEVICE.compute.items()},
)
NO_TENSOR = dataclasses.replace(
    DEVICE, id="vector-only", compute=dict(list(DEVICE.compute.items())[:1])
)
NO_DRAM = dataclasses.replace(DEVICE, id="no-dram", memory={"l2": DEVICE.memory["l2"]})


def test_each_launch_is_analysed_with_its_own_profiles_device():
    # a folder: the same two launches under five devices, one analysis over all ten rows
    gemm = {"kernel": "g", "duration_s": 2e-3, "bytes_dram": 1e9, "ops_matrix_fp16": 1e11}
    copy = {"kernel": "c", "duration_s": 2e-3, "bytes_dram": 1e9, "ops_vector_fp32": 0.0}
    devices = [DEVICE, HALF_CLOCK, None, NO_TENSOR, NO_DRAM]
    frame = launches(*({**row, "launch_id": i} for i in range(5) for row in (gemm, copy)))
    out = analysis.analyze_each(frame, [(d, 2) for d in devices], verdicts.LATENCY_THRESHOLD)
    # the gemm: 1e11 FLOP at 100 TFLOP/s = 1 ms against 1e9 B at 1 TB/s = 1 ms: 1 ms of 2 ms;
    # at half clock 2 ms of compute: on the roof, compute-bound
    assert list(out["t_bound_s"][:4]) == pytest.approx([1e-3, 1e-3, 2e-3, 1e-3])
    assert list(out["verdict"][:4]) == [
        verdicts.LATENCY_BOUND,
        verdicts.LATENCY_BOUND,
        verdicts.COMPUTE_BOUND,
        verdicts.LATENCY_BOUND,
    ]
    assert [None if pd.isna(d) else d for d in out["device_id"]] == ["round"] * 4 + [None] * 2 + [
        "vector-only"
    ] * 2 + ["no-dram"] * 2
    assert list(out["reason"][4:]) == [
        "no device ceilings (pass --device ID or --device-file)",
        "no device ceilings (pass --device ID or --device-file)",
        "no ceiling for matrix_fp16 on this device",
        "",  # the copy needs no tensor roof
        "device has no DRAM bandwidth",
        "device has no DRAM bandwidth",
    ]
    # and every row exactly as analysing its profile alone would give
    for i, device in enumerate(devices):
        alone = analysis.analyze(frame.iloc[2 * i : 2 * i + 2], device)
        pd.testing.assert_frame_equal(
            out.iloc[2 * i : 2 * i + 2].astype(object), alone.astype(object), check_exact=True
        )


def test_devices_must_cover_every_launch():
    frame = launches({"kernel": "k", "launch_id": 0, "duration_s": 1e-3})
    with pytest.raises(ValueError, match="cover 2 rows of 1"):
        analysis.analyze_each(frame, [(DEVICE, 2)], verdicts.LATENCY_THRESHOLD)


def test_ranking_by_headroom_not_by_efficiency():
    # A: 50 % efficient, 40 ms total -> 20 ms headroom; B: 5 % efficient, 0.1 ms -> 0.095 ms
    frame = launches(
        {
            "kernel": "A",
            "launch_id": 0,
            "duration_s": 20e-3,
            "bytes_dram": 10e9,
            "ops_vector_fp32": 0.0,
        },
        {
            "kernel": "A",
            "launch_id": 1,
            "duration_s": 20e-3,
            "bytes_dram": 10e9,
            "ops_vector_fp32": 0.0,
        },
        {
            "kernel": "B",
            "launch_id": 2,
            "duration_s": 0.1e-3,
            "bytes_dram": 5e6,
            "ops_vector_fp32": 0.0,
        },
    )
    ranked = ranking.rank(analysis.analyze(frame, DEVICE))
    assert list(ranked["kernel"]) == ["A", "B"]
    a = ranked.iloc[0]
    assert a["launches"] == 2 and a["headroom_s"] == pytest.approx(20e-3)
    assert a["efficiency"] == pytest.approx(0.5) and a["time_share"] == pytest.approx(40 / 40.1)
    assert ranked.iloc[1]["efficiency"] == pytest.approx(0.05)


def test_group_by_name_merges_launch_configurations():
    frame = launches(
        {
            "kernel": "A",
            "launch_id": 0,
            "grid": "(1, 1, 1)",
            "duration_s": 1e-3,
            "bytes_dram": 5e8,
            "ops_vector_fp32": 0.0,
        },
        {
            "kernel": "A",
            "launch_id": 1,
            "grid": "(2, 1, 1)",
            "duration_s": 1e-3,
            "bytes_dram": 5e8,
            "ops_vector_fp32": 0.0,
        },
    )
    analysed = analysis.analyze(frame, DEVICE)
    assert len(ranking.rank(analysed, "kernel")) == 2
    assert len(ranking.rank(analysed, "name")) == 1


def test_group_aggregates_worked_by_hand():
    # K: a DRAM launch (2 ms, 1 GB -> 1 ms on the 1 TB/s roof), an FP32 launch (1 ms, 5 GFLOP ->
    # 0.5 ms on 10 TFLOP/s) and one with no duration (not analysable). T: two 1 ms launches, FP32
    # first, DRAM second, 0.5 ms bound each: equal time on each limiter, so the name decides.
    # U: only not analysable launches.
    dram = {"bytes_dram": 1e9, "ops_vector_fp32": 0.0}
    fp32 = {"bytes_dram": 1e6, "ops_vector_fp32": 5e9}
    frame = launches(
        {"kernel": "K", "launch_id": 0, "duration_s": 2e-3, **dram},
        {"kernel": "T", "launch_id": 1, "duration_s": 1e-3, **fp32},
        {"kernel": "K", "launch_id": 2, "duration_s": 1e-3, **fp32},
        {"kernel": "U", "launch_id": 3, "duration_s": 1e-3, "ops_vector_fp32": 1.0},
        {"kernel": "K", "launch_id": 4, **dram},
        {
            "kernel": "T",
            "launch_id": 5,
            "duration_s": 1e-3,
            "bytes_dram": 0.5e9,
            "ops_vector_fp32": 0,
        },
    )
    ranked = ranking.rank(analysis.analyze(frame, DEVICE)).set_index("kernel")
    k, t, u = ranked.loc["K"], ranked.loc["T"], ranked.loc["U"]
    assert (k["launches"], k["analysed"]) == (3, 2)
    assert k["limiter"] == "dram"  # 2 ms of DRAM-limited time against 1 ms of FP32
    assert (k["duration_min_s"], k["duration_max_s"]) == (1e-3, 2e-3)
    assert k["duration_s"] == pytest.approx(3e-3)
    assert k["efficiency"] == pytest.approx(1.5e-3 / 3e-3)  # bound time over analysed time
    assert k["verdict"] == verdicts.LATENCY_BOUND and k["reason"] == "missing duration"
    assert k["headroom_s"] == pytest.approx(1.5e-3) and k["above_roof_launches"] == 0
    assert t["limiter"] == "dram" and t["efficiency"] == pytest.approx(0.5)
    assert (u["analysed"], u["reason"], u["verdict"]) == (0, "missing DRAM bytes", "not-analysable")
    assert pd.isna(u["limiter"]) and pd.isna(u["efficiency"]) and u["device_id"] == "round"
    assert list(ranked.index) == ["K", "T", "U"]  # 1.5 ms, 1 ms, no headroom
    assert ranked["headroom_share"].tolist()[:2] == pytest.approx([0.6, 0.4])
