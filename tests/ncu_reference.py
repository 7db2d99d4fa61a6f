"""The reference ncu CSV reader: the per-cell reader rooflint shipped before one vectorised
reader replaced it (parsers/ncu_csv.py at commit a6a6ea3, its general path, unchanged but for
this docstring, the imports and the removed fast path; since issue 33 a line that continues a
quoted cell left open is a row's, `_body`, a last launch cut short is left out,
`_cut_launch`, and a header line or units row repeated among the rows is no launch,
`_repeated_header`, `_repeated_units`). Tests compare the reader with it."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rooflint.core import schema
from rooflint.core.choices import LOCALES
from rooflint.core.errors import InputError
from rooflint.core.profile import Profile
from rooflint.parsers import ncu_metrics as metrics
from rooflint.parsers.ncu_pages import OTHER_UNITS, UNITS_ROW_LATE
from rooflint.parsers.values import (
    detect_locale,
    to_float,
    unit_scale,
)

EXPORT_HINT = (
    "export per-launch data with `ncu --import R.ncu-rep --csv --page raw --print-units base`"
)
NVTX_MARKERS = ("Push/Pop_Range", "Start/Stop_Range")
_IDENTITY = {"ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"}


def _header_index(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if (
            line.startswith('"')
            and '"Kernel Name"' in line
            and ('"ID"' in line or '"Invocations"' in line)
        ):
            return i
        if line.startswith('"Launch Attribute","Value"'):
            return i
    return None


def _prof_only(lines: list[str]) -> bool:
    """ncu's own messages and nothing else: a run that profiled no kernel (or failed)."""
    return (
        bool(lines)
        and any(line.startswith("==PROF==") for line in lines)
        and not any(line.startswith('"') for line in lines)
    )


def read(path, locale: str | None = None, **_options) -> Profile:
    """Read an ncu CSV export into a Profile (one canonical row per launch)."""
    source = str(path)
    text = _read_text(Path(path))
    lines = text.splitlines()
    start = _header_index(lines)
    if start is None:
        raise InputError(_no_profile_message(lines), path=source)
    header = next(csv.reader([lines[start]]))
    _refuse_aggregates(header, source)
    lacking = [
        c
        for c in ("ID", "Kernel Name", *(["Metric Value"] if "Metric Name" in header else []))
        if c not in header
    ]
    if lacking:
        raise InputError(
            f"header line without the {', '.join(map(repr, lacking))} column(s); {EXPORT_HINT}",
            path=source,
        )
    body = [lines[start], *_body(lines[start + 1 :])]
    last_row = _cut_short(text, body, len(header))
    cut = last_row is not None
    if cut:
        body = body[:last_row]
    empty = (
        f"header but no complete launch row: the file ends mid-row (truncated?); {EXPORT_HINT}"
        if cut
        else f"header but no launches; the export is empty, {EXPORT_HINT}"
    )
    if len(body) < 2:
        raise InputError(empty, path=source)
    table, repairs = _parse(body, header, source)
    table, repeats = _repeated_header(table, header, source)
    repairs += repeats
    if cut:
        repairs.insert(0, "last line cut short (the file ends mid-row: a truncated copy?) skipped")
    if table.num_rows == 0:
        raise InputError(empty, path=source)
    frame = table.to_pandas()
    if "Metric Name" not in header and len(frame) == 1 and frame["ID"].iloc[0] == "":
        raise InputError(empty.replace("header but", "header and units row but"), path=source)
    if "Metric Name" in header:
        launches, notes, unreadable = _from_details(frame, source, locale)
        fmt = "ncu-details"
    else:
        launches, notes, unreadable, again = _from_raw(frame, source, locale)
        fmt = "ncu-raw"
        repairs += again + _duplicate_ids(frame["ID"])
    repairs += unreadable
    _name_devices(launches, body, notes)
    invalid = schema.invalid_rows(launches)
    if invalid:
        repairs.append(
            f"{invalid} launch(es) with a negative or infinite value, read as missing "
            "(each launch's notes name the quantity)"
        )
    return Profile(source=source, format=fmt, launches=launches, notes=notes, repairs=repairs)


def _body(lines: list[str]) -> list[str]:
    """The quoted lines, and the lines that continue a quoted cell a row before them left
    open (a line break in a kernel name; issue 33): a whole row (an even count of quotes)
    closes every cell, an odd one opens a cell or closes the open one, a continuing line
    flips it by its own count."""
    body: list[str] = []
    open_ = False
    for line in lines:
        odd = line.count('"') % 2 == 1
        if line.startswith('"'):
            body.append(line)
            open_ = odd and not open_
        elif open_:
            body.append(line)
            open_ = not odd
    return body


def _name_devices(launches: pd.DataFrame, body: list[str], notes: list[str]) -> None:
    """Details pages carry no device__attribute_display_name, but `--print-details all` embeds a
    NUMA table ("GPU ID","GPU Name",...): when it names one GPU model, that is the device."""
    if launches["device_name"].notna().any():
        return
    start = next((i for i, line in enumerate(body) if line.startswith('"GPU ID","GPU Name"')), None)
    if start is None:
        return
    rows = [r for r in csv.reader(body[start + 1 :]) if len(r) == 5 and r[0].isdigit()]
    models = {r[1] for r in rows}
    if len(models) == 1:
        launches["device_name"] = schema.repeated(models.pop(), len(launches))
        notes.append("device name taken from the report's NUMA affinity table")


def _duplicate_ids(ids: pd.Series) -> list[str]:
    """A raw page has one row per launch: IDs on several rows are named (every row is kept)."""
    ids = ids[ids != ""]
    repeated = ids[ids.duplicated(keep=False)]
    if repeated.empty:
        return []
    counts = repeated.value_counts()
    order = pd.unique(repeated)
    shown = ", ".join(f"{i} ({counts[i]} rows)" for i in order[:5]) + (
        ", ..." if len(order) > 5 else ""
    )
    return [
        f"{len(repeated)} rows share {len(order)} launch ID(s): {shown}; all rows kept "
        "(two exports joined into one file?)"
    ]


def _cut_short(text: str, body: list[str], width: int) -> int | None:
    """Where the last row starts in `body` when the file stops inside it: no final newline, and
    that row (its quoted line and the lines that continue it) lacks fields or its closing
    quote (ncu quotes every field); else None."""
    if len(body) < 2 or text.endswith(("\n", "\r")) or not text.endswith(body[-1]):
        return None
    start = max(i for i, line in enumerate(body) if line.startswith('"'))
    if start == 0:
        return None
    last = "\n".join(body[start:])
    whole = last.endswith('"') and len(next(csv.reader([last]))) == width
    return None if whole else start


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # a kernel name with stray bytes must not lose the file


def _no_profile_message(lines: list[str]) -> str:
    errors = [line for line in lines if line.startswith("==ERROR==")]
    if errors:
        return (
            f"no profile data, ncu reported an error ({errors[0][:120].strip()}); "
            "fix the run and export again with `ncu --csv --page raw --print-units base`"
        )
    if _prof_only(lines):
        return (
            "no profile data: only ==PROF== messages, ncu profiled no kernel; check the "
            "--kernel-name/--launch-skip filters and that the application launched kernels"
        )
    return f'not an ncu CSV export (no header line with "ID" and "Kernel Name"); {EXPORT_HINT}'


def _refuse_aggregates(header: list[str], source: str) -> None:
    if header[:2] == ["Launch Attribute", "Value"]:
        raise InputError(
            f"this is the ncu session page (no kernel launches); {EXPORT_HINT}", path=source
        )
    if "Invocations" in header and "ID" not in header:
        raise InputError(
            "this is an ncu --print-summary page (per-kernel aggregates, no per-launch "
            f"data); {EXPORT_HINT}",
            path=source,
        )


def _parse(body: list[str], header: list[str], source: str) -> tuple[pa.Table, list[str]]:
    """All cells as strings; ragged rows (older ncu drops trailing rule columns) padded."""
    names = _unique(header)
    keep = [n for n, h in zip(names, header, strict=True) if _keep_column(h)]
    ragged: list[str] = []

    def on_invalid(row):
        ragged.append(row.text)
        return "skip"

    data = "\n".join(body[1:]).encode("utf-8")
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                invalid_row_handler=on_invalid,
                newlines_in_values=any(not line.startswith('"') for line in body[1:]),
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in keep},
                include_columns=keep,
                strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(
            f"malformed CSV ({str(exc).splitlines()[0]}); {EXPORT_HINT}", path=source
        ) from None
    repairs = []
    if ragged:
        table, skipped = _with_ragged(table, ragged, names, keep)
        if skipped:
            repairs.append(
                f"{skipped} line(s) that are not launch rows (an embedded table such as "
                "NUMA affinity, or a row cut short) skipped"
            )
    return table, repairs


def _unique(header: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for h in header:
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append(h if n == 0 else f"{h}.{n}")
    return out


def _keep_column(name: str) -> bool:
    return (
        name in _IDENTITY
        or name in ("Metric Name", "Metric Unit", "Metric Value")
        or any(m in name for m in NVTX_MARKERS)
        or metrics.wanted(name)
    )


def _with_ragged(table: pa.Table, rows: list[str], names: list[str], keep: list[str]):
    """Rows with too few or too many fields: pad or cut to the header when they still hold
    every identity and value field (older ncu drops the empty rule columns); others skipped."""
    needed = max(names.index(n) for n in ("Kernel Name", "Metric Value") if n in names) + 1
    parsed = list(csv.reader(rows))
    width = len(names)
    fixed = [(r + [""] * width)[:width] for r in parsed if len(r) >= needed]
    extra = pd.DataFrame(fixed, columns=names)[keep]
    merged = pd.concat([table.to_pandas(), extra], ignore_index=True)
    return pa.Table.from_pandas(merged, preserve_index=False), len(parsed) - len(fixed)


def _from_raw(frame: pd.DataFrame, source: str, locale: str | None):
    notes: list[str] = []
    units = {}
    units_row = bool(len(frame)) and frame["ID"].iloc[0] == ""
    if units_row:
        units = frame.iloc[0].to_dict()
        frame = frame.iloc[1:].reset_index(drop=True)
    else:  # ncu's base units are SI except time, which it counts in nanoseconds
        units = {metrics.DURATION: "ns"}
        notes.append(
            "no units row after the header: values read as ncu base units (durations in ns)"
        )
    frame, again = _repeated_units(frame, units if units_row else None, source)
    metric_cols = [c for c in frame.columns if metrics.wanted(c) and c not in _TEXT_METRICS]
    locale = _choose_locale(frame[metric_cols], locale, source)
    wide = pd.DataFrame(
        {c: to_float(frame[c], locale) * unit_scale(units.get(c, "")) for c in metric_cols},
        index=frame.index,
    )
    unreadable = _not_numbers(frame[metric_cols], wide, frame["ID"])
    identity = _identity(frame)
    return metrics.launch_table([wide], identity, source, notes), notes, unreadable, again


def _repeated_header(table: pa.Table, header: list[str], source: str):
    """(table, repairs) without the rows that repeat the header line (ID "ID"); one that names
    other columns than the header is refused (issue 33 item 5)."""
    rows = table.to_pylist()
    fields = dict(zip(_unique(header), header, strict=True))
    repeats = [i for i, row in enumerate(rows) if row["ID"] == "ID"]
    for i in repeats:
        if any(cell != fields[name] for name, cell in rows[i].items()):
            raise InputError(
                "a second header line names other columns than the first (two exports "
                "joined into one file?); export each run to a file of its own",
                path=source,
            )
    if not repeats:
        return table, []
    kept = [row for i, row in enumerate(rows) if row["ID"] != "ID"]
    table = pa.Table.from_pylist(kept, schema=table.schema)
    repair = f"{len(repeats)} repeated header line(s) skipped (exports joined into one file?)"
    return table, [repair]


def _repeated_units(frame: pd.DataFrame, units: dict | None, source: str):
    """(frame, repairs) without the rows after the first that have no launch ID: each must
    repeat the page's units row (two exports joined into one file); one with other units, or
    on a page whose first row is a launch, is refused (issue 33 item 5)."""
    again = (frame["ID"] == "").to_numpy()
    for _, row in frame[again].iterrows():
        if units is None:  # the page's first row is a launch
            raise InputError(UNITS_ROW_LATE, path=source)
        if any(units.get(c) != v for c, v in row.items()):
            raise InputError(OTHER_UNITS, path=source)
    if not again.any():
        return frame, []
    repair = f"{int(again.sum())} repeated units row(s) skipped"
    return frame[~again].reset_index(drop=True), [repair]


_TEXT_METRICS = {"device__attribute_display_name"}


def _cut_launch(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The frame without its last launch when that launch's metric rows are the first rows of
    the launch before it, and fewer: the file ends mid-launch (issue 33)."""
    ids = frame["ID"].tolist()
    order = list(dict.fromkeys(ids))
    if len(order) < 2:
        return frame, []
    last, before = order[-1], order[-2]
    start, first = ids.index(last), ids.index(before)
    if set(ids[start:]) != {last} or set(ids[first:start]) != {before}:
        return frame, []
    names = frame["Metric Name"].tolist()
    cut, whole = names[start:], names[first:start]
    if len(cut) >= len(whole) or whole[: len(cut)] != cut:
        return frame, []
    repair = (
        f"last launch (ID {last}) cut short: {len(cut)} of its {len(whole)} metric rows "
        "(the file ends mid-launch: a truncated copy?), left out"
    )
    return frame.iloc[:start], [repair]


def _from_details(frame: pd.DataFrame, source: str, locale: str | None):
    frame, cut = _cut_launch(frame)
    launches, notes, unreadable = _details(frame, source, locale)
    return launches, notes, cut + unreadable


def _details(frame: pd.DataFrame, source: str, locale: str | None):
    notes: list[str] = []
    name = frame["Metric Name"].map(lambda n: metrics.DISPLAY_NAMES.get(n, n))
    unit = frame["Metric Unit"] if "Metric Unit" in frame else pd.Series("", index=frame.index)
    rate_ok = ~(
        (frame["Metric Name"] == "Memory Throughput") & ~unit.str.contains("/", regex=False)
    )
    keep = name.map(metrics.wanted).astype(bool) & rate_ok
    rows = frame[keep]
    order = pd.unique(frame["ID"])
    launches_frame = frame.drop_duplicates("ID").set_index("ID").loc[order].reset_index()
    text_rows = rows[name[keep].isin(_TEXT_METRICS)]
    num_rows = rows[~name[keep].isin(_TEXT_METRICS)]
    locale = _choose_locale(num_rows[["Metric Value"]], locale, source)
    scales = unit[num_rows.index].map(unit_scale).to_numpy(dtype="float64")
    values = to_float(num_rows["Metric Value"], locale) * scales
    unreadable = _not_numbers(
        num_rows[["Metric Value"]],
        pd.DataFrame({"Metric Value": values}, index=num_rows.index),
        num_rows["ID"],
        num_rows["Metric Name"],
    )
    long = pd.DataFrame(
        {
            "ID": num_rows["ID"].to_numpy(),
            "metric": name[num_rows.index].to_numpy(),
            "value": values,
        }
    )
    long = long.drop_duplicates(["ID", "metric"])
    wide = (
        long.pivot(index="ID", columns="metric", values="value")
        .reindex(order)
        .reset_index(drop=True)
    )
    wide.columns.name = None
    texts = (
        text_rows.drop_duplicates("ID")
        .set_index("ID")["Metric Value"]
        .reindex(order)
        .reset_index(drop=True)
    )
    launches_frame["device__attribute_display_name"] = texts.to_numpy() if len(texts) else np.nan
    identity = _identity(launches_frame)
    return metrics.launch_table([wide], identity, source, notes), notes, unreadable


_NO_VALUE = {"", "n/a", "nan", "-"}


def _not_numbers(
    cells: pd.DataFrame, parsed: pd.DataFrame, ids: pd.Series, names: pd.Series | None = None
) -> list[str]:
    """Metric cells holding text instead of a number (read as missing), counted and the first
    named."""
    count, first = 0, None
    for j, col in enumerate(cells.columns):
        text = cells[col].astype("string").str.strip()
        bad = (
            np.isnan(parsed[col].to_numpy(dtype="float64"))
            & text.notna().to_numpy(dtype=bool)
            & ~text.str.lower().isin(_NO_VALUE).to_numpy(dtype=bool)
        )
        if bad.any():
            count += int(bad.sum())
            row = int(np.argmax(bad))
            first = min(first or (row, j), (row, j))
    if not count:
        return []
    row, j = first
    metric = names.iloc[row] if names is not None else cells.columns[j]
    value = str(cells.iat[row, j]).strip()
    shown = value[:40] + ("..." if len(value) > 40 else "")
    return [
        f"{count} metric value(s) that are not numbers read as missing "
        f"(first: {metric} = {shown!r} for launch ID {ids.iloc[row]})"
    ]


def _choose_locale(values: pd.DataFrame, forced: str | None, source: str) -> str:
    if forced:
        if forced not in LOCALES:
            raise InputError(
                f"unknown locale {forced!r}; use one of {', '.join(LOCALES)}", path=source
            )
        return forced
    cells = (
        pd.concat([values[c] for c in values.columns], ignore_index=True)
        if len(values.columns)
        else pd.Series([], dtype="string")
    )
    found = detect_locale(cells)
    if found is None:
        raise InputError(
            'number format is ambiguous (e.g. "84,480" could be en_US 84480 or de_DE '
            "84.48); pass --locale en_US or --locale de_DE, or export with LC_ALL=C",
            path=source,
        )
    return found


def _identity(frame: pd.DataFrame) -> dict:
    def text(name):
        return frame[name] if name in frame else pd.Series(pd.NA, index=frame.index, dtype="string")

    cc = text("CC")
    if "device__attribute_compute_capability_major" in frame:
        major = frame["device__attribute_compute_capability_major"]
        minor = (
            frame["device__attribute_compute_capability_minor"]
            if "device__attribute_compute_capability_minor" in frame
            else "0"
        )
        cc = cc.where(cc.fillna("") != "", major + "." + minor)
    return {
        "launch_id": _numbers(frame["ID"]),
        "process_id": _numbers(text("Process ID").str.replace(",", "").str.replace(".", "")),
        "kernel": text("Kernel Name"),
        "grid": text("Grid Size"),
        "block": text("Block Size"),
        "device_name": text("device__attribute_display_name").replace("", pd.NA),
        "arch": cc.replace("", pd.NA),
        "range": _nvtx(frame),
    }


def _numbers(cells: pd.Series) -> pd.Series:
    """pd.to_numeric(cells, errors="coerce"); Arrow casts the common case, plain digit strings."""
    try:
        arrow = pa.array(cells, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arrow = None
    if (
        arrow is not None
        and len(arrow)
        and arrow.null_count == 0
        and (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type))
        and pc.all(pc.match_substring_regex(arrow, r"^[0-9]{1,18}$")).as_py()
    ):
        return pd.Series(pc.cast(arrow, pa.int64()).to_numpy(), index=cells.index)
    return pd.to_numeric(cells, errors="coerce")


_NVTX_RANGE = re.compile(r'"(?:<[^>"]*>|[^:"]*):([^:"]*):')


def _nvtx(frame: pd.DataFrame) -> pd.Series:
    """NVTX ranges as "outer/inner" from ncu's `Domain:Push/Pop_Range:...` columns."""
    cols = [c for c in frame.columns if any(m in c for m in NVTX_MARKERS)]
    if not cols:
        return pd.Series(pd.NA, index=frame.index, dtype="string")
    joined = frame[cols].fillna("").agg(" ".join, axis=1)
    ranges = joined.map(lambda s: "/".join(_NVTX_RANGE.findall(s)) or pd.NA)
    return ranges.astype("string")
