"""Dask: analysing a Parquet dataset partition by partition reproduces the one-machine ranking."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.e2e  # three 1,500-launch traces through Dask: over a second

from rooflint import distributed, hardware, pipeline  # noqa: E402
from rooflint.cli import main  # noqa: E402
from rooflint.core import analysis, families, ranking, schema  # noqa: E402
from rooflint.core.errors import UsageError  # noqa: E402
from tests.helpers import FIXTURES, benchmark_generator  # noqa: E402


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Several devices and vendors, and three synthetic whole-model traces sharing kernels."""
    folder = tmp_path_factory.mktemp("traces")
    for name in ("a100-gemm-details.csv", "rtx2080ti-sgemm-raw-base.csv", "rtx3070-nvtx-raw.csv"):
        shutil.copy(FIXTURES / "ncu" / name, folder)
    shutil.copy(FIXTURES / "rocprof" / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv", folder)
    generate = benchmark_generator()
    for seed in (1, 2, 3):
        (folder / f"rank{seed}.csv").write_bytes(generate.raw(1500, kernel_count=40, seed=seed))
    return folder


@pytest.fixture(scope="module")
def dataset(traces, tmp_path_factory):
    out = tmp_path_factory.mktemp("parquet") / "launches"
    res = CliRunner().invoke(
        main, ["report", str(traces), "--format", "parquet", "-o", f"{out}/", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    return out


def _same_ranking(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == ranking.KERNEL_COLUMNS
    assert got["group"].tolist() == want["group"].tolist()  # same order
    assert got["rank"].tolist() == want["rank"].tolist()
    for column in ("launches", "analysed", "above_roof_launches"):
        assert got[column].tolist() == want[column].tolist(), column
    for column in (
        "headroom_s",
        "duration_s",
        "t_bound_s",
        "efficiency",
        "time_share",
        "headroom_share",
        "flops",
    ):
        np.testing.assert_allclose(
            got[column].to_numpy(float),
            want[column].to_numpy(float, na_value=np.nan),
            rtol=1e-12,
            atol=0,
            equal_nan=True,
            err_msg=column,
        )
    for column in ("verdict", "limiter", "device_id", "reason"):
        assert (
            got[column].astype("string").fillna("").tolist()
            == want[column].astype("string").fillna("").tolist()
        )


@pytest.fixture(scope="module")
def single(traces):
    return pipeline.build([str(traces)])


def test_build_ranks_what_the_test_ranks(single):
    assert (
        single.kernels["group"].tolist()
        == ranking.rank(single.launches, "kernel")["group"].tolist()
    )


@pytest.mark.parametrize("group_by", list(ranking.GROUPINGS))
def test_dask_reproduces_the_single_machine_ranking(single, dataset, group_by):
    want = ranking.rank(single.launches, group_by, single.latency_threshold)  # what build() ranks
    got = distributed.rank_dataset(dataset, group_by=group_by, scheduler="synchronous")
    assert len(want) >= (1 if group_by in ("op", "module") else 4)  # no PyTorch trace: one group
    _same_ranking(got, want)


def test_many_partitions_are_analysed_separately(dataset):
    import dask.dataframe as dd

    assert dd.read_parquet(str(dataset)).npartitions == 7  # one per input file


def test_a_named_device_replaces_the_recorded_ceilings(single, dataset):
    device = hardware.get("h100-sxm")
    again = analysis.analyze(
        schema.conform_all(single.launches), device
    )  # the catalog ceilings as they are
    want = ranking.rank(again.assign(family=families.classify(again["kernel"])), "kernel")
    got = distributed.rank_dataset(dataset, device="h100-sxm", scheduler="synchronous")
    _same_ranking(got, want)
    assert set(got["device_id"].dropna()) == {"h100-sxm"}


def test_devices_are_rebuilt_from_the_dataset_metadata(dataset):
    meta = distributed.dataset_metadata(dataset)
    devices = distributed.resolve_devices(meta)
    assert len(devices) == 7 and len(meta["sources"]) == 7
    a100 = next(d for s, d in devices.items() if s.endswith("a100-gemm-details.csv"))
    catalog = hardware.get("a100-pcie-40gb")
    assert a100.id == catalog.id
    assert (
        a100.memory["dram"].value == catalog.memory["dram"].value
    )  # datasheet bandwidth, not rescaled
    assert (
        a100.compute["matrix_fp16"].value < catalog.compute["matrix_fp16"].value
    )  # at the run's clock


def test_a_partition_holding_two_sources_uses_each_ones_device(dataset):
    frame = pd.read_parquet(dataset)
    meta = distributed.dataset_metadata(dataset)
    devices = distributed.resolve_devices(meta)
    out = distributed.analyze_partition(frame, devices, 0.6)
    assert len(out) == len(frame)
    by_source = out.groupby("source")["device_id"].agg(lambda s: set(s.dropna()))
    for source, ids in by_source.items():
        device = devices[source]
        assert set(ids) == ({device.id} if device is not None else set())


def test_empty_partition_has_the_result_columns(dataset):
    frame = pd.read_parquet(dataset).iloc[:0]
    out = distributed.analyze_partition(frame, {}, 0.6)
    assert out.empty and {"headroom_s", "verdict", "family"} <= set(out.columns)


def test_interleaved_sources_keep_each_rows_result(dataset):
    # rows of two sources taken alternately: each run of one source's rows gets that source's
    # device, so every row's result is the one it has in file order
    frame = pd.read_parquet(dataset).reset_index(drop=True)
    devices = distributed.resolve_devices(distributed.dataset_metadata(dataset))
    assert frame["source"].nunique() >= 2
    order = np.argsort(frame.groupby("source", observed=True).cumcount().to_numpy(), kind="stable")
    mixed = frame.iloc[order]
    assert (mixed["source"].to_numpy()[1:] != mixed["source"].to_numpy()[:-1]).sum() > 2
    in_order = distributed.analyze_partition(frame, devices, 0.6)
    shuffled = distributed.analyze_partition(mixed, devices, 0.6)
    for column in ("device_id", "t_bound_s", "verdict", "headroom_s"):
        expected = in_order[column].iloc[order].astype(object).reset_index(drop=True)
        got = shuffled[column].astype(object).reset_index(drop=True)
        pd.testing.assert_series_equal(got, expected, check_exact=True)


# --- a folder of shards: each run's dataset in its own sub-folder --------------------------------


def _write(inputs: list, out) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["report", *map(str, inputs), "--format", "parquet", "-o", f"{out}/", "--quiet"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output


def test_a_folder_of_two_shards_ranks_as_one_run_of_all_their_inputs(tmp_path):
    """Issue 32: with two shards under one folder, only the first shard's metadata was read; the
    second shard's launches had no ceilings, and 24 of 50 groups were "not analysable" (21 in
    one run of the same three files: the ncu exports' groups without FLOP counters)."""
    first = [
        FIXTURES / "ncu" / "a100-gemm-details.csv",
        FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv",
    ]
    second = [FIXTURES / "kineto" / "h200-train-trace.json.gz"]
    _write(first, tmp_path / "runs" / "a")
    _write(second, tmp_path / "runs" / "b")
    meta = distributed.dataset_metadata(tmp_path / "runs")
    assert meta["shards"] == ["a", "b"]
    assert meta["sources"] == [str(p) for p in first + second]
    got = distributed.rank_dataset(tmp_path / "runs", scheduler="synchronous")
    _same_ranking(got, pipeline.build([str(p) for p in first + second]).kernels)


def test_a_source_in_two_shards_is_refused_naming_both(tmp_path):
    export = FIXTURES / "ncu" / "a100-gemm-details.csv"
    _write([export], tmp_path / "runs" / "monday")
    _write([export], tmp_path / "runs" / "tuesday")
    with pytest.raises(UsageError) as refused:
        distributed.dataset_metadata(tmp_path / "runs")
    assert f"{export} is in both monday and tuesday" in str(refused.value)


def test_launches_beside_ranked_groups_are_refused(tmp_path):
    _write([FIXTURES / "ncu" / "a100-gemm-details.csv"], tmp_path / "runs" / "launches")
    args = ["report", str(FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"), "--format"]
    out = tmp_path / "runs" / "groups"
    res = CliRunner().invoke(main, [*args, "parquet", "--per", "kernel", "-o", f"{out}/"])
    assert res.exit_code == 0, res.output
    with pytest.raises(UsageError, match="groups has per 'kernel' and launches 'launch'"):
        distributed.dataset_metadata(tmp_path / "runs")
