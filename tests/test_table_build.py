"""The launch table built straight from a reader's arrays (issue 32) is the table
`schema.conform` makes from plain values: the same dtypes, categories and values, on the
real exports; and Parquet output is written a row group per input file or slice of one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rooflint import parsers
from rooflint.core import schema
from tests.helpers import FIXTURES, SHARED

H200_BLOCK = FIXTURES / "ncu" / "h200-block-raw-stdout.csv"
NCU = sorted(
    p
    for p in [*(FIXTURES / "ncu").rglob("*.csv*"), *(SHARED / "ncu").rglob("*.csv")]
    if "nvprof" not in p.name
)


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


@pytest.mark.parametrize("path", NCU, ids=lambda p: p.name)
def test_the_built_table_is_what_conform_makes_of_plain_values(path):
    """Every ncu CSV fixture read as the reader builds it (Arrow dictionaries to Categoricals,
    int64 IDs, float64 arrays, `schema.conformed` once) equals `schema.conform` of the same
    columns given as plain Python values: dtypes, categories (sorted, each used) and values."""
    profile = _readable(path)
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
