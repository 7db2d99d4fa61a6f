"""Progress output: on stderr only when it is a terminal, never with --quiet, never on stdout."""

from __future__ import annotations

import io
import types

import pytest
from click.testing import CliRunner

from rooflint.cli import main, progress
from tests.helpers import FIXTURES

INPUTS = [
    str(FIXTURES / "ncu" / "a100-gemm-details.csv"),
    str(FIXTURES / "ncu" / "rtx3070-nvtx-raw.csv"),
]


class FakeStream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_terminal_gets_a_line_updated_in_place_then_cleared():
    stream = FakeStream(tty=True)
    with progress.bar(stream=stream) as tick:
        tick("a.csv", 3)
        tick("b.csv", 1200)
    text = stream.getvalue()
    assert "\rrooflint: files 1, launches 3  a.csv" in text
    assert "\rrooflint: files 2, launches 1,203  b.csv" in text
    assert "\n" not in text  # one line, rewritten in place
    assert text.endswith("\r" + " " * 100 + "\r")


def test_long_paths_keep_their_end():
    stream = FakeStream(tty=True)
    with progress.bar(stream=stream) as tick:
        tick("/very/long/folder/" * 5 + "profile.csv", 1)
    assert "…" in stream.getvalue() and "profile.csv" in stream.getvalue()


@pytest.mark.parametrize(
    "stream", [FakeStream(tty=False), io.StringIO()], ids=["not-a-tty", "no-isatty"]
)
def test_no_output_when_not_a_terminal(stream):
    with progress.bar(stream=stream) as tick:
        tick("a.csv", 3)
    assert stream.getvalue() == ""


def test_no_output_when_disabled_even_on_a_terminal():
    stream = FakeStream(tty=True)
    with progress.bar(enabled=False, stream=stream) as tick:
        tick("a.csv", 3)
    assert stream.getvalue() == ""


def test_nothing_to_clear_when_no_file_was_read():
    stream = FakeStream(tty=True)
    with progress.bar(stream=stream):
        pass
    assert stream.getvalue() == ""


def _run(monkeypatch, tty: bool, *extra: str):
    """`rooflint report` with stderr replaced by a fake terminal (or a fake pipe)."""
    fake = FakeStream(tty=tty)
    monkeypatch.setattr(progress, "sys", types.SimpleNamespace(stderr=fake))
    result = CliRunner().invoke(main, ["report", *INPUTS, "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return result, fake.getvalue()


def test_cli_shows_progress_on_a_terminal(monkeypatch):
    result, shown = _run(monkeypatch, True)
    assert "rooflint: files 2, launches 14" in shown
    assert "rooflint: files" not in result.stdout


def test_cli_quiet_shows_nothing_on_a_terminal(monkeypatch):
    _, shown = _run(monkeypatch, True, "--quiet")
    assert shown == ""


def test_cli_shows_nothing_when_stderr_is_not_a_terminal(monkeypatch):
    _, shown = _run(monkeypatch, False)
    assert shown == ""


def test_progress_never_changes_the_report(monkeypatch):
    loud, _ = _run(monkeypatch, True)
    quiet, _ = _run(monkeypatch, True, "--quiet")
    assert loud.stdout == quiet.stdout


def test_a_large_file_shows_how_far_reading_has_got():
    stream = FakeStream(tty=True)
    with progress.bar(stream=stream) as tick:
        tick.reading("big.csv", 50 << 20, 200 << 20)  # 50 of 200 MiB
        tick.reading("big.csv.gz", 300 << 20, 100 << 20)  # a gzip stream: past its own size
        tick.reading("small.csv", 1, 2)  # too small to bother
        tick("big.csv", 10)
    text = stream.getvalue()
    assert "\rrooflint: files 0, reading     25%  big.csv" in text
    assert "reading 300 MiB  big.csv.gz" in text
    assert "small.csv" not in text


def test_reading_progress_comes_from_the_reader_as_bytes_arrive(tmp_path, monkeypatch):
    """The ncu reader streams its file in pieces of at least PIECE_BYTES cut at line ends; each
    piece moves the progress (per file, the bytes so far against the file's size). Every line
    of this export is longer than 4096 bytes (header 36,616, units 4,108, row 4,323), so each
    piece is one line and the progress stops at each line end: 36,617, 40,726, 45,050."""
    from rooflint import pipeline
    from rooflint.parsers import ncu_lines

    path = tmp_path / "raw.csv"
    path.write_bytes((FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv").read_bytes())
    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", 4096)
    seen = []

    def on_file(path, launches):
        seen.append(("file", launches))

    on_file.reading = lambda p, done, total: seen.append((done, total))
    pipeline.build([str(path)], progress=on_file)
    size = path.stat().st_size
    steps = [s for s in seen if s[0] != "file"]
    assert steps == [(36617, size), (40726, size), (45050, size)] and size == 45050
    assert seen[-1] == ("file", 1)
