"""The rows of an ncu CSV page as Arrow string columns, and the launch identity read from them."""

from __future__ import annotations

import csv
import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rooflint.core import schema
from rooflint.core.errors import InputError

from . import ncu_metrics as metrics
from .ncu_lines import Loose, Spanning, opens_quote
from .ncu_locale import NO_VALUE_CELLS

EXPORT_HINT = (
    "export per-launch data with `ncu --import R.ncu-rep --csv --page raw --print-units base`"
)
NVTX_MARKERS = ("Push/Pop_Range", "Start/Stop_Range")
IDENTITY = {"ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"}
TEXT_METRICS = {"device__attribute_display_name"}
# Text the launches repeat (a few hundred kernels over 10^5 launches of a whole-model capture,
# each on ~40 rows of a details page): parsed as dictionaries of the distinct values, which
# pandas reads as Categoricals.
REPEATED_TEXT = {
    "Kernel Name",
    "Grid Size",
    "Block Size",
    "device__attribute_display_name",
    "Metric Name",  # a details page: a few dozen names, each on every launch
    "Metric Unit",
}
VALUE_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


def unique_names(header: list[str]) -> list[str]:
    """Header fields made unique the way pandas does: a repeat gets ".1", ".2", ..."""
    seen: dict[str, int] = {}
    out = []
    for h in header:
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append(h if n == 0 else f"{h}.{n}")
    return out


def keep_column(name: str) -> bool:
    return (
        name in IDENTITY
        or name in VALUE_COLUMNS
        or any(m in name for m in NVTX_MARKERS)
        or metrics.wanted(name)
    )


class Parsed:
    """Every row as strings (`table`), the lines that were not rows of the page (`ragged`)."""

    def __init__(self, table: pa.Table, ragged: list[str], repairs: list[str]):
        self.table, self.ragged, self.repairs = table, ragged, repairs


def parse(pieces, header: list[str], source: str, each=None, numbers=None) -> Parsed:
    """Parse the quoted rows; ragged rows (older ncu drops trailing rule columns) padded.

    With `each`, every piece's table (then the ragged rows' own) goes to `each` in row order as
    it is parsed and `table` stays None: the caller keeps what it needs of each piece.

    `numbers` (a test on column names), when given, names columns that are tried as float64
    while parsing: a piece whose cells there are all plain numbers (or ncu's ways of writing
    "no value") comes with those columns as float64, which spares a string column and a cast.
    A leading units row is parsed on its own, as text. The first piece that holds anything
    else (grouping commas, instance lists, text) and every piece after it come as text
    (REPEATED_TEXT as dictionaries)."""
    names = unique_names(header)
    keep = [n for n, h in zip(names, header, strict=True) if keep_column(h)]
    ragged: list[str] = []
    records = [0]  # lines the parser refused as rows, so far

    def on_invalid(row):
        records[0] += 1
        if row.text.startswith('"'):  # else not a row at all: a line left among the rows
            ragged.append(row.text)
        return "skip"

    def rows_of(piece, read, *options):
        """read(buffer, *options) of the piece's rows; a Loose piece is read as it is when the
        parser refuses each other line in it and reads as many records as it has lines."""
        if isinstance(piece, Spanning):  # a line end inside a quoted cell: Arrow told so
            reading, _, convert = options[0]
            spanning = (reading, parse_options(on_invalid, spanning=True), convert)
            return read(piece, spanning, *options[1:])
        if not isinstance(piece, Loose):
            return read(piece, *options)
        seen, before = len(ragged), records[0]
        others = piece.others()
        if others is not None and refused(others, len(names)):
            table = read(piece.data, *options)
            if table is None or table.num_rows + records[0] - before == piece.lines:
                return table
        del ragged[seen:]
        return read(piece.tight(), *options)

    headers = Headers(dict(zip(names, header, strict=True)), source)
    text = _options(names, keep, on_invalid, [])
    number_columns = [n for n in keep if numbers(n)] if numbers is not None else []
    typed = _options(names, keep, on_invalid, number_columns) if number_columns else None
    tables: list[pa.Table] = []
    take = each or tables.append
    first = True
    for piece in pieces:
        if not piece:
            continue
        if first and typed is not None:
            spanning = isinstance(piece, Spanning)
            units, piece = _units_row(piece)
            piece = Spanning(piece) if spanning else piece
            if units:
                take(_read_csv(units, text, source))
            typed = None if _grouped(piece) else typed
        first = False
        if not piece:
            continue
        table = None
        if typed is not None:
            table = rows_of(piece, _try_typed, typed, number_columns, ragged)
            typed = typed if table is not None else None
        if table is None:
            table = rows_of(piece, _read_csv, text, source)
        del piece
        take(headers.dropped(table))
        del table
    repairs = []
    if ragged:
        extra, skipped = _ragged_rows(ragged, names, keep)
        if extra is not None:
            take(headers.dropped(extra))
        if skipped:
            repairs.append(
                f"{skipped} line(s) that are not launch rows (an embedded table such as "
                "NUMA affinity, or a row cut short) skipped"
            )
    if headers.count:
        repairs.append(
            f"{headers.count} repeated header line(s) skipped (exports joined into one file?)"
        )
    table = None
    if each is None:
        schema = pa.schema([(n, _type(n)) for n in keep])
        table = pa.concat_tables(tables) if tables else schema.empty_table()
    return Parsed(table, ragged, repairs)


class Headers:
    """Drops the rows that repeat the header line (two exports joined into one file, or a page
    printed with its header again): a launch ID is never "ID". A repeated header that names
    other columns than the first is refused (the rows after it hold other quantities)."""

    def __init__(self, fields: dict[str, str], source: str):
        self.fields, self.source, self.count = fields, source, 0

    def dropped(self, table: pa.Table) -> pa.Table:
        repeats = pc.fill_null(pc.equal(table.column("ID"), "ID"), False)
        if not pc.any(repeats).as_py():
            return table
        for row in table.filter(repeats).to_pylist():
            if any(cell != self.fields[name] for name, cell in row.items()):
                raise InputError(
                    "a second header line names other columns than the first (two exports "
                    "joined into one file?); export each run to a file of its own",
                    path=self.source,
                )
        self.count += int(pc.sum(repeats).as_py())
        return table.filter(pc.invert(repeats))


def _options(names: list[str], keep: list[str], on_invalid, numbers: list[str]) -> tuple:
    """read_csv's options: the `keep` columns as text (`_type`), but `numbers` as float64
    (ncu's no-value cells null there)."""
    return (
        pacsv.ReadOptions(column_names=names, block_size=1 << 22),
        parse_options(on_invalid),
        pacsv.ConvertOptions(
            column_types={n: pa.float64() if n in numbers else _type(n) for n in keep},
            include_columns=keep,
            strings_can_be_null=False,
            null_values=NO_VALUE_CELLS,
        ),
    )


def parse_options(on_invalid, spanning: bool = False) -> pacsv.ParseOptions:
    """How every row is split: a line is a row (no line end inside a quoted cell, unless
    `spanning`: rows that `ncu_lines` found running on past a line end), and a line of another
    number of fields goes to `on_invalid`."""
    return pacsv.ParseOptions(invalid_row_handler=on_invalid, newlines_in_values=spanning)


def refused(lines: bytes, width: int) -> bool:
    """Whether read_csv, splitting as `parse` does, takes none of `lines` for a row of `width`
    fields (so that they may stay among the rows: its invalid-row handler drops them). A line
    without a double quote has as many fields as commas and one: only the others are parsed."""
    lines = b"".join(
        line
        for line in lines.splitlines(keepends=True)
        if b'"' in line or line.count(b",") + 1 == width
    )
    if not lines:
        return True
    options = pacsv.ReadOptions(column_names=[str(i) for i in range(width)], use_threads=False)
    convert = pacsv.ConvertOptions(include_columns=["0"], column_types={"0": pa.string()})
    table = pacsv.read_csv(pa.py_buffer(lines), options, parse_options(lambda row: "skip"), convert)
    return table.num_rows == 0


def _type(column: str) -> pa.DataType:
    """A text column's Arrow type: a dictionary for REPEATED_TEXT."""
    return pa.dictionary(pa.int32(), pa.string()) if column in REPEATED_TEXT else pa.string()


def _units_row(piece) -> tuple[memoryview, memoryview]:
    """(ncu's units row, the rest) of a page's first piece; the row is empty when the first
    line is not one (its ID is empty)."""
    view = memoryview(piece)
    if bytes(view[:3]) != b'"",':
        return view[:0], view
    end = _first_line_end(view)
    if opens_quote(bytes(view[:end])):  # the row runs on past its line: not split off there
        return view[:0], view
    return view[:end], view[end:]


def _first_line_end(view: memoryview) -> int:
    """Where the first line of `view` ends (after its \\n; the end when it has none), read
    without copying the whole piece (it may be a view of the mapped file)."""
    size = 1 << 12
    while True:
        found = bytes(view[:size]).find(b"\n")
        if found >= 0:
            return found + 1
        if size >= len(view):
            return len(view)
        size *= 8


# A cell of digits with a comma between two of them: ncu's default output groups thousands
# ("1,980,000"; de_DE "0,5"), which no float parse takes.
_GROUPED_CELL = re.compile(rb'"[0-9.]*[0-9],[0-9][0-9.,]*"')


def _grouped(piece) -> bool:
    """Whether the first row has grouped (or comma-decimal) numbers: then the whole export has,
    as ncu writes every row alike, and a float parse of its pieces would only be thrown away."""
    head = bytes(piece[: 1 << 16])  # a row is a few KB; a longer one is judged by its start
    end = head.find(b"\n")
    return _GROUPED_CELL.search(head[:end] if end >= 0 else head) is not None


def _try_typed(piece, options: tuple, numbers: list[str], ragged: list[str]) -> pa.Table | None:
    """The piece parsed with its number columns as float64, or None when a cell there is not
    a plain number: text, or a NaN or infinity the parser spelled out itself, whose text the
    reference rules judge (the ragged rows this attempt saw are forgotten: the text parse sees
    them)."""
    seen = len(ragged)
    try:
        table = _arrow_csv(piece, options)
    except pa.ArrowInvalid:
        table = None
    if table is not None and _all_finite(table, numbers):
        return table
    del ragged[seen:]
    return None


def _all_finite(table: pa.Table, numbers: list[str]) -> bool:
    """Whether every `numbers` column passes `_only_finite`: their sum, all columns as one
    chunked array, is finite when every value is (one sum, not one a column: 25 of them a raw
    page); only a sum that is not tests them column by column."""
    chunks = [chunk for c in numbers for chunk in table.column(c).chunks]
    total = pc.sum(pa.chunked_array(chunks, pa.float64())).as_py()
    if total is None or math.isfinite(total):
        return True
    return all(_only_finite(table.column(c)) for c in numbers)


def _only_finite(column: pa.ChunkedArray) -> bool:
    """Whether a float column's only non-finite values are the no-value cells (nulls): a sum
    of finite values is finite (one pass); a NaN or infinity, or an overflow, makes it not, and
    only then is each cell tested."""
    total = pc.sum(column).as_py()
    if total is None or math.isfinite(total):
        return True
    return (pc.sum(pc.is_finite(column)).as_py() or 0) + column.null_count == len(column)


def _arrow_csv(piece, options: tuple) -> pa.Table:
    """read_csv of the piece; a line longer than Arrow's block ("straddling object": a 10 MB
    kernel name) is read again with the whole piece as one block."""
    try:
        return pacsv.read_csv(pa.BufferReader(piece), *options)
    except pa.ArrowInvalid as exc:
        if "straddling" not in str(exc):
            raise
    reading, *rest = options
    whole = pacsv.ReadOptions(column_names=reading.column_names, block_size=len(piece) + 1)
    return pacsv.read_csv(pa.BufferReader(piece), whole, *rest)


def _read_csv(piece, options: tuple, source: str) -> pa.Table:
    try:
        return _arrow_csv(piece, options)
    except pa.ArrowInvalid as exc:
        problem = str(exc).splitlines()[0]
        raise InputError(f"malformed CSV ({problem}); {EXPORT_HINT}", path=source) from None


def _ragged_rows(rows: list[str], names: list[str], keep: list[str]):
    """Rows with too few or too many fields: padded or cut to the header when they still hold
    every identity and value field (older ncu drops the empty rule columns), as a table (None
    when there are none) that goes after the other rows, as one parse of the whole page would
    place them; the others are skipped, and counted."""
    needed = max(names.index(n) for n in ("Kernel Name", "Metric Value") if n in names) + 1
    parsed = [_fields(row) for row in rows]
    width = len(names)
    fixed = [(r + [""] * width)[:width] for r in parsed if len(r) >= needed]
    extra = None
    if fixed:
        where = {n: i for i, n in enumerate(names)}
        extra = pa.table({n: pa.array([r[where[n]] for r in fixed], _type(n)) for n in keep})
    return extra, len(parsed) - len(fixed)


def _fields(row: str) -> list[str]:
    """A ragged row's fields; none when a line break sits outside its quotes (rows that a quote
    left open ran together): not a launch row."""
    try:
        return next(csv.reader([row]), [])
    except csv.Error:
        return []


def identity(table: pa.Table) -> dict:
    """The canonical identity columns from a page's text columns (one row per launch), straight
    from the Arrow columns the parser gave: text as Categoricals of sorted strings (conform
    takes them as they are), IDs as int64; nothing of the page goes to pandas as strings."""
    n = table.num_rows

    def text(name: str, empty_is_na: bool = False) -> pd.Series:
        if name not in table.column_names:
            return pd.Series(schema.repeated(None, n), copy=False)
        return pd.Series(categorical(table.column(name), empty_is_na), copy=False)

    return {
        "launch_id": numbers_of(table.column("ID")),
        "process_id": _process_ids(table, n),
        "kernel": text("Kernel Name"),
        "grid": text("Grid Size"),
        "block": text("Block Size"),
        "device_name": text("device__attribute_display_name", empty_is_na=True),
        "arch": _arch(table, text),
        "range": nvtx(table),
    }


def categorical(column, empty_is_na: bool = False) -> pd.Categorical:
    """An Arrow text column (a dictionary, as the parser reads REPEATED_TEXT, or strings) as a
    Categorical of its sorted distinct values; null, and "" where `empty_is_na`, is NA."""
    encoded = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_dictionary(encoded.type):
        encoded = encoded.dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    labels = encoded.dictionary.to_pylist()
    if empty_is_na and "" in labels:
        position = np.append(np.arange(len(labels)), -1)
        position[labels.index("")] = -1
        codes = position[codes]
    return schema.strings(codes, labels)


def _arch(table: pa.Table, text) -> pd.Series:
    """The compute capability ("9.0"): the CC cell, else major.minor from the device
    attributes where the cell is empty (those joined only when some row needs it)."""
    cc = text("CC", empty_is_na=True)
    major, minor = (f"device__attribute_compute_capability_{p}" for p in ("major", "minor"))
    if major not in table.column_names or not cc.isna().any():
        return cc
    frame = table.select([c for c in ("CC", major, minor) if c in table.column_names]).to_pandas()
    cells = frame["CC"] if "CC" in frame else pd.Series(pd.NA, index=frame.index, dtype="string")
    empty = (cells.fillna("") == "").to_numpy()
    return cells.where(~empty, frame[major] + "." + frame.get(minor, "0")).replace("", pd.NA)


def _process_ids(table: pa.Table, n: int) -> pd.Series | np.ndarray:
    """Process IDs (grouping marks dropped) as numbers, NaN where unreadable; each distinct cell
    read once (a capture has a few processes over its 10^5 launches: 24 ms -> 1 ms). Plain
    digits on every row (the common case) come as int64, which conform takes as it is (2 ms of
    pandas string methods a 2k-launch file, as Arrow's 0.1 ms)."""
    if "Process ID" not in table.column_names:
        return pd.Series(np.full(n, np.nan))
    encoded = table.column("Process ID").combine_chunks().dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    ungrouped = pc.replace_substring(pc.replace_substring(encoded.dictionary, ",", ""), ".", "")
    if _digits(ungrouped) and (codes >= 0).all():
        return pc.cast(ungrouped, pa.int64()).to_numpy()[codes]
    read = numbers(pd.Series(ungrouped.to_pandas(), copy=False))
    return pd.Series(np.append(read.to_numpy(dtype="float64", na_value=np.nan), np.nan)[codes])


def numbers_of(column) -> pd.Series:
    """`numbers` of an Arrow text column: Arrow casts the common case, plain digit strings."""
    cells = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(cells.type):
        cells = cells.cast(pa.string())
    if _digits(cells):
        return pd.Series(pc.cast(cells, pa.int64()).to_numpy())
    return pd.to_numeric(pd.Series(cells.to_pandas(), copy=False), errors="coerce")


def _digits(arrow) -> bool:
    return (
        len(arrow) > 0
        and arrow.null_count == 0
        and (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type))
        and pc.all(pc.match_substring_regex(arrow, r"^[0-9]{1,18}$")).as_py()
    )


def numbers(cells: pd.Series) -> pd.Series:
    """pd.to_numeric(cells, errors="coerce"); Arrow casts the common case, plain digit strings."""
    try:
        arrow = pa.array(cells, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arrow = None
    if arrow is not None and _digits(arrow):
        return pd.Series(pc.cast(arrow, pa.int64()).to_numpy(), index=cells.index)
    return pd.to_numeric(cells, errors="coerce")


_NVTX_RANGE = re.compile(r'"(?:<[^>"]*>|[^:"]*):([^:"]*):')


def nvtx(table: pa.Table) -> pd.Series:
    """NVTX ranges as "outer/inner" from ncu's `Domain:Push/Pop_Range:...` columns; each distinct
    combination of range cells is read once."""
    cols = [c for c in table.column_names if any(m in c for m in NVTX_MARKERS)]
    if not cols:
        return pd.Series(schema.repeated(None, table.num_rows), copy=False)
    frame = table.select(cols).to_pandas()
    joined = frame[cols[0]].fillna("").astype("string")
    for c in cols[1:]:
        joined = joined + " " + frame[c].fillna("").astype("string")
    codes, distinct = pd.factorize(joined)
    ranges = np.array(["/".join(_NVTX_RANGE.findall(s)) or None for s in distinct], dtype=object)
    ranges = pd.array(ranges[codes] if len(codes) else [], dtype="string")
    return pd.Series(ranges, index=frame.index)


def duplicate_ids(column, numbers: pd.Series) -> list[str]:
    """A raw page has one row per launch: IDs on several rows are named (every row is kept).
    `numbers` are the IDs read as numbers: when each is a distinct number, so is each text.
    `column`: the IDs as the parser read them (Arrow)."""
    if numbers.notna().all() and numbers.is_unique:
        return []
    ids = pd.Series(column.to_pandas(), copy=False)
    ids = ids[ids != ""]
    repeated = ids[ids.duplicated(keep=False)]
    if repeated.empty:
        return []
    counts = repeated.value_counts()
    order = pd.unique(repeated)
    shown = ", ".join(f"{i} ({counts[i]} rows)" for i in order[:5])
    shown += ", ..." if len(order) > 5 else ""
    return [
        f"{len(repeated)} rows share {len(order)} launch ID(s): {shown}; all rows kept "
        "(two exports joined into one file?)"
    ]


def name_devices(launches: pd.DataFrame, ragged: list[str], notes: list[str]) -> None:
    """Details pages carry no device__attribute_display_name, but `--print-details all` embeds a
    NUMA table ("GPU ID","GPU Name",...): when it names one GPU model, that is the device. Its
    lines are not rows of the page, so they are among the ragged lines."""
    if launches["device_name"].notna().any():
        return
    numa = (i for i, line in enumerate(ragged) if line.startswith('"GPU ID","GPU Name"'))
    start = next(numa, None)
    if start is None:
        return
    rows = [r for r in csv.reader(ragged[start + 1 :]) if len(r) == 5 and r[0].isdigit()]
    models = {r[1] for r in rows}
    if len(models) == 1:
        launches["device_name"] = schema.repeated(models.pop(), len(launches))
        notes.append("device name taken from the report's NUMA affinity table")
