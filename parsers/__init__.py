"""Input formats: each module sniffs its format from a file's content and reads it into a Profile."""

from __future__ import annotations

import os
import re
from pathlib import Path

from rooflint.errors import InputError, UnsupportedFormatError
from rooflint.profile import Profile

from . import ncu_csv, ncu_rep, nvprof
from .sniff import BINARY, NCU_REP, SQLITE, head_text

# Each reader module offers `sniff(path, head) -> bool` and `read(path, **options) -> Profile`.
# Order matters only where two formats could both claim a file: most specific first.
READERS = [ncu_rep, ncu_csv, nvprof]  # ncu_rep claims a report only when ncu_report is installed

try:  # optional formats register themselves only when their module is present
    from . import rocprof  # noqa: F401

    READERS.append(rocprof)
except ImportError:  # pragma: no cover - until the AMD readers land
    pass


def read(path: str | os.PathLike, **options) -> Profile:
    """Read one profile file (or a profile folder) into a Profile, detecting its format."""
    reader = detect(path)
    return reader.read(path, **options)


def detect(path: str | os.PathLike):
    """The reader module for `path`, chosen from its content, never from its name."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder; check the path", path=str(path))
    if p.is_dir():
        for reader in READERS:
            if getattr(reader, "sniff_folder", None) and reader.sniff_folder(p):
                return reader
        raise UnsupportedFormatError(
            "folder is not a profile (expected a rocprof-compute workload or a rocprofv3 output "
            "folder); pass the profile files inside it instead",
            path=str(path),
        )
    head = head_text(p)
    for reader in READERS:
        if reader.sniff(p, head):
            return reader
    raise UnsupportedFormatError(_unrecognised_hint(head), path=str(path))


def _unrecognised_hint(head: str) -> str:
    if head == NCU_REP:
        return ("this is an Nsight Compute report (.ncu-rep); install `rooflint[ncu-rep]` to read it "
                "directly, or export it with `ncu --import FILE.ncu-rep --csv --page raw --print-units base`")
    if head in (BINARY, SQLITE):
        return ("binary file that is not a profile rooflint reads; pass an Nsight Compute CSV export "
                "(ncu --csv --page raw) or rocprof counter output")
    first = head.lstrip("\ufeff").splitlines()[0] if head.strip() else ""
    if re.match(r"^\[\d+\] .+@", first) or "----------- ------" in head:
        return ("this is ncu's human-readable text output, not CSV; export again adding --csv, "
                "e.g. `ncu --import R.ncu-rep --csv --page raw --print-units base`")
    if not head.strip():
        return "file is empty; export the profile again (e.g. ncu --import R.ncu-rep --csv --page raw)"
    if '"Name","Start (ns)"' in head or "Time (%)" in head:
        return ("this is an Nsight Systems export, which has no hardware counters; profile with "
                "Nsight Compute and export `ncu --csv --page raw --print-units base`")
    shown = first[:60] + ("..." if len(first) > 60 else "")
    return ("not a profile rooflint reads (first line: " + repr(shown) + "); expected an Nsight "
            "Compute CSV export (ncu --csv --page raw) or rocprof/rocprofv3 counter CSV")
