"""AMD hardware counters -> operations and bytes, per architecture, as rocprof-compute counts them.

Sources checked (ROCm/rocm-systems, projects/rocprofiler-compute): `src/utils/roofline_calc.py`
(`calc_ai_profile`) and `analysis_configs/gfx942|gfx950/0400_roofline.yaml` (tables 401/402) for
FLOPs, HBM, L2, vL1D and LDS bytes; `analysis_configs/gfx950/1700_l2_cache.yaml` for the gfx950
L2-fabric read sizes (32/64/128 B). The gfx950 `*_DRAM_32B` sector counters are described in
rocprofv3's counter descriptions ("1 64-byte request counted as 2, 128-byte as 4").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import schema

from .rocprof_device import NO_TYPED_FLOPS, RDNA_PREFIXES

# --- constants, each with what it means -------------------------------------------------------
# VALU counters count wave instructions; one instruction does one operation per lane, so a
# wave64 instruction is 64 ops (32 on RDNA wave32). FMA counts as 2 ops per lane.
FMA_OPS_PER_LANE = 2
# MFMA "MOPS" counters count matrix work in units of 512 operations (rocprof-compute multiplies
# every SQ_INSTS_VALU_MFMA_MOPS_* by 512 for FLOPs and IOPs alike).
MFMA_OPS_PER_MOP = 512
# L2->memory (EA) request sizes on CDNA: requests are 32 B or 64 B (MI200), plus 128 B reads
# on MI300 counted by TCC_BUBBLE; gfx950 *_DRAM_32B counters count 32 B sectors.
SECTOR_BYTES = 32
EA_64B = 64
EA_128B = 128
# vL1D -> L2 requests (TCP_TCC_*_REQ) are counted as 64 B each by rocprof-compute's roofline.
TCP_TCC_REQ_BYTES = 64
# gfx950 L2 sector counters (TCC_READ_SECTORS etc.) count 32 B sectors.
L2_SECTOR_BYTES = 32
# Fallback when only TCC_REQ exists: one L2 cache line (128 B on CDNA2/3) per request.
TCC_REQ_BYTES = 128
# vL1D: rocprof-compute's roofline counts each TCP_TOTAL_CACHE_ACCESSES as a 64 B line.
TCP_ACCESS_BYTES = 64
# LDS: each active, conflict-free LDS cycle moves one 4-byte dword per bank.
LDS_DWORD_BYTES = 4
# CDNA LDS has 32 banks per CU (rocprof-compute's $lds_banks_per_cu; sysinfo overrides it).
LDS_BANKS_DEFAULT = 32
# FETCH_SIZE / WRITE_SIZE are rocprof derived metrics in KiB.
KIB = 1024

_INSTANCE = re.compile(r"^(.*)\[(\d+)\]$")

VALU_PRECISIONS = {"F16": "ops_vector_fp16", "F32": "ops_vector_fp32", "F64": "ops_vector_fp64"}
VALU_KINDS = ("ADD", "MUL", "FMA", "TRANS")
# MFMA counter suffix -> canonical column. F6F4 is one counter for FP6 and FP4 (gfx950).
# MFMA F32 is genuine FP32 matrix math (rocprof-compute's "MFMA FLOPs (F32)", peak
# MFMAF32Flops), not TF32/XF32 (gfx940's xf32 MFMA has no counter of its own): matrix_fp32.
MFMA_COLUMNS = {
    "F16": "ops_matrix_fp16",
    "F32": "ops_matrix_fp32",
    "BF16": "ops_matrix_bf16",
    "F64": "ops_matrix_fp64",
    "F8": "ops_matrix_fp8",
    "F6F4": "ops_matrix_fp4",
    "I8": "ops_matrix_int8",
}
# MFMA kinds each architecture executes (others are absent from the hardware, not the file).
MFMA_BY_ARCH = {
    "gfx90a": ("F16", "BF16", "F32", "F64", "I8"),
    "gfx94": ("F16", "BF16", "F32", "F64", "I8", "F8"),
    "gfx950": ("F16", "BF16", "F32", "F64", "I8", "F8", "F6F4"),
}

# Every counter the formulas below read (base names; _sum and [n] forms are found from them).
# Long tables are pivoted to these only, so a 2,000-counter collection stays cheap.
USED = frozenset(
    [f"SQ_INSTS_VALU_{kind}_{p}" for kind in VALU_KINDS for p in VALU_PRECISIONS]
    + [f"SQ_INSTS_VALU_MFMA_MOPS_{kind}" for kind in MFMA_COLUMNS]
    + [
        "SQ_INSTS_VALU_MFMA_F6F4",
        "SQ_INSTS_VALU",
        "SQ_INSTS_SALU",
        "SQ_INSTS_MFMA",
        "TCC_EA0_RDREQ_DRAM_32B",
        "TCC_EA0_WRREQ_WRITE_DRAM_32B",
        "TCC_EA0_WRREQ_ATOMIC_DRAM_32B",
        "TCC_EA0_RDREQ",
        "TCC_EA0_RDREQ_32B",
        "TCC_EA0_RDREQ_64B",
        "TCC_EA0_RDREQ_128B",
        "TCC_EA0_WRREQ",
        "TCC_EA0_WRREQ_64B",
        "TCC_BUBBLE",
        "TCC_EA_RDREQ",
        "TCC_EA_RDREQ_32B",
        "TCC_EA_WRREQ",
        "TCC_EA_WRREQ_64B",
        "FETCH_SIZE",
        "WRITE_SIZE",
        "TCC_READ_SECTORS",
        "TCC_WRITE_SECTORS",
        "TCC_ATOMIC_SECTORS",
        "TCC_REQ",
        "TCP_TCC_READ_REQ",
        "TCP_TCC_WRITE_REQ",
        "TCP_TCC_ATOMIC_WITH_RET_REQ",
        "TCP_TCC_ATOMIC_WITHOUT_RET_REQ",
        "TCP_TOTAL_CACHE_ACCESSES",
        "SQ_LDS_IDX_ACTIVE",
        "SQ_LDS_BANK_CONFLICT",
    ]
)


def base_name(name: str) -> str:
    """TCC_HIT[3] and TCC_HIT_sum -> TCC_HIT."""
    m = _INSTANCE.match(name)
    if m:
        return m.group(1)
    return name[:-4] if name.endswith("_sum") else name


GFX950_HBM_NOTE = "MI300 HBM formula on gfx950: reads ~2× low"
PACKED_NOTE = (
    "VALU FLOPs counted per wave instruction (lanes × 1, FMA × 2): packed FP16/FP32 "
    "math (v_pk_*) may be under-counted"
)
RDNA_NOTE = "low-confidence: RDNA memory counters are unreliable"


class Counters:
    """Counter columns of a wide table, each read exactly once.

    A counter may appear as `X_sum` (rocprof's sum over instances), as plain `X` (rocprofv3
    sums instances itself) or as per-instance `X[0]..X[n]`; several of these often coexist.
    Prefer X_sum, else X, else the sum of X[n]: adding two of them would double count.
    """

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self._sum: dict[str, str] = {}
        self._plain: dict[str, str] = {}
        self._inst: dict[str, list[str]] = {}
        for col in frame.columns:
            name = str(col)
            m = _INSTANCE.match(name)
            if m:
                self._inst.setdefault(m.group(1), []).append(col)
            elif name.endswith("_sum"):
                self._sum[name[:-4]] = col
            else:
                self._plain[name] = col
        self._cache: dict[str, pd.Series | None] = {}

    def has(self, name: str) -> bool:
        return name in self._sum or name in self._plain or name in self._inst

    def get(self, name: str) -> pd.Series | None:
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str) -> pd.Series | None:
        if name in self._sum:
            return _num(self.frame[self._sum[name]])
        if name in self._plain:
            return _num(self.frame[self._plain[name]])
        if name in self._inst:
            block = self.frame[self._inst[name]].apply(_num)
            return block.sum(axis=1, min_count=1)
        return None

    def all(self, *names: str) -> list[pd.Series] | None:
        series = [self.get(n) for n in names]
        return None if any(s is None for s in series) else series


def _num(values) -> pd.Series:
    return pd.to_numeric(values, errors="coerce").astype("float64")


@dataclass
class Derived:
    """Quantities derived for a set of launches, and what could not be derived, and why."""

    columns: dict[str, pd.Series] = field(default_factory=dict)
    reasons: dict[str, str | schema.Missing] = field(default_factory=dict)  # quantity -> why NA
    notes: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (note, rows)


# Counters that exist from an architecture on: the newest whose markers a file has is its arch.
ARCH_MARKERS = (
    (
        "gfx950",
        (
            "SQ_INSTS_VALU_MFMA_MOPS_F6F4",
            "SQ_INSTS_VALU_MFMA_F6F4",
            "TCC_EA0_RDREQ_DRAM_32B",
            "TCC_READ_SECTORS",
        ),
    ),
    ("gfx942", ("TCC_EA0_RDREQ", "TCC_EA0_WRREQ", "TCC_BUBBLE", "SQ_INSTS_VALU_MFMA_MOPS_F8")),
    ("gfx90a", ("SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_ADD_F32")),
)


def infer_arch(counters: Counters, omniperf_table: bool) -> str | None:
    """A gfx target guessed from which counters exist; None when the names do not tell."""
    c = counters
    for arch, markers in ARCH_MARKERS:
        if any(c.has(name) for name in markers):
            return arch
    # A full rocprof-compute collection (every SQ counter the GPU has) with no typed VALU and no
    # MFMA counters, on the MI100-era TCC_EA_* names, is an MI100.
    if (
        omniperf_table
        and c.has("TCC_EA_RDREQ")
        and c.has("SQ_INSTS_VALU")
        and c.has("SQ_INSTS_SALU")
        and not c.has("SQ_INSTS_MFMA")
    ):
        return "gfx908"
    return None


def derive(
    frame: pd.DataFrame, arch: str | None, wave_size: pd.Series, lds_banks: int | None = None
) -> Derived:
    """Operations and bytes for each row of a wide counter table on one architecture."""
    counters = Counters(frame)
    out = Derived()
    _vector_ops(counters, arch, wave_size, out)
    _matrix_ops(counters, arch, out)
    if not any(
        c in out.columns for c in list(VALU_PRECISIONS.values()) + list(MFMA_COLUMNS.values())
    ):
        out.reasons.setdefault("ops", _no_flops_reason(arch))
    _dram_bytes(counters, arch, out)
    _l2_bytes(counters, arch, out)
    _l1_bytes(counters, out)
    _lds_bytes(counters, lds_banks or LDS_BANKS_DEFAULT, out)
    if arch and arch.startswith(RDNA_PREFIXES):
        present = [
            out.columns[c].notna().to_numpy()
            for c in ("bytes_dram", "bytes_l2", "bytes_l1", "bytes_lds")
            if c in out.columns
        ]
        if present:
            out.notes.append((RDNA_NOTE, np.logical_or.reduce(present)))
    return out


def _no_flops_reason(arch: str | None) -> str | schema.Missing:
    if arch and arch.startswith(NO_TYPED_FLOPS):
        return schema.no_flop_counters(arch)
    return (
        "no FLOP counters in this file (collect SQ_INSTS_VALU_{ADD,MUL,FMA,TRANS}_F{16,32,64} "
        "and SQ_INSTS_VALU_MFMA_MOPS_*)"
    )


def _vector_ops(c: Counters, arch: str | None, wave: pd.Series, out: Derived) -> None:
    if arch and arch.startswith(NO_TYPED_FLOPS):
        return
    used = []
    for precision, column in VALU_PRECISIONS.items():
        names = [f"SQ_INSTS_VALU_{kind}_{precision}" for kind in VALU_KINDS]
        series = c.all(*names)
        if series is None:
            absent = [n for n in names if not c.has(n)]
            if len(absent) < len(names):  # some collected, some not: do not guess the rest
                out.reasons[column] = f"{', '.join(absent)} not collected"
            continue
        add, mul, fma, trans = series
        out.columns[column] = wave * (add + mul + trans + FMA_OPS_PER_LANE * fma)
        used.append(out.columns[column])
    if used:
        total = sum(s.fillna(0) for s in used)
        out.notes.append((PACKED_NOTE, (total > 0).to_numpy()))


def _matrix_ops(c: Counters, arch: str | None, out: Derived) -> None:
    family = (
        "gfx950" if arch == "gfx950" else "gfx94" if arch and arch.startswith("gfx94") else arch
    )
    expected = MFMA_BY_ARCH.get(family or "", ())
    found_any = any(c.has(f"SQ_INSTS_VALU_MFMA_MOPS_{k}") for k in MFMA_COLUMNS)
    for kind, column in MFMA_COLUMNS.items():
        mops = c.get(f"SQ_INSTS_VALU_MFMA_MOPS_{kind}")
        if mops is not None:
            out.columns[column] = mops * MFMA_OPS_PER_MOP
        elif found_any and kind in expected:
            out.reasons[column] = f"SQ_INSTS_VALU_MFMA_MOPS_{kind} not collected"
    if c.has("SQ_INSTS_VALU_MFMA_MOPS_F6F4"):
        fp4 = out.columns["ops_matrix_fp4"]
        out.notes.append(
            (
                "ops_matrix_fp4 counts FP6 and FP4 MFMA together (one F6F4 counter)",
                (fp4 > 0).to_numpy(),
            )
        )


def _clipped(values: pd.Series, out: Derived, what: str) -> pd.Series:
    """Counter differences read from different passes can dip below zero: clip, and say so."""
    negative = (values < 0).to_numpy()
    if negative.any():
        out.notes.append(
            (
                f"{what}: negative counter difference (counters from different passes) "
                "clipped to 0",
                negative,
            )
        )
    return values.clip(lower=0)


def _dram_read(c: Counters, arch: str | None, out: Derived) -> tuple[pd.Series | None, str]:
    sectors = c.get("TCC_EA0_RDREQ_DRAM_32B")
    if sectors is not None:  # gfx950: 32 B sectors actually read from DRAM
        return SECTOR_BYTES * sectors, ""
    sized = c.all("TCC_EA0_RDREQ_32B", "TCC_EA0_RDREQ_64B", "TCC_EA0_RDREQ_128B")
    if sized is not None:  # gfx950 L2-fabric reads split by request size
        r32, r64, r128 = sized
        return SECTOR_BYTES * r32 + EA_64B * r64 + EA_128B * r128, ""
    mi300 = c.all("TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B")
    if mi300 is not None:
        rdreq, r32 = mi300
        bubble = c.get("TCC_BUBBLE")
        if bubble is None:
            if arch != "gfx950":
                return None, "TCC_BUBBLE not collected (MI300 counts 128 B reads with it)"
            bubble = pd.Series(0.0, index=rdreq.index)
        # MI300: 128 B reads (TCC_BUBBLE), 32 B reads, and 64 B for the rest.
        rest = _clipped(rdreq - bubble - r32, out, "HBM reads")
        read = EA_128B * bubble + SECTOR_BYTES * r32 + EA_64B * rest
        if arch == "gfx950":
            out.notes.append((GFX950_HBM_NOTE, read.notna().to_numpy()))
        return read, ""
    mi200 = c.all("TCC_EA_RDREQ", "TCC_EA_RDREQ_32B")
    if mi200 is not None:  # MI100/MI200: 32 B reads, and 64 B for the rest
        rdreq, r32 = mi200
        return SECTOR_BYTES * r32 + EA_64B * _clipped(rdreq - r32, out, "HBM reads"), ""
    fetch = c.get("FETCH_SIZE")
    if fetch is not None:
        return fetch * KIB, ""
    return None, "no HBM read counters (TCC_EA_RDREQ*, TCC_EA0_RDREQ* or FETCH_SIZE) in this file"


def _dram_write(c: Counters, out: Derived) -> tuple[pd.Series | None, str]:
    sectors = c.get("TCC_EA0_WRREQ_WRITE_DRAM_32B")
    if sectors is not None:  # gfx950: 32 B sectors written (+ atomics) to DRAM
        atomic = c.get("TCC_EA0_WRREQ_ATOMIC_DRAM_32B")
        total = sectors if atomic is None else sectors + atomic
        return SECTOR_BYTES * total, ""
    for prefix in ("TCC_EA0_", "TCC_EA_"):
        pair = c.all(f"{prefix}WRREQ", f"{prefix}WRREQ_64B")
        if pair is not None:  # 64 B writes, and 32 B for the rest
            wrreq, w64 = pair
            return EA_64B * w64 + SECTOR_BYTES * _clipped(wrreq - w64, out, "HBM writes"), ""
    size = c.get("WRITE_SIZE")
    if size is not None:
        return size * KIB, ""
    return None, "no HBM write counters (TCC_EA_WRREQ*, TCC_EA0_WRREQ* or WRITE_SIZE) in this file"


def _dram_bytes(c: Counters, arch: str | None, out: Derived) -> None:
    read, why_read = _dram_read(c, arch, out)
    write, why_write = _dram_write(c, out)
    if read is not None and write is not None:
        out.columns["bytes_dram"] = read + write
    else:
        out.reasons["bytes_dram"] = why_read or why_write


def _l2_bytes(c: Counters, arch: str | None, out: Derived) -> None:
    sectors = c.all("TCC_READ_SECTORS", "TCC_WRITE_SECTORS")
    if sectors is not None:
        atomic = c.get("TCC_ATOMIC_SECTORS")
        total = sectors[0] + sectors[1] + (0 if atomic is None else atomic)
        out.columns["bytes_l2"] = L2_SECTOR_BYTES * total
        return
    rw = c.all("TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ")
    if rw is not None:
        total = rw[0] + rw[1]
        for atomic in ("TCP_TCC_ATOMIC_WITH_RET_REQ", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ"):
            extra = c.get(atomic)
            if extra is not None:
                total = total + extra
        out.columns["bytes_l2"] = TCP_TCC_REQ_BYTES * total
        if arch == "gfx950":
            out.notes.append(
                (
                    "bytes_l2 from 64 B vL1D->L2 requests: gfx950 reads in 128 B "
                    "requests, so L2 reads may be under-counted",
                    out.columns["bytes_l2"].notna().to_numpy(),
                )
            )
        return
    req = c.get("TCC_REQ")
    if req is not None:
        out.columns["bytes_l2"] = TCC_REQ_BYTES * req
        out.notes.append(
            (
                "bytes_l2 = TCC_REQ × 128 B (full cache lines; over-counts partial requests)",
                req.notna().to_numpy(),
            )
        )
        return
    out.reasons["bytes_l2"] = "no L2 request counters (TCP_TCC_*_REQ or TCC_REQ) in this file"


def _l1_bytes(c: Counters, out: Derived) -> None:
    accesses = c.get("TCP_TOTAL_CACHE_ACCESSES")
    if accesses is None:
        out.reasons["bytes_l1"] = "no vL1D counter (TCP_TOTAL_CACHE_ACCESSES) in this file"
        return
    out.columns["bytes_l1"] = TCP_ACCESS_BYTES * accesses


def _lds_bytes(c: Counters, banks: int, out: Derived) -> None:
    pair = c.all("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT")
    if pair is None:
        out.reasons["bytes_lds"] = (
            "no LDS counters (SQ_LDS_IDX_ACTIVE, SQ_LDS_BANK_CONFLICT) in this file"
        )
        return
    active, conflict = pair
    out.columns["bytes_lds"] = LDS_DWORD_BYTES * banks * _clipped(active - conflict, out, "LDS")
