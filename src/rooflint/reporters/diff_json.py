"""The diff as versioned JSON: every number with its unit, one object per kernel group."""

from __future__ import annotations

import json

from rooflint.core import diff as diffs
from rooflint.core import names
from rooflint.core.formatting import plain
from rooflint.core.version import __version__
from rooflint.reporters import diff_common as dc

_SIDE = [
    "launches",
    "duration_s",
    "mean_s",
    "min_s",
    "max_s",
    "spread",
    "cv",
    "time_share",
    "efficiency",
    "verdict",
    "limiter",
    "headroom_s",
    "above_roof_launches",
    "device_id",
    "grid",
    "block",
    "reason",
]


def render(d, gates, **_options) -> str:
    return json.dumps(document(d, gates), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def document(d, gates) -> dict:
    return {
        "format_version": diffs.DIFF_FORMAT_VERSION,
        "kind": "diff",
        "tool": f"rooflint {__version__}",
        "units": {**diffs.UNITS, "duration_s": "s"},
        "verdict": dc.verdict(gates).lower(),
        "summary": dc.summary_line(d, gates),
        "rule": diffs.regression_rule_text(d.threshold, d.level),
        "threshold": d.threshold,
        "level": d.level,
        "min_time": d.min_time,
        "base": _side(d.base),
        "head": _side(d.head),
        "device_changed": d.device_changed,
        "ceiling_changes": [{k: plain(v) for k, v in c.items()} for c in d.ceiling_changes],
        "warnings": d.warnings,
        "notes": d.notes,
        "totals": {k: plain(v) if not isinstance(v, dict) else v for k, v in d.totals.items()},
        "gates": [
            {
                "option": g.option,
                "setting": g.setting,
                "origin": g.origin or "command line",
                "passed": g.passed,
                "failures": g.failures,
            }
            for g in gates
        ],
        "groups": [_group(r) for r in dc.records(d)],
    }


def _side(side) -> dict:
    return {
        "input": side.label,
        "runs": side.runs,
        "inputs": list(side.inputs or [side.label]),
        "saved_report": side.saved,
        "devices": [_device(u) for u in side.result.devices],
        "accounting": side.result.accounting,
    }


def _device(use) -> dict:
    device = use.device
    if device is None:
        return {
            "id": None,
            "name": None,
            "sources": use.sources,
            "provenance": use.provenance,
            "ceilings": [],
        }
    ceilings = [
        {"name": k, "kind": "compute", "value": c.value, "unit": "op/s", "source": c.source}
        for k, c in device.compute.items()
    ]
    ceilings += [
        {"name": k, "kind": "memory", "value": c.value, "unit": "byte/s", "source": c.source}
        for k, c in device.memory.items()
    ]
    return {
        "id": device.id,
        "name": device.name,
        "sources": use.sources,
        "provenance": use.provenance,
        "ceilings": ceilings,
    }


def _group(r: dict) -> dict:
    out = {
        "kernel": r["kernel"],
        "short_name": names.short_name(r["kernel"]),
        "short_id": r["id"],
        "match": r["match"],
        "status": r["status"],
        "ignored": bool(r["ignored"]),
    }
    for side in ("base", "head"):
        out[side] = (
            {"kernel": r[f"kernel_{side}"], **{f: plain(r[f"{f}_{side}"]) for f in _SIDE}}
            if diffs.present(r, side)
            else None
        )
    for f in (
        "delta_s",
        "delta_pct",
        "mean_delta_pct",
        "change",
        "change_low",
        "change_high",
        "method",
        "pairs",
        "compared_base",
        "compared_head",
        "run_noise",
        "headroom_delta_s",
        "efficiency_delta",
    ):
        out[f] = plain(r[f])
    for f in ("pairs", "compared_base", "compared_head"):
        out[f] = int(out[f]) if out[f] is not None else None
    return out
