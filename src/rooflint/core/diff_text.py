"""The text of a diff row's estimate: its change, confidence interval, method and run noise."""

from __future__ import annotations

import math

import pandas as pd

from rooflint.core import diff as diffs
from rooflint.core.formatting import show_pct, signed_pct


def interval_text(r: dict) -> str:
    """`+30.0 % [+29.9, +30.1]`: the estimated change and its confidence interval, in percent."""
    change, low, high = (
        number(r.get("change")),
        number(r.get("change_low")),
        number(r.get("change_high")),
    )
    if math.isnan(change):
        return "—"
    text = signed_pct(change)
    if not (math.isnan(low) or math.isnan(high)):
        text += f" [{low * 100:+.1f}, {high * 100:+.1f}]"
    return text


def method_text(r: dict) -> str:
    """How the change was estimated and from how many launches: `paired, 22 launches`."""
    method = r.get("method")
    if not isinstance(method, str) or method == diffs.NOT_COMPARABLE:
        return "—"
    count = number(r.get("pairs"))
    if not math.isnan(count):  # paired (or paired, but too few pairs for an interval)
        text = f"{method}, {int(count)} launch{'es' if count != 1 else ''}"
    elif not math.isnan(number(r.get("compared_base"))):
        text = f"{method}, {int(r['compared_base'])} → {int(r['compared_head'])} launches"
    else:
        text = method
    runs_b, runs_h = runs_of(r.get("runs_base")), runs_of(r.get("runs_head"))
    if runs_b > 1 or runs_h > 1:
        text += f" × {runs_b} runs" if runs_b == runs_h else f" × {runs_b} → {runs_h} runs"
    return text


def runs_of(value) -> int:
    v = number(value)
    return 1 if math.isnan(v) else int(v)


def change_text(r: dict) -> str:
    """`+30.0 % [+29.9, +30.1] paired, 22 launches`."""
    method = method_text(r)
    return interval_text(r) + (f" {method}" if method != "—" else "")


def noise_clause(r: dict) -> str:
    """`, run noise 4.1 %` when run-to-run noise was measured (several runs on a side), else ''."""
    n = number(r.get("run_noise"))
    return "" if math.isnan(n) else f", run noise {show_pct(n)}"


def number(value) -> float:
    try:
        return float(value) if value is not None and value is not pd.NA else math.nan
    except (TypeError, ValueError):
        return math.nan
