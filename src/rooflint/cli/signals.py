"""SIGTERM, SIGHUP and SIGINT as an exception (a temporary output is removed on the way out),
then exit 128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM, never 1 (a failed gate)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

import click

# Windows has no SIGHUP
SIGNALS = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n)]


class Stopped(BaseException):
    """A signal arrived. A BaseException, as KeyboardInterrupt is: no `except Exception` on the
    way swallows it, and every `finally` (the removal of a temporary output) runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    for sig in SIGNALS:  # a second signal while unwinding ends the process at once
        if signal.getsignal(sig) is _stop:
            signal.signal(sig, signal.SIG_DFL)
    raise Stopped(signum)


@contextmanager
def handled():
    """While a command runs, the signals raise Stopped; the earlier handlers come back after.
    (Python takes signals in the main thread only; elsewhere nothing changes.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        sig: signal.signal(sig, _stop)
        for sig in SIGNALS
        if signal.getsignal(sig) is not signal.SIG_IGN  # nohup's SIGHUP, a background job's SIGINT
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_stopped(exc: BaseException):
    """Exit for a Stopped (or a KeyboardInterrupt raised by Python's own SIGINT handler)."""
    signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
    click.echo(f"rooflint: stopped by {signal.Signals(signum).name}", err=True)
    sys.exit(128 + signum)


def exit_broken_pipe():
    """The reader of stdout went away (`rooflint report ... | head`): stop quietly, with the
    code of a process that SIGPIPE ended, as a C program would."""
    try:  # the interpreter's last flush of stdout must not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's runner)
        pass
    sys.exit(128 + getattr(signal, "SIGPIPE", 13))
