"""--scheduler: inputs read on a Dask cluster give the report a local run gives, byte for byte."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")
pytestmark = pytest.mark.e2e  # a two-worker LocalCluster starts in a few seconds

from distributed import LocalCluster  # noqa: E402

from rooflint.cli.main import main  # noqa: E402
from tests.helpers import A100, FIXTURES, RTX  # noqa: E402


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Real inputs of three formats and a note, given by a relative path as users do."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in (A100, RTX, FIXTURES / "kineto" / "h200-train-trace.json.gz"):
        shutil.copy(path, runs)
    (runs / "notes.txt").write_text("GEMM sweep, 2026-11-30\n")  # skipped, with its reason
    monkeypatch.chdir(tmp_path)
    return "runs"


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_a_report_read_on_the_cluster_is_the_local_report(scheduler, folder, fmt):
    local = CliRunner().invoke(main, ["report", folder, "--format", fmt])
    remote = CliRunner().invoke(main, ["report", folder, "--format", fmt, "--scheduler", scheduler])
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    assert remote.stderr == local.stderr
    if fmt != "csv":  # a CSV holds launches only
        assert "runs/notes.txt" in local.stdout  # the skipped file, spelt as given, in both


def test_the_scheduler_comes_from_the_environment(scheduler, folder, monkeypatch):
    monkeypatch.setenv("ROOFLINT_SCHEDULER", "tcp://127.0.0.1:9")  # nothing listens there
    res = CliRunner().invoke(main, ["report", folder])
    assert res.exit_code == 2
    assert res.stderr.startswith(
        "rooflint: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9"
    )
    assert res.stderr.count("\n") == 1


def test_an_unreadable_file_on_the_cluster_is_the_local_error(scheduler, tmp_path, monkeypatch):
    (tmp_path / "broken.csv").write_text('"ID","Kernel Name"\n"0"\n')
    monkeypatch.chdir(tmp_path)
    local = CliRunner().invoke(main, ["report", "broken.csv"])
    remote = CliRunner().invoke(main, ["report", "broken.csv", "--scheduler", scheduler])
    assert local.exit_code == remote.exit_code == 2
    assert remote.stderr == local.stderr
    assert remote.stderr.startswith("rooflint: error: broken.csv: ")
