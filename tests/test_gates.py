"""CI gates on `report` and `diff`, and their settings in pyproject.toml [tool.rooflint]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint import pipeline
from rooflint.cli import config, main
from rooflint.core import thresholds, verdicts
from rooflint.core.errors import UsageError
from tests.helpers import B200_RAW, LEAN, scaled_raw, tiny_roofs

A100 = Path(__file__).resolve().parents[1] / "fixtures" / "ncu" / "a100-gemm-details.csv"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def efficiency_of(path: Path) -> float:
    """Time-weighted efficiency: Σ bound time / Σ measured time over the analysed launches."""
    launches = pipeline.build([str(path)]).launches
    ok = launches["verdict"] != verdicts.NOT_ANALYSABLE
    return launches.loc[ok, "t_bound_s"].sum() / launches.loc[ok, "duration_s"].sum()


# --- thresholds as typed ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fraction"), [("10", 0.10), ("10%", 0.10), ("12.5 %", 0.125), (5, 0.05), ("0", 0.0)]
)
def test_percent(text, fraction):
    assert thresholds.parse_percent(text) == pytest.approx(fraction)


@pytest.mark.parametrize(
    ("text", "fraction"), [("0.6", 0.6), ("60%", 0.6), (0.75, 0.75), ("1", 1.0), ("100%", 1.0)]
)
def test_fraction(text, fraction):
    assert thresholds.parse_fraction(text) == pytest.approx(fraction)


@pytest.mark.parametrize("text", ["60", "abc", "-5%", "1e999", True, "150%"])
def test_bad_fraction(text):
    with pytest.raises(UsageError):
        thresholds.parse_fraction(text)


def test_bad_thresholds_are_usage_errors_on_the_command_line():
    res = run("report", A100, "--fail-under", "60")
    assert res.exit_code == 2
    assert (
        "'60' is above 1; give a fraction 0-1 (0.6) or a percentage with a % sign (60%)"
        in res.output
    )
    assert run("diff", A100, A100, "--fail-on-regression", "ten").exit_code == 2


# --- report gates ----------------------------------------------------------------------------


def test_fail_under_fails_below_and_restates_the_numbers(tmp_path):
    eff = efficiency_of(A100)
    assert 0.78 < eff < 0.79  # the cuBLAS and CUTLASS GEMMs dominate at 77-95 % of the tensor roof
    out = tmp_path / "report.json"
    res = run("report", A100, "--fail-under", "80%", "-o", out, "-q")
    assert res.exit_code == 1
    assert res.stderr == (
        f"rooflint: gate failed: time-weighted efficiency {eff * 100:.1f} % (over 906 ms "
        "analysed) is under --fail-under 80 %\n"
    )
    assert json.loads(out.read_text())["summary"]["time_weighted_efficiency"] == pytest.approx(
        eff
    )  # written first


@pytest.mark.parametrize("threshold", ["0.75", "75%", "0"])
def test_fail_under_passes_above(threshold):
    res = run("report", A100, "--fail-under", threshold, "-q")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""


def test_fail_under_with_nothing_analysable_fails():
    res = run("report", B200_RAW, "--fail-under", "0.5", "-q")
    assert res.exit_code == 1
    assert "time-weighted efficiency is unknown" in res.stderr


def test_fail_if_above_roof(tmp_path):
    # An A100 run placed on tiny roofs: every launch is faster than they allow.
    out, tiny = tmp_path / "r.md", tiny_roofs(tmp_path)
    res = run("report", A100, "--device-file", tiny, "--fail-if-above-roof", "-q", "-o", out)
    assert res.exit_code == 1
    launches = pipeline.build([str(A100)], pipeline.Options(device_file=str(tiny))).launches
    above = launches[launches["verdict"] == verdicts.ABOVE_ROOF]
    worst = above["efficiency"].max()
    assert len(above) == 11 and worst > 5
    assert res.stderr.startswith("rooflint: gate failed: 11 launch(es) above the roof (worst: ")
    assert (
        f"at efficiency {worst * 100:.0f} %, tolerance 5 %); --fail-if-above-roof: check the device"
        in res.stderr
    )
    assert out.exists()
    assert run("report", A100, "--device-file", tiny, "-q").exit_code == 0  # not gated unless asked


# --- pyproject.toml ---------------------------------------------------------------------------


def project(tmp_path: Path, monkeypatch, text: str, sub: str = "src/deeper") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    here = tmp_path / sub
    here.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(here)
    return tmp_path / "pyproject.toml"


def test_config_is_found_by_walking_up_and_flags_win(tmp_path, monkeypatch):
    path = project(tmp_path, monkeypatch, '[tool.rooflint]\nfail-under = "90%"\n')
    res = run("report", A100, "-q")
    assert res.exit_code == 1
    assert res.stderr.endswith(f"is under --fail-under 90 % (from {path})\n")
    assert run("report", A100, "-q", "--fail-under", "0.5").exit_code == 0


def test_config_flag_can_be_turned_off_on_the_command_line(tmp_path, monkeypatch):
    project(tmp_path, monkeypatch, "[tool.rooflint]\nfail-if-above-roof = true\n")
    tiny = tiny_roofs(tmp_path)
    assert run("report", A100, "--device-file", tiny, "-q").exit_code == 1
    assert (
        run("report", A100, "--device-file", tiny, "-q", "--no-fail-if-above-roof").exit_code == 0
    )


def test_config_latency_threshold(tmp_path, monkeypatch):
    project(tmp_path, monkeypatch, "[tool.rooflint]\nlatency-threshold = 0.9\n")
    verdicts = {
        k["rank"]: k["verdict"]
        for k in json.loads(run("report", A100, "-f", "json", "-q").stdout)["kernels"]
    }
    assert verdicts[1] == "latency-bound"  # CUTLASS at 77 % of its roof is under 0.9
    cli = json.loads(run("report", A100, "-f", "json", "-q", "--latency-threshold", "0.6").stdout)
    assert cli["kernels"][0]["verdict"] == "compute-bound" and cli["latency_threshold"] == 0.6


@pytest.mark.e2e  # over a second
def test_config_diff_gates(tmp_path, monkeypatch):
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.3)
    path = project(tmp_path, monkeypatch, "[tool.rooflint]\nfail-on-regression = 10\n")
    res = run("diff", base, head)
    assert res.exit_code == 1
    assert f"exceeds --fail-on-regression 10 % (from {path})" in res.stderr
    project(tmp_path, monkeypatch, '[tool.rooflint]\nfail-on-regression = "10%"\nmin-time = 0.05\n')
    assert run("diff", base, head).exit_code == 0  # the slower kernel is under 5 % of the time
    assert run("diff", base, head, "--min-time", "0").exit_code == 1


def test_nearest_pyproject_wins(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.rooflint]\nfail-under = "99%"\n')
    project(tmp_path / "inner", monkeypatch, '[project]\nname = "app"\n')
    assert config.load().values == {}
    assert run("report", A100, "-q").exit_code == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[tool.rooflint]\nfail-on-regresion = 10\n",
            "[tool.rooflint] unknown key 'fail-on-regresion'; did you mean 'fail-on-regression'?",
        ),
        (
            "[tool.rooflint]\nfail-on-new-latency-bound = 1\n",
            "[tool.rooflint] fail-on-new-latency-bound must be true or false, not 1",
        ),
        (
            '[tool.rooflint]\nfail-under = "lots"\n',
            "[tool.rooflint] fail-under 'lots' is not a number",
        ),
        ("[tool.rooflint]\nmin-time = 2\n", "[tool.rooflint] min-time 2 is above 1"),
        ("[tool.rooflint]\nfail-under = \n", "not valid TOML"),
    ],
)
def test_config_errors_name_the_file_and_the_key(tmp_path, monkeypatch, text, message):
    path = project(tmp_path, monkeypatch, text)
    for args in (("report", A100, "-q"), ("diff", A100, A100)):
        res = run(*args)
        assert res.exit_code == 2
        assert res.stderr.startswith(f"rooflint: error: {path}: ")
        assert message in res.stderr
        assert len(res.stderr.splitlines()) == 1


def test_broken_pyproject_of_another_tool_is_left_alone(tmp_path, monkeypatch):
    project(tmp_path, monkeypatch, "[tool.black\nline-length = 3\n")
    assert run("report", A100, "-q").exit_code == 0
