"""Device files keep every ceiling, clock and count to the range of real devices: a value
outside it is one line naming the file, the key and the range (issue 33, item 7)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rooflint import hardware
from rooflint.cli import main
from tests.helpers import FIXTURES

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
HUGE = "1" + "0" * 400  # a TOML integer: no limit on its size, and no float holds it
BANDWIDTH = "1 GB/s to 1 PB/s"
COMPUTE = "1 GFLOP/s to 1 EFLOP/s"
CLOCK = "1 MHz to 100 GHz"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def device_file(tmp_path, body: str):
    path = tmp_path / "measured.toml"
    path.write_text(f'base = "a100-pcie-40gb"\n{body}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "key", "span"),
    [
        # 1e300 GB/s is 1e309 byte/s, an infinity: JSON crashed ("Out of range float values")
        ("[bandwidth_gbps]\ndram = 1e300", "bandwidth_gbps.dram", BANDWIDTH),
        ("[bandwidth_gbps]\ndram = 1e-300", "bandwidth_gbps.dram", BANDWIDTH),
        ("[bandwidth_gbps]\ndram = 0.5", "bandwidth_gbps.dram", BANDWIDTH),
        (f"[bandwidth_gbps]\nl2 = {HUGE}", "bandwidth_gbps.l2", BANDWIDTH),
        ("[compute_tflops]\nmatrix_fp16 = 1e300", "compute_tflops.matrix_fp16", COMPUTE),
        ("[compute_tflops]\nvector_fp32 = 1e-9", "compute_tflops.vector_fp32", COMPUTE),
        # the clock compute roofs are scaled from: 1e300 MHz gave a math domain error in HTML,
        # 1e-300 MHz an infinite roof in JSON
        ("boost_clock_mhz = 1e300", "boost_clock_mhz", CLOCK),
        ("boost_clock_mhz = 1e-300", "boost_clock_mhz", CLOCK),
        ("base_clock_mhz = 1e12", "base_clock_mhz", CLOCK),
        ("memory_clock_mhz = 0.001", "memory_clock_mhz", CLOCK),
        (f"sm_count = {HUGE}", "sm_count", "1 to 100,000 SMs/CUs"),
        ("memory_bus_bits = 1000000", "memory_bus_bits", "8 to 65,536 bits"),
        # each link table names itself: a host link out of range is not reported as [link]'s
        ('[link]\nkind = "nvlink"\ngbps = 1e9', "link.gbps", "1 GB/s to 100 TB/s"),
        ('[host_link]\nkind = "pcie"\ngbps = 0.5', "host_link.gbps", "1 GB/s to 100 TB/s"),
    ],
)
def test_a_value_no_device_has_is_refused_in_every_format(tmp_path, body, key, span):
    path = device_file(tmp_path, body)
    for fmt in ("table", "json", "html", "markdown", "csv", "svg"):
        out = tmp_path / f"report.{fmt}"
        res = run("report", A100, "-q", "--device-file", path, "-f", fmt, "-o", out)
        assert res.exit_code == 2, res.output
        assert len(res.stderr.splitlines()) == 1
        assert res.stderr.startswith(f"rooflint: error: {path}: key '{key}' = ")
        assert f"({span}), the range of any real device; fix the value" in res.stderr
        assert not out.exists()
    res = run("bound", "gemm", "--m", 64, "--n", 64, "--k", 64, "--device-file", path)
    assert res.exit_code == 2 and f"key '{key}'" in res.stderr


def test_the_refusal_restates_the_value_in_the_files_unit(tmp_path):
    path = device_file(tmp_path, "[bandwidth_gbps]\ndram = 0.5")
    res = run("report", A100, "-q", "--device-file", path)
    assert res.stderr == (
        f"rooflint: error: {path}: key 'bandwidth_gbps.dram' = 0.5 GB/s is outside 1 to "
        "1,000,000 GB/s (1 GB/s to 1 PB/s), the range of any real device; fix the value\n"
    )


@pytest.mark.parametrize("value", ["0", "-616", '"nan"', "nan", "inf", "-inf"])
def test_zero_negative_and_not_finite_ceilings_stay_refused(tmp_path, value):
    path = device_file(tmp_path, f"[bandwidth_gbps]\ndram = {value}")
    res = run("report", A100, "-q", "-f", "json", "--device-file", path)
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "key 'bandwidth_gbps.dram' must be a positive number" in res.stderr


def test_a_whole_new_device_is_checked_too(tmp_path):
    path = tmp_path / "new.toml"
    path.write_text(
        'id = "x"\nname = "X"\nvendor = "nvidia"\narch = "9.0"\nsource = "test"\n'
        "[compute_tflops]\nvector_fp32 = 50\n[bandwidth_gbps]\ndram = 2e6\n",
        encoding="utf-8",
    )
    res = run("report", A100, "-q", "--device-file", path)
    assert res.exit_code == 2 and "key 'bandwidth_gbps.dram' = 2,000,000 GB/s" in res.stderr


def test_the_ends_of_each_range_are_taken(tmp_path):
    """1 GB/s and 1 PB/s, 1 GFLOP/s and 1 EFLOP/s: the report is made and its JSON holds the
    roofs in byte/s and op/s (1e9 and 1e15; 1e9 and 1e18)."""
    path = device_file(
        tmp_path,
        "[bandwidth_gbps]\ndram = 1\nl2 = 1e6\n[compute_tflops]\nvector_fp64 = 0.001\n"
        "matrix_fp16 = 1e6",
    )
    device = hardware.load_device_file(path)
    assert device.memory["dram"].value == 1e9 and device.memory["l2"].value == 1e15
    assert device.compute["vector_fp64"].value == pytest.approx(1e9)
    assert device.compute["matrix_fp16"].value == 1e18
    res = run("report", A100, "-q", "-f", "json", "--device-file", path)
    assert res.exit_code == 0
    json.loads(res.stdout)


def test_every_catalog_device_lies_inside_the_ranges():
    catalog = hardware.catalog()
    assert len(catalog) >= 40
    for device in catalog.values():
        for ceiling in device.compute.values():
            assert 1e9 <= ceiling.value <= 1e18, device.id
        for ceiling in device.memory.values():
            assert 1e9 <= ceiling.value <= 1e15, device.id
