"""The diff as versioned JSON: every number with its unit, one object per kernel group."""

from __future__ import annotations

import json

from rooflint.core import diff as diffs
from rooflint.core import diffstats, names, report_schema
from rooflint.core.formatting import plain
from rooflint.core.version import __version__
from rooflint.reporters import diff_common as dc

# A group's comparison, as written: the changes and the estimate (the runs are in "totals").
_COMPARED = (
    diffs.TIME_DELTAS
    + [c for c in diffstats.ESTIMATE_COLUMNS if c not in diffstats.RUNS]
    + diffs.ROOF_DELTAS
)


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
        "devices": [report_schema.device_entry(u, full=False) for u in side.result.devices],
        "accounting": side.result.summary.accounting,
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
            {f: plain(r[f"{f}_{side}"]) for f in diffs.SIDE_FIELDS}
            if diffs.present(r, side)
            else None
        )
    for f in _COMPARED:
        out[f] = plain(r[f])
    for f in ("pairs", "compared_base", "compared_head"):
        out[f] = int(out[f]) if out[f] is not None else None
    return out
