"""The launch table built straight from a reader's arrays (issue 32) is the table
`schema.conform` makes from plain values: the same dtypes, categories and values, on the
real exports; and Parquet output is written a row group per input file or slice of one."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from rooflint import parsers, pipeline
from rooflint.core import schema
from rooflint.reporters import parquet_report
from tests.helpers import FIXTURES, profile_params, real_path

H200_BLOCK = FIXTURES / "ncu" / "h200-block-raw-stdout.csv"
# The ncu CSV exports among the real profiles (the shared ones skip one by one when absent).
NCU = [p for p in profile_params(("ncu",)) if ".csv" in p.values[0] and "nvprof" not in p.values[0]]
BUNDLED_NCU = sorted(p for p in (FIXTURES / "ncu").rglob("*.csv*") if "nvprof" not in p.name)


def _plain(launches: pd.DataFrame) -> pd.DataFrame:
    """The table's columns as plain values, as a caller or an older reader would give them:
    text as Python strings (NA as None), IDs as objects, floats as they are."""
    out = {}
    for column in [*schema.COLUMNS, *schema.CODES]:
        values = launches[column]
        if column in schema.FLOAT_COLUMNS or column in schema.CODES:
            out[column] = values.to_numpy(copy=True)
        else:
            out[column] = values.astype(object).where(values.notna(), None).to_numpy()
    return pd.DataFrame(out)


def _readable(path):
    try:
        return parsers.read(path)
    except Exception:  # an export the reader refuses (the failed B200 run): nothing to compare
        return None


@pytest.mark.parametrize("param", NCU)
def test_the_built_table_is_what_conform_makes_of_plain_values(param):
    """Every ncu CSV fixture read as the reader builds it (Arrow dictionaries to Categoricals,
    int64 IDs, float64 arrays, `schema.conformed` once) equals `schema.conform` of the same
    columns given as plain Python values: dtypes, categories (sorted, each used) and values."""
    profile = _readable(real_path(param))
    if profile is None:
        pytest.skip("the reader refuses this file")
    built = profile.launches[[*schema.COLUMNS, *schema.CODES]]
    slow = schema.conform(_plain(built))
    pd.testing.assert_frame_equal(built, slow, check_exact=True)
    for column in schema.STRING_COLUMNS:
        categories = built[column].cat.categories
        assert categories.is_monotonic_increasing and categories.is_unique, column
        codes = built[column].cat.codes.to_numpy()
        assert set(codes[codes >= 0]) == set(range(len(categories))), column


def test_conformed_equals_conform_of_a_frame_of_the_same_columns():
    """schema.conformed(columns, n), the readers' fast path, against schema.conform of a
    DataFrame of those columns, on the H200 block export's table read back as plain values."""
    built = parsers.read(H200_BLOCK).launches
    plain = _plain(built)
    columns = {c: plain[c].to_numpy() for c in plain.columns if c != "missing_codes"}
    fast = schema.conformed(columns, len(plain))
    pd.testing.assert_frame_equal(fast, schema.conform(pd.DataFrame(columns)), check_exact=True)


def test_identity_of_the_h200_block_export_by_hand():
    """h200-block-raw-stdout.csv, counted in the file: 20 launches, IDs 0..19, one process
    (495), CC 9.0 on every row, 5 distinct kernel names; the first launch's grid (8192, 1, 1)."""
    launches = parsers.read(H200_BLOCK).launches
    assert launches["launch_id"].dtype == "Int64"
    assert launches["launch_id"].tolist() == list(range(20))
    assert launches["process_id"].tolist() == [495] * 20
    assert launches["arch"].cat.categories.tolist() == ["9.0"]
    kernels = launches["kernel"].cat.categories.tolist()
    assert len(kernels) == 5 and kernels == sorted(kernels)
    assert kernels[0].startswith("cudnn_generated_fort_native_sdpa_sm90")
    assert launches["grid"].iloc[0] == "(8192, 1, 1)"
    assert np.isnan(launches["sm_count"]).sum() < 20  # the device attribute was read


def _groups(file: pq.ParquetFile) -> list[int]:
    return [file.metadata.row_group(i).num_rows for i in range(file.metadata.num_row_groups)]


def _two_exports():
    return pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv"), str(H200_BLOCK)])


def test_parquet_row_groups_are_per_input_file_and_slice(monkeypatch):
    """a100-gemm-details.csv (11 launches) and h200-block-raw-stdout.csv (20), 8 rows a slice:
    row groups of 8 + 3 rows (the A100's), then 8 + 8 + 4 (the H200's): no group holds rows of
    two files, and the file reads back as the whole table does."""
    monkeypatch.setattr(parquet_report, "CHUNK_ROWS", 8)
    result = _two_exports()
    assert [len(p.launches) for p in result.inputs] == [11, 20]
    data = parquet_report.render(result)
    assert _groups(pq.ParquetFile(io.BytesIO(data))) == [8, 3, 8, 8, 4]
    assert pq.read_table(io.BytesIO(data)).equals(parquet_report.arrow_table(result))


def test_parquet_dataset_is_one_file_per_source_in_row_groups(monkeypatch, tmp_path):
    """The same two exports as a dataset folder: one partition per source, each one file whose
    row groups are its source's slices (8 + 3, 8 + 8 + 4), read back as the whole table."""
    monkeypatch.setattr(parquet_report, "CHUNK_ROWS", 8)
    result = _two_exports()
    parquet_report.render(result, output=str(tmp_path / "out") + "/")
    files = sorted((tmp_path / "out").glob("source_key=*/*.parquet"))
    assert [f.parent.name.split("_")[-1] for f in files] == [
        "a100-gemm-details.csv",
        "h200-block-raw-stdout.csv",
    ]
    groups = [
        [
            pq.ParquetFile(f).metadata.row_group(i).num_rows
            for i in range(pq.ParquetFile(f).metadata.num_row_groups)
        ]
        for f in files
    ]
    assert groups == [[8, 3], [8, 8, 4]]
    read = ds.dataset(tmp_path / "out", format="parquet", partitioning="hive").to_table()
    whole = parquet_report.arrow_table(result)
    assert read.select(whole.column_names).to_pylist() == whole.to_pylist()


def _slow_concat(frames, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(schema, "alike", lambda frames: False)
        return schema.concat(frames, ignore_index=True)


def test_a_folders_tables_joined_a_column_at_a_time_as_pd_concat_joins_them(monkeypatch):
    """The tables of the bundled ncu CSV fixtures, one reader's (raw and details pages, H200
    to RTX 2080 Ti: other kernels, devices and missing words in each), joined by schema.concat's
    column-wise path equal its pd.concat path: values, dtypes, the union of categories."""
    frames = [p.launches for p in map(_readable, BUNDLED_NCU) if p is not None]
    assert len(frames) > 5
    fast = schema.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(fast, _slow_concat(frames, monkeypatch), check_exact=True)
    kernels = fast["kernel"].cat.categories
    assert kernels.tolist() == sorted({k for f in frames for k in f["kernel"].dropna()})


def test_column_arrays_by_pandas_iterator_and_by_name_are_the_same(monkeypatch):
    """schema._column_arrays reads pandas' column iterator where it has it; the public way
    (frame[column]) gives the same arrays for a real launch table."""
    launches = parsers.read(H200_BLOCK).launches
    fast = schema._column_arrays(launches)
    monkeypatch.setattr(pd.DataFrame, "_iter_column_arrays", None, raising=False)
    slow = schema._column_arrays(launches)
    assert len(fast) == len(slow) == len(launches.columns)
    for a, b in zip(fast, slow, strict=True):
        assert type(a) is type(b)
        pd.testing.assert_series_equal(pd.Series(a), pd.Series(b), check_exact=True)
