"""Formatting shared by the diff reporters: the verdict line and the cells of one group's row."""

from __future__ import annotations

import math

import pandas as pd

from rooflint.core import diff as diffs
from rooflint.core import names, units
from rooflint.core.diff_text import interval_text, method_text, noise_clause
from rooflint.core.diff_text import number as _f
from rooflint.core.formatting import show_pct, signed_pct
from rooflint.core.gates import failures
from rooflint.reporters.common import pct, si

HEADER = [
    "#",
    "id",
    "kernel",
    "match",
    "launches",
    "base",
    "head",
    "Δ time",
    "Δ %",
    "change [CI]",
    "method",
    "run noise",
    "efficiency",
    "verdict",
    "Δ headroom",
    "status",
]
NUMERIC = {0, 4, 5, 6, 7, 8, 9, 11, 14}


def verdict(gates) -> str:
    return "FAIL" if failures(gates) else "PASS"


def summary_line(d: diffs.Diff, gates) -> str:
    """`PASS|FAIL — total time +x % [lo, hi] (base a → head b)`, the one line a PR reader needs."""
    outcome = verdict(gates) if gates else "PASS (no gate set)"
    line = f"{outcome} — {change_line(d)}"
    if not gates:
        line += "; nothing was gated (--fail-on-regression PCT sets a gate)"
    return line


def change_line(d: diffs.Diff) -> str:
    """`total time +x % [lo, hi] (base a → head b); 1 slower, 2 new`: what changed, ungated."""
    t = d.totals
    line = (
        f"{t.get('measure', 'total time')} {interval_text(t)} (base "
        f"{si(t['time_base_s'], 's')} → "
        f"head {si(t['time_head_s'], 's')}{noise_clause(t)})"
    )
    s = t["status"]
    counts = [
        f"{s[k]} {k}"
        for k in (diffs.SLOWER, diffs.FASTER, diffs.NEW, diffs.REMOVED, diffs.ABOVE_ROOF)
        if s[k]
    ]
    if counts:
        line += "; " + ", ".join(counts)
    return line


def context_lines(d: diffs.Diff) -> list[str]:
    """Efficiency, headroom and how the groups matched, in two lines."""
    t = d.totals
    fuzzy = t["matched"][diffs.NAME] + t["matched"][diffs.BASE_NAME]
    matched = sum(t["matched"].values())
    return [
        f"time-weighted efficiency {pct(t['efficiency_base'])} → {pct(t['efficiency_head'])}"
        f"{above_roof_clause(t)}, "
        f"headroom {si(t['headroom_base_s'], 's')} → {si(t['headroom_head_s'], 's')}, "
        f"launches {t['launches_base']} → {t['launches_head']}",
        f"kernel groups: {matched} matched ({fuzzy} fuzzy), {t['head_only']} new, "
        f"{t['base_only']} removed; {diffs.regression_rule_text(d.threshold, d.level)}"
        + (
            f"; groups under {show_pct(d.min_time)} of total time in both profiles are ignored"
            if d.min_time
            else ""
        ),
    ]


def above_roof_clause(t: dict) -> str:
    """Whether the efficiencies hold launches above their roof (a group's status sets such a
    launch apart as a measurement problem; the side's efficiency counts it)."""
    base, head = t.get("above_roof_base") or 0, t.get("above_roof_head") or 0
    if not (base or head):
        return ""
    return f" (including launches above the roof: base {base:g}, head {head:g})"


def display(r: dict) -> str:
    """Short kernel name; a fuzzy match shows where it came from."""
    name = names.short_name(r["kernel"])
    if r["match"] == diffs.BASE_NAME:
        name += f" ≈ {names.short_name(r['kernel_base'])}"
    return name


def match_text(r: dict) -> str:
    if r["match"] == diffs.NAME:
        changes = [
            f"{k} {r[k + '_base']}→{r[k + '_head']}"
            for k in ("grid", "block")
            if r[k + "_base"] != r[k + "_head"]
        ]
        return "name (" + ", ".join(changes) + ")" if changes else "name"
    if r["match"] == diffs.BASE_NAME:
        return "fuzzy: base name"
    return {diffs.BASE_ONLY: "base only", diffs.HEAD_ONLY: "head only"}.get(r["match"], r["match"])


def cells(rank: int, r: dict) -> list[str]:
    return [
        str(rank),
        r["id"],
        display(r),
        match_text(r),
        _pair(r, "launches", _count),
        si(r["duration_s_base"], "s"),
        si(r["duration_s_head"], "s"),
        signed_si(r["delta_s"]),
        signed_pct(_f(r["delta_pct"])),
        interval_text(r),
        method_text(r),
        _noise(r),
        _pair(r, "efficiency", pct),
        _verdicts(r),
        signed_si(r["headroom_delta_s"]),
        status_text(r),
    ]


def status_text(r: dict) -> str:
    text = r["status"]
    if r["status"] == diffs.ABOVE_ROOF:
        text = "measurement problem (above roof)"
    elif r["ignored"] and r["status"] != diffs.IGNORED:
        text += " (ignored: under --min-time)"
    elif r["status"] == diffs.IGNORED:
        text = "ignored (under --min-time)"
    return text


def signed_si(value, unit: str = "s") -> str:
    v = _f(value)
    if math.isnan(v):
        return "—"
    return ("+" if v > 0 else "") + si(v, unit)


def spread_text(r: dict, side: str) -> str:
    """`n× min–max (spread x %)` for a side with several launches, else the one duration."""
    n = r[f"launches_{side}"]
    if not diffs.present(r, side) or pd.isna(n):
        return "—"
    if int(n) < 2:
        return si(r[f"mean_s_{side}"], "s")
    return (
        f"{int(n)}× {si(r[f'min_s_{side}'], 's')}–{si(r[f'max_s_{side}'], 's')} "
        f"(spread {show_pct(_f(r[f'spread_{side}']))}, CV {show_pct(_f(r[f'cv_{side}']))})"
    )


def _noise(r: dict) -> str:
    n = _f(r.get("run_noise"))
    has_both = r["match"] not in (diffs.BASE_ONLY, diffs.HEAD_ONLY)
    return show_pct(n) if has_both and not math.isnan(n) else "—"


def _verdicts(r: dict) -> str:
    b, h = r["verdict_base"], r["verdict_head"]
    if not diffs.present(r, "base"):
        return f"new: {h}"
    if not diffs.present(r, "head"):
        return f"was {b}"
    return b if b == h else f"{b} → {h}"


def _pair(r: dict, field: str, fmt) -> str:
    b, h = r[f"{field}_base"], r[f"{field}_head"]
    if not diffs.present(r, "base"):
        return fmt(h)
    if not diffs.present(r, "head"):
        return fmt(b)
    fb, fh = fmt(b), fmt(h)
    return fb if fb == fh else f"{fb} → {fh}"


def _count(value) -> str:
    return "—" if value is None or pd.isna(value) else str(int(value))


def ceiling_text(c: dict) -> str:
    unit = units.shown(c["kind"])
    return f"{c['ceiling']} {si(c['base'], unit)} → {si(c['head'], unit)}"


def records(d: diffs.Diff) -> list[dict]:
    return d.groups.to_dict(orient="records")
