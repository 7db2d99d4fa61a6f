"""The launch table's text columns: Categoricals of sorted strings (core/schema.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rooflint
from rooflint.core import schema
from tests.helpers import profile_params, real_path


def test_strings_keeps_only_used_labels_sorted():
    # codes into ["b", "a", "c"]: "c" is never used; -1 is NA
    column = schema.strings(np.array([0, 1, -1, 0]), ["b", "a", "c"])
    assert list(column.categories) == ["a", "b"]
    assert list(column.astype(object)) == ["b", "a", np.nan, "b"]


def test_text_of_strings_and_of_unsorted_categoricals():
    strings = pd.Series(["z", None, "y", "z"], dtype="string")
    column = schema.text(strings, fill="")
    assert list(column.categories) == ["", "y", "z"]
    assert list(column.astype(object)) == ["z", "", "y", "z"]
    unsorted = pd.Categorical(["q", "p"], categories=["q", "p", "unused"])
    assert list(schema.text(unsorted).categories) == ["p", "q"]


def test_concat_keeps_text_categorical_over_the_union():
    one = schema.conform(pd.DataFrame({"kernel": ["gemm", "copy"], "duration_s": [1.0, 2.0]}))
    two = schema.conform(pd.DataFrame({"kernel": ["softmax"], "duration_s": [3.0]}))
    both = schema.concat([one, two], ignore_index=True)
    schema.validate(both)
    assert list(both["kernel"].cat.categories) == ["copy", "gemm", "softmax"]
    assert both["kernel"].tolist() == ["gemm", "copy", "softmax"]
    # pd.concat alone drops the Categorical: the reason schema.concat exists
    assert not isinstance(pd.concat([one, two])["kernel"].dtype, pd.CategoricalDtype)


def test_concat_of_tables_with_other_columns_keeps_pandas_order_index_and_na():
    """A column only some tables hold (a PyTorch trace's `op`) comes where pd.concat puts it,
    missing where a table lacked it; NA text stays NA; the index is pd.concat's."""
    one = schema.conform(pd.DataFrame({"kernel": ["gemm", None], "duration_s": [1.0, 2.0]}))
    two = schema.conform(pd.DataFrame({"kernel": ["copy"], "duration_s": [3.0]}))
    two["op"] = pd.array(["aten::mm"], dtype="string")
    both = schema.concat([one, two])
    assert list(both.columns) == list(pd.concat([one, two]).columns)
    assert list(both.index) == [0, 1, 0]
    assert both["kernel"].astype(object).tolist() == ["gemm", np.nan, "copy"]
    assert list(both["kernel"].cat.categories) == ["copy", "gemm"]
    assert both["op"].isna().tolist() == [True, True, False] and both["op"].iloc[2] == "aten::mm"
    assert both["duration_s"].tolist() == [1.0, 2.0, 3.0]


def test_filled_adds_the_category_it_fills_with():
    column = pd.Series(pd.Categorical(["a", None]))
    assert schema.filled(column, "(none)").tolist() == ["a", "(none)"]
    assert schema.filled(pd.Series(pd.Categorical(["a"])), "(none)").tolist() == ["a"]


ANALYSIS_TEXT = ["device_id", "limiter", "verdict", "reason", "family"]


@pytest.mark.parametrize("path", profile_params())
def test_every_reader_hands_over_categorical_text(path):
    """Every reader's table, analysed, keeps the dtype contract (schema.validate): no reader
    or later step writes a plain string column into the table."""
    launches = rooflint.report(real_path(path)).launches
    schema.validate(launches)
    for column in ANALYSIS_TEXT:
        assert isinstance(launches[column].dtype, pd.CategoricalDtype), column


@pytest.mark.parametrize("rows, texts", [(0, 1), (5, 3), (2000, 40), (100, 900)])
def test_compacted_keeps_the_used_texts_as_np_unique_would(rows, texts):
    codes = np.random.default_rng(rows).integers(0, texts, size=rows)
    labels = [f"note {i}" for i in range(texts)]
    used, inverse = np.unique(codes, return_inverse=True)
    got_codes, got_labels = schema._compacted(codes, labels)
    assert got_codes.tolist() == inverse.reshape(-1).tolist()
    assert got_labels == [labels[i] for i in used]


@pytest.mark.parametrize("seed", range(5))
def test_first_rows_are_what_np_unique_says(seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 40, size=int(rng.integers(0, 500)))  # some codes never occur
    want_seen, want_first = np.unique(codes, return_index=True)
    for n in (40, None):  # None: as many as the largest code needs
        seen, first = schema.first_rows(codes, n)
        assert seen.tolist() == want_seen.tolist() and first.tolist() == want_first.tolist()
