"""ncu's speed-of-light percentages, for exports without DRAM byte or FLOP counters.

ncu's default sections carry the duration, the clocks and ncu's own percentages of peak, but no
`dram__bytes` and no FLOP counters. These are read, as fractions of peak, only where an export
lacks one of those counters (they stand in for it; core.analysis says how):

- DRAM throughput: `gpu__dram_throughput` (or `dram__throughput`) `.avg.pct_of_peak_sustained_
  elapsed`, "DRAM Throughput" on a details page;
- SM throughput: `sm__throughput.avg.pct_of_peak_sustained_elapsed`, "Compute (SM) Throughput";
- the busiest SM pipe: the largest `sm__pipe_<pipe>_cycles_active` or `sm__inst_executed_pipe_
  <pipe>` `.avg.pct_of_peak_sustained_elapsed` ("SM: Pipe Fma Cycles Active", "SM: Inst Executed
  Pipe Lsu" in a details page's Compute Throughput Breakdown), and which pipe it is. Elapsed, not
  active, cycles: a kernel that keeps a few SMs busy is not using the GPU's pipes. A pipe's
  sub-pipes (`tensor_subpipe_hmma`, `fma_type_fp16`) are parts of a pipe already counted.
"""

from __future__ import annotations

import re

import numpy as np

from rooflint.core import schema

PCT = ".avg.pct_of_peak_sustained_elapsed"
DRAM = ("gpu__dram_throughput" + PCT, "dram__throughput" + PCT)
SM = "sm__throughput" + PCT
_PIPE = re.compile(r"^sm__(?:pipe_(\w+?)_cycles_active|inst_executed_pipe_(\w+))" + re.escape(PCT))
# A details page labels each pipe by its metric's words (the Compute Throughput Breakdown of
# rtx2080ti-sgemm-details-all.csv and its metric-name twin): a rule, as the pipes vary by GPU.
_PIPE_LABEL = re.compile(r"^SM: (Pipe \w+ Cycles Active|Inst Executed Pipe [\w ]+)$")


def metric_of(label: str) -> str | None:
    """The pipe metric a details page's label stands for ("SM: Pipe Fp64 Cycles Active" ->
    sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed), None if not a pipe's."""
    if _PIPE_LABEL.match(label):
        return "sm__" + label.removeprefix("SM: ").lower().replace(" ", "_") + PCT
    return None


def wanted(name: str) -> bool:
    return name in DRAM or name == SM or _pipe(name) is not None


def _pipe(name: str) -> str | None:
    m = _PIPE.match(name)
    pipe = m and (m.group(1) or m.group(2))
    return pipe if pipe and "subpipe" not in pipe and "_type_" not in pipe else None


def columns(wide) -> dict:
    """{column: values} of schema.SOL_COLUMNS, fractions of peak (NaN where not given); the
    busiest pipe by name (ties: the first of the cycles-active metrics, then by name)."""
    out = {
        "dram_throughput": _first([_fraction(wide, name) for name in DRAM]),
        "sm_throughput": _fraction(wide, SM),
    }
    pipes = sorted((n for n in wide.columns if _pipe(n)), key=lambda n: ("inst" in n, n))
    if not pipes:
        out["pipe_utilisation"] = np.full(len(wide), np.nan)
        out["pipe"] = schema.repeated(None, len(wide))
        return out
    shares = np.vstack([_fraction(wide, name) for name in pipes])
    none = np.isnan(shares).all(axis=0)
    busiest = np.argmax(np.nan_to_num(shares, nan=-1.0), axis=0)
    out["pipe_utilisation"] = np.where(none, np.nan, shares[busiest, np.arange(len(wide))])
    labels = [str(_pipe(name)) for name in pipes]
    out["pipe"] = schema.strings(np.where(none, -1, busiest), labels)
    return out


def _fraction(wide, name: str) -> np.ndarray:
    if name not in wide:
        return np.full(len(wide), np.nan)
    return wide[name] / 100.0  # a float64 array (ncu_metrics.Wide)


def _first(candidates: list[np.ndarray]) -> np.ndarray:
    values = candidates[0]
    for other in candidates[1:]:
        values = np.where(np.isnan(values), other, values)
    return values
