"""The device catalog: ceilings per device, user device files, matching and ceiling precedence."""

from rooflint.core.device import Ceiling, CeilingSource, Device, Origin

from .catalog import catalog, get, load_device_file
from .matching import match

# Identification and ceiling precedence read launch tables (pandas): imported on first use, so
# that `rooflint devices` and `rooflint bound` list and use the catalog without loading pandas.
_LAZY = {
    "profile_ceilings": "ceilings",
    "resolve": "ceilings",
    "resolve_identified": "ceilings",
    "scale_to_clock": "ceilings",
    "Identification": "identify",
    "identify": "identify",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)


__all__ = [
    "Ceiling",
    "Device",
    "Identification",
    "Origin",
    "CeilingSource",
    "catalog",
    "get",
    "identify",
    "load_device_file",
    "match",
    "profile_ceilings",
    "resolve",
    "resolve_identified",
    "scale_to_clock",
]
