"""Folders and special files given to rooflint (issue 33, items 8 and 13): links read once, folders
that cannot be listed or entered skipped with their reason, FIFOs never opened.

Every folder is built in tmp_path from the bundled raw page (one launch each copy)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rooflint import inputs
from tests.helpers import RTX, assert_refused, loaded, report


def folder(tmp_path: Path, *names: str) -> Path:
    """tmp_path/runs with a copy of the raw page under each name (sub/folders made)."""
    runs = tmp_path / "runs"
    for name in names:
        (runs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(RTX, runs / name)
    return runs


def skipped(doc: dict) -> dict[str, str]:
    return {Path(s["path"]).name: s["reason"] for s in doc["accounting"]["inputs_skipped"]}


def test_a_symlink_alias_is_read_once(tmp_path):
    runs = folder(tmp_path, "a.csv")
    (runs / "latest.csv").symlink_to("a.csv")
    os.link(runs / "a.csv", runs / "hard.csv")
    result, out = report(tmp_path, runs)
    doc = loaded(result, out)
    assert doc["accounting"]["launches_read"] == 1, "one launch, whatever the names it has"
    assert skipped(doc) == {
        "hard.csv": f"the same file as {runs / 'a.csv'} (a link to it): read once",
        "latest.csv": f"the same file as {runs / 'a.csv'} (a link to it): read once",
    }


def test_a_file_given_and_found_in_a_folder_is_read_once(tmp_path):
    runs = folder(tmp_path, "a.csv", "b.csv")
    result, out = report(tmp_path, runs / "b.csv", runs)
    doc = loaded(result, out)
    assert doc["accounting"]["launches_read"] == 2
    assert list(skipped(doc)) == ["b.csv"]


def test_a_linked_folder_is_listed_not_followed(tmp_path):
    """A link to a folder could loop (a link to its parent): it is listed, not walked."""
    runs = folder(tmp_path, "a.csv")
    (runs / "loop").symlink_to(runs)
    result, out = report(tmp_path, runs)
    doc = loaded(result, out)
    assert doc["accounting"]["launches_read"] == 1
    assert skipped(doc) == {"loop": inputs.LINKED_FOLDER}


def test_a_dangling_link_is_listed(tmp_path):
    runs = folder(tmp_path, "a.csv")
    (runs / "gone.csv").symlink_to("nowhere.csv")
    doc = loaded(*report(tmp_path, runs))
    assert skipped(doc)["gone.csv"].startswith("a link to nothing (No such file or directory)")


def _refuse(monkeypatch, name: str, target, errno_=errno.EACCES):
    """os.<name> raises PermissionError for paths inside `target` (as a non-root user would)."""
    real = getattr(os, name)

    def guarded(path=".", *args, **kwargs):
        inside = Path(os.fsdecode(path))
        if inside == target or target in inside.parents:
            raise PermissionError(errno_, os.strerror(errno_), str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, name, guarded)


def test_a_folder_that_cannot_be_listed_is_listed_as_skipped(tmp_path, monkeypatch):
    """Mode 000: scandir fails. Before, the folder was silently missing."""
    runs = folder(tmp_path, "a.csv", "locked/b.csv")
    _refuse(monkeypatch, "scandir", runs / "locked")
    doc = loaded(*report(tmp_path, runs))
    assert doc["accounting"]["launches_read"] == 1
    assert skipped(doc) == {
        "locked": "folder cannot be read (Permission denied); fix its permissions or leave it out"
    }


def test_a_folder_listed_but_not_entered_skips_its_files(tmp_path, monkeypatch):
    """Mode r-- without x: its names are listed, but stat and open inside it fail. Before, a
    PermissionError traceback."""
    runs = folder(tmp_path, "a.csv", "half/b.csv")
    _refuse(monkeypatch, "stat", runs / "half" / "b.csv")
    monkeypatch.setattr(Path, "stat", lambda self, **kw: os.stat(self, **kw))
    doc = loaded(*report(tmp_path, runs))
    assert doc["accounting"]["launches_read"] == 1
    assert skipped(doc) == {
        "b.csv": "file cannot be read (Permission denied); fix its permissions or leave it out"
    }


def _root_reads_anyway(path: Path) -> bool:
    return os.geteuid() == 0 or os.access(path, os.R_OK | os.X_OK)


@pytest.mark.parametrize("mode", [0o000, 0o444], ids=["mode-000", "listable-not-enterable"])
def test_real_permissions(tmp_path, mode):
    """The same with chmod, where it bites (not as root, who reads anyway)."""
    runs = folder(tmp_path, "a.csv", "locked/b.csv")
    (runs / "locked").chmod(mode)
    try:
        if _root_reads_anyway(runs / "locked"):
            pytest.skip("this user reads the folder whatever its mode (root)")
        doc = loaded(*report(tmp_path, runs))
        assert doc["accounting"]["launches_read"] == 1
        assert "cannot be read (Permission denied)" in " ".join(skipped(doc).values())
    finally:
        (runs / "locked").chmod(0o755)


RUN = """
import sys
from click.testing import CliRunner
from rooflint.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
sys.stderr.write(result.stderr)
sys.exit(result.exit_code)
"""


def _report(tmp_path: Path, *paths, timeout: float = 120):
    """`rooflint report PATHS -q -o out.json` in a child process, killed if it hangs (a FIFO
    opened for reading waits for a writer forever): (exit code, stderr, out path)."""
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, "report", *map(str, paths), "-q", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stderr, out


def _fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(path)
    return path


def test_a_fifo_given_directly_is_refused_not_opened(tmp_path):
    fifo = _fifo(tmp_path / "profile.csv")
    code, stderr, out = _report(tmp_path, fifo)
    assert code == 2, stderr
    assert stderr.splitlines() == [f"rooflint: error: {fifo}: {inputs.NOT_REGULAR}"]
    assert not out.exists()


def test_a_fifo_in_a_folder_is_listed_as_skipped(tmp_path):
    runs = folder(tmp_path, "a.csv")
    _fifo(runs / "b.csv")
    code, stderr, out = _report(tmp_path, runs)
    assert (code, stderr) == (0, "")
    doc = json.loads(out.read_text())
    assert doc["accounting"]["launches_read"] == 1
    assert skipped(doc) == {"b.csv": inputs.NOT_REGULAR}


def test_a_fifo_beside_a_profile_given_directly(tmp_path):
    """Given with a readable profile, the FIFO is skipped and the profile reported (exit 0)."""
    fifo = _fifo(tmp_path / "pipe.csv")
    code, stderr, out = _report(tmp_path, RTX, fifo)
    assert (code, stderr) == (0, "")
    assert skipped(json.loads(out.read_text())) == {"pipe.csv": inputs.NOT_REGULAR}


def test_an_unreadable_file_is_listed(tmp_path, monkeypatch):
    """Mode 000 as a non-root user (simulated: os.access says no): listed, not a traceback."""
    runs = folder(tmp_path, "a.csv", "b.csv")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: Path(p).name != "b.csv" and real(p, m))
    doc = loaded(*report(tmp_path, runs))
    assert doc["accounting"]["launches_read"] == 1
    assert skipped(doc) == {
        "b.csv": "file cannot be read (Permission denied); fix its permissions or leave it out"
    }


def test_a_device_given_directly_is_refused(tmp_path):
    result, out = report(tmp_path, os.devnull)
    assert_refused(result, out, os.devnull, "not a regular file")
