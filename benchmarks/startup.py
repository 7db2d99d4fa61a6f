"""Start-up of the commands that read no profile, as ratios to `python -c "import click"` (the
interpreter's own start plus click's import: the floor for any click program), measured in one run.

    python benchmarks/startup.py            # 15 interleaved repeats, the fastest of each
    python benchmarks/startup.py --repeats 5
    python benchmarks/startup.py --no-index  # the catalog parsed on every start

Every figure is the fastest wall time of a fresh interpreter running the command, over repeats
taken in turn with the baseline's (so a machine's load shifts both alike), divided by the
baseline's fastest; beside it the same for the CPU time the process used (user + system), which a
loaded machine (other processes taking turns on the cores) shifts far less than the wall time.
Target (issue 31): at most 1.5x. `python -c "import pandas"` is shown for
scale: what every command paid before.

Every case runs with compiled bytecode, as an installed package has it: the runs share a fresh
`PYTHONPYCACHEPREFIX` folder (with PYTHONDONTWRITEBYTECODE unset) and each case runs once before
the timed repeats. Without it an editable checkout compiles rooflint's modules on every start
while click's come compiled from their wheel, and the ratios measure the compiler. The catalog's
parsed index (hardware/tomlfiles.py) goes to a fresh `ROOFLINT_CACHE_DIR` the first run fills, as
a user's first `rooflint devices` does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
ROOFLINT = "import sys; from rooflint.cli import main; sys.argv[0] = 'rooflint'; main()"
# Every command that reads no profile: the ones tests/test_startup.py runs (it checks that they
# are these) and checks for pandas.
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "devices": ["devices"],
    "devices --format json": ["devices", "--format", "json"],
    "devices show": ["devices", "show", "a100-pcie-40gb"],
    "bound gemm": "bound gemm --m 4096 --n 4096 --k 4096 --device h100-sxm".split(),
    "bound elementwise": (
        "bound elementwise --n 1000000 --device-file hardware/devices/a10.toml".split()
    ),
    "bound reduction": "bound reduction --n 1000000 --device mi300x --format json".split(),
    "metrics ncu": ["metrics", "ncu"],
    "metrics rocprof": ["metrics", "rocprof"],
    "report --help": ["report", "--help"],
    "diff --help": ["diff", "--help"],
    "plot --help": ["plot", "--help"],
}


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of one run of `argv`."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _environment(folder: str, index: bool) -> dict[str, str]:
    """This environment with bytecode written to and read from `folder`, and the catalog's index
    there too (or none)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "bytecode")
    env["ROOFLINT_CACHE_DIR"] = os.path.join(folder, "cache") if index else ""
    return env


def measure(repeats: int, index: bool = True) -> dict[str, tuple[float, float]]:
    """The fastest wall and CPU time of each case (they may come from different repeats)."""
    cases = {
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
        **{
            f"rooflint {name}": [sys.executable, "-c", ROOFLINT, *args]
            for name, args in COMMANDS.items()
        },
    }
    best = dict.fromkeys(cases, (float("inf"), float("inf")))
    with tempfile.TemporaryDirectory() as folder:
        env = _environment(folder, index)
        for argv in cases.values():  # compiles each module once, fills the catalog's index
            _timed(argv, env)
        for _ in range(repeats):
            for name, argv in cases.items():  # interleaved: load shifts every case alike
                wall, cpu = _timed(argv, env)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-index", action="store_true", help="parse the catalog every start")
    args = parser.parse_args()
    best = measure(args.repeats, index=not args.no_index)
    base_wall, base_cpu = best["python -c 'import click'"]
    index = "no catalog index" if args.no_index else "catalog index"
    print(
        f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, fastest of {args.repeats}, "
        f"{index}"
    )
    print(f"{'case':34} {'wall ms':>8} {'ratio':>7} {'CPU ms':>8} {'ratio':>7}")
    for name, (wall, cpu) in best.items():
        ratios = (wall / base_wall, cpu / base_cpu)
        over = name.startswith("rooflint") and min(ratios) > TARGET
        flag = "  over target" if over else ""
        times = f"{wall * 1e3:8.1f} {ratios[0]:6.2f}x {cpu * 1e3:8.1f} {ratios[1]:6.2f}x"
        print(f"{name:34} {times}{flag}")


if __name__ == "__main__":
    main()
