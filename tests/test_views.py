"""core.views: the Result as the charts place it (per device; groups at a memory level)."""

from __future__ import annotations

import pytest

import rooflint
from rooflint import pipeline
from rooflint.core import views
from tests.helpers import FIXTURES

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
RTX = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"


def test_l2_bytes_are_summed_per_group():
    result = pipeline.build([str(A100)])
    numbers = views.at_level(result, "l2")
    row = result.kernels.index[
        result.kernels["kernel"].str.startswith("void InitializeMatrix_kernel<__half")
    ][0]
    # lts__t_bytes.sum of launches 0 and 1 in the export: 1,937,900,416 + 1,980,209,088
    assert numbers.at[row, "bytes"] == 3_918_109_504
    group = result.kernels.loc[row]
    assert numbers.at[row, "bytes_per_s"] == pytest.approx(3_918_109_504 / group["duration_s"])
    assert numbers.at[row, "flops_per_s"] == pytest.approx(group["flops"] / group["duration_s"])


def test_dram_numbers_are_the_rankings():
    result = pipeline.build([str(A100)])
    numbers = views.at_level(result, "dram")
    k = result.kernels
    assert numbers["bytes"].tolist() == k["bytes_dram"].tolist()
    assert numbers["intensity"].equals(k["intensity_dram"].astype("float64"))


def test_one_devices_groups_are_ranked_among_themselves():
    result = pipeline.build([str(A100), str(RTX)])
    rtx = views.for_device(result, "rtx-2080-ti")
    assert [u.device.id for u in rtx.devices] == ["rtx-2080-ti"]
    assert set(rtx.launches["device_id"]) == {"rtx-2080-ti"}
    assert rtx.kernels["time_share"].sum() == pytest.approx(1.0)  # of its own device's time
    assert [p.source for p in rtx.inputs] == [str(RTX)]


def test_dram_fraction_is_against_the_devices_dram_roof():
    result = pipeline.build([str(A100)])
    # the catalog A100 PCIe 40GB: 1,555 GB/s of DRAM bandwidth
    assert views.dram_fraction(result, "a100-pcie-40gb", 777.5e9) == pytest.approx(0.5)
    assert views.dram_fraction(result, "a100-pcie-40gb", float("nan")) is None
    assert views.dram_fraction(result, "rtx-2080-ti", 777.5e9) is None  # not a device it used


@pytest.mark.parametrize("group_by", ["op", "rank", "kernel"])
def test_other_levels_sum_every_launch_under_any_grouping(group_by):
    """The H200 block trace joined with its ncu export (fixtures/kineto/h200-block-trace.json.gz
    + fixtures/ncu/h200-block-raw-stdout.csv): lts__t_bytes of the lent launches total
    15,664,427,424 B; grouped by operator (keys op, shapes, dtypes: not all columns of the
    group table) or by rank (the rank key), each group's L2 bytes are its launches' and they
    add up to that total (before: a KeyError by op, all NaN by rank)."""
    result = rooflint.report(
        str(FIXTURES / "kineto" / "h200-block-trace.json.gz"),
        str(FIXTURES / "ncu" / "h200-block-raw-stdout.csv"),
        group_by=group_by,
    )
    l2 = views.at_level(result, "l2")
    assert result.launches["bytes_l2"].sum() == 15_664_427_424
    assert l2["bytes"].sum() == pytest.approx(15_664_427_424)
    assert l2["bytes"].notna().sum() >= len(result.kernels) - 1  # the memset group has none
