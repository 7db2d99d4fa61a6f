"""AMD profiles: rocprof v1/v2, rocprofv3 (CSV and rocpd), rocprof-compute workloads, by content.

Reads rocprof v1 results.csv and results.db, rocprof-compute / Omniperf pmc_perf.csv (wide and
long), rocprofv3 counter collections (joined with their kernel trace for durations), kernel
traces, rocpd databases, and whole rocprof-compute workload or rocprofv3 output folders.
sysinfo.csv, agent_info.csv and roofline.csv supply device facts and measured ceilings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.core.profile import HIDDEN, InputFormat, Profile, is_hidden
from rooflint.core.reader import Carries, Reader

from . import rocprof_columns as cols
from . import rocprof_sqlite as db
from . import rocprof_tables as tables
from .compressed import csv_source
from .rocprof_device import DeviceInfo, read_agent_info, read_roofline, read_sysinfo
from .sniff import SQLITE, head_text

FOLDER_HINT = "pass the workload folder, its pmc_perf.csv, or a rocprofv3 *_counter_collection.csv"
_REFUSALS = {
    cols.SYSINFO: "holds no kernel dispatches (it is a rocprof-compute sysinfo file); pass the "
    "workload folder or its pmc_perf.csv",
    cols.AGENT_INFO: "holds no kernel dispatches (it is a rocprofv3 agent_info file); pass the "
    "rocprofv3 output folder or its *_counter_collection.csv / *_kernel_trace.csv",
}


def sniff(path: Path, head: str) -> bool:
    """An AMD profiler table (or a file that goes with one), recognised by its header."""
    if head == SQLITE:
        return db.kind(Path(path)) is not None
    if head.startswith("\x00"):
        return False
    return cols.classify(cols.header_of(head)) is not None


def sniff_folder(path: Path) -> bool:
    """A rocprof-compute workload (pmc_perf.csv at its top) or a rocprofv3 output folder (a run's
    agent_info.csv beside its counter collection or kernel trace, or a rocpd database, at its
    top or in its host subfolders). A folder that merely contains such files deeper down, or a
    sysinfo.csv alone, is not one: its files are read one by one."""
    folder = Path(path)
    if _workload_table(folder) is not None:
        return True
    files = _folder_files(folder)
    return bool(_v3_runs(files)) or any(kind == db.ROCPD for _, kind in files)


_DISPATCH = (cols.PMC_WIDE, cols.PMC_LONG, cols.V1_RESULTS)


def _workload_table(folder: Path) -> Path | None:
    """The pmc_perf.csv at the top of a rocprof-compute workload, if it is a dispatch table."""
    pmc = folder / "pmc_perf.csv"
    return pmc if pmc.is_file() and _kind(pmc) in _DISPATCH else None


def _v3_runs(files: list[tuple[Path, str]]) -> list[Path]:
    """Counter collections and kernel traces that have their run's agent_info.csv beside them."""
    agents = {
        (p.parent, p.name.removesuffix("agent_info.csv")) for p, k in files if k == cols.AGENT_INFO
    }
    runs = []
    for path, kind in files:
        for suffix in ("counter_collection.csv", "kernel_trace.csv"):
            if (
                kind in (cols.PMC_LONG, cols.KERNEL_TRACE)
                and path.name.endswith(suffix)
                and (path.parent, path.name.removesuffix(suffix)) in agents
            ):
                runs.append(path)
    return runs


def read(path, arch: str | None = None) -> Profile:
    """Read an AMD profile file or folder into a Profile (one canonical row per launch).

    `arch` (e.g. "gfx942") overrides the architecture found in or inferred from the input.
    """
    p = Path(path)
    source = str(path)
    if p.is_dir():
        return _read_folder(p, source, arch)
    head = head_text(p)
    if head == SQLITE:
        return _read_sqlite(p, source, arch)
    kind = cols.classify(cols.header_of(head))
    if kind in _REFUSALS:
        raise InputError(_REFUSALS[kind], path=source)
    if kind == cols.STATS:
        raise InputError(_stats_message(head), path=source)
    if kind == cols.ROOFLINE:
        return _ceilings_only(p, source)
    if kind not in cols.DISPATCH_KINDS:
        raise InputError(
            "not a rocprof table this reader knows (no dispatch id, kernel name or "
            f"counter columns in the header); {FOLDER_HINT}",
            path=source,
        )
    device, notes = _siblings(p, kind)
    table, fmt = _dispatch_table(p, kind, source)
    return _profile(table, source, fmt, device, notes, arch, kind)


READER = Reader(
    "rocprof",
    (
        InputFormat.ROCPROF_V1_RESULTS,
        InputFormat.ROCPROF_V1_DB,
        InputFormat.ROCPROF_COMPUTE_PMC,
        InputFormat.ROCPROF_COMPUTE_WORKLOAD,
        InputFormat.ROCPROF_COMPUTE_ROOFLINE,
        InputFormat.ROCPROFV3_COUNTER_COLLECTION,
        InputFormat.ROCPROFV3_KERNEL_TRACE,
        InputFormat.ROCPROFV3_FOLDER,
        InputFormat.ROCPD,
        InputFormat.ROCPD_FOLDER,
    ),
    sniff,
    read,
    options=("arch",),
    carries=Carries.COUNTERS,
    sniff_folder=sniff_folder,
)


def _stats_message(head: str) -> str:
    names = {cols.norm(h) for h in cols.header_of(head)}
    if "minns" in names or "stddev" in names:  # rocprofv3 kernel_stats.csv
        return (
            "holds per-kernel aggregates (rocprofv3 kernel_stats), not kernel launches; pass "
            "the *_kernel_trace.csv or *_counter_collection.csv written next to it"
        )
    return (
        "holds per-kernel aggregates (rocprof --stats summary), not kernel launches; pass the "
        "results.csv written next to it"
    )


def _read_csv(path: Path, source: str) -> pd.DataFrame:
    try:
        # pyarrow's reader is several times faster on the long (one row per counter) tables.
        frame = _parsed(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(
            f"cannot parse as CSV ({str(exc).splitlines()[0]}); export it again", path=source
        ) from None
    except pd.errors.EmptyDataError:
        raise InputError("file is empty; export the profile again", path=source) from None
    return _text_columns(frame)


def _parsed(path: Path) -> pd.DataFrame:
    """The CSV as a frame, with pyarrow; a field longer than its 1 MB block (a 10 MB kernel
    name: "straddling object") is read with pandas' own parser, which has no blocks."""
    try:
        return pd.read_csv(csv_source(path), engine="pyarrow")
    except pd.errors.ParserError as exc:
        if "straddling" not in str(exc):
            raise
    return pd.read_csv(csv_source(path), engine="c")


def _text_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """pyarrow keeps a column with non-UTF-8 bytes as binary: decode it (Latin-1 as the fallback,
    as the ncu reader does) so a stray byte in a kernel or counter name does not lose the file."""
    for col in frame.columns:
        values = frame[col]
        if values.dtype == object and isinstance(next(iter(values.dropna()), None), bytes):
            frame[col] = values.map(_decode, na_action="ignore").astype("string")
    return frame


def _decode(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _dispatch_table(path: Path, kind: str, source: str) -> tuple[tables.Table, InputFormat]:
    frame = _read_csv(path, source)
    if frame.empty:
        raise InputError(
            f"{kind} header but no dispatches; the run profiled no kernel", path=source
        )
    if kind == cols.PMC_LONG:
        table = tables.long(frame, path.name)
        fmt = InputFormat.ROCPROFV3_COUNTER_COLLECTION
        if table.duration_s.isna().all():
            _durations_from_trace(table, path)
        return table, fmt
    if kind == cols.KERNEL_TRACE:
        return tables.trace(frame), InputFormat.ROCPROFV3_KERNEL_TRACE
    fmt = (
        InputFormat.ROCPROF_V1_RESULTS
        if kind == cols.V1_RESULTS
        else InputFormat.ROCPROF_COMPUTE_PMC
    )
    table = tables.wide(frame, path.name)
    if kind == cols.V1_RESULTS and table.duration_s.isna().all():
        table.duration_reason = "no timestamps in this file (rocprof v1 run without --timestamp on)"
    return table, fmt


def _durations_from_trace(table: tables.Table, path: Path) -> None:
    """rocprofv3 writes PREFIX_counter_collection.csv next to PREFIX_kernel_trace.csv."""
    suffix = "counter_collection.csv"
    sibling = (
        path.with_name(path.name[: -len(suffix)] + "kernel_trace.csv")
        if path.name.endswith(suffix)
        else None
    )
    if sibling is None or not sibling.is_file() or _kind(sibling) != cols.KERNEL_TRACE:
        table.duration_reason = (
            "no timestamps in this file and no *_kernel_trace.csv of the same run next to it"
        )
        return
    tables.join_trace(table, _read_csv(sibling, str(sibling)), sibling.name)


def _kind(path: Path) -> str | None:
    try:
        head = head_text(path)
    except InputError:
        return None
    if head == SQLITE:
        return db.kind(path)
    return cols.classify(cols.header_of(head))


def _siblings(path: Path, kind: str) -> tuple[DeviceInfo, list[str]]:
    """Device facts written next to a dispatch table by the same run (checked by content)."""
    folder = path.parent
    if kind in (cols.PMC_LONG, cols.KERNEL_TRACE):
        for suffix in ("counter_collection.csv", "kernel_trace.csv"):
            if path.name.endswith(suffix):
                agent = folder / (path.name[: -len(suffix)] + "agent_info.csv")
                if agent.is_file() and _kind(agent) == cols.AGENT_INFO:
                    info = read_agent_info(agent)
                    return info, list(info.notes)
    sysinfo = folder / "sysinfo.csv"
    if sysinfo.is_file() and _kind(sysinfo) == cols.SYSINFO:
        info = read_sysinfo(sysinfo)
        return info, list(info.notes)
    return DeviceInfo(), []


def _profile(
    table: tables.Table,
    source: str,
    fmt: InputFormat,
    device: DeviceInfo,
    notes: list[str],
    arch: str | None,
    kind: str,
    sibling_roofline: bool = True,
) -> Profile:
    launches, more = tables.canonical(table, source, device, arch, omniperf=kind == cols.PMC_WIDE)
    profile = Profile(
        source=source,
        format=fmt,
        launches=launches,
        notes=notes + more,
        repairs=list(table.repairs),
        device_hints=device.hints(),
    )
    roofline = Path(source).parent / "roofline.csv"
    if sibling_roofline and roofline.is_file() and _kind(roofline) == cols.ROOFLINE:
        _attach_ceilings(profile, roofline)
    return profile


def _attach_ceilings(profile: Profile, roofline: Path) -> None:
    values, notes = read_roofline(roofline)
    profile.measured_ceilings = values
    profile.measured_source = f"measured: rocprof-compute roofline.csv ({roofline})"
    profile.notes.extend(notes)


def _ceilings_only(path: Path, source: str) -> Profile:
    profile = Profile(
        source=source,
        format=InputFormat.ROCPROF_COMPUTE_ROOFLINE,
        launches=schema.empty(),
        notes=[f"{path.name} holds measured ceilings only, no kernel launches"],
    )
    _attach_ceilings(profile, path)
    return profile


def _read_sqlite(path: Path, source: str, arch: str | None) -> Profile:
    kind = db.kind(path)
    if kind == db.V1_DB:
        frame = db.read_v1(path)
        if frame.empty:
            raise InputError(
                "results.db has no dispatches in table KERN; the run profiled no kernel",
                path=source,
            )
        table = tables.wide(frame, path.name)
        return _profile(
            table, source, InputFormat.ROCPROF_V1_DB, DeviceInfo(), [], arch, cols.V1_RESULTS
        )
    if kind == db.ROCPD:
        kernels, counters, device = db.read_rocpd(path)
        table = _rocpd_table(kernels, counters, path.name)
        return _profile(
            table, source, InputFormat.ROCPD, device, list(device.notes), arch, cols.PMC_LONG
        )
    raise InputError(
        f"an SQLite database but not a rocprof one (no KERN table, no rocpd views); {FOLDER_HINT}",
        path=source,
    )


def _rocpd_table(kernels: pd.DataFrame, counters: pd.DataFrame | None, name: str) -> tables.Table:
    if counters is None or counters.empty:
        return tables.trace(kernels)
    table = tables.long(counters, name)
    found = table.found
    key = [found["dispatch"]] + ([found["pid"]] if "pid" in found else [])
    frame = table.frame
    for column in key:  # ids SQLite stored as text in a damaged table: compare as numbers
        if frame[column].dtype != kernels[column].dtype:
            frame = frame.assign(**{column: pd.to_numeric(frame[column], errors="coerce")})
            kernels = kernels.assign(**{column: pd.to_numeric(kernels[column], errors="coerce")})
    merged = frame.merge(kernels, on=key, how="left")
    durations = cols.durations_s(merged, cols.roles(merged.columns))
    return tables.Table(merged, durations, notes=table.notes, repairs=table.repairs)


# --- folders ---------------------------------------------------------------------------------


def _folder_files(folder: Path) -> list[tuple[Path, str]]:
    """CSV and database files of a workload or rocprofv3 output folder (and its host subfolders)."""
    found = []
    candidates = sorted(folder.glob("*")) + sorted(folder.glob("*/*"))
    for path in candidates:
        if path.is_file() and path.suffix.lower() in (".csv", ".db"):
            kind = _kind(path)
            if kind:
                found.append((path, kind))
    return found


def _read_folder(folder: Path, source: str, arch: str | None) -> Profile:
    pmc = _workload_table(folder)
    if pmc is not None:
        return _read_workload(folder, pmc, source, arch)
    files = _folder_files(folder)
    by_kind: dict[str, list[Path]] = {}
    for path, kind in files:
        by_kind.setdefault(kind, []).append(path)
    device, notes = _folder_device(by_kind)
    runs = _v3_runs(files)
    long = [p for p in runs if _kind(p) == cols.PMC_LONG]
    if long:  # a kernel trace beside a counter collection only supplies its durations
        chosen, fmt = long, InputFormat.ROCPROFV3_FOLDER
    elif runs:
        chosen, fmt = runs, InputFormat.ROCPROFV3_FOLDER
    elif by_kind.get(db.ROCPD):
        chosen, fmt = by_kind[db.ROCPD], InputFormat.ROCPD_FOLDER
    else:
        raise InputError(
            "folder holds no kernel dispatches (no pmc_perf.csv, counter collection, "
            f"kernel trace or rocpd database); {FOLDER_HINT}",
            path=source,
        )
    profile = _merged(chosen, device, notes, arch, source, fmt)
    used = {
        *chosen,
        *_companions(chosen),
        *by_kind.get(cols.AGENT_INFO, [])[:1],
        *by_kind.get(cols.SYSINFO, [])[:1],
    }
    profile.files = [str(p) for p in sorted(used)]
    profile.skipped = _unread(
        folder, used, "not part of the rocprofv3 run(s) read from this folder"
    )
    return profile


def _read_workload(folder: Path, pmc: Path, source: str, arch: str | None) -> Profile:
    """A rocprof-compute workload: pmc_perf.csv, with its own sysinfo.csv and roofline.csv."""
    sysinfo, roofline = folder / "sysinfo.csv", folder / "roofline.csv"
    used = [pmc]
    device, notes = DeviceInfo(), []
    if sysinfo.is_file() and _kind(sysinfo) == cols.SYSINFO:
        device = read_sysinfo(sysinfo)
        notes = list(device.notes)
        used.append(sysinfo)
    profile = _merged([pmc], device, notes, arch, source, InputFormat.ROCPROF_COMPUTE_WORKLOAD)
    if roofline.is_file() and _kind(roofline) == cols.ROOFLINE:
        _attach_ceilings(profile, roofline)
        used.append(roofline)
    profile.files = [str(p) for p in used]
    profile.skipped = _unread(
        folder,
        set(used),
        "not read: a rocprof-compute workload is read from "
        "its pmc_perf.csv, sysinfo.csv and roofline.csv",
    )
    return profile


def _merged(chosen: list[Path], device: DeviceInfo, notes: list[str], arch, source, fmt) -> Profile:
    profiles = [_read_member(path, device, arch) for path in chosen]
    launches = schema.concat([p.launches for p in profiles], ignore_index=True)
    profile = Profile(
        source=source, format=fmt, launches=launches, notes=notes, device_hints=device.hints()
    )
    for member in profiles:
        profile.notes.extend(n for n in member.notes if n not in profile.notes)
        profile.repairs.extend(member.repairs)
        if not profile.device_hints:
            profile.device_hints = member.device_hints
    return profile


def _companions(chosen: list[Path]) -> list[Path]:
    """The kernel traces whose durations a counter collection of the same run took."""
    out = []
    for path in chosen:
        if path.name.endswith("counter_collection.csv"):
            trace = path.with_name(
                path.name.removesuffix("counter_collection.csv") + "kernel_trace.csv"
            )
            if trace.is_file():
                out.append(trace)
    return out


def _unread(folder: Path, used: set[Path], reason: str) -> list[tuple[str, str]]:
    """Every file under `folder` that was not read, with the reason (hidden files included)."""
    out = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            if path not in used:
                out.append((str(path), HIDDEN if is_hidden(path) else reason))
    return out


def _folder_device(by_kind: dict[str, list[Path]]) -> tuple[DeviceInfo, list[str]]:
    if by_kind.get(cols.SYSINFO):
        info = read_sysinfo(by_kind[cols.SYSINFO][0])
        return info, list(info.notes)
    if by_kind.get(cols.AGENT_INFO):
        info = read_agent_info(by_kind[cols.AGENT_INFO][0])
        return info, list(info.notes)
    return DeviceInfo(), []


def _read_member(path: Path, device: DeviceInfo, arch: str | None) -> Profile:
    kind = _kind(path)
    source = str(path)
    if kind in (db.ROCPD, db.V1_DB):
        return _read_sqlite(path, source, arch)
    table, fmt = _dispatch_table(path, kind, source)
    return _profile(table, source, fmt, device, [], arch, kind, sibling_roofline=False)
