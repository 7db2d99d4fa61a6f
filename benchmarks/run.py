"""rooflint's timings as ratios to pyarrow's plain parse of the same files, measured in one run.

    python benchmarks/run.py            # generates benchmarks/data/ on first use (~40 s)

Machines are noisy, so every figure is a ratio of two timings taken in the same process, each the
fastest of a few interleaved repeats. Peak memory is measured in a fresh subprocess per case
(VmHWM after the work minus VmHWM once every module it uses is imported). Targets come from the issue
"Batch triage of whole-model traces"; a ratio over its target is marked.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

RAW = DATA / "raw-200k.csv"
DETAILS = DATA / "details-50k.csv"
MANY = DATA / "many-20x10k"
SMALL = HERE.parent / "fixtures" / "ncu" / "rtx2080ti-sgemm-raw-base.csv"


def prepare() -> None:
    generate.write("raw", 200_000, RAW, kernel_count=300, seed=1)
    generate.write("details", 50_000, DETAILS, kernel_count=300, seed=2)
    for i in range(20):
        generate.write("raw", 10_000, MANY / f"rank{i:02d}.csv", kernel_count=150, seed=100 + i)


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def paired(reference, subject, repeats: int) -> tuple[float, float]:
    """Fastest times of two functions measured alternately (so load swings hit both)."""
    ref, sub = [], []
    for _ in range(repeats):
        for fn, out in ((reference, ref), (subject, sub)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return min(ref), min(sub)


def plain(path: Path):
    return lambda: pacsv.read_csv(path)


def load(path: Path):
    import rooflint

    return lambda: rooflint.load(path)


def report_json(*paths: Path):
    from rooflint import pipeline
    from rooflint.reporters import json_report

    return lambda: json_report.render(pipeline.build([str(p) for p in paths]))


def report_table(*paths: Path):
    from rooflint import pipeline
    from rooflint.reporters import table

    return lambda: table.render(pipeline.build([str(p) for p in paths]))


PEAK = """
def high_water():  # VmHWM: this process's own peak (ru_maxrss would include the parent's at fork)
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
import numpy, pandas, pyarrow, pyarrow.compute, pyarrow.csv
from rooflint import hardware, parsers, pipeline
from rooflint.core import analysis, ranking, schema
from rooflint.parsers import ncu_csv
{imports}
base = high_water()
{work}
print((high_water() - base) * 1024)
"""


def peak_bytes(imports: str, work: str) -> int:
    code = PEAK.format(imports=imports, work=work)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(HERE)})
    return int(out.stdout.strip().splitlines()[-1])


def startup(repeats: int) -> tuple[float, float]:
    rooflint_cmd = [sys.executable, "-m", "rooflint", "report", str(SMALL), "--quiet"]
    pandas_cmd = [sys.executable, "-c", "import pandas"]
    return paired(lambda: subprocess.run(pandas_cmd, check=True, capture_output=True),
                  lambda: subprocess.run(rooflint_cmd, check=True, capture_output=True), repeats)


def row(rows, case, measure, ratio, target, detail=""):
    if target is None:
        rows.append((case, measure, f"{ratio:.2f}x", "(no target)", detail))
        return
    mark = "" if ratio <= target else "  OVER"
    rows.append((case, measure, f"{ratio:.2f}x", f"<= {target:g}x{mark}", detail))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    started = time.perf_counter()
    prepare()
    r = args.repeats
    rows: list[tuple] = []

    size = RAW.stat().st_size
    ref, sub = paired(plain(RAW), load(RAW), r)
    row(rows, "a 200k raw", "rooflint.load", sub / ref, 1.5, f"{sub:.2f} s vs plain parse {ref:.2f} s")
    ref2, sub = paired(plain(RAW), report_json(RAW), max(1, r - 1))
    row(rows, "a 200k raw", "report to JSON", sub / min(ref, ref2), 1.5, f"{sub:.2f} s")
    peak = peak_bytes("import rooflint", f"rooflint.load({str(RAW)!r})")
    row(rows, "a 200k raw", "load peak memory / file", peak / size, 3,
        f"{peak / 2**20:.0f} MiB for {size / 2**20:.0f} MiB")
    peak = peak_bytes("from rooflint import result\nfrom rooflint.reporters import json_report",
                      f"json_report.render(pipeline.build([{str(RAW)!r}]))")
    row(rows, "a 200k raw", "JSON report peak memory / file", peak / size, 3,
        f"{peak / 2**20:.0f} MiB (the JSON itself is ~4x the file)")

    size = DETAILS.stat().st_size
    ref, sub = paired(plain(DETAILS), load(DETAILS), max(1, r - 1))
    row(rows, "b 50k details", "rooflint.load", sub / ref, 1.5, f"{sub:.2f} s vs plain parse {ref:.2f} s")
    sub = best(report_json(DETAILS), 1)
    row(rows, "b 50k details", "report to JSON", sub / ref, 2, f"{sub:.2f} s")
    peak = peak_bytes("import rooflint", f"rooflint.load({str(DETAILS)!r})")
    row(rows, "b 50k details", "load peak memory / file", peak / size, 3,
        f"{peak / 2**20:.0f} MiB for {size / 2**20:.0f} MiB")

    files = sorted(MANY.glob("*.csv"))
    plains = lambda: [pacsv.read_csv(f) for f in files]  # noqa: E731
    ref, sub = paired(plains, report_table(MANY), r)
    row(rows, "c 20 x 10k raw", "report (table) of the folder in one call", sub / ref, 1.5,
        f"{sub:.2f} s vs sum of plain parses {ref:.2f} s")

    ref, sub = startup(5)
    row(rows, "d start-up", "report small file (table) vs import pandas", sub / ref, None,
        f"{sub * 1000:.0f} ms vs {ref * 1000:.0f} ms")

    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"load average {os.getloadavg()[0]:.1f}")
    width = [max(len(str(x[i])) for x in rows) for i in range(5)]
    print(f"rooflint benchmarks ({machine}); ratios to pyarrow.csv.read_csv of the same file(s)")
    for line in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, width, strict=True)).rstrip())
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n")
    __import__("formats").main([RAW, DETAILS])  # peak RSS and time per output format


if __name__ == "__main__":
    main()
