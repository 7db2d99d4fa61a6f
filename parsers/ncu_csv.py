"""Nsight Compute CSV exports: details (one row per metric) and raw (one row per launch) pages."""

from __future__ import annotations

import csv
import io
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.core.profile import Profile

from . import ncu_metrics as metrics
from .values import _AMBIGUOUS_COMMA, _DE, _EN, LOCALES, detect_locale, to_float, unit_scale

EXPORT_HINT = "export per-launch data with `ncu --import R.ncu-rep --csv --page raw --print-units base`"
NVTX_MARKERS = ("Push/Pop_Range", "Start/Stop_Range")
_IDENTITY = {"ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"}


def sniff(path: Path, head: str) -> bool:
    """An ncu CSV: a quoted header line naming kernels, anywhere among ==PROF== and app output."""
    if head.startswith("\x00"):
        return False
    lines = head.lstrip("\ufeff").splitlines()
    return (_header_index(lines) is not None or _prof_only(lines)) and not _is_nvprof(lines)


def _is_nvprof(lines) -> bool:
    return any(line.startswith("==") and "NVPROF" in line for line in lines[:20])


def _header_index(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.startswith('"') and '"Kernel Name"' in line and ('"ID"' in line or '"Invocations"' in line):
            return i
        if line.startswith('"Launch Attribute","Value"'):
            return i
    return None


def _prof_only(lines: list[str]) -> bool:
    """ncu's own messages and nothing else: a run that profiled no kernel (or failed)."""
    return bool(lines) and any(line.startswith("==PROF==") for line in lines) and not any(
        line.startswith('"') for line in lines)


def read(path, locale: str | None = None, **_options) -> Profile:
    """Read an ncu CSV export into a Profile (one canonical row per launch)."""
    source = str(path)
    fast = _read_fast(Path(path), source, locale)
    if fast is not None:
        return fast
    text = _read_text(Path(path))
    lines = text.splitlines()
    start = _header_index(lines)
    if start is None:
        raise InputError(_no_profile_message(lines), path=source)
    header = next(csv.reader([lines[start]]))
    _refuse_aggregates(header, source)
    lacking = [c for c in ("ID", "Kernel Name", *(["Metric Value"] if "Metric Name" in header else []))
               if c not in header]
    if lacking:
        raise InputError(f"header line without the {', '.join(map(repr, lacking))} column(s); {EXPORT_HINT}",
                         path=source)
    body = [line for line in lines[start:] if line.startswith('"')]
    cut = _cut_short(text, body, len(header))
    if cut:
        body = body[:-1]
    empty = (f"header but no complete launch row: the file ends mid-row (truncated?); {EXPORT_HINT}" if cut
             else f"header but no launches; the export is empty, {EXPORT_HINT}")
    if len(body) < 2:
        raise InputError(empty, path=source)
    table, repairs = _parse(body, header, source)
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
        launches, notes, unreadable = _from_raw(frame, source, locale)
        fmt = "ncu-raw"
        repairs += _duplicate_ids(frame["ID"])
    repairs += unreadable
    _name_devices(launches, body, notes)
    invalid = schema.invalid_rows(launches)
    if invalid:
        repairs.append(f"{invalid} launch(es) with a negative or infinite value, read as missing "
                       "(each launch's notes name the quantity)")
    return Profile(source=source, format=fmt, launches=launches, notes=notes, repairs=repairs)


def _name_devices(launches: pd.DataFrame, body: list[str], notes: list[str]) -> None:
    """Details pages carry no device__attribute_display_name, but `--print-details all` embeds a
    NUMA table ("GPU ID","GPU Name",...): when it names one GPU model, that is the device."""
    if launches["device_name"].notna().any():
        return
    start = next((i for i, line in enumerate(body) if line.startswith('"GPU ID","GPU Name"')), None)
    if start is None:
        return
    rows = [r for r in csv.reader(body[start + 1:]) if len(r) == 5 and r[0].isdigit()]
    models = {r[1] for r in rows}
    if len(models) == 1:
        launches["device_name"] = pd.array([models.pop()] * len(launches), dtype="string")
        notes.append("device name taken from the report's NUMA affinity table")


def _duplicate_ids(ids: pd.Series) -> list[str]:
    """A raw page has one row per launch: IDs on several rows are named (every row is kept)."""
    ids = ids[ids != ""]
    repeated = ids[ids.duplicated(keep=False)]
    if repeated.empty:
        return []
    counts = repeated.value_counts()
    order = pd.unique(repeated)
    shown = ", ".join(f"{i} ({counts[i]} rows)" for i in order[:5]) + (", ..." if len(order) > 5 else "")
    return [f"{len(repeated)} rows share {len(order)} launch ID(s): {shown}; all rows kept "
            "(two exports joined into one file?)"]


def _cut_short(text: str, body: list[str], width: int) -> bool:
    """Whether the file stops inside its last row: no final newline, and that row lacks fields
    or its closing quote (ncu quotes every field)."""
    if len(body) < 2 or text.endswith(("\n", "\r")) or not text.endswith(body[-1]):
        return False
    last = body[-1]
    return not last.endswith('"') or len(next(csv.reader([last]))) != width


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
        return (f"no profile data, ncu reported an error ({errors[0][:120].strip()}); "
                "fix the run and export again with `ncu --csv --page raw --print-units base`")
    if _prof_only(lines):
        return ("no profile data: only ==PROF== messages, ncu profiled no kernel; check the "
                "--kernel-name/--launch-skip filters and that the application launched kernels")
    return f"not an ncu CSV export (no header line with \"ID\" and \"Kernel Name\"); {EXPORT_HINT}"


def _refuse_aggregates(header: list[str], source: str) -> None:
    if header[:2] == ["Launch Attribute", "Value"]:
        raise InputError(f"this is the ncu session page (no kernel launches); {EXPORT_HINT}", path=source)
    if "Invocations" in header and "ID" not in header:
        raise InputError("this is an ncu --print-summary page (per-kernel aggregates, no per-launch "
                         f"data); {EXPORT_HINT}", path=source)


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
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in keep},
                                                 include_columns=keep, strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"malformed CSV ({str(exc).splitlines()[0]}); {EXPORT_HINT}", path=source) from None
    repairs = []
    if ragged:
        table, skipped = _with_ragged(table, ragged, names, keep)
        if skipped:
            repairs.append(f"{skipped} line(s) that are not launch rows (an embedded table such as "
                           "NUMA affinity, or a row cut short) skipped")
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
    return (name in _IDENTITY or name in ("Metric Name", "Metric Unit", "Metric Value")
            or any(m in name for m in NVTX_MARKERS) or metrics.wanted(name))


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
    if len(frame) and frame["ID"].iloc[0] == "":
        units = frame.iloc[0].to_dict()
        frame = frame.iloc[1:].reset_index(drop=True)
    else:  # ncu's base units are SI except time, which it counts in nanoseconds
        units = {metrics.DURATION: "ns"}
        notes.append("no units row after the header: values read as ncu base units (durations in ns)")
    metric_cols = [c for c in frame.columns if metrics.wanted(c) and c not in _TEXT_METRICS]
    locale = _choose_locale(frame[metric_cols], locale, source)
    wide = pd.DataFrame({c: to_float(frame[c], locale) * unit_scale(units.get(c, "")) for c in metric_cols},
                        index=frame.index)
    unreadable = _not_numbers(frame[metric_cols], wide, frame["ID"])
    identity = _identity(frame)
    return metrics.launch_table(wide, identity, source, notes), notes, unreadable


_TEXT_METRICS = {"device__attribute_display_name"}


def _from_details(frame: pd.DataFrame, source: str, locale: str | None):
    notes: list[str] = []
    name = frame["Metric Name"].map(lambda n: metrics.DISPLAY_NAMES.get(n, n))
    unit = frame["Metric Unit"] if "Metric Unit" in frame else pd.Series("", index=frame.index)
    rate_ok = ~((frame["Metric Name"] == "Memory Throughput") & ~unit.str.contains("/", regex=False))
    keep = name.map(metrics.wanted).astype(bool) & rate_ok
    rows = frame[keep]
    order = pd.unique(frame["ID"])
    launches_frame = frame.drop_duplicates("ID").set_index("ID").loc[order].reset_index()
    text_rows = rows[name[keep].isin(_TEXT_METRICS)]
    num_rows = rows[~name[keep].isin(_TEXT_METRICS)]
    locale = _choose_locale(num_rows[["Metric Value"]], locale, source)
    scales = unit[num_rows.index].map(unit_scale).to_numpy(dtype="float64")
    values = to_float(num_rows["Metric Value"], locale) * scales
    unreadable = _not_numbers(num_rows[["Metric Value"]], pd.DataFrame({"Metric Value": values}, index=num_rows.index),
                              num_rows["ID"], num_rows["Metric Name"])
    long = pd.DataFrame({"ID": num_rows["ID"].to_numpy(), "metric": name[num_rows.index].to_numpy(), "value": values})
    long = long.drop_duplicates(["ID", "metric"])
    wide = long.pivot(index="ID", columns="metric", values="value").reindex(order).reset_index(drop=True)
    wide.columns.name = None
    texts = text_rows.drop_duplicates("ID").set_index("ID")["Metric Value"].reindex(order).reset_index(drop=True)
    launches_frame["device__attribute_display_name"] = texts.to_numpy() if len(texts) else np.nan
    identity = _identity(launches_frame)
    return metrics.launch_table(wide, identity, source, notes), notes, unreadable


_NO_VALUE = {"", "n/a", "nan", "-"}


def _not_numbers(cells: pd.DataFrame, parsed: pd.DataFrame, ids: pd.Series, names: pd.Series | None = None) -> list[str]:
    """Metric cells holding text instead of a number (read as missing), counted and the first named."""
    count, first = 0, None
    for j, col in enumerate(cells.columns):
        text = cells[col].astype("string").str.strip()
        bad = (np.isnan(parsed[col].to_numpy(dtype="float64")) & text.notna().to_numpy(dtype=bool)
               & ~text.str.lower().isin(_NO_VALUE).to_numpy(dtype=bool))
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
    return [f"{count} metric value(s) that are not numbers read as missing (first: {metric} = {shown!r} "
            f"for launch ID {ids.iloc[row]})"]


def _choose_locale(values: pd.DataFrame, forced: str | None, source: str) -> str:
    if forced:
        if forced not in LOCALES:
            raise InputError(f"unknown locale {forced!r}; use one of {', '.join(LOCALES)}", path=source)
        return forced
    cells = pd.concat([values[c] for c in values.columns], ignore_index=True) if len(values.columns) else pd.Series([], dtype="string")
    found = detect_locale(cells)
    if found is None:
        raise InputError("number format is ambiguous (e.g. \"84,480\" could be en_US 84480 or de_DE "
                         "84.48); pass --locale en_US or --locale de_DE, or export with LC_ALL=C", path=source)
    return found


def _identity(frame: pd.DataFrame) -> dict:
    def text(name):
        return frame[name] if name in frame else pd.Series(pd.NA, index=frame.index, dtype="string")

    cc = text("CC")
    if "device__attribute_compute_capability_major" in frame:
        major = frame["device__attribute_compute_capability_major"]
        minor = frame["device__attribute_compute_capability_minor"] if "device__attribute_compute_capability_minor" in frame else "0"
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
    if (arrow is not None and len(arrow) and arrow.null_count == 0
            and (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type))
            and pc.all(pc.match_substring_regex(arrow, r"^[0-9]{1,18}$")).as_py()):
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


# The fast path for the common large input: a clean raw page (one quoted row per launch, a units
# row, numbers in the C locale). pyarrow parses the metric columns straight to float64 from the
# file's bytes; anything it cannot prove gives the same result as read() (a cell that is not a
# plain number, a ragged row, a cut-off last line, an unusual line break) returns None, and
# read() takes the general path. tests/test_batch.py checks both paths agree on every fixture.
# The cells read() counts as "no value" (any case), and only those, become null.
_NULL_TOKENS = sorted({"", "-"} | {"".join(c) for word in ("n/a", "nan")
                                   for c in itertools.product(*((ch.lower(), ch.upper()) for ch in word))})
_CC_COLUMNS = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")
_BREAK_BYTES = np.array([0x0b, 0x0c, 0x1c, 0x1d, 0x1e], dtype=np.uint8)  # str.splitlines() breaks there too


def _read_fast(path: Path, source: str, locale: str | None) -> Profile | None:
    """The Profile read() would return, for files the fast paths can prove it for; else None."""
    if locale not in (None, *LOCALES):
        return None
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    located = _clean_header(raw, start)
    if located is None:
        return None
    header_end, header = located
    if (header[:2] == ["Launch Attribute", "Value"] or "Invocations" in header or "ID" not in header
            or "Kernel Name" not in header):
        return None
    box = [raw]  # the readers drop the file's bytes once parsed: they are as big as the file
    del raw
    if "Metric Name" in header:
        return _read_details_fast(box, header_end, header, source, locale) if "Metric Value" in header else None
    return _read_raw_fast(box, header_end, header, source, locale)


def _read_raw_fast(box: list[bytes], header_end: int, header: list[str], source: str, locale: str | None):
    raw = box.pop()
    if locale == "de_DE":
        return None
    units_end = raw.find(b"\n", header_end + 1)
    if units_end < 0:
        return None
    units_row = next(csv.reader([raw[header_end + 1:units_end].decode("utf-8").rstrip("\r")]), [])
    names = _unique(header)
    if len(units_row) != len(names) or units_row[names.index("ID")] != "":
        return None
    keep = [n for n, h in zip(names, header, strict=True) if _keep_column(h)]
    metric_cols = [c for c in keep if metrics.wanted(c) and c not in _TEXT_METRICS]
    numeric = [c for c in metric_cols if c not in _CC_COLUMNS]
    table = _parse_fast(raw, units_end + 1, names, keep, numeric)
    del raw
    if table is None or table.num_rows == 0:
        return None
    units = dict(zip(names, units_row, strict=True))
    wide = {}
    for c in metric_cols:
        if c in numeric:
            values = table.column(c).to_numpy()
            if np.isinf(values).any() or np.signbit(values[values == 0]).any():
                return None  # inf spellings and -0 are where pyarrow and pandas parse differently
        else:  # compute capability digits: the same text in identity, a number in `wide`
            cells = table.column(c)
            if pc.any(pc.invert(pc.match_substring_regex(cells, r"^[0-9]{0,18}$"))).as_py():
                return None
            values = pc.cast(pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.string()), cells),
                             pa.int64()).to_numpy(zero_copy_only=False).astype("float64")
        wide[c] = values * unit_scale(units.get(c, ""))
    frame = table.select([c for c in keep if c not in numeric]).to_pandas()
    del table
    if locale is not None:
        _choose_locale(frame[[]], locale, source)
    notes: list[str] = []
    launches = metrics.launch_table(pd.DataFrame(wide, index=frame.index), _identity(frame), source, notes)
    return _profile(launches, source, "ncu-raw", notes, _duplicate_ids(frame["ID"]))


def _profile(launches, source, fmt, notes, repairs) -> Profile:
    """What read() adds after the launch table (no NUMA table here: it would be a ragged row)."""
    _name_devices(launches, [], notes)
    invalid = schema.invalid_rows(launches)
    if invalid:
        repairs.append(f"{invalid} launch(es) with a negative or infinite value, read as missing "
                       "(each launch's notes name the quantity)")
    return Profile(source=source, format=fmt, launches=launches, notes=notes, repairs=repairs)


def _read_details_fast(box: list[bytes], header_end: int, header: list[str], source: str, locale: str | None):
    """_from_details over dictionary codes: every per-row decision is made once per distinct
    metric name or unit, the pivot is a scatter into per-metric arrays."""
    names = _unique(header)
    keep = [n for n, h in zip(names, header, strict=True) if _keep_column(h)]
    table = _parse_fast(box.pop(), header_end + 1, names, keep, [])
    if table is None or table.num_rows == 0:
        return None
    ids = table.column("ID").combine_chunks().dictionary_encode()
    launch = ids.indices.to_numpy(zero_copy_only=False)
    n_launches = len(ids.dictionary)
    metric, metric_names = _codes(table.column("Metric Name"))
    if "Metric Unit" in table.column_names:
        unit, unit_names = _codes(table.column("Metric Unit"))
    else:
        unit, unit_names = np.zeros(table.num_rows, dtype=np.int64), [""]
    display = [metrics.DISPLAY_NAMES.get(m, m) for m in metric_names]
    throughput_pct = np.array([m == "Memory Throughput" for m in metric_names])[metric] & \
        ~np.array(["/" in u for u in unit_names])[unit]
    kept = np.array([bool(metrics.wanted(d)) for d in display])[metric] & ~throughput_pct
    text = np.array([d in _TEXT_METRICS for d in display])[metric]
    num_rows = np.flatnonzero(kept & ~text)
    cells = table.column("Metric Value").take(num_rows).combine_chunks()
    try:
        locale = _choose_locale_fast(cells, locale, source)
        scales = np.array([unit_scale(u) for u in unit_names], dtype="float64")[unit[num_rows]]
        values = _to_float_fast(cells, locale) * scales
    except _NotFast:
        return None
    unreadable = _not_numbers_fast(cells, values, num_rows, table)
    distinct = sorted(set(display))  # the pivot's columns come sorted
    display_code = np.array([distinct.index(d) for d in display], dtype=np.int64)[metric[num_rows]]
    columns = sorted({display[m] for m in np.unique(metric[num_rows])})
    wide = pd.DataFrame(_pivot_first(launch[num_rows], display_code, values, n_launches,
                                     [distinct.index(c) for c in columns], columns), index=pd.RangeIndex(n_launches))
    first = pa.array(np.unique(launch, return_index=True)[1])
    per_launch = ["ID"] + [c for c in table.column_names if c not in ("ID", "Metric Name", "Metric Unit", "Metric Value")]
    launches_frame = pa.table({c: table.column(c).take(first) for c in per_launch}).to_pandas()
    text_rows = np.flatnonzero(kept & text)
    with_text, first_text = np.unique(launch[text_rows], return_index=True)
    texts = pd.Series(table.column("Metric Value").take(text_rows[first_text]).to_pandas().to_numpy(),
                      index=ids.dictionary.take(with_text).to_pandas().to_numpy(), dtype=launches_frame["ID"].dtype)
    texts = texts.reindex(launches_frame["ID"].to_numpy()).reset_index(drop=True)
    launches_frame["device__attribute_display_name"] = texts.to_numpy() if len(texts) else np.nan
    notes: list[str] = []
    launches = metrics.launch_table(wide, _identity(launches_frame), source, notes)
    return _profile(launches, source, "ncu-details", notes, unreadable)


class _NotFast(Exception):
    """A value the fast conversion cannot prove it reads as pandas does: take the general path."""


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list]:
    encoded = column.combine_chunks().dictionary_encode()
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()


def _pivot_first(launch: np.ndarray, metric: np.ndarray, values: np.ndarray, n: int, codes: list[int],
                 columns: list[str]) -> dict[str, np.ndarray]:
    """{metric: per-launch value}, the first row of each (launch, metric) winning, NaN if none."""
    out = {}
    for code, name in zip(codes, columns, strict=True):
        rows = np.flatnonzero(metric == code)
        launches, first = np.unique(launch[rows], return_index=True)
        column = np.full(n, np.nan)
        column[launches] = values[rows[first]]
        out[name] = column
    return out


_UNUSUAL = r"[^\x20-\x7e]"  # anything but printable ASCII
_PLAIN_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _ascii_plain(cells: pa.Array) -> bool:
    """ASCII without control characters: where Python's str methods and regexes and Arrow's
    RE2 kernels agree (\\d, strip, $ before a newline)."""
    return not pc.any(pc.match_substring_regex(cells, _UNUSUAL)).as_py()


def _choose_locale_fast(cells: pa.Array, forced: str | None, source: str) -> str:
    """values.detect_locale over Arrow strings, same patterns, RE2 instead of Python's re."""
    if forced:
        return _choose_locale(pd.DataFrame(), forced, source)
    if not _ascii_plain(cells):
        raise _NotFast
    sample = cells.filter(pc.and_(pc.is_valid(cells), pc.greater(pc.utf8_length(cells), 0)))
    if pc.any(pc.match_substring(sample, " (")).as_py():
        sample = pc.list_element(pc.split_pattern(sample, " (", max_splits=1), 0)

    def any_match(pattern) -> bool:
        return bool(len(sample)) and bool(pc.any(pc.match_substring_regex(sample, pattern.pattern)).as_py())

    de, en = any_match(_DE), any_match(_EN)
    if de and not en:
        return "de_DE"
    if en and not de:
        return "en_US" if pc.any(pc.match_substring(sample, ",")).as_py() else "C"
    if de and en or any_match(_AMBIGUOUS_COMMA):
        raise _NotFast  # ambiguous: the general path says so, in its words
    return "C"


def _to_float_fast(cells: pa.Array, locale: str) -> np.ndarray:
    """values.to_float over Arrow strings: plain numbers cast by Arrow, the rest by pandas."""
    if not _ascii_plain(cells):
        raise _NotFast
    text = pc.utf8_trim(cells, " ")
    if pc.any(pc.match_substring(text, "(")).as_py():
        text = pc.list_element(pc.split_pattern(text, " (", max_splits=1), 0)
    if locale == "de_DE":
        text = pc.replace_substring(pc.replace_substring(text, ".", ""), ",", ".")
    else:
        text = pc.replace_substring(text, ",", "")
    plain = pc.fill_null(pc.match_substring_regex(text, _PLAIN_NUMBER), False)
    values = pc.cast(pc.if_else(plain, text, pa.scalar(None, pa.string())), pa.float64())
    out = values.to_numpy(zero_copy_only=False).astype("float64")
    plain = plain.to_numpy(zero_copy_only=False)
    if np.signbit(out[plain & (out == 0)]).any():
        raise _NotFast  # pandas reads "-0" as an integer 0
    rest = np.flatnonzero(~plain)
    if len(rest):  # text, "n/a", "inf": exactly as pandas reads them
        others = pd.Series(text.take(pa.array(rest)).to_pandas(), dtype="string")
        out[rest] = pd.to_numeric(others, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return out


def _not_numbers_fast(cells: pa.Array, values: np.ndarray, rows: np.ndarray, table: pa.Table) -> list[str]:
    """_not_numbers for the value cells of `rows`, looking only at the cells that read as NaN."""
    nan = np.flatnonzero(np.isnan(values))
    if not len(nan):
        return []
    candidates = pd.Series(cells.take(pa.array(nan)).to_pandas(), dtype="string").str.strip()
    bad = ~candidates.str.lower().isin(_NO_VALUE) & candidates.notna()
    if not bad.any():
        return []
    where = int(nan[np.flatnonzero(bad.to_numpy())[0]])
    value = candidates[bad].iloc[0]
    shown = value[:40] + ("..." if len(value) > 40 else "")
    row = int(rows[where])
    metric, launch = table.column("Metric Name")[row].as_py(), table.column("ID")[row].as_py()
    return [f"{int(bad.sum())} metric value(s) that are not numbers read as missing (first: "
            f"{metric} = {shown!r} for launch ID {launch})"]


def _clean_header(raw: bytes, start: int) -> tuple[int, list[str]] | None:
    """(end of the header line, header fields) when every line after the header is a quoted
    CSV row ending in a newline and no other line break occurs; None otherwise."""
    if not raw.endswith(b"\n"):
        return None
    newlines = _line_ends(raw, start)
    if newlines is None:
        return None
    if not raw.isascii():
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None  # read() decodes such files as latin-1
        if any(ch in text for ch in ("\x85", "\u2028", "\u2029")):
            return None
    pos = start
    while True:  # the first quoted line that is an ncu header, as _header_index finds it
        if raw[pos:pos + 1] != b'"':
            pos = raw.find(b'\n"', pos)
            if pos < 0:
                return None
            pos += 1
        end = raw.find(b"\n", pos)
        line = raw[pos:end].decode("utf-8").rstrip("\r")
        if _header_index([line]) == 0:
            break
        pos = end + 1
    after = newlines[(newlines >= end) & (newlines < len(raw) - 1)]
    quoted = not len(after) or (np.frombuffer(raw, dtype=np.uint8)[after + 1] == 34).all()
    return (end, next(csv.reader([line]))) if quoted else None


def _line_ends(raw: bytes, start: int) -> np.ndarray | None:
    """Offsets of every \\n from `start`; None if a byte str.splitlines() also breaks at occurs
    (\\v \\f \\x1c-\\x1e, or \\r not followed by \\n). One numpy pass over the control bytes."""
    data = np.frombuffer(raw, dtype=np.uint8)
    found, step = [], 1 << 24
    for lo in range(start, len(data), step):
        where = np.flatnonzero(data[lo:lo + step] < 32) + lo
        kinds = data[where]
        if np.isin(kinds, _BREAK_BYTES).any():
            return None
        returns = where[kinds == 13]
        if len(returns) and (returns[-1] + 1 >= len(data) or (data[returns + 1] != 10).any()):
            return None
        found.append(where[kinds == 10])
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _parse_fast(raw: bytes, offset: int, names: list[str], keep: list[str], numeric: list[str]) -> pa.Table | None:
    ragged = []

    def on_invalid(row):
        ragged.append(row)
        return "skip"

    types = {n: (pa.float64() if n in numeric else pa.string()) for n in keep}
    try:  # 4 MiB blocks: parsed on every core, less held at once than with larger blocks
        table = pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(raw).slice(offset)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types=types, include_columns=keep, null_values=_NULL_TOKENS,
                                                 strings_can_be_null=False, quoted_strings_can_be_null=True),
        )
    except pa.ArrowInvalid:
        return None  # a cell that is not a plain number (locale grouping, text): the general path
    if ragged:
        return None
    for n in numeric:  # a NaN that is not null was spelled "-nan" or similar: let pandas judge it
        column = table.column(n)
        if column.null_count < len(column) and np.isnan(column.to_numpy(zero_copy_only=False)).sum() != column.null_count:
            return None
    return table
