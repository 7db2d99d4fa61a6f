"""Numbers from the user (options of every command, [tool.rooflint] keys, the API's parameters)
refuse NaN, infinities and values out of range: exit 2 and one line, never a verdict computed
with them (issue 33, item 6)."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

import rooflint
from rooflint.cli import main
from rooflint.core.errors import UsageError
from tests.helpers import FIXTURES

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
HUGE = "1" + "0" * 400  # an integer no float holds
NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity"]
GEMM = ["bound", "gemm", "--n", "64", "--k", "64", "--device", "h100-sxm"]
ELEMENTWISE = ["bound", "elementwise", "--n", "1000", "--device", "h100-sxm"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(res, option: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr that names the option."""
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert res.stderr.startswith("rooflint: error: ")
    assert option in res.stderr


def command_cases(tmp_path):
    """(arguments before the option, option, values it must refuse) for every numeric option of
    every command (`devices` and `metrics` take none)."""
    chart = ["plot", A100, "-o", tmp_path / "chart.svg", "-q"]
    counts = ["0", "-1", "1.5", "nan", "inf"]
    return [
        (["report", A100, "-q"], "--latency-threshold", [*NOT_FINITE, "-0.1", "1.5", "abc"]),
        (["report", A100, "-q"], "--fail-under", [*NOT_FINITE, "-5%", "150%", "2"]),
        (["report", A100, "-q"], "--top", counts),
        (["diff", A100, A100], "--latency-threshold", [*NOT_FINITE, "-0.1", "1.5"]),
        (["diff", A100, A100], "--fail-on-regression", [*NOT_FINITE, "-1", "1e300", "20000%"]),
        (["diff", A100, A100], "--min-time", [*NOT_FINITE, "-0.01", "2", "101%"]),
        (["diff", A100, A100], "--confidence", [*NOT_FINITE, "0.3", "100", "100%", "-95"]),
        (["diff", A100, A100], "--top", counts),
        (chart, "--latency-threshold", [*NOT_FINITE, "1.5"]),
        (chart, "--top", counts),
        (GEMM, "--m", ["0", "-8", "nan", "inf", HUGE, str(2**53 + 1)]),
        (["bound", "gemm", "--m", "64", "--k", "64", "--device", "h100-sxm"], "--n", [HUGE]),
        (["bound", "gemm", "--m", "64", "--n", "64", "--device", "h100-sxm"], "--k", [HUGE]),
        (["bound", "elementwise", "--device", "h100-sxm"], "--n", ["0", HUGE]),
        (ELEMENTWISE, "--inputs", ["-1", "nan", HUGE]),
        (ELEMENTWISE, "--outputs", ["-1", "inf", HUGE]),
        (ELEMENTWISE, "--ops-per-element", [*NOT_FINITE, "-1", "1e300", "50%"]),
        (["bound", "reduction", "--device", "h100-sxm"], "--n", ["0", "nan", HUGE]),
    ]


def test_every_numeric_option_refuses_bad_values_in_one_line(tmp_path):
    for before, option, values in command_cases(tmp_path):
        for value in values:
            res = run(*before, option, value)
            refused(res, option)
    assert not (tmp_path / "chart.svg").exists()


def test_the_good_values_next_to_the_bad_ones_still_work(tmp_path):
    assert run("report", A100, "-q", "--latency-threshold", "0").exit_code == 0
    assert run("report", A100, "-q", "--latency-threshold", "60%").exit_code == 0
    assert run("diff", A100, A100, "--fail-on-regression", "10000%").exit_code == 0
    assert run("diff", A100, A100, "--confidence", "99%").exit_code == 0
    assert run(*GEMM, "--m", str(2**53)).exit_code == 0
    assert run(*ELEMENTWISE, "--ops-per-element", "0").exit_code == 0


def test_nan_latency_threshold_no_longer_hides_latency_bound_kernels():
    """The issue's case: NaN compares false, so no launch was ever under the threshold and
    --fail-on-new-latency-bound passed; --format json crashed on the NaN it wrote."""
    for args in (
        ["report", A100, "-q", "-f", "json"],
        ["diff", A100, A100, "--fail-on-new-latency-bound"],
    ):
        refused(run(*args, "--latency-threshold", "nan"), "--latency-threshold")


def test_an_elementwise_kernel_must_move_something():
    """No inputs and no outputs: 0 bytes, an intensity of ops / 0 (ZeroDivisionError)."""
    res = run(*ELEMENTWISE, "--inputs", "0", "--outputs", "0")
    refused(res, "--inputs")


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ("latency-threshold", ["nan", "inf", "-inf", "-0.5", "1.5", '"nan"']),
        ("fail-under", ["nan", "inf", "-1", "2", '"inf"']),
        ("min-time", ["nan", "-inf", "-0.1", "3"]),
        ("confidence", ["nan", "inf", "0.2", "100", '"100%"']),
        ("fail-on-regression", ["nan", "inf", "-1", "1e300", '"nan%"']),
    ],
)
def test_every_numeric_config_key_refuses_bad_values(tmp_path, monkeypatch, key, values):
    monkeypatch.chdir(tmp_path)
    for value in values:
        path = tmp_path / "pyproject.toml"
        path.write_text(f"[tool.rooflint]\n{key} = {value}\n", encoding="utf-8")
        for args in (["report", A100, "-q"], ["diff", A100, A100]):
            res = run(*args)
            refused(res, f"[tool.rooflint] {key}")
            assert res.stderr.startswith(f"rooflint: error: {path}: ")


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.1, 1.5, "nan"])
def test_the_api_refuses_a_bad_latency_threshold(value):
    with pytest.raises(UsageError, match="latency_threshold"):
        rooflint.report(A100, latency_threshold=value)
    with pytest.raises(UsageError, match="latency_threshold"):
        rooflint.diff(A100, A100, latency_threshold=value)
    launches = rooflint.load(A100)
    with pytest.raises(UsageError, match="latency_threshold"):
        rooflint.analyze(launches, "a100-pcie-40gb", latency_threshold=value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("threshold", math.nan),
        ("threshold", math.inf),
        ("threshold", -0.05),
        ("threshold", 1e300),
        ("min_time", math.nan),
        ("min_time", -0.01),
        ("min_time", 2.0),
        ("level", math.nan),
        ("level", 0.3),
        ("level", 1.0),
    ],
)
def test_the_api_refuses_bad_diff_parameters(name, value):
    with pytest.raises(UsageError, match=name):
        rooflint.diff(A100, A100, **{name: value})


def test_the_api_takes_the_good_values():
    d = rooflint.diff(A100, A100, threshold=10, min_time=0.01, level=0.99, latency_threshold=0.5)
    assert (d.threshold, d.min_time, d.level) == (0.1, 0.01, 0.99)
    assert rooflint.report(A100, latency_threshold=0.0).latency_threshold == 0.0
