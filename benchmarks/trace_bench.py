"""The PyTorch trace cases of benchmarks/run.py (issue 32): `rooflint report` of a synthetic Kineto
trace of 150 MB and of 1 GB (generate_trace.py, written once into benchmarks/data/) against
orjson.loads of the same file with the garbage collector off, and its peak memory.

    python benchmarks/trace_bench.py [--big] [--repeats N]

Each time is the fastest of a few interleaved repeats (the 1 GB case: one), both sides reading
the file from disk. Rows: the report (trace read, analysed, table rendered) / orjson.loads; the
events alone (kineto._events: streamed, decoded, gathered into columns) / orjson.loads, the floor
under the report; and peak RSS of a fresh process running the report / the file's size.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
from pathlib import Path

import generate_trace
import orjson

HERE = Path(__file__).resolve().parent
CASES = {"150 MB": (150, "trace-150mb.json"), "1 GB": (1000, "trace-1gb.json")}
TARGETS = {"150 MB": (1.0, None), "1 GB": (1.0, 1.5)}  # time, peak RSS / file (issue 32)
PEAK = """
import sys
from rooflint import pipeline
from rooflint.reporters import table
def high_water():  # VmHWM: this process's own peak RSS
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
table.render(pipeline.build([sys.argv[1]]))
print(high_water() * 1024)
"""


def reference(path: Path):
    """orjson.loads of the file's bytes, the garbage collector off."""

    def run():
        gc.disable()
        try:
            return orjson.loads(path.read_bytes())
        finally:
            gc.enable()

    return run


def report(path: Path):
    from rooflint import pipeline
    from rooflint.reporters import table

    return lambda: table.render(pipeline.build([str(path)]))


def events(path: Path):
    from rooflint.parsers import kineto

    def run():
        with kineto._no_gc():
            return kineto._events(str(path))

    return run


def timed(fn) -> float:
    start = time.perf_counter()
    out = fn()
    took = time.perf_counter() - start
    del out
    return took


def paired(ref, subjects: list, repeats: int) -> list[float]:
    """Fastest times of `ref` and each subject, measured alternately (load swings hit all)."""
    best = [float("inf")] * (1 + len(subjects))
    for _ in range(repeats):
        for i, fn in enumerate([ref, *subjects]):
            best[i] = min(best[i], timed(fn))
    return best


def rows(table, data: Path, repeats: int, paired_=None, big: bool = False) -> None:
    """Adds the trace rows to `table` (run.py's Table: add(case, measure, value, target,
    detail)); the 1 GB case only when `big`."""
    for case, (megabytes, name) in CASES.items():
        if case == "1 GB" and not big:
            continue
        trace = data / name
        if not trace.exists():
            generate_trace.write(megabytes, trace)
        size = trace.stat().st_size
        n = repeats if case == "150 MB" else 1
        ref, sub, floor = paired(reference(trace), [report(trace), events(trace)], n)
        time_target, rss_target = TARGETS[case]
        detail = f"{sub:.2f} s vs orjson.loads {ref:.2f} s"
        table.add(f"h {case} trace", "report / orjson.loads", sub / ref, time_target, detail)
        detail = f"{floor:.2f} s: streamed, decoded, gathered into columns"
        table.add(f"h {case} trace", "events alone / orjson.loads", floor / ref, None, detail)
        out = subprocess.run(
            [sys.executable, "-c", PEAK, str(trace)], check=True, capture_output=True, text=True
        )
        peak = int(out.stdout.split()[-1])
        detail = f"{peak / 2**20:.0f} MiB whole process for {size / 2**20:.0f} MiB of JSON"
        table.add(f"h {case} trace", "peak RSS / file size", peak / size, rss_target, detail)


class Printed:
    def add(self, case, measure, value, target, detail=""):
        bound = "" if target is None else f"<= {target:g}x" + ("  OVER" if value > target else "")
        print(f"{case:16} {measure:30} {value:5.2f}x  {bound:14} {detail}", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="the 1 GB case too")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows(Printed(), HERE / "data", args.repeats, big=args.big)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
