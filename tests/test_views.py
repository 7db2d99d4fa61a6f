"""core.views: the Result as the charts place it (per device; groups at a memory level)."""

from __future__ import annotations

import pytest

import rooflint
from rooflint import pipeline
from rooflint.core import ranking, views
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


def test_each_devices_launches_classes_and_those_on_none():
    """fixtures/ncu/a100-gemm-details.csv (11 launch IDs; its only FLOP counter is
    sm__inst_executed_pipe_tensor.sum, non-zero for the FP16 GEMMs alone) beside
    rtx2080ti-sgemm-raw-base.csv (1 launch, volta_sgemm_32x128_nn, FP32 FFMA counted): each
    device's partial holds its own launches and the classes they use."""
    result = pipeline.build([str(A100), str(RTX)])
    assert views.device_partial(result, "a100-pcie-40gb").groups["launches"].sum() == 11
    assert views.used_classes(result, "a100-pcie-40gb") == ["matrix_fp16"]
    assert views.used_classes(result, "rtx-2080-ti") == ["vector_fp32"]
    assert views.off_devices(result, ["a100-pcie-40gb"]) == 1  # the SGEMM, on a device not named
    assert views.off_devices(result, ["a100-pcie-40gb", "rtx-2080-ti"]) == 0
    assert views.device_partial(result, "h200-sxm").groups.empty  # a device with no launch


def test_a_reduced_result_has_the_same_device_view():
    """Without its launches (rooflint.report(..., launches=False)) a device's groups rank from
    the merged per-device partials as the full path's do, and name the same inputs. (The full
    path's view also carries ncu's launch-fact columns, all NA, where another device's export
    has them: a file's partial has the columns its own table has.)"""
    full = rooflint.report(A100, RTX)
    reduced = rooflint.report(A100, RTX, launches=False)
    for device_id in ("a100-pcie-40gb", "rtx-2080-ti"):
        want, got = views.for_device(full, device_id), views.for_device(reduced, device_id)
        columns = ranking.KERNEL_COLUMNS
        assert got.kernels[columns].equals(want.kernels[columns])
        assert [p.source for p in got.inputs] == [p.source for p in want.inputs]
    assert views.at_level(reduced, "l1").equals(views.at_level(full, "l1"))


def test_a_result_without_partials_takes_them_from_its_launches():
    """A Result made by hand (no partial kept with it) is placed from its launch table."""
    built = pipeline.build([str(A100)])
    bare = rooflint.core.result.Result(
        built.launches, built.kernels, built.group_by, built.devices, built.inputs
    )
    assert views.at_level(bare, "l2").equals(views.at_level(built, "l2"))
    assert views.used_classes(bare, "a100-pcie-40gb") == ["matrix_fp16"]
