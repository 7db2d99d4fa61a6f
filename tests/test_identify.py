"""Device identification from every clue a profile carries (hardware/identify.py).

Expected SKUs come from the provenance table in ../shared/fixtures/README.md, never from
rooflint's output; where the README names only a family, the comment gives the clue that
settles it and the catalog figure it matches.
"""

from __future__ import annotations

import importlib.util

import pytest

from rooflint import hardware, parsers
from rooflint.core.errors import DeviceError, RooflintError
from rooflint.hardware import catalog
from rooflint.hardware.identify import Clues, by_evidence, identify
from tests.helpers import SHARED, shared

NOT_A_PROFILE = "not a profile"
NO_DEVICE = "no device"
# file -> expected pick: a catalog id (decided), (pick, {ids that must stay open}) for a
# provisional pick, NO_DEVICE (the file names neither device nor architecture) or NOT_A_PROFILE.
EXPECTED = {
    # README: A100 (SKU unknown); no name, compute capability 8.0, SM clock 765 MHz = the
    # A100 PCIe 40GB's 765 MHz base clock (SXM4 40GB 1095, PCIe 80GB 1065, SXM4 80GB 1275).
    "ncu/actualparam-a100-ncu2021.2-details-rules.csv": NO_DEVICE,
    # details + rule rows with no device attribute, name or compute capability: no clue to go on
    "ncu/actualparam-a100-ncu2021.2-sam-decoder.csv": NO_DEVICE,
    # ncu's default set prints the device name, "NVIDIA B200", on every launch
    "ncu/default-set-b200/flashinfer_paged_decode__gqa_bf16_b1_ctx128k_p64.ncu.csv": "b200",
    "ncu/default-set-b200/torch_sdpa_cudnn__mha_bf16_b16_ctx4k_p64.ncu.csv": "b200",
    # Nsight Systems: TARGET_INFO_GPU names "NVIDIA H200" (132 SMs); the two-GPU window lost that
    # table: its export is named perf_h100_sp2_fa3 (compute capability 9.0, the H100s left open);
    # the RTX 2070 SUPER is not catalogued; the capture without CUDA tracing has no launches.
    "nsys/fuser-h200-matmul.sqlite": "h200-sxm",
    "nsys/nsysai-2xh100-1s.sqlite": ("h100-sxm", {"h100-pcie", "h100-nvl"}),
    "nsys/dlprof-rtx2070s-nvtx-shapes.sqlite": NO_DEVICE,
    "nsys/dynamicvit-no-cuda-tables.sqlite": NOT_A_PROFILE,
    # rocprofv3 JSON: its GPU agents are named "AMD Instinct MI350X" (gfx950, 256 CUs)
    "rocprof/v3_mi350x_rocm_json_results.json.gz": "mi350x",
    "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv": "a100-pcie-40gb",
    # README: Tesla V100-PCIE-32GB. SM clock 1233 MHz ~ V100 PCIe base 1245 (SXM2's is 1312,
    # Titan V's 1200); the 16GB and 32GB PCIe cards share every ceiling, either is right.
    "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv": "v100-pcie-*",
    "ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv": "a100-pcie-40gb",
    "ncu/nsight-compute-files-rtx2080ti-sgemm.ncu-rep": "rtx-2080-ti",
    "ncu/nsight-training-CuVectorAddDrv.ncu-rep": "rtx-3070",
    "ncu/nsight-training-CuVectorAddDrv_2.ncu-rep": "rtx-3070",
    "ncu/nsight-training-manual_nvtx.ncu-rep": "rtx-3070",
    "ncu/nvprof-k20c-metrics.csv": "k20c",
    "ncu/roofline-analysis-b200-ncu2025.x-raw.csv": "b200",
    "ncu/roofline-analysis-b200-ncu2025.x-failed-run.csv": NOT_A_PROFILE,
    "ncu/roofline-analysis-b200-ncu2025.x-prof-lines-only.csv": NOT_A_PROFILE,
    "ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv": NO_DEVICE,
    "ncu/xplacer-v100-lassen-ncu2019.x-details-stdout.csv": NO_DEVICE,
    # Re-exports of the RTX 3070 reports. Details pages carry no name: compute capability 8.6,
    # SM clock 1464 MHz (1460 rounded) ~ RTX 3070 base 1500 (A6000 1410 and 3090 1395 are
    # below it, A10 885, A40 1305), DRAM clock 6.68 GHz ~ its 7.0 GHz (A6000 8.0, A10 6.25).
    **{
        f"ncu/reexport-ncu2024.2/nvtx-{name}.csv": "rtx-3070"
        for name in (
            "details",
            "details-all",
            "details-base",
            "details-kernelbase-mangled",
            "details-locale-de_DE",
            "details-locale-en_US",
            "details-metricname-name",
            "raw",
            "raw-auto-locale-en_US",
            "raw-base",
            "raw-base-locale-en_US",
            "raw-instances",
        )
    },
    # Only the selected metrics: no name, no clock, nothing to tell 8.6 parts apart.
    "ncu/reexport-ncu2024.2/nvtx-details-selected-metrics.csv": ("a10", {"rtx-3070"}),
    "ncu/reexport-ncu2024.2/nvtx-raw-selected-metrics.csv": ("a10", {"rtx-3070"}),
    # vecadd ran with unlocked clocks (1.42 GHz): the DRAM clock 6.65 GHz points to the 3070,
    # the SM clock to the A6000's 1410 MHz base; the clues disagree, so both stay open.
    "ncu/reexport-ncu2024.2/vecadd-details.csv": ("rtx-3070", {"rtx-a6000"}),
    "ncu/reexport-ncu2024.2/vecadd-raw.csv": "rtx-3070",
    # RTX 2080 Ti re-exports: details page, compute capability 7.5, SM clock 1.31 GHz ~ its
    # 1350 MHz base (T4: 585), DRAM 6.64 GHz ~ its 7.0 GHz (T4: 5.0).
    **{
        f"ncu/reexport-ncu2024.2/rtx2080ti-sgemm-{name}.csv": "rtx-2080-ti"
        for name in ("details", "details-all", "details-all-names-base", "raw", "raw-base")
    },
    **{
        f"ncu/reexport-ncu2024.2/{name}": NOT_A_PROFILE
        for name in (
            "nvtx-details-nocsv.txt",
            "nvtx-session.csv",
            "nvtx-summary-per-gpu.csv",
            "nvtx-summary-per-kernel.csv",
            "nvtx-summary-per-nvtx.csv",
            "rtx2080ti-sgemm-details-all-nocsv.txt",
            "rtx2080ti-sgemm-session.csv",
            "rtx2080ti-sgemm-summary-per-kernel.csv",
        )
    },
    # AMD: the gfx name alone (no CU count in the file) leaves parts with other ceilings open.
    "rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv": "mi100",
    "rocprof/omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv": ("mi300x", {"mi300a"}),
    "rocprof/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv": ("mi300x", {"mi325x"}),
    "rocprof/rocprofcompute32_mi300x_rocm700_rocpd_pmc_perf_long.csv": ("mi300x", {"mi325x"}),
    "rocprof/rocprofcompute31_mi350_rocprofv3_pmc_perf.csv": ("mi350x", {"mi355x"}),
    "rocprof/v1_mi200_rocm513_multipass_results.csv": ("mi250x", {"mi210"}),
    **{
        f"rocprof/{name}": NOT_A_PROFILE
        for name in (
            "omniperf2_mi200_roofline.csv",
            "omniperf2_mi300x_rocm620_sysinfo.csv",
            "rocprofcompute31_mi350_sysinfo.csv",
            "v1_mi200_rocm513_multipass_input.txt",
            "v1_mi200_rocm513_omniperf1_sysinfo.csv",
            "v1_mi250_rocm571_results.stats.csv",
            "v3_rocm621_mi300a_agent_info.csv",
            "v3_rocm621_mi300a_kernel_stats.csv",
            "v3_rocm633_rx7900xtx_agent_info.csv",
        )
    },
    **{
        f"rocprof/{name}": NO_DEVICE
        for name in (
            "v1_mi100_rocm42_single_pass_results.csv",
            "v1_mi250_rocm571_counters_basenames_no_timestamps.csv",
            "v1_mi250_rocm571_results.db",
            "v1_mi250_rocm571_stats_mode_results.csv",
            "v3_docs_2024_counter_collection.csv",
            "v3_docs_2025_counter_collection.csv",
            "v3_docs_2025_kernel_trace.csv",
            "v3_rocm621_mi300a_kernel_trace_head.csv",
            "v3_rocm711_mi300a_rocpd2csv_kernel_trace_head.csv",
            "v3_rocm7x_mi300a_counter_collection_head.csv",
        )
    },
}


@pytest.mark.e2e
def test_every_shared_fixture_is_expected_here():
    shared("ncu")  # skips on a clean clone
    found = sorted(
        p.relative_to(SHARED).as_posix()
        for folder in ("ncu", "rocprof", "nsys")
        for p in (SHARED / folder).rglob("*")
        if p.is_file()
    )
    assert [p for p in found if p not in EXPECTED] == [], "new shared fixture: add its device"
    assert [p for p in EXPECTED if p not in found] == [], "gone from shared/fixtures"


def _picked(relative: str):
    path = shared(relative)
    if path.suffix == ".ncu-rep" and importlib.util.find_spec("ncu_report") is None:
        pytest.skip("ncu_report is not installed")
    try:
        profile = parsers.read(path)
    except RooflintError:
        return NOT_A_PROFILE
    if not len(profile.launches):
        return NOT_A_PROFILE
    try:
        return identify(profile.launches, profile.device_hints or None)
    except DeviceError:
        return NO_DEVICE


@pytest.mark.e2e
@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_every_shared_fixture_picks_its_gpu(relative):
    expected, got = EXPECTED[relative], _picked(relative)
    if isinstance(expected, str) and expected in (NOT_A_PROFILE, NO_DEVICE):
        assert got == expected
        return
    if isinstance(expected, tuple):
        pick, open_ids = expected
        assert (got.device.id, got.provisional) == (pick, True), got.line()
        assert open_ids <= set(got.candidates), got.candidates
        assert got.advice.startswith(f"pass --device {pick} or --device ")
        return
    if expected.endswith("*"):
        assert got.device.id.startswith(expected[:-1]) and not got.provisional, got.line()
        return
    assert (got.device.id, got.provisional, got.candidates) == (expected, False, []), got.line()


@pytest.mark.e2e
def test_the_four_exports_of_the_issue_with_their_evidence():
    """The four exports that used to get the wrong GPU (A100 SXM4 80GB, V100 SXM2, T4, A10)."""
    a100 = _picked("ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv")
    assert a100.line() == (
        "device: NVIDIA A100 PCIe 40GB (a100-pcie-40gb) — compute capability 8.0; "
        "SM clock 765 MHz ≈ its base clock 765 MHz (ncu locks clocks to base)"
    )
    v100 = _picked("ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv")
    assert v100.device.memory["dram"].value == 900e9 and v100.device.boost_clock_hz == 1380e6
    assert "SM clock 1,233 MHz ≈ its base clock 1,245 MHz" in v100.evidence
    assert "the same ceilings" in v100.evidence
    turing = _picked("ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details.csv")
    assert turing.device.id == "rtx-2080-ti"
    assert "SM clock 1,310 MHz ≈ its base clock 1,350 MHz" in turing.evidence
    assert "DRAM clock 6,640 MHz ≈ its nominal 7,000 MHz" in turing.evidence
    ampere = _picked("ncu/reexport-ncu2024.2/nvtx-details-base.csv")
    assert ampere.line() == (
        "device: NVIDIA GeForce RTX 3070 (rtx-3070) — compute capability 8.6; SM clock 1,464 MHz "
        "≈ its base clock 1,500 MHz (ncu locks clocks to base); DRAM clock 6,685 MHz ≈ its "
        "nominal 7,000 MHz"
    )


def test_memory_clock_is_derived_from_bandwidth_and_bus():
    """A100 PCIe 40GB: 1555 GB/s over 5120 bits = 2.43 Gbit/s per pin; CUDA reports half,
    1215 MHz (the whitepaper's "1215 MHz DDR")."""
    assert catalog()["a100-pcie-40gb"].memory_clock_hz == pytest.approx(1215.0e6, rel=1e-3)
    assert catalog()["rtx-3070"].memory_clock_hz == pytest.approx(7.0e9)  # 448 GB/s, 256 bits


def test_every_nvidia_sku_has_its_identification_facts_with_a_source():
    for device in catalog().values():
        if device.vendor != "nvidia" or device.arch == "10.0" or device.id == "gh200":
            continue  # Blackwell and GH200 base clocks are not published
        assert device.base_clock_hz > 0 and device.memory_bus_bits > 0, device.id
        assert device.base_clock_hz < device.boost_clock_hz or device.id == "k20c", device.id
        assert "base clock" in device.identity_source or "core clock" in device.identity_source


def test_sm_count_decides_when_the_clock_is_missing():
    """A raw page without the name but with device__attribute_multiprocessor_count = 46."""
    found = by_evidence(Clues(arch="8.6", sm_count=46))
    assert (found.device.id, found.provisional) == ("rtx-3070", False)
    assert found.evidence == "compute capability 8.6; 46 SMs"


def test_a_clock_no_sku_has_is_said_and_ignored():
    found = by_evidence(Clues(arch="8.0", sm_clock_hz=1410e6))  # boost: clocks were not locked
    assert (
        found.provisional
        and "SM clock 1,410 MHz fits no catalogued 8.0 part (ignored)" in found.evidence
    )
    assert {"a100-pcie-40gb", "a100-sxm4-80gb", "a30"} <= set(found.candidates)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "device_id, needle",
    [
        (
            "mi300x",
            "--device mi300x is an AMD gfx942 part, but the profile comes from an NVIDIA "
            "compute capability 8.0 GPU (another vendor)",
        ),
        (
            "h100-sxm",
            "--device h100-sxm is an NVIDIA compute capability 9.0 part, but the profile "
            "comes from an NVIDIA compute capability 8.0 GPU (another architecture)",
        ),
    ],
)
def test_device_of_another_vendor_or_architecture_is_refused(device_id, needle):
    launches = parsers.read(
        shared("ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv")
    ).launches
    with pytest.raises(DeviceError) as err:
        hardware.resolve(launches, device_id=device_id)
    assert needle in str(err.value)


@pytest.mark.e2e
def test_device_mismatch_exits_2_in_the_cli(tmp_path):
    from click.testing import CliRunner

    from rooflint.cli import main

    path = shared("ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv")
    out = tmp_path / "r.json"
    run = CliRunner().invoke(
        main, ["report", str(path), "--device", "mi300x", "-o", str(out), "-q"]
    )
    assert run.exit_code == 2 and "another vendor" in run.output and not out.exists()


@pytest.mark.e2e
def test_provisional_device_reaches_json_markdown_and_terminal():
    from rooflint import pipeline, reporters

    res = pipeline.build([str(shared("ncu/reexport-ncu2024.2/nvtx-details-selected-metrics.csv"))])
    (use,) = res.devices
    assert use.provisional and use.candidates[0] == "a10" and "rtx-3070" in use.candidates
    import json

    doc = json.loads(reporters.render(res, "json"))
    assert doc["device"]["provisional"] is True and "rtx-3070" in doc["device"]["candidates"]
    assert doc["device"]["choose"].startswith("pass --device a10 or --device ")
    for fmt in ("markdown", "table", "html"):
        text = reporters.render(res, fmt)
        assert "device provisional: NVIDIA A10 (a10) was picked" in text, fmt
        assert "rtx-3070" in text, fmt
