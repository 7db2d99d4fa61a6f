"""Which files a run reads: its paths expanded to profile files and profile folders."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rooflint.core.profile import HIDDEN, is_hidden
from rooflint.parsers import folder_reader


def expand(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every path's files and profile folders to read, in order, and the hidden files passed
    over (with their reason)."""
    expanded = [expand_folder(Path(p)) for p in paths]
    candidates = [c for found, _ in expanded for c in found]
    skipped = [item for _, hidden in expanded for item in hidden]
    return candidates, skipped


def expand_folder(path: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """The files and profile folders to read under `path`, and the hidden files passed over."""
    if not path.is_dir() or is_profile_folder(path):
        return [path], []
    found, hidden = [], []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        here = Path(root)
        if here != path and is_profile_folder(here):
            found.append(here)
            dirs.clear()
            continue
        for name in sorted(files):
            if is_hidden(here / name):
                hidden.append((str(here / name), HIDDEN))
            else:
                found.append(here / name)
    return found, hidden


def is_profile_folder(path: Path) -> bool:
    """A folder one reader reads as a whole (a rocprof-compute workload, a rocprofv3 output)."""
    return folder_reader(path) is not None
