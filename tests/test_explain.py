"""Verdict sentences name what was not measured instead of concluding past the data."""

from __future__ import annotations

import pandas as pd
import pytest

from rooflint import pipeline, reporters
from rooflint.core import explain, ranking, schema
from rooflint.core.analysis import Reason
from rooflint.core.verdicts import LATENCY_BOUND, NOT_ANALYSABLE

from .conftest import FIXTURES, shared


def test_latency_without_vector_counters_does_not_claim_arithmetic_is_fine():
    text = explain.sentence(LATENCY_BOUND, 0.24, "dram", unmeasured="vector", vendor="nvidia")
    assert text.startswith("latency-bound as far as measured: 24 % of the nearest (DRAM) roof")
    assert "no vector FLOP counters, so arithmetic may be the limit" in text
    assert "neither bandwidth nor" not in text


def test_plain_latency_says_integer_work_is_not_counted():
    text = explain.sentence(LATENCY_BOUND, 0.3, "dram")
    assert "integer and other instructions are not counted" in text


def test_packed_half_caveat_on_nvidia_only():
    nvidia = explain.sentence(
        "compute-bound", 0.7, "vector_fp16", unmeasured="half", vendor="nvidia"
    )
    assert nvidia.endswith(
        "packed half math (HFMA2) counts as one FMA: FP16 FLOPs may be under-counted up to 2x"
    )
    assert "HFMA2" not in explain.sentence(
        "compute-bound", 0.7, "vector_fp16", unmeasured="half", vendor="amd"
    )


def test_unmeasured_flags_per_group():
    frame = schema.conform(
        pd.DataFrame(
            {
                "kernel": ["a", "a", "b", "c"],
                "grid": "(1, 1, 1)",
                "block": "(1, 1, 1)",
                "ops_vector_fp16": [10.0, None, None, None],
                "ops_matrix_fp16": [None, None, 5.0, None],
                "missing": ["", "", "ops_vector: no vector FLOP counters", "ops: none"],
            }
        )
    )
    group, values = ranking.group_codes(frame, ["kernel"])  # a, b, c: groups 0, 1, 2
    assert group.tolist() == [0, 0, 1, 2]
    assert list(values["kernel"]) == ["a", "b", "c"]
    assert ranking.unmeasured(frame, group).tolist() == ["half", "vector", ""]


def test_one_name_in_several_configurations_gets_numbered_ids():
    """Group ids are the first 6 hex digits of the SHA-1 of the kernel name; a name ranked in
    several launch configurations gets ".1", ".2", ... in the order of the group texts (here
    "k (1, 1, 1) ..." before "k (2, 1, 1) ..."), whatever their rank; a name alone gets none."""
    import hashlib

    out = pd.DataFrame(
        {
            "kernel": ["k", "m", "k"],
            "group": ["k (2, 1, 1) (32, 1, 1)", "m (1, 1, 1) (32, 1, 1)", "k (1, 1, 1) (32, 1, 1)"],
        }
    )
    k, m = (hashlib.sha1(n.encode()).hexdigest()[:6] for n in ("k", "m"))
    assert ranking.group_ids(out, ["kernel", "grid", "block"]) == [f"{k}.2", m, f"{k}.1"]


def test_a100_initialisers_are_not_called_latency_bound_beyond_the_data():
    """fixtures/ncu/a100-gemm-details.csv has no sm__sass_thread_inst_executed_op_* counters."""
    res = pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv")])
    md = reporters.render(res, "markdown")
    assert "neither bandwidth nor" not in md
    assert md.count("no vector FLOP counters, so arithmetic may be the limit") == 2
    assert set(res.kernels["unmeasured"]) == {"vector"}


def test_mi100_has_no_flop_verdict_but_its_dram_bandwidth():
    """MI100 (gfx908) has no typed FLOP counters: no compute verdict. vecCopy's DRAM share is
    the bytes over the time of its 3 dispatches against the MI100 datasheet's 1,228.8 GB/s."""
    res = pipeline.build([str(shared("rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv"))])
    launches = res.launches
    assert (launches["verdict"] == NOT_ANALYSABLE).all()
    assert (launches["reason"] == Reason.NO_FLOP_COUNTERS).all()
    share = launches["bytes_dram"].sum() / launches["duration_s"].sum() / 1228.8e9
    assert share == pytest.approx(0.58, abs=0.005)
    md = reporters.render(res, "markdown")
    assert (
        "no FLOP verdict: this GPU has no FLOP counters (as on MI100 and RDNA parts), so its "
        f"arithmetic cannot be placed; DRAM traffic ran at {share * 100:.0f} % of the DRAM roof"
    ) in md
    assert "missing FLOP counters" not in md
