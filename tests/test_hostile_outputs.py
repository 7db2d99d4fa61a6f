"""Outputs on hostile ground (issue 33, items 1 and 19): -o onto devices, FIFOs, descriptors and
symbolic links; a full disk or a closed pipe on stdout; signals in the middle of a write.

Device nodes are made inside the test's folder (as root) rather than taken from /dev: a
regression that renames over its target must not delete the machine's /dev/null.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import FIXTURES

A100 = FIXTURES / "ncu" / "a100-gemm-details.csv"
PREVIOUS = b"the report of yesterday\n"
LINUX_FDS = Path("/proc/self/fd").is_dir()


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def expected_csv() -> bytes:
    res = run("report", A100, "-q", "-f", "csv")
    assert res.exit_code == 0
    return res.stdout_bytes


def rooflint(*args, **popen) -> subprocess.Popen:
    """rooflint in a process of its own, with the default action for every signal it handles
    (the test runner may ignore SIGHUP, and an ignored signal stays ignored in the child)."""
    return subprocess.Popen(
        [sys.executable, "-c", popen.pop("code", RUN), *map(str, args)],
        preexec_fn=popen.pop("preexec_fn", _default_signals),
        **popen,
    )


RUN = "import sys; from rooflint.cli import main; main(sys.argv[1:], prog_name='rooflint')"


def _default_signals():
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


def temporaries(*folders: Path) -> list[str]:
    return [p.name for folder in folders for p in folder.iterdir() if p.name.endswith(".tmp")]


def char_device(folder: Path, name: str, major: int, minor: int) -> Path:
    """A character device like /dev/<name>, made in `folder` (root only)."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = folder / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(major, minor))
        node.open("wb").close()
    except OSError as exc:  # no CAP_MKNOD, or a folder on a nodev mount
        pytest.skip(f"cannot make or open a device node here ({exc.strerror})")
    return node


# --- item 1: -o onto something that is not a regular file -----------------------------------


def test_a_device_is_written_through_and_stays_a_device(tmp_path):
    """-o /dev/null renamed a regular file over the node: as root, /dev/null was gone."""
    null = char_device(tmp_path, "null", 1, 3)
    for fmt in ("json", "table", "parquet"):
        res = run("report", A100, "-q", "-f", fmt, "-o", null)
        assert res.exit_code == 0, res.output
        assert stat.S_ISCHR(null.stat().st_mode) and null.stat().st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_a_full_device_fails_in_one_line(tmp_path):
    """-o /dev/full 'succeeded': the rename replaced it; written through, it says ENOSPC."""
    full = char_device(tmp_path, "full", 1, 7)
    res = run("report", A100, "-q", "-f", "json", "-o", full)
    assert res.exit_code == 2
    assert res.stderr == (
        f"rooflint: error: {full}: cannot write (No space left on device); choose another -o path\n"
    )
    assert stat.S_ISCHR(full.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


@pytest.mark.skipif(not LINUX_FDS, reason="needs /proc/self/fd")
def test_stdout_named_as_a_path_writes_to_the_pipe(tmp_path):
    """/dev/stdout is a link to /proc/self/fd/1: the rename went to a folder of /proc (and as
    root over /dev/stdout itself). A link of the test's own stands in for /dev/stdout."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    paths = ["/proc/self/fd/1", "/dev/fd/1", link]
    if os.geteuid() != 0:  # unprivileged, a regression cannot replace the real one
        paths.append("/dev/stdout")
    want = expected_csv()
    for path in paths:
        child = rooflint("report", A100, "-q", "-f", "csv", "-o", path, stdout=subprocess.PIPE)
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0 and out == want, path
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["stdout"]


@pytest.mark.skipif(not LINUX_FDS, reason="needs /proc/self/fd")
def test_stdout_as_a_path_writes_where_the_shell_opened_it(tmp_path):
    """`rooflint ... -o /dev/stdout >> log`: appended to the log, never a replacement of it;
    and another descriptor (`3> file`, -o /dev/fd/3) the same way."""
    log = tmp_path / "log"
    log.write_bytes(PREVIOUS)
    with log.open("ab") as stdout:
        child = rooflint("report", A100, "-q", "-f", "csv", "-o", "/proc/self/fd/1", stdout=stdout)
        assert child.wait(timeout=120) == 0
    assert log.read_bytes() == PREVIOUS + expected_csv()
    third = tmp_path / "third"
    with third.open("wb") as fh:
        fd = fh.fileno()
        child = rooflint("report", A100, "-q", "-f", "csv", "-o", f"/dev/fd/{fd}", pass_fds=(fd,))
        assert child.wait(timeout=120) == 0
    assert third.read_bytes() == expected_csv()


def test_a_descriptor_that_is_not_open_is_one_line():
    if not LINUX_FDS:
        pytest.skip("needs /proc/self/fd")
    res = run("report", A100, "-q", "-o", "/dev/fd/97")
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "/dev/fd/97: cannot write (" in res.stderr


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    """The link's target gets the report (atomically, its temporary beside it); the link stays."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (there / "report.csv").write_bytes(PREVIOUS)
    link = here / "report.csv"
    link.symlink_to("../there/report.csv")
    res = run("report", A100, "-q", "-o", link)
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == "../there/report.csv"
    assert (there / "report.csv").read_bytes() == expected_csv()
    assert temporaries(here, there) == []


def test_a_dangling_symlink_gets_its_target_made(tmp_path):
    link = tmp_path / "latest.json"
    link.symlink_to("runs-7.json")
    assert run("report", A100, "-q", "-o", link).exit_code == 0
    assert link.is_symlink() and (tmp_path / "runs-7.json").read_bytes().startswith(b"{")


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        res = run("report", A100, "-q", "-f", "csv", "-o", fifo)
        out, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert res.exit_code == 0 and out == expected_csv()
    assert stat.S_ISFIFO(fifo.stat().st_mode) and temporaries(tmp_path) == []


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    """A report kept private (0600) stays private when a new one replaces it."""
    out = tmp_path / "report.json"
    out.write_bytes(PREVIOUS)
    out.chmod(0o600)
    assert run("report", A100, "-q", "-o", out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_bytes() != PREVIOUS


def test_a_parquet_dataset_goes_through_a_symlinked_folder(tmp_path):
    """-o link/ to a folder: the folder gets the dataset, the link stays a link."""
    real, link = tmp_path / "datasets" / "today", tmp_path / "latest"
    real.mkdir(parents=True)
    link.symlink_to(real)
    res = run("report", A100, "-q", "-f", "parquet", "-o", f"{link}/")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and list(real.glob("source_key=*/part-0.parquet"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["datasets", "latest"]


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full")
def test_a_full_stdout_is_one_line_exit_2():
    with open("/dev/full", "wb") as full:  # only inherited as a descriptor, never a target
        child = rooflint("report", A100, "-q", stdout=full, stderr=subprocess.PIPE)
        _, err = child.communicate(timeout=120)
    assert child.returncode == 2
    assert err.decode() == (
        "rooflint: error: cannot write to stdout (No space left on device); free some space "
        "or pass -o PATH\n"
    )


def test_a_reader_that_went_away_ends_quietly_with_the_code_of_sigpipe():
    """`rooflint report ... | head` exited 1, the code of a failed gate; now 141 (128 + 13)."""
    child = rooflint("report", A100, "-q", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # long before the child has imported pandas
    err = child.stderr.read()
    assert child.wait(timeout=120) == 128 + signal.SIGPIPE
    assert err == b""


# --- item 19: signals -------------------------------------------------------------------------

# rooflint whose report writes its first pieces, says so on stderr, then goes on slowly for
# ever: a signal is certain to come in the middle of the write, as one did into a 49 MB JSON.
SLOW_WRITE = """
import sys, time
from rooflint import reporters
real = reporters.render_pieces
def slow(*args, **kwargs):
    pieces = real(*args, **kwargs)
    yield from ([pieces] if isinstance(pieces, (str, bytes)) else pieces)
    print("written", file=sys.stderr, flush=True)
    while True:
        time.sleep(0.05)
        yield ""
reporters.render_pieces = slow
from rooflint.cli import main
main(sys.argv[1:], prog_name="rooflint")
"""
# rooflint stopped while it reads its inputs
SLOW_READ = """
import sys, time
import rooflint
def slow(*args, **kwargs):
    print("reading", file=sys.stderr, flush=True)
    while True:
        time.sleep(0.05)
rooflint.report = slow
from rooflint.cli import main
main(sys.argv[1:], prog_name="rooflint")
"""

# rooflint that says on stderr when it starts reading (its signal handlers are in place by then)
ANNOUNCED_READ = """
import sys
import rooflint
real = rooflint.report
def announced(*args, **kwargs):
    print("reading", file=sys.stderr, flush=True)
    return real(*args, **kwargs)
rooflint.report = announced
from rooflint.cli import main
main(sys.argv[1:], prog_name="rooflint")
"""


def signalled(code: str, marker: bytes, sig: int, *args, **popen) -> tuple[int, bytes]:
    child = rooflint(*args, code=code, stderr=subprocess.PIPE, **popen)
    try:
        seen = b""
        while marker not in seen:
            line = child.stderr.readline()
            assert line, f"the child ended first: {seen!r}"
            seen += line
        os.kill(child.pid, sig)
        err = child.stderr.read()
        return child.wait(timeout=120), err
    finally:
        child.kill()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_mid_write_removes_the_temporary_and_exits_128_plus_its_number(tmp_path, sig):
    """SIGTERM ended Python at once: the hidden temporary stayed; Ctrl-C exited 1 ('Aborted!',
    read by CI as a failed gate). Now 143, 130 and 129, the earlier report untouched."""
    out = tmp_path / "report.json"
    out.write_bytes(PREVIOUS)
    child = rooflint("report", A100, "-q", "-o", out, code=SLOW_WRITE, stderr=subprocess.PIPE)
    try:
        assert child.stderr.readline() == b"written\n"
        (temporary,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert temporary.name.startswith(".report.json.") and temporary.stat().st_size > 0
        os.kill(child.pid, sig)
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) == 128 + sig
    finally:
        child.kill()
    assert err == f"rooflint: stopped by {signal.Signals(sig).name}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    assert out.read_bytes() == PREVIOUS


def test_a_signal_while_reading_exits_143_and_writes_nothing(tmp_path):
    out = tmp_path / "report.json"
    code, err = signalled(SLOW_READ, b"reading", signal.SIGTERM, "report", A100, "-o", out)
    assert code == 143 and err == b"rooflint: stopped by SIGTERM\n"
    assert list(tmp_path.iterdir()) == []


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """Under nohup (SIGHUP ignored) rooflint must not take SIGHUP back: the report is made."""

    def nohup():
        _default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    out = tmp_path / "report.csv"
    code, err = signalled(
        ANNOUNCED_READ, b"reading", signal.SIGHUP, "report", A100, "-q", "-o", out, preexec_fn=nohup
    )
    assert code == 0 and err == b""
    assert out.read_bytes() == expected_csv()


def test_ctrl_c_in_process_exits_130_and_leaves_the_handlers_as_they_were(monkeypatch):
    import rooflint as api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    before = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)]
    monkeypatch.setattr(api, "report", interrupted)
    res = run("report", A100)
    assert res.exit_code == 130 and res.stderr == "rooflint: stopped by SIGINT\n"
    assert [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)] == before
