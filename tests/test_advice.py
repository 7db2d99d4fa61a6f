"""Advice from the evidence (core/advice.py): each rule's trigger taken from a real file.

- RTX 2080 Ti sgemm (fixtures/ncu/rtx2080ti-sgemm-raw-base.csv, a public ncu export): grid
  "(2, 25, 1)" = 50 blocks on the 2080 Ti's 68 SMs (catalog rtx-2080-ti; TU102 as sold: 68 SMs),
  latency-bound at 22 %: 18 SMs have no block to run.
- H200 training trace (fixtures/kineto/h200-train-trace.json.gz): "Memset (Device)" 360 launches
  in 328.833 µs, 913 ns each: launch overhead, not bandwidth, is their time.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

import rooflint
from rooflint.core import advice, advice_launch
from rooflint.reporters import common, render
from tests.helpers import FIXTURES, RTX, shared

TRACE = FIXTURES / "kineto" / "h200-train-trace.json.gz"


def _advice(result, kernel_id: str) -> list[advice.Advice]:
    (row,) = result.kernels[result.kernels["id"] == kernel_id].to_dict("records")
    return common.group_advice(result, row)


def _rule(found: list[advice.Advice], rule: advice.Rule) -> advice.Advice:
    (one,) = [a for a in found if a.rule == rule]
    return one


def test_a_grid_smaller_than_the_device_leaves_sms_idle():
    result = rooflint.report(str(RTX))
    (row,) = result.kernels.to_dict("records")
    assert (row["grid"], row["verdict"]) == ("(2, 25, 1)", "latency-bound")
    found = _rule(common.group_advice(result, row), advice.Rule.SMALL_GRID)
    assert "grid of 50 blocks leaves 18 of the 68 SMs without work" in found.text  # 68 - 2·25
    assert found.evidence == "the grid and the device's SM count"


def test_many_tiny_launches_are_launch_bound():
    result = rooflint.report(str(TRACE))
    memsets = result.kernels[result.kernels["kernel"] == "Memset (Device)"]
    (row,) = memsets.to_dict("records")
    assert row["launches"] == 360
    assert row["duration_s"] / row["launches"] == pytest.approx(328.833e-6 / 360)  # 913.4 ns
    (found,) = common.group_advice(result, row)
    assert found.rule == advice.Rule.LAUNCH_BOUND
    assert found.text.startswith("launch-bound: 360 launches of 913 ns on average")


def test_no_rule_fires_without_its_evidence():
    base = {"verdict": "latency-bound", "launches": 1, "duration_s": 1e-3, "grid": "(1, 1, 1)"}
    h200 = advice.Context(units=132)
    assert advice.for_group(base, None) == []  # no device: the SM count is unknown
    assert advice.for_group({**base, "grid": None}, h200) == []  # no grid
    assert advice.for_group({**base, "verdict": "compute-bound"}, h200) == []  # at a roof
    many = {**base, "launches": 49, "duration_s": 49e-6}
    assert [a.rule for a in advice.for_group(many, advice.Context(units=1))] == []  # one short
    assert advice_launch.grid_blocks("(80, 160, 2)") == 25_600


def test_communication_kernels_get_no_grid_advice():
    """NCCL runs on a few blocks by design (HTA's A100 NCCL excerpt: grids of 1-8 blocks)."""
    result = rooflint.report(str(FIXTURES / "kineto" / "hta-a100-nccl-backward-excerpt.json.gz"))
    comm = result.kernels[result.kernels["verdict"] == "communication"]
    assert len(comm)
    assert all(not common.group_advice(result, r) for r in comm.to_dict("records"))


def test_every_format_shows_the_advice_with_its_evidence():
    result = rooflint.report(str(RTX))
    expected = "18 of the 68 SMs without work"
    for fmt in ("table", "markdown", "html"):
        assert expected in " ".join(str(render(result, fmt)).split()), fmt
    (kernel,) = json.loads(render(result, "json"))["kernels"]
    assert kernel["advice"][0]["rule"] == "small-grid"
    assert expected in kernel["explanation"]
    (row,) = csv.DictReader(io.StringIO(render(result, "csv", per="kernel")))
    assert (
        row["advice"].startswith("small-grid: its grid of 50 blocks") and expected in row["advice"]
    )
    slices = [
        e for e in json.loads(render(result, "perfetto"))["traceEvents"] if e.get("ph") == "X"
    ]
    kernel_slice = next(e for e in slices if "advice" in e["args"])
    assert kernel_slice["args"]["advice"][0].startswith("small-grid: ")


def test_a_verdict_resting_on_part_of_a_group_says_so():
    """The H200 training trace by family: "elementwise" is 640 launches of which 160 have a
    model (the others have no DRAM bytes); its verdict is theirs, and every format says so."""
    result = rooflint.report(str(TRACE), group_by="family")
    (row,) = result.kernels[result.kernels["group"] == "elementwise"].to_dict("records")
    assert (row["launches"], row["analysed"]) == (640, 160)
    expected = "the verdict rests on 160 of its 640 launches (the others: missing DRAM bytes)"
    assert expected in common.kernel_sentence(result, row)
    assert expected in " ".join(str(render(result, "table", top=50)).split())
    full = rooflint.report(str(RTX))  # every launch analysed: nothing added
    assert "rests on" not in common.kernel_sentence(full, full.kernels.iloc[0])


# --- the rules on ncu's launch facts, the operator's minimum bytes and the device's roofs -------

V100 = "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv"
SAM = "ncu/actualparam-a100-ncu2021.2-sam-decoder.csv"
GEMM_V0 = "ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv"
XDIT = "kineto/tracelens-mi300x-xdit-sd35-triton.json.gz"
H200_RAW = FIXTURES / "ncu" / "h200-train-raw-stdout.csv.gz"


def _group(result, kernel_start: str) -> dict:
    rows = result.kernels[result.kernels["kernel"].astype(str).str.startswith(kernel_start)]
    return rows.to_dict("records")[0]


@pytest.mark.e2e
def test_a_gemm_that_moves_far_more_than_its_minimum_is_told_to_tile_for_reuse():
    """The V100 CUTLASS GEMM (shared ncu/cuda-roofline-v100-...csv, 6 launches, ~470 ms each).

    Its name: threadblock GemmShape<128, 128, 32>, A and B cutlass::half_t (2 B), output
    LinearCombination<float> (4 B); grid (160, 160, 1): M = N = 160 × 128 = 20480; tensor
    instructions 33,554,432,000 × 512 (HMMA.884) = 1.718e13 = 2·M·N·K, so K = 20480 (the
    fixtures README: M = N = K = 20480). Minimum = 20480² × (2 + 2 + 4) = 3,355,443,200 B per
    launch; measured dram__bytes.sum of the 6 launches 1,220,950,451,808 B (203.49 GB each):
    1,220,950,451,808 / (6 × 3,355,443,200) = 60.6×.
    """
    result = rooflint.report(str(shared(V100)))
    row = _group(result, "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<")
    assert row["launches"] == 6
    assert row["excess_traffic"] == pytest.approx(1_220_950_451_808 / (6 * 3_355_443_200))
    found = _rule(common.group_advice(result, row), advice.Rule.EXCESS_TRAFFIC)
    assert found.text.startswith("moves 61× the DRAM bytes its shapes need: the data is re-read")
    sentence = common.kernel_sentence(result, row)
    assert "look at parallelism in flight" not in sentence  # the specific advice replaces it
    assert sentence.count("its shapes need") == 1


@pytest.mark.e2e
def test_l1_near_its_peak_while_dram_idles_is_cache_bound():
    """SAM decoder on an A100 SXM4 40GB (shared ncu/actualparam-...sam-decoder.csv, which names
    no device): gemmSN_TN_kernel<float, 128, 16, ...> with grid 262144, "L1/TEX" throughput
    l1tex__throughput 90.57 %; DRAM 322,542,336 B in 1.28358 ms = 251.3 GB/s = 16.2 % of the
    1,555 GB/s roof."""
    result = rooflint.report(str(shared(SAM)), device="a100-sxm4-40gb")
    rows = result.kernels[result.kernels["id"] == "91566c.1"].to_dict("records")
    (row,) = rows
    assert row["l1_throughput"] == pytest.approx(0.9057)
    assert row["bytes_dram"] / row["duration_s"] / 1.555e12 == pytest.approx(0.1616, abs=1e-3)
    found = _rule(common.group_advice(result, row), advice.Rule.CACHE_BOUND)
    assert found.text.startswith(
        "cache-bound: L1 throughput at 91 % of its peak while DRAM runs at 16 % of its roof"
    )


def test_a_last_half_wave_leaves_a_quarter_of_the_sms_idle():
    """H200 training export (fixtures/ncu/h200-train-raw-stdout.csv.gz): CatArrayBatchedCopy,
    launch__waves_per_multiprocessor 1.50: the second wave fills 0.5 of the SMs, so of 2 waves'
    time (1 − 0.5) / 2 = 25 % is idle."""
    result = rooflint.report(str(H200_RAW))
    row = _group(result, "void at::<unnamed>::CatArrayBatchedCopy")
    assert row["waves"] == 1.5
    found = _rule(common.group_advice(result, row), advice.Rule.TAIL_WAVE)
    assert "the last wave fills 50 % of the SMs, so 25 % of the launch's SM time" in found.text


def test_registers_and_shared_memory_holding_one_block_per_sm_are_named():
    """The same H200 export: cuDNN's flash attention backward has block limits registers 1,
    shared memory 1, warps 5, SM 32 (launch__occupancy_limit_*), 168 registers per thread and
    theoretical occupancy 18.75 % (sm__maximum_warps_per_active_cycle_pct): 12 warps of 64."""
    result = rooflint.report(str(H200_RAW))
    row = _group(result, "cudnn_generated_fort_native_sdpa_sm90_flash_bprop")
    assert (row["occupancy_limiter"], row["occupancy_limit_blocks"]) == (
        "registers and shared memory",
        1,
    )
    assert row["occupancy_limit_next"] == 5
    found = _rule(common.group_advice(result, row), advice.Rule.OCCUPANCY)
    assert found.text.startswith(
        "occupancy: registers and shared memory allow 1 block per SM, against 5 by the next "
        "limit — theoretical occupancy 19 %"
    )
    assert "now 168 per thread" in found.text


def test_the_top_warp_stall_is_named_with_its_share():
    """RTX 2080 Ti sgemm (fixtures/ncu/rtx2080ti-sgemm-raw-base.csv): PC samples
    smsp__pcsamp_warps_issue_stalled_*: long_scoreboard 178 of 578 in all (selected 78 counted,
    never the top) = 30.8 %."""
    result = rooflint.report(str(RTX))
    (row,) = result.kernels.to_dict("records")
    assert row["stall_top"] == "long_scoreboard"
    assert row["stall_share"] == pytest.approx(178 / 578)
    found = _rule(common.group_advice(result, row), advice.Rule.WARP_STALL)
    assert found.text.startswith("warps stall most on long scoreboard")
    assert "31 % of the sampled warp cycles" in found.text


def test_the_same_stall_from_the_warp_state_section_of_a_details_page():
    """The same 2080 Ti report exported as a details page (reexport-ncu2024.2/...-all.csv):
    "Stall Long Scoreboard" 1.74 warp cycles per issued instruction is the largest; the page also
    has the PC samples, which win (178 / 578)."""
    result = rooflint.report(str(shared("ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details-all.csv")))
    (row,) = result.kernels.to_dict("records")
    assert (row["stall_top"], row["stall_share"]) == ("long_scoreboard", pytest.approx(178 / 578))
    assert row["occupancy_achieved"] == pytest.approx(0.2493)


@pytest.mark.e2e
def test_an_fp32_gemm_on_the_vector_pipe_of_an_a100_is_pointed_at_tf32():
    """A100 PCIe 40GB (shared ncu/learningnote-...printfp.csv): gemm_v0<float>, a GEMM by its
    name, limited by the FP32 vector roof; the catalog's TF32 tensor roof is 156 against 19.5
    TFLOP/s FP32 at boost (both scaled by the same clock): 8×."""
    result = rooflint.report(str(shared(GEMM_V0)))
    row = _group(result, "void gemm_v0<float>")
    assert row["limiter"] == "vector_fp32"
    found = common.group_advice(result, row)
    assert [a.rule for a in found] == [advice.Rule.VECTOR_PIPE]  # no precision option besides
    assert "the device's TF32 tensor roof is 8× higher" in found[0].text


def test_a_narrower_precision_is_offered_as_an_option():
    """RTX 2080 Ti (catalog rtx-2080-ti at the measured 1.306 GHz): FP16 tensor 90.93 against
    FP32 vector 11.37 TFLOP/s: 8×. Turing has no TF32, so no vector-pipe advice."""
    result = rooflint.report(str(RTX))
    (row,) = result.kernels.to_dict("records")
    found = _rule(common.group_advice(result, row), advice.Rule.PRECISION)
    assert found.text.startswith("an option, if its accuracy allows: in FP16 tensor its roof")
    assert "would be 8× the FP32 vector roof" in found.text
    assert advice.Rule.VECTOR_PIPE not in {a.rule for a in common.group_advice(result, row)}


@pytest.mark.e2e
def test_amd_tensile_gemms_far_under_the_matrix_roof_check_the_clock_and_their_workgroups():
    """MI300X xDiT trace (shared kineto/tracelens-mi300x-xdit-sd35-triton.json.gz): a hipBLASLt
    Cijk_ GEMM group of 760 launches, 1.178e14 FLOP in 0.2084 s = 565 TFLOP/s = 43 % of the
    1,307 TFLOP/s BF16 roof (304 CUs at the datasheet's 2.1 GHz). Its grid (75776, 1, 1) counts
    work-items: / 256 per workgroup = 296 workgroups on 304 CUs, 8 idle."""
    result = rooflint.report(str(shared(XDIT)))
    (row,) = result.kernels[result.kernels["id"] == "be0133"].to_dict("records")
    assert row["grid"] == "(75776, 1, 1)" and row["efficiency"] == pytest.approx(0.4325, abs=1e-4)
    found = common.group_advice(result, row)
    assert [a.rule for a in found] == [advice.Rule.SMALL_GRID, advice.Rule.MATRIX_CLOCK]
    assert "296 workgroups leaves 8 of the 304 CUs" in found[0].text
    assert "(`rocm-smi --showclocks`)" in found[1].text and "43 %" in found[1].text


def test_each_rule_stays_quiet_without_its_evidence():
    """One row per rule whose trigger is one step short (thresholds in the advice modules)."""
    a100 = advice.Context(units=108, roofs={"vector_fp32": 19.5e12, "matrix_tf32": 156e12})
    lat = {"verdict": "latency-bound", "efficiency": 0.3, "launches": 1, "duration_s": 1e-3}

    def rules(row, context=a100):
        return {a.rule for a in advice.for_group({**lat, **row}, context)}

    assert not rules({"excess_traffic": 3.9})  # under 4×: no re-reading to speak of
    # a100-gemm-details' CUTLASS GEMM moves 44× its minimum but is compute-bound at 77 % of the
    # FP16 tensor roof: fewer bytes would not shorten it, so no traffic advice
    assert not rules({"excess_traffic": 44.0, "verdict": "compute-bound", "efficiency": 0.77})
    near = advice.Context(dram_fraction=0.6)
    assert not rules({"l1_throughput": 0.95}, near)  # DRAM busy too
    assert not rules({"l1_throughput": 0.79}, advice.Context(dram_fraction=0.1))  # L1 not near
    assert not rules({"waves": 2.9})  # the last wave 90 % full: 3 % idle
    assert not rules({"waves": 0.5})  # under one wave: the small-grid rule's, with a grid
    occupancy = {"occupancy_limiter": "registers", "occupancy_limit_blocks": 2}
    assert not rules({**occupancy, "occupancy_theoretical": 0.5})  # half the warps: enough
    assert not rules({**occupancy, "occupancy_theoretical": 0.25, "occupancy_achieved": 0.6})
    assert not rules({"stall_top": "long_scoreboard", "stall_share": 0.24})
    assert not rules({"stall_top": "selected", "stall_share": 0.9})  # issuing is no stall
    assert not rules({"limiter": "vector_fp32", "kernel": "elementwise_kernel"})  # no GEMM
    turing = advice.Context(roofs={"vector_fp32": 13e12, "matrix_fp16": 40e12})  # 3×
    assert not rules({"limiter": "vector_fp32"}, turing)
    amd = advice.Context(vendor="amd", roofs={"matrix_bf16": 1.3e15}, datasheet_clock_hz=2.1e9)
    assert rules({"limiter": "matrix_bf16"}, amd) == {advice.Rule.MATRIX_CLOCK}
    assert not rules({"limiter": "matrix_bf16", "efficiency": 0.5}, amd)
    measured = advice.Context(vendor="amd", datasheet_clock_hz=2.1e9, clock_measured=True)
    assert not rules({"limiter": "matrix_bf16"}, measured)
    tensile = {"kernel": "Cijk_Alik", "grid": "(77824, 1, 1)", "block": "(256, 1, 1)"}
    assert not rules(tensile, advice.Context(units=304, vendor="amd"))  # 304 workgroups
    assert rules({**tensile, "grid": "(77568, 1, 1)"}, advice.Context(units=304, vendor="amd"))
    nvidia = advice.Context(vendor="nvidia")
    assert rules({}, nvidia) == {advice.Rule.COLLECT}  # nothing known: how to know more
    assert not rules({"waves": 4.0}, nvidia)  # the facts were collected and say nothing
    assert not rules({"unmeasured": "vector"}, nvidia)  # the verdict's line names the command


@pytest.mark.e2e
def test_without_launch_facts_the_advice_names_the_command_that_collects_them():
    """The V100 export's InitializeMatrix_kernel<__half> (2 launches, latency-bound at 33 % of
    the DRAM roof) has no occupancy, wave or stall metrics: the advice says how to collect them,
    and `rooflint metrics ncu` prints the sections (tests/test_named_commands.py runs it)."""
    from click.testing import CliRunner

    from rooflint.cli import main

    result = rooflint.report(str(shared(V100)))
    row = _group(result, "void InitializeMatrix_kernel<__half")
    (found,) = common.group_advice(result, row)
    assert found.rule == advice.Rule.COLLECT and "(`rooflint metrics ncu` prints" in found.text
    printed = CliRunner().invoke(main, ["metrics", "ncu"]).output
    assert "--section Occupancy --section SpeedOfLight --section WarpStateStats" in printed
    rtx = rooflint.report(str(RTX))  # facts present: other rules speak, never this one
    assert advice.Rule.COLLECT not in {
        a.rule for a in common.group_advice(rtx, rtx.kernels.iloc[0])
    }
