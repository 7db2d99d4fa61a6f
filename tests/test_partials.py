"""core/partials.py: per-file partial sums, merged, rank as the joined launch table does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rooflint
from rooflint.core import groupings, partials, ranking, totals
from tests.helpers import A100, B200_RAW, FIXTURES, RTX, shared

NCU_FILES = [A100, RTX, B200_RAW, FIXTURES / "ncu" / "h200-block-raw-stdout.csv"]


def _merged_ranking(result, group_by: str = "kernel") -> pd.DataFrame:
    """Each input's rows (Result.inputs[i].launches, a view of its rows) reduced to a partial,
    the partials merged in input order and ranked."""
    parts = [partials.of(p.launches, group_by) for p in result.inputs]
    return ranking.ranked(partials.merge(parts), result.latency_threshold)


def _same(merged: pd.DataFrame, whole: pd.DataFrame) -> None:
    """Equal but for the last bits of sums (partial sums added, not one sum)."""
    pd.testing.assert_frame_equal(merged, whole, check_exact=False, rtol=1e-12)


def _same_groups(merged: pd.DataFrame, whole: pd.DataFrame) -> None:
    """The same groups with the same numbers (but for the last bits of sums), whatever the
    order of groups whose time is equal but for those bits (and so their rank and id)."""
    keys = ["job", "group"] if "job" in whole else ["group"]
    rows = [f.drop(columns=["rank", "id"]) for f in (merged, whole)]
    _same(*[f.sort_values(keys, ignore_index=True) for f in rows])


@pytest.mark.parametrize("group_by", ["kernel", "family", "source"])
def test_merged_ncu_files_rank_as_their_joined_table(group_by):
    """Four real ncu exports of three GPUs (A100, RTX 2080 Ti, B200, H200): the full path ranks
    the merge of each file's partial (exactly, the first check) and one sum over their joined
    table gives the same groups and numbers (the second, the independent one)."""
    result = rooflint.report(*NCU_FILES, group_by=group_by)
    merged = _merged_ranking(result, group_by)
    pd.testing.assert_frame_equal(merged, result.kernels, check_exact=True)  # the full path's
    _same_groups(merged, ranking.rank(result.launches, group_by))  # one sum over the table


@pytest.mark.e2e  # reads ../shared/fixtures
def test_the_two_hta_ranks_merged_rank_as_their_joined_table():
    """HTA's two sampled rank traces (shared fixtures): 507 kernel groups over both ranks,
    collectives with bus bandwidth among them. Two of them, ampere_sgemm_32x128_tn (7 launches)
    and an unrolled_elementwise_kernel (1 launch), both take 270 µs: one sum over the joined
    table and the two ranks' sums added differ in the last bits, so the full path ranks the
    files' merged partials, as a reduced folder does."""
    ranks = [shared(f"kineto/hta-2rank-sampled-rank-{n}.json.gz") for n in (0, 1)]
    result = rooflint.report(*ranks)
    merged = _merged_ranking(result)
    keys = groupings.GROUPINGS["kernel"]  # pandas' own count of the distinct group keys
    assert len(merged) == result.launches.groupby(keys, observed=True, dropna=False).ngroups
    pd.testing.assert_frame_equal(merged, result.kernels, check_exact=True)
    _same_groups(merged, ranking.rank(result.launches))


def test_a_file_split_in_two_merges_back_to_its_counts_and_extremes():
    """a100-gemm-details.csv holds 11 launches (its ncu rows): the CUTLASS GEMM 6 times, from
    131.637 to 131.772 ms, ampere_s16816gemm once (106.975 ms). Split after the 5th launch, the
    two partials merge back to those counts and extremes exactly, and to the file's ranking."""
    launches = rooflint.report(A100).launches
    halves = [partials.of(launches.iloc[:5]), partials.of(launches.iloc[5:])]
    merged = ranking.ranked(partials.merge(halves))
    whole = ranking.rank(launches)
    _same(merged, whole)
    cutlass = merged[merged["kernel"].str.startswith("void cutlass::Kernel")].iloc[0]
    assert cutlass["launches"] == 6
    assert cutlass["duration_min_s"] == pytest.approx(0.131637, abs=5e-7)
    assert cutlass["duration_max_s"] == pytest.approx(0.131772, abs=5e-7)
    ampere = merged[merged["kernel"] == "ampere_s16816gemm_fp16_256x128_ldg8_stages_64x3_nn"]
    assert ampere["launches"].tolist() == [1]
    assert ampere["duration_s"].iloc[0] == pytest.approx(0.106975, abs=5e-7)


def test_merged_totals_give_the_joined_table_s_summary():
    """The headline numbers and the accounting of the four exports, from each file's totals
    merged, are those of their joined table."""
    result = rooflint.report(*NCU_FILES)
    merged = totals.merge([totals.of(p.launches) for p in result.inputs])
    whole = totals.of(result.launches)
    assert merged.launches == whole.launches == len(result.launches)
    assert merged.reasons == whole.reasons
    assert merged.analysed == whole.analysed and merged.not_analysable == whole.not_analysable
    assert merged.time_s == pytest.approx(whole.time_s, rel=1e-12)
    assert merged.t_bound_s == pytest.approx(whole.t_bound_s, rel=1e-12)
    assert merged.worst == whole.worst
    pd.testing.assert_series_equal(merged.unanalysed, whole.unanalysed, rtol=1e-12)


def test_a_job_leads_the_keys_of_a_file_of_one_job():
    """with_job: one file's groups are one job's (NO_VALUE for an input of no job)."""
    part = partials.of(rooflint.report(A100).launches)
    labelled = part.with_job("job 1")
    assert labelled.keys == ["job", *part.keys]
    assert set(labelled.groups["job"]) == {"job 1"}
    assert set(part.with_job(None).groups["job"]) == {partials.NO_VALUE}


def test_ncu_launch_facts_merge_to_the_longest_launch_s():
    """h200-block-raw-stdout.csv's 20 launches carry ncu's occupancy facts; each group takes
    them from its longest launch (core.group_facts). Split after the 7th launch, the merged
    partials pick the same launch's facts as the whole table does."""
    launches = rooflint.report(FIXTURES / "ncu" / "h200-block-raw-stdout.csv").launches
    assert len(launches) == 20
    halves = [partials.of(launches.iloc[:7]), partials.of(launches.iloc[7:])]
    merged = ranking.ranked(partials.merge(halves))
    assert "occupancy_achieved" in merged
    _same(merged, ranking.rank(launches))


@pytest.mark.e2e  # reads ../shared/fixtures
def test_a_result_ranked_again_ranks_as_it_was_assembled():
    """rooflint.report(result) ranks the Result's launches again: by its inputs' partials, as
    the folder was ranked when read, so the same grouping gives the same table (HTA's two
    ranks hold two groups of equal time but for the last bits of their sums)."""
    ranks = [shared(f"kineto/hta-2rank-sampled-rank-{n}.json.gz") for n in (0, 1)]
    result = rooflint.report(*ranks)
    again = rooflint.report(result, group_by="kernel")
    pd.testing.assert_frame_equal(again.kernels, result.kernels, check_exact=True)


def test_classes_counts_only_positive_operations_na_and_zero_are_none():
    table = pd.DataFrame(
        {
            "ops_vector_fp32": pd.array([None, 0.0, 3.0], dtype="Float64"),
            "ops_vector_fp64": [np.nan, 0.0, -1.0],
            "ops_matrix_fp16": [0.0, 0.0, 0.0],
        }
    )
    assert partials._classes(table) == ["vector_fp32"]
    assert partials._classes(table.iloc[:2]) == []


@pytest.mark.parametrize("in_order", [True, False])
def test_group_sums_are_each_column_s_own_pandas_group_sum_to_the_bit(in_order):
    """The block sums equal each column's pandas group sum bit for bit: columns without NaN,
    with some, all NaN, an infinity and a nullable one side by side (pandas sums a block of
    groups in order with np.add.reduceat unless it holds NaN: one NaN column in the block would
    change the others' last bits), for groups in order and not."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 2000))
        labels = rng.integers(0, int(rng.integers(1, 50)), n)
        group = pd.factorize(np.sort(labels) if in_order else labels)[0]
        columns: dict = {}
        for j in range(8):
            values = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 15, n)
            values[rng.random(n) < [0.0, 0.3, 1.0, 0.0][j % 4]] = np.nan
            values[0] = np.inf if j == 3 else values[0]
            columns[f"c{j}"] = pd.Series(values) if j % 2 else values
        columns["nullable"] = pd.array(rng.integers(0, 5, n), dtype="Int64")
        summed = partials._group_sums(columns, group)
        for name, values in columns.items():
            alone = pd.Series(values).groupby(group, sort=False).sum(min_count=1).to_numpy()
            assert summed[name].tobytes() == alone.tobytes(), name
