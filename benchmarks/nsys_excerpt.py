"""Cut fixtures/nsys/nsysai-2xh100-excerpt.sqlite from the two-H100 Nsight Systems export.

    python benchmarks/nsys_excerpt.py ../shared/fixtures/nsys/nsysai-2xh100-1s.sqlite \
        fixtures/nsys/nsysai-2xh100-excerpt.sqlite

The excerpt keeps the real schema (each table's CREATE statement as the export wrote it) and the
rows of a window: the first ROWS GPU activities (kernels, copies, fills) from the first kernel
whose runtime call the export recorded, the runtime calls that share their correlation ids (and
process), every NVTX range that overlaps those calls, all of StringIds, and the export's metadata
(its file names: the device evidence of an export without TARGET_INFO_GPU).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

ROWS = 300  # the GPU activities kept, from the first kernel whose runtime call was recorded
ACTIVITY = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
)
WHOLE = ("StringIds", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT")


def cut(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    con = sqlite3.connect(target)
    con.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
    tables = ACTIVITY + ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS") + WHOLE
    for (sql,) in con.execute(
        f"SELECT sql FROM src.sqlite_master WHERE type = 'table' AND name IN {tables}"
    ).fetchall():
        con.execute(sql)
    (lo,) = con.execute(
        "SELECT min(k.start) FROM src.CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN src.CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "AND (k.globalPid >> 24) = (r.globalTid >> 24)"
    ).fetchone()
    starts = " UNION ALL ".join(f"SELECT start FROM src.{t} WHERE start >= {lo}" for t in ACTIVITY)
    (hi,) = con.execute(
        f"SELECT start FROM ({starts}) ORDER BY start LIMIT 1 OFFSET {ROWS}"
    ).fetchone()
    for table in ACTIVITY:
        con.execute(
            f"INSERT INTO {table} SELECT * FROM src.{table} WHERE start >= ? AND start < ?",
            (lo, hi),
        )
    union = " UNION ALL ".join(f"SELECT correlationId, globalPid FROM {t}" for t in ACTIVITY)
    con.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT r.* FROM src.CUPTI_ACTIVITY_KIND_RUNTIME r "
        f"JOIN ({union}) a ON a.correlationId = r.correlationId "
        "AND (a.globalPid >> 24) = (r.globalTid >> 24)"
    )
    calls = con.execute("SELECT min(start), max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    con.execute(
        'INSERT INTO NVTX_EVENTS SELECT * FROM src.NVTX_EVENTS WHERE "end" >= ? AND start <= ?',
        calls,
    )
    for table in WHOLE:
        con.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
    con.commit()
    con.execute("DETACH DATABASE src")
    con.execute("VACUUM")
    con.close()


if __name__ == "__main__":
    cut(Path(sys.argv[1]).resolve(), Path(sys.argv[2]))
