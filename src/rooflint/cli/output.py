"""Writing outputs atomically: a temporary file in the target folder, then a rename."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from rooflint.core.errors import UsageError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write(target: str | None, data: str | bytes) -> None:
    """Write `data` to `target` ("-" or None is stdout); never leaves a half-written file."""
    if target in (None, "-"):
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
            sys.stdout.flush()
        return
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path = Path(target)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"output folder {folder} does not exist; create it or choose another -o path",
                         path=str(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write there ({exc.strerror}); choose another -o path", path=str(target)) from None
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report gets the usual permissions
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # disk full, a folder in the way: the user's to fix
            raise UsageError(f"cannot write ({exc.strerror or exc}); nothing was written; choose another "
                             "-o path (or free some space)", path=str(target)) from None
        raise
