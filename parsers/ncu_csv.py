"""Nsight Compute CSV exports: details (one row per metric) and raw (one row per launch) pages.

One reader for every shape ncu and its users produce (module map):
  ncu_lines  the header and the quoted rows among `==PROF==` and application lines, streamed
             (gzip too), BOM, CRLF and other line breaks, a cut-off last line;
  ncu_table  the rows as Arrow string columns (ragged rows padded) and the launch identity;
  ncu_locale the locale of the value cells and their conversion to float64;
  ncu_pages  the raw and the details page as launch tables (ncu_metrics names the quantities).
"""

from __future__ import annotations

from pathlib import Path

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.reader import Carries, Reader

from .ncu_lines import NotUtf8, Rows, header_index, no_profile_message, prof_only
from .ncu_pages import NotPiecewise, RawPage, from_details
from .ncu_table import EXPORT_HINT, name_devices, parse

CUT = "last line cut short (the file ends mid-row: a truncated copy?) skipped"


def sniff(path: Path, head: str) -> bool:
    """An ncu CSV: a quoted header line naming kernels, anywhere among ==PROF== and app output."""
    if head.startswith("\x00"):
        return False
    lines = head.lstrip("\ufeff").splitlines()
    return (header_index(lines) is not None or prof_only(lines)) and not _is_nvprof(lines)


def _is_nvprof(lines) -> bool:
    return any(line.startswith("==") and "NVPROF" in line for line in lines[:20])


def read(path, locale: str | None = None, progress=None) -> Profile:
    """Read an ncu CSV export into a Profile (one canonical row per launch).

    `progress`, when given, is called with the number of bytes read as the file streams in.
    """
    try:
        return _read(path, "utf-8", locale, progress)
    except NotUtf8:  # a kernel name with stray bytes must not lose the file
        return _read(path, "latin-1", locale, progress)


READER = Reader(
    "Nsight Compute CSV",
    (InputFormat.NCU_RAW, InputFormat.NCU_DETAILS),
    sniff,
    read,
    options=("locale",),
    progress=True,
    carries=Carries.COUNTERS,
)


def _read(path, encoding: str, locale: str | None, progress, whole: bool = False) -> Profile:
    source = str(path)
    rows = Rows(path, encoding, progress).open()
    if rows.header is None:
        raise InputError(no_profile_message(rows.lines), path=source)
    header = rows.header
    _refuse_aggregates(header, source)
    details = "Metric Name" in header
    needed = ("ID", "Kernel Name", *(["Metric Value"] if details else []))
    lacking = ", ".join(repr(c) for c in needed if c not in header)
    if lacking:
        raise InputError(f"header line without the {lacking} column(s); {EXPORT_HINT}", path=source)
    if details:
        parsed = parse(rows, header, source)
        _refuse_empty(rows, parsed.table.num_rows, False, source)
        box, parsed.table = [parsed.table], None  # the page reader frees columns as it goes
        launches, notes, page_repairs = from_details(box, source, locale)
    else:
        try:
            parsed, (launches, notes, page_repairs) = _raw(rows, header, source, locale, whole)
        except NotPiecewise:  # rare: read it again, as one table
            return _read(path, encoding, locale, None, whole=True)
    repairs = ([CUT] if rows.cut else []) + parsed.repairs + page_repairs
    name_devices(launches, parsed.ragged, notes)
    invalid = schema.invalid_rows(launches)
    if invalid:
        repairs.append(
            f"{invalid} launch(es) with a negative or infinite value, read as missing "
            "(each launch's notes name the quantity)"
        )
    return Profile(
        source=source,
        format=InputFormat.NCU_DETAILS if details else InputFormat.NCU_RAW,
        launches=launches,
        notes=notes,
        repairs=repairs,
    )


def _raw(rows: Rows, header: list[str], source: str, locale: str | None, whole: bool):
    """(parsed rows, page) of a raw page: its values made numbers a piece at a time as the file
    streams in (or, `whole`, once every row is read)."""
    page = RawPage(source, locale, whole)
    parsed = parse(rows, header, source, None if whole else page.add, page.numbers)
    if whole:
        page.add(parsed.table)
        parsed.table = None
    _refuse_empty(rows, page.rows, page.units_row, source)
    return parsed, page.finish()


def _refuse_empty(rows: Rows, count: int, units_row: bool, source: str) -> None:
    """A page without a launch row: why, and what to do."""
    empty = (
        f"header but no complete launch row: the file ends mid-row (truncated?); {EXPORT_HINT}"
        if rows.cut
        else f"header but no launches; the export is empty, {EXPORT_HINT}"
    )
    if count == 0:
        raise InputError(empty, path=source)
    if units_row and count == 1:
        raise InputError(empty.replace("header but", "header and units row but"), path=source)


def _refuse_aggregates(header: list[str], source: str) -> None:
    if header[:2] == ["Launch Attribute", "Value"]:
        raise InputError(
            f"this is the ncu session page (no kernel launches); {EXPORT_HINT}", path=source
        )
    if "Invocations" in header and "ID" not in header:
        raise InputError(
            "this is an ncu --print-summary page (per-kernel aggregates, no "
            f"per-launch data); {EXPORT_HINT}",
            path=source,
        )
