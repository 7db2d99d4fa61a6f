"""Nsight Compute metrics to canonical quantities; shared by the CSV and .ncu-rep readers.

Input is a "wide" frame: one row per launch, one float column per raw metric name, values
already in SI base units (seconds, bytes, Hz, counts). Output is the canonical columns.

Conventions (why, not what):
- FLOPs per precision = add + mul + 2 x fma thread instructions (predicated on), as Nsight
  Compute's own roofline sections count them. Half precision follows the same rule: an HFMA2
  (packed pair) counts as one fma instruction, so packed half math is counted per instruction,
  like ncu's chart does; this may under-count packed kernels by up to 2x, and we say so.
- Tensor ops come from `sm__ops_path_tensor_src_<type>...` which already count operations, two
  per multiply-add (no multiplier; 2*M*N*K exactly for cuBLAS products on an H200, see
  benchmarks/tensor_ops/). Only when those are absent do we estimate from
  `sm__inst_executed_pipe_tensor` x K, where K = 2*m*n*k of the MMA instruction shape, and we
  say so per launch.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from rooflint.core import schema

from . import ncu_launch, ncu_sol

DURATION = "gpu__time_duration.sum"
# Launch dimensions, for pages without "Grid Size"/"Block Size" columns (raw pages of ncu 2022.3,
# details pages before 2022): the x, y, z metrics, else the launch__*_size totals.
LAUNCH_DIMS = {
    "grid": (tuple(f"launch__grid_dim_{a}" for a in "xyz"), "launch__grid_size"),
    "block": (tuple(f"launch__block_dim_{a}" for a in "xyz"), "launch__block_size"),
}
# The GPU's SM count: raw pages carry the device attribute, ncu 2023+ also the launch's own.
SM_COUNT = ("device__attribute_multiprocessor_count", "launch__sm_count")
SECTOR_BYTES = 32.0

# The one table of display names: how a details page printed with ncu's default metric names
# (`--print-metric-name label`) labels each metric rooflint reads. Metrics no section labels
# (dram__bytes_read.sum, the raw FLOP counts) keep their own name there. The pairs are those of
# the same 2080 Ti report exported both ways (../shared/fixtures/ncu/reexport-ncu2024.2/
# rtx2080ti-sgemm-details-all.csv and ...-all-names-base.csv); "# SMs" is the H200 details
# page's (unit SM, 132: launch__sm_count of the raw page of that product).
DISPLAY_NAMES = {
    "Duration": DURATION,
    "Grid Size": "launch__grid_size",
    "Block Size": "launch__block_size",
    "# SMs": "launch__sm_count",
    # SM clock: gpc__, sm__ and smsp__cycles_elapsed.avg.per_second, one clock, all so labelled
    "SM Frequency": "sm__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Memory Frequency": "dram__cycles_elapsed.avg.per_second",
    "L2 Cache Frequency": "lts__cycles_elapsed.avg.per_second",
    "L1/TEX Cache Frequency": "l1tex__cycles_elapsed.avg.per_second",
    # "Memory Throughput" is both a % (SOL) and a byte/s rate (memory workload); only the rate.
    "Memory Throughput": "dram__bytes.sum.per_second",
    "DRAM Bandwidth": "dram__bytes.sum.per_second",
    "L2 Cache Bandwidth": "lts__t_bytes.sum.per_second",
    "L1/TEX Cache Bandwidth": "l1tex__t_bytes.sum.per_second",
    # ncu's speed-of-light percentages (ncu_sol); its pipes' labels follow a rule there
    "DRAM Throughput": ncu_sol.DRAM[0],
    "Compute (SM) Throughput": ncu_sol.SM,
    "Compute (SM) [%]": ncu_sol.SM,  # the same, in the GPU Throughput chart's breakdown
    "Theoretical DRAM Bytes Accessible": "dram__bytes.sum.peak_sustained",
    "Theoretical L2 Cache Bytes Accessible": "lts__t_bytes.sum.peak_sustained",
    "Theoretical L1/TEX Cache Bytes Accessible": "l1tex__t_bytes.sum.peak_sustained",
    **{
        f"Theoretical Predicated-On {p.upper()}FMA Thread Instructions Executed": (
            f"sm__sass_thread_inst_executed_op_{p}fma_pred_on.sum.peak_sustained"
        )
        for p in ("d", "f")
    },
    **{
        f"Predicated-On {p.upper()}{op.upper()} Thread Instructions Executed Per Cycle": (
            f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum.per_cycle_elapsed"
        )
        for p in ("d", "f")
        for op in ("add", "mul", "fma")
    },
}

_PRECISIONS = {"d": "fp64", "f": "fp32", "h": "fp16"}
_UNITS = ("sm", "smsp")
_TENSOR_SRC = re.compile(
    r"^sm__ops_path_tensor_src_([a-z0-9]+?)(?:_dst_[a-z0-9]+)?(?:_sparsity_(on|off))?\.sum$"
)
_TENSOR_TYPES = {
    "fp16": "fp16",
    "bf16": "bf16",
    "tf32": "tf32",
    "fp64": "fp64",
    "fp8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "fp6": "fp4",
    "fp4": "fp4",
    "e2m1": "fp4",
    "int8": "int8",
    "int4": "int8",
    "int1": "int8",
    "u8": "int8",
    "s8": "int8",
}

MISSING_REASONS = {
    "duration_s": "no duration metric (gpu__time_duration.sum); `rooflint metrics ncu` prints "
    "the ncu command that collects it",
    "bytes_dram": "no DRAM traffic metric (dram__bytes.sum, or dram__bytes_read.sum + "
    "dram__bytes_write.sum, or at least ncu's DRAM throughput %); run `rooflint metrics ncu` for "
    "the ncu command that collects it",
    "ops": "no FLOP counters (sm__sass_thread_inst_executed_op_*_pred_on.sum, "
    "sm__ops_path_tensor_*); run `rooflint metrics ncu` for the ncu command that collects them",
    "ops_vector": "no vector FLOP counters (sm__sass_thread_inst_executed_op_*_pred_on.sum): "
    "vector work is not in the compute time",
    "ops_matrix": "no tensor-core counters (sm__ops_path_tensor_* or "
    "sm__inst_executed_pipe_tensor.sum): tensor work is not in the compute time",
}


# Measured on an H200 (benchmarks/tensor_ops/results.json): cuBLAS GEMMs did 2,048 (DMMA) to
# 131,072 (FP8 warpgroup MMA) operations per counted tensor instruction, so no one factor fits.
WARPGROUP_MMA_NOTE = (
    "matrix ops not estimated: from Hopper on, tensor instructions vary in shape (2,048 to "
    "131,072 operations each, measured on an H200), so sm__inst_executed_pipe_tensor cannot be "
    "turned into operations; collect sm__ops_path_tensor_* (`rooflint metrics ncu --arch hopper`)"
)


def wanted(metric: str) -> bool:
    """Whether a raw metric name is one rooflint reads (used to skip the other columns)."""
    return (
        metric in _WANTED
        or metric.startswith("sm__ops_path_tensor_")
        or ncu_sol.wanted(metric)
        or ncu_launch.wanted(metric)
    )


def metric_name(label: str) -> str:
    """The metric a details page's label stands for (the label itself when it is a metric)."""
    return (
        DISPLAY_NAMES.get(label) or ncu_sol.metric_of(label) or ncu_launch.metric_of(label) or label
    )


def _wanted_names() -> set[str]:
    names = {
        DURATION,
        *(name for dims, total in LAUNCH_DIMS.values() for name in (*dims, total)),
        "device__attribute_display_name",
        "device__attribute_compute_capability_major",
        "device__attribute_compute_capability_minor",
        "gpc__cycles_elapsed.avg.per_second",
        "dram__bytes.sum",
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "dram__sectors_read.sum",
        "dram__sectors_write.sum",
        "dram__sectors.sum",
        "dram__bytes.sum.per_second",
        "dram__bytes_read.sum.per_second",
        "dram__bytes_write.sum.per_second",
        "dram__bytes.sum.peak_sustained",
        "dram__cycles_elapsed.avg.per_second",
        *SM_COUNT,
        "lts__t_bytes.sum",
        "lts__t_sectors.sum",
        "lts__t_bytes.sum.per_second",
        "lts__t_bytes.sum.peak_sustained",
        "lts__cycles_elapsed.avg.per_second",
        "l1tex__t_bytes.sum",
        "l1tex__t_bytes.sum.per_second",
        "l1tex__t_bytes.sum.peak_sustained",
        "l1tex__cycles_elapsed.avg.per_second",
    }
    for unit in _UNITS:
        names |= {
            f"{unit}__cycles_elapsed.avg",
            f"{unit}__cycles_elapsed.avg.per_second",
            f"{unit}__inst_executed_pipe_tensor.sum",
        }
        for p in _PRECISIONS:
            for op in ("add", "mul", "fma"):
                base = f"{unit}__sass_thread_inst_executed_op_{p}{op}_pred_on.sum"
                names |= {base, base + ".per_cycle_elapsed", base + ".peak_sustained"}
    return names


_WANTED = _wanted_names()


class Wide:
    """The metric values of a page, one float64 array per raw metric name (n launches each):
    what every ncu reader gives `launch_table`, read by name (`col`) without a frame around
    them (a DataFrame column lookup was 20 us, 80 of them a file)."""

    def __init__(self, arrays: dict[str, np.ndarray], n: int):
        self.arrays, self.n = arrays, n

    @classmethod
    def of(cls, wide) -> Wide:
        """A Wide as it is, or one of a frame's columns (the .ncu-rep reader's), as float64."""
        if isinstance(wide, Wide):
            return wide
        arrays = {c: wide[c].to_numpy(dtype="float64", na_value=np.nan) for c in wide.columns}
        return cls(arrays, len(wide))

    @property
    def columns(self) -> list[str]:
        return list(self.arrays)

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]


def col(wide: Wide, name: str) -> np.ndarray:
    """A metric column as float64 values, all NaN when the profile does not have it; the
    array itself (a quantity that is one metric shares its memory)."""
    if name not in wide:
        return np.full(len(wide), np.nan)
    return wide[name]


def first(*candidates: np.ndarray) -> np.ndarray:
    """Row-wise the first candidate that has a value."""
    values = candidates[0]
    for cand in candidates[1:]:
        missing = np.isnan(values)
        if not missing.any():
            break
        values = np.where(missing, cand, values)
    return values


def launch_table(box: list, identity: dict, source: str, notes: list[str]) -> pd.DataFrame:
    """The canonical launch table from identity columns and the metrics (every ncu reader).
    The metrics (a Wide, or a frame of float columns) come in `box` and are taken out of it,
    so that the raw metrics the quantities do not share go before the table is built (an
    argument would be held by the caller until the call returns: 28 MB at 200k launches)."""
    wide = Wide.of(box.pop())
    identity = {**identity, **{k: launch_dims(wide, identity[k], k) for k in LAUNCH_DIMS}}
    quantities_, row_notes = quantities(
        wide, schema.filled(identity["kernel"], ""), identity["arch"]
    )
    n = len(wide)
    sol = ncu_sol.columns(wide) if _lacking(quantities_) else None
    facts = ncu_launch.columns(wide)
    del wide
    columns = {**identity, **quantities_, "source": schema.repeated(source, n)}
    del quantities_  # the table holds them (not copied into 2-D blocks)
    table = schema.conformed(columns, n)
    del columns
    for message, mask in row_notes:
        schema.add_note(table, message, np.asarray(mask, dtype=bool))
        notes.append(message)
    _speed_of_light(table, sol)
    for column, values in facts.items():
        table[column] = values
    ncu_launch.gemm_minimum(table, notes)
    return schema.mark_missing(table, MISSING_REASONS)


def _lacking(quantities_: dict) -> bool:
    """Whether the export lacks a counter ncu's percentages stand in for: no launch has DRAM
    bytes, or none has a FLOP counter (a launch whose counter value was bad stays missing)."""
    ops = [quantities_[c] for c in schema.OPS if c in quantities_]
    return bool(np.isnan(quantities_["bytes_dram"]).all() or all(np.isnan(o).all() for o in ops))


def _speed_of_light(table: pd.DataFrame, sol: dict | None) -> None:
    """ncu's percentages join the table of an export that lacks counters (`sol`, None when it
    does not), where it has at least one."""
    given = sol is not None and any(
        (~np.isnan(sol[c])).any() for c in schema.SOL_COLUMNS if c != "pipe"
    )
    if sol is not None and len(table) and given:
        for column in schema.SOL_COLUMNS:
            table[column] = sol[column]


def launch_dims(wide: Wide, given: pd.Series, kind: str) -> pd.Series:
    """The page's "Grid Size"/"Block Size" text where it has one, else "(x, y, z)" from the
    dimension metrics, else the total the launch__*_size metric gives (blocks, threads)."""
    missing = given.isna().to_numpy()
    dims, total = LAUNCH_DIMS[kind]
    if not missing.any() or not any(name in wide for name in (*dims, total)):
        return given
    parts = [_whole_numbers(col(wide, name)) for name in dims]
    joined = "(" + parts[0] + ", " + parts[1] + ", " + parts[2] + ")"
    found = joined.fillna(_whole_numbers(col(wide, total)))
    return pd.Series(np.where(missing, found, given), index=given.index, dtype="string")


def _whole_numbers(values: np.ndarray) -> pd.Series:
    """Launch dimensions as ncu prints them ("25"), NA where not a whole positive number."""
    whole = (values > 0) & (values == np.floor(values))
    return pd.Series(np.where(whole, values, np.nan)).astype("Int64").astype("string")


def quantities(wide, names: pd.Series, arch: pd.Series) -> tuple[dict, list[tuple]]:
    """Canonical quantity columns from a wide metric frame.

    Returns (columns, notes) where notes are (message, row mask) pairs to attach per launch.
    Infinite or negative inputs are allowed through (conform makes them NA, with a note), so
    numpy's warnings on inf x 0 are not the user's business.
    """
    with np.errstate(all="ignore"):
        return _quantities(Wide.of(wide), names, arch)


def _quantities(wide: Wide, names: pd.Series, arch: pd.Series) -> tuple[dict, list]:
    notes: list[tuple] = []
    duration = _duration(wide, notes)
    out = {
        "duration_s": duration,
        "sm_clock_hz": _sm_clock(wide),
        "dram_clock_hz": col(wide, "dram__cycles_elapsed.avg.per_second"),
        "sm_count": first(*(col(wide, name) for name in SM_COUNT)),
    }
    out["bytes_dram"] = _dram_bytes(wide, duration, notes)
    out["bytes_l2"] = first(
        col(wide, "lts__t_bytes.sum"),
        col(wide, "lts__t_sectors.sum") * SECTOR_BYTES,
        _made(col(wide, "lts__t_bytes.sum.per_second"), duration),
    )
    out["bytes_l1"] = first(
        col(wide, "l1tex__t_bytes.sum"), _made(col(wide, "l1tex__t_bytes.sum.per_second"), duration)
    )
    out.update(_vector_ops(wide, duration, notes))
    out.update(_tensor_ops(wide, names, arch, notes))
    out.update(_peaks(wide, out["sm_clock_hz"]))
    return out, notes


def _duration(wide, notes):
    direct = col(wide, DURATION)
    from_cycles = first(
        *(
            _made(
                col(wide, f"{u}__cycles_elapsed.avg"),
                col(wide, f"{u}__cycles_elapsed.avg.per_second"),
                np.divide,
            )
            for u in _UNITS
        )
    )
    used = np.isnan(direct) & ~np.isnan(from_cycles)
    if used.any():
        notes.append(
            ("duration from sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second", used)
        )
    return np.where(np.isnan(direct), from_cycles, direct)


def _made(a: np.ndarray, b: np.ndarray, how=np.multiply) -> np.ndarray:
    """A quantity derived from two metrics (their product, by default): -inf where either is
    negative, so that conform reads it as missing with the note that the input was negative
    (-1 cycles / -1 Hz is no 1 s launch)."""
    return np.where((a < 0) | (b < 0), -np.inf, how(a, b))


def _sm_clock(wide):
    return first(
        col(wide, "sm__cycles_elapsed.avg.per_second"),
        col(wide, "smsp__cycles_elapsed.avg.per_second"),
        col(wide, "gpc__cycles_elapsed.avg.per_second"),
    )


def _dram_bytes(wide, duration, notes):
    exact = first(
        col(wide, "dram__bytes.sum"),
        _made(col(wide, "dram__bytes_read.sum"), col(wide, "dram__bytes_write.sum"), np.add),
        (col(wide, "dram__sectors_read.sum") + col(wide, "dram__sectors_write.sum")) * SECTOR_BYTES,
        col(wide, "dram__sectors.sum") * SECTOR_BYTES,
    )
    rate = first(
        col(wide, "dram__bytes.sum.per_second"),
        _made(
            col(wide, "dram__bytes_read.sum.per_second"),
            col(wide, "dram__bytes_write.sum.per_second"),
            np.add,
        ),
    )
    from_rate = _made(rate, duration)
    estimated = np.isnan(exact) & ~np.isnan(from_rate)
    if estimated.any():
        notes.append(("DRAM bytes = DRAM throughput x duration", estimated))
    return np.where(np.isnan(exact), from_rate, exact)


def _vector_ops(wide, duration, notes):
    out = {}
    # elapsed cycles: counted, else the SM clock x duration (a details page labels every SM
    # clock "SM Frequency", so it may carry only one of them); the same for every precision
    cycles = first(
        col(wide, "smsp__cycles_elapsed.avg"),
        _made(first(col(wide, "smsp__cycles_elapsed.avg.per_second"), _sm_clock(wide)), duration),
    )
    for p, precision in _PRECISIONS.items():
        counts = _fma_weighted(wide, p, "")
        rates = _fma_weighted(wide, p, ".per_cycle_elapsed")
        derived = _made(rates, cycles)
        from_rate = np.isnan(counts) & ~np.isnan(derived)
        if from_rate.any():
            notes.append((f"{precision} FLOPs = per-cycle rate x elapsed cycles", from_rate))
        out[f"ops_vector_{precision}"] = np.where(np.isnan(counts), derived, counts)
    return out


def _fma_weighted(wide, p, suffix):
    """add + mul + 2*fma for precision letter p, from sm__ or else smsp__ counters."""
    for unit in _UNITS:
        parts = [
            col(wide, f"{unit}__sass_thread_inst_executed_op_{p}{op}_pred_on.sum{suffix}")
            for op in ("add", "mul", "fma")
        ]
        if not all(np.isnan(part).all() for part in parts):
            return schema.added(parts[0], parts[1], 2 * parts[2])
    return np.full(len(wide), np.nan)


def _tensor_ops(wide, names, arch, notes):
    exact = _tensor_by_source(wide)
    if exact:
        return exact
    inst = first(
        col(wide, "sm__inst_executed_pipe_tensor.sum"),
        col(wide, "smsp__inst_executed_pipe_tensor.sum"),
    )
    if np.isnan(inst).all():
        return {}
    k = _ops_per_instruction(names, arch)
    used = inst > 0
    warpgroup = used & np.isnan(k)
    if warpgroup.any():
        notes.append((WARPGROUP_MMA_NOTE, warpgroup))
    used = used & ~warpgroup
    for value in sorted(set(k[used])):
        notes.append(
            (
                f"matrix ops estimated as sm__inst_executed_pipe_tensor x {int(value)} (MMA shape "
                "guessed from the kernel name and architecture; precision assumed FP16); collect "
                "sm__ops_path_tensor_* for exact counts",
                used & (k == value),
            )
        )
    return {"ops_matrix_fp16": inst * k}


def _tensor_by_source(wide):
    """Per-source-type tensor ops; a plain metric wins over its sparsity split, never both."""
    groups: dict[str, dict[str, list[str]]] = {}
    for name in wide.columns:
        m = _TENSOR_SRC.match(name)
        if m and m.group(1) in _TENSOR_TYPES:
            stem = (
                name[: m.start(2) - len("_sparsity_")] if m.group(2) else name.removesuffix(".sum")
            )
            groups.setdefault(_TENSOR_TYPES[m.group(1)], {}).setdefault(stem, []).append(name)
    out = {}
    for kind, stems in groups.items():
        total = None
        for stem, members in stems.items():
            plain = stem + ".sum"
            part = (
                col(wide, plain)
                if plain in members
                else schema.added(*(col(wide, member) for member in members))
            )
            total = part if total is None else schema.added(total, part)
        out[f"ops_matrix_{kind}"] = total
    return out


_CUBLAS_SHAPE = re.compile(r"[a-z](16816|1688|884|8816|16832|16864)(?:gemm|_)")
_CUBLAS_K = {"884": 512, "1688": 2048, "16816": 4096, "8816": 2048, "16832": 8192, "16864": 16384}
_CUTLASS_INSTRUCTION = re.compile(
    r"arch::Mma<\s*cutlass::gemm::GemmShape<\(?int\)?\s*(\d+),\s*\(?int\)?\s*(\d+),\s*\(?int\)?\s*(\d+)>"
)


def _ops_per_instruction(names: pd.Series, arch: pd.Series) -> np.ndarray:
    """mma_ops_per_instruction per launch, worked out once per distinct (name, arch)."""
    once = functools.cache(mma_ops_per_instruction)
    pairs = zip(names.tolist(), arch.tolist(), strict=True)
    return np.array([once(name, cc) for name, cc in pairs], dtype="float64")


def mma_ops_per_instruction(name, arch) -> float:
    """Operations one warp-level tensor instruction performs: 2*m*n*k of its MMA shape.

    Volta has only HMMA.884 (512). Otherwise the shape is read from a CUTLASS
    `arch::Mma<GemmShape<m,n,k>>` or a cuBLAS name like `s16816gemm`; failing both, the
    architecture's usual FP16 shape:
    HMMA.1688 on Turing (2048), HMMA.16816 on Ampere (4096), and NaN from Hopper on, whose
    warpgroup instructions vary in shape.
    """
    cc = _float(arch)
    if cc is not None and 7.0 <= cc < 7.5:
        return 512.0
    text = name if isinstance(name, str) else ""
    m = _CUTLASS_INSTRUCTION.search(text)
    if m:
        a, b, c = (int(g) for g in m.groups())
        return 2.0 * a * b * c
    m = _CUBLAS_SHAPE.search(text)
    if m:
        return float(_CUBLAS_K[m.group(1)])
    if cc is not None and cc < 8.0:
        return 2048.0
    if cc is not None and cc >= 9.0:
        return float("nan")  # warpgroup MMA: no fixed shape (WARPGROUP_MMA_NOTE)
    return 4096.0


def _float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _peaks(wide, sm_clock):
    """The run's own ceilings: peak_sustained per cycle x the measured clock of that unit."""
    out = {}
    for p, precision in _PRECISIONS.items():
        per_cycle = col(wide, f"sm__sass_thread_inst_executed_op_{p}fma_pred_on.sum.peak_sustained")
        out[f"peak_vector_{precision}"] = 2 * per_cycle * sm_clock
    for name in wide.columns:
        m = (
            _TENSOR_SRC.match(name.removesuffix(".peak_sustained"))
            if name.endswith(".peak_sustained")
            else None
        )
        if m and m.group(1) in _TENSOR_TYPES and not m.group(2) == "on":
            out[f"peak_matrix_{_TENSOR_TYPES[m.group(1)]}"] = col(wide, name) * sm_clock
    for level, unit in (("dram", "dram"), ("l2", "lts"), ("l1", "l1tex")):
        per_cycle = col(
            wide,
            f"{unit}__t_bytes.sum.peak_sustained"
            if unit != "dram"
            else "dram__bytes.sum.peak_sustained",
        )
        out[f"peak_bytes_{level}"] = per_cycle * col(wide, f"{unit}__cycles_elapsed.avg.per_second")
    return out
