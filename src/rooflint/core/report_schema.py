"""The saved report's schema: its version, units and device block, one definition for the JSON
and Parquet writers (reporters) and for the readers of what they wrote (saved.py, distributed.py).
"""

from __future__ import annotations

import math

from rooflint.core import analysis, schema, units
from rooflint.core.device import HOST_PREFIX

# The JSON report's own version (docs/json-format.md). 2: launches one object a line with null
# fields left out, and each source named once in "sources" (a launch gives its "source_index").
# 3: a trace is reported over its window: the timeline block, accounting.outside_window, busy
# time in accounting.time_s and the efficiency, the communication verdict.
FORMAT_VERSION = 3
# The unit of every number in the JSON report, by key.
UNITS = {
    **schema.UNITS,
    **analysis.RESULT_UNITS,
    "time_share": "fraction",
    "headroom_share": "fraction",
}
# The JSON report's layout, by which saved.py reads a large one a piece at a time: indented by
# INDENT, "launches" the document's last key, one launch a line (indented by LAUNCH_INDENT),
# lines joined by ",\n". JSON text holds no raw line break inside a string, so these markers
# cannot occur within a value.
INDENT = 1
LAUNCH_INDENT = "  "
LAUNCHES_OPEN = f'\n{" " * INDENT}"launches": [\n'.encode()
LAUNCHES_CLOSE = f"\n{' ' * INDENT}]\n}}\n".encode()
NO_LAUNCHES = f'\n{" " * INDENT}"launches": []\n}}'.encode()  # the document without them
# The key of the report's metadata (a JSON object) in a Parquet file's schema metadata.
METADATA_KEY = b"rooflint"


def device_entry(use, full: bool = True) -> dict:
    """A DeviceUse as a `devices[]` entry: id, name, how it was identified, sources, provenance,
    every ceiling with its DRAM ridge point. The diff's entries (`full=False`) have neither the
    identification nor the ridge points."""
    device = use.device
    if device is None:
        return {
            "id": None,
            "name": None,
            "sources": use.sources,
            "provenance": use.provenance,
            "ceilings": [],
        }
    identification = {
        "vendor": device.vendor,
        "arch": device.arch,
        "evidence": use.evidence,
        "provisional": use.provisional,
        "candidates": list(use.candidates),
        "choose": use.advice,
        # written only where it holds, so reports of a settled device keep their keys
        **({"highest_roofs": True} if getattr(use, "highest_roofs", False) else {}),
    }
    return {
        "id": device.id,
        "name": device.name,
        **(identification if full else {}),
        "sources": use.sources,
        "provenance": use.provenance,
        "ceilings": ceilings(device, ridges=full),
    }


def ceilings(device, ridges: bool = True) -> list[dict]:
    """One device's ceilings, compute then memory, each with its unit; compute ones carry their
    DRAM ridge point (`ridges`)."""
    out = []
    for kind in ("compute", "memory"):
        for name, c in getattr(device, kind).items():
            unit = units.RATE[kind]
            entry = {"name": name, "kind": kind, "value": c.value, "unit": unit, "source": c.source}
            if ridges and kind == "compute":
                entry["ridge_dram"] = ridge_dram(device, name)
            out.append(entry)
    for kind, link, prefix in (
        ("link", getattr(device, "link", None), ""),
        ("host_link", getattr(device, "host_link", None), HOST_PREFIX),
    ):
        if link is not None:  # the roofs collectives and host copies are placed against
            out.append(
                {
                    "name": prefix + str(link.kind),
                    "kind": kind,
                    "value": link.value,
                    "unit": units.RATE[kind],
                    "source": link.source,
                }
            )
    return out


def ridge_dram(device, cls: str) -> float | None:
    """The DRAM ridge point of compute class `cls`, or None when the device cannot give one."""
    try:
        return device.ridge(cls, "dram")
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def read_device_entry(entry: dict) -> dict:
    """A saved `devices[]` entry as plain values: id, name, vendor, arch, sources, provenance,
    evidence, candidates, provisional, and its ceilings as {"compute"/"memory": {name: (value,
    source)}}, the link roofs as "link" and "host_link": {name: (value, source)} (one without a
    number is left out)."""
    tables: dict[str, dict] = {"compute": {}, "memory": {}, "link": {}, "host_link": {}}
    for c in entry.get("ceilings") or []:
        value = number(c.get("value"), None)
        if value is not None:
            known = ("compute", "link", "host_link")
            kind = c.get("kind") if c.get("kind") in known else "memory"
            tables[kind][c.get("name")] = (value, c.get("source") or "saved report")
    return {
        "id": entry.get("id") or None,
        "name": entry.get("name") or entry.get("id"),
        "vendor": entry.get("vendor") or "",
        "arch": entry.get("arch") or "",
        "sources": list(entry.get("sources") or []),
        "provenance": list(entry.get("provenance") or []),
        "evidence": str(entry.get("evidence") or ""),
        "candidates": [str(c) for c in entry.get("candidates") or []],
        "provisional": bool(entry.get("provisional")),
        "highest_roofs": bool(entry.get("highest_roofs")),
        **tables,
    }


def source_ceilings(device) -> dict | None:
    """The exact ceilings one source was analysed with, as the Parquet metadata keeps them (each
    profile's own clock and peaks: one device id can differ per source)."""
    if device is None:
        return None
    return {
        "id": device.id,
        "name": device.name,
        "vendor": device.vendor,
        "arch": device.arch,
        **{
            kind: {
                k: {"value": c.value, "source": c.source} for k, c in getattr(device, kind).items()
            }
            for kind in ("compute", "memory")
        },
        **{  # the link roofs, by name as the device block writes them ("nvlink", "host_pcie")
            kind: {prefix + str(link.kind): {"value": link.value, "source": link.source}}
            for kind, prefix in (("link", ""), ("host_link", HOST_PREFIX))
            if (link := getattr(device, kind, None)) is not None
        },
    }


def read_source_ceilings(entry: dict) -> dict:
    """What source_ceilings wrote, with the ceilings as {"compute"/"memory": {name: (value,
    source)}} and the link roofs as {"link"/"host_link": {name: (value, source)}}."""
    return {
        "id": entry["id"],
        "name": entry.get("name") or entry["id"],
        "vendor": entry.get("vendor") or "",
        "arch": entry.get("arch") or "",
        **{
            kind: {k: (float(c["value"]), c["source"]) for k, c in entry[kind].items()}
            for kind in ("compute", "memory")
        },
        **{
            kind: {k: (float(c["value"]), c["source"]) for k, c in entry[kind].items()}
            for kind in ("link", "host_link")
            if isinstance(entry.get(kind), dict)
        },
    }


def number(value, default):
    """A saved number as a float; `default` for anything else (text, a bool, null, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return default if math.isnan(float(value)) else float(value)
