"""Peak memory and time of `rooflint report` per output format, as ratios measured in one run.

    python benchmarks/formats.py [FILE ...] [--formats table,json,...]

Each case is a fresh `python -m rooflint report FILE --format F -o OUT` subprocess; its peak RSS
is the child's own VmHWM, read by the child as it exits (ru_maxrss would not do: a child forked
from a large benchmark process starts with the parent's resident size as its high-water mark);
its time the wall clock. The baseline is a subprocess that runs run.py's plain pyarrow parse of
the same file (startup included in both).
Target (issue 14): peak RSS <= 3x the input file for every format.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FORMATS = ["table", "json", "csv", "markdown", "html", "parquet"]
SUFFIX = {
    "table": ".txt",
    "json": ".json",
    "csv": ".csv",
    "markdown": ".md",
    "html": ".html",
    "parquet": "",
}
RSS_TARGET = 3.0
# The plain parse of run.py: header located and the lines that are not rows skipped, so that
# stdout-shaped files (==PROF== lines, application output) parse as rooflint reads them.
BASELINE = (
    f"import sys; sys.path.insert(0, {str(HERE)!r}); import run; run.plain(run.Path(sys.argv[1]))()"
)
# Prefixed to each subprocess's code: at exit it writes its own VmHWM (kB) to a file.
HIGH_WATER = """import atexit, os
def _high_water():
    status = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
    open(os.environ["ROOFLINT_BENCH_HWM"], "w").write(status)
atexit.register(_high_water)
"""
# `python -m rooflint ARGS`, as code for -c.
ROOFLINT = (
    'import runpy, sys; sys.argv[0] = "rooflint"; runpy.run_module("rooflint", run_name="__main__")'
)


def measured(code: str, args: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of `python -c CODE ARGS` in a subprocess, its own
    high-water mark only."""
    with tempfile.NamedTemporaryFile(prefix="rooflint-hwm-") as hwm:
        command = [sys.executable, "-c", HIGH_WATER + code, *args]
        start = time.perf_counter()
        child = subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "ROOFLINT_BENCH_HWM": hwm.name},
        )
        wall = time.perf_counter() - start
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {child.stderr.decode()[-500:]}")
        return wall, int(Path(hwm.name).read_text()) * 1024


def cases(path: Path, formats: list[str], workdir: Path) -> list[tuple]:
    size = path.stat().st_size
    base_s, base_rss = measured(BASELINE, [str(path)])
    rows = [(path.name, "pyarrow parse", size, base_s, base_rss, 1.0, base_rss / size, 0)]
    for fmt in formats:
        out = workdir / f"out{SUFFIX[fmt]}"
        args = ["report", str(path), "--format", fmt, "-o", str(out), "--quiet"]
        wall, rss = measured(ROOFLINT, args)
        written = _size(out)
        rows.append((path.name, fmt, size, wall, rss, wall / base_s, rss / size, written))
        shutil.rmtree(out) if out.is_dir() else out.unlink(missing_ok=True)
    return rows


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def table(rows: list[tuple]) -> str:
    lines = [
        f"{'file':<18} {'output':<14} {'file MB':>8} {'time s':>7} {'x parse':>8} "
        f"{'RSS MB':>7} {'RSS/file':>9}  {'output MB':>9}"
    ]
    for name, fmt, size, wall, rss, ratio, per_file, written in rows:
        mark = "  OVER" if fmt != "pyarrow parse" and per_file > RSS_TARGET else ""
        lines.append(
            f"{name:<18} {fmt:<14} {size / 1e6:8.1f} {wall:7.2f} {ratio:7.2f}x "
            f"{rss / 1e6:7.0f} {per_file:8.2f}x  {written / 1e6:9.1f}{mark}"
        )
    return "\n".join(lines)


def run(files: list[Path], formats: list[str] = FORMATS) -> list[tuple]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="rooflint-formats-") as tmp:
        for path in files:
            rows += cases(path, formats, Path(tmp))
    return rows


def with_compiled_bytecode() -> None:
    """Let the runs measured here cache rooflint's compiled modules, as an installed copy has
    them. With PYTHONDONTWRITEBYTECODE set (as it is on the machines this project runs on) an
    editable install compiles its ~80 modules at every start: 0.16 s of each cold run."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def main(files: list[Path] | None = None) -> None:
    with_compiled_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args([] if files is not None else None)
    paths = files or args.files
    if not paths:
        sys.path.insert(0, str(HERE))
        import run as bench  # the files run.py generates

        bench.prepare(quick=True)  # RAW and DETAILS are among the quick inputs
        paths = [bench.RAW, bench.DETAILS]
    print(f"peak RSS and time per output format (target: RSS <= {RSS_TARGET:g}x the file)")
    print(table(run(paths, args.formats.split(","))))


if __name__ == "__main__":
    main()
