"""Tensor-core operation counts against matrix products of known shape, on a real H200.

fixtures/ncu/h200-tensor-ops/ holds ncu 2025.3.1 profiles of single cuBLAS products made by
benchmarks/tensor_ops/check.py through PyTorch (`ncu --csv ... > file`, so ==PROF== and
==WARNING== lines frame the rows). The expected count of a product is 2*M*N*K, worked out from
the shape the script asked for, never from the counters: one multiply-add is two operations.
"""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner

import rooflint
from rooflint.cli import main
from rooflint.core import schema
from rooflint.hardware.identify import identify
from rooflint.parsers import ncu_metrics

from .conftest import FIXTURES

H200 = FIXTURES / "ncu" / "h200-tensor-ops"
# file -> (column the counter lands in, expected operations)
PRODUCTS = {
    "bf16_4096.csv": ("ops_matrix_bf16", 2 * 4096**3),
    "fp16_4096.csv": ("ops_matrix_fp16", 2 * 4096**3),
    "tf32_4096.csv": ("ops_matrix_tf32", 2 * 4096**3),
    "fp64_2048.csv": ("ops_matrix_fp64", 2 * 2048**3),
    "fp8_4096.csv": ("ops_matrix_fp8", 2 * 4096**3),
    "int8_4096.csv": ("ops_matrix_int8", 2 * 4096**3),
    # 128 x 128 x 65536 split over K: the product kernel plus cuBLAS's splitKreduce kernel
    "bf16_splitk.csv": ("ops_matrix_bf16", 2 * 128 * 128 * 65536),
    # 1000^3 on a 128x72 tile with a K step of 64 (nvjet_sm90_hsh_128x72_64x8): the tensor
    # cores run whole tiles, so M pads to 8*128 = 1024, N to 14*72 = 1008, K to 16*64 = 1024.
    "fp16_1000.csv": ("ops_matrix_fp16", 2 * 1024 * 1008 * 1024),
    # the command `rooflint metrics ncu --arch hopper` prints, as a user runs it (LC_ALL=C)
    "printed-raw.csv": ("ops_matrix_bf16", 2 * 4096**3),
    # `ncu -o` then `ncu --import R.ncu-rep --csv --page raw` of the same product
    "imported-raw.csv": ("ops_matrix_bf16", 2 * 4096**3),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_tensor_counters_count_two_operations_per_multiply_add(name):
    column, expected = PRODUCTS[name]
    launches = rooflint.load(H200 / name)
    assert launches[column].sum() == expected
    others = [c for c in schema.MATRIX_OPS if c != column]
    assert launches[others].fillna(0).to_numpy().sum() == 0


def test_integer_tensor_work_is_not_counted_as_flops():
    launches = rooflint.load(H200 / "int8_4096.csv")
    assert launches["ops_matrix_int8"].sum() == 2 * 4096**3
    assert rooflint.analyze(launches, "h200-sxm")["flops"].sum() == 0


def test_the_report_file_reads_like_its_export():
    pytest.importorskip("ncu_report")
    from rooflint.parsers import ncu_rep

    if ncu_rep.too_old():
        pytest.skip("ncu-report older than 2026.2 crashes alongside pandas; the reader refuses it")
    launches = rooflint.load(H200 / "gemm-bf16.ncu-rep")
    assert launches["ops_matrix_bf16"].sum() == 2 * 4096**3


def test_hopper_metric_names_printed_are_the_ones_an_h200_offers():
    """query-tensor-metrics.txt is `ncu --query-metrics` on the H200, cut to tensor lines; ncu
    drops a metric the GPU lacks without an error (metrics_command-log.txt), so a wrong name
    would silently lose that precision's tensor work."""
    offered = {
        line.split()[0] + ".sum" for line in (H200 / "query-tensor-metrics.txt").open() if line
    }
    printed = CliRunner().invoke(main, ["metrics", "ncu", "--arch", "hopper"]).output
    asked = {m for m in printed.split() for m in m.split(",") if "ops_path_tensor" in m}
    assert asked and asked <= offered
    assert "sm__ops_path_tensor_src_fp16.sum" in asked  # Hopper has no fp16 _dst_ split


def test_details_page_without_a_name_is_identified_by_its_clocks():
    """The default details page names no GPU; its SM clock (1,282 MHz, held by ncu's default
    clock control) and DRAM clock (3,199 MHz) fit the H200 SXM and no other 9.0 part."""
    found = identify(rooflint.load(H200 / "details-default-stdout.csv"))
    assert (found.device.id, found.provisional) == ("h200-sxm", False)


def _without_tensor_path(path, tmp_path):
    """The profile as it would read had only sm__inst_executed_pipe_tensor been collected."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    rows = list(csv.reader(io.StringIO("".join(lines[start:]))))
    keep = [i for i, name in enumerate(rows[0]) if not name.startswith("sm__ops_path_tensor")]
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        [[row[i] for i in keep] for row in rows if len(row) == len(rows[0])]
    )
    target = tmp_path / path.name
    target.write_text("".join(lines[:start]) + out.getvalue())
    return target


def test_hopper_instruction_counts_are_not_turned_into_operations(tmp_path):
    """bf16_4096 counted 2,097,152 tensor instructions for 2*4096^3 operations: 65,536 each,
    where the Ampere rule (HMMA.16816) would say 4,096 and under-count sixteen times."""
    launches = rooflint.load(_without_tensor_path(H200 / "bf16_4096.csv", tmp_path))
    assert launches[schema.MATRIX_OPS].isna().all().all()
    assert ncu_metrics.WARPGROUP_MMA_NOTE in launches["notes"].iloc[0]
    assert "ops_matrix: no tensor-core counters" in launches["missing"].iloc[0]


# (file, tensor class, sm__cycles_elapsed.avg.per_second and gpu__time_duration.sum of the file)
TENSOR_PRODUCTS = [
    ("bf16_4096.csv", "matrix_bf16", 1_639_722_353.55, 172_288e-9),
    ("fp16_4096.csv", "matrix_fp16", 1_591_849_072.53, 177_792e-9),
]


@pytest.mark.parametrize(("name", "cls", "clock", "duration"), TENSOR_PRODUCTS)
def test_tensor_roof_is_the_rate_at_the_measured_clock(name, cls, clock, duration):
    """132 SMs x 4096 FLOP/clk (Hopper's dense FP16/BF16 rate) x the measured SM clock. The
    datasheet's 989.5 TFLOP/s holds at the 1830 MHz tensor clock; scaled from the 1980 MHz boost
    instead, the roof was 1830/1980 too low and cuBLAS read 97 % efficient."""
    result = rooflint.report(H200 / name)
    roof = result.devices[0].device.compute[cls].value
    assert roof == pytest.approx(132 * 4096 * clock, rel=1e-9)
    efficiency = 2 * 4096**3 / roof / duration  # compute-bound: t_bound is the FLOP time
    old = 2 * 4096**3 / (989.5e12 * clock / 1.98e9) / duration
    assert result.kernels["efficiency"].iloc[0] == pytest.approx(efficiency, rel=1e-9)
    # the drop is 1830/1980 up to the datasheet's rounding (989.5 for 989.43 at 1830 MHz)
    assert efficiency / old == pytest.approx(1830 / 1980, rel=2e-4)
    assert round(old, 2) == 0.97 and round(efficiency, 2) == 0.90


def test_vector_and_fp64_roofs_stay_at_the_boost_clock():
    """FP32/FP64 vector and FP64 tensor figures hold at the 1980 MHz boost: their roofs scale
    from it as before, now as rate x 132 SMs x clock (FP32 256, FP64 128, FP64 tensor 256
    FLOP/clk), so only the datasheet's rounding is gone (67 and 34 TFLOP/s at 1.98 GHz are
    66.9 and 33.45)."""
    clock = 1_900_273_121.99  # sm__cycles_elapsed.avg.per_second in fp64_2048.csv
    result = rooflint.report(H200 / "fp64_2048.csv")
    device = result.devices[0].device
    for cls, rate, figure in [
        ("vector_fp32", 256, 67e12),
        ("vector_fp64", 128, 34e12),
        ("matrix_fp64", 256, 67e12),
    ]:
        assert device.compute[cls].value == pytest.approx(132 * rate * clock, rel=1e-9)
        assert device.compute[cls].value / (figure * clock / 1.98e9) == pytest.approx(
            132 * rate * 1.98e9 / figure, rel=1e-9
        )
        assert device.compute[cls].source.endswith("from boost 1.98 GHz")
    # the FP64 GEMM (2 x 2048^3 FLOP in 294 us) keeps its 91 %: its roof moved 0.14 %
    assert round(result.kernels["efficiency"].iloc[0], 2) == 0.91


def test_h100_export_at_1755_mhz_has_its_bf16_roof(tmp_path):
    """bf16_4096.csv as an H100 SXM would print it, its SM clock at 1.755 GHz (the device name
    and sm__cycles_elapsed.avg.per_second replaced): the BF16 roof is 132 SMs x 4096 FLOP/clk x
    1.755 GHz = 948.9 TFLOP/s; scaled from the boost it was 989.4 x 1.755 / 1.98 = 877.0."""
    text = (H200 / "bf16_4096.csv").read_text()
    assert text.count('"1,639,722,353.55"') == 1
    text = text.replace('"NVIDIA H200"', '"NVIDIA H100 80GB HBM3"')
    path = tmp_path / "h100-bf16_4096.csv"
    path.write_text(text.replace('"1,639,722,353.55"', '"1,755,000,000"'))
    use = rooflint.report(path).devices[0]
    assert use.device.id == "h100-sxm"
    assert use.device.compute["matrix_bf16"].value == pytest.approx(948.9e12, rel=1e-3)
    assert any(
        line.endswith("scaled to measured SM clock 1.755 GHz from datasheet clock 1.83 GHz")
        for line in use.provenance
    )
