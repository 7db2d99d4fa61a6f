"""Device facts from rocprof-compute and rocprofv3: sysinfo.csv, agent_info.csv, roofline.csv."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core.errors import InputError

from .compressed import csv_source
from .rocprof_columns import norm

# RDNA consumer/workstation GPUs (wave32, no typed FLOP counters, unreliable memory counters).
RDNA_PREFIXES = ("gfx10", "gfx11", "gfx12")
# Architectures whose SQ has no per-precision VALU counters (SQ_INSTS_VALU_ADD_F32 etc.).
NO_TYPED_FLOPS = ("gfx906", "gfx908") + RDNA_PREFIXES


@dataclass
class DeviceInfo:
    """Facts about the profiled device, and what in the input could not be used."""

    product: str | None = None
    gfx: str | None = None
    cu_count: int | None = None
    lds_banks_per_cu: int | None = None
    wave_size: int | None = None
    notes: list[str] = field(default_factory=list)
    agents: pd.DataFrame | None = None  # rocprofv3 GPU agents: node, product, gfx, cu_count, wave

    def hints(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.product:
            out["product"] = self.product
        if self.gfx:
            out["gfx"] = self.gfx
        if self.cu_count:
            out["cu_count"] = self.cu_count
        return out


def _read_small_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(csv_source(path), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, OSError) as exc:
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # pandas: 2 lines
        raise InputError(
            f"cannot parse as CSV ({problem}); export it again", path=str(path)
        ) from None


def _field(row: pd.Series, *names: str) -> tuple[str | None, str | None]:
    """The first of `names` present in the row (compared loosely): (column, text)."""
    by_norm = {norm(c): c for c in row.index}
    for name in names:
        col = by_norm.get(norm(name))
        if col is not None:
            return col, str(row[col]).strip()
    return None, None


def _positive(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value is not None and np.isfinite(value) and value > 0 else None


# sysinfo fields that must be positive numbers to mean anything (Omniperf 1 and 2+ spellings).
_SYSINFO_NUMERIC = (
    ("cu_per_gpu", "numCU"),
    ("max_sclk", "sclk"),
    ("max_mclk", "mclk"),
    ("cur_sclk",),
    ("cur_mclk",),
    ("lds_banks_per_cu",),
    ("wave_size", "waveSize"),
    ("total_l2_chan", "L2Banks"),
    ("hbm_bw", "hbmBW"),
)


def read_sysinfo(path: Path) -> DeviceInfo:
    """rocprof-compute / Omniperf sysinfo.csv: one row describing the GPU of the workload."""
    table = _read_small_csv(path)
    if table.empty:
        return DeviceInfo(notes=[f"{path.name}: sysinfo has no rows; ignored"])
    row = table.iloc[0]
    info = DeviceInfo()
    _, info.gfx = _field(row, "gpu_arch", "gpu_soc")
    _, product = _field(row, "gpu_model", "gpu_series", "name")
    info.product = product or None
    info.gfx = info.gfx or None
    unusable = []
    values = {}
    for spellings in _SYSINFO_NUMERIC:
        col, text = _field(row, *spellings)
        if col is None:
            continue
        value = _positive(text)
        if value is None:
            unusable.append(f"{col} = {text if text else '(empty)'}")
        values[spellings[0]] = value
    if values.get("cu_per_gpu"):
        info.cu_count = int(values["cu_per_gpu"])
    if values.get("lds_banks_per_cu"):
        info.lds_banks_per_cu = int(values["lds_banks_per_cu"])
    if values.get("wave_size"):
        info.wave_size = int(values["wave_size"])
    if unusable:
        info.notes.append(f"{path.name}: unusable values ignored ({', '.join(unusable)})")
    return info


def read_agent_info(path: Path) -> DeviceInfo:
    """rocprofv3 agent_info.csv: one row per CPU/GPU agent; the GPUs are what launches ran on."""
    table = _read_small_csv(path)
    cols = {norm(c): c for c in table.columns}
    kind = cols.get("agenttype")
    gpus = table[table[kind].str.upper() == "GPU"] if kind else table.iloc[0:0]
    info = DeviceInfo()
    if gpus.empty:
        info.notes.append(f"{path.name}: no GPU agents listed")
        return info

    def col(name, default=None):
        c = cols.get(name)
        return gpus[c] if c else pd.Series(default, index=gpus.index)

    agents = pd.DataFrame(
        {
            "node": pd.to_numeric(col("nodeid"), errors="coerce"),
            "logical": pd.to_numeric(col("logicalnodeid"), errors="coerce"),
            "gfx": col("name").replace("", pd.NA),
            "product": col("productname").replace("", pd.NA),
            "cu_count": pd.to_numeric(col("cucount"), errors="coerce"),
            "wave": pd.to_numeric(col("wavefrontsize"), errors="coerce"),
        }
    ).reset_index(drop=True)
    info.agents = agents
    _summarise(info, agents, path.name)
    return info


def _summarise(info: DeviceInfo, agents: pd.DataFrame, name: str) -> None:
    """Device-wide hints from agents, when they all agree."""
    for attr, column in (("gfx", "gfx"), ("product", "product")):
        distinct = agents[column].dropna().unique()
        if len(distinct) == 1:
            setattr(info, attr, str(distinct[0]))
        elif len(distinct) > 1:
            info.notes.append(f"{name}: GPUs of different kinds ({', '.join(map(str, distinct))})")
    cus = agents["cu_count"].dropna().unique()
    if len(cus) == 1 and cus[0] > 0:
        info.cu_count = int(cus[0])
    waves = agents["wave"].dropna().unique()
    if len(waves) == 1 and waves[0] > 0:
        info.wave_size = int(waves[0])


def agents_from_rocpd(rows: pd.DataFrame) -> DeviceInfo:
    """GPU agents as rocpd stores them (rocpd_info_agent): id, absolute_index, name, product."""
    info = DeviceInfo()
    if rows.empty:
        return info
    agents = pd.DataFrame(
        {
            "node": pd.to_numeric(rows.get("absolute_index"), errors="coerce"),
            "logical": pd.to_numeric(rows.get("logical_index"), errors="coerce"),
            "gfx": rows.get("name"),
            "product": rows.get("product_name"),
            "cu_count": pd.to_numeric(rows.get("cu_count"), errors="coerce"),
            "wave": pd.to_numeric(rows.get("wave_front_size"), errors="coerce"),
        }
    ).reset_index(drop=True)
    info.agents = agents
    _summarise(info, agents, "rocpd agents")
    return info


# roofline.csv columns (compared lower-case without punctuation) -> catalog ceiling keys.
# Bandwidths are GB/s, peaks GFLOP/s or GIOP/s (rocm-amdgpu-bench output).
_ROOFLINE_KEYS = {
    "hbmbw": "dram",
    "l2bw": "l2",
    "l1bw": "l1",
    "ldsbw": "lds",
    "fp16flops": "vector_fp16",
    "fp32flops": "vector_fp32",
    "fp64flops": "vector_fp64",
    "mfmaf16flops": "matrix_fp16",
    "mfmaf32flops": "matrix_fp32",
    "mfmabf16flops": "matrix_bf16",
    "mfmaf64flops": "matrix_fp64",
    "mfmaf8flops": "matrix_fp8",
    "mfmaf6f4flops": "matrix_fp4",
    "mfmaflopsf6f4": "matrix_fp4",
    "mfmaf4flops": "matrix_fp4",
    "mfmai8ops": "matrix_int8",
    "mfmafi8ops": "matrix_int8",  # the "MFMAFI8Ops" spelling of some rocprof-compute versions
}
# Measured, but no canonical class to put them in.
_ROOFLINE_UNMAPPED: dict[str, str] = {}


def read_roofline(path: Path) -> tuple[dict[str, float], list[str]]:
    """Measured ceilings from a rocprof-compute roofline.csv, in byte/s and op/s."""
    table = _read_small_csv(path)
    notes: list[str] = []
    if table.empty:
        raise InputError(
            "roofline.csv has a header but no measurements; run the roofline "
            "benchmark again (rocprof-compute profile --roof-only)",
            path=str(path),
        )
    if len(table) > 1:
        first = table.columns[0]
        notes.append(
            f"{path.name}: {len(table)} devices measured; used the first "
            f"({first} = {table.iloc[0][first]})"
        )
    row = table.iloc[0]
    ceilings: dict[str, float] = {}
    skipped = []
    for col in table.columns:
        key = norm(col)
        if re.search(r"(low|high)$", key):
            continue  # confidence bounds of the measurement, not ceilings
        value = _positive(str(row[col]).strip())
        if key in _ROOFLINE_UNMAPPED and value:
            skipped.append(f"{col} = {row[col]} ({_ROOFLINE_UNMAPPED[key]})")
        if key not in _ROOFLINE_KEYS or value is None:
            continue  # 0 or empty: not measured on this device
        ceilings[_ROOFLINE_KEYS[key]] = value * 1e9  # GB/s -> byte/s, GFLOP/s -> op/s
    if skipped:
        notes.append(f"{path.name}: measured but unused: {'; '.join(skipped)}")
    return ceilings, notes
