"""Golden files for the HTML report and `rooflint diff` (table, Markdown, JSON) on real profiles.

The goldens were first written by the release before the layered restructure (issue 16), so this
test also proves the move changed no byte. Refresh after an intended change, then read the diff:

    ROOFLINT_UPDATE_GOLDEN=1 pytest tests/test_golden_html_diff.py
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import ROOT, check_golden

A100 = "fixtures/ncu/a100-gemm-details.csv"
RTX = "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv"
DIFF_FORMATS = ["table", "markdown", "json"]


@pytest.fixture
def in_root(monkeypatch):
    """Relative fixture paths, so the `source` in every output is the same on any machine."""
    monkeypatch.chdir(ROOT)


def _run(*args: str) -> str:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.mark.parametrize("path", [A100, RTX], ids=["a100", "rtx2080ti"])
def test_html_golden(in_root, path):
    name = path.rsplit("/", 1)[-1].removesuffix(".csv")
    check_golden(f"{name}.html", _run("report", "-q", "-f", "html", path))


@pytest.mark.parametrize("fmt", DIFF_FORMATS)
def test_diff_golden(in_root, fmt):
    # Two devices on purpose: the golden also pins the cross-device and ceiling-change warnings.
    check_golden(f"a100-vs-rtx2080ti.diff.{fmt}", _run("diff", A100, RTX, "-f", fmt))
