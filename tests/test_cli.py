"""The command line end to end on real fixtures: exit codes, provenance, verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import FIXTURES, ROOT, SHARED_PROFILES, shared

REEXPORT = "ncu/reexport-ncu2024.2/"
NOT_PROFILES = {  # files in shared/fixtures/ncu that hold no per-launch profile
    "ncu/roofline-analysis-b200-ncu2025.x-failed-run.csv",
    "ncu/roofline-analysis-b200-ncu2025.x-prof-lines-only.csv",
    *(
        REEXPORT + name
        for name in (
            "nvtx-details-nocsv.txt",
            "rtx2080ti-sgemm-details-all-nocsv.txt",
            "nvtx-session.csv",
            "rtx2080ti-sgemm-session.csv",
            "nvtx-summary-per-gpu.csv",
            "nvtx-summary-per-kernel.csv",
            "nvtx-summary-per-nvtx.csv",
            "rtx2080ti-sgemm-summary-per-kernel.csv",
        )
    ),
}


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def report_json(*args):
    result = run("report", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def ncu_fixtures() -> list[str]:
    """The shared ncu CSVs and re-exports, listed (tests/helpers.py), profiles or not."""
    profiles = [
        p
        for p in SHARED_PROFILES
        if p.startswith(REEXPORT)
        or (p.count("/") == 1 and p.startswith("ncu/") and p.endswith(".csv"))
    ]
    return sorted([*profiles, *NOT_PROFILES])


@pytest.mark.e2e
@pytest.mark.parametrize("relative", ncu_fixtures())
def test_every_ncu_fixture_reports_or_is_refused_cleanly(relative):
    path = shared(relative)
    assert path.is_file(), f"{relative} is listed but not in shared/fixtures"
    result = run("report", path)
    if relative in NOT_PROFILES:
        assert result.exit_code == 2
        assert result.output.count("\n") == 1 and str(path) in result.output
        return
    assert result.exit_code == 0, result.output
    assert "launches read" in result.output and "#  id" in result.output


def test_profile_derived_ceilings_of_the_2080ti_report():
    doc = report_json(FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv")
    ceilings = {c["name"]: c for c in doc["device"]["ceilings"]}
    # ffma 4352 inst/cycle x 2 x 1.306 GHz and DRAM 96 B/cycle x 6.639 GHz (ncu-formats §7)
    assert ceilings["vector_fp32"]["value"] == pytest.approx(11.37e12, rel=0.01)
    assert ceilings["dram"]["value"] == pytest.approx(637e9, rel=0.01)
    assert ceilings["vector_fp32"]["source"].startswith("profile-derived")
    assert doc["device"]["id"] == "rtx-2080-ti"


def test_gemm_fixtures_are_compute_bound_on_the_tensor_roof():
    doc = report_json(FIXTURES / "ncu" / "a100-gemm-details.csv")
    gemms = [k for k in doc["kernels"] if "gemm" in k["kernel"].lower() or "cutlass" in k["kernel"]]
    assert gemms and all(
        k["verdict"] == "compute-bound" and k["limiter"] == "matrix_fp16" for k in gemms
    )
    # the A100 ran at a capped 765 MHz: catalog compute peaks are scaled to the measured clock
    fp16 = {c["name"]: c for c in doc["device"]["ceilings"]}["matrix_fp16"]
    assert "scaled to measured SM clock" in fp16["source"]


def test_json_contract_for_launches_and_accounting():
    doc = report_json(FIXTURES / "ncu" / "a100-gemm-details.csv")
    assert doc["format_version"] == 3
    first = doc["launches"][0]
    for key in (
        "source_index",
        "launch_id",
        "kernel",
        "duration_s",
        "flops",
        "bytes_dram",
        "efficiency",
        "verdict",
        "limiter",
        "headroom_s",
    ):
        assert key in first
    assert doc["sources"][first["source_index"]].endswith("a100-gemm-details.csv")
    assert None not in first.values() and "source" not in first  # null fields are left out
    acc = doc["accounting"]
    assert acc["launches_read"] == 11 == acc["analysed"] + acc["not_analysable"]
    assert [k["rank"] for k in doc["kernels"]] == list(range(1, len(doc["kernels"]) + 1))
    headroom = [k["headroom_s"] for k in doc["kernels"]]
    assert headroom == sorted(headroom, reverse=True)


def test_missing_counters_are_listed_with_the_collect_command():
    doc = report_json(FIXTURES / "ncu" / "rtx3070-nvtx-raw.csv")
    # analysed from ncu's percentages (test_speed_of_light), the counters still listed missing
    assert doc["summary"]["estimated_launches"] == 3
    assert doc["launches"][0]["missing"]["bytes_dram"].startswith("no DRAM traffic metric")
    assert "rooflint metrics ncu" in doc["launches"][0]["missing"]["ops"]


def test_metrics_ncu_prints_the_collect_command():
    result = run("metrics", "ncu")
    assert result.exit_code == 0
    assert "LC_ALL=C ncu --metrics gpu__time_duration.sum," in result.output
    assert "--csv --page raw --print-units base" in result.output
    assert "sm__ops_path_tensor_src_bf16_dst_fp32.sum" in result.output


def test_unknown_device_override_is_an_error_naming_close_matches():
    result = run("report", FIXTURES / "ncu" / "a100-gemm-details.csv", "--device", "a100-sxm")
    assert result.exit_code == 2
    assert "a100" in result.output and "rooflint devices" in result.output


def test_device_override_changes_the_roof():
    doc = report_json(FIXTURES / "ncu" / "a100-gemm-details.csv", "--device", "a100-sxm4-80gb")
    assert doc["device"]["id"] == "a100-sxm4-80gb"
    dram = next(c for c in doc["device"]["ceilings"] if c["name"] == "dram")
    assert dram == {
        "name": "dram",
        "kind": "memory",
        "value": 2039e9,
        "unit": "byte/s",
        "source": dram["source"],
    }
    link = next(c for c in doc["device"]["ceilings"] if c["kind"] == "link")
    assert link["value"] == 300e9  # NVLink 3, per direction


def test_bound_gemm_h100():
    # H100 SXM BF16 dense 989.4 TFLOP/s, 3.35 TB/s: 8192^3 GEMM moves 3 x 8192^2 x 2 B = 402.7 MB,
    # 2 x 8192^3 = 1.0995e12 FLOP -> intensity 2731 FLOP/B, compute-bound, t_min = 1.111 ms
    result = run(
        "bound",
        "gemm",
        "--m",
        8192,
        "--n",
        8192,
        "--k",
        8192,
        "--dtype",
        "bf16",
        "--device",
        "h100-sxm",
    )
    assert result.exit_code == 0, result.output
    assert "2.73e+03 FLOP/B" in result.output and "compute-bound" in result.output
    assert "1.11 ms" in result.output


def test_devices_lists_the_catalog_with_ridge_points():
    result = run("devices", "--format", "json")
    assert result.exit_code == 0
    catalog = {d["id"]: d for d in json.loads(result.output)}
    assert catalog["h100-sxm"]["ridge_dram_flop_per_byte"]["vector_fp32"] == pytest.approx(
        20, rel=0.01
    )


def test_single_missing_path_is_exit_2():
    result = run("report", "does-not-exist.csv")
    assert result.exit_code == 2 and "does-not-exist.csv" in result.output


def test_shared_fixture_skips_cleanly_when_absent(monkeypatch, tmp_path):
    from tests import helpers

    monkeypatch.setattr(helpers, "SHARED", tmp_path / "absent")
    with pytest.raises(pytest.skip.Exception, match="shared/fixtures is not present"):
        helpers.shared("ncu")


def test_mi200_fp64_benchmark_reaches_its_measured_roof():
    # roofline.csv FP64Flops 20,272.682 GFLOP/s given as measured ceilings; the dispatch does
    # 34,393,292,800 FLOP (counters) in 1.715511 ms: 34.393e9 / 1.715511e-3 / 20.272682e12 = 98.9 %
    results = FIXTURES / "rocprof" / "v1_mi200_rocm513_multipass_results_fp64_benchmark.csv"
    doc = report_json(
        results, "--device-file", FIXTURES / "rocprof" / "omniperf2_mi200_roofline.csv"
    )
    kernel = next(
        k for k in doc["kernels"] if "benchmark_func<double, 256, 8u, 512u>" in k["kernel"]
    )
    assert kernel["efficiency"] == pytest.approx(
        34_393_292_800 / 1.715511e-3 / 20_272.682e9, rel=1e-6
    )
    assert kernel["verdict"] == "compute-bound" and kernel["limiter"] == "vector_fp64"
    fp64 = {c["name"]: c for c in doc["device"]["ceilings"]}["vector_fp64"]
    assert fp64["source"].startswith("measured: rocprof-compute roofline.csv")


def test_a_roofline_csv_alone_is_not_a_profile():
    result = run("report", FIXTURES / "rocprof" / "omniperf2_mi200_roofline.csv")
    assert result.exit_code == 2 and "--device-file" in result.output


# The pool is chosen when a command that reads profiles starts (--version and the catalog
# commands load no pyarrow at all, tests/test_startup.py).
POOL_OF_THE_CLI = (
    "from rooflint.cli import main; import pyarrow; "
    "main.main(['report', 'fixtures/ncu/a100-gemm-details.csv', '-q'], "
    "standalone_mode=False); print(pyarrow.default_memory_pool().backend_name)"
)


@pytest.mark.e2e  # a subprocess
@pytest.mark.parametrize("chosen", [None, "mimalloc", "system"])
def test_the_command_line_gives_freed_arrow_memory_back_unless_a_pool_is_chosen(chosen):
    """The CLI takes jemalloc with a short decay (cli/memory.py: 60-270 MB off the peak of the
    benchmark exports); an ARROW_DEFAULT_MEMORY_POOL the user set wins."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if chosen:
        env["ARROW_DEFAULT_MEMORY_POOL"] = chosen
    run = subprocess.run(
        [sys.executable, "-c", POOL_OF_THE_CLI],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == (chosen or "jemalloc")
