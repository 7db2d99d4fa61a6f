"""Per-launch facts an ncu export carries beside its counters, for the advice (core/advice.py).

Kept as the launch-table columns of `schema.LAUNCH_FACT_COLUMNS`, only where the export has them
(ncu's Launch Statistics, Occupancy, Speed Of Light, Warp State and Source Counters sections, or
their raw metrics). Labels and metric names are the pairs of the same 2080 Ti report exported both
ways (../shared/fixtures/ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details-all.csv and
...-all-names-base.csv):

- occupancy: `sm__warps_active.avg.pct_of_peak_sustained_active` ("Achieved Occupancy"),
  `sm__maximum_warps_per_active_cycle_pct` ("Theoretical Occupancy"), and the blocks per SM each
  resource allows, `launch__occupancy_limit_{registers,shared_mem,warps,blocks}` ("Block Limit
  Registers", ... "Block Limit SM"): the smallest is the limiter;
- `launch__waves_per_multiprocessor` ("Waves Per SM"), `launch__registers_per_thread`;
- L1 and L2 throughput, % of peak: `l1tex__throughput.avg.pct_of_peak_sustained_active` ("L1/TEX
  Cache Throughput"; the `_elapsed` twin where only it was collected),
  `lts__throughput.avg.pct_of_peak_sustained_elapsed` ("L2 Cache Throughput");
- the top warp stall: the largest `smsp__pcsamp_warps_issue_stalled_<reason>` sample count (PC
  sampling, "Warp Stall Sampling (All Cycles)"), else the largest
  `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio` ("Stall Long Scoreboard":
  warp cycles per issued instruction); its share is of the sum over every reason. "selected" (the
  warp issued) counts in the sum but is no stall, so it is never the top one.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from rooflint.core import gemm_shape, schema
from rooflint.core.advice_records import LIMITERS, OCCUPANCY_RESOURCES

ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
WAVES = "launch__waves_per_multiprocessor"
REGISTERS = "launch__registers_per_thread"
L1 = (
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
)
L2 = ("lts__throughput.avg.pct_of_peak_sustained_elapsed",)
# The metric of each resource's block limit (core.advice_records.OCCUPANCY_RESOURCES).
LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "blocks": "launch__occupancy_limit_blocks",
}
_SAMPLES = re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+?)$")
_RATIOS = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
NOT_A_STALL = "selected"

LABELS = {
    "Achieved Occupancy": ACHIEVED,
    "Theoretical Occupancy": THEORETICAL,
    "Waves Per SM": WAVES,
    "Registers Per Thread": REGISTERS,
    "L1/TEX Cache Throughput": L1[0],
    "L2 Cache Throughput": L2[0],
    "Block Limit Registers": LIMITS["registers"],
    "Block Limit Shared Mem": LIMITS["shared memory"],
    "Block Limit Warps": LIMITS["warps"],
    "Block Limit SM": LIMITS["blocks"],
}
# The Source Counters section's short labels of the same PC samples (the 2080 Ti pair above).
SAMPLE_LABELS = {
    f"stall_{short}": f"smsp__pcsamp_warps_issue_stalled_{reason}"
    for short, reason in {
        "barrier": "barrier",
        "branch_resolving": "branch_resolving",
        "dispatch": "dispatch_stall",
        "drain": "drain",
        "imc": "imc_miss",
        "lg": "lg_throttle",
        "long_sb": "long_scoreboard",
        "math": "math_pipe_throttle",
        "membar": "membar",
        "mio": "mio_throttle",
        "misc": "misc",
        "no_inst": "no_instructions",
        "not_selected": "not_selected",
        "selected": "selected",
        "short_sb": "short_scoreboard",
        "sleep": "sleeping",
        "tex": "tex_throttle",
        "wait": "wait",
    }.items()
}
_SAMPLED_LABEL = re.compile(r"^Warp Stall Sampling \(All Cycles\) \((smsp__pcsamp_\w+)\)$")
_STALL_LABEL = re.compile(r"^Stall ([A-Za-z ]+)$")
_NAMES = {ACHIEVED, THEORETICAL, WAVES, REGISTERS, *L1, *L2, *LIMITS.values()}


def metric_of(label: str) -> str | None:
    """The metric a details page's label stands for, None if not one of these facts'."""
    if label in LABELS or label in SAMPLE_LABELS:
        return LABELS.get(label) or SAMPLE_LABELS[label]
    sampled = _SAMPLED_LABEL.match(label)
    if sampled:
        return sampled.group(1)
    stall = _STALL_LABEL.match(label)
    if stall:
        reason = stall.group(1).lower().replace(" ", "_")
        return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
    if label == "Selected":  # the warp issued: counted in the total, never a stall
        return "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"
    return None


def wanted(name: str) -> bool:
    return name in _NAMES or _stall(name) is not None


def _stall(name: str) -> str | None:
    m = _SAMPLES.match(name) or _RATIOS.match(name)
    return m.group(1) if m and not m.group(1).endswith("_not_issued") else None


def columns(wide) -> dict:
    """{column: values} of the facts the frame has (none: {}), fractions for percentages."""
    if not any(wanted(name) for name in wide.columns):
        return {}  # not one of the facts' metrics: each would be NA (0.7 ms to find so)
    out = {
        "occupancy_achieved": _pct(wide, (ACHIEVED,)),
        "occupancy_theoretical": _pct(wide, (THEORETICAL,)),
        "waves": _col(wide, WAVES),
        "registers_per_thread": _col(wide, REGISTERS),
        "l1_throughput": _pct(wide, L1),
        "l2_throughput": _pct(wide, L2),
    }
    out.update(_limiter(wide))
    out.update(_top_stall(wide))
    if all(_empty(v) for v in out.values()):
        return {}
    return {c: out[c] for c in schema.LAUNCH_FACT_COLUMNS}


def _empty(values) -> bool:
    if isinstance(values, pd.Categorical):
        return bool((values.codes < 0).all())
    return bool(np.isnan(values).all())


def _col(wide, name: str) -> np.ndarray:
    """A metric's values (a ncu_metrics.Wide's array, or a frame's column), NaN where absent."""
    if name not in wide:
        return np.full(len(wide), np.nan)
    values = wide[name]
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype="float64", na_value=np.nan)
    return np.asarray(values, dtype="float64")


def _pct(wide, names: tuple[str, ...]) -> np.ndarray:
    values = _col(wide, names[0])
    for other in names[1:]:
        values = np.where(np.isnan(values), _col(wide, other), values)
    return values / 100.0


def _limiter(wide) -> dict:
    """The resources that allow the fewest blocks per SM (all of them where several tie), how
    many they allow, and how many the next tighter limit allows; NA where the export has no
    block limits."""
    limits = np.vstack([_col(wide, LIMITS[r]) for r in OCCUPANCY_RESOURCES])
    none = np.isnan(limits).all(axis=0)
    filled = np.nan_to_num(limits, nan=np.inf)
    least = filled.min(axis=0)
    tied = (filled == least) & ~none  # each launch's tied resources as one bit each
    bits = (tied * (1 << np.arange(len(OCCUPANCY_RESOURCES)))[:, None]).sum(axis=0)
    above = np.where(filled > least, filled, np.inf).min(axis=0)
    return {
        "occupancy_limiter": schema.strings(_LIMITER_OF_BITS[bits], list(LIMITERS)),
        "occupancy_limit_blocks": np.where(none, np.nan, least),
        "occupancy_limit_next": np.where(none | ~np.isfinite(above), np.nan, above),
    }


# The code in LIMITERS of each set of tied resources written as bits (bit i: resource i), -1 for
# none.
_LIMITER_OF_BITS = np.array(
    [-1]
    + [
        list(LIMITERS).index(
            " and ".join(r for i, r in enumerate(OCCUPANCY_RESOURCES) if bits >> i & 1)
        )
        for bits in range(1, 1 << len(OCCUPANCY_RESOURCES))
    ]
)


def _top_stall(wide) -> dict:
    """The largest stall reason by PC samples, else by warp-state cycles, and its share."""
    for pattern in (_SAMPLES, _RATIOS):
        names = sorted(c for c in wide.columns if pattern.match(c) and _stall(c))
        if names:
            return _largest(wide, names)
    n = len(wide)
    return {"stall_top": schema.strings(np.full(n, -1), []), "stall_share": np.full(n, np.nan)}


def _largest(wide, names: list[str]) -> dict:
    reasons = [str(_stall(name)) for name in names]
    values = np.vstack([_col(wide, name) for name in names])
    total = np.nansum(values, axis=0)
    stalls = np.where(np.array([r == NOT_A_STALL for r in reasons])[:, None], np.nan, values)
    none = np.isnan(stalls).all(axis=0) | ~(total > 0)
    top = np.argmax(np.nan_to_num(stalls, nan=-1.0), axis=0)
    share = np.where(
        none, np.nan, stalls[top, np.arange(len(wide))] / np.where(total > 0, total, np.nan)
    )
    return {"stall_top": schema.strings(np.where(none, -1, top), reasons), "stall_share": share}


GEMM_NOTE = (
    "minimum DRAM bytes of {n} CUTLASS GEMM launch(es) from M, N (grid × threadblock tile), K "
    "(tensor ops / 2·M·N) and the element types in the kernel name: A and B read once, C "
    "written once"
)


def gemm_minimum(table: pd.DataFrame, notes: list[str]) -> None:
    """`bytes_model_min` and `excess_traffic` for the CUTLASS GEMM launches of an ncu table
    (core.gemm_shape): the tile and element types worked out once per distinct kernel and grid,
    K per launch from its operations; the columns only where some launch is one."""
    kernels = table["kernel"]
    names = kernels.cat.categories if isinstance(kernels.dtype, pd.CategoricalDtype) else kernels
    if not any(gemm_shape.named_cutlass(name) for name in pd.unique(np.asarray(names, object))):
        return  # no CUTLASS GEMM among the distinct names: nothing per launch to work out
    pairs, distinct = pd.factorize(
        pd.MultiIndex.from_arrays([table["kernel"].astype(object), table["grid"].astype(object)])
    )
    tiles = [gemm_shape.cutlass_tile(name, grid) for name, grid in distinct]
    if all(t is None for t in tiles):
        return
    shape = np.array([t if t else (np.nan,) * 5 for t in tiles], dtype=float)[pairs]
    m, n, a, b, c = shape.T
    matrix = schema.total_ops(table, [c for c in schema.MATRIX_OPS if c != "ops_matrix_int8"])
    ops = matrix.where(matrix > 0, schema.flops(table)).to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.round(ops / (2.0 * m * n))
        k = np.where(k > 0, k, np.nan)
        minimum = m * k * a + k * n * b + m * n * c
    if np.isnan(minimum).all():
        return
    table["bytes_model_min"] = minimum
    table["excess_traffic"] = table["bytes_dram"].to_numpy(dtype=float) / minimum
    notes.append(GEMM_NOTE.format(n=int((~np.isnan(minimum)).sum())))
