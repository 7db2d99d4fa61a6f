"""Golden files for `rooflint diff` in every format of the registry, on real profiles (the HTML
report's goldens are written with the other report formats, in tests/test_reporters.py).

The goldens were first written by the release before the layered restructure (issue 16), so this
test also proves the move changed no byte. A missing or different golden fails, and the output
is left in tests/actual/ for review. Refresh after an intended change, then read the diff:

    ROOFLINT_UPDATE_GOLDEN=1 pytest tests/test_golden_html_diff.py
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import ROOT, check_golden, diff_formats

A100 = "fixtures/ncu/a100-gemm-details.csv"
RTX = "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv"


@pytest.fixture
def in_root(monkeypatch):
    """Relative fixture paths, so the `source` in every output is the same on any machine; no
    step summary for `github` to append to."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _run(*args: str) -> str:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.mark.parametrize("fmt", diff_formats())
def test_diff_golden(in_root, fmt):
    # Two devices on purpose: the golden also pins the cross-device and ceiling-change warnings.
    check_golden(f"a100-vs-rtx2080ti.diff.{fmt}", _run("diff", A100, RTX, "-f", fmt))
