"""Diff statistics: intervals against scipy.stats, pairing, simulated reruns, several runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from rooflint import diffruns, pipeline
from rooflint.cli import config, main
from rooflint.core import diff, diffstats, gates, names
from rooflint.reporters import diff_json, diff_markdown, diff_table
from tests.helpers import (
    A100,
    as_dicts,
    benchmark_generator,
    raw_rows,
    rendered,
    synthetic,
    timed,
    write_raw,
)

DURATION = "gpu__time_duration.sum"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def samples(groups: dict[int, list[list[float]]], ranges: dict[int, list[list[str]]] | None = None):
    """Launch samples: {group: [durations of run 0, of run 1, ...]}, optional NVTX ranges alike."""
    rows = []
    for g, per_run in groups.items():
        for r, durations in enumerate(per_run):
            names = (ranges or {}).get(g, [[None] * len(durations)] * len(per_run))[r]
            rows += [
                {"group": g, "run": r, "range": n, "duration_s": d}
                for d, n in zip(durations, names, strict=True)
            ]
    runs = max(len(v) for v in groups.values())
    return diffstats.prepare(pd.DataFrame(rows, columns=diffstats.SAMPLE_COLUMNS), runs)


def one(base, head, level=0.95) -> dict:
    est, _ = diffstats.estimate(samples(base), samples(head), [(0, 0)], level)
    return est.iloc[0].to_dict()


@pytest.mark.e2e  # a subprocess
def test_diff_uses_the_same_words_and_default_without_importing_the_statistics():
    words = ("SLOWER", "FASTER", "SLOWER_WITHIN", "FASTER_WITHIN", "NOISE", "UNCHANGED")
    for word in (*words, "NOT_COMPARABLE"):
        assert getattr(diff, word) == getattr(diffstats, word)
    assert diff.DEFAULT_LEVEL == diffstats.DEFAULT_LEVEL
    import subprocess
    import sys

    code = (
        "import sys, rooflint.cli; "
        "print('rooflint.core.diffstats' in sys.modules, 'statistics' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == [
        "False",
        "False",
    ]  # `rooflint report` pays nothing for the diff statistics


# --- the intervals against scipy.stats ------------------------------------------------------------


@pytest.mark.parametrize("df", [1, 1.5, 2, 3, 4.5, 7, 30, 1000])
@pytest.mark.parametrize("p", [0.95, 0.975, 0.995])
def test_t_quantile_is_scipys_or_wider_below_df_3(p, df):
    exact = stats.t.ppf(p, df)
    ours = float(diffstats.t_quantile(p, df))
    if df in (1, 2) or df >= 3:
        assert ours == pytest.approx(exact, rel=1e-2 if df >= 3 else 1e-9)
    else:  # between the exact anchors at df 1 and 2 and the series at 3: never narrower
        assert exact <= ours <= exact * 1.6


def test_paired_interval_is_scipys_one_sample_t_interval_on_log_ratios():
    base = [1.0, 2.0, 4.0, 1.5, 3.0]  # a heterogeneous group: sizes differ 4x
    head = [1.1, 2.3, 4.2, 1.6, 3.5]
    est = one({0: [base]}, {0: [head]}, level=0.90)
    logs = np.log(head) - np.log(base)
    ci = stats.ttest_1samp(logs, 0.0).confidence_interval(0.90)
    assert est["method"] == diffstats.PAIRED and est["pairs"] == 5
    assert est["change"] == pytest.approx(
        np.expm1(logs.mean()), rel=1e-12
    )  # the geometric mean ratio - 1
    assert est["change_low"] == pytest.approx(np.expm1(ci.low), rel=2e-3)
    assert est["change_high"] == pytest.approx(np.expm1(ci.high), rel=2e-3)


def test_unpaired_interval_is_scipys_welch_interval_on_log_durations():
    base, head = [1.0, 1.2, 0.9, 1.1], [1.0, 1.3, 0.8]  # counts differ: no pairing
    est = one({0: [base]}, {0: [head]})
    welch = stats.ttest_ind(np.log(head), np.log(base), equal_var=False)
    ci = welch.confidence_interval(0.95)
    assert est["method"] == diffstats.UNPAIRED and np.isnan(est["pairs"])
    assert est["change"] == pytest.approx(stats.gmean(head) / stats.gmean(base) - 1, rel=1e-12)
    assert est["change_low"] == pytest.approx(np.expm1(ci.low), rel=2e-2)  # fractional df: series
    assert est["change_high"] == pytest.approx(np.expm1(ci.high), rel=2e-2)


def test_several_runs_widen_the_interval_by_the_run_to_run_variance():
    # two runs a side, the same 4 positions; run 1 of each side is 10 % / 4 % slower throughout
    pos = np.array([1.0, 2.0, 3.0, 4.0])
    base = [list(pos), list(pos * 1.10)]
    head = [list(pos * 1.2), list(pos * 1.2 * 1.04)]
    est = one({0: base}, {0: head})
    # positions: mean log over runs; every position has the same log ratio, so launch se = 0
    change = np.log(1.2) + (np.log(1.04) - np.log(1.10)) / 2
    assert est["change"] == pytest.approx(np.expm1(change), rel=1e-12)
    levels_b, levels_h = [0, np.log(1.10)], [np.log(1.2), np.log(1.2 * 1.04)]
    pooled = (np.var(levels_b, ddof=1) + np.var(levels_h, ddof=1)) / 2
    half = stats.t.ppf(0.975, 2) * np.sqrt(pooled * (1 / 2 + 1 / 2))
    assert est["change_low"] == pytest.approx(np.expm1(change - half), rel=1e-9)
    assert est["change_high"] == pytest.approx(np.expm1(change + half), rel=1e-9)
    assert est["run_noise"] == pytest.approx(0.10, rel=1e-12)  # the larger run-to-run ratio, base's


def test_launches_pair_by_nvtx_range_when_the_order_differs():
    # head runs the two ranges in the other order: by order, 1 ms would pair with 9 ms
    base = {0: [[1e-3, 1e-3, 1e-3, 9e-3, 9e-3, 9e-3]]}
    head = {0: [[9.9e-3, 9.9e-3, 9.9e-3, 1.1e-3, 1.1e-3, 1.1e-3]]}
    ranges_b = {0: [["fwd"] * 3 + ["bwd"] * 3]}
    ranges_h = {0: [["bwd"] * 3 + ["fwd"] * 3]}
    est, _ = diffstats.estimate(samples(base, ranges_b), samples(head, ranges_h), [(0, 0)])
    row = est.iloc[0]
    assert row["method"] == diffstats.PAIRED_RANGE and row["pairs"] == 6
    assert row["change"] == pytest.approx(0.10, rel=1e-9)  # every pair is 1.1x
    assert row["change_low"] == pytest.approx(0.10, rel=1e-9)


def test_too_few_launches_have_no_interval_and_say_so():
    est = one({0: [[1.0, 1.1]]}, {0: [[1.5, 1.6]]})
    assert est["method"] == diffstats.THRESHOLD_ONLY and np.isnan(est["change_low"])
    status = diffstats.decide(pd.DataFrame([est]), 0.10)
    assert list(status) == [diffstats.SLOWER]


def test_decide_needs_the_whole_interval_beyond_the_threshold_and_the_run_noise():
    rows = pd.DataFrame(
        {
            "change": [0.05, 0.20, 0.20, 0.20, -0.20, 0.20, np.nan],
            "change_low": [0.0, 0.15, 0.08, 0.15, -0.25, 0.15, np.nan],
            "change_high": [0.1, 0.25, 0.30, 0.25, -0.15, 0.25, np.nan],
            "method": ["paired"] * 7,
            "run_noise": [np.nan, np.nan, np.nan, 0.25, np.nan, 0.10, np.nan],
        }
    )
    assert list(diffstats.decide(rows, 0.10)) == [
        "unchanged",
        "slower",
        "within noise",
        "within noise",
        "faster",
        "slower",
        "not comparable",
    ]


# --- the planted regression of issue 13 -----------------------------------------------------------


def _hottest_gemm(gen, n, kernels, seed) -> tuple[int, np.ndarray]:
    ks, values, which = gen.launches(n, kernels, seed)
    time = np.bincount(which, weights=values[DURATION], minlength=kernels)
    gemm = np.flatnonzero(ks.kinds == "gemm")
    return int(gemm[np.argmax(time[gemm])]), which


def _rewrite_durations(data: bytes, path, factors: np.ndarray):
    """The generated raw page with every launch's duration multiplied by its factor."""
    path.write_bytes(data)
    prelude, rows = raw_rows(path)
    t = rows[0].index(DURATION)
    for row, factor in zip(rows[2:], factors, strict=True):
        row[t] = repr(float(row[t]) * float(factor))
    return write_raw(path, prelude, rows)


def test_uniform_thirty_percent_on_a_heterogeneous_group_fails_the_gate_and_is_first(tmp_path):
    gen = benchmark_generator()
    n, kernels, seed = 500, 40, 11
    hot, which = _hottest_gemm(gen, n, kernels, seed)
    data = gen.raw(n, kernel_count=kernels, seed=seed)
    # one name, grid and block over two problem sizes (e.g. K and 2K): durations differ 2x
    size = np.where((which == hot) & (np.cumsum(which == hot) % 2 == 0), 2.0, 1.0)
    base = _rewrite_durations(data, tmp_path / "base.csv", size)
    head = _rewrite_durations(data, tmp_path / "head.csv", size * np.where(which == hot, 1.3, 1.0))
    res = run("diff", base, head, "--fail-on-regression", "10", "-f", "json")
    assert res.exit_code == 1, res.stderr
    doc = json.loads(res.stdout)
    first = doc["groups"][0]
    assert first["status"] == "slower" and first["method"] == "paired"
    assert first["pairs"] == int((which == hot).sum())
    assert first["base"]["spread"] > 0.5  # the old rule called this much spread "noise"
    assert first["change"] == pytest.approx(0.3, rel=1e-6)
    assert 0.29 < first["change_low"] <= first["change_high"] < 0.31
    assert doc["totals"]["delta_pct"] < 0.10  # the total alone would not catch it
    assert "gate failed: total time" not in res.stderr
    assert [g["status"] for g in doc["groups"][1:]] == ["unchanged"] * (len(doc["groups"]) - 1)


# --- simulated reruns -----------------------------------------------------------------------------

N, KERNELS, SEED = 500, 20, 3  # every one of the 20 groups has 5 or more launches


def _launches():
    gen = benchmark_generator()
    ks, values, which = gen.launches(N, KERNELS, SEED)
    return which, values[DURATION] * 1e-9


def _fires(which, base_s, head_s, threshold=0.10) -> bool:
    """Whether --fail-on-regression fires: what diff.compare and gates do, on the samples alone."""
    frames = [
        pd.DataFrame({"group": which, "run": 0, "range": None, "duration_s": d})
        for d in (base_s, head_s)
    ]
    b, h = (diffstats.prepare(f, 1) for f in frames)
    pairs = [(g, g) for g in range(KERNELS)]
    est, positions = diffstats.estimate(b, h, pairs)
    total = pd.DataFrame([diffstats.total(b, h, pairs, est, positions)]).reindex(
        columns=est.columns
    )
    return bool(
        (diffstats.decide(est, threshold) == diffstats.SLOWER).any()
        or diffstats.decide(total, threshold)[0] == diffstats.SLOWER
    )


@pytest.mark.e2e  # over a second
def test_twenty_percent_noise_without_a_change_stays_quiet():
    which, t = _launches()
    assert np.bincount(which).min() >= diffstats.MIN_LAUNCHES  # none judged on the threshold alone
    fired = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        fired += _fires(which, t * rng.uniform(0.8, 1.2, N), t * rng.uniform(0.8, 1.2, N))
    assert fired <= 1  # quiet in at least 19 of 20 (0 of 20 fired when written)


def test_twenty_percent_slowdown_under_ten_percent_noise_fires():
    which, t = _launches()
    slowed = np.where(which == np.argmax(np.bincount(which)), 1.2, 1.0)  # the most launched group
    fired = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        fired += _fires(which, t * rng.uniform(0.9, 1.1, N), t * slowed * rng.uniform(0.9, 1.1, N))
    assert fired >= 19  # (20 of 20 when written)


def test_the_simulation_matches_the_diff_and_its_gate():
    which, t = _launches()
    names = [f"k{g}" for g in which]
    rng = np.random.default_rng(7)
    slowed = np.where(which == np.argmax(np.bincount(which)), 1.2, 1.0)
    base_s, head_s = t * rng.uniform(0.9, 1.1, N), t * slowed * rng.uniform(0.9, 1.1, N)
    sides = [
        synthetic(
            [launch for k, d in zip(names, ds, strict=True) for launch in timed(k, [d], roof=1e-7)]
        )
        for ds in (base_s, head_s)
    ]
    d = diff.compare(*sides, threshold=0.10)
    failed = gates.failures(gates.diff_gates(d, 0.10))
    assert _fires(which, base_s, head_s) and len(failed) == 1
    assert failed[0].startswith(f"gate failed: kernel k{np.argmax(np.bincount(which))} [")


# --- several runs per side ------------------------------------------------------------------------


def test_run_to_run_noise_larger_than_the_change_is_within_noise(tmp_path):
    gen = benchmark_generator()
    n, kernels, seed = 60, 4, 5
    ks, values, which = gen.launches(n, kernels, seed)
    counts = np.bincount(which, minlength=kernels)
    noisy, steady = np.argsort(counts)[-2:]  # the two most launched groups
    data = gen.raw(n, kernel_count=kernels, seed=seed)

    def scaled(name, noisy_factor, steady_factor):
        f = np.where(which == noisy, noisy_factor, np.where(which == steady, steady_factor, 1.0))
        return _rewrite_durations(data, tmp_path / name, f)

    # noisy: base runs differ by 15 %, head is 12 % slower; steady: +30 % in both head runs
    paths = [
        scaled("b1.csv", 1.0, 1.0),
        scaled("b2.csv", 1.15, 1.0),
        scaled("h1.csv", 1.12, 1.3),
        scaled("h2.csv", 1.12 * 1.15, 1.3),
    ]
    sides = [
        pipeline.side([str(p) for p in paths[:2]], pipeline.Options()),
        pipeline.side(diffruns.expand([str(tmp_path / "h*.csv")], "--head"), pipeline.Options()),
    ]
    d = diff.compare(*sides, threshold=0.10)
    failed = gates.failures(gates.diff_gates(d, 0.10))
    doc = diff_json.document(d, [])
    assert doc["base"]["runs"] == 2 and doc["head"]["inputs"] == [str(paths[2]), str(paths[3])]
    groups = {g["kernel"]: g for g in doc["groups"]}
    g = groups[ks.names[noisy]]
    assert g["change"] == pytest.approx(0.12, rel=1e-6)
    assert g["run_noise"] == pytest.approx(0.15, rel=1e-6)
    assert g["status"] == "within noise"
    assert groups[ks.names[steady]]["status"] == "slower"
    assert not any(names.short_id(ks.names[noisy]) in m for m in failed)  # the noisy group passes
    assert any(names.short_id(ks.names[steady]) in m for m in failed)
    assert g["base"]["launches"] == counts[noisy]  # per run, not summed over runs
    # every format shows the measured noise
    assert f"paired, {counts[noisy]} launches × 2 runs; time" in diff_table.render(d, [])
    assert "run noise 15 %" in diff_table.render(d, [])
    _, tables = rendered(diff_markdown.render(d, []))
    row = next(r for r in as_dicts(tables[0]) if r["status"] == "within noise")
    assert (
        row["run noise"] == "15 %" and row["method"] == f"paired, {counts[noisy]} launches × 2 runs"
    )


# --- the command line -----------------------------------------------------------------------------


def test_runs_from_a_folder_and_errors_are_one_line(tmp_path):
    (tmp_path / "base").mkdir()
    for name in ("a.csv", "b.csv"):
        (tmp_path / "base" / name).write_bytes(A100.read_bytes())
    (tmp_path / "h1.csv").write_bytes(A100.read_bytes())
    res = run("diff", "--base", tmp_path / "base", "--head", tmp_path / "h*.csv", "-f", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["base"]["runs"] == 2 and doc["head"]["inputs"] == [str(tmp_path / "h1.csv")]
    for args, message in [
        (("diff", A100, A100, "--base", A100), "either as BASE HEAD or with --base/--head"),
        (("diff", "--base", A100), "--head is missing"),
        (("diff", A100), "give two inputs"),
        (("diff", "--base", tmp_path / "nope*.csv", "--head", A100), "matches no file"),
        (("diff", "--base", A100, "--base", A100, "--head", A100), "is given twice"),
    ]:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = run(
        "diff", A100, A100, "--confidence", "40%"
    )  # click's usage error, as for other options
    assert res.exit_code == 2 and "'40%' is not a confidence level" in res.stderr


@pytest.mark.e2e  # over a second
def test_confidence_level_from_the_command_line_and_pyproject(tmp_path, monkeypatch):
    base = synthetic(timed("k", [1.0e-3, 1.1e-3, 0.9e-3, 1.0e-3], roof=1e-4))
    head = synthetic(timed("k", [1.2e-3, 1.2e-3, 1.1e-3, 1.3e-3], roof=1e-4))
    narrow, wide = (diff.compare(base, head, 0.1, level=lv).groups.iloc[0] for lv in (0.9, 0.99))
    assert wide["change_low"] < narrow["change_low"] < narrow["change_high"] < wide["change_high"]
    (tmp_path / "pyproject.toml").write_text('[tool.rooflint]\nconfidence = "99%"\n')
    monkeypatch.chdir(tmp_path)
    assert config.load().values == {"confidence": 0.99}
    doc = json.loads(run("diff", A100, A100, "-f", "json", "--confidence", "0.9").stdout)
    assert doc["level"] == 0.9 and "90 % interval" in doc["rule"]  # the flag wins


def test_terminal_lines_fit_100_columns():
    long = (
        "void very_long_kernel_name<"
        + ", ".join(f"cutlass::arch::Sm{n}" for n in range(30))
        + ">(int)"
    )
    base = synthetic(timed(long, [1e-3, 1.1e-3, 0.9e-3]) + timed("short", [1e-3]))
    head = synthetic(timed(long, [2e-3, 2.2e-3, 1.8e-3]) + timed("short", [3e-3]))
    d = diff.compare(base, head, 0.1)
    text = diff_table.render(d, gates.diff_gates(d, 0.1, True))
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "+100.0 % [+100.0, +100.0]" in text and "threshold only, 1 launch;" in text
