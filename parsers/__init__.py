"""Input formats: the registry of readers, each recognising its files by content, and `read`."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

from rooflint.core.errors import InputError, UnsupportedFormatError
from rooflint.core.profile import Profile
from rooflint.core.reader import Reader

from . import kineto, ncu_csv, ncu_rep, nsys, nvprof, rocprof, rocprofv3_json
from .compressed import MAX_INPUT_ENV, max_input_bytes
from .sniff import BINARY, NCU_REP, SQLITE, head_text

# One Reader (rooflint.core.reader) per module. Order matters only where two formats could both
# claim a file: most specific first (ncu_rep claims a report only where ncu_report imports).
READERS: list[Reader] = [
    ncu_rep.READER,
    kineto.READER,
    nsys.READER,
    rocprofv3_json.READER,
    ncu_csv.READER,
    nvprof.READER,
    rocprof.READER,
]


def is_roofline_csv(path: str | os.PathLike) -> bool:
    """A rocprof-compute roofline.csv (measured ceilings), recognised by its header."""
    first = head_text(Path(path)).lstrip("\ufeff").partition("\n")[0]
    return "HBMBw" in first and "Flops" in first


def read_roofline(path: str | os.PathLike) -> tuple[dict[str, float], list[str]]:
    """Measured ceilings (op/s, byte/s keyed like the catalog) and notes from a roofline.csv."""
    from .rocprof_device import read_roofline as read_measured

    return read_measured(Path(path))


def _check_size(path: Path) -> None:
    size, limit = path.stat().st_size, max_input_bytes()
    if size > limit:
        raise InputError(
            f"file is {size:,} bytes, over the input limit of {limit:,} bytes; split the "
            "export into smaller files (e.g. ncu --launch-skip/--launch-count) or raise "
            f"{MAX_INPUT_ENV}",
            path=str(path),
        )


def read(path: str | os.PathLike, progress=None, **options) -> Profile:
    """Read one profile file (or a profile folder) into a Profile, detecting its format.

    An option its reader does not take is a UsageError (see `Reader.read`)."""
    return detect(path).read(path, progress, **options)


def detect(path: str | os.PathLike) -> Reader:
    """The reader for `path`, chosen from its content, never from its name."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder; check the path", path=str(path))
    if p.is_dir():
        reader = folder_reader(p)
        if reader is not None:
            return reader
        raise UnsupportedFormatError(
            "folder is not a profile (expected a rocprof-compute workload or a rocprofv3 output "
            "folder); pass the profile files inside it instead",
            path=str(path),
        )
    _check_size(p)
    head = head_text(p)
    if head == SQLITE:
        _check_sqlite_length(p)
    for reader in READERS:
        if _claims(reader, p, head):
            return reader
    raise UnsupportedFormatError(_unrecognised_hint(head, p.name), path=str(path))


def _check_sqlite_length(path: Path) -> None:
    """A database shorter than its header says (a copy cut short) is refused: SQLite would read
    the pages that are there and give some of the rows, silently."""
    with open(path, "rb") as fh:
        header = fh.read(100)
    if len(header) < 100:
        raise InputError(
            "SQLite database is cut short (no full header); copy it again", path=str(path)
        )
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    counter_valid = header[24:28] == header[92:96]  # the in-header size is current (SQLite 3.7+)
    size = path.stat().st_size
    if counter_valid and pages and size < page * pages:
        raise InputError(
            f"SQLite database is cut short ({size:,} of its {page * pages:,} bytes); copy or "
            "export it again",
            path=str(path),
        )


def _claims(reader: Reader, path: Path, head: str) -> bool:
    """reader.sniff, where a database too damaged to list its tables is one clear error (SQLite
    can even word its error with the file's own bytes, which are not text)."""
    try:
        return reader.sniff(path, head)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if head != SQLITE:
            raise
        raise InputError(
            f"SQLite database is damaged ({type(exc).__name__}); export or copy it again",
            path=str(path),
        ) from None


def folder_reader(path: Path) -> Reader | None:
    """The reader that reads the folder `path` as one profile, if any claims it."""
    return next((r for r in READERS if r.sniff_folder and r.sniff_folder(path)), None)


NSYS_EXPORT = "nsys export --type sqlite -o report.sqlite report.nsys-rep"
NSYS_REPORTS = (".nsys-rep", ".qdrep")  # the name only words the refusal; it never claims a file


def _unrecognised_hint(head: str, name: str = "") -> str:
    if head == BINARY and name.lower().endswith(NSYS_REPORTS):
        return (
            "this is an Nsight Systems report, which rooflint reads once exported to SQLite: "
            f"`{NSYS_EXPORT}`, then pass report.sqlite"
        )
    if head == NCU_REP:
        return (
            "this is an Nsight Compute report (.ncu-rep); install `rooflint[ncu-rep]` to read it "
            "directly, or export it with "
            "`ncu --import FILE.ncu-rep --csv --page raw --print-units base`"
        )
    if head in (BINARY, SQLITE):
        return (
            "binary file that is not a profile rooflint reads; pass an Nsight Compute CSV export "
            "(ncu --csv --page raw) or rocprof counter output"
        )
    head = head.lstrip("\ufeff")  # a byte-order mark alone is still empty
    first = head.splitlines()[0] if head.strip() else ""
    if re.match(r"^\[\d+\] .+@", first) or "----------- ------" in head:
        return (
            "this is ncu's human-readable text output, not CSV; export again adding --csv, "
            "e.g. `ncu --import R.ncu-rep --csv --page raw --print-units base`"
        )
    if not head.strip():
        return (
            "file is empty; export the profile again (e.g. ncu --import R.ncu-rep --csv --page raw)"
        )
    if "Time (%)" in first:
        return (
            "this is an `nsys stats` summary (totals per kernel, not launches); export the "
            f"capture's launches instead: `{NSYS_EXPORT}`, then pass report.sqlite"
        )
    if '"Start (ns)"' in first or "Start (ns)" in first:
        return (
            "this is an `nsys stats` trace CSV (names and times, no devices or NVTX); export the "
            f"capture itself instead: `{NSYS_EXPORT}`, then pass report.sqlite"
        )
    if "Self CPU" in first or "Self CUDA" in first:
        return (
            "this is a PyTorch profiler table (operator times, no hardware counters); profile the "
            "model under Nsight Compute and pass its export "
            "(`ncu --csv --page raw --print-units base`)"
        )
    if first.lstrip()[:1] in ("{", "["):
        return (
            "JSON that is neither a PyTorch profiler trace (no traceEvents) nor a profile rooflint "
            "reads; pass a torch.profiler trace (export_chrome_trace) or an Nsight Compute CSV "
            "export"
        )
    shown = first[:60] + ("..." if len(first) > 60 else "")
    return (
        "not a profile rooflint reads (first line: " + repr(shown) + "); expected an Nsight "
        "Compute CSV export (ncu --csv --page raw) or rocprof/rocprofv3 counter CSV"
    )
