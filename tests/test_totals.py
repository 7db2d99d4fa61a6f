"""core.totals: the verdict times and the worst launch above its roof, against their definitions
(pandas' sum per verdict, the first row of a stable sort by efficiency)."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflint.core import totals, verdicts

EFFICIENCIES = st.sampled_from([0.5, 1.2, 1.2, 3.0, math.inf, -math.inf, math.nan])
DURATIONS = st.sampled_from([1e-6, 3e-5, 0.1, 2.5e-3, math.nan, 7.0])


def _table(effs, durations, picks):
    n = min(len(effs), len(durations), len(picks))
    names = list(verdicts.VERDICTS)
    return pd.DataFrame(
        {
            "kernel": pd.Categorical([f"k{i % 3}" for i in range(n)]),
            "efficiency": effs[:n],
            "duration_s": durations[:n],
            "verdict": pd.Categorical([names[p % len(names)] for p in picks[:n]]),
        }
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(EFFICIENCIES, max_size=12),
    st.lists(DURATIONS, max_size=12),
    st.lists(st.integers(0, 20), max_size=12),
)
def test_the_worst_and_the_verdict_times_are_their_definitions(effs, durations, picks):
    table = _table(effs, durations, picks)
    want = None
    if len(table):
        row = table.sort_values("efficiency", ascending=False, kind="mergesort").iloc[0]
        want = (row["kernel"], float(row["efficiency"]))  # as Worst keeps it
    worst = totals._worst(table["kernel"], table["efficiency"])
    got = None if worst is None else (worst.kernel, worst.efficiency)
    assert repr(got) == repr(want)  # NaN compares as itself
    times = totals._verdict_times(table["duration_s"], table["verdict"])
    duration, verdict = table["duration_s"], table["verdict"]
    expected = {v: float(duration[verdict == v].sum()) for v in verdicts.VERDICTS}
    assert list(times) == list(expected)
    assert all(np.float64(times[v]).tobytes() == np.float64(expected[v]).tobytes() for v in times)


def test_verdict_times_of_a_nullable_column_are_pandas_sums():
    """Not float64 (a hand-made table): pandas' own sums, which drop the NA values where
    numpy's nansum counts them as 0 (the last bits then differ for some of these)."""
    draw = random.Random(1)
    for _ in range(10):
        values = [
            draw.random() * 10 ** draw.randint(-6, 2) if draw.random() > 0.3 else None
            for _ in range(40)
        ]
        duration = pd.Series(values, dtype="Float64")
        verdict = pd.Series(["memory-bound"] * len(values), dtype=object)
        times = totals._verdict_times(duration, verdict)
        assert times["memory-bound"] == float(duration.sum())
        assert times[verdicts.ABOVE_ROOF] == 0.0


def test_sums_are_pandas_series_sums_to_the_bit():
    """totals._sum of a float64 column, whole and masked, is Series.sum's value bit for bit
    (NaN skipped; none left: 0.0); other dtypes are summed by pandas."""
    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 1000, 4099):
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 15, n)
        values[rng.random(n) < 0.2] = np.nan
        column, rows = pd.Series(values), rng.random(n) < 0.5
        for mask, part in ((None, column), (rows, column[rows])):
            assert np.float64(totals._sum(column, mask)).tobytes() == part.sum().tobytes()
    nullable = pd.Series(pd.array([1.5, None, 2.0], dtype="Float64"))
    assert totals._sum(nullable, np.array([True, True, False])) == 1.5
