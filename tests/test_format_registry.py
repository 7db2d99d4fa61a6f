"""The output-format registry: one Format record per format, and everything derived from it."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from rooflint import pipeline, reporters
from rooflint.cli import formats as cli_formats
from rooflint.cli import main
from rooflint.core.errors import UsageError
from tests.helpers import FIXTURES, ROOT

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
REPORTERS = ROOT / "src" / "rooflint" / "reporters"


def unnamed_modules(folder: Path) -> list[str]:
    """Modules in `folder` that no record names and that are not marked as helpers."""
    named = {f.module for f in reporters.REGISTRY} | set(reporters.HELPERS)
    return sorted(p.stem for p in folder.glob("*.py") if p.stem not in named | {"__init__"})


def test_every_reporter_module_is_named_by_a_record_or_is_a_helper():
    assert unnamed_modules(REPORTERS) == []
    named = {f.module for f in reporters.REGISTRY}
    assert named.isdisjoint(reporters.HELPERS)  # a helper renders no format of its own
    assert all((REPORTERS / f"{m}.py").is_file() for m in named | set(reporters.HELPERS))


def test_a_reporter_module_left_out_of_the_registry_is_found(tmp_path):
    copy = tmp_path / "reporters"
    shutil.copytree(REPORTERS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "yaml_report.py").write_text('"""A format nobody registered."""\n')
    assert unnamed_modules(copy) == ["yaml_report"]


@pytest.mark.parametrize("record", reporters.REGISTRY, ids=lambda f: f"{f.kind}:{f.name}")
def test_each_record_names_a_function_that_takes_its_options(record):
    module = import_module(f"rooflint.reporters.{record.module}")
    for name in filter(None, (record.function, record.streamed)):
        parameters = inspect.signature(getattr(module, name)).parameters
        assert set(record.options) <= set(parameters), name
        assert not record.folder or "output" in parameters
    assert record.top is None or "top" in record.options


def test_names_and_extensions_are_unique_within_a_kind():
    for kind in (reporters.REPORT, reporters.DIFF, reporters.REPR):
        records = [f for f in reporters.REGISTRY if f.kind == kind]
        assert len({f.name for f in records}) == len(records)
        extensions = [e for f in records for e in f.extensions]
        assert len(set(extensions)) == len(extensions)


def _choices(command: str) -> list[str]:
    [param] = [p for p in main.all_commands()[command].params if p.name == "fmt"]
    return list(param.type.choices)


def test_the_commands_format_choices_are_the_registrys():
    assert _choices("report") == [f.name for f in reporters.REGISTRY if f.kind == "report"]
    assert _choices("diff") == ["table", "markdown", "json", "github"]
    assert _choices("diff") == list(reporters.formats(reporters.DIFF))
    assert _choices("plot") == ["png", "svg", "pdf"] == list(reporters.charts())


def test_a_new_format_is_one_record(tmp_path):
    """A record added to the registry (here a second JSON writer) is a --format choice, chosen
    by its -o extension and rendered, with no other change."""
    code = (
        "import sys\n"
        "from rooflint import reporters\n"
        "reporters.REGISTRY += (reporters.Format('rjson', 'json_report', extensions=('.rjson',),"
        " options=('top',)),)\n"
        "from rooflint.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    out = tmp_path / "report.rjson"
    args = ["report", str(A100), "-q", "-o", str(out), "--top", "1"]
    ran = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    expected = CliRunner().invoke(main, ["report", str(A100), "-q", "-f", "json", "--top", "1"])
    assert out.read_text() == expected.stdout
    helped = subprocess.run([sys.executable, "-c", code, "report", "--help"], capture_output=True)
    assert b"|pdf|rjson]" in helped.stdout


def test_a_folder_output_chooses_the_folder_format(tmp_path):
    assert reporters.choose(None, str(tmp_path), reporters.REPORT).name == "parquet"
    assert reporters.choose(None, str(tmp_path), reporters.DIFF).name == "table"


def test_unknown_extension_lists_the_kinds_extensions():
    with pytest.raises(UsageError, match=r"use one of \.txt \.json \.md \.markdown, or pass"):
        reporters.choose(None, "diff.html", reporters.DIFF)
    with pytest.raises(UsageError, match=r"use one of \.txt \.json \.md \.markdown \.html \.htm "):
        reporters.choose(None, "out.xlsx", reporters.REPORT)


@pytest.fixture(scope="module")
def a100():
    return pipeline.build([str(A100)])


@pytest.mark.parametrize("name", [n for n, f in reporters.formats().items() if f.streamed], ids=str)
def test_streamed_formats_give_pieces_that_join_to_the_whole(a100, name):
    pieces = reporters.render_pieces(a100, name)
    assert not isinstance(pieces, (str, bytes))  # an iterator: written piece by piece
    joined = b"".join(p if isinstance(p, bytes) else bytes(p) for p in pieces)
    whole = reporters.render(a100, name)
    assert joined == (whole if isinstance(whole, bytes) else whole.encode("utf-8"))


@pytest.mark.parametrize("record", reporters.formats().values(), ids=lambda f: f.name)
def test_binary_formats_are_refused_on_a_terminal(monkeypatch, record):
    monkeypatch.setattr(cli_formats, "sys", SimpleNamespace(stdout=SimpleNamespace(isatty=bool)))
    cli_formats.refuse_binary_on_a_terminal(record, None)  # not a terminal: anything goes
    monkeypatch.setattr(
        cli_formats, "sys", SimpleNamespace(stdout=SimpleNamespace(isatty=lambda: True))
    )
    cli_formats.refuse_binary_on_a_terminal(record, "out.file")  # a file: anything goes
    if record.binary:
        with pytest.raises(Exception, match=f"^{record.name} output is binary; pass -o FILE$"):
            cli_formats.refuse_binary_on_a_terminal(record, "-")
    else:
        cli_formats.refuse_binary_on_a_terminal(record, "-")
    assert record.binary == (record.name in ("parquet", "png", "svg", "pdf"))


def test_binary_refusal_through_the_command(monkeypatch):
    monkeypatch.setattr(
        cli_formats, "sys", SimpleNamespace(stdout=SimpleNamespace(isatty=lambda: True))
    )
    result = CliRunner().invoke(main, ["report", str(A100), "-q", "-f", "parquet"])
    assert result.exit_code == 2 and "parquet output is binary; pass -o FILE" in result.output


# --- an option the format does not take ------------------------------------------------------


def _refused(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    return line


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["report", A100, "-f", "json", "--excel-safe"],
            "--excel-safe does not apply to json output (it is for csv)",
        ),
        (
            ["report", A100, "--level", "l2"],
            "--level does not apply to table output (it is for html, png, svg, pdf)",
        ),
        (
            ["report", A100, "--level", "dram"],  # the default's value, but given
            "--level does not apply to table output (it is for html, png, svg, pdf)",
        ),
        (
            ["report", A100, "-f", "csv", "--top", "3"],
            "--top does not apply to csv output (it is for table, json, markdown, html, png, svg,"
            " pdf)",
        ),
        (
            ["report", A100, "-f", "markdown", "-v"],
            "--verbose does not apply to markdown output (it is for table)",
        ),
        (
            ["report", A100, "-f", "html", "--per", "kernel"],
            "--per does not apply to html output (it is for csv, parquet)",
        ),
        (
            ["diff", A100, A100, "-f", "json", "--top", "3"],
            "--top does not apply to json output (it is for table, markdown, github)",
        ),
    ],
    ids=["excel-safe json", "level table", "level default", "top csv", "verbose", "per", "diff"],
)
def test_an_option_the_format_does_not_take_is_a_usage_error(args, message):
    line = _refused(*args, "-q") if args[0] == "report" else _refused(*args)
    assert line == (f"rooflint: error: {message}; drop it, or choose one of those with --format")


def test_the_format_from_the_extension_is_checked_too(tmp_path):
    target = tmp_path / "report.json"
    line = _refused("report", A100, "-q", "-o", target, "--excel-safe")
    assert "--excel-safe does not apply to json output" in line
    assert not target.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["report", A100, "-q", "-f", "json"],  # --per, --level, --excel-safe: defaults only
        ["report", A100, "-q", "-f", "csv", "--per", "kernel", "--excel-safe"],
        ["report", A100, "-q", "--top", "2", "-v"],
        ["report", A100, "-q", "-f", "html", "--level", "l2", "--top", "1"],
        ["diff", A100, A100, "-f", "markdown", "--top", "1"],
        ["diff", A100, A100, "-f", "json"],
    ],
    ids=["defaults", "csv", "table", "html", "diff markdown", "diff json"],
)
def test_options_the_format_takes_and_defaults_pass(args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def test_the_python_api_refuses_an_option_the_format_does_not_take(a100):
    with pytest.raises(UsageError, match="the json format does not take 'excel_safe'"):
        reporters.render(a100, "json", excel_safe=True)
    assert reporters.render(a100, "csv", excel_safe=True).startswith("source,")
