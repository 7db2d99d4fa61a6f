"""Mistakes on the command line are refused in one line with a suggestion (exit 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import B200_RAW, FIXTURES, raw_durations, scaled_raw

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"


def _refused(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("rooflint: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_unknown_output_extension_names_the_supported_ones(tmp_path):
    target = tmp_path / "out.xlsx"
    line = _refused("report", A100, "-q", "-o", target)
    assert "'.xlsx'" in line and ".csv" in line and ".html" in line and "--format" in line
    assert not target.exists()  # nothing written under a name that promises a spreadsheet


def test_explicit_format_still_writes_any_name(tmp_path):
    target = tmp_path / "out.xlsx"
    result = CliRunner().invoke(main, ["report", str(A100), "-q", "-o", str(target), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert target.read_text().count("\n") == 12  # the CSV: a header and the 11 launches


def test_diff_output_extension_it_cannot_write(tmp_path):
    line = _refused("diff", A100, A100, "-o", tmp_path / "diff.html")
    assert "'.html'" in line and ".md" in line


@pytest.mark.parametrize(
    "args,suggestion",
    [
        (["report", A100, "--format", "htlm"], "did you mean html?"),
        (["report", A100, "--group-by", "kernal"], "did you mean kernel?"),
        (["report", A100, "--group-by", "famliy"], "did you mean family?"),
        (["report", A100, "--per", "lauch"], "did you mean launch?"),
        (["diff", A100, A100, "--format", "markdwon"], "did you mean markdown?"),
    ],
    ids=["format", "group-by", "group-by family", "per", "diff format"],
)
def test_misspelt_choice_gets_did_you_mean(args, suggestion):
    line = _refused(*args)
    assert line.endswith(suggestion)
    assert "is not one of" in line


def test_a_value_nothing_resembles_gets_the_list_only():
    line = _refused("report", A100, "--format", "zzz")
    assert "did you mean" not in line and "table, json, markdown, html" in line


def test_diff_without_gates_says_so_in_its_pass_line(tmp_path):
    # every launch of the B200 raw export 55.63 times longer: total time +5,463 %
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", "", 55.63)
    assert sum(raw_durations(head, "")) == pytest.approx(55.63 * sum(raw_durations(base, "")))
    result = CliRunner().invoke(main, ["diff", str(base), str(head)], env={"COLUMNS": "100"})
    assert result.exit_code == 0  # nothing asked to gate
    first = result.output.split("\nbase: ")[0]
    assert first.startswith("rooflint diff: PASS (no gate set) — total time +5463.0 %")
    assert "nothing was gated (--fail-on-regression PCT sets a gate)" in " ".join(first.split())
