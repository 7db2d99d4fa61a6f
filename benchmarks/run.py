"""rooflint's timings as ratios to pyarrow's plain parse of the same files, measured in one run.

    python benchmarks/run.py            # generates benchmarks/data/ on first use (a few minutes)
    python benchmarks/run.py --quick    # without the 1M-launch case and the locale variants
    python benchmarks/run.py --only "ncu folder 100x2k"   # one case (its name, or a prefix)

The inputs are shaped as users capture them (`ncu --csv ... > profile.csv` of a live run, see
generate.py --stdout): ==PROF== lines before the header and after the last row, application
prints among the rows. The plain parse is pyarrow.csv.read_csv of the same file, told where the
header is and skipping the lines that are not rows (so it parses what rooflint parses).

Machines are noisy, so every time figure is a ratio of two timings taken in the same process,
each the fastest of a few interleaved repeats, after interpreter start and imports. Peak memory
is measured in a fresh subprocess per case: the process's own VmHWM at the end, as a whole and
above its VmHWM once every module is imported, each divided by the input file's size
(decompressed size for gzip). Targets come from issue 14; a figure over its target is marked.
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

import formats  # noqa: E402
import generate  # noqa: E402
import trace_bench  # noqa: E402

RAW = DATA / "raw-200k-stdout.csv"
DETAILS = DATA / "details-50k-stdout.csv"
GZIP = DATA / "raw-200k-stdout.csv.gz"
LOCALE_CASES = {
    "raw 200k en_US": DATA / "raw-200k-stdout-en_US.csv",
    "raw 200k de_DE": DATA / "raw-200k-stdout-de_DE.csv",
    "details 50k de_DE": DATA / "details-50k-stdout-de_DE.csv",
}
MANY = DATA / "many-20x10k-stdout"
# Many small exports (issue 32): the per-file fixed cost, 100 files of 2k launches each.
FOLDER = DATA / "many-100x2k-stdout"
HUGE = DATA / "raw-1m-stdout.csv"
SMALL = HERE.parent / "fixtures" / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
# A real `ncu --csv > file` capture of 20 training steps on an H200 (1,280 launches, 3.3 MB
# unpacked, ==PROF== lines and the application's prints before the header): per-file costs.
REAL = HERE.parent / "fixtures" / "ncu" / "h200-train-raw-stdout.csv.gz"


def prepare(quick: bool) -> None:
    generate.write("raw", 200_000, RAW, kernel_count=300, seed=1, shape="stdout")
    generate.write("details", 50_000, DETAILS, kernel_count=300, seed=2, shape="stdout")
    generate.write("raw", 200_000, GZIP, kernel_count=300, seed=1, shape="stdout", compress=True)
    for i in range(20):
        generate.write(
            "raw", 10_000, MANY / f"rank{i:02d}.csv", kernel_count=150, seed=100 + i, shape="stdout"
        )
    for i in range(100):
        generate.write(
            "raw",
            2_000,
            FOLDER / f"rank{i:03d}.csv",
            kernel_count=150,
            seed=1000 + i,
            shape="stdout",
        )
    if quick:
        return
    for name, path in LOCALE_CASES.items():
        kind, _, locale = name.split()
        generate.write(
            kind,
            200_000 if kind == "raw" else 50_000,
            path,
            kernel_count=300,
            seed=1 if kind == "raw" else 2,
            shape="stdout",
            locale=locale,
        )
    generate.write("raw", 1_000_000, HUGE, kernel_count=300, seed=3, shape="stdout")


def paired(reference, subject, repeats: int) -> tuple[float, float]:
    """Fastest times of two functions measured alternately (so load swings hit both)."""
    ref, sub = [], []
    for _ in range(repeats):
        for fn, out in ((reference, ref), (subject, sub)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return min(ref), min(sub)


def _opened(path: Path):
    import gzip

    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def header_line(path: Path) -> int:
    """How many lines come before the CSV header (ncu's ==PROF== lines, application output)."""
    with _opened(path) as fh:
        for i, line in enumerate(fh):
            if line.startswith(b'"ID"'):
                return i
    raise ValueError(f"{path}: no header")


def plain(*paths: Path):
    """pyarrow's read_csv of each file: header located, lines that are not rows skipped."""
    skips = [header_line(p) for p in paths]
    parse = pacsv.ParseOptions(invalid_row_handler=lambda row: "skip")
    return lambda: [
        pacsv.read_csv(p, read_options=pacsv.ReadOptions(skip_rows=k), parse_options=parse)
        for p, k in zip(paths, skips, strict=True)
    ]


def report_table(*paths: Path, reduced: bool = False):
    """The table report of `paths` by the full path (pipeline.build), or, `reduced`, file by
    file as `rooflint report` makes a table (rooflint.reduced.build: the workers analyse)."""
    from rooflint import pipeline
    from rooflint import reduced as by_file
    from rooflint.reporters import table

    make = by_file.build if reduced else pipeline.build
    return as_the_command(lambda: table.render(make([str(p) for p in paths])))


def values_read(path: Path):
    """What every report pays before any analysis: the export's rows found, parsed by Arrow and
    their values made float64 (ncu_lines, ncu_table, RawPage.add): the floor under `timed`."""
    from rooflint.parsers import ncu_lines, ncu_table
    from rooflint.parsers.ncu_pages import RawPage

    def run():
        rows = ncu_lines.Rows(path).open()
        page = RawPage(str(path), None)
        ncu_table.parse(rows, rows.header, str(path), page.add, page.numbers)

    return as_the_command(run)


def as_the_command(fn):
    """`fn` under the Arrow allocator `rooflint report` sets (cli/memory.py); the plain parse
    it is compared with keeps pyarrow's default."""
    import pyarrow as pa

    from rooflint.cli import memory

    def run():
        default = pa.default_memory_pool()
        memory.return_freed_memory()
        try:
            return fn()
        finally:
            pa.set_memory_pool(default)

    return run


PEAK = """
def high_water():  # VmHWM: this process's own peak RSS
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
import rooflint.cli  # first, as the command: its Arrow allocator (cli/memory.py)
import numpy, pandas, pyarrow, pyarrow.compute, pyarrow.csv
from rooflint import hardware, parsers, pipeline
from rooflint.core import analysis, ranking, schema
from rooflint.reporters import table
base = high_water()
table.render(pipeline.build([{path!r}]))
print(high_water() * 1024, base * 1024)
"""


def peak_bytes(path: Path) -> tuple[int, int]:
    """(peak RSS of a process that reports `path` as a table, its peak once imports are done)."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK.format(path=str(path))],
        check=True,
        capture_output=True,
        text=True,
    )
    peak, base = (int(x) for x in out.stdout.strip().splitlines()[-1].split())
    return peak, base


def data_size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir())
    if path.suffix == ".gz":
        with _opened(path) as fh:
            return sum(len(block) for block in iter(lambda: fh.read(1 << 24), b""))
    return path.stat().st_size


class Table:
    def __init__(self):
        self.rows: list[tuple] = []

    def add(self, case, measure, value, target, detail=""):
        if target is None:
            self.rows.append((case, measure, f"{value:.2f}x", "", detail))
            return
        mark = "" if value <= target else "  OVER"
        self.rows.append((case, measure, f"{value:.2f}x", f"<= {target:g}x{mark}", detail))

    def timed(self, case, path: Path, target: float | None, repeats: int, files=None):
        ref, sub = paired(plain(*(files or [path])), report_table(path), repeats)
        self.add(
            case, "report (table) / plain parse", sub / ref, target, f"{sub:.2f} s vs {ref:.2f} s"
        )

    def reduced(self, case, path: Path, target: float | None, repeats: int, files: list[Path]):
        """A folder as the command reports it as a table: reduced file by file."""
        ref, sub = paired(plain(*files), report_table(path, reduced=True), repeats)
        detail = f"{sub:.2f} s vs {ref:.2f} s: rooflint report's path"
        self.add(case, "reduced (table) / plain parse", sub / ref, target, detail)

    def floor(self, case, path: Path, repeats: int):
        ref, sub = paired(plain(path), values_read(path), repeats)
        detail = f"{sub:.2f} s: rows, parse and float64 values, before any analysis"
        self.add(case, "values read / plain parse", sub / ref, None, detail)

    def memory(self, case, path: Path, target: float = 3):
        size = data_size(path)
        peak, base = peak_bytes(path)
        self.add(
            case,
            "peak RSS / file size",
            peak / size,
            target,
            f"{peak / 2**20:.0f} MiB whole process for {size / 2**20:.0f} MiB of CSV",
        )
        self.add(
            case,
            "peak RSS above imports / file size",
            (peak - base) / size,
            None,
            f"{(peak - base) / 2**20:.0f} MiB (imports {base / 2**20:.0f} MiB)",
        )


def huge(rows: Table) -> None:
    """The 1M-launch export: seconds, peak memory, and how often progress moved while reading."""
    code = (
        "import time\nimport rooflint.cli\nfrom rooflint import pipeline\n"
        "from rooflint.reporters import table\n"
        "seen = []\ndef tick(path, launches): pass\n"
        "tick.reading = lambda path, done, total: seen.append(done)\n"
        "start = time.perf_counter()\n"
        f"table.render(pipeline.build([{str(HUGE)!r}], progress=tick))\n"
        "took = time.perf_counter() - start\n"
        "hwm = next(int(l.split()[1]) for l in open('/proc/self/status')\n"
        "           if l.startswith('VmHWM'))\n"
        "print(took, hwm * 1024, len(seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    took, peak, updates = out.stdout.split()
    size = HUGE.stat().st_size
    rows.add(
        "f 1M raw stdout",
        "peak RSS / file size",
        int(peak) / size,
        3,
        f"{float(took):.1f} s, {int(peak) / 2**20:.0f} MiB for {size / 2**20:.0f} MiB, "
        f"progress moved {updates} times",
    )


def saved_report(rows: Table, repeats: int) -> None:
    """j: a saved JSON report of the 200k raw export read back (`rooflint diff` of two of them):
    time against json.load of the same file, and the diff's peak memory."""
    import json

    from rooflint import saved

    report = DATA / "raw-200k-stdout.json"
    if not report.exists():
        command = [sys.executable, "-m", "rooflint", "report", str(RAW), "-q", "-o", str(report)]
        subprocess.run([*command, "--format", "json"], check=True)
    ref, sub = paired(
        lambda: json.loads(report.read_bytes()), as_the_command(lambda: saved.load(report)), repeats
    )
    rows.add("j saved 200k report", "saved.load / json.load", sub / ref, None, f"{sub:.2f} s")
    code = (
        "import sys\nfrom rooflint.cli.main import main\n"
        "try:\n"
        f"    main(['diff', {str(report)!r}, {str(report)!r}])\n"
        "except SystemExit:\n    pass\n"
        "hwm = next(int(l.split()[1]) for l in open('/proc/self/status')\n"
        "           if l.startswith('VmHWM'))\n"
        "print(hwm * 1024, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    peak, size = int(out.stderr.split()[-1]), report.stat().st_size
    rows.add(
        "j saved 200k report",
        "diff of two: peak RSS / one file",
        peak / size,
        None,
        f"{peak / 2**20:.0f} MiB for 2 x {size / 2**20:.0f} MiB",
    )


PARQUET_PEAK = """
import sys, tempfile
from rooflint.cli.main import main
out = tempfile.mkdtemp() + "/out.parquet"
try:
    main(["report", {path!r}, "-q", "--format", "parquet", "-o", out])
except SystemExit:
    pass
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) * 1024)
"""


def folder(rows: Table, repeats: int) -> None:
    """The ncu folder of 100 exports of 2k launches (issue 32: <= 2x its summed plain parses;
    --format parquet peak RSS <= 3x the input), and the floor under it: the rows found, parsed
    and made float64 for each file, one after another (what no assembly can go below)."""
    files = sorted(FOLDER.glob("*.csv"))
    rows.timed("k ncu folder 100x2k", FOLDER, 2, repeats, files=files)
    rows.reduced("k ncu folder 100x2k", FOLDER, 2, repeats, files)
    ref, sub = paired(plain(*files), _each(values_read, files), repeats)
    rows.add(
        "k ncu folder 100x2k",
        "values read, file by file / plain parse",
        sub / ref,
        None,
        f"{sub:.2f} s: the floor of the per-file work, in one process",
    )
    size = data_size(FOLDER)
    out = subprocess.run(
        [sys.executable, "-c", PARQUET_PEAK.format(path=str(FOLDER))],
        check=True,
        capture_output=True,
        text=True,
    )
    peak = int(out.stdout.split()[-1])
    rows.add(
        "k ncu folder 100x2k",
        "--format parquet: peak RSS / input",
        peak / size,
        3,
        f"{peak / 2**20:.0f} MiB for {size / 2**20:.0f} MiB of CSV",
    )


def one_small(rows: Table, repeats: int) -> None:
    """One 2k-launch export of that folder: its fixed cost against its plain parse."""
    one = sorted(FOLDER.glob("*.csv"))[0]
    ref, sub = paired(plain(one), report_table(one), max(7, repeats))
    detail = f"{sub * 1000:.1f} ms vs {ref * 1000:.1f} ms; {(sub - ref) * 1000:.1f} ms fixed"
    rows.add("l one 2k raw stdout", "report (table) / plain parse", sub / ref, None, detail)


def _each(make, files):
    runs = [make(path) for path in files]
    return lambda: [run() for run in runs]


def cases(rows: Table, r: int, quick: bool) -> dict:
    """Every case by name, in the order they run; each adds its rows to `rows`."""
    files = sorted(MANY.glob("*.csv"))
    out = {
        "a 200k raw stdout": lambda: (
            rows.timed("a 200k raw stdout", RAW, 1.5, r),
            rows.floor("a 200k raw stdout", RAW, r),
            rows.memory("a 200k raw stdout", RAW),
        ),
        "b 50k details stdout": lambda: (
            rows.timed("b 50k details stdout", DETAILS, 2, max(1, r - 1)),
            rows.memory("b 50k details stdout", DETAILS),
        ),
        "c 200k raw stdout gzip": lambda: (
            rows.timed("c 200k raw stdout gzip", GZIP, 3, r),
            rows.memory("c 200k raw stdout gzip", GZIP),
        ),
    }
    if not quick:
        for name, path in LOCALE_CASES.items():
            out[f"d {name} stdout"] = lambda name=name, path=path: (
                rows.timed(f"d {name} stdout", path, 3, max(1, r - 1)),
                rows.memory(f"d {name} stdout", path),
            )
    out["e 20 x 10k raw stdout"] = lambda: (
        rows.timed("e 20 x 10k raw stdout", MANY, 1.5, r, files=files),
        rows.reduced("e 20 x 10k raw stdout", MANY, 1.5, r, files),
        rows.memory(
            "e 20 x 10k raw stdout", MANY
        ),  # the parent: the pool's workers hold a file each
    )
    out["k ncu folder 100x2k"] = lambda: folder(rows, r)
    out["l one 2k raw stdout"] = lambda: one_small(rows, r)
    if not quick:
        out["f 1M raw stdout"] = lambda: huge(rows)
    out["i real H200 export gzip"] = lambda: rows.timed(
        "i real H200 export gzip", REAL, None, max(5, r)
    )  # issue 14 sets no target
    out["h traces"] = lambda: trace_bench.rows(rows, DATA, max(1, r - 1), paired, big=not quick)
    out["j saved 200k report"] = lambda: saved_report(rows, max(1, r - 1))
    out["g start-up"] = lambda: start_up(rows)
    out["m folder memory"] = lambda: folder_memory(rows, with_dask=not quick)
    return out


def folder_memory(rows: Table, with_dask: bool) -> None:
    """m: 32 synthetic traces of ~48 MB in one folder (folder_memory.py): the parent's peak RSS
    reporting 4-32 of them, reduced file by file against the full path; with Dask, 32 traces
    on a LocalCluster(2) against the local run."""
    import folder_memory as folders

    found = folders.memory()
    for count, full, part in found["rows"]:
        rows.add(
            "m folder memory",
            f"{count} traces: parent peak / (2 x file + 200 MB)",
            part / found["target"],
            1,
            f"{part / 2**20:.0f} MiB (full path {full / 2**20:.0f} MiB: {part / full:.2f}x)",
        )
    if with_dask:
        local, remote, same = folders.dask()
        rows.add(
            "m folder memory",
            "Dask LocalCluster(2), 32 traces / local",
            remote / local,
            1.2,
            f"{remote:.1f} s vs {local:.1f} s; same bytes: {same}",
        )


def start_up(rows: Table) -> None:
    plain_start = [sys.executable, "-c", "import pandas"]
    ref, sub = paired(
        lambda: subprocess.run(plain_start, check=True, capture_output=True),
        lambda: subprocess.run(
            [sys.executable, "-m", "rooflint", "report", str(SMALL), "--quiet"],
            check=True,
            capture_output=True,
        ),
        5,
    )
    rows.add(
        "g start-up",
        "report small file vs import pandas",
        sub / ref,
        None,
        f"{sub * 1000:.0f} ms vs {ref * 1000:.0f} ms",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="skip the locale variants and 1M launches"
    )
    parser.add_argument("--only", metavar="NAME", help="run the one case NAME (or a prefix: 'k')")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    formats.with_compiled_bytecode()
    started = time.perf_counter()
    prepare(args.quick)
    rows = Table()
    every = cases(rows, args.repeats, args.quick)
    chosen = [n for n in every if args.only is None or n == args.only or n.startswith(args.only)]
    if not chosen:
        parser.error(f"no case {args.only!r}; the cases: {', '.join(every)}")
    for name in chosen:
        every[name]()
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    width = [max(len(str(x[i])) for x in rows.rows) for i in range(5)]
    print(f"rooflint benchmarks ({machine}); ratios to pyarrow.csv.read_csv of the same file(s)")
    for line in rows.rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, width, strict=True)).rstrip())
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"machine": machine, "rows": rows.rows}, indent=1) + "\n"
        )
    if args.only is None:
        formats.main([RAW, DETAILS])  # peak RSS and time per output format


if __name__ == "__main__":
    main()
