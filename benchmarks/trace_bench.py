"""The PyTorch trace case of benchmarks/run.py: rooflint.load of a 150 MB synthetic Kineto trace
against the standard library's json.load of the same file, and its peak memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import generate_trace

PEAK = """
import rooflint
def high_water():  # VmHWM: this process's own peak RSS
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
base = high_water()
rooflint.load({path!r})
print(high_water() * 1024, base * 1024)
"""


def rows(table, data: Path, repeats: int, paired) -> None:
    """Adds the trace rows (time vs json.load <= 1.5x, peak RSS <= 4x the file) to `table`;
    `paired` is run.py's interleaved best-of timing."""
    import rooflint

    trace = data / "trace-150mb.json"
    if not trace.exists():
        generate_trace.write(150, trace)
    size = trace.stat().st_size
    ref, sub = paired(
        lambda: json.load(open(trace, encoding="utf-8")), lambda: rooflint.load(str(trace)), repeats
    )
    table.add(
        "h 150 MB trace",
        "rooflint.load / json.load",
        sub / ref,
        1.5,
        f"{sub:.2f} s vs json.load {ref:.2f} s",
    )
    out = subprocess.run(
        [sys.executable, "-c", PEAK.format(path=str(trace))],
        check=True,
        capture_output=True,
        text=True,
    )
    peak, base = (int(x) for x in out.stdout.split())
    table.add(
        "h 150 MB trace",
        "peak RSS / file size",
        peak / size,
        4,
        f"{peak / 2**20:.0f} MiB whole process for {size / 2**20:.0f} MiB of JSON",
    )
