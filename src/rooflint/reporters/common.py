"""Helpers shared by reporters: number formatting, ceilings rows, per-kernel sentences."""

from __future__ import annotations

import math

import pandas as pd

from rooflint import explain, names

_SI = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]


def si(value, unit: str = "", digits: int = 3) -> str:
    """3.2e-6, "s" → "3.2 µs"; NaN → "—"."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    value = float(value)
    if value == 0:
        return f"0 {unit}".strip()
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def pct(value, digits: int = 0) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{float(value) * 100:.{digits}f} %"


def vendor_of(result, device_id) -> str | None:
    for use in result.devices:
        if use.device is not None and use.device.id == device_id:
            return use.device.vendor
    return None


def kernel_sentence(result, row) -> str:
    eff = row["efficiency"]
    eff = float(eff) if eff is not None and eff is not pd.NA and not pd.isna(eff) else float("nan")
    unmeasured = row.get("unmeasured", "")
    return explain.sentence(row["verdict"], eff, row["limiter"] if not pd.isna(row["limiter"]) else None,
                            row["reason"] if not pd.isna(row["reason"]) else "",
                            vendor_of(result, row["device_id"]),
                            unmeasured if isinstance(unmeasured, str) else "",
                            _dram_fraction(result, row))


def _dram_fraction(result, row) -> float | None:
    """The group's achieved DRAM bandwidth as a fraction of its device's DRAM roof."""
    achieved = row.get("achieved_bytes_per_s")
    for use in result.devices:
        if use.device is not None and use.device.id == row["device_id"] and "dram" in use.device.memory:
            if achieved is not None and not pd.isna(achieved):
                return float(achieved) / use.device.memory["dram"].value
    return None


def full_name(result, row) -> str:
    """The group's full label: the whole kernel name, or the family/range/source."""
    value = row["kernel"] if result.group_by in ("kernel", "name") else row["group"]
    return value if isinstance(value, str) else str(row["group"])


def display_name(row, group_by: str) -> str:
    if group_by in ("kernel", "name"):
        return names.short_name(row["kernel"])
    return str(row["group"])


def ceiling_rows(result) -> list[dict]:
    """Every ceiling of every device used: name, value, unit, ridge point, source."""
    rows = []
    for use in result.devices:
        device = use.device
        if device is None:
            continue
        for cls, ceiling in device.compute.items():
            rows.append({"device": device.id, "ceiling": cls, "kind": "compute", "value": ceiling.value,
                         "unit": "op/s", "ridge_dram": _ridge(device, cls), "source": ceiling.source})
        for level, ceiling in device.memory.items():
            rows.append({"device": device.id, "ceiling": level, "kind": "memory", "value": ceiling.value,
                         "unit": "byte/s", "ridge_dram": None, "source": ceiling.source})
    return rows


def _ridge(device, cls):
    try:
        return device.ridge(cls, "dram")
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def device_warnings(result) -> list[str]:
    """One line per device whose identification the evidence left open (every format shows it)."""
    return [f"device provisional: {use.device.name} ({use.device.id}) was picked, but the "
            f"profile's evidence also fits {', '.join(c for c in use.candidates if c != use.device.id)}"
            f" with different ceilings, so the verdicts are provisional; {use.advice}"
            for use in result.devices if use.device is not None and getattr(use, "provisional", False)]


def device_line(result) -> str:
    parts = []
    for use in result.devices:
        if use.device is None:
            parts.append("no device ceilings")
        else:
            parts.append(f"{use.device.name} ({use.device.id})")
    return "; ".join(parts) or "no device"


def accounting_line(result) -> str:
    acc = result.accounting
    line = (f"launches read {acc['launches_read']} = analysed {acc['analysed']} + not analysable "
            f"{acc['not_analysable']}")
    if acc["not_analysable_reasons"]:
        reasons = ", ".join(f"{n} {r}" for r, n in acc["not_analysable_reasons"].items())
        line += f" ({reasons})"
    return line


def summary_numbers(result) -> dict:
    """The headline figures (shared with the JSON summary so they never disagree)."""
    from rooflint.reporters.json_report import summary

    return summary(result)
