"""Nsight Systems SQLite exports: the tables rooflint reads, as column projections into numpy."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
STRINGS = "StringIds"
GPU = "TARGET_INFO_GPU"
CUDA_DEVICE = "TARGET_INFO_CUDA_DEVICE"  # older exports: the CUDA device properties
# Tables every Nsight Systems export has, whatever was traced (none of rocprof's databases do).
MARKERS = (STRINGS, "TARGET_INFO_SESSION_START_TIME")
BATCH = 65_536  # rows fetched at a time
ABSENT = -1  # an integer cell that is NULL, or a column an older schema lacks

# Per activity table, the integer columns read (start and end in ns, ids into StringIds).
COMMON = ("start", "end", "deviceId", "streamId", "correlationId", "globalPid")
KERNEL_COLUMNS = COMMON + (
    "demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ",
    "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
    "dynamicSharedMemory", "graphNodeId",
)  # fmt: skip
MEMCPY_COLUMNS = COMMON + ("bytes", "copyKind", "srcKind", "dstKind")
MEMSET_COLUMNS = COMMON + ("bytes", "memKind")
RUNTIME_COLUMNS = ("start", "correlationId", "globalTid", "nameId")
# NVTX push/pop (59) and start/end (60) ranges; marks and domain records are not ranges.
NVTX_RANGES = (59, 60)
NVTX_DOMAIN = 75  # NvtxDomainCreate: a domain's id and name
NVTX_COLUMNS = ("start", "end", "globalTid", "domainId")
GPU_COLUMNS = ("id", "name", "smCount", "totalMemory", "computeMajor", "computeMinor")
# Where an export records its own file names and the capture's command line (device evidence).
METADATA = (("META_DATA_EXPORT", "value"), ("META_DATA_CAPTURE", "value"))


def connect(path: Path) -> sqlite3.Connection:
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True)


def tables(path: Path) -> set[str] | None:
    """The tables of a SQLite file, or None when it cannot be read as one."""
    try:
        con = connect(path)
        try:
            return names(con)
        finally:
            con.close()
    except sqlite3.Error:
        return None


def names(con: sqlite3.Connection) -> set[str]:
    return {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f'PRAGMA table_info("{table}")')}


def integers(con: sqlite3.Connection, table: str, wanted: tuple[str, ...], where: str = ""):
    """The integer columns `wanted` of `table` as int64 arrays (NULL and absent columns read
    ABSENT): one query, its rows turned into 2-D arrays by numpy BATCH rows at a time (no
    Python loop per row; a million rows as Python tuples would hold 0.7 GB at once)."""
    have = _columns(con, table)
    select = ", ".join(f'COALESCE("{c}", {ABSENT})' if c in have else str(ABSENT) for c in wanted)
    cursor = con.execute(f'SELECT {select} FROM "{table}" {where}')
    parts = [np.empty((0, len(wanted)), dtype=np.int64)]
    while rows := cursor.fetchmany(BATCH):
        parts.append(np.array(rows, dtype=np.int64).reshape(len(rows), len(wanted)))
    array = np.concatenate(parts)
    return {c: np.ascontiguousarray(array[:, i]) for i, c in enumerate(wanted)}


def strings(con: sqlite3.Connection) -> np.ndarray:
    """StringIds as an object array indexed by id (None where no string has that id)."""
    rows = con.execute(f'SELECT id, value FROM "{STRINGS}"').fetchall()
    top = max((i for i, _ in rows), default=-1)
    out = np.full(top + 2, None, dtype=object)  # the last entry: what ABSENT (-1) reads
    values = np.empty(len(rows), dtype=object)
    values[:] = [v for _, v in rows]
    out[np.array([i for i, _ in rows], dtype=np.int64)] = values
    return out


@dataclass
class Ranges:
    """NVTX ranges: start and end (ns), thread, domain, and each one's text."""

    start: np.ndarray
    end: np.ndarray
    thread: np.ndarray
    domain: np.ndarray
    text: list
    domains: dict  # domain id -> its name (nvtxDomainCreate), for ranges outside the default


def nvtx(con: sqlite3.Connection, text: np.ndarray) -> Ranges:
    """The push/pop and start/end ranges that ended, with their text (inline or a StringId)."""
    where = f'WHERE eventType IN {NVTX_RANGES} AND "end" IS NOT NULL'
    have = _columns(con, NVTX)
    numbers = integers(con, NVTX, NVTX_COLUMNS, where)
    ids = integers(con, NVTX, ("textId",), where)["textId"] if "textId" in have else None
    inline = [t for (t,) in con.execute(f'SELECT "text" FROM "{NVTX}" {where}')]
    registered = text[ids] if ids is not None else np.full(len(inline), None, dtype=object)
    domains = con.execute(
        f'SELECT domainId, "text" FROM "{NVTX}" WHERE eventType = {NVTX_DOMAIN}'
    ).fetchall()
    return Ranges(
        numbers["start"],
        numbers["end"],
        numbers["globalTid"],
        numbers["domainId"],
        [i if i is not None else r for i, r in zip(inline, registered.tolist(), strict=True)],
        {d: name for d, name in domains if d is not None and name},
    )


def gpus(con: sqlite3.Connection, tables: set[str]) -> list[dict]:
    """TARGET_INFO_GPU (or an older export's TARGET_INFO_CUDA_DEVICE) rows by column name."""
    for table in (GPU, CUDA_DEVICE):
        if table in tables:
            have = _columns(con, table)
            wanted = [c for c in GPU_COLUMNS if c in have]
            if "id" not in wanted:
                continue
            select = ", ".join(f'"{c}"' for c in wanted)
            rows = con.execute(f'SELECT {select} FROM "{table}"').fetchall()
            if rows:
                return [dict(zip(wanted, row, strict=True)) for row in rows]
    return []


def metadata(con: sqlite3.Connection, tables: set[str]) -> list[str]:
    """The export's and the capture's recorded texts (file names, command lines)."""
    out: list[str] = []
    for table, column in METADATA:
        if table in tables and column in _columns(con, table):
            out += [str(v) for (v,) in con.execute(f'SELECT "{column}" FROM "{table}"')]
    return out
