"""Parquet output: one file, or a Hive-partitioned dataset that pandas, pyarrow and DuckDB read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rooflint import pipeline
from rooflint.cli import main
from rooflint.core import analysis, schema
from rooflint.reporters import parquet_report
from tests.helpers import FIXTURES

NCU = FIXTURES / "ncu"


@pytest.fixture
def inputs(tmp_path) -> Path:
    folder = tmp_path / "in put"  # a space: the partition value must be made folder-safe
    folder.mkdir()
    for name in ("a100-gemm-details.csv", "rtx2080ti-sgemm-raw-base.csv", "rtx3070-nvtx-raw.csv"):
        shutil.copy(NCU / name, folder)
    shutil.copy(FIXTURES / "rocprof" / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv", folder)
    return folder


def _report(*args) -> None:
    out = CliRunner().invoke(main, ["report", *map(str, args), "--quiet"])
    assert out.exit_code == 0, out.output


def _in_order(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["source", "launch_id"], kind="mergesort").reset_index(drop=True)


@pytest.mark.e2e  # over a second
def test_dataset_folder_is_partitioned_by_source_and_reads_back_exactly(inputs, tmp_path):
    out = tmp_path / "out"
    _report(inputs, "--format", "parquet", "-o", f"{out}/")
    expected = pipeline.build([str(inputs)]).launches
    parts = sorted(p.name for p in out.iterdir())
    assert parts == sorted(
        f"source_key={s}"
        for s in parquet_report.partition_values(pd.Series(expected["source"].unique())).to_pylist()
    )
    assert all(" " not in p and "/" not in p for p in parts)
    assert [p.name for p in (out / parts[0]).iterdir()] == ["part-0.parquet"]

    back = _in_order(pd.read_parquet(out))
    want = _in_order(expected)
    assert len(back) == len(want) == 18
    for column in schema.COLUMNS + analysis.RESULT_COLUMNS + ["family"]:
        assert column in back.columns, column
        if column in schema.INT_COLUMNS:  # nullable integers come back as float where NA is present
            assert back[column].astype("Int64").tolist() == want[column].astype("Int64").tolist(), (
                column
            )
        elif column in schema.FLOAT_COLUMNS or pd.api.types.is_float_dtype(want[column]):
            np.testing.assert_array_equal(
                back[column].to_numpy(float), want[column].to_numpy(float, na_value=np.nan)
            )
        else:
            assert (
                back[column].astype("string").fillna("<NA>").tolist()
                == want[column].astype("string").fillna("<NA>").tolist()
            ), column
    assert set(back["source"]) == {
        str(inputs / n)
        for n in (
            "a100-gemm-details.csv",
            "rtx2080ti-sgemm-raw-base.csv",
            "rtx3070-nvtx-raw.csv",
            "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
        )
    }


@pytest.mark.e2e  # over a second
def test_schema_metadata_carries_version_units_devices_and_ceilings(inputs, tmp_path):
    out = tmp_path / "out"
    _report(inputs, "--format", "parquet", "-o", f"{out}/")
    dataset = ds.dataset(out, format="parquet", partitioning="hive")
    meta = json.loads(dataset.schema.metadata[b"rooflint"])
    assert meta["format_version"] == schema.FORMAT_VERSION
    assert meta["per"] == "launch" and meta["partitioning"]["column"] == "source_key"
    assert meta["units"]["duration_s"] == "s" and meta["units"]["headroom_s"] == "s"
    devices = {d["id"]: d for d in meta["devices"]}
    assert {"a100-pcie-40gb", "rtx-2080-ti", "rtx-3070"} <= set(devices)
    a100_dram = [c for c in devices["a100-pcie-40gb"]["ceilings"] if c["name"] == "dram"][0]
    assert a100_dram["unit"] == "byte/s" and a100_dram["value"] > 1e12
    assert dataset.schema.field("bytes_dram").metadata == {b"unit": b"byte"}
    assert dataset.schema.field("efficiency").metadata == {b"unit": b"fraction of attainable"}
    assert dataset.schema.field("kernel").metadata is None
    assert dataset.count_rows() == 18


def test_missing_quantities_are_null_not_nan(inputs, tmp_path):
    out = tmp_path / "r.parquet"
    _report(inputs / "rtx3070-nvtx-raw.csv", "-o", out)  # no FLOP counters in this export
    table = pq.read_table(out)
    assert table.column("ops_vector_fp32").null_count == 3
    assert table.column("flops").null_count == 3
    assert table.column("intensity_dram").null_count == 3
    assert table.column("duration_s").null_count == 0


@pytest.mark.e2e  # over a second
def test_duckdb_reads_the_dataset(inputs, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "out"
    _report(inputs, "--format", "parquet", "-o", f"{out}/")
    expected = pipeline.build([str(inputs)]).launches
    rows = duckdb.sql(
        f"SELECT source, count(*), sum(headroom_s) FROM read_parquet('{out}/**/*.parquet', "
        "hive_partitioning = true) GROUP BY source ORDER BY source"
    ).fetchall()
    want = expected.groupby("source")["headroom_s"].agg(["size", "sum"])
    assert [r[0] for r in rows] == list(want.index)
    for (_source, count, headroom), (size, total) in zip(
        rows, want.itertuples(index=False), strict=True
    ):
        assert count == size
        assert (headroom or 0.0) == pytest.approx(total)


@pytest.mark.e2e  # over a second
def test_single_file_output(inputs, tmp_path):
    out = tmp_path / "launches.parquet"
    _report(inputs, "-o", out)  # format from the extension
    table = pq.read_table(out)
    expected = pipeline.build([str(inputs)]).launches
    assert table.num_rows == len(expected)
    assert table.column("source").to_pylist() == expected["source"].tolist()  # input order kept
    assert (
        table.column("source_key").to_pylist()
        == parquet_report.partition_values(expected["source"]).to_pylist()
    )
    assert json.loads(table.schema.metadata[b"rooflint"])["per"] == "launch"


@pytest.mark.e2e  # over a second
@pytest.mark.parametrize("target", ["launches.parquet", "dataset/"])
def test_only_text_columns_are_dictionary_encoded(inputs, tmp_path, target):
    """Names and verdicts repeat, measured quantities rarely do: a dictionary per float column
    made files larger (38.2 against 31.4 MB at 200k launches, benchmarks/formats.py)."""
    out = tmp_path / target
    _report(inputs, "-f", "parquet", "-o", out)
    part = out if out.is_file() else next(out.rglob("*.parquet"))
    group = pq.ParquetFile(part).metadata.row_group(0)
    encodings = {
        group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)
    }
    assert "RLE_DICTIONARY" in encodings["kernel"] and "RLE_DICTIONARY" in encodings["verdict"]
    assert "RLE_DICTIONARY" not in encodings["duration_s"] + encodings["headroom_s"]


@pytest.mark.e2e  # over a second
def test_per_kernel_writes_the_ranked_groups(inputs, tmp_path):
    out = tmp_path / "kernels.parquet"
    _report(inputs, "-o", out, "--per", "kernel", "--group-by", "name")
    frame = pd.read_parquet(out)
    expected = pipeline.build([str(inputs)], pipeline.Options(group_by="name")).kernels
    assert frame["rank"].tolist() == list(range(1, len(expected) + 1))
    assert frame["group"].tolist() == expected["group"].tolist()
    np.testing.assert_array_equal(
        frame["headroom_s"].to_numpy(float), expected["headroom_s"].to_numpy(float)
    )
    meta = json.loads(pq.read_schema(out).metadata[b"rooflint"])
    assert meta["per"] == "kernel" and meta["group_by"] == "name" and meta["partitioning"] is None


@pytest.mark.e2e  # over a second
def test_per_kernel_to_a_folder_is_one_unpartitioned_file(inputs, tmp_path):
    out = tmp_path / "groups"
    _report(inputs, "--format", "parquet", "-o", f"{out}/", "--per", "kernel")
    assert [p.name for p in out.iterdir()] == ["part-0.parquet"]
    assert len(pd.read_parquet(out)) == len(pipeline.build([str(inputs)]).kernels)


def test_writing_again_leaves_the_earlier_dataset_as_it_was(inputs, tmp_path):
    """Issue 32: a second run into the same folder replaced the first run's dataset. It is now
    refused, the dataset untouched, with the fix: a folder of its own, beside the first."""
    out = tmp_path / "out"
    _report(inputs, "--format", "parquet", "-o", f"{out}/")
    before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    res = CliRunner().invoke(
        main,
        ["report", str(inputs / "a100-gemm-details.csv"), "--format", "parquet", "-o", str(out)],
    )
    assert res.exit_code == 2
    assert res.stderr == (
        f"rooflint: error: {out}: output folder already holds a rooflint dataset, which is left "
        f"as it is; write this run to a new folder beside it (e.g. {tmp_path / 'out-2'}/: "
        "rooflint.distributed reads the sub-folders of one folder as one dataset), or delete the "
        "old one first\n"
    )
    assert sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*")) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_an_empty_existing_folder_takes_the_dataset(inputs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _report(inputs / "a100-gemm-details.csv", "--format", "parquet", "-o", f"{out}/")
    assert len(pd.read_parquet(out)) == 11


def test_a_folder_holding_other_files_is_refused_and_untouched(inputs, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    res = CliRunner().invoke(main, ["report", str(inputs), "--format", "parquet", "-o", f"{out}/"])
    assert res.exit_code == 2
    assert "not empty" in res.stderr
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


@pytest.mark.e2e  # over a second
def test_missing_parent_folder_is_a_usage_error(inputs, tmp_path):
    res = CliRunner().invoke(
        main, ["report", str(inputs), "--format", "parquet", "-o", f"{tmp_path}/no/such/"]
    )
    assert res.exit_code == 2
    assert "does not exist" in res.stderr


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        (["/data/run 1/a.csv"], ["data_run_1_a.csv"]),
        (["prof.csv", "./prof.csv"], ["prof.csv-", "prof.csv-"]),  # collide: both get a hash
        (["", "ünïcode.csv"], ["unnamed", "n_code.csv"]),
    ],
)
def test_partition_values_are_folder_safe_and_distinct(sources, expected):
    values = parquet_report.partition_values(pd.Series(sources)).to_pylist()
    for value, start in zip(values, expected, strict=True):
        assert value.startswith(start)
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in value)
    assert len(set(values)) == len(set(sources))


def test_a_source_keeps_its_partition_value_in_every_row_group():
    """Two sources that make the same folder name both get a hash, also in a row group that
    holds only one of them (each group's values were once worked out from its own rows)."""
    res = pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv")])  # 11 launches
    res.launches["source"] = schema.text(pd.Series(["prof.csv"] * 6 + ["./prof.csv"] * 5))
    whole = parquet_report.arrow_table(res, "launch").column("source_key").to_pylist()
    first = parquet_report.arrow_table(res, "launch", slice(0, 3)).column("source_key")
    assert first.to_pylist() == whole[:3] and whole[0] != whole[-1]
    assert whole[0].startswith("prof.csv-")


def test_long_sources_are_cut_with_a_hash():
    long = "/" + "deep/" * 40 + "profile.csv"
    value = parquet_report.partition_values(pd.Series([long])).to_pylist()[0]
    assert len(value) <= 80 and value.endswith(
        parquet_report.partition_values(pd.Series([long])).to_pylist()[0][-9:]
    )
    assert "profile.csv" in value


def test_single_file_is_written_in_row_groups_with_the_same_rows(monkeypatch):
    """A file is converted and handed out a chunk at a time (bounded memory); it reads back as
    the whole table."""
    import io

    from rooflint import pipeline
    from rooflint.reporters import parquet_report

    res = pipeline.build(
        [str(Path(__file__).resolve().parents[1] / "fixtures" / "ncu" / "a100-gemm-details.csv")]
    )
    monkeypatch.setattr(parquet_report, "CHUNK_ROWS", 3)
    data = parquet_report.render(res)
    assert pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups == 4  # 11 launches, 3 a group
    assert pq.read_table(io.BytesIO(data)).equals(parquet_report.arrow_table(res))
    pieces = list(parquet_report.pieces(res))  # what the command line writes: never the whole
    assert len(pieces) == 5  # file at once: a piece per row group, then the footer
    assert b"".join(pieces) == data
    assert all(pieces) and pieces[0].startswith(b"PAR1") and not pieces[1].startswith(b"PAR1")


def test_a_trace_report_keeps_its_operator_columns(tmp_path):
    """The H200 block trace joined with its ncu export (tests/test_h200_block.py): each launch
    keeps its operator, module path and sources, each group its excess-traffic ratio."""
    trace = FIXTURES / "kineto" / "h200-block-trace.json.gz"
    export = FIXTURES / "ncu" / "h200-block-raw-stdout.csv"
    result = pipeline.build([str(trace), str(export)])
    launches = parquet_report.arrow_table(result, "launch")
    for column in schema.TRACE_COLUMNS:
        assert column in launches.schema.names
    assert str(launches.schema.field("graph_replay").type) == "bool"
    assert str(launches.schema.field("stream").type) == "int64"
    frame = launches.to_pandas()
    gemms = frame[frame["kernel"].str.startswith("nvjet")]
    assert set(gemms["op"]) == {"aten::addmm"} and set(gemms["flops_source"]) == {"counters"}
    assert gemms["excess_traffic"].notna().all()
    kernels = parquet_report.arrow_table(result, "kernel").to_pandas()
    assert kernels["excess_traffic"].notna().sum() == kernels["excess_traffic"].size - 1  # memset


def test_a_profile_report_has_no_trace_columns():
    """Only the minimum bytes: the A100 export's CUTLASS GEMM has its shape in its name."""
    launches = parquet_report.arrow_table(pipeline.build([str(NCU / "a100-gemm-details.csv")]))
    trace_only = set(schema.TRACE_COLUMNS) - set(schema.MODEL_COLUMNS)
    assert not trace_only & set(launches.schema.names)
    assert set(schema.MODEL_COLUMNS) <= set(launches.schema.names)
