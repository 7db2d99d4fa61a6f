"""The versioned JSON report: every number with its unit, readable back by `rooflint diff`."""

from __future__ import annotations

import json
import math

import pandas as pd

from rooflint import __version__, analysis, schema
from rooflint.reporters import common

LAUNCH_FIELDS = [c for c in schema.COLUMNS if c not in ("missing",)] + analysis.RESULT_COLUMNS + ["family"]


def render(result, top: int | None = None, **_options) -> str:
    return json.dumps(document(result, top), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def document(result, top: int | None = None) -> dict:
    kernels = result.kernels if top is None else result.kernels.head(top)
    devices = [_device(use) for use in result.devices]
    return {
        "format_version": schema.FORMAT_VERSION,
        "tool": f"rooflint {__version__}",
        "units": {**schema.UNITS, **analysis.RESULT_UNITS, "time_share": "fraction", "headroom_share": "fraction"},
        "group_by": result.group_by,
        "latency_threshold": result.latency_threshold,
        "device": devices[0] if devices else None,
        "devices": devices,
        "accounting": result.accounting,
        "notes": sorted({f"{p.source}: {n}" for p in result.inputs for n in p.notes}),
        "summary": summary(result),
        "kernels": [_kernel(result, row) for row in _records(kernels)],
        "per_source": _records(result.per_source()),
        "launches": [_launch(row) for row in _records(result.launches[LAUNCH_FIELDS + ["missing"]])],
    }


def summary(result) -> dict:
    launches = result.launches
    ok = launches["verdict"] != analysis.NOT_ANALYSABLE
    t_ok = launches.loc[ok, "duration_s"].sum()
    return {
        "total_time_s": _clean(launches["duration_s"].sum(min_count=1)),
        "total_headroom_s": _clean(launches["headroom_s"].sum(min_count=1)),
        "time_weighted_efficiency": _clean(launches.loc[ok, "t_bound_s"].sum() / t_ok) if t_ok > 0 else None,
        "verdict_time_s": {v: _clean(launches.loc[launches["verdict"] == v, "duration_s"].sum()) for v in analysis.VERDICTS},
        "above_roof_launches": int((launches["verdict"] == analysis.ABOVE_ROOF).sum()),
    }


def _device(use) -> dict:
    device = use.device
    if device is None:
        return {"id": None, "name": None, "sources": use.sources, "provenance": use.provenance, "ceilings": []}
    ceilings = [{"name": k, "kind": "compute", "value": c.value, "unit": "op/s", "source": c.source,
                 "ridge_dram": common._ridge(device, k)} for k, c in device.compute.items()]
    ceilings += [{"name": k, "kind": "memory", "value": c.value, "unit": "byte/s", "source": c.source}
                 for k, c in device.memory.items()]
    return {"id": device.id, "name": device.name, "vendor": device.vendor, "arch": device.arch,
            "sources": use.sources, "provenance": use.provenance, "ceilings": ceilings}


def _kernel(result, row: dict) -> dict:
    row = dict(row)
    row["short_name"] = common.names.short_name(row.get("kernel") or row.get("group"))
    row["short_id"] = row["id"]
    row["explanation"] = common.kernel_sentence(result, pd.Series(row).fillna(float("nan")))
    return row


def _launch(row: dict) -> dict:
    row["missing"] = schema.missing_map(row.get("missing") or "")
    return row


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


def _clean(value):
    """JSON-safe scalars: NA/NaN → null, numpy → Python."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value
