"""The input options: one definition for the commands and the API, settled once with the config."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest
from click.testing import CliRunner

import rooflint
from rooflint import pipeline
from rooflint.cli import main
from rooflint.options import NAMES, InputOptions
from tests.helpers import FIXTURES

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
# Every command that reads profiles, as run in these tests, and the API function it calls.
READERS = {
    "report": (["report", str(A100), "-q", "-f", "json"], "report"),
    "plot": (["plot", str(A100), "-q", "-o", "chart.svg"], "report"),
    "diff": (["diff", str(A100), str(A100)], "diff"),
}


def test_commands_that_read_profiles_take_exactly_the_input_options():
    readers = [
        name for name, c in main.all_commands().items() if {p.name for p in c.params} >= set(NAMES)
    ]
    assert sorted(readers) == sorted(READERS)
    defaults = {f.name: f.default for f in fields(InputOptions)}
    for name in READERS:
        params = {p.name: p for p in main.all_commands()[name].params if p.name in NAMES}
        assert {n: p.default for n, p in params.items()} == defaults
        assert [
            n for n in (p.name for p in main.all_commands()[name].params) if n in NAMES
        ] == list(NAMES)


@pytest.mark.parametrize("function", [rooflint.report, rooflint.diff], ids=["report", "diff"])
def test_the_api_functions_take_the_input_options_as_keywords(function):
    parameters = inspect.signature(function).parameters
    for f in fields(InputOptions):
        assert parameters[f.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[f.name].default == f.default
    assert "inputs" not in parameters


def test_an_unknown_api_keyword_is_refused():
    with pytest.raises(TypeError, match="locales"):
        rooflint.report(str(A100), locales="C")


def test_none_means_the_default():
    assert InputOptions(latency_threshold=None, strict=None) == InputOptions()
    assert pipeline.Options(device_id="a100-pcie-40gb").device == "a100-pcie-40gb"
    assert pipeline.options(device="t4", group_by="name") == pipeline.Options(
        device="t4", group_by="name"
    )


def _spy(monkeypatch, api: str) -> dict:
    """Calls of rooflint.report/diff by the command line, recorded with their keywords."""
    seen = {}
    real = getattr(rooflint, api)

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(rooflint, api, spy)
    return seen


@pytest.mark.parametrize("command", list(READERS))
def test_every_command_settles_the_latency_threshold_from_the_config(
    tmp_path, monkeypatch, command
):
    """[tool.rooflint] latency-threshold = 0.3 is used by every command that reads profiles
    (`plot` used 0.6); a flag on the command line still wins."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.rooflint]\nlatency-threshold = 0.3\n")
    args, api = READERS[command]
    seen = _spy(monkeypatch, api)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert seen["latency_threshold"] == 0.3
    result = CliRunner().invoke(main, [*args, "--latency-threshold", "0.5"])
    assert result.exit_code == 0, result.output
    assert seen["latency_threshold"] == 0.5


def test_plot_draws_with_the_configured_threshold(tmp_path, monkeypatch):
    """InitializeMatrix_kernel<float> is at 48 % of its roof (tests/golden/a100-gemm-details
    .table.txt): latency-bound under the default 0.6, memory-bound under 0.3, so the chart's
    colours change with the threshold."""
    monkeypatch.chdir(tmp_path)

    def chart(*flags) -> str:
        result = CliRunner().invoke(main, ["plot", str(A100), "-q", "-o", "c.svg", *flags])
        assert result.exit_code == 0, result.output
        return (tmp_path / "c.svg").read_text()

    default, low = chart(), chart("--latency-threshold", "0.3")
    assert default != low
    (tmp_path / "pyproject.toml").write_text("[tool.rooflint]\nlatency-threshold = 0.3\n")
    assert chart() == low


def test_a_broken_config_stops_plot_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.rooflint]\nlatency-threshold = 2\n")
    result = CliRunner().invoke(main, ["plot", str(A100), "-q", "-o", "c.svg"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"rooflint: error: {tmp_path / 'pyproject.toml'}: ")
    assert not (tmp_path / "c.svg").exists()


def test_the_config_is_read_once_per_command(tmp_path, monkeypatch):
    from rooflint.cli import config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.rooflint]\nfail-under = "10%"\n')
    loads = []
    real = config.load
    monkeypatch.setattr(config, "load", lambda *a: loads.append(1) or real(*a))
    result = CliRunner().invoke(main, ["report", str(A100), "-q"])
    assert result.exit_code == 0, result.output
    assert loads == [1]  # the input options and the gates share one reading
