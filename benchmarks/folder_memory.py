"""A folder's memory: the parent's peak RSS reporting 4, 8, 16 and 32 synthetic traces of ~48 MB.

    python benchmarks/folder_memory.py              # generates benchmarks/data/traces-48mb/ once
    python benchmarks/folder_memory.py --dask       # also LocalCluster(2) on 16 traces vs local
    python benchmarks/folder_memory.py --formats    # JSON, CSV, Parquet -o DIR/, HTML, PNG
    python benchmarks/folder_memory.py --formats html,png --counts 4,16

The terminal report of a folder is made file by file (rooflint.reduced: each file read and
reduced to its per-group sums by a worker, the parent merging them); the full path
(pipeline.build, which every launch-row format still takes) keeps every file's table until one
join. Each figure is the parent process's own VmHWM in a fresh interpreter (the forked readers
are processes of their own), both paths measured in the same run. Target (issue 32): at most
2 x the largest file + 200 MB, flat in the number of files. With --dask: the same 16 traces read
and reduced on a 2-worker LocalCluster, its time against the local run's, and the same bytes.
With --formats: the formats that write every launch (JSON, CSV per launch, a Parquet dataset
-o DIR/) from a folder's rows kept on disk file by file (rooflint.spill, launches="pieces")
against the full path: the parent's peak RSS, the time (both in this run) and the same bytes;
and the HTML page and the PNG chart, drawn from the folder's merged partials (launches=False).
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


WRITE = """
import hashlib, resource, sys, time
import rooflint.cli  # first, as the command: its Arrow allocator (cli/memory.py)
import rooflint
from rooflint import reporters
start = time.perf_counter()
result = rooflint.report({folder!r}, launches={launches!r})
data = reporters.render_pieces(result, {fmt!r}, output={output!r})
digest = hashlib.sha1()
if data is not None:
    for piece in [data] if isinstance(data, (str, bytes)) else data:
        digest.update(piece.encode() if isinstance(piece, str) else piece)
del result, data
seconds = time.perf_counter() - start
used = [resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)]
cpu = sum(u.ru_utime + u.ru_stime for u in used)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) * 1024
print(peak, seconds, cpu, digest.hexdigest())
"""
# Each format and the rows a folder's report of it takes (reporters' Format.rows): "pieces"
# (each file's rows spilled and written back file by file) or none (merged partials alone).
FORMATS = {
    "json": "pieces",
    "csv": "pieces",
    "parquet": "pieces",
    "perfetto": "timeline",
    "html": False,
    "png": False,
}


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


def written(folder: Path, fmt: str, launches, output: Path | None) -> tuple[int, float, float, str]:
    """(parent peak RSS, seconds, CPU seconds of it and its readers, what it wrote) of `fmt` for
    `folder` in a fresh interpreter: streamed into a hash, or a Parquet dataset at `output`/
    (its files' bytes hashed). CPU time is the steadier figure on a shared machine."""
    target = None if output is None else str(output) + "/"
    code = WRITE.format(folder=str(folder), launches=launches, fmt=fmt, output=target)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    peak, seconds, cpu, digest = out.stdout.split()[-4:]
    if output is not None:
        import hashlib

        files = sorted(p for p in output.rglob("*") if p.is_file())
        digest = hashlib.sha1(b"".join(p.read_bytes() for p in files)).hexdigest()
        shutil.rmtree(output)
    return int(peak), float(seconds), float(cpu), digest


def formats(counts=COUNTS, chosen=()) -> list[tuple]:
    """Per format and folder size: (format, count, full peak, pieces peak, full s, pieces s,
    same bytes). The two paths alternate, each in a fresh interpreter, twice: the fastest time,
    the higher peak."""
    traces(1)  # the first trace and its copies made
    largest = (DATA / "rank-00.json").stat().st_size
    target = 2 * largest + (200 << 20)
    rows = []
    for fmt in chosen or FORMATS:
        for count in counts:
            folder = traces(count)
            out = DATA.parent / "written" if fmt == "parquet" else None
            rows_ = FORMATS[fmt]
            runs = [(written(folder, fmt, True, out), written(folder, fmt, rows_, out))]
            runs.append((written(folder, fmt, True, out), written(folder, fmt, rows_, out)))
            full, part = (_fastest([run[n] for run in runs]) for n in (0, 1))
            same = full[3] == part[3]
            rows.append((fmt, count, full[0], part[0], full[1], part[1], full[2], part[2], same))
            mark = "" if part[0] <= target else "  OVER"
            how = "pieces" if rows_ else "reduced"
            print(
                f"{fmt:>7} {count:>2} traces: parent peak RSS full path {full[0] / 2**20:6.0f} "
                f"MiB -> {how} {part[0] / 2**20:5.0f} MiB ({part[0] / full[0]:.2f}x; target <= "
                f"{target / 2**20:.0f} MiB{mark}); time {part[1]:.1f} s vs {full[1]:.1f} s "
                f"({part[1] / full[1]:.2f}x), CPU {part[2]:.1f} s vs {full[2]:.1f} s "
                f"({part[2] / full[2]:.2f}x); same bytes: {same}",
                flush=True,
            )
    return rows


def _fastest(runs: list[tuple[int, float, float, str]]) -> tuple[int, float, float, str]:
    """Of repeated runs: the highest peak, the fastest time and CPU time, the bytes (all the
    same, else "differ")."""
    digests = {run[3] for run in runs}
    return (
        max(run[0] for run in runs),
        min(run[1] for run in runs),
        min(run[2] for run in runs),
        digests.pop() if len(digests) == 1 else "differ",
    )


def one_file() -> tuple[float, float]:
    """(before, now) seconds of JSON for one trace: the full path, which one file keeps."""
    alone = DATA / "rank-00.json"
    runs = [(written(alone, "json", True, None), written(alone, "json", "pieces", None))]
    runs += [(written(alone, "json", True, None), written(alone, "json", "pieces", None))]
    full, now = (min(run[n][1] for run in runs) for n in (0, 1))
    print(f"one trace, JSON: launches='pieces' {now:.2f} s vs full path {full:.2f} s")
    return full, now


def dask(count: int = 32, repeats: int = 2) -> tuple[float, float, bool]:
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
    parser.add_argument(
        "--formats",
        nargs="?",
        const=",".join(FORMATS),
        default="",
        help=f"the formats against the full path instead (of {', '.join(FORMATS)}; all if bare)",
    )
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)), help="folder sizes")
    args = parser.parse_args()
    counts = tuple(int(c) for c in args.counts.split(","))
    if args.formats:
        formats(counts, tuple(args.formats.split(",")))
        if "json" in args.formats:
            one_file()
        return
    memory()
    if args.dask:
        dask()


if __name__ == "__main__":
    main()
