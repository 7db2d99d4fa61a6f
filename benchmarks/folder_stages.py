"""Per-file CPU milliseconds by stage of a folder's table report, in one process (no reading
pool, so every stage is this process's), for the full path (pipeline.build) or the reduced one
(rooflint.reduced.build). Times are inclusive (a stage's callees are in it too), process time,
the fastest of three runs after a warm one.

    python benchmarks/folder_stages.py benchmarks/data/many-100x2k-stdout reduced
"""

from __future__ import annotations

import collections
import functools
import sys
import time
from pathlib import Path

import rooflint.cli  # noqa: F401  (first, as the command: its Arrow allocator)
from rooflint import graphs, inputs, join, pipeline, reduced
from rooflint.cli import memory
from rooflint.core import analysis, families, partials, ranking, result, totals
from rooflint.reporters import table

STAGES = [
    (pipeline, "read_one"),
    (pipeline, "_device_for"),
    (analysis, "analyze_each"),
    (families, "classify"),
    (pipeline, "_windows"),
    (pipeline, "_partials"),
    (ranking, "ranked"),
    (partials, "of"),
    (partials, "merge"),
    (totals, "of"),
    (totals, "merge"),
    (pipeline, "assemble"),
    (reduced, "reduce"),
    (reduced, "merged"),
    (inputs, "expand"),
    (pipeline, "_joined"),
    (join, "pair"),
    (graphs, "pair"),
]


def main(folder: str, path: str) -> None:
    memory.return_freed_memory()
    pipeline.PARALLEL_MIN_BYTES = 1 << 60  # one process: the workers' stages are seen here
    spent: collections.Counter = collections.Counter()
    for owner, name in STAGES:
        _time(owner, name, spent)
    _time(result.Result, "__post_init__", spent)
    make = pipeline.build if path == "full" else reduced.build
    count = len(list(Path(folder).glob("*.csv")))
    table.render(make([folder]))
    best: tuple[float, dict] | None = None
    for _ in range(3):
        spent.clear()
        start = time.process_time()
        table.render(make([folder]))
        took = time.process_time() - start
        if best is None or took < best[0]:
            best = (took, dict(spent))
    assert best is not None
    took, stages = best
    print(f"{path} {folder} ({count} files): {took / count * 1000:.1f} ms per file")
    for label, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"  {label:28s} {seconds / count * 1000:7.2f} ms per file")


def _time(owner, name: str, spent: collections.Counter) -> None:
    fn = getattr(owner, name)
    label = f"{getattr(owner, '__name__', str(owner)).split('.')[-1]}.{name}"

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - start

    setattr(owner, name, timed)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "reduced")
