"""`rooflint bound`: refusals with what the device supports, launch overhead, device files, JSON."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rooflint.cli import main


def run(*args):
    return CliRunner().invoke(main, ["bound", *map(str, args)])


@pytest.mark.parametrize(
    ("dtype", "device", "supported"),
    [
        # H100: FP8 tensor cores, no FP4 (Blackwell's); A100: no FP8 tensor path at all
        ("fp4", "h100-sxm", "fp64, fp32, tf32, fp16, bf16, fp8, int8"),
        ("fp8", "a100-pcie-40gb", "fp64, fp32, tf32, fp16, bf16, int8"),
    ],
)
def test_gemm_dtype_the_device_cannot_run_is_refused(dtype, device, supported):
    res = run("gemm", "--m", 8192, "--n", 8192, "--k", 8192, "--dtype", dtype, "--device", device)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (
        f"rooflint: error: {device} has no {dtype.upper()} matrix (tensor) path, the only "
        f"way a GEMM runs in {dtype}; its GEMM dtypes are: {supported}; pick one with "
        "--dtype or another device\n"
    )


def test_fp32_gemm_without_a_matrix_path_uses_the_vector_units():
    res = run(
        "gemm",
        "--m",
        4096,
        "--n",
        4096,
        "--k",
        4096,
        "--dtype",
        "fp32",
        "--device",
        "a100-pcie-40gb",
        "-f",
        "json",
    )
    assert res.exit_code == 0 and json.loads(res.stdout)["compute_class"] == "vector_fp32"


def test_a_bound_under_launch_overhead_says_so():
    # 16^3 FP16 GEMM on an A100 PCIe 40GB: (2*16*16 + 16*16) * 2 B = 1,536 B / 1.555 TB/s
    # = 0.988 ns, far under the 2-5 µs a launch costs
    res = run(
        "gemm", "--m", 16, "--n", 16, "--k", 16, "--dtype", "fp16", "--device", "a100-pcie-40gb"
    )
    assert res.exit_code == 0
    assert "minimum time     988 ps" in res.stdout
    assert "note             the bound is under the 2-5 µs a kernel launch costs" in res.stdout
    big = run(
        "gemm",
        "--m",
        8192,
        "--n",
        8192,
        "--k",
        8192,
        "--dtype",
        "fp16",
        "--device",
        "a100-pcie-40gb",
    )
    assert "note" not in big.stdout  # 2 x 8192^3 / 311.9 TFLOP/s = 3.53 ms


def test_json_output_in_si_units():
    # H100 SXM BF16 dense 132 SMs x 4096 FLOP/clk x 1830 MHz = 989.43 TFLOP/s (the datasheet's
    # 989.4): 2 x 8192^3 = 1.0995e12 FLOP -> 1.1113 ms
    res = run(
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
        "--format",
        "json",
    )
    doc = json.loads(res.stdout)
    assert doc["device"]["id"] == "h100-sxm" and doc["compute_class"] == "matrix_bf16"
    assert doc["ops"] == 2 * 8192**3 and doc["bytes"] == 3 * 8192**2 * 2
    assert doc["min_time_s"] == pytest.approx(2 * 8192**3 / (132 * 4096 * 1.83e9))
    assert doc["bound_by"] == "compute" and doc["notes"] == [] and doc["units"]["min_time_s"] == "s"


def test_device_file_supplies_the_ceilings(tmp_path):
    path = tmp_path / "measured.toml"
    path.write_text(
        'base = "a100-pcie-40gb"\nsource = "STREAM on our node"\n[bandwidth_gbps]\ndram = 1300\n'
        "[compute_tflops]\nvector_fp32 = 18\n"
    )
    # 1e9 fp32 elements, 2 reads + 1 write: 12 GB / 1.3 TB/s = 9.2308 ms
    res = run("elementwise", "--n", 10**9, "--device-file", path, "-f", "json")
    doc = json.loads(res.stdout)
    assert doc["bandwidth"] == 1300e9 and doc["min_time_s"] == pytest.approx(12e9 / 1300e9)


@pytest.mark.parametrize("options", [[], ["--device", "h100-sxm", "--device-file", "x.toml"]])
def test_exactly_one_device_option(options):
    res = run("reduction", "--n", 1000, *options)
    assert res.exit_code == 2 and "exactly one of --device ID and --device-file" in res.output
