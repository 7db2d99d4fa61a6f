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
from tests.helpers import FIXTURES

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
