"""Dispatch tables (wide, long, trace) -> one canonical row per kernel launch."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import schema

from . import rocprof_columns as cols
from .rocprof_counters import USED, Counters, base_name, derive, infer_arch
from .rocprof_device import RDNA_PREFIXES, DeviceInfo

QUANTITIES = ["duration_s", "bytes_dram", "bytes_l2", "bytes_l1", "bytes_lds"]


@dataclass
class Table:
    """One row per dispatch: identity and counter columns, durations, and what happened on the
    way."""

    frame: pd.DataFrame
    duration_s: pd.Series
    duration_reason: str = "no timestamps in this file"
    counters: bool = True  # False for a kernel trace: there are no counters to look for
    notes: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)

    @property
    def found(self) -> dict[str, str]:
        return cols.roles(self.frame.columns)


def _key(found: dict[str, str]) -> list[str]:
    lead = found.get("dispatch") or found.get("correlation")
    return [lead] + [found[r] for r in ("gpu", "guid") if r in found] if lead else []


def wide(frame: pd.DataFrame, name: str) -> Table:
    """A table with one row per dispatch, except that merged pmc passes may repeat a dispatch."""
    found = cols.roles(frame.columns)
    durations = cols.durations_s(frame, found)
    table = Table(frame, durations)
    key = _key(found)
    if not key or not frame.duplicated(key).any():
        return table
    key = _separate_processes(frame, key, found)
    kernel = found.get("kernel")
    if kernel and _mixed(frame, key, kernel):
        table.notes.append(f"{name}: dispatch ids repeat with different kernels; every row kept")
        return table
    grouped = frame.groupby(key, sort=False, dropna=False)
    # The same dispatch in several rows: one row per pmc pass. Each pass brings its own
    # counters; take each column's first value and the median of the passes' durations.
    merged = frame.assign(__dur=durations).groupby(key, sort=False, dropna=False)
    out = merged.first()
    out["__dur"] = merged["__dur"].median()
    out = out.reset_index()
    extra = len(frame) - len(out)
    repeated = int((grouped.size() > 1).sum())
    table.frame = out.drop(columns="__dur")
    table.duration_s = out["__dur"]
    table.repairs.append(
        f"{name}: merged {extra} duplicate rows into {repeated} dispatches "
        "(the same dispatch in several pmc passes)"
    )
    table.notes.append(f"{name}: durations of merged dispatches are the median over their passes")
    return table


def _separate_processes(frame, key, found):
    """Add the process id to the key when dispatch ids alone mix kernels of different processes."""
    kernel, pid = found.get("kernel"), found.get("pid")
    if kernel and pid and pid not in key and _mixed(frame, key, kernel):
        return key + [pid]
    return key


def _mixed(frame: pd.DataFrame, key: list[str], column: str) -> bool:
    """Whether some key has more than one value of `column` (integer codes: fast on big tables)."""
    codes = pd.factorize(frame[column])[0]
    groups = frame.groupby(key, sort=False, dropna=False).ngroup().to_numpy()
    per = pd.DataFrame({"g": groups, "c": codes}).groupby("g")["c"]
    return bool((per.min() != per.max()).any())


def long(frame: pd.DataFrame, name: str) -> Table:
    """rocprofv3 / rocpd counter rows (one per counter per dispatch), pivoted to one per dispatch.

    Only counters the formulas read are pivoted (see rocprof_counters.USED): a rocprof-compute
    collection carries ~2,000 counters per dispatch.
    """
    found = cols.roles(frame.columns)
    key = _separate_processes(frame, _key(found), found)
    cname, cvalue = found["counter_name"], found["counter_value"]
    notes, repairs = [], []
    groups = frame.groupby(key, sort=False, dropna=False).ngroup().to_numpy()
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    first = np.unique(groups, return_index=True)[1]  # groups are numbered by first appearance
    identity_cols = [c for c in frame.columns if c not in (cname, cvalue)]
    wide_frame = frame[identity_cols].iloc[first].reset_index(drop=True)
    names = frame[cname].astype("string").str.strip()
    codes, uniques = pd.factorize(names)
    wanted = np.array([base_name(str(u)) in USED for u in uniques], dtype=bool)
    keep = (codes >= 0) & wanted[codes] if len(uniques) else np.zeros(len(codes), dtype=bool)
    values = cols.numeric(frame[cvalue]).to_numpy()
    if keep.any():
        columns = np.flatnonzero(wanted)
        position = np.full(len(uniques), -1)
        position[columns] = np.arange(len(columns))
        cell = groups[keep] * len(columns) + position[codes[keep]]
        count = np.bincount(cell, minlength=n_groups * len(columns))
        valid = ~np.isnan(values[keep])
        total = np.bincount(
            cell[valid], weights=values[keep][valid], minlength=n_groups * len(columns)
        )
        seen = np.bincount(cell[valid], minlength=n_groups * len(columns))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(seen > 0, total / np.maximum(seen, 1), np.nan)
        pivot = pd.DataFrame(
            mean.reshape(n_groups, len(columns)), columns=[str(uniques[i]) for i in columns]
        )
        wide_frame = pd.concat([wide_frame, pivot], axis=1)
        repeats = int((count > 1).sum())
        if repeats:
            repairs.append(
                f"{name}: averaged repeated readings of {repeats} (dispatch, counter) "
                "pairs (the same counter for the same dispatch in several rows)"
            )
    durations = pd.Series(np.nan, index=wide_frame.index)
    if "start" in found and "end" in found:
        stamps = pd.DataFrame(
            {
                "g": groups,
                "start": pd.to_numeric(frame[found["start"]], errors="coerce"),
                "end": pd.to_numeric(frame[found["end"]], errors="coerce"),
            }
        )
        stamps = stamps.drop_duplicates()
        stamps["dur"] = (stamps["end"] - stamps["start"]).astype("float64") * 1e-9
        stamps = stamps[stamps["dur"] >= 0]
        per = stamps.groupby("g")["dur"]
        durations = per.median().reindex(range(n_groups)).reset_index(drop=True)
        passes = int(per.size().max()) if len(stamps) else 0
        if passes > 1:
            notes.append(
                f"{name}: each dispatch was timed in up to {passes} profiling passes; "
                "duration is the median of its passes"
            )
    return Table(wide_frame, durations, notes=notes, repairs=repairs)


def trace(frame: pd.DataFrame) -> Table:
    """A kernel trace: dispatches with timestamps and no counters."""
    found = cols.roles(frame.columns)
    return Table(frame, cols.durations_s(frame, found), counters=False)


def join_trace(table: Table, trace_frame: pd.DataFrame, trace_name: str) -> None:
    """Durations for a counter table without timestamps, from the kernel trace of the same run.

    Matched on dispatch id (and agent when both name one); a match counts only when the kernel
    names agree too, so a trace from another run cannot lend its timings by accident.
    """
    found, tfound = table.found, cols.roles(trace_frame.columns)
    if "dispatch" not in found or "dispatch" not in tfound or "kernel" not in tfound:
        table.duration_reason = (
            f"no timestamps in this file and {trace_name} has no dispatch ids to join on"
        )
        return
    ours = pd.DataFrame(
        {
            "__id": cols.numeric(table.frame[found["dispatch"]]),
            "__kernel": cols.clean_kernel(table.frame[found["kernel"]]),
        }
    )
    theirs = pd.DataFrame(
        {
            "__id": cols.numeric(trace_frame[tfound["dispatch"]]),
            "__tkernel": cols.clean_kernel(trace_frame[tfound["kernel"]]),
            "__dur": cols.durations_s(trace_frame, tfound),
        }
    )
    on = ["__id"]
    if "gpu" in found and "gpu" in tfound:
        ours["__gpu"] = cols.agent_number(table.frame[found["gpu"]])
        theirs["__gpu"] = cols.agent_number(trace_frame[tfound["gpu"]])
        on.append("__gpu")
    theirs = theirs.drop_duplicates(on)
    joined = ours.merge(theirs, on=on, how="left")
    same = (joined["__kernel"] == joined["__tkernel"]).fillna(False).to_numpy(dtype=bool)
    table.duration_s = joined["__dur"].where(same)
    if same.any():
        table.notes.append(f"durations joined from {trace_name} on dispatch id")
    table.duration_reason = (
        f"no timestamps in this file and no dispatch with the same kernel in {trace_name}"
    )


def canonical(
    table: Table, source: str, device: DeviceInfo, arch_option: str | None, omniperf: bool
) -> tuple[pd.DataFrame, list[str]]:
    """The canonical launch table for `table`, and file-level notes about how it was built."""
    frame = table.frame.reset_index(drop=True)
    found = cols.roles(frame.columns)
    notes = list(table.notes)
    ident = pd.DataFrame(index=frame.index)
    ident["source"] = source
    ident["launch_id"], id_note = _launch_ids(frame, found)
    if id_note:
        notes.append(id_note)
    ident["process_id"] = (
        pd.to_numeric(frame[found["pid"]], errors="coerce") if "pid" in found else np.nan
    )
    ident["kernel"] = cols.clean_kernel(frame[found["kernel"]]) if "kernel" in found else pd.NA
    ident["grid"] = cols.shape_text(frame, found, "grid")
    ident["block"] = cols.shape_text(frame, found, "block")
    ident["range"] = frame[found["range"]].astype("string") if "range" in found else pd.NA
    ident["duration_s"] = table.duration_s.to_numpy()
    gfx, product, wave, arch_note = _devices(frame, found, device, arch_option, omniperf)
    if arch_note:
        notes.append(arch_note)
    ident["arch"] = gfx
    ident["device_name"] = product.fillna(gfx)
    parts, order = [], []
    for arch, rows in _groups(gfx):
        sub = frame.iloc[rows]
        part = ident.iloc[rows].copy()
        reasons = {"duration_s": table.duration_reason}
        if table.counters:
            derived = derive(
                sub.reset_index(drop=True),
                arch,
                wave.iloc[rows].reset_index(drop=True),
                device.lds_banks_per_cu,
            )
            for column, values in derived.columns.items():
                part[column] = values.to_numpy()
            reasons.update(derived.reasons)
            row_notes = derived.notes
        else:
            reasons.update(_trace_reasons())
            row_notes = []
        part = schema.conform(part)
        part = schema.mark_missing(part, reasons)
        for note, where in _combined(row_notes, len(part)):
            part = schema.add_note(part, note, where)
        parts.append(part)
        order.append(rows)
    if not parts:
        return schema.empty(), notes
    result = schema.concat(parts, ignore_index=True)
    result = result.iloc[np.argsort(np.concatenate(order), kind="stable")].reset_index(drop=True)
    return result, notes


def _combined(notes: list[tuple[str, np.ndarray]], n: int):
    """One (text, rows) per distinct combination of notes: add_note is O(rows) per call."""
    if not notes:
        return
    texts = [text for text, _ in notes]
    bits = np.zeros(n, dtype=np.int64)
    for i, (_, where) in enumerate(notes):
        bits |= np.asarray(where, dtype=bool).astype(np.int64) << i
    for combo in np.unique(bits[bits > 0]):
        chosen = [texts[i] for i in range(len(texts)) if combo >> i & 1]
        yield "; ".join(chosen), bits == combo


def _trace_reasons() -> dict[str, str]:
    why = "kernel trace only: no counters (profile with rocprofv3 --pmc)"
    return {"ops": why, "bytes_dram": why, "bytes_l2": why, "bytes_l1": why, "bytes_lds": why}


def _groups(gfx: pd.Series):
    """Row positions of each architecture (NA included), in order of first appearance."""
    codes, uniques = pd.factorize(gfx.astype(object), use_na_sentinel=False)
    for i, value in enumerate(uniques):
        arch = (
            None
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))
            else str(value)
        )
        yield arch, np.flatnonzero(codes == i)


def _launch_ids(frame: pd.DataFrame, found: dict[str, str]) -> tuple[pd.Series, str]:
    column = found.get("dispatch") or found.get("correlation")
    if column:
        ids = pd.to_numeric(frame[column], errors="coerce")
        if ids.notna().all() and ids.is_unique:
            return ids, ""
        why = "missing" if ids.isna().any() else "not unique"
        return pd.Series(np.arange(len(frame))), (
            f"dispatch ids {why} in this file; launch_id is the row number"
        )
    return pd.Series(
        np.arange(len(frame))
    ), "no dispatch ids in this file; launch_id is the row number"


def _devices(frame, found, device: DeviceInfo, arch_option, omniperf):
    """Per row: gfx name, product name, wave size; and a note when the gfx name was inferred."""
    n = len(frame)
    gfx = pd.Series(pd.array([pd.NA] * n, dtype="string"))
    product = pd.Series(pd.array([pd.NA] * n, dtype="string"))
    wave = pd.Series(np.nan, index=range(n))
    note = ""
    if device.agents is not None and "gpu" in found:
        ids = cols.agent_number(frame[found["gpu"]]).astype("float64").to_numpy()
        agents = device.agents
        for key in ("node", "logical"):
            table = agents.dropna(subset=[key]).drop_duplicates(key).set_index(key)
            hit = pd.Series(ids).map(table["gfx"])
            if hit.notna().any():
                gfx = gfx.fillna(hit.astype("string"))
                product = product.fillna(pd.Series(ids).map(table["product"]).astype("string"))
                wave = wave.fillna(pd.Series(ids).map(table["wave"]))
                break
    if device.gfx:
        gfx = gfx.fillna(device.gfx)
    if device.product:
        product = product.fillna(device.product)
    if gfx.isna().any():
        guess = infer_arch_of(frame, omniperf)
        if guess:
            gfx = gfx.fillna(guess)
            note = (
                f"arch {guess} inferred from the counter names in this file; the run's "
                "agent_info.csv (rocprofv3) or sysinfo.csv (rocprof-compute) beside it names "
                "the GPU, and --device ID (see `rooflint devices`) picks its ceilings"
            )
    if arch_option:
        gfx = pd.Series(pd.array([arch_option] * n, dtype="string"))
        note = ""
    if "wave" in found:
        own = cols.numeric(frame[found["wave"]])
        wave = own.where(own > 0).fillna(wave)
    if device.wave_size:
        wave = wave.fillna(float(device.wave_size))
    rdna = gfx.fillna("").str.startswith(RDNA_PREFIXES).to_numpy(dtype=bool)
    wave = wave.fillna(pd.Series(np.where(rdna, 32.0, 64.0)))
    return (
        gfx.reset_index(drop=True),
        product.reset_index(drop=True),
        wave.reset_index(drop=True),
        note,
    )


def infer_arch_of(frame: pd.DataFrame, omniperf: bool) -> str | None:
    return infer_arch(Counters(frame), omniperf)
