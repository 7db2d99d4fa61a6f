"""Start-up of the commands that read no profile, as ratios to `python -c "import click"` (the
interpreter's own start plus click's import: the floor for any click program), measured in one run.

    python benchmarks/startup.py            # 15 interleaved repeats, the fastest of each
    python benchmarks/startup.py --repeats 5

Every figure is the fastest wall time of a fresh interpreter running the command, over repeats
taken in turn with the baseline's (so a machine's load shifts both alike), divided by the
baseline's fastest. Target (issue 31): at most 1.5x. `python -c "import pandas"` is shown for
scale: what every command paid before.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
ROOFLINT = "import sys; from rooflint.cli import main; sys.argv[0] = 'rooflint'; main()"
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "devices": ["devices"],
    "devices show": ["devices", "show", "a100-pcie-40gb"],
    "bound gemm": [
        "bound",
        "gemm",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--device",
        "h100-sxm",
    ],
    "metrics ncu": ["metrics", "ncu"],
}


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def measure(repeats: int) -> dict[str, float]:
    cases = {
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
        **{
            f"rooflint {name}": [sys.executable, "-c", ROOFLINT, *args]
            for name, args in COMMANDS.items()
        },
    }
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeats):
        for name, argv in cases.items():  # interleaved: load shifts every case alike
            best[name] = min(best[name], _timed(argv))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    best = measure(args.repeats)
    base = best["python -c 'import click'"]
    print(f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, fastest of {args.repeats}")
    print(f"{'case':34} {'ms':>8} {'ratio':>7}")
    for name, seconds in best.items():
        ratio = seconds / base
        flag = "  over target" if name.startswith("rooflint") and ratio > TARGET else ""
        print(f"{name:34} {seconds * 1e3:8.1f} {ratio:6.2f}x{flag}")


if __name__ == "__main__":
    main()
