"""Between two runs: whether they ran on other devices, and which ceilings changed value."""

from __future__ import annotations

import math

from rooflint.core import units
from rooflint.core.result import Result

# Ceilings derived from measured clocks jitter run to run by less than this.
CEILING_TOLERANCE = 0.01


def device_changes(base: Result, head: Result) -> tuple[bool, list[dict]]:
    """Whether the devices differ, and every ceiling whose value differs beyond
    CEILING_TOLERANCE (its value before and after, unit and sources)."""
    ids_b = [_device_id(u) for u in base.devices]
    ids_h = [_device_id(u) for u in head.devices]
    differ = sorted(set(ids_b), key=str) != sorted(set(ids_h), key=str)
    pairs = [(u, v) for u in base.devices for v in head.devices if _device_id(u) == _device_id(v)]
    if differ and len(base.devices) == 1 and len(head.devices) == 1:
        pairs = [(base.devices[0], head.devices[0])]
    changes = []
    for u, v in pairs:
        if u.device is None or v.device is None:
            continue
        for kind, unit in units.RATE.items():
            a, b = _table(u.device, kind), _table(v.device, kind)
            for name in (
                [k for k in a if k in b]
                + [k for k in b if k not in a]
                + [k for k in a if k not in b]
            ):
                before = a[name].value if name in a else None
                after = b[name].value if name in b else None
                if before is not None and after is not None and _close(before, after):
                    continue
                changes.append(
                    {
                        "device_base": u.device.id,
                        "device_head": v.device.id,
                        "ceiling": name,
                        "kind": kind,
                        "unit": unit,
                        "base": before,
                        "head": after,
                        "source_base": a[name].source if name in a else None,
                        "source_head": b[name].source if name in b else None,
                    }
                )
    return differ, changes


def _table(device, kind: str) -> dict:
    """A device's ceilings of one kind by name (the link roofs as "link" and "host_link",
    whatever their kind: PCIe before and NVLink after is one roof that changed)."""
    if kind not in ("link", "host_link"):
        return getattr(device, kind)
    link = getattr(device, kind, None)
    return {} if link is None else {kind: link.ceiling}


def _device_id(use) -> str | None:
    return getattr(use.device, "id", None)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=CEILING_TOLERANCE)
