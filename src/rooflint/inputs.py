"""Which files a run reads: its paths expanded to profile files and profile folders.

Only regular files are read (a FIFO would block the run forever, a device never ends); a file
reached twice under a folder (a symlink or hard link to one already found) is read once; a
folder that cannot be listed or entered is skipped. Each is listed with its reason."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from rooflint.core.profile import HIDDEN, is_hidden
from rooflint.parsers import folder_reader

NOT_REGULAR = "not a regular file (a FIFO, socket or device): only files are read; pass a file"
LINKED_FOLDER = "a link to a folder, not followed (a link may loop); pass the folder itself"


def unreadable(exc: OSError, what: str = "file") -> str:
    """Why a file or folder that exists (or a link) cannot be read."""
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"a link to nothing ({reason}); fix the link or remove it"
    return f"{what} cannot be read ({reason}); fix its permissions or leave it out"


Skipped = list[tuple[str, str]]


def expand(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], Skipped]:
    """Every path's files and profile folders to read, in order, and the files passed over
    (with their reason)."""
    seen: dict[tuple[int, int], Path] = {}  # (device, inode) of each file found
    candidates: list[Path] = []
    skipped: Skipped = []
    for p in paths:
        found, passed = _expand_one(Path(p), seen)
        candidates += found
        skipped += passed
    return candidates, skipped


def expand_folder(path: Path) -> tuple[list[Path], Skipped]:
    """The files and profile folders to read under `path`, and the files passed over."""
    return _expand_one(path, {})


def _expand_one(path: Path, seen: dict) -> tuple[list[Path], Skipped]:
    if not path.is_dir():
        why = _given_file(path, seen)
        return ([], [(str(path), why)]) if why else ([path], [])
    return ([path], []) if is_profile_folder(path) else _walk(path, seen)


def _given_file(path: Path, seen: dict) -> str | None:
    """Why a path given by name is not read, or None (a path that does not exist is left to
    the reader's own error)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return unreadable(exc)
    if not stat.S_ISREG(st.st_mode):
        return NOT_REGULAR
    if not os.access(path, os.R_OK):
        return unreadable(PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    seen.setdefault((st.st_dev, st.st_ino), path)
    return None


def _walk(path: Path, seen: dict) -> tuple[list[Path], Skipped]:
    found: list[Path] = []
    skipped: Skipped = []

    def cannot_list(exc: OSError) -> None:
        skipped.append((str(exc.filename or path), unreadable(exc, "folder")))

    for root, dirs, files in os.walk(path, onerror=cannot_list):
        dirs.sort()
        here = Path(root)
        if here != path and is_profile_folder(here):
            found.append(here)
            dirs.clear()
            continue
        for name in dirs:
            if (here / name).is_symlink():
                skipped.append((str(here / name), LINKED_FOLDER))
        for name in sorted(files):
            why = _file_in_folder(here / name, seen)
            if why:
                skipped.append((str(here / name), why))
            else:
                found.append(here / name)
    return found, skipped


def _file_in_folder(path: Path, seen: dict) -> str | None:
    """Why a file found under a folder is not read, or None."""
    if is_hidden(path):
        return HIDDEN
    try:
        st = path.stat()
    except OSError as exc:  # a dangling link, or a folder that can be listed but not entered
        return unreadable(exc)
    if not stat.S_ISREG(st.st_mode):
        return NOT_REGULAR
    if not os.access(path, os.R_OK):
        return unreadable(PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    key = (st.st_dev, st.st_ino)
    if key in seen:
        return f"the same file as {seen[key]} (a link to it): read once"
    seen[key] = path
    return None


def is_profile_folder(path: Path) -> bool:
    """A folder one reader reads as a whole (a rocprof-compute workload, a rocprofv3 output).
    One with a file or folder inside that cannot be read is walked into instead, so that the
    rest is read and that one listed with its reason."""
    try:
        return folder_reader(path) is not None
    except OSError:
        return False
