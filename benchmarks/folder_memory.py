"""A folder's memory: the parent's peak RSS reporting 4, 8, 16 and 32 synthetic traces of ~48 MB.

    python benchmarks/folder_memory.py              # generates benchmarks/data/traces-48mb/ once
    python benchmarks/folder_memory.py --dask       # also LocalCluster(2) on 16 traces vs local

The terminal report of a folder is made file by file (rooflint.reduced: each file read and
reduced to its per-group sums by a worker, the parent merging them); the full path
(pipeline.build, which every launch-row format still takes) keeps every file's table until one
join. Each figure is the parent process's own VmHWM in a fresh interpreter (the forked readers
are processes of their own), both paths measured in the same run. Target (issue 32): at most
2 x the largest file + 200 MB, flat in the number of files. With --dask: the same 16 traces read
and reduced on a 2-worker LocalCluster, its time against the local run's, and the same bytes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "traces-48mb"
sys.path.insert(0, str(HERE))

import generate_trace  # noqa: E402

COUNTS = (4, 8, 16, 32)
MEGABYTES = 48

PEAK = """
import rooflint.cli  # first, as the command: its Arrow allocator (cli/memory.py)
from rooflint import pipeline, reduced
from rooflint.reporters import table
table.render({path}.build([{folder!r}]))
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) * 1024)
"""


def traces(count: int) -> Path:
    """A folder of the first `count` traces (links to one generated file and its copies)."""
    DATA.mkdir(parents=True, exist_ok=True)
    first = DATA / "rank-00.json"
    if not first.exists():
        generate_trace.write(MEGABYTES, first)
    for n in range(1, max(COUNTS)):
        copy = DATA / f"rank-{n:02d}.json"
        if not copy.exists():
            shutil.copyfile(first, copy)
    folder = DATA.parent / f"traces-48mb-{count}"
    if not folder.exists():
        folder.mkdir()
        for n in range(count):
            (folder / f"rank-{n:02d}.json").symlink_to(DATA / f"rank-{n:02d}.json")
    return folder


def peak(folder: Path, path: str) -> int:
    """The parent's peak RSS reporting `folder` as a table, by `path` ("reduced", "pipeline")."""
    code = PEAK.format(path=path, folder=str(folder))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def memory() -> dict:
    """Per folder size (count, full path's peak, reduced peak), one trace alone, the budget."""
    rows = []
    for count in COUNTS:
        folder = traces(count)
        rows.append((count, peak(folder, "pipeline"), peak(folder, "reduced")))
    largest = (DATA / "rank-00.json").stat().st_size
    alone = peak(DATA / "rank-00.json", "reduced")
    target = 2 * largest + (200 << 20)
    for count, full, part in rows:
        mark = "" if part <= target else "  OVER"
        print(
            f"{count:>2} traces: parent peak RSS full path {full / 2**20:6.0f} MiB -> "
            f"reduced {part / 2**20:5.0f} MiB ({part / full:.2f}x; "
            f"target <= {target / 2**20:.0f} MiB{mark})"
        )
    print(f"one trace alone: {alone / 2**20:.0f} MiB; largest file {largest / 2**20:.0f} MiB")
    flat = rows[-1][2] / rows[0][2]
    print(f"reduced, 32 traces / 4 traces: {flat:.2f}x (flat: ~1x)")
    return {"rows": rows, "alone": alone, "largest": largest, "target": target}


def dask(count: int = 16, repeats: int = 2) -> tuple[float, float, bool]:
    """(local seconds, LocalCluster(2) seconds, same bytes) reporting `count` traces reduced."""
    import rooflint
    from rooflint.reporters import table

    folder = traces(count)
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        local = remote = float("inf")
        for _ in range(repeats):  # interleaved, the fastest of each
            start = time.perf_counter()
            here = table.render(rooflint.report(folder, launches=False))
            local = min(local, time.perf_counter() - start)
            start = time.perf_counter()
            there = table.render(rooflint.report(folder, launches=False, scheduler=address))
            remote = min(remote, time.perf_counter() - start)
    same = here == there
    if not same:
        import difflib

        print("".join(list(difflib.unified_diff(here.splitlines(True), there.splitlines(True)))))
    mark = "" if remote / local <= 1.2 else "  OVER"
    print(
        f"dask LocalCluster(2), {count} traces: {remote:.1f} s vs local {local:.1f} s "
        f"({remote / local:.2f}x; target <= 1.2x{mark}); same bytes: {same}"
    )
    return local, remote, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dask", action="store_true", help="also the LocalCluster(2) case")
    args = parser.parse_args()
    memory()
    if args.dask:
        dask()


if __name__ == "__main__":
    main()
