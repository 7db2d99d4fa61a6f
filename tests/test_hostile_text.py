"""Outside text in outputs (issue 33, items 10-12): a kernel name, range, device name or file
path holding terminal escapes, bidi overrides or @mentions is shown, never obeyed, in every text
format (terminal, Markdown, GitHub, HTML, SVG, stderr); CSV, JSON and Parquet keep it exact."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rooflint.cli import main, progress
from rooflint.core import names
from tests.helpers import FIXTURES

RAW = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"  # one launch of volta_sgemm_32x128_nn
# OSC 0 retitles the terminal, ESC [2J clears it, then a green "rooflint: PASS"; U+202E turns
# what follows backwards, U+2066 isolates it; U+009B is an 8-bit CSI; @mentions ping on GitHub.
# (No line break: a CSV name with one is the readers' business, issue 33 item 2.)
HOSTILE = (
    "evil\x1b]0;pwned\x07\x1b[2J\x1b[1;32mrooflint: PASS\x1b[0m\u202eabc\x01\x7f\x9b\u2066"
    " @octocat @org/team"
)
# a trace's JSON can carry anything, line breaks and NUL included
TRACE_NAME = HOSTILE + "\n\rgate passed\x00\x85\u2028\u2029\x0b\x0c\x1c"
# What no text output may hold raw: every C0 control but the line feed that ends its lines,
# DEL, C1, the bidi marks, embeddings, overrides and isolates, the line/paragraph separators.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
C0 = re.compile("[\x00-\x09\x0b-\x1f]")  # what JSON escapes by itself
LIVE_MENTION = re.compile(r"(?<!\w)@[A-Za-z0-9]")


def run(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)


def shown_only(text: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)})
    assert not found, f"raw control characters in the output: {found}"


def hostile_export(folder, name: str = HOSTILE):
    """The 2080 Ti raw export with two launches: one of a kernel called `name`, one plain."""
    header, units, row = RAW.read_text(encoding="utf-8").splitlines()[:3]
    hostile = row.replace("volta_sgemm_32x128_nn", name.replace('"', '""'))
    assert hostile != row
    plain = row.replace('"0"', '"1"', 1)  # the second launch: ID 1
    path = folder / "hostile.csv"
    path.write_text("\n".join([header, units, hostile, plain, ""]), encoding="utf-8")
    return path


def hostile_trace(folder, file_name: str = "trace.json", device: str = "NVIDIA H100 80GB HBM3"):
    """A PyTorch trace of one kernel called TRACE_NAME inside a range called HOSTILE."""
    cpu = {"pid": 1, "tid": 1}
    doc = {
        "deviceProperties": [{"id": 0, "name": device, "computeMajor": 9, "computeMinor": 0}],
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": HOSTILE, "ts": 0, "dur": 100, **cpu},
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "ts": 10,
                "dur": 5,
                **cpu,
                "args": {"correlation": 7},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": TRACE_NAME,
                "pid": 0,
                "tid": 7,
                "ts": 20,
                "dur": 3,
                "args": {"correlation": 7, "device": 0, "stream": 7, "grid": [1, 1, 1]},
            },
        ],
    }
    path = folder / file_name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture(params=["export", "trace"])
def hostile(request, tmp_path):
    return hostile_export(tmp_path) if request.param == "export" else hostile_trace(tmp_path)


# --- item 10: every text format shows control characters escaped --------------------------------


def test_the_escape_shows_each_control_character_and_nothing_else():
    assert (
        names.visible("a\x1b[2Jb\u202ec\x9b\n\x00é€ok") == "a\\x1b[2Jb\\u202ec\\x9b\\x0a\\x00é€ok"
    )
    assert names.visible(names.visible(HOSTILE)) == names.visible(HOSTILE)
    assert names.visible("cutlass::Kernel<float, (int)128>") == "cutlass::Kernel<float, (int)128>"


@pytest.mark.parametrize("group_by", ["kernel", "range"])
def test_the_terminal_report_shows_names_escaped(hostile, group_by):
    res = run("report", hostile, "-q", "--group-by", group_by, "--top", "5")
    assert res.exit_code == 0, res.output
    shown_only(res.stdout)
    if group_by == "kernel" or hostile.suffix == ".json":  # an export has no ranges
        assert "\\x1b]0;pwned\\x07\\x1b[2J" in res.stdout
    assert "rooflint: PASS" not in res.stdout.replace("\\x1b[1;32mrooflint: PASS", "")


def test_the_terminal_columns_stay_aligned(tmp_path):
    """Escaping happens before the widths are measured: each row ends its kernel cell where the
    header's column ends."""
    res = run("report", hostile_export(tmp_path), "-q")
    lines = res.stdout.splitlines()
    header = next(line for line in lines if line.startswith("#  id"))
    rows = [line for line in lines if re.match(r"^\d+ ", line)]
    assert len(rows) == 2
    end = header.index("launches") + len("launches")  # a right-aligned column
    for row in rows:
        assert row[end - 1] == "1" and row[end] == " ", row


def test_markdown_html_and_the_diff_show_names_escaped(hostile, tmp_path):
    for fmt in ("markdown", "html"):
        res = run("report", hostile, "-q", "-f", fmt)
        assert res.exit_code == 0, res.output
        shown_only(res.stdout)
    for fmt in ("table", "markdown", "json"):
        res = run("diff", RAW, hostile, "-f", fmt)
        assert res.exit_code == 0, res.output
        if fmt != "json":
            shown_only(res.stdout)
        else:  # JSON escapes C0 by itself and keeps the name exact
            assert not C0.findall(res.stdout.replace("\n", ""))
            kernels = {g["kernel"] for g in json.loads(res.stdout)["groups"]}
            assert HOSTILE in kernels or TRACE_NAME in kernels


def test_stderr_lines_show_names_and_paths_escaped(tmp_path):
    """Gate failures, error lines and GitHub annotations quote names and paths."""
    export = hostile_export(tmp_path)
    res = run("diff", RAW, export, "--fail-on-new-latency-bound")
    assert res.exit_code == 1
    assert "is latency-bound in head" in res.stderr and "\\x1b]0;pwned" in res.stderr
    shown_only(res.stderr)
    res = run("diff", RAW, export, "--fail-on-new-latency-bound", "-f", "github")
    assert "::error title=rooflint::" in res.stdout
    shown_only(res.stdout + res.stderr)
    bad = tmp_path / "not\x1b[2J\x1b]0;x\x07a profile.csv"
    bad.write_text("hello\n", encoding="utf-8")
    res = run("report", bad)
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "not\\x1b[2J\\x1b]0;x\\x07a profile.csv" in res.stderr
    shown_only(res.stderr)


def test_a_hostile_file_name_and_device_name_are_shown_escaped(tmp_path):
    trace = hostile_trace(tmp_path, "run\x1b[2J\n@octocat.json", device=HOSTILE)
    for fmt, path in [
        ("table", "run\\x1b[2J\\x0a@octocat.json"),
        ("markdown", "run\\\\x1b\\[2J\\\\x0a@octocat.json"),
        ("html", "run\\x1b[2J\\x0a@octocat.json"),
    ]:
        res = run("report", trace, "-q", "-f", fmt)
        assert res.exit_code == 0, res.output
        shown_only(res.stdout)
        assert path in res.stdout


def test_progress_shows_paths_escaped():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    with progress.bar(stream=stream) as tick:
        tick("/tmp/\x1b[2Jrun.csv", 3)
        tick.reading("/tmp/\x1b]0;x\x07big.csv", 1 << 27, 1 << 28)
    text = stream.getvalue().replace("\r", "")  # its own carriage returns redraw the line
    shown_only(text)
    assert "\\x1b[2Jrun.csv" in text and "\\x1b]0;x\\x07big.csv" in text


def test_csv_json_and_parquet_keep_the_exact_text(hostile, tmp_path):
    name = HOSTILE if hostile.suffix == ".csv" else TRACE_NAME
    res = run("report", hostile, "-q", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(res.stdout, newline="")))
    assert name in {r["kernel"] for r in rows}
    res = run("report", hostile, "-q", "-f", "json")
    assert name in {launch["kernel"] for launch in json.loads(res.stdout)["launches"]}
    out = tmp_path / "report.parquet"
    assert run("report", hostile, "-q", "-o", out).exit_code == 0
    assert name in set(pq.read_table(out).column("kernel").to_pylist())


# --- item 11: the SVG stays valid XML -------------------------------------------------------------


def test_the_svg_chart_and_the_html_chart_are_valid_xml(hostile, tmp_path):
    """A control character made the SVG invalid XML (the browser stopped rendering)."""
    out = tmp_path / "chart.svg"
    assert run("report", hostile, "-q", "-o", out).exit_code == 0
    ET.parse(out)
    assert run("plot", hostile, "-q", "-o", out).exit_code == 0
    root = ET.parse(out).getroot()
    text = "".join(root.itertext())
    shown_only(text)
    html = run("report", hostile, "-q", "-f", "html").stdout
    for svg in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
        ET.fromstring(svg)


# --- item 12: GitHub ------------------------------------------------------------------------------


def test_markdown_for_github_mentions_nobody(hostile, tmp_path):
    summary = tmp_path / "summary.md"
    outputs = [
        run("report", hostile, "-q", "-f", "markdown").stdout,
        run("diff", RAW, hostile, "-f", "markdown").stdout,
        run("diff", RAW, hostile, "-f", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}).stdout,
    ]
    step_summary = summary.read_bytes()
    assert b"\x00" not in step_summary and b"\x1b" not in step_summary
    for text in [*outputs, step_summary.decode("utf-8")]:
        assert "octocat" in text and not LIVE_MENTION.findall(text)
        assert f"@{names.ZERO_WIDTH_JOINER}octocat" in text
        assert f"@{names.ZERO_WIDTH_JOINER}org/team" in text
        shown_only(text)


def test_an_email_address_is_no_mention():
    assert names.unmentioned("mail ops@example.com or @ops, (@a-b)") == (
        f"mail ops@example.com or @{names.ZERO_WIDTH_JOINER}ops, (@{names.ZERO_WIDTH_JOINER}a-b)"
    )
