"""Legacy `nvprof --csv --metrics` exports: per-kernel averages, no per-launch data, no time."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from .compressed import read_all
from .values import to_float

# nvprof metric -> (canonical column, multiplier)
METRICS = {
    "flop_count_dp": ("ops_vector_fp64", 1.0),
    "flop_count_sp": ("ops_vector_fp32", 1.0),
    "flop_count_hp": ("ops_vector_fp16", 1.0),
    "dram_read_bytes": ("bytes_dram", 1.0),
    "dram_write_bytes": ("bytes_dram", 1.0),
    "l2_read_transactions": ("bytes_l2", 32.0),
    "l2_write_transactions": ("bytes_l2", 32.0),
}
AGGREGATE_NOTE = (
    "nvprof metrics export: per-kernel averages repeated for each invocation; "
    "nvprof --metrics records no kernel time (profile with Nsight Compute instead)"
)
EXPORT_AGAIN = (
    "export again with `nvprof --csv --metrics flop_count_sp,dram_read_bytes,dram_write_bytes`"
)
_HEADER = '"Device","Kernel","Invocations","Metric Name"'
# The launches an export may expand to (each kernel's averages repeated per invocation): a
# million rows of the launch table take about 0.5 GB; a count beyond it is refused, never
# allocated (a 3.6 KB file claiming 10^8 invocations asked for 29.8 GiB).
MAX_INVOCATIONS = 1_000_000


def sniff(path: Path, head: str) -> bool:
    return _HEADER in head


def read(path) -> Profile:
    source = str(path)
    lines = read_all(path).decode("utf-8", errors="replace").splitlines()  # gzip too
    body = [line for line in lines if line.startswith('"')]
    if len(body) < 2:
        raise InputError(
            f"nvprof export has a header but no metric rows; {EXPORT_AGAIN}", path=source
        )
    try:
        rows = pd.read_csv(io.StringIO("\n".join(body)), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, ValueError) as exc:
        raise InputError(
            f"malformed nvprof CSV ({str(exc).splitlines()[0]}); {EXPORT_AGAIN}", path=source
        ) from None
    lacking = [
        c for c in ("Device", "Kernel", "Invocations", "Metric Name", "Avg") if c not in rows
    ]
    if lacking:
        raise InputError(
            f"nvprof export without column(s) {', '.join(lacking)}; {EXPORT_AGAIN}", path=source
        )
    avg = to_float(rows["Avg"].str.rstrip("%"), "C")
    rows = rows.assign(value=avg)
    kernels = rows.drop_duplicates(["Device", "Kernel"])[["Device", "Kernel", "Invocations"]]
    table = _per_kernel(rows, kernels)
    _refuse_too_many(table, source)
    launches = table.loc[table.index.repeat(table["invocations"])].reset_index(drop=True)
    launches["launch_id"] = np.arange(len(launches))
    launches["source"] = source
    launches = schema.conform(launches)
    schema.add_note(launches, AGGREGATE_NOTE)
    schema.mark_missing(
        launches,
        {
            "duration_s": "nvprof --metrics exports carry no kernel time",
            "bytes_dram": "no dram_read_bytes/dram_write_bytes metrics",
            "ops": "no flop_count_* metrics",
        },
    )
    return Profile(
        source=source, format=InputFormat.NVPROF_METRICS, launches=launches, notes=[AGGREGATE_NOTE]
    )


READER = Reader(
    "nvprof metrics", (InputFormat.NVPROF_METRICS,), sniff, read, carries=Carries.COUNTERS
)


def _refuse_too_many(table: pd.DataFrame, source: str) -> None:
    total = int(table["invocations"].sum())
    if total <= MAX_INVOCATIONS:
        return
    top = table.loc[table["invocations"].idxmax()]
    shown = top["kernel"][:60]
    raise InputError(
        f"nvprof export claims more than {MAX_INVOCATIONS:,} invocations (kernel {shown!r}: "
        f"{int(top['invocations']):,}{'+' if top['invocations'] > MAX_INVOCATIONS else ''}), "
        "more launches than rooflint repeats its per-kernel averages for; profile fewer "
        "iterations, or profile with Nsight Compute (`ncu --csv --page raw`)",
        path=source,
    )


def _per_kernel(rows: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    out = kernels.rename(columns={"Kernel": "kernel"}).reset_index(drop=True)
    out["device_name"] = out["Device"].str.replace(r"\s*\(\d+\)$", "", regex=True)
    counts = pd.to_numeric(out["Invocations"], errors="coerce").to_numpy(dtype="float64")
    # a count that is no whole number (text, "1e400", -3) reads as one invocation
    whole = np.isfinite(counts) & (counts >= 1) & (counts == np.floor(counts))
    out["invocations"] = np.where(whole, np.minimum(counts, MAX_INVOCATIONS + 1), 1).astype(
        np.int64
    )
    key = rows.set_index(["Device", "Kernel"])
    for metric, (column, factor) in METRICS.items():
        picked = key[key["Metric Name"] == metric]["value"] * factor
        values = pd.Series(picked.to_numpy(), index=picked.index.get_level_values(1))
        values = values[~values.index.duplicated()]
        mapped = out["kernel"].map(values)
        out[column] = mapped if column not in out else out[column].add(mapped, fill_value=np.nan)
    return out
