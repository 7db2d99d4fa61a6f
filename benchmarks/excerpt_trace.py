"""Cut a time range out of a PyTorch profiler trace: the events that start in it, unchanged.

    python benchmarks/excerpt_trace.py IN.json.gz OUT.json.gz START_US END_US [WITHOUT_CATS]

Every top-level key but traceEvents is kept as it is, so are the metadata events (ph "M") and
each event that starts in [START_US, END_US) and whose `cat` is not among WITHOUT_CATS (comma
separated, e.g. python_function: the with_stack frames, most of a stack trace's bytes); the events
keep their order and their fields.
"""

from __future__ import annotations

import gzip
import json
import sys


def main(source: str, target: str, start: float, end: float, without: str = "") -> None:
    with gzip.open(source, "rt") as fh:
        trace = json.load(fh)
    dropped = set(filter(None, without.split(",")))
    trace["traceEvents"] = [
        e
        for e in trace["traceEvents"]
        if e.get("ph") == "M"
        or (
            isinstance(e.get("ts"), int | float)
            and start <= e["ts"] < end
            and e.get("cat") not in dropped
        )
    ]
    with gzip.GzipFile(target, "wb", mtime=0) as fh:
        fh.write(json.dumps(trace, separators=(",", ":")).encode())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), *sys.argv[5:6])
