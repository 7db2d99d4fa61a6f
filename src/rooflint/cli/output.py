"""Writing outputs: a regular file atomically (a temporary file beside it, then a rename);
anything else (stdout, a device, a pipe, an open descriptor) written through, never replaced."""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from rooflint.core.errors import UsageError

# the kernel's limit on symbolic links followed while resolving one path
MAX_LINKS = 40


def write(target: str | None, data: str | bytes | Iterable[str | bytes | memoryview]) -> None:
    """Write `data` (text, bytes, or pieces of either written one after another, so that a
    large report is never held whole) to `target` ("-" or None is stdout).

    A regular file (or a new one) is never left half-written: the pieces go to a temporary file
    in its folder, renamed over it at the end. A symbolic link is followed: its target is
    replaced and the link stays a link. A device (/dev/null, /dev/full), a FIFO or an open
    descriptor (/dev/stdout, /dev/fd/3) is written through, like the shell's `>` does: renaming
    over /dev/null would delete it (as root)."""
    pieces = [data] if isinstance(data, (str, bytes)) else data
    descriptor = 1 if target in (None, "-") else _descriptor(target)
    if descriptor == 1:
        _to_stdout(pieces)
        return
    if descriptor is not None:
        _through(lambda: os.fdopen(os.dup(descriptor), "wb"), pieces, target)
        return
    path = Path(os.path.realpath(target))
    if _special(path):
        _through(lambda: open(path, "wb"), pieces, target)
        return
    _atomic(path, pieces, target)


def _to_stdout(pieces) -> None:
    try:
        for piece in pieces:
            if isinstance(piece, str):
                sys.stdout.write(piece)
            else:
                sys.stdout.flush()  # the text written so far goes first
                sys.stdout.buffer.write(piece)
            del piece  # not held while the next piece is made
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader went away (`| head`): the command line stops quietly
    except OSError as exc:
        raise UsageError(
            f"cannot write to stdout ({exc.strerror or exc}); free some space or pass -o PATH"
        ) from None


def _through(opener, pieces, target: str) -> None:
    """Write into what `opener` opens (a device, a FIFO, a duplicated descriptor) as it is."""
    sys.stdout.flush()  # a descriptor may be the one stdout or stderr writes to
    sys.stderr.flush()
    try:
        with opener() as fh:
            for piece in pieces:
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
                del piece
    except OSError as exc:  # /dev/full: ENOSPC; a FIFO whose reader left: EPIPE
        raise UsageError(
            f"cannot write ({exc.strerror or exc}); choose another -o path", path=str(target)
        ) from None


def _atomic(path: Path, pieces, target: str) -> None:
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(
            f"output folder {Path(target).parent} does not exist; create it or choose another "
            "-o path",
            path=str(target),
        )
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(
            f"cannot write there ({exc.strerror}); choose another -o path", path=str(target)
        ) from None
    os.chmod(tmp, _mode(path))  # mkstemp makes 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
                del piece  # not held while the next piece is made
        os.replace(tmp, path)
    except BaseException as exc:  # a signal too (rooflint.cli.signals raises one)
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # disk full, a folder in the way: the user's to fix
            raise UsageError(
                f"cannot write ({exc.strerror or exc}); nothing was written; choose another "
                "-o path (or free some space)",
                path=str(target),
            ) from None
        raise


def _mode(path: Path) -> int:
    """The permissions of the file replaced, else the usual ones of a new file."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _special(path: Path) -> bool:
    """A device, FIFO or socket: something there that is neither a file nor a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # nothing there yet (or nothing we may look at: mkstemp will say)
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _descriptor(target: str) -> int | None:
    """The number of this process's open descriptor that `target` names (/dev/stdout,
    /dev/fd/N, /proc/self/fd/N, followed through links), or None. Such a path resolves to a
    pipe, a terminal or the file the shell opened (perhaps with `>>`): written through the
    descriptor, the output lands where the shell sent it, never in a replacement."""
    hop = os.path.abspath(target)
    for _ in range(MAX_LINKS):
        folder, name = os.path.split(hop)
        folder = os.path.realpath(folder)
        if name.isdigit() and _fd_folder(folder):
            return int(name)
        if not os.path.islink(hop):
            return None
        hop = os.path.join(folder, os.readlink(hop))
    return None


def _fd_folder(folder: str) -> bool:
    """/proc/<this pid>/fd (Linux: what /proc/self/fd and /dev/fd resolve to), or /dev/fd
    itself (the BSDs and macOS, where it is a folder of its own)."""
    return re.fullmatch(rf"/proc/{os.getpid()}(?:/task/\d+)?/fd|/dev/fd", folder) is not None
