"""A progress line on stderr for long runs, only when stderr is a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from rooflint.core.names import visible


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
            name = _shown(path)
            stream.write(
                f"\rrooflint: files {counts['files']}, launches {counts['launches']:,}  {name:<40}"
            )
            stream.flush()

    def reading(path: str, done: int, total: int) -> None:
        """Within one large file: how far the reader has got (bytes decompressed, for gzip)."""
        if active and total >= 1 << 26:
            name = _shown(path)
            # a gzip stream decompresses to more than the file's size: then say how much
            share = f"{done / total:.0%}" if done <= total else f"{done >> 20} MiB"
            stream.write(f"\rrooflint: files {counts['files']}, reading {share:>7}  {name:<40}")
            stream.flush()

    tick.reading = reading
    try:
        yield tick
    finally:
        if active and counts["files"]:
            stream.write("\r" + " " * 100 + "\r")
            stream.flush()


def _shown(path: str) -> str:
    """The path's last 40 characters as they are shown: control characters escaped."""
    path = visible(path)
    return path if len(path) <= 40 else "…" + path[-39:]
