"""The JSON types of the trace fields rooflint reads, checked as each is read: a field of another
type is one error naming it (`traceEvents[12].args.grid is a string, expected an array`), never a
TypeError deep inside the reader. A null reads as the field left out.

A wrong type sinks the whole file rather than its one event: torch.profiler writes these types
itself, so another type means the file was edited or damaged, and skipping the event would
silently unlink the launches around it (an operator lost leaves its kernels without shapes)."""

from __future__ import annotations

from rooflint.core.errors import InputError

FIX = "the trace was edited or damaged; export it again with torch.profiler"
INT64 = 1 << 63


def json_kind(value) -> str:
    """The JSON name of a parsed value's type, with an article."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def wrong(where: str, value, expected: str, source: str) -> InputError:
    return InputError(f"{where} is {json_kind(value)}, expected {expected}; {FIX}", path=source)


def _where(at: int | str, inside: str, key: str) -> str:
    """The field's name: `at` is an event's index in traceEvents, or a path of its own."""
    return f"{f'traceEvents[{at}]' if isinstance(at, int) else at}{inside}.{key}"


def event(value, at: int, source: str) -> dict:
    """An event: a JSON object."""
    if type(value) is not dict:
        raise wrong(f"traceEvents[{at}]", value, "an object (a trace event)", source)
    return value


def text(record: dict, key: str, at: int | str, source: str, inside: str = "") -> str:
    """A string field; "" when absent."""
    value = record.get(key)
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise wrong(_where(at, inside, key), value, "a string", source)


def ident(record: dict, key: str, at: int | str, source: str, inside: str = ""):
    """A process or thread id: an integer, or a string (torch.profiler's own rows, "Spans");
    None when absent."""
    value = record.get(key)
    if value is None or type(value) in (int, str):
        return value
    raise wrong(_where(at, inside, key), value, "an integer or a string", source)


def obj(record: dict, key: str, at: int | str, source: str, inside: str = "") -> dict:
    """An object field (an event's args); {} when absent."""
    value = record.get(key)
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise wrong(_where(at, inside, key), value, "an object", source)


def integer(record: dict, key: str, at: int | str, source: str, inside: str = ""):
    """A whole number that fits 64 bits (a device index, an SM count); None when absent."""
    value = record.get(key)
    if value is None:
        return None
    if type(value) is int and -INT64 <= value < INT64:
        return value
    raise wrong(_where(at, inside, key), value, "an integer of at most 64 bits", source)


def dim3(record: dict, key: str, at: int | str, source: str, inside: str = "") -> tuple | None:
    """A grid or block [x, y, z] as a tuple (hashable, so one object per distinct shape)."""
    value = record.get(key)
    if value is None:
        return None
    if type(value) is not list:
        raise wrong(_where(at, inside, key), value, "an array of numbers", source)
    for i, x in enumerate(value):
        if type(x) not in (int, float):
            raise wrong(f"{_where(at, inside, key)}[{i}]", x, "a number", source)
    return tuple(value)


DEVICE_INTS = ("id", "numSms", "totalGlobalMem", "computeMajor", "computeMinor")
DEVICE_TEXT = ("name", "gcnArchName")


def devices(header: dict, source: str) -> list[dict]:
    """deviceProperties: a list of objects whose fields rooflint reads have their types (each
    returned without its null fields)."""
    props = header.get("deviceProperties")
    if props is None:
        return []
    if type(props) is not list:
        raise wrong("deviceProperties", props, "an array of objects", source)
    out = []
    for i, p in enumerate(props):
        where = f"deviceProperties[{i}]"
        if type(p) is not dict:
            raise wrong(where, p, "an object", source)
        for key in DEVICE_INTS:
            integer(p, key, where, source)
        for key in DEVICE_TEXT:
            text(p, key, where, source)
        out.append({k: v for k, v in p.items() if v is not None})
    return out
