"""The terminal report: every warning and note Markdown shows, and lines that fit 100 columns."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint import pipeline, reporters
from rooflint.cli import main
from rooflint.reporters import terminal
from tests.helpers import BUNDLED_PROFILES, FIXTURES, shared

BUNDLED = [FIXTURES / p for p in BUNDLED_PROFILES]
MI200 = "rocprof/v1_mi200_rocm513_multipass_results.csv"
ROOFLINE = "rocprof/omniperf2_mi200_roofline.csv"
A100_EXPORT = FIXTURES / "ncu" / "a100-gemm-details.csv"  # = shared cuda-roofline-a100-…


def _cut(tmp_path: Path) -> Path:
    """The first 3,000 bytes of a real export: the reader drops the row it ends in."""
    cut = tmp_path / "cut-short.csv"
    cut.write_bytes(A100_EXPORT.read_bytes()[:3000])
    return cut


# (id, inputs, options) -- the shared ones resolve (or skip) inside the test
CASES = [(p.relative_to(FIXTURES).as_posix(), [p], {}) for p in BUNDLED]
SHARED_CASES = {
    "shared rocprof folder",
    "shared ncu folder",
    "shared kineto folder",
    "mi200 above roof",
}
E2E_CASES = SHARED_CASES | {"bundled rocprof folder"}  # the folder of every bundled AMD export
CASES += [
    ("bundled rocprof folder", [FIXTURES / "rocprof"], {}),
    ("shared rocprof folder", ["rocprof"], {}),
    ("shared ncu folder", ["ncu"], {}),
    ("shared kineto folder", ["kineto"], {}),
    ("mi200 above roof", [MI200], {"device_file": ROOFLINE}),
    ("cut-short export", ["cut"], {}),
]


def _inputs(tmp_path, paths, options):
    resolved = [
        _cut(tmp_path) if p == "cut" else p if isinstance(p, Path) else shared(p) for p in paths
    ]
    if "device_file" in options:
        options = {**options, "device_file": str(shared(options["device_file"]))}
    return resolved, options


def _markdown_caveats(text: str) -> list[str]:
    """The warnings, notes and skipped inputs of a Markdown report, as plain text."""
    found = re.findall(r"^\*\*Warning: (.*)\*\*$", text, re.M)
    for title in ("<summary>Notes from the inputs", "**Skipped inputs"):
        if title in text:
            section = text.split(title, 1)[1].split("</details>", 1)[0].split("\n\n**", 1)[0]
            found += re.findall(r"^- (.*)$", section, re.M)
    return [html.unescape(re.sub(r"\\(.)", r"\1", item)) for item in found]


def _squashed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize(
    "name,paths,options",
    [
        pytest.param(*case, id=case[0], marks=[pytest.mark.e2e] if case[0] in E2E_CASES else [])
        for case in CASES
    ],
)
def test_every_markdown_warning_is_in_the_terminal(tmp_path, name, paths, options):
    inputs, options = _inputs(tmp_path, paths, options)
    result = pipeline.build([str(p) for p in inputs], pipeline.options(**options))
    caveats = _markdown_caveats(reporters.render(result, "markdown"))
    table = _squashed(reporters.render(result, "table"))
    missing = [c for c in caveats if _squashed(c) not in table]
    assert missing == []
    if name in ("mi200 above roof", "cut-short export"):  # the cases the issue found hidden
        assert any("above the roof" in c or "cut short" in c for c in caveats)


def _cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "100"})
    assert result.exit_code in (0, 1), result.output
    return result.output


def _too_long(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > 100]


@pytest.mark.parametrize(
    "args",
    [
        ["fixtures/ncu/a100-gemm-details.csv"],
        ["fixtures/ncu/a100-gemm-details.csv", "--verbose"],
        ["fixtures/kineto/tracelens-h100-bert-small-uncased.json.gz"],
        ["fixtures/kineto/tracelens-h100-bert-small-uncased.json.gz", "--group-by", "op"],
        pytest.param(["fixtures/rocprof"], marks=pytest.mark.e2e),  # over a second
        pytest.param(["rocprof"], marks=pytest.mark.e2e),
        pytest.param(["rocprof", "--verbose"], marks=pytest.mark.e2e),
        ["cut"],
    ],
    ids=lambda a: " ".join(a),
)
def test_report_fits_100_columns(tmp_path, monkeypatch, args):
    monkeypatch.chdir(FIXTURES.parent)
    inputs = [_cut(tmp_path) if a == "cut" else shared(a) if a == "rocprof" else a for a in args]
    assert _too_long(_cli("report", *inputs, "-q")) == []


def test_devices_fit_100_columns():
    listing = _cli("devices")
    assert len(listing.splitlines()) > 20 and _too_long(listing) == []
    ids = [line.split()[0] for line in listing.splitlines()[1:] if line and not line[0].isspace()]
    for device in ids[:-1]:  # the last line is the footnote on ridges
        assert _too_long(_cli("devices", "show", device)) == [], device


def test_diff_fits_100_columns(monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    text = _cli(
        "diff", "fixtures/ncu/a100-gemm-details.csv", "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv"
    )
    assert text.startswith("rooflint diff:") and _too_long(text) == []


def test_long_names_are_shortened_in_the_middle():
    assert terminal.middle("abcdefghij", 5) == "ab…ij"
    assert terminal.middle("abc", 5) == "abc"
    assert len(terminal.middle("x" * 300, 31)) == 31


def test_width_comes_from_columns_else_100_off_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert terminal.width() == 132
    monkeypatch.delenv("COLUMNS")
    assert terminal.width() == 100  # pytest's captured stdout is not a terminal


def test_top_rows_say_what_would_help_and_provenance_is_one_line(monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    text = _cli("report", "fixtures/ncu/a100-gemm-details.csv", "-q")
    # rank 3 InitializeMatrix<__half>: 24 % of the DRAM roof, no vector FLOP counters in the file
    # the name the table had to shorten comes whole before the sentence
    assert _squashed(
        "→ InitializeMatrix_kernel<__half, (bool)1>: latency-bound as far as "
        "measured: 24 % of the nearest (DRAM) roof"
    ) in _squashed(text)
    assert "--verbose" in text and "ceilings: vector_fp64" not in text
    verbose = _cli("report", "fixtures/ncu/a100-gemm-details.csv", "-q", "--verbose")
    # 108 SMs x 64 FLOP/clk x the 0.765 GHz the profile measured = 5.29 TFLOP/s
    assert _squashed("ceilings: vector_fp64 5.29 TFLOP/s") in _squashed(verbose)


def test_a_number_keeps_its_percent_sign_on_its_line():
    """Seen at COLUMNS=100 on HTA's two-rank folder: the coverage line ended "aten::cat 2" and
    the next began "%"."""
    line = "largest without: " + ", ".join(f"aten::op{i} {i} %" for i in range(30))
    for columns in range(40, 101):
        wrapped = terminal.wrap(line, columns)
        assert not any(piece.lstrip().startswith("%") for piece in wrapped), columns
        assert " ".join(p.strip() for p in wrapped) == line  # the text unchanged


def test_a_window_beside_profiles_without_a_timeline_says_so():
    """A trace and an ncu export read together (a folder that mixes them): the window holds only
    the trace's 12.5 ms, so the headline adds the launches' total over both inputs and the
    coverage is of GPU time, not of the window. The total is each file's own summed launch time
    added: 12.549021 ms (the trace's kernels, summed from its events) + 906.229 ms (the export's
    gpu__time_duration.sum over its 23 launches, read alone)."""
    trace = FIXTURES / "kineto" / "tracelens-torch_compile_triton-trace.json.gz"
    alone = [pipeline.build([str(p)]).summary.total_time_s for p in (trace, A100_EXPORT)]
    assert alone[0] == pytest.approx(12.549021e-3)
    result = pipeline.build([str(trace), str(A100_EXPORT)])
    text = reporters.render(result, "table")
    assert "; with 1 input without a timeline, launches total 919 ms," in text
    assert result.summary.total_time_s == pytest.approx(sum(alone))
    assert "coverage: 100 % of GPU time has a verdict" in text
    assert "window's busy time" not in text


def test_a_share_never_rounds_a_part_to_none_or_all():
    """Coverage shares: 99.96 % with a verdict is not "100 %", 0.04 % without is not "0 %"."""
    from rooflint.core.formatting import share_pct

    assert [share_pct(x) for x in (0.0, 0.0004, 0.005, 0.0051, 0.123, 0.9949, 0.9996, 1.0)] == [
        "0 %",
        "<1 %",
        "<1 %",  # 0.5 rounds to even: 0
        "1 %",
        "12 %",
        "99 %",
        ">99 %",
        "100 %",
    ]
