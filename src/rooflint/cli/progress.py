"""A progress line on stderr for long runs, only when stderr is a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager


@contextmanager
def bar(enabled: bool = True, stream=None):
    """Yields tick(path, launches); prints "files N, launches M" in place on a terminal."""
    stream = stream or sys.stderr
    active = enabled and hasattr(stream, "isatty") and stream.isatty()
    counts = {"files": 0, "launches": 0}

    def tick(path: str, launches: int) -> None:
        counts["files"] += 1
        counts["launches"] += launches
        if active:
            name = path if len(path) <= 40 else "…" + path[-39:]
            stream.write(f"\rrooflint: files {counts['files']}, launches {counts['launches']:,}  {name:<40}")
            stream.flush()

    try:
        yield tick
    finally:
        if active and counts["files"]:
            stream.write("\r" + " " * 100 + "\r")
            stream.flush()
