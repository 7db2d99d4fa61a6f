"""Nsight Compute report files (.ncu-rep), read with NVIDIA's `ncu_report` module (no GPU)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import multiprocessing
import os
import re
import struct
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core.errors import InputError, UnsupportedFormatError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from . import ncu_metrics as metrics
from .sniff import NCU_REP, NCU_REP_MAGIC
from .values import unit_scale

INSTALL_HINT = (
    "this is an Nsight Compute report (.ncu-rep); install `rooflint[ncu-rep]` to read it "
    "directly, or export it with `ncu --import FILE.ncu-rep --csv --page raw --print-units base`"
)
TRUNCATED = "report is truncated or damaged (it ends inside a block); copy or save it again"
DAMAGED = "report is damaged (ncu_report could not read any of its results); copy or save it again"
# ncu-report 2025.3.1 crashes (SIGSEGV in IMetric.unit) once pandas is loaded; 2026.2.0 on work.
MIN_VERSION = (2026, 2)
_TEXT = "device__attribute_display_name"
_CC = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")
_GRID = tuple(f"launch__grid_dim_{a}" for a in "xyz")
_BLOCK = tuple(f"launch__block_dim_{a}" for a in "xyz")
# ncu_metrics words its fallback notes for printed CSV values; report values are not rounded.


def available() -> bool:
    """Whether NVIDIA's `ncu_report` module can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("ncu_report") is not None
    except (ImportError, ValueError):  # ValueError: a module entry without a spec
        return False


def sniff(path: Path, head: str) -> bool:
    """A report by its magic bytes; claimed only when it can be read, so that otherwise the
    caller's "install rooflint[ncu-rep] or export a CSV" message is what the user sees."""
    return head == NCU_REP and available()


def read(path) -> Profile:
    """Read every result of every range of an .ncu-rep into a Profile (one row per launch).

    Where processes fork, the report is read in a child: NVIDIA's library aborts the whole
    process on some damaged reports (a fuzzed copy of a real one made it), and a child that
    dies is one input that could not be read, not the end of the run."""
    if "fork" not in multiprocessing.get_all_start_methods() or (
        multiprocessing.current_process().daemon
    ):
        return _read(path)
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=1, mp_context=fork) as child:
        try:
            return child.submit(_read, path).result()
        except BrokenProcessPool:
            raise InputError(
                "ncu_report crashed reading the report (it is damaged); copy or save it "
                "again, or export it with `ncu --import FILE.ncu-rep --csv --page raw "
                "--print-units base`",
                path=str(path),
            ) from None


READER = Reader(
    "Nsight Compute report", (InputFormat.NCU_REP,), sniff, read, carries=Carries.COUNTERS
)


def _read(path) -> Profile:
    source = str(path)
    with _library_quiet():
        context = _load(path, source)
        ranges, actions = _actions(context)  # SWIG proxies: keep the parents referenced
        if not actions:
            raise InputError(_empty_message(Path(path)), path=source)
        records = [_record(action) for action in actions]
    walked = _walk(Path(path))
    pids = None if walked is None else walked[0]
    if pids is not None and len(pids) == len(records):  # each result's, before any is left out
        pids = [pid for pid, r in zip(pids, records, strict=True) if not _unread(r)]
    repairs = _unread_results(records, source, cut=walked is None)
    if walked is not None and not walked[1]:
        repairs.append(
            "report ends before the device block ncu writes after the first result (cut at a "
            "block boundary?): results after the cut are missing; copy or save it again"
        )
    wide = pd.DataFrame(
        [r.pop("metrics") for r in records], index=pd.RangeIndex(len(records)), dtype="float64"
    )
    identity = pd.DataFrame(records)
    identity["launch_id"] = np.arange(len(records))
    notes: list[str] = []
    if pids is not None and len(pids) == len(records):
        identity["process_id"] = pids
    else:
        identity["process_id"] = pd.NA
        notes.append("process IDs not found in the report's blocks; process_id left empty")
    launches = _table(wide, identity, source, notes)
    return Profile(
        source=source, format=InputFormat.NCU_REP, launches=launches, notes=notes, repairs=repairs
    )


def _unread(record: dict) -> bool:
    """A result ncu_report loaded empty (no kernel name, no metric): a block it could not parse,
    cut short or damaged."""
    return not record["kernel"] and not record["kernel_mangled"] and not record["metrics"]


def _unread_results(records: list[dict], source: str, cut: bool) -> list[str]:
    """The repairs of a report whose results ncu_report loaded empty (a copy cut short: its
    container ends inside a block; or a damaged block: a byte changed in a real report made
    its one result empty): those results are left out of `records`, and why is said; none left
    is an InputError."""
    empty = [r for r in records if _unread(r)]
    records[:] = [r for r in records if not _unread(r)]
    if not records:
        raise InputError(TRUNCATED if cut else DAMAGED, path=source)
    left_out = f": {len(empty)} result(s) cut short left out" if empty else ""
    if cut:
        return [
            "report ends inside a block (a truncated copy?): results after the cut are "
            f"missing{left_out}; copy or save it again"
        ]
    if not empty:
        return []
    return [
        f"{len(empty)} result(s) ncu_report could not read (a damaged block) left out; copy or "
        "save the report again"
    ]


@contextmanager
def _library_quiet() -> Iterator[None]:
    """File descriptor 2 sent to the null device while NVIDIA's library reads: on a damaged
    report its C++ logging (absl: "WARNING: All log messages before absl::InitializeLog() ...",
    "E0000 ... Can't parse message of type NV.Profiler.Messages.ProfileResult ...") went to
    stderr before rooflint's one-line error. What it could not read is said by the repairs or
    the error. Python's own stderr is flushed first, so nothing of ours is lost."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to protect
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _load(path, source: str):
    try:
        import ncu_report
    except ImportError:
        raise UnsupportedFormatError(INSTALL_HINT, path=source) from None
    if too_old():
        raise UnsupportedFormatError(
            f"ncu-report {importlib.metadata.version('ncu-report')} is too old to "
            "read reports safely; upgrade it: pip install -U "
            f"'ncu-report>={'.'.join(map(str, MIN_VERSION))}'",
            path=source,
        )
    try:
        return ncu_report.load_report(str(path))
    except (OSError, RuntimeError, ValueError) as exc:
        raise InputError(
            f"ncu_report cannot load the report ({exc}); re-export it with ncu", path=source
        ) from None


def too_old() -> bool:
    """Whether the installed ncu-report predates MIN_VERSION (False for a module taken from an
    Nsight Compute install's extras/python folder, which has no package metadata)."""
    try:
        text = importlib.metadata.version("ncu-report")
    except importlib.metadata.PackageNotFoundError:
        return False
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2]) < MIN_VERSION


def _actions(context) -> tuple[list, list]:
    ranges = [context.range_by_idx(r) for r in range(context.num_ranges())]
    return ranges, [rng.action_by_idx(i) for rng in ranges for i in range(rng.num_actions())]


def _empty_message(path: Path) -> str:
    if result_process_ids(path) is None:
        return TRUNCATED
    return (
        "report holds no profiled kernels; check the ncu --kernel-name/--launch-skip filters and "
        "that the application launched kernels"
    )


def _record(action) -> dict:
    """Identity fields and the wanted numeric metrics (in SI base units) of one result."""
    values: dict[str, float] = {}
    text = pd.NA
    for name in _wanted(action.metric_names()):
        metric = action.metric_by_name(name)
        if name == _TEXT:
            text = metric.as_string() or pd.NA
        elif metric.kind() != metric.ValueKind_STRING and metric.has_value():
            values[name] = metric.as_double() * unit_scale(metric.unit())
    extra = {n: _number(action, n) for n in _GRID + _BLOCK + _CC}
    return {
        "kernel": action.name(action.NameBase_DEMANGLED),
        "kernel_mangled": action.name(action.NameBase_MANGLED),
        "grid": _dims(extra, _GRID),
        "block": _dims(extra, _BLOCK),
        "device_name": text,
        "arch": _dims(extra, _CC, "{}.{}"),
        "range": _nvtx(action.nvtx_state()),
        "metrics": values,
    }


_WANTED_CACHE: dict[tuple, list[str]] = {}


def _wanted(names: tuple) -> list[str]:
    # Results of one report share their metric list; filter it once, not per launch.
    if names not in _WANTED_CACHE:
        _WANTED_CACHE.clear()
        _WANTED_CACHE[names] = [n for n in names if metrics.wanted(n)]
    return _WANTED_CACHE[names]


def _number(action, name: str) -> int | None:
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_value():
        return None
    return int(metric.as_double())


def _dims(values: dict, names: tuple, form: str = "({}, {}, {})"):
    """ "(x, y, z)" as ncu prints launch dimensions (or "major.minor"); NA if a part is missing."""
    parts = [values[n] for n in names]
    return pd.NA if None in parts else form.format(*parts)


def _nvtx(state):
    """NVTX ranges as "outer/inner", domains dropped, push/pop ranges before start/end ranges:
    the same text the CSV reader makes from ncu's Push/Pop and Start/Stop columns."""
    if state is None:
        return pd.NA
    domains = [state.domain_by_id(d) for d in state.domains()]
    names = [n for d in domains for n in d.push_pop_ranges()] + [
        n for d in domains for n in d.start_end_ranges()
    ]
    return "/".join(names) or pd.NA


def _table(
    wide: pd.DataFrame, identity: pd.DataFrame, source: str, notes: list[str]
) -> pd.DataFrame:
    return metrics.launch_table([wide], {c: identity[c] for c in identity.columns}, source, notes)


def result_process_ids(path: Path) -> list[int] | None:
    """The process ID of every result, in file order, from the report's container; None when
    the container cannot be walked (truncated or unknown layout)."""
    walked = _walk(path)
    return None if walked is None else walked[0]


# A block's inline message (field 3) whose first field is 6: the device attributes, which ncu
# writes after the first result (with the other session blocks: every real report under
# fixtures/ and shared/fixtures has it there).
_DEVICE_BLOCK = b"\x32"


def _walk(path: Path) -> tuple[list[int], bool] | None:
    """(the process ID of every result, whether a device block was seen); None when the
    container cannot be walked (truncated or unknown layout).

    `ncu_report` does not expose the process, but the container does: after the magic, a
    u32-sized file header, then blocks of (u32 size, BlockHeader protobuf, payload). A
    BlockHeader carries NumResults (field 2), PayloadSize (field 5) and the ProcessInfo
    message (field 6) whose field 1 is the process ID.
    """
    pids: list[int] = []
    device = False
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != NCU_REP_MAGIC:
                return None
            fh.seek(_u32(fh), 1)
            while size := fh.read(4):
                expected = _u32_of(size)
                header = fh.read(expected)
                if len(header) != expected:
                    return None
                fields = _protobuf_fields(header)
                results, payload = fields.get(2, 0), fields.get(5, 0)
                if results:
                    pid = _protobuf_fields(fields.get(6, b"")).get(1)
                    pids.extend([pid] * results)
                inline = fields.get(3, b"")
                device = device or (isinstance(inline, bytes) and inline[:1] == _DEVICE_BLOCK)
                fh.seek(payload, 1)
            if fh.tell() > Path(path).stat().st_size:
                return None
    except (OSError, ValueError, IndexError, struct.error):
        return None
    return pids, device


def _u32(fh) -> int:
    return _u32_of(fh.read(4))


def _u32_of(raw: bytes) -> int:
    return struct.unpack("<I", raw)[0]


def _protobuf_fields(data: bytes) -> dict[int, int | bytes]:
    """Top-level fields of a protobuf message: field number -> varint or bytes (last one wins)."""
    out: dict[int, int | bytes] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        kind = key & 7
        if kind == 0:
            value, i = _varint(data, i)
        elif kind == 2:
            length, i = _varint(data, i)
            value, i = data[i : i + length], i + length
        elif kind in (1, 5):
            width = 8 if kind == 1 else 4
            value, i = data[i : i + width], i + width
        else:
            raise ValueError(f"protobuf wire type {kind}")
        out[key >> 3] = value
    if i != len(data):
        raise ValueError("protobuf message cut short")
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i
