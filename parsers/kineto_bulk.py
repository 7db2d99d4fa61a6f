"""A trace's events decoded in bulk by msgspec into typed Structs that hold only the fields
rooflint reads, then gathered into kineto_events.TraceEvents a column at a time.

The fields are those kineto_events.TraceEvents.take reads: an event's cat, name, pid, tid, ts,
dur and args; of args, the GPU activity's bytes, blocks per SM, correlation, External id, stream,
grid, block and device; the operator's Input Dims, Input type, Concrete Inputs, kernel_kwargs
and Module Hierarchy; the runtime call's kernel; and the collective's message fields (Comm.of).
Every other key (ph, id, a Python event's ids, a kernel's registers) is skipped by the decoder
unread. A field TraceEvents.take comes to read must be added here too: tests/test_kineto_bulk.py
compares every column of the two paths and fails on one missing.

The Structs' types are those TraceEvents.take accepts without complaint, so a batch the strict
Structs decode needs no check of its own. A batch they refuse (a field of another type, say a
timestamp written as a string, or a counter-range trace whose args rooflint keeps whole) is
decoded again by orjson into dicts for TraceEvents.take, which reads it as before and names any
wrong field: the output, errors included, is that of the dict path either way
(tests/test_kineto_bulk.py compares the two on every real trace).
"""

from __future__ import annotations

from itertools import repeat
from typing import Annotated, Any, Union

import msgspec
import numpy as np
import orjson

from . import kineto_fields as fields
from .kineto_events import (
    COMM_OP,
    COMM_SIZE,
    COUNTER_RANGE,
    GPU_ACTIVITIES,
    GPU_ANNOTATION,
    MODULE_PREFIX,
    NO_ID,
    RUNTIME,
    STEP_PREFIX,
    Comm,
    TraceEvents,
    _float,
    _int,
)

UNSET: Any = msgspec.UNSET
NULL = msgspec.Raw(b"null")  # an operator argument left out packs as null, as dumps(None)
Int64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
Dim3 = tuple[int | float, ...]


# (attribute, JSON key, type): the arguments rooflint reads, of every kind of event. The strict
# Structs hold these types; the loose ones any JSON (ROCm writes `bytes` and `stream` as strings,
# a Triton trace's operators a grid as text), checked after decoding as TraceEvents.take checks
# the events it reads (kineto_fields), and read as it reads them (a string `bytes` is NaN).
ARGS = (
    ("bytes", "bytes", float | None),
    ("blocks_per_sm", "blocks per SM", float | None),
    ("correlation", "correlation", int | None),
    ("external", "External id", int | None),
    ("stream", "stream", int | None),
    ("kernel", "kernel", str | None),
    ("grid", "grid", Dim3 | None),
    ("block", "block", Dim3 | None),
    ("device", "device", Int64 | None),
    ("module", "Module Hierarchy", str | None),
)
RAW = (("dims", "Input Dims"), ("types", "Input type"), ("concrete", "Concrete Inputs"))
COMM = (
    ("nelems", COMM_SIZE),
    ("out_nelems", "Out msg nelems"),
    ("dtype", "dtype"),
    ("collective", "Collective name"),
    ("group", "Group size"),
)
EVENT = (("cat", str | None), ("name", str | None), ("pid", int | str | None))
EVENT += (("tid", int | str | None), ("ts", float | None), ("dur", float | None))


def _structs(loose: bool) -> tuple[type, type, type]:
    """The (Args, Event, Trace) Structs: strict, or loose (any JSON in every field but args).
    None of them is tracked by the garbage collector (gc=False): decoded JSON holds no cycles,
    and an untracked Struct is made and freed faster."""
    args = [
        (attr, Any if loose else kind, msgspec.field(default=None, name=key))
        for attr, key, kind in ARGS
    ]
    args += [(attr, msgspec.Raw, msgspec.field(default=NULL, name=key)) for attr, key in RAW]
    args += [("kwargs", msgspec.Raw, msgspec.field(default=UNSET, name="kernel_kwargs"))]
    args += [(attr, Any, msgspec.field(default=UNSET, name=key)) for attr, key in COMM]
    suffix = "Loose" if loose else ""
    arg_type = msgspec.defstruct("Args" + suffix, args, gc=False)
    event = [(attr, Any if loose else kind, None) for attr, kind in EVENT]
    event_type = msgspec.defstruct(
        "Event" + suffix, [*event, ("args", arg_type | None, None)], gc=False
    )
    trace = msgspec.defstruct("Trace" + suffix, [("traceEvents", list[event_type], [])])
    return arg_type, event_type, trace


STRICT, LOOSE = _structs(False), _structs(True)

# The categories whose events TraceEvents.take reads nothing of (flows, instant events, ...): by
# the tagged Structs each decodes to an empty one, its fields skipped unread. Which categories
# are listed changes only the speed: a batch holding an event of a category listed nowhere (or of
# none) is decoded by the untagged Structs, as before.
IGNORED = ("ac2g", "fwdbwd", "cpu_instant_event", "Trace", "overhead", "cuda_sync")
# The fields read of each category's events, beyond its name (the tag, `cat`, is a class
# attribute): an annotation's or a Python event's times, thread and name, never its args.
SPAN_FIELDS = ("name", "pid", "tid", "ts", "dur")
SPAN_CATEGORIES = ("python_function", "user_annotation", GPU_ANNOTATION)


def _tagged() -> msgspec.json.Decoder:
    """A decoder of a batch as a union of Structs tagged by `cat`: the strict Event's fields for
    operators, runtime calls and GPU activities, a span's fields for annotations and Python
    events, none for the IGNORED categories. A category of none of them fails it."""
    base = msgspec.defstruct("Tagged", [], tag_field="cat", gc=False)
    types = dict(EVENT)
    full = [(a, k, None) for a, k in EVENT if a != "cat"] + [("args", STRICT[0] | None, None)]
    span = [(a, types[a], None) for a in SPAN_FIELDS]
    kinds = [(c, full) for c in ("cpu_op", *RUNTIME, *GPU_ACTIVITIES)]
    kinds += [(c, span) for c in SPAN_CATEGORIES] + [(c, []) for c in IGNORED]
    union = tuple(
        msgspec.defstruct(
            f"Tagged{i}", fields, bases=(base,), tag=cat, namespace={"cat": cat}, gc=False
        )
        for i, (cat, fields) in enumerate(kinds)
    )
    return msgspec.json.Decoder(list[Union[union]])  # noqa: UP007 (a tuple of types)


class Structs(list):
    """A batch of events decoded into Structs (a plain list is a batch of dicts); `loose`: by
    the loose ones, whose tolerant fields may hold any JSON."""

    loose = False


_DECODERS = [(_tagged(), False)] + [
    (msgspec.json.Decoder(list[s[1]]), loose) for s, loose in ((STRICT, False), (LOOSE, True))
]
_TRACE = msgspec.json.Decoder(STRICT[2])
NO_ARGS = {False: STRICT[0](), True: LOOSE[0]()}


def decode_trace(data: bytes) -> list:
    return _TRACE.decode(data).traceEvents


def parse(data: bytes) -> list:
    """One batch of events (a JSON array): Structs, else orjson's dicts where the Structs do
    not fit it; malformed JSON raises orjson's error, as the stream reader expects."""
    if COUNTER_RANGE.encode() in data:
        return orjson.loads(data)
    for decoder, loose in _DECODERS:
        try:
            batch = Structs(decoder.decode(data))
        except msgspec.ValidationError:
            continue
        except (msgspec.DecodeError, RecursionError):  # msgspec's nesting limit is lower
            break  # orjson's error (or its reading, where it is laxer) is the answer
        batch.loose = loose
        return batch
    return orjson.loads(data)


def take(events: TraceEvents, batch: list) -> None:
    """Add one batch (from `parse`) to `events`."""
    if isinstance(batch, Structs):
        _take(events, batch)
    else:
        events.take(batch)


def _take(events: TraceEvents, batch: Structs) -> None:
    if batch.loose:
        _check(batch, events.seen, events.source)
    kinds = _kinds(batch)
    rows = {kind: _rows(batch, kinds == kind) for kind in (_GPU, _OP, _CALL)}
    spans = _rows(batch, (kinds == _MODULE) | (kinds == _USER))
    steps = [e for e in _rows(batch, (kinds == _USER) | (kinds == _GPU_USER)) if _step(e.name)]
    gather = Gather(events.strings.setdefault, batch.loose)
    gather.gpu(events.gpu.columns, rows[_GPU])
    gather.ops(events, rows[_OP])
    gather.spans(events.spans.columns, spans)
    gather.runtime(events.runtime.columns, rows[_CALL])
    gather.steps(events.steps.columns, steps)
    events.seen += len(batch)


# Each event's kind, as TraceEvents.take sorts them by category: a Python event is an nn.Module
# span only when its name says so (_kinds); any other category is _OTHER, never read.
_OTHER, _PYTHON, _MODULE, _OP, _CALL, _GPU, _USER, _GPU_USER = range(8)
KINDS = {"python_function": _PYTHON, "cpu_op": _OP, "user_annotation": _USER}
KINDS |= {GPU_ANNOTATION: _GPU_USER} | dict.fromkeys(RUNTIME, _CALL)
KINDS |= dict.fromkeys(GPU_ACTIVITIES, _GPU)


def _kinds(batch: Structs) -> np.ndarray:
    """Each event's kind (int8): its category looked up in KINDS a batch at a time, then the
    Python events whose names start with MODULE_PREFIX made _MODULE."""
    cats = [e.cat for e in batch]
    if batch.loose:  # any JSON: a category that is no string is none of KINDS
        cats = [c if type(c) is str else None for c in cats]
    kinds = np.fromiter(map(KINDS.get, cats, repeat(_OTHER)), dtype=np.int8, count=len(cats))
    python = np.flatnonzero(kinds == _PYTHON)
    names = [batch[i].name for i in python.tolist()]
    module = [n is not None and n.startswith(MODULE_PREFIX) for n in names]
    kinds[python[np.array(module, dtype=bool)]] = _MODULE
    return kinds


def _rows(batch: Structs, mask: np.ndarray) -> list:
    """The events of `batch` where `mask` is set, in their order."""
    return [batch[i] for i in np.flatnonzero(mask).tolist()]


def _step(name: str | None) -> bool:
    return name is not None and name.startswith(STEP_PREFIX)


def _check(batch: Structs, seen: int, src: str) -> None:
    """The type checks TraceEvents.take makes, in its order, on the fields it reads of each event
    of a loose batch: its first wrong field is the error, as it would have been."""
    for at, e in enumerate(batch, seen):
        cat = e.cat
        if not (cat in CHECKED or cat in RUNTIME or cat in GPU_ACTIVITIES):
            continue
        name = _checked(fields.text, e.name, "name", at, src)
        if cat == GPU_ANNOTATION or (cat == "python_function" and not _module(name)):
            continue
        a = e.args or NO_ARGS[True]
        if cat in GPU_ACTIVITIES:
            _checked(fields.dim3, a.grid, "grid", at, src, ".args")
            _checked(fields.dim3, a.block, "block", at, src, ".args")
            if _checked(fields.integer, a.device, "device", at, src, ".args") is None:
                _checked(fields.ident, e.pid, "pid", at, src)
            continue
        _checked(fields.ident, e.pid, "pid", at, src)
        _checked(fields.ident, e.tid, "tid", at, src)
        if cat == "cpu_op":
            _checked(fields.text, a.module, "Module Hierarchy", at, src, ".args")


CHECKED = ("python_function", "cpu_op", "user_annotation", GPU_ANNOTATION)


def _checked(check, value, key: str, at: int, src: str, inside: str = ""):
    """A kineto_fields check of one value, read as the field `key` of its record."""
    return check({key: value}, key, at, src, inside)


def _module(name: str) -> bool:
    return name.startswith(MODULE_PREFIX)


# Each field Gather reads straight into the column of its name, of an event or of its args: the
# field's values, and the Gather method that converts them. A comprehension per field, naming its
# attribute: read by a name held in a variable (attrgetter, getattr) a Struct's attribute takes
# twice as long, and the 150 MB synthetic trace's gathering 15 % longer.
FIELDS = {
    "name": (lambda rows: [e.name for e in rows], "text"),
    "cat": (lambda rows: [e.cat for e in rows], "same"),
    "pid": (lambda rows: [e.pid for e in rows], "same"),
    "tid": (lambda rows: [e.tid for e in rows], "same"),
    "ts": (lambda rows: [e.ts for e in rows], "floats"),
    "dur": (lambda rows: [e.dur for e in rows], "floats"),
    "bytes": (lambda args: [a.bytes for a in args], "floats"),
    "blocks_per_sm": (lambda args: [a.blocks_per_sm for a in args], "floats"),
    "correlation": (lambda args: [a.correlation for a in args], "ids"),
    "external": (lambda args: [a.external for a in args], "ids"),
    "stream": (lambda args: [a.stream for a in args], "ids"),
    "grid": (lambda args: [a.grid for a in args], "dim3"),
    "block": (lambda args: [a.block for a in args], "dim3"),
}


class Gather:
    """The columns of one batch's events of each kind, as TraceEvents.take makes them: text
    through the shared string table, numbers by kineto_events' _float and _int (strict Structs
    hold only numbers or None there, so whole columns are converted at once). Each kind's
    columns named in FIELDS come from `read`; its method makes the others."""

    def __init__(self, shared, loose: bool):
        self.shared, self.loose = shared, loose
        self.no_args = NO_ARGS[loose]

    def read(self, rows: list, *fields: str) -> dict:
        """{field: its column}: each field of `rows` (events, or their args) as FIELDS says."""
        out = {}
        for field in fields:
            values, how = FIELDS[field]
            out[field] = getattr(self, how)(values(rows))
        return out

    def floats(self, values: list) -> np.ndarray:
        """_float: a number as float64, anything else NaN."""
        if self.loose:
            values = [_float(x) for x in values]
        return np.array(values, dtype=np.float64)

    def ids(self, values: list) -> list[int] | np.ndarray:
        """_int: a non-negative integer, anything else NO_ID (a column of int64 ids at once)."""
        if self.loose:
            return [_int(x) for x in values]
        whole = np.array(values)
        if whole.dtype == np.int64:  # no None, none beyond 64 bits
            return np.where(whole < 0, NO_ID, whole)
        return [NO_ID if x is None or x < 0 else x for x in values]

    def text(self, values: list) -> list[str]:
        """Through the string table, None as "" (None's entry in the table is never read)."""
        out = self.same(values)
        return ["" if x is None else x for x in out] if None in out else out

    def same(self, values: list) -> list:
        """Each value as the string table's one copy of it (mapped in C: no call per value)."""
        return list(map(self.shared, values, values))

    def dim3(self, values: list) -> list:
        """A grid or block as a tuple (the loose Structs decode an array as a list)."""
        if self.loose:
            values = [None if x is None else tuple(x) for x in values]
        return self.same(values)

    def args(self, rows: list) -> list:
        return [self.no_args if e.args is None else e.args for e in rows]

    def gpu(self, columns: dict, rows: list) -> None:
        args = self.args(rows)
        _extend(
            columns,
            **self.read(rows, "name", "cat", "ts", "dur"),
            **self.read(args, "bytes", "blocks_per_sm", "correlation", "external", "stream"),
            **self.read(args, "grid", "block"),
            device=[
                e.pid if a.device is None else a.device for e, a in zip(rows, args, strict=True)
            ],
            comm=[None if a.nelems is UNSET else Comm.of(_comm_dict(a)) for a in args],
        )

    def ops(self, events: TraceEvents, rows: list) -> None:
        args, shared = self.args(rows), self.shared
        read = self.read(rows, "name", "pid", "tid", "ts", "dur") | self.read(args, "external")
        first = len(events.ops)
        _extend(
            events.ops.columns,
            **read,
            arguments=self.same([_pack(a) for a in args]),
            module=[shared(a.module, a.module) if a.module else None for a in args],
        )
        for i, name in enumerate(read["name"]):
            if name == COMM_OP:
                events.comms[first + i] = Comm.of(_comm_dict(args[i]))

    def spans(self, columns: dict, rows: list) -> None:
        """user_annotation (kind 0) and nn.Module spans (1, named without the prefix)."""
        user = [e.cat == "user_annotation" for e in rows]
        cut = len(MODULE_PREFIX)
        names = [(e.name or "") if u else e.name[cut:] for e, u in zip(rows, user, strict=True)]
        _extend(
            columns,
            kind=[0 if u else 1 for u in user],
            name=self.same(names),
            **self.read(rows, "pid", "tid", "ts", "dur"),
        )

    def runtime(self, columns: dict, rows: list) -> None:
        args, shared = self.args(rows), self.shared
        _extend(
            columns,
            **self.read(rows, "name", "pid", "tid", "ts"),
            **self.read(args, "correlation", "external"),
            kernel=[shared(a.kernel, a.kernel) if type(a.kernel) is str else None for a in args],
        )

    def steps(self, columns: dict, rows: list) -> None:
        _extend(
            columns,
            name=[e.name for e in rows],
            **self.read(rows, "ts", "dur"),
            gpu=[0 if e.cat == "user_annotation" else 1 for e in rows],
        )


def _extend(columns: dict, **values) -> None:
    for name, column in values.items():
        if isinstance(column, np.ndarray):
            columns[name].frombytes(column.tobytes())
        else:
            columns[name].extend(column)


def _pack(a) -> bytes:
    """kineto_events._pack from the arguments' JSON text: the same values when read back."""
    if a.kwargs is UNSET:  # joined: `%b` formatting of Raw values took half as long again
        return b"".join((b"[", a.dims, b",", a.types, b",", a.concrete, b"]"))
    return b"".join((b"[", a.dims, b",", a.types, b",", a.concrete, b",", a.kwargs, b"]"))


def _comm_dict(a) -> dict:
    """The args Comm.of reads, as the dict it takes (absent keys left out)."""
    found = {key: getattr(a, attr) for attr, key in COMM if getattr(a, attr) is not UNSET}
    for attr, key in RAW[:2]:
        if getattr(a, attr) is not NULL:  # absent (a null one reads as None, the same to Comm)
            found[key] = orjson.loads(bytes(getattr(a, attr)))
    return found
