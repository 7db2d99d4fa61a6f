"""The same input gives byte-identical reports in separate processes (with different hash seeds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import BUNDLED_PROFILES, FIXTURES

pytestmark = pytest.mark.e2e  # runs the real command in subprocesses

FORMATS = ("json", "table", "csv")

# Renders every case in one process: separate processes are what matters, not one per file.
RENDER_ALL = """
import json, sys
from rooflint.cli import main
out, cases = sys.argv[1], json.loads(sys.argv[2])
for name, fmt, inputs in cases:
    try:
        main(["report", *inputs, "-q", "-f", fmt, "-o", f"{out}/{name}"], standalone_mode=False)
    except SystemExit:
        pass
"""


BUNDLED = [FIXTURES / p for p in BUNDLED_PROFILES if Path(p).parent.name in ("ncu", "rocprof")]


def _cases() -> list[tuple[str, str, list[str]]]:
    cases = [(f"{p.parent.name}-{p.stem}.{fmt}", fmt, [str(p)]) for p in BUNDLED for fmt in FORMATS]
    # Several inputs in one report, given as folders: file order and device grouping matter too.
    cases += [
        (f"all-folders.{fmt}", fmt, [str(FIXTURES / "ncu"), str(FIXTURES / "rocprof")])
        for fmt in FORMATS
    ]
    return cases


def _env(seed: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=seed, COLUMNS="100", LC_ALL="C.UTF-8")
    env.pop("ROOFLINT_MAX_INPUT_BYTES", None)
    return env


def _render(folder: Path, seed: str) -> dict[str, bytes]:
    folder.mkdir()
    cases = _cases()
    subprocess.run(
        [sys.executable, "-c", RENDER_ALL, str(folder), json.dumps(cases)],
        env=_env(seed),
        check=True,
        timeout=300,
        capture_output=True,
    )
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_there_is_something_to_compare():
    assert len(BUNDLED) >= 3


def test_reports_are_byte_identical_across_processes(tmp_path):
    first = _render(tmp_path / "first", "1")
    second = _render(tmp_path / "second", "2")
    expected = {name for name, _, _ in _cases()}
    assert set(first) == expected, "a report was not written"
    different = sorted(name for name in expected if first[name] != second[name])
    assert different == []
    for name in expected:
        assert first[name].strip(), f"{name} is empty"


@pytest.mark.parametrize("fmt", FORMATS)
def test_stdout_of_the_real_command_is_byte_identical(tmp_path, fmt):
    raw = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    runs = [
        subprocess.run(
            [sys.executable, "-m", "rooflint", "report", str(raw), "-q", "-f", fmt],
            env=_env(seed),
            capture_output=True,
            timeout=120,
        )
        for seed in ("3", "4")
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stdout.strip()
