"""Verdicts from ncu's speed-of-light percentages where an export has no DRAM byte or FLOP
counters (issue 30 part 2): DRAM bytes from the DRAM throughput %, the compute side from the
busiest pipe (else the SM throughput %), NVIDIA's rule through core.verdicts, and every format
saying it is an estimate and what to collect."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pytest

import rooflint
from rooflint import reporters
from rooflint.core import analysis, schema, speed_of_light
from rooflint.core.verdicts import COMPUTE_BOUND, LATENCY_BOUND, MEMORY_BOUND, NOT_ANALYSABLE
from tests.helpers import B200_RAW, FIXTURES, shared

NVTX_RAW = FIXTURES / "ncu" / "rtx3070-nvtx-raw.csv"
DAXPY_DETAILS = FIXTURES / "ncu" / "rtx3070-nvtx-details-all_daxpy.csv"
# RTX 3070: 448 GB/s over 256 bits, so a nominal DRAM clock of 448e9 / 32 / 2 = 7.0 GHz
# (hardware/devices/rtx-3070.toml); a measured DRAM clock scales the DRAM roof by clock / 7.0 GHz.
RTX3070_DRAM, RTX3070_DRAM_CLOCK = 448e9, 7.0e9


class _Toy:
    """A device without a DRAM clock: the DRAM roof as given."""

    id = "toy"
    compute = {"vector_fp32": 1e12}
    memory = {"dram": 1e11}


def _sol(dram, pipe, sm=np.nan, pipe_name="tensor"):
    frame = schema.conform(
        pd.DataFrame({"kernel": ["k"], "duration_s": [1e-3], "missing": [""]}, index=[0])
    )
    frame["dram_throughput"] = [dram]
    frame["sm_throughput"] = [sm]
    frame["pipe_utilisation"] = [pipe]
    frame["pipe"] = schema.text(pd.Series([pipe_name if pipe == pipe else None]))
    return analysis.analyze(frame, _Toy()).iloc[0]


@pytest.mark.parametrize(
    "dram, pipe, verdict, limiter, efficiency",
    [
        (0.88, 0.30, MEMORY_BOUND, "dram", 0.88),  # memory % dominates and is high
        (0.30, 0.70, COMPUTE_BOUND, "pipe_tensor", 0.70),  # compute % dominates and is high
        (0.55, 0.59, LATENCY_BOUND, "pipe_tensor", 0.59),  # both under the 60 % threshold
    ],
)
def test_nvidias_rule_on_the_percentages(dram, pipe, verdict, limiter, efficiency):
    """t_memory = dram x 1e11 B/s x 1 ms / 1e11 B/s = dram x 1 ms and t_compute = pipe x 1 ms,
    so the efficiency is the larger percentage and core.verdicts' rule is NVIDIA's."""
    row = _sol(dram, pipe)
    assert row["verdict"] == verdict and row["limiter"] == limiter
    assert row["efficiency"] == pytest.approx(efficiency, rel=1e-12)
    assert row["bytes_dram"] == pytest.approx(dram * 1e11 * 1e-3, rel=1e-12)
    assert row["flops"] != row["flops"]  # NaN: a pipe's share is never FLOPs
    assert row["bytes_source"] == "throughput_pct" and row["compute_source"] == "pipe_utilisation"


def test_the_sm_throughput_stands_in_without_pipes():
    row = _sol(0.20, np.nan, sm=0.75)
    assert (row["verdict"], row["limiter"]) == (COMPUTE_BOUND, "sm")
    assert row["efficiency"] == pytest.approx(0.75) and row["compute_source"] == "sm_throughput_pct"


def test_the_sm_side_alone_is_not_analysable_with_its_reason():
    row = _sol(np.nan, 0.54, pipe_name="alu")
    assert row["verdict"] == NOT_ANALYSABLE and row["reason"] == analysis.Reason.SM_ONLY


def test_raw_page_daxpy_by_hand():
    """rtx3070-nvtx-raw.csv, launch 1 (daxpy_kernel): gpu__dram_throughput 90.717411 %,
    dram__cycles_elapsed.avg.per_second 6.903955 GHz, gpu__time_duration 249.216 us, busiest
    pipe sm__pipe_fp64_cycles_active 12.035369 % (= sm__throughput).
    DRAM roof at its clock: 448e9 x 6.903955 / 7.0 = 441.853 GB/s;
    bytes = 0.90717411 x 441.853e9 x 249.216e-6 = 99.90 MB; efficiency = 0.90717411 x
    6.903955 / 7.0 = 0.8947 of the DRAM roof: memory-bound (the compute side is 12 %)."""
    result = rooflint.report(NVTX_RAW)
    daxpy = result.launches.iloc[1]
    roof = RTX3070_DRAM * 6.903955e9 / RTX3070_DRAM_CLOCK
    assert daxpy["bytes_dram"] == pytest.approx(0.90717411 * roof * 249.216e-6, rel=1e-6)
    assert daxpy["efficiency"] == pytest.approx(0.90717411 * 6.903955 / 7.0, rel=1e-6)
    assert daxpy["t_compute_s"] == pytest.approx(0.12035369 * 249.216e-6, rel=1e-6)
    assert (daxpy["verdict"], daxpy["limiter"], daxpy["pipe"]) == (MEMORY_BOUND, "dram", "fp64")
    assert speed_of_light.DRAM_NOTE in daxpy["notes"]
    assert result.launches["verdict"].tolist() == [MEMORY_BOUND] * 3


def test_details_page_by_display_name_gives_the_same_launch():
    """The daxpy launch's Speed Of Light section of nvtx-details-all.csv, labels and rounded
    auto units: DRAM Throughput 90.72 %, DRAM Frequency 6.90 GHz, Duration 249.22 us, SM: Pipe
    Fp64 Cycles Active 12.04 %. bytes = 0.9072 x 448e9 x 6.90 / 7.0 x 249.22e-6 = 99.84 MB,
    efficiency 0.9072 x 6.90 / 7.0 = 0.8942."""
    launch = rooflint.report(DAXPY_DETAILS).launches.iloc[0]
    assert launch["bytes_dram"] == pytest.approx(0.9072 * 448e9 * 6.90 / 7.0 * 249.22e-6, rel=1e-9)
    assert launch["efficiency"] == pytest.approx(0.9072 * 6.90 / 7.0, rel=1e-9)
    assert (launch["pipe"], launch["pipe_utilisation"]) == ("fp64", pytest.approx(0.1204))
    assert launch["sm_throughput"] == pytest.approx(0.1204)  # "Compute (SM) Throughput"


def test_b200_default_set_pipes_only_each_launch_has_its_reason():
    """The bundled B200 default-set export has pipe and instruction percentages, no DRAM one:
    launch 1 (sdpa_sm100_flash) sm__pipe_tc_cycles_active 34.86 % over 190,208 ns, so its
    compute side is 0.3486 x 190.208 us = 66.31 us on the TC pipe, and no verdict."""
    launches = rooflint.report(B200_RAW).launches
    assert (launches["reason"] == analysis.Reason.SM_ONLY).all()
    sdpa = launches.iloc[1]
    assert (sdpa["pipe"], sdpa["pipe_utilisation"]) == ("tc", pytest.approx(0.3486))
    assert sdpa["t_compute_s"] == pytest.approx(0.3486 * 190_208e-9, rel=1e-12)


@pytest.mark.parametrize(
    "name",
    [
        "flashinfer_paged_decode__gqa_bf16_b1_ctx128k_p64.ncu.csv",
        "torch_sdpa_cudnn__mha_bf16_b16_ctx4k_p64.ncu.csv",
    ],
)
def test_every_default_set_launch_gets_a_verdict_or_a_reason(name):
    launches = rooflint.report(shared(f"ncu/default-set-b200/{name}")).launches
    placed = launches["verdict"] != NOT_ANALYSABLE
    assert (placed | (launches["reason"].astype(str) != "")).all()
    assert (launches["reason"] == analysis.Reason.SM_ONLY).all()  # no DRAM percentage in either


def test_flashinfer_decode_busiest_pipe_by_hand():
    """BatchDecodeWithPagedKVCacheKernel (launch 1): sm__pipe_alu_cycles_active and
    sm__inst_executed_pipe_alu both 54.00 %, the largest pipe (the cycles metric named first);
    330,208 ns, so 0.54 x 330.208 us = 178.31 us of ALU pipe time."""
    path = shared("ncu/default-set-b200/flashinfer_paged_decode__gqa_bf16_b1_ctx128k_p64.ncu.csv")
    decode = rooflint.report(path).launches.iloc[1]
    assert (decode["pipe"], decode["pipe_utilisation"]) == ("alu", pytest.approx(0.54))
    assert decode["t_compute_s"] == pytest.approx(0.54 * 330_208e-9, rel=1e-12)


def test_basic_details_page_uses_the_sm_throughput():
    """nvtx-details.csv has the SOL percentages but no pipe breakdown: daxpy's compute side is
    its Compute (SM) Throughput, 12.04 %."""
    launches = rooflint.report(shared("ncu/reexport-ncu2024.2/nvtx-details.csv")).launches
    daxpy = launches.iloc[1]
    assert daxpy["compute_source"] == "sm_throughput_pct" and daxpy["verdict"] == MEMORY_BOUND
    assert daxpy["t_compute_s"] == pytest.approx(0.1204 * 249.22e-6, rel=1e-9)


def test_counter_exports_are_untouched():
    """An export with DRAM bytes and FLOP counters carries no percentages and no estimate."""
    launches = rooflint.report(FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv").launches
    assert not set(schema.SOL_COLUMNS + ["compute_source", "bytes_source"]) & set(launches)


def test_every_format_says_it_is_an_estimate_and_what_to_collect():
    result = rooflint.report(NVTX_RAW)
    for fmt in ("table", "markdown", "html"):
        text = reporters.render(result, fmt)
        if fmt == "markdown":  # Markdown's escapes undone
            text = text.replace("\\_", "_").replace("\\`", "`")
        if fmt == "html":
            text = html.unescape(text)
        assert "`rooflint metrics ncu`" in text and "dram__bytes.sum" in text, fmt
        assert "an estimate from ncu's percentages" in text, fmt
    doc = json.loads(reporters.render(result, "json"))
    (warning,) = [w for w in doc["warnings"] if w.startswith("estimates: 3 launch(es)")]
    assert "`rooflint metrics ncu`" in warning and "dram__bytes.sum" in warning
    assert doc["summary"]["estimated_launches"] == 3 and doc["summary"]["estimated_share"] == 1.0
    assert {launch["bytes_source"] for launch in doc["launches"]} == {"throughput_pct"}
    assert {launch["compute_source"] for launch in doc["launches"]} == {"pipe_utilisation"}
    assert doc["units"]["dram_throughput"] == "fraction of peak"
    assert "an estimate from ncu's percentages" in doc["kernels"][0]["explanation"]
    csv = reporters.render(result, "csv")
    header = csv.splitlines()[0].split(",")
    assert {"bytes_source", "compute_source", "dram_throughput", "pipe"} <= set(header)


def test_a_latency_verdict_from_the_sm_percentages_says_every_instruction_counted():
    """ncu's pipe and SM percentages count integer and other instructions too, so the latency
    sentence does not say they are left out."""
    from rooflint.core import explain

    text = explain.sentence(LATENCY_BOUND, 0.23, "sm", unmeasured="sm_pct")
    assert "neither DRAM bandwidth nor the SM's busiest pipe" in text
    assert "integer and other instructions are not counted" not in text
    assert text.endswith(
        "an estimate from ncu's percentages (SM throughput %), not from counted bytes and FLOPs"
    )


def test_a_diff_of_estimated_runs_warns_on_each_side():
    d = rooflint.diff(NVTX_RAW, FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv")
    (warning,) = [w for w in d.warnings if "ncu's speed-of-light percentages" in w]
    assert warning.startswith("base estimates: 3 launch(es)") and "rooflint metrics ncu" in warning
