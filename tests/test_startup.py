"""The commands that read no profile start without pandas, pyarrow, numpy or matplotlib (issue 31:
`rooflint --version` loaded 752 modules, as long as `import pandas` on a loaded machine).

Each command runs in a fresh interpreter, through the entry point `rooflint` is installed with,
and reports what it imported; the check is on modules, not on time (benchmarks/startup.py times
them)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.helpers import FIXTURES, ROOT

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib")
# Runs `rooflint ARGS` as the console script does, then prints the heavy modules it imported.
DRIVER = f"""
import json, sys
from rooflint.cli import main
try:
    main.main(sys.argv[1:], prog_name="rooflint")
    code = 0
except SystemExit as stop:
    code = stop.code or 0
loaded = [m for m in {HEAVY!r} if m in sys.modules]
print(json.dumps({{"code": code, "heavy": loaded, "names": sorted(sys.modules)}}), file=sys.stderr)
"""

LIGHT = [
    ["--version"],
    *(
        pytest.param(args, marks=pytest.mark.e2e)  # a subprocess each: a second or two
        for args in [
            ["--help"],
            ["devices"],
            ["devices", "--format", "json"],
            ["devices", "show", "a100-pcie-40gb"],
            ["bound", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--device", "h100-sxm"],
            [
                "bound",
                "elementwise",
                "--n",
                "1000000",
                "--device-file",
                "hardware/devices/a10.toml",
            ],
            ["bound", "reduction", "--n", "1000000", "--device", "mi300x", "--format", "json"],
            ["metrics", "ncu"],
            ["metrics", "rocprof"],
            ["report", "--help"],
            ["diff", "--help"],
            ["plot", "--help"],
        ]
    ),
]


def started(args: list[str]) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", DRIVER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    return json.loads(run.stderr.strip().splitlines()[-1]) | {"stdout": run.stdout}


@pytest.mark.parametrize("args", LIGHT, ids=lambda args: " ".join(args))
def test_a_command_that_reads_no_profile_imports_no_pandas(args):
    got = started(args)
    assert got["code"] == 0, got
    assert got["stdout"].strip(), "the command printed nothing"
    assert got["heavy"] == [], f"rooflint {' '.join(args)} imported {got['heavy']}"


@pytest.mark.e2e  # a subprocess
def test_a_report_does_import_them():
    """The driver sees the imports it is meant to catch: a report of a real export loads pandas
    and pyarrow (and the jemalloc pool is chosen then, tests/test_cli.py)."""
    got = started(["report", str(FIXTURES / "ncu" / "a100-gemm-details.csv"), "-q"])
    assert got["code"] == 0, got
    assert {"pandas", "pyarrow", "numpy"} <= set(got["heavy"])


def test_a_misspelt_command_names_the_closest_one():
    """The commands load on first use, so the group suggests from its list, not what is loaded."""
    from click.testing import CliRunner

    from rooflint.cli import main

    res = CliRunner().invoke(main, ["reprot", "x.csv"])
    assert res.exit_code == 2
    assert res.output.strip() == (
        "rooflint: error: command 'reprot' is not one of bound, devices, diff, metrics, plot, "
        "report; did you mean report?"
    )


def _commands_loaded(got: dict) -> list[str]:
    return [m for m in got["names"] if m.startswith("rooflint.cli.commands.")]


@pytest.mark.e2e  # a subprocess
def test_help_imports_no_command_module():
    """`rooflint --help` lists the commands from cli/main.py's COMMANDS, not from their modules
    (it imported all six, 1.9x `python -c "import click"`; benchmarks/startup.py)."""
    got = started(["--help"])
    assert got["code"] == 0, got
    assert _commands_loaded(got) == []
    assert _commands_loaded(started(["devices"])) == ["rooflint.cli.commands.devices"]


def test_each_listed_summary_is_its_command_s_first_paragraph():
    """The summary `--help` lists for a command not yet loaded is the first paragraph of the
    command's own help, so the list reads as click would write it from the commands."""
    from rooflint.cli.main import COMMANDS, main

    commands = main.all_commands()
    assert set(COMMANDS) == set(commands)
    for name, listed in COMMANDS.items():
        assert listed.summary == commands[name].help.split("\n\n")[0], name


@pytest.mark.parametrize("width", [50, 80, 200])
def test_help_lists_the_commands_as_the_loaded_commands_do(width):
    """`rooflint --help` with no command loaded (the summaries) is the text the loaded commands
    give (their docstrings, shortened by click to the width): today's text, at any width."""
    from click.testing import CliRunner

    from rooflint.cli.main import RooflintGroup, main

    fresh = RooflintGroup(  # as `main`, with no command loaded
        name="main",
        params=main.params,
        callback=main.callback,
        help=main.help,
        context_settings=main.context_settings,
    )
    main.all_commands()  # every command loaded
    sizes = {"terminal_width": width, "max_content_width": width}
    listed, loaded = (
        CliRunner().invoke(group, ["--help"], prog_name="rooflint", **sizes)
        for group in (fresh, main)
    )
    assert listed.exit_code == loaded.exit_code == 0
    assert not fresh.commands
    assert listed.output == loaded.output
    assert "Commands:\n  bound    The roofline target for a GEMM" in listed.output


def test_the_benchmark_times_every_command_checked_here():
    """benchmarks/startup.py prints a ratio for each command this module checks, in one run."""
    spec = importlib.util.spec_from_file_location("startup_bench", ROOT / "benchmarks/startup.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    checked = [p.values[0] if hasattr(p, "values") else p for p in LIGHT]
    assert sorted(bench.COMMANDS.values()) == sorted(checked)
