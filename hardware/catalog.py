"""The built-in device catalog and user device files: TOML in, checked `Device` out."""

from __future__ import annotations

import functools
import math
from pathlib import Path

from rooflint.core.device import Ceiling, CeilingSource, Device, Link, LinkKind, Origin
from rooflint.core.errors import DeviceError
from rooflint.core.quantities import COMPUTE_CLASSES, MEMORY_LEVELS

from . import ranges, tomlfiles
from .names import token_key, tokens
from .rates import Architecture, architectures

# table key -> (allowed entries, factor to SI, what an entry is called in messages)
TABLES = {
    "compute_tflops": (COMPUTE_CLASSES, 1e12, "compute class"),
    "bandwidth_gbps": (MEMORY_LEVELS, 1e9, "memory level"),
}
# Compute as the catalog gives it: per class, the clock (MHz) its datasheet figure assumes and that
# dense figure (TFLOP/s, TOP/s for int8; left out where the datasheet has none); the peak is the
# architecture's rate per SM/CU per clock (architectures.toml) x the SMs/CUs x that clock.
RATED = "compute"
RATED_KEYS = ("clock_mhz", "tflops")
STRING_KEYS = ("id", "name", "vendor", "arch", "architecture", "source", "clock_source", "base")
# Facts that identify a SKU among parts of one architecture, with their own source line.
IDENTITY_KEYS = (
    "base_clock_mhz",
    "memory_clock_mhz",
    "memory_bus_bits",
    "memory_gib",
    "identity_source",
)
KNOWN_KEYS = (
    *STRING_KEYS,
    "profiler_names",
    "sm_count",
    "boost_clock_mhz",
    *IDENTITY_KEYS,
    *TABLES,
    RATED,
    "link",
    "host_link",
)
# The link roof: [link] kind (a LinkKind), gbps (GB/s per direction), source (the document);
# [host_link], the link to the host CPU host copies cross, has the same keys (optional).
LINK_KEYS = ("kind", "gbps", "source")
# A catalog file must say everything, its compute rated; a user file may leave out the rest
# (defaults: empty, 0, 0) and give compute either way.
CATALOG_REQUIRED = (
    "id", "name", "vendor", "arch", "architecture", "source", "profiler_names", "sm_count",
    "boost_clock_mhz", RATED, "bandwidth_gbps", "link",
)  # fmt: skip
USER_REQUIRED = ("name", "vendor", "arch", "compute_tflops", "bandwidth_gbps")
FORMAT_HINT = "see any file under rooflint/hardware/devices/ for the format"


def catalog() -> dict[str, Device]:
    """Every built-in device, by id (read once, from the package data, so it works from a wheel)."""
    return dict(_load_catalog())


def _folder():
    return tomlfiles.package_folder().joinpath("devices")


@functools.cache
def _load_catalog() -> dict[str, Device]:
    entries = sorted(
        (e for e in _folder().iterdir() if e.name.endswith(".toml")), key=lambda e: e.name
    )
    texts = {e.name: e.read_text(encoding="utf-8") for e in entries}
    devices = [_catalog_device(name, table) for name, table in tomlfiles.tables(texts).items()]
    return {d.id: d for d in devices}


@functools.cache
def _load_one(key: str) -> Device | None:
    """The device whose file is `key`.toml (a device's id is its file's name,
    tests/test_hardware.py), read alone: `rooflint bound --device ID` and `devices show ID` parse
    one file, not the 42 of the catalog."""
    entry = _folder().joinpath(f"{key}.toml")
    if not entry.is_file():
        return None
    [table] = tomlfiles.tables({entry.name: entry.read_text(encoding="utf-8")}).values()
    device = _catalog_device(entry.name, table)
    return device if device.id == key else None


def get(device_id: str) -> Device:
    """The catalog device with this id (case-insensitive); DeviceError naming close ids if none."""
    key = device_id.strip().lower()
    if _load_catalog.cache_info().currsize:  # the catalog is read: take its device
        devices = _load_catalog()
        if key in devices:
            return devices[key]
    elif "/" not in key and (device := _load_one(key)) is not None:
        return device
    raise unknown_device(device_id)


def unknown_device(text: str) -> DeviceError:
    """The error for a device name or id that the catalog does not know."""
    close = ", ".join(close_ids(text)) or "none"
    return DeviceError(
        f"unknown device '{text}'; close matches: {close}; "
        "pass --device ID (see `rooflint devices`) or --device-file FILE.toml"
    )


def close_ids(text: str, n: int = 3) -> list[str]:
    """Up to `n` catalog ids whose id or names look like `text` (containing its words first)."""
    scored = sorted(((_likeness(text, d), d.id) for d in catalog().values()), reverse=True)
    return [device_id for score, device_id in scored[:n] if score >= 0.6]


def _likeness(text: str, device: Device) -> float:
    words = tokens(text)
    best = 0.0
    for label in (device.id, device.name, *device.profiler_names):
        theirs = tokens(label)
        if words and words <= theirs:
            best = max(best, 2 + len(words) / len(theirs))
        else:
            shared = len(words & theirs) / len(words | theirs) if words else 0.0
            import difflib  # here: only a device the catalog does not know needs it

            ratio = difflib.SequenceMatcher(None, token_key(text), token_key(label)).ratio()
            best = max(best, shared + ratio)
    return best


def load_device_file(path: str | Path) -> Device:
    """A user's device file as a Device (merged over its `base` catalog device, if it names one)."""
    return read_user_file(path)[0]


def read_user_file(path: str | Path) -> tuple[Device, set[str]]:
    """The device of a user file and the ceiling names the file itself supplies."""
    label = str(path)
    data = _read_toml(Path(path), label)
    _check_keys(data, label)
    if "base" in data:
        return _over_base(data, label)
    _require(data, label, [k for k in USER_REQUIRED if k != "compute_tflops" or RATED not in data])
    default_source = f"user file {label}"
    source = CeilingSource(Origin.USER, _user_source(data, label))
    device = _build(data, label, source, fallback_id=Path(path).stem, default_source=default_source)
    return device, {*device.compute, *device.memory}


def _catalog_device(filename: str, data: dict) -> Device:
    _check_keys(data, filename)
    if "base" in data:
        raise DeviceError("key 'base' is for user files only; remove it", path=filename)
    _require(data, filename, list(CATALOG_REQUIRED))
    if "compute_tflops" in data:
        raise DeviceError(
            "key 'compute_tflops' is for user files; give a catalog device's compute as "
            f"[{RATED}] (per class the clock its datasheet quotes), so that peaks derive from "
            "its architecture's rates",
            path=filename,
        )
    if "clock_source" in data:
        _string(data, "clock_source", filename)
    cite = f"{_cite(_string(data, 'source', filename))} (catalog {_string(data, 'id', filename)})"
    source = CeilingSource(Origin.DATASHEET, cite)
    device = _build(data, filename, source, fallback_id="", default_source="")
    if device.id != filename.removesuffix(".toml"):
        raise DeviceError(
            f"key 'id' must equal the file stem (got '{device.id}'); rename one", path=filename
        )
    return device


def _over_base(data: dict, label: str) -> tuple[Device, set[str]]:
    base_id = _string(data, "base", label)
    if base_id not in _load_catalog():
        close = ", ".join(close_ids(base_id)) or "none"
        raise DeviceError(
            f"key 'base' names no catalog device ('{base_id}'; close matches: {close}); "
            "use an id from `rooflint devices`",
            path=label,
        )
    base = _load_catalog()[base_id]
    source = _user_source(data, label)
    fields = _identity(data, label, base)
    given = CeilingSource(Origin.USER, source)
    compute = _compute(data, label, given, fields)
    memory = _ceilings(data, "bandwidth_gbps", label, given)
    device = base.replace_ceilings(compute=compute, memory=memory)
    merged = Device(
        **fields,
        compute=device.compute,
        memory=device.memory,
        link=_link(data, label, given) if "link" in data else base.link,
        host_link=_link(data, label, given, "host_link") if "host_link" in data else base.host_link,
        source=f"{source} over catalog '{base_id}' ({base.source})",
    )
    return merged, {*compute, *memory}


def _identity(data: dict, label: str, base: Device) -> dict:
    """id, name, vendor, arch, names, SM count and clock: the file's where given, else the
    base's."""
    return {
        "id": _string(data, "id", label) if "id" in data else base.id,
        "name": _string(data, "name", label) if "name" in data else base.name,
        "vendor": _string(data, "vendor", label).lower() if "vendor" in data else base.vendor,
        "arch": _string(data, "arch", label) if "arch" in data else base.arch,
        "profiler_names": _names(data, label) if "profiler_names" in data else base.profiler_names,
        "sm_count": _count(data, label) if "sm_count" in data else base.sm_count,
        "boost_clock_hz": _clock(data, label) if "boost_clock_mhz" in data else base.boost_clock_hz,
        **_identity_facts(data, label, base),
    }


def _identity_facts(data: dict, label: str, base: Device | None = None) -> dict:
    """Base and memory clocks, bus width and their source: the file's where given, else the
    base's."""
    return {
        "base_clock_hz": _clock(data, label, "base_clock_mhz")
        if "base_clock_mhz" in data
        else (base.base_clock_hz if base else 0.0),
        "listed_memory_clock_hz": _clock(data, label, "memory_clock_mhz")
        if "memory_clock_mhz" in data
        else (base.listed_memory_clock_hz if base else 0.0),
        "memory_bus_bits": _count(data, label, "memory_bus_bits")
        if "memory_bus_bits" in data
        else (base.memory_bus_bits if base else 0),
        "memory_bytes": _count(data, label, "memory_gib") * 2**30
        if "memory_gib" in data
        else (base.memory_bytes if base else 0),
        "identity_source": _string(data, "identity_source", label)
        if "identity_source" in data
        else (base.identity_source if base else ""),
        "architecture": _string(data, "architecture", label)
        if "architecture" in data
        else (base.architecture if base else ""),
    }


def _build(
    data: dict, label: str, source: CeilingSource, *, fallback_id: str, default_source: str
) -> Device:
    fields = {
        "id": _string(data, "id", label) if "id" in data else fallback_id,
        "name": _string(data, "name", label),
        "vendor": _string(data, "vendor", label).lower(),
        "arch": _string(data, "arch", label),
        "profiler_names": _names(data, label) if "profiler_names" in data else (),
        "sm_count": _count(data, label) if "sm_count" in data else 0,
        "boost_clock_hz": _clock(data, label) if "boost_clock_mhz" in data else 0.0,
        **_identity_facts(data, label),
    }
    return Device(
        **fields,
        compute=_compute(data, label, source, fields, required=True),
        memory=_ceilings(data, "bandwidth_gbps", label, source, required=True),
        source=_string(data, "source", label) if "source" in data else default_source,
        link=_link(data, label, source) if "link" in data else None,
        host_link=_link(data, label, source, "host_link") if "host_link" in data else None,
    )


def _compute(
    data: dict, label: str, source: CeilingSource, fields: dict, required: bool = False
) -> dict[str, Ceiling]:
    """The compute ceilings of a file: flat peaks (compute_tflops), or each class's
    architecture rate x SMs x the clock its datasheet quotes (compute)."""
    if RATED not in data:
        return _ceilings(data, "compute_tflops", label, source, required)
    if "compute_tflops" in data:
        raise DeviceError(
            f"keys 'compute_tflops' and '{RATED}' both give compute; keep one", path=label
        )
    entries = data[RATED]
    if not isinstance(entries, dict) or not entries:
        raise DeviceError(
            f"key '{RATED}' must be a table of compute classes (got {_got(entries)}); "
            f"write it as [{RATED}] with lines like vector_fp32 = {{ clock_mhz = 1980 }}",
            path=label,
        )
    rates = _rates(fields["architecture"], label)
    units = fields["sm_count"]
    if not units:
        raise DeviceError(
            f"key 'sm_count' must be positive for [{RATED}] (peaks are rate x SMs x clock); "
            "fix the value",
            path=label,
        )
    out = {}
    for key, entry in entries.items():
        clock = _quoted_clock(entry, key, rates, label)
        at_boost = clock == fields["boost_clock_hz"]
        # the file's source at this clock (made directly: dataclasses.replace costs 1 ms over the
        # catalog's 307 classes, 2 % of `rooflint devices`)
        origin = CeilingSource(source.origin, source.document, clock_hz=clock, at_boost=at_boost)
        out[key] = Ceiling(rates.rates[key] * units * clock, origin)
    return out


def _link(data: dict, label: str, source: CeilingSource, key: str = "link") -> Link:
    """The [link] (or [host_link]) table: its kind, its bandwidth per direction and the document
    it is from (a catalog file must name one; a user file's defaults to the file)."""
    entry = data[key]
    kinds = ", ".join(k.value for k in LinkKind)
    example = 'kind = "nvlink", gbps = 300, source = "..."'
    if (
        not isinstance(entry, dict)
        or not {"kind", "gbps"} <= set(entry)
        or set(entry) - set(LINK_KEYS)
    ):
        raise DeviceError(
            f"key '{key}' must be a table of {', '.join(LINK_KEYS)} (got {_got(entry)}); "
            f"write it as [{key}] with {example} (GB/s per direction)",
            path=label,
        )
    if entry["kind"] not in {k.value for k in LinkKind}:
        raise DeviceError(
            f"key '{key}.kind' must be one of {kinds} (got {_got(entry['kind'])}); fix the value",
            path=label,
        )
    gbps = entry["gbps"]
    if not _is_number(gbps) or gbps <= 0:
        raise DeviceError(
            f"key '{key}.gbps' must be a positive number (got {_got(gbps)}); fix the value",
            path=label,
        )
    ranges.check(f"{key}.gbps", gbps, label)
    if source.origin is Origin.DATASHEET and "source" not in entry:
        raise DeviceError(f"key '{key}.source' is missing; add the document it is from", path=label)
    document = _string(entry, "source", label) if "source" in entry else source.document
    origin = CeilingSource(source.origin, document)
    return Link(LinkKind(entry["kind"]), Ceiling(float(gbps) * 1e9, origin))


def _rates(key: str, label: str) -> Architecture:
    known = architectures()
    if key not in known:
        problem = f"names no architecture ('{key}'); fix" if key else "is missing; add"
        raise DeviceError(
            f"key 'architecture' {problem} it, [{RATED}] takes its rates from it "
            f"(one of: {', '.join(known)})",
            path=label,
        )
    return known[key]


def _quoted_clock(entry: object, key: str, rates: Architecture, label: str) -> float:
    """The clock (Hz) at which the datasheet quotes class `key`, after checking its entry."""
    name = f"{RATED}.{key}"
    if key not in COMPUTE_CLASSES:
        raise DeviceError(
            f"unknown compute class '{name}' (known: {', '.join(COMPUTE_CLASSES)}); "
            "rename or remove it",
            path=label,
        )
    if key not in rates.rates:
        raise DeviceError(
            f"architecture '{rates.key}' has no {key} rate (it has: {', '.join(rates.rates)}); "
            f"fix 'architecture' or remove '{name}'",
            path=label,
        )
    if not isinstance(entry, dict) or "clock_mhz" not in entry or set(entry) - set(RATED_KEYS):
        raise DeviceError(
            f"key '{name}' must be a table of {' and '.join(RATED_KEYS)} (got {_got(entry)}); "
            f"write it as {key} = {{ clock_mhz = 1980, tflops = 66.9 }}",
            path=label,
        )
    for field in entry:
        value = entry[field]
        if not _is_number(value) or value <= 0:
            raise DeviceError(
                f"key '{name}.{field}' must be a positive number (got {_got(value)}); "
                "fix the value",
                path=label,
            )
    return float(entry["clock_mhz"]) * 1e6


def _cite(source: str) -> str:
    """The document part of a catalog source ("... datasheet (2023)"), without the details."""
    return source.split(";", 1)[0].split(":", 1)[0].strip()


def _user_source(data: dict, label: str) -> str:
    if "source" in data:
        return f"{_string(data, 'source', label)} (user file {label})"
    return f"user file {label}"


def _read_toml(path: Path, label: str) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise DeviceError(
            f"cannot read device file ({reason}); check the path", path=label
        ) from exc
    return tomlfiles.parse(text, label)


def _check_keys(data: dict, label: str) -> None:
    for key in data:
        if key not in KNOWN_KEYS:
            raise DeviceError(
                f"unknown key '{key}' (known keys: {', '.join(KNOWN_KEYS)}); rename or remove it",
                path=label,
            )


def _require(data: dict, label: str, keys: list[str]) -> None:
    for key in keys:
        if key not in data:
            how = f"add a [{key}] table" if key in TABLES else f"add {key} = ..."
            extra = (
                ', or set base = "<catalog id>" to start from a catalog device'
                if key in TABLES
                else ""
            )
            raise DeviceError(f"missing key '{key}'; {how}{extra} ({FORMAT_HINT})", path=label)


def _got(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


def _string(data: dict, key: str, label: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise DeviceError(
            f"key '{key}' must be a non-empty string (got {_got(value)}); fix the value", path=label
        )
    return value.strip()


def _names(data: dict, label: str) -> tuple:
    value = data["profiler_names"]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DeviceError(
            f"key 'profiler_names' must be a list of strings (got {_got(value)}); fix the value",
            path=label,
        )
    return tuple(v.strip() for v in value)


def _count(data: dict, label: str, key: str = "sm_count") -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DeviceError(
            f"key '{key}' must be a non-negative integer (got {_got(value)}); fix the value",
            path=label,
        )
    if value:  # 0: not catalogued
        ranges.check(key, value, label)
    return value


def _clock(data: dict, label: str, key: str = "boost_clock_mhz") -> float:
    value = data[key]
    if not _is_number(value) or value < 0:
        raise DeviceError(
            f"key '{key}' must be a non-negative number (got {_got(value)}); fix the value",
            path=label,
        )
    if value:  # 0: not catalogued
        ranges.check(key, value, label)
    return float(value) * 1e6


def _ceilings(
    data: dict, table: str, label: str, source: CeilingSource, required: bool = False
) -> dict[str, Ceiling]:
    allowed, factor, what = TABLES[table]
    entries = data.get(table, {})
    if not isinstance(entries, dict):
        raise DeviceError(
            f"key '{table}' must be a table (got {_got(entries)}); write it as [{table}]",
            path=label,
        )
    if required and not entries:
        raise DeviceError(f"key '{table}' is empty; add at least one {what}", path=label)
    out = {}
    for key, value in entries.items():
        if key not in allowed:
            raise DeviceError(
                f"unknown {what} '{table}.{key}' (known: {', '.join(allowed)}); "
                "rename or remove it",
                path=label,
            )
        if not _is_number(value) or value <= 0:
            raise DeviceError(
                f"key '{table}.{key}' must be a positive number (got {_got(value)}); fix the value",
                path=label,
            )
        ranges.check(table, value, label, key)
        out[key] = Ceiling(float(value) * factor, source)
    return out


def _is_number(value: object) -> bool:
    """A finite int or float (TOML integers have no size limit: 10**400 is finite too)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)
