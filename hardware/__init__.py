"""The device catalog: ceilings per device, user device files, matching and ceiling precedence."""

from rooflint.core.device import Ceiling, CeilingSource, Device, Origin

from .catalog import catalog, get, load_device_file
from .ceilings import profile_ceilings, resolve, resolve_identified, scale_to_clock
from .identify import Identification, identify
from .matching import match

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
