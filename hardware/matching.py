"""Finding the catalog device for the name and architecture a profiler printed."""

from __future__ import annotations

import functools

from rooflint.core.device import Device
from rooflint.core.errors import DeviceError

from .catalog import catalog, unknown_device
from .names import arch_key, spaced, token_key, tokens

# With no device name, an NVIDIA compute capability is mapped to the part most often profiled
# with it in datacenters (or the only catalog part that has it). The ceilings can be wrong for
# other parts of the same capability, so the how-string always asks for --device.
CC_DEFAULT = {
    "3.5": "k20c",
    "7.0": "v100-sxm2-16gb",
    "7.5": "t4",
    "8.0": "a100-sxm4-80gb",
    "8.6": "a10",
    "8.9": "l4",
    "9.0": "h100-sxm",
    "10.0": "b200",
    "12.0": "rtx-5090",
}

# An AMD gfx name pins the family; the CU count (rocprof's cu_count) picks the part.
# gfx -> ({CU count: id}, id when the CU count does not decide)
GFX_RULES = {
    "gfx906": ({60: "mi50", 64: "mi60"}, "mi50"),
    "gfx908": ({120: "mi100"}, "mi100"),
    "gfx90a": ({104: "mi210", 110: "mi250x"}, "mi250x"),
    "gfx942": ({228: "mi300a", 304: "mi300x"}, "mi300x"),
    "gfx950": ({256: "mi350x"}, "mi350x"),
    "gfx1100": ({96: "rx-7900-xtx"}, "rx-7900-xtx"),
}
# What the gfx name and CU count cannot tell apart, by the part chosen.
TWINS = {
    "mi210": "one MI250 GCD also has 104 CUs (same ceilings); pass --device mi250 for an MI250",
    "mi300x": "the MI325X also has 304 CUs; pass --device mi325x for an MI325X (6 TB/s)",
    "mi350x": "the MI355X shares gfx950 and 256 CUs; chose the MI350X (2.2 GHz), "
    "pass --device mi355x for an MI355X (2.4 GHz)",
}
# Family names some rocprof-compute versions print instead of the product ("MI200", "mi300").
FAMILY_GFX = {"mi200": "gfx90a", "mi300": "gfx942", "mi350": "gfx950"}


def match(
    display_name: str | None, arch: str | None = None, hints: dict | None = None
) -> tuple[Device, str]:
    """The catalog device for a profiler's device name (and arch), and how it was matched."""
    hints = hints or {}
    name = _text(display_name) or _text(hints.get("product"))
    gfx_or_cc = arch_key(arch) or arch_key(hints.get("gfx"))
    cu_count = _int(hints.get("cu_count"))
    if name:
        found = _by_name(name, cu_count)
        if found:
            return found
        gfx_or_cc = gfx_or_cc or _family_gfx(name)
    if gfx_or_cc in GFX_RULES:
        return _by_gfx(gfx_or_cc, cu_count, name)
    if gfx_or_cc in CC_DEFAULT and not name:
        device = catalog()[CC_DEFAULT[gfx_or_cc]]
        return (
            device,
            f"inferred from compute capability {gfx_or_cc} ({device.name}); "
            "pass --device to choose",
        )
    if name:
        raise unknown_device(name)
    what = f"no catalog default for architecture '{gfx_or_cc}'" if gfx_or_cc else "no architecture"
    raise DeviceError(
        f"the profile names no device and {what}; "
        "pass --device ID (see `rooflint devices`) or --device-file FILE.toml"
    )


def _by_name(name: str, cu_count: int | None) -> tuple[Device, str] | None:
    exact = _exact_index().get(spaced(name))
    if exact:
        return catalog()[exact], f"matched '{name}'"
    by_tokens = _token_index().get(token_key(name))
    if by_tokens:
        device = catalog()[by_tokens]
        return device, f"matched '{name}' to '{device.name}' by normalised name"
    return _combined(name, cu_count)


def _combined(name: str, cu_count: int | None) -> tuple[Device, str] | None:
    """Names that list several parts ('AMD Instinct MI250X / MI250'): the CU count decides."""
    words = tokens(name)
    named = {d.id: _named_words(d, words) for d in catalog().values()}
    parts = [catalog()[i] for i, found in named.items() if found]
    if len(parts) < 2 or set().union(*named.values()) != words:
        return None
    parts.sort(key=lambda d: -d.sm_count)  # undecided: the larger part, whose roofs are higher
    ids = ", ".join(d.id for d in parts)
    by_cu = [d for d in parts if cu_count and d.sm_count == cu_count]
    if len(by_cu) == 1:
        return by_cu[0], f"'{name}' names {ids}; chose {by_cu[0].id} by its CU count {cu_count}"
    how = (
        f"'{name}' names {ids} (ambiguous); chose the larger, {parts[0].id}; "
        "pass --device to choose"
    )
    return parts[0], how


def _named_words(device: Device, words: frozenset[str]) -> set[str]:
    """The words of `words` that spell out one of the device's labels in full."""
    found: set[str] = set()
    for label in _labels(device):
        theirs = tokens(label)
        if theirs and theirs <= words:
            found |= theirs
    return found


def _by_gfx(gfx: str, cu_count: int | None, name: str | None) -> tuple[Device, str]:
    by_cu, default = GFX_RULES[gfx]
    device = catalog()[by_cu.get(cu_count, default)]
    what = f"{gfx} with {cu_count} CUs" if cu_count else f"{gfx} (no CU count)"
    if cu_count and cu_count not in by_cu:
        what += ", a CU count no catalogued part has (a partition mode?)"
    unnamed = f"name '{name}' not in the catalog; " if name else ""
    advice = TWINS.get(device.id, "pass --device to choose")
    return device, f"{unnamed}inferred {device.id} from {what}; {advice}"


def _family_gfx(name: str) -> str | None:
    return next((FAMILY_GFX[w] for w in tokens(name) if w in FAMILY_GFX), None)


def _labels(device: Device) -> tuple[str, ...]:
    return (device.id, device.name, *device.profiler_names)


@functools.cache
def _exact_index() -> dict[str, str]:
    return {spaced(p): d.id for d in catalog().values() for p in d.profiler_names}


@functools.cache
def _token_index() -> dict[str, str]:
    return {token_key(label): d.id for d in catalog().values() for label in _labels(d)}


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    return text if text and text.lower() not in ("nan", "<na>", "none") else None


def _int(value: object) -> int | None:
    try:
        number = int(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None
