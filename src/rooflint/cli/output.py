"""Writing outputs atomically: a temporary file in the target folder, then a rename."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from rooflint.core.errors import UsageError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write(target: str | None, data: str | bytes | Iterable[str | bytes | memoryview]) -> None:
    """Write `data` (text, bytes, or pieces of either written one after another, so that a
    large report is never held whole) to `target` ("-" or None is stdout); never leaves a
    half-written file."""
    pieces = [data] if isinstance(data, (str, bytes)) else data
    if target in (None, "-"):
        for piece in pieces:
            if isinstance(piece, str):
                sys.stdout.write(piece)
            else:
                sys.stdout.flush()  # the text written so far goes first
                sys.stdout.buffer.write(piece)
            del piece  # not held while the next piece is made
        sys.stdout.flush()
        return
    path = Path(target)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(
            f"output folder {folder} does not exist; create it or choose another -o path",
            path=str(target),
        )
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(
            f"cannot write there ({exc.strerror}); choose another -o path", path=str(target)
        ) from None
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report gets the usual permissions
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
                del piece  # not held while the next piece is made
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # disk full, a folder in the way: the user's to fix
            raise UsageError(
                f"cannot write ({exc.strerror or exc}); nothing was written; choose another "
                "-o path (or free some space)",
                path=str(target),
            ) from None
        raise
