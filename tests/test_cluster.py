"""--scheduler: inputs read on a Dask cluster give the report a local run gives, byte for byte."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")
pytestmark = pytest.mark.e2e  # a two-worker LocalCluster starts in a few seconds

from distributed import LocalCluster  # noqa: E402

from rooflint.cli.main import main  # noqa: E402
from tests.helpers import A100, B200_RAW, FIXTURES, RTX  # noqa: E402


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


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_folder_reduced_on_the_cluster_is_the_local_report(scheduler, tmp_path, monkeypatch, fmt):
    """Four real ncu exports (A100, RTX 2080 Ti, B200, H200) reduced file by file on the
    workers (rooflint.reduced: only per-group sums come back): the local report, byte for byte,
    each file's path spelt as given."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in (A100, RTX, B200_RAW, FIXTURES / "ncu" / "h200-block-raw-stdout.csv"):
        shutil.copy(path, runs)
    monkeypatch.chdir(tmp_path)
    local = CliRunner().invoke(main, ["report", "runs", "-f", fmt])
    remote = CliRunner().invoke(main, ["report", "runs", "-f", fmt, "--scheduler", scheduler])
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    assert remote.stderr == local.stderr


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


def test_the_run_s_own_client_is_closed_when_the_last_file_is_handed_over(monkeypatch, tmp_path):
    """read_all raises a lone file's error as it gets it (and zip stops at the last candidate),
    leaving read_each suspended at its last yield: its client was closed only when the generator
    was collected, after the module's cluster had shut down, and retried the scheduler until
    the process ended (a CancelledError traceback after the test run). The client made for the
    run is closed before the last file is handed over."""
    from rooflint import cluster
    from rooflint.core.errors import InputError

    class Future:
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    class Client:
        closed = 0

        def map(self, function, paths, given, pure):
            return [Future(InputError("not a profile", path=str(p))) for p in paths]

        def close(self):
            self.closed += 1

    client = Client()
    monkeypatch.setattr(cluster, "_client", lambda scheduler: (client, True))
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]
    read = cluster.read_each(files, {}, "tcp://nowhere:1", lambda path, given: None)
    first = next(read)
    assert (first.path, client.closed) == (str(files[0]), 0)  # still reading the others
    last = next(read)  # the consumer stops here, the generator suspended
    assert (last.path, client.closed) == (str(files[1]), 1)
    read.close()
    assert client.closed == 2  # closing again does nothing in distributed.Client
