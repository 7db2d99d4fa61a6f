"""The canonical launch table: one row per kernel launch, SI units, NA where the profile lacks."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import pandas as pd

from rooflint.core.quantities import (  # noqa: F401 (schema.OPS etc. still name them)
    BYTES,
    COMPUTE_CLASSES,
    MATRIX_OPS,
    MEMORY_LEVELS,
    OPS,
    PEAKS,
    VECTOR_OPS,
)

FORMAT_VERSION = 1

IDENTITY = [
    "source",  # the file the launch came from
    "launch_id",  # the profiler's launch ID, unique within a source
    "process_id",
    "kernel",  # display (demangled) name
    "kernel_mangled",
    "grid",  # "(x, y, z)"
    "block",
    "device_name",  # as the profiler printed it
    "arch",  # compute capability ("8.0") or gfx name ("gfx942")
    "range",  # NVTX or marker range
]
TIME = ["duration_s", "sm_clock_hz", "dram_clock_hz"]  # clocks as measured during the launch
# What the profile says about its GPU, for telling SKUs of one architecture apart.
DEVICE_FACTS = ["sm_count"]
BOOKKEEPING = ["missing", "notes"]

COLUMNS = IDENTITY + TIME + DEVICE_FACTS + OPS + BYTES + PEAKS + BOOKKEEPING
STRING_COLUMNS = [c for c in IDENTITY if c not in ("launch_id", "process_id")] + BOOKKEEPING
INT_COLUMNS = ["launch_id", "process_id"]
FLOAT_COLUMNS = TIME + DEVICE_FACTS + OPS + BYTES + PEAKS

# Columns only PyTorch-trace launches have (absent from other tables; NA in a mixed one).
TRACE_COLUMNS = [
    "op",  # the innermost CPU operator that launched the kernel (aten::addmm)
    "op_parent",  # the operator around it (aten::linear)
    "op_input_dims",  # the operator's input shapes, JSON text ("[[788,768],[768,768]]")
    "op_input_types",  # its input dtypes ("c10::BFloat16, c10::BFloat16")
    "module",  # nn.Module path ("ViTModel_0.ViTEncoder_0.ViTLayer_3")
    "activity",  # kernel, gpu_memcpy or gpu_memset
    "graph_replay",  # replayed from a CUDA graph
    "flops_source",  # counters, model, estimate, or NA
    "bytes_source",  # counters, model, estimate, or NA
    "bytes_model_min",  # the operator's minimum DRAM traffic from its shapes (byte)
    "excess_traffic",  # measured DRAM bytes / bytes_model_min
    "roof_assumed",  # an FP32 GEMM whose kernel name left its roof open: FP32 vector assumed
]
# Columns of a timeline (a trace reader's): what `core.timeline` works from, in SI units.
TIMELINE_COLUMNS = [
    "start_s",  # when the launch started on the GPU, from the trace's first GPU activity
    "launch_s",  # when the host issued it (the runtime call), from the same origin; NA if none
    "kind",  # kernel, memcpy, memset or communication
    "stream",
    "device_index",
    "collective",  # a communication kernel's collective (allreduce, ...)
    "comm_bytes",  # its message size (the larger of input and output)
    "comm_ranks",  # the size of its process group
    "rank",  # the trace's rank in its distributed job (distributedInfo)
]
TRACE_COLUMNS += TIMELINE_COLUMNS
# Of those, the two an ncu export has too where a kernel's name gives its GEMM's shape
# (core/gemm_shape.py, parsers/ncu_launch.gemm_minimum).
MODEL_COLUMNS = ["bytes_model_min", "excess_traffic"]
# ncu's speed-of-light figures, fractions of peak over elapsed cycles, only in a table of an ncu
# export that lacks DRAM byte or FLOP counters (they stand in for them: core.analysis).
SOL_COLUMNS = [
    "dram_throughput",  # DRAM throughput (gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed)
    "sm_throughput",  # SM throughput (sm__throughput)
    "pipe_utilisation",  # the busiest SM pipe's active cycles (sm__pipe_*_cycles_active, ...)
    "pipe",  # which pipe that is (alu, fma, fp64, tensor, ...)
]
# What the analysis adds where a quantity is estimated from those: provenance.Provenance.
ESTIMATE_COLUMNS = ["compute_source"]
# Per-launch facts of an ncu export beyond its counters (parsers/ncu_launch.py), for the advice;
# only in a table whose export has some. Fractions of peak, counts, and two texts.
LAUNCH_FACT_DTYPES = {
    "occupancy_achieved": "float64",  # achieved occupancy, fraction of the SM's warp slots
    "occupancy_theoretical": "float64",  # the most the launch's resources allow
    "occupancy_limiter": "category",  # registers, shared memory, warps or blocks: the fewest blocks
    "occupancy_limit_blocks": "float64",  # how many blocks per SM that limiter allows
    "occupancy_limit_next": "float64",  # how many the next tightest limit allows
    "waves": "float64",  # waves per SM (launch__waves_per_multiprocessor)
    "registers_per_thread": "float64",
    "l1_throughput": "float64",  # L1/TEX throughput, fraction of peak
    "l2_throughput": "float64",  # L2 throughput, fraction of peak
    "stall_top": "category",  # the largest warp stall reason (long_scoreboard, ...)
    "stall_share": "float64",  # its share of the sampled (or per-instruction) warp cycles
}
LAUNCH_FACT_COLUMNS = list(LAUNCH_FACT_DTYPES)
# The columns only some launch tables have, in the order the formats write them.
OPTIONAL_COLUMNS = TRACE_COLUMNS + SOL_COLUMNS + ESTIMATE_COLUMNS + LAUNCH_FACT_COLUMNS

UNITS = {
    "duration_s": "s",
    "sm_clock_hz": "Hz",
    "dram_clock_hz": "Hz",
    "sm_count": "SM",
    **{c: "op" for c in OPS},
    **{c: "byte" for c in BYTES},
    **{p: "op/s" for p in PEAKS if not p.startswith("peak_bytes")},
    **{p: "byte/s" for p in PEAKS if p.startswith("peak_bytes")},
    "bytes_model_min": "byte",
    "excess_traffic": "ratio",
    "start_s": "s",
    "launch_s": "s",
    "comm_bytes": "byte",
    **dict.fromkeys(["dram_throughput", "sm_throughput", "pipe_utilisation"], "fraction of peak"),
}


class Absence(IntEnum):
    """Why a quantity is missing, as the code of its `missing` entry (the words say the rest)."""

    NOT_COUNTED = 0  # the profile has no counter or model for it: the words say what to collect
    NO_COUNTERS = 1  # the GPU has no such counters (MI100, RDNA FLOPs): nothing to collect


@dataclass(frozen=True)
class Missing:
    """Why a quantity is missing: the words `missing` shows, and their code."""

    words: str
    absence: Absence = Absence.NOT_COUNTED


# The quantities a `missing` entry names: "ops" is every operation column, "ops_vector" and
# "ops_matrix" one kind absent while the other was counted.
MISSING_QUANTITIES = ["duration_s", "sm_clock_hz", "ops", "ops_vector", "ops_matrix", *OPS, *BYTES]
# The codes beside the words, never printed: `missing_codes`, an int64 per launch whose bit 0
# says a value was negative or infinite in the input (read as missing; the launch's notes say
# which) and whose next bits say, per quantity and Absence, that the launch has that entry.
CODES = ["missing_codes"]
_INVALID = 1


def _bit(quantity: str, absence: Absence) -> int:
    return 1 << (1 + MISSING_QUANTITIES.index(quantity) * len(Absence) + absence)


def no_flop_counters(arch: str) -> Missing:
    """The entry for operations on a GPU that has no typed FLOP counters (MI100, RDNA)."""
    return Missing(_NO_FLOP_COUNTERS.format(arch=arch), Absence.NO_COUNTERS)


_NO_FLOP_COUNTERS = "{arch} has no typed FLOP counters"
_NO_FLOP_COUNTERS_READ = re.compile(_NO_FLOP_COUNTERS.format(arch=r"\S+"))  # its words, read back


def empty() -> pd.DataFrame:
    """A launch table with no rows and every canonical column."""
    return conform(pd.DataFrame(index=pd.RangeIndex(0)))


def conform_all(frame: pd.DataFrame) -> pd.DataFrame:
    """conform(frame), with the OPTIONAL_COLUMNS the frame has kept beside the canonical ones
    (a trace's timeline, ncu's percentages: what the analysis reads when they are there)."""
    out = conform(frame)
    for column in OPTIONAL_COLUMNS:
        if column in frame:
            out[column] = frame[column].to_numpy()
    return out


def conform(frame: pd.DataFrame) -> pd.DataFrame:
    """Add absent canonical columns as NA, fix dtypes and column order (extra columns dropped);
    the codes follow (`missing_codes`: as given, else read from the `missing` words)."""
    given = {c: frame[c] for c in (*COLUMNS, *CODES) if c in frame}
    return conformed(given, len(frame))


def conformed(columns: dict, n: int) -> pd.DataFrame:
    """`conform` of a table given as its columns (n values each: NumPy arrays, Categoricals or
    Series; absent ones NA), built once: a reader's columns that are already what the table
    holds (float64 arrays, Categoricals of sorted strings, int64 IDs) are taken as they are,
    without a Series or a frame around them first (issue 32: 3.5 ms of a 2k-launch file)."""
    out, flagged = {}, {}  # flagged: {column: rows negative or infinite}
    for col in COLUMNS:
        values = columns.get(col)
        if col in FLOAT_COLUMNS and values is None:
            out[col] = np.full(n, np.nan)
        elif col in FLOAT_COLUMNS:
            values = _floats(values)
            bad = _invalid(values)
            if bad is not None:  # never negative or infinite: NA, with a note on the launch
                values, flagged[col] = np.where(bad, np.nan, values), bad
            out[col] = values
        elif col in INT_COLUMNS:
            out[col] = _ints(values, n)
        else:  # text; the bookkeeping columns say "" where there is nothing to say
            fill = "" if col in BOOKKEEPING else None
            out[col] = repeated(fill, n) if values is None else text(values, fill)
    codes = columns.get("missing_codes")
    if codes is None:
        codes = _decoded(pd.Series(out["missing"], copy=False))
    else:
        codes = np.asarray(codes, dtype=np.int64)
    for bad in flagged.values():
        codes = codes | np.where(bad, _INVALID, 0)
    out["missing_codes"] = codes
    # copy=False: each column its own block, not copied into one 2-D block per dtype
    result = pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)
    for col, bad in flagged.items():
        add_note(result, f"{col} {INVALID_NOTE}", bad)
    return result


def _ints(values, n: int):
    """Whole numbers (IDs) as Int64, unreadable cells NA; int64 arrays taken as they are."""
    if values is None:
        return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
    if getattr(values, "dtype", None) == np.int64:  # an int64 array or Series (IDs as read)
        return pd.arrays.IntegerArray(np.asarray(values), np.zeros(n, dtype=bool))
    values = pd.Series(values, copy=False) if isinstance(values, np.ndarray) else values
    numbers = pd.to_numeric(values, errors="coerce").astype("Float64").round().astype("Int64")
    return numbers.array if isinstance(numbers, pd.Series) else numbers


def _floats(values) -> np.ndarray:
    """A float64 column as it is, anything else read as numbers (unreadable cells NA)."""
    if values.dtype == np.float64:
        return np.asarray(values)
    values = pd.Series(values, copy=False) if isinstance(values, np.ndarray) else values
    return np.asarray(pd.to_numeric(values, errors="coerce").astype("float64"))


INVALID_NOTE = "negative or infinite in the input, read as missing"


def _invalid(values) -> np.ndarray | None:
    """The rows where a float column is negative or infinite (None when there are none): times,
    counts, clocks and rates never are, so that no parser can hand the math such a number."""
    array = np.asarray(values)
    bad = (array < 0) | np.isinf(array)
    return bad if bad.any() else None


def invalid_rows(frame: pd.DataFrame) -> int:
    """How many launches had a negative or infinite quantity set to NA by `conform`."""
    return int(np.count_nonzero(frame["missing_codes"].to_numpy() & _INVALID))


def mark_missing(frame: pd.DataFrame, reasons: dict[str, str | Missing]) -> pd.DataFrame:
    """Record, per row, each quantity in `reasons` that is NA there, with its reason.

    `reasons` maps a quantity (a column, or "ops" for all operation columns together) to why
    it is missing (words, or a Missing with its code); the `missing` column becomes
    "quantity: reason; quantity: reason", and `missing_codes` gains each entry's code.
    """
    entries = _Entries(frame)
    kinds: dict = {}  # "ops" quantities share the vector/matrix NA masks: worked out once
    arrays = column_arrays(frame)  # the columns, looked up once (not a frame[...] per quantity)
    for quantity, reason in reasons.items():
        na = _quantity_na(arrays, quantity, kinds)
        if na.any():
            entries.add(quantity, reason, na)
    return entries.store(frame)


def add_missing(frame: pd.DataFrame, quantity: str, reason, where: np.ndarray) -> pd.DataFrame:
    """Record `quantity` as missing on the rows `where`, NA there or not (a trace's operator
    without a model): `reason` is words or a Missing for every row, or an array of each row's
    words."""
    return _Entries(frame).add(quantity, reason, np.asarray(where, dtype=bool)).store(frame)


def clear_missing(frame: pd.DataFrame, where: np.ndarray) -> pd.DataFrame:
    """Drop every `missing` entry of the rows `where` (their quantities were supplied since)."""
    frame["missing"] = filled(frame["missing"].where(~where), "")
    codes = frame["missing_codes"].to_numpy()
    frame["missing_codes"] = np.where(where, codes & _INVALID, codes)
    return frame


def lacks(frame: pd.DataFrame, quantity: str, absence: Absence | None = None) -> np.ndarray:
    """Rows with a `missing` entry for `quantity` (of that Absence only, when one is given)."""
    kinds = list(Absence) if absence is None else [absence]
    bits = sum(_bit(quantity, kind) for kind in kinds)
    return (_codes(frame) & bits) != 0


def _codes(frame: pd.DataFrame) -> np.ndarray:
    """The table's missing codes; read back from its words when a caller's table has only the
    canonical columns (rooflint.analyze(launches[schema.COLUMNS]))."""
    if "missing_codes" in frame:
        return frame["missing_codes"].to_numpy(np.int64)
    return _decoded(frame["missing"])


class _Entries:
    """The `missing` words and codes of a table while entries are added: the words as codes
    into distinct texts (each text gains a twin with the new entry), the codes as bits."""

    def __init__(self, frame: pd.DataFrame):
        self.codes, self.texts = _factorized(frame["missing"])
        given = frame["missing_codes"] if "missing_codes" in frame else None
        self.bits = _decoded(frame["missing"]) if given is None else given.to_numpy(np.int64)

    def add(self, quantity: str, reason, where: np.ndarray) -> _Entries:
        if isinstance(reason, np.ndarray):  # words per row
            word, words = pd.factorize(reason)
            absence = Absence.NOT_COUNTED
        else:
            reason = reason if isinstance(reason, Missing) else Missing(reason)
            word, words, absence = np.zeros(len(where), np.int64), [reason.words], reason.absence
        entries = [f"{quantity}: {w}" for w in words]
        twin = len(self.texts) + self.codes * len(entries) + word  # text t with entry e
        self.codes = np.where(where, twin, self.codes)
        self.texts = self.texts + [
            e if t == "" else f"{t}; {e}" for t in self.texts for e in entries
        ]
        self.codes, self.texts = _compacted(self.codes, self.texts)
        self.bits = self.bits | np.where(where, _bit(quantity, absence), 0)
        return self

    def store(self, frame: pd.DataFrame) -> pd.DataFrame:
        frame["missing"] = strings(self.codes, self.texts)
        frame["missing_codes"] = self.bits
        return frame


def _decoded(words: pd.Series) -> np.ndarray:
    """The codes of `missing` words read back (a saved report, a Parquet dataset, a table made
    by hand): each entry's quantity, NO_COUNTERS where the words are no_flop_counters'."""
    codes, texts = _factorized(words)
    return np.array([_bits_of(text) for text in texts], dtype=np.int64)[codes]


def _bits_of(text: str) -> int:
    """The codes of one `missing` cell's words."""
    bits = 0
    for quantity, reason in missing_map(text).items():
        if quantity in MISSING_QUANTITIES:
            bits |= _bit(quantity, _absence_of(reason))
    return bits


def _absence_of(reason: str) -> Absence:
    counters = _NO_FLOP_COUNTERS_READ.fullmatch(reason)
    return Absence.NO_COUNTERS if counters else Absence.NOT_COUNTED


def _quantity_na(arrays: dict, quantity: str, kinds: dict) -> np.ndarray:
    """NA mask of a quantity (`arrays`: a table's column arrays by name); "ops" is all operation
    columns, "ops_vector"/"ops_matrix" one kind missing while the other was counted (the launch
    is still analysed, as a lower bound)."""
    if not quantity.startswith("ops"):
        return _na(arrays[quantity])
    if not kinds:
        kinds.update(vector=_all_na(arrays, VECTOR_OPS), matrix=_all_na(arrays, MATRIX_OPS))
    vector, matrix = kinds["vector"], kinds["matrix"]
    if quantity == "ops":
        return vector & matrix
    if quantity == "ops_vector":
        return vector & ~matrix
    if quantity == "ops_matrix":
        return matrix & ~vector
    return _na(arrays[quantity])


def all_na(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Rows where every one of `columns` is NA (column by column: no multi-column copy)."""
    return _all_na(column_arrays(frame), columns, len(frame))


def _all_na(arrays: dict, columns: list[str], n: int | None = None) -> np.ndarray:
    """`all_na` of a table's column arrays by name."""
    out = np.ones(len(arrays[columns[0]]) if n is None else n, dtype=bool)
    for column in columns:
        out &= _na(arrays[column])
    return out


def _na(values) -> np.ndarray:
    """A column array's NA mask (NaN in a float64 array)."""
    if isinstance(values, np.ndarray) and values.dtype == np.float64:
        return np.isnan(values)
    return np.asarray(pd.isna(values), dtype=bool)


def column_arrays(frame: pd.DataFrame) -> dict:
    """{column: its array} of a table with unique column names, every column looked up in one
    pass (`_column_arrays`: 2 us a column, against 20 us for each frame[column]); a table with
    a repeated name gives each name's Series, as frame[column] does."""
    if not frame.columns.is_unique:
        return {c: frame[c] for c in frame.columns.unique()}
    return dict(zip(frame.columns, _column_arrays(frame), strict=True))


def add_note(frame: pd.DataFrame, note: str, where: np.ndarray | None = None) -> pd.DataFrame:
    """Append a human-readable note to the rows selected by `where` (all rows by default)."""
    codes, texts = _factorized(frame["notes"])
    mask = np.ones(len(frame), dtype=bool) if where is None else np.asarray(where, dtype=bool)
    codes = codes + len(texts) * mask
    texts = texts + [note if t == "" else t + "; " + note for t in texts]
    frame["notes"] = strings(*_compacted(codes, texts))
    return frame


def strings(codes: np.ndarray, labels: list) -> pd.Categorical:
    """A text column from integer codes into `labels` (a negative code is NA): a Categorical
    whose categories are the distinct labels, sorted (so that sorting by it sorts the text)."""
    codes = np.asarray(codes).astype(np.int64, copy=False)
    if len(codes) and codes.min() < -1:
        codes = np.maximum(codes, -1)
    used = np.flatnonzero(np.bincount(codes + 1, minlength=len(labels) + 1)[1:])
    ascending = all(a < b for a, b in zip(labels[:-1], labels[1:], strict=True))
    if len(used) == len(labels) and ascending:  # sorted, distinct and used: codes as given
        return _categorical(codes, labels)
    distinct, inverse = np.unique(np.asarray(labels, dtype=object)[used], return_inverse=True)
    code_of = np.full(len(labels) + 1, -1)  # code -1 reads the last entry: NA stays NA
    code_of[used] = inverse.reshape(-1)
    return _categorical(code_of[codes], distinct)


def _categorical(codes: np.ndarray, categories) -> pd.Categorical:
    """Codes checked by the caller (each -1 or a category's position): not validated again."""
    if len(categories) <= _FEW:
        dtype = _dtype(tuple(categories))
    else:
        dtype = pd.CategoricalDtype(pd.Index(categories, dtype="str"))
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


_FEW = 32  # categories of so few labels have their dtype made once: a column absent, one source


@functools.lru_cache(maxsize=512)
def _dtype(categories: tuple) -> pd.CategoricalDtype:
    """The dtype of a Categorical over these few categories (sorted, distinct: the caller's),
    made once: pandas checks a new dtype's categories are unique (0.1 ms each, 10 text columns
    of every file of a folder)."""
    return pd.CategoricalDtype(pd.Index(list(categories), dtype="str"))


def repeated(value, n: int) -> pd.Categorical:
    """`value` (a string, or NA) on each of n rows, as a text column."""
    missing = value is None or value is pd.NA
    return strings(np.full(n, -1 if missing else 0, dtype=np.int32), [] if missing else [value])


def text(values, fill: str | None = None) -> pd.Categorical:
    """Any column of text (or values read as text) as the table holds text: a Categorical of
    sorted strings (see `strings`); NA becomes `fill` when one is given."""
    if isinstance(values.dtype, pd.CategoricalDtype) and fill is None:
        values = values.array if isinstance(values, pd.Series) else values
        codes = values.codes.astype(np.int64)  # int8 for a few categories: no overflow at +1
        used = np.bincount(codes + 1, minlength=len(values.categories) + 1)[1:] > 0
        sorted_ = values.categories.dtype == "str" and values.categories.is_monotonic_increasing
        if sorted_ and used.all():
            return values
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    labels = [str(u) for u in uniques]
    if fill is not None and (codes < 0).any():
        codes, labels = np.where(codes < 0, len(labels), codes), labels + [fill]
    return strings(codes, labels)


def concat(frames: list[pd.DataFrame], **kwargs) -> pd.DataFrame:
    """pd.concat of launch tables; a text column every table holds as a Categorical stays
    one, over the sorted union of their categories (pd.concat would drop the Categorical)."""
    frames = list(frames)
    text = [
        c
        for c in (frames[0].columns if frames else [])
        if all(c in f and isinstance(f[c].dtype, pd.CategoricalDtype) for f in frames)
    ]
    if len(frames) < 2 or not text:
        return pd.concat(frames, **kwargs)
    if kwargs == {"ignore_index": True} and alike(frames):
        return _stacked(frames)
    joined = pd.concat([f.drop(columns=text) for f in frames], **kwargs)
    for column in text:  # each table's codes mapped into the union: no per-table recoding
        joined[column] = _joined_text([f[column].array for f in frames])
    return joined[list(dict.fromkeys(c for f in frames for c in f.columns))]  # pd.concat's order


def alike(frames: list[pd.DataFrame]) -> bool:
    """Whether the tables have the same columns, each of one dtype in all (Categoricals of
    any categories), as a folder's tables from one reader do."""
    first = frames[0]
    kinds = [kind(d) for d in first.dtypes]
    return first.columns.is_unique and all(
        f.columns.equals(first.columns) and [kind(d) for d in f.dtypes] == kinds for f in frames[1:]
    )


def kind(dtype) -> object:
    """A column's dtype, any Categorical as one ("category"): what `alike` compares."""
    return "category" if isinstance(dtype, pd.CategoricalDtype) else dtype


def _stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """concat of alike tables (`alike`) a column at a time: each column's arrays joined once
    (NumPy's, an extension array's own concatenation, the Categoricals' union), the frame
    built once; pd.concat of a 100-file folder's tables cost 45 ms and taking the text out of
    each of them first 84 ms more."""
    columns = list(zip(*(_column_arrays(f) for f in frames), strict=True))
    out = {}
    for name, arrays in zip(frames[0].columns, columns, strict=True):
        first = arrays[0]
        if isinstance(first, pd.Categorical):
            out[name] = _joined_text(list(arrays))
        elif isinstance(first, np.ndarray):
            out[name] = np.concatenate(arrays)
        else:
            out[name] = type(first)._concat_same_type(list(arrays))
    return pd.DataFrame(out, index=pd.RangeIndex(sum(len(f) for f in frames)), copy=False)


def _column_arrays(frame: pd.DataFrame) -> list:
    """The frame's column arrays in column order: pandas' own iterator where it has it (2 us a
    column against 24 us for frame[column].array; tests/test_table_build.py checks they give
    the same), else the public way."""
    iterate = getattr(frame, "_iter_column_arrays", None)
    if iterate is not None:
        return list(iterate())
    return [frame[c].array if not _plain(frame[c]) else frame[c].to_numpy() for c in frame]


def _plain(column: pd.Series) -> bool:
    return isinstance(column.dtype, np.dtype)


def _joined_text(columns: list[pd.Categorical]) -> pd.Categorical:
    """The columns one after another, over the sorted union of their categories: each
    distinct label placed in the union once (a folder's tables repeat the same few hundred
    kernel names: a set of them, not a sort of every table's labels)."""
    labels = [c.categories.tolist() for c in columns]
    union = sorted(set().union(*labels))
    where = {label: i for i, label in enumerate(union)}
    codes = []
    for column, names in zip(columns, labels, strict=True):
        position = np.array([where[n] for n in names] + [-1], dtype=np.int64)  # -1 stays NA
        codes.append(position[column.codes])
    return _categorical(np.concatenate(codes), union)


def filled(column: pd.Series, value: str) -> pd.Series:
    """A text column with NA replaced by `value` (a Categorical gains it as a category)."""
    if isinstance(column.dtype, pd.CategoricalDtype) and value not in column.cat.categories:
        if not column.hasnans:
            return column
        column = column.cat.add_categories([value])
    return column.fillna(value)


def _factorized(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(codes, distinct texts) of a text column, NA read as "" (a Categorical's codes and
    categories as they are: the callers compact and sort the texts they keep)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.array.codes.astype(np.int64)
        texts = [str(c) for c in column.cat.categories]
        if (codes < 0).any() or not texts:
            codes = np.where(codes < 0, len(texts), codes)
            texts.append("")
        return codes, texts
    codes, uniques = pd.factorize(filled(column, ""))
    texts = [str(u) for u in uniques]
    if (codes < 0).any() or not texts:
        codes = np.where(codes < 0, len(texts), codes)
        texts.append("")
    return codes, texts


def first_rows(codes: np.ndarray, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the codes that occur, ascending; the row of each one's first occurrence), as
    np.unique(codes, return_index=True) gives them for codes 0..n-1, by a minimum per code
    instead of a sort (200k launches in 300 groups: 17 ms -> 0.6 ms)."""
    n = (int(codes.max()) + 1 if len(codes) else 0) if n is None else n
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    seen = np.flatnonzero(first < len(codes))
    return seen, first[seen]


def _compacted(codes: np.ndarray, texts: list[str]) -> tuple[np.ndarray, list[str]]:
    """Keep only the texts some row uses, so that repeated calls stay small (codes renumbered
    in the texts' order, as np.unique would, by a count per code instead of a sort)."""
    used = np.flatnonzero(np.bincount(codes, minlength=len(texts)))
    position = np.zeros(len(texts), dtype=np.int64)
    position[used] = np.arange(len(used))
    return position[codes], [texts[i] for i in used]


_ENTRY_SPLIT = re.compile(r"; (?=(?:duration_s|sm_clock_hz|ops|ops_\w+|bytes_\w+): )")


def missing_map(text: str) -> dict[str, str]:
    """Parse a `missing` cell back into {quantity: reason}."""
    if not text:
        return {}
    pairs = (item.split(": ", 1) for item in _ENTRY_SPLIT.split(text))
    return {q: (r[0] if r else "") for q, *r in pairs}


def added(*parts: np.ndarray) -> np.ndarray:
    """Row-wise sum of the parts that have a value, added in order (as pandas' row sum with
    min_count=1 adds them); NaN where none has."""
    total, present = np.zeros(len(parts[0])), np.zeros(len(parts[0]), dtype=bool)
    for part in parts:
        here = ~np.isnan(part)
        total += np.where(here, part, 0.0)
        present |= here
    return np.where(present, total, np.nan)


def total_ops(frame: pd.DataFrame, columns: list[str] | None = None) -> pd.Series:
    """Sum of operation columns, NA only where every one of them is NA."""
    parts = (frame[c].to_numpy(dtype="float64", na_value=np.nan) for c in columns or OPS)
    return pd.Series(added(*parts), index=frame.index)


def flops(frame: pd.DataFrame) -> pd.Series:
    """Floating-point operations (vector and matrix), integer matrix ops excluded."""
    return total_ops(frame, [c for c in OPS if c != "ops_matrix_int8"])


def validate(frame: pd.DataFrame) -> None:
    """Assert the invariants of a canonical table (used by tests and fuzzing)."""
    assert list(frame.columns[: len(COLUMNS)]) == COLUMNS, "canonical columns out of order"
    for col in FLOAT_COLUMNS:
        assert frame[col].dtype == "float64", f"{col} is {frame[col].dtype}"
    for col in STRING_COLUMNS:
        assert isinstance(frame[col].dtype, pd.CategoricalDtype), f"{col} is {frame[col].dtype}"
    assert frame["missing_codes"].dtype == np.int64, "missing_codes is not int64"
    values = frame[OPS + BYTES + ["duration_s"]].to_numpy(dtype=float)
    finite = values[~np.isnan(values)]
    assert np.isfinite(finite).all(), "infinite quantity"
    assert (finite >= 0).all(), "negative quantity"
