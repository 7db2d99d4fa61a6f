"""AMD profiler tables recognised by their header, and their identity columns found by meaning."""

from __future__ import annotations

import csv
import re

import numpy as np
import pandas as pd

# What a CSV header says a file is. Names, never file names, decide.
V1_RESULTS = "rocprof v1 results"
PMC_WIDE = "rocprof-compute pmc_perf"
PMC_LONG = "rocprofv3 counter collection"
KERNEL_TRACE = "rocprofv3 kernel trace"
AGENT_INFO = "rocprofv3 agent_info"
SYSINFO = "rocprof-compute sysinfo"
ROOFLINE = "rocprof-compute roofline"
STATS = "per-kernel statistics"

DISPATCH_KINDS = (V1_RESULTS, PMC_WIDE, PMC_LONG, KERNEL_TRACE)

# Hardware blocks whose counters appear as columns; a column named BLOCK_SOMETHING is a counter.
_COUNTER = re.compile(
    r"^(SQ|SQC|TA|TD|TCP|TCC|TCA|GRBM|SPI|CPC|CPF|GL2C|GL1C|GL1A|GL1CG|GCR|GCEA|CHA|CHC|RLC|"
    r"SDMA|UTCL1|UTCL2|GDS|GUS)_\w+$|^(FETCH_SIZE|WRITE_SIZE)$"
)

# Each role an identity column can play, with the spellings rocprof v1/v2/v3 and
# rocprof-compute use for it (compared lower-case with punctuation removed).
ROLES = {
    "dispatch": ("dispatchid", "index"),
    "correlation": ("correlationid",),
    "kernel": ("kernelname",),
    "gpu": ("gpuid", "agentid"),
    "pid": ("pid", "processid"),
    "grid": ("grd", "gridsize"),
    "grid_x": ("gridsizex",),
    "grid_y": ("gridsizey",),
    "grid_z": ("gridsizez",),
    "block": ("wgr", "workgroupsize"),
    "block_x": ("workgroupsizex",),
    "block_y": ("workgroupsizey",),
    "block_z": ("workgroupsizez",),
    "wave": ("wavesize", "wavefrontsize"),
    "start": ("beginns", "starttimestamp"),
    "end": ("endns", "endtimestamp"),
    "duration": ("durationns",),
    "guid": ("guid",),
    "range": ("range", "marker", "roctxrange"),
    "counter_name": ("countername",),
    "counter_value": ("countervalue",),
}


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def header_of(head: str) -> list[str]:
    """The first line of `head` split as CSV (empty when there is none)."""
    text = head.lstrip("\ufeff")
    first = text.split("\n", 1)[0].rstrip("\r")
    if not first.strip():
        return []
    try:
        return next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return []


def is_counter(name: str) -> bool:
    return bool(_COUNTER.match(re.sub(r"\[\d+\]$", "", str(name))))


def classify(header: list[str]) -> str | None:
    """The kind of AMD profiler table a CSV header belongs to, or None."""
    names = {norm(h) for h in header}
    if not names:
        return None
    if (
        "countername" in names
        and "countervalue" in names
        and ("dispatchid" in names or "correlationid" in names)
    ):
        return PMC_LONG
    if "agenttype" in names and ({"cucount", "gfxtargetversion", "nodeid"} & names):
        return AGENT_INFO
    if {"gpuarch", "gpusoc"} & names and ({"workloadname", "cupergpu", "numcu"} & names):
        return SYSINFO
    if "hbmbw" in names and any(n.endswith("flops") for n in names):
        return ROOFLINE
    if "calls" in names and {"totaldurationns", "averagens"} & names:
        return STATS
    if "kernelname" not in names:
        return None
    if "index" in names and ({"gpuid", "grd", "queueid"} & names):
        return V1_RESULTS
    counters = any(is_counter(h) for h in header)
    if "dispatchid" in names and counters:
        return PMC_WIDE
    if {"starttimestamp", "endtimestamp"} <= names and ("kind" in names or not counters):
        return KERNEL_TRACE
    if "dispatchid" in names and ("gpuid" in names or "gridsize" in names):
        return PMC_WIDE
    return None


def roles(columns) -> dict[str, str]:
    """Map each identity role to the first column that plays it."""
    found: dict[str, str] = {}
    by_norm: dict[str, str] = {}
    for col in columns:
        by_norm.setdefault(norm(col), col)
    for role, spellings in ROLES.items():
        for spelling in spellings:
            if spelling in by_norm:
                found[role] = by_norm[spelling]
                break
    return found


_CLONE = re.compile(r"\s*(\[clone \.kd\]|\(\.kd\))\s*$")


def clean_kernel(names: pd.Series) -> pd.Series:
    """Kernel names without the code-object suffixes rocprof appends (' [clone .kd]', '.kd')."""
    codes, uniques = pd.factorize(names.astype("string"))  # traces repeat a few names a lot
    text = pd.Series(uniques, dtype="string").str.strip().str.strip('"')
    text = text.str.replace(_CLONE, "", regex=True).str.replace(r"\.kd$", "", regex=True)
    values = np.append(text.to_numpy(dtype=object), pd.NA)  # code -1 (no name) takes the NA
    return pd.Series(values[codes], index=names.index, dtype="string")


def numeric(values) -> pd.Series:
    return pd.to_numeric(values, errors="coerce").astype("float64")


def count(values) -> pd.Series:
    """Whole numbers (sizes, ids) as Int64; values no launch can have (inf, > 2**53) become NA."""
    number = numeric(values)
    return number.where(number.abs() < 2.0**53).round().astype("Int64")


def agent_number(values: pd.Series) -> pd.Series:
    """Agent ids as integers: rocprofv3 writes 4 in ROCm 6.2/6.3 and "Agent 4" from 6.4 on."""
    text = values.astype("string").str.extract(r"(\d+)", expand=False)
    return pd.to_numeric(text, errors="coerce").astype("Int64")


def shape_text(frame: pd.DataFrame, found: dict[str, str], kind: str) -> pd.Series:
    """Grid or block as "(x, y, z)" when the three sizes are known, else the total as printed."""
    axes = [found.get(f"{kind}_{a}") for a in "xyz"]
    n = len(frame)
    if all(axes):
        xyz = [count(frame[a]).astype("string") for a in axes]
        text = "(" + xyz[0] + ", " + xyz[1] + ", " + xyz[2] + ")"
        return text.where(xyz[0].notna(), pd.NA)
    if kind in found:
        return count(frame[found[kind]]).astype("string")
    return pd.Series(pd.array([pd.NA] * n, dtype="string"), index=frame.index)


def durations_s(frame: pd.DataFrame, found: dict[str, str]) -> pd.Series:
    """End - Start in seconds (nanosecond timestamps); DurationNs when there are no timestamps."""
    if "start" in found and "end" in found:
        start = pd.to_numeric(frame[found["start"]], errors="coerce")
        end = pd.to_numeric(frame[found["end"]], errors="coerce")
        # Timestamps near 1e16 ns exceed float64's exact range: subtract as integers first.
        dur = (end - start).astype("float64") * 1e-9
    elif "duration" in found:
        dur = numeric(frame[found["duration"]]) * 1e-9
    else:
        return pd.Series(np.nan, index=frame.index)
    return dur.where(dur >= 0)
