"""Helpers shared by reporters: number formatting, ceilings rows, per-kernel sentences."""

from __future__ import annotations

import html
import math

import pandas as pd

from rooflint.core import (
    advice,
    explain,
    names,
    opgroups,
    ranks,
    report_schema,
    verdicts,
    views,
    windows,
)
from rooflint.core.formatting import pct, ratio, si  # noqa: F401 - the reporters' formatters
from rooflint.core.result import device_description as device_line  # noqa: F401
from rooflint.core.warnings import above_roof_warning, device_warnings, warnings  # noqa: F401


def vendor_of(result, device_id) -> str | None:
    device = _device(result, device_id)
    return device.vendor if device is not None else None


def _device(result, device_id):
    for use in result.devices:
        if use.device is not None and use.device.id == device_id:
            return use.device
    return None


def group_advice(result, row) -> list[advice.Advice]:
    """The evidence-based advice for one ranked group (core/advice.py)."""
    device_id = row.get("device_id")
    dram = views.dram_fraction(result, device_id, row.get("achieved_bytes_per_s"))
    return advice.for_group(dict(row), advice.context(_device(result, device_id), dram))


def kernel_sentence(result, row) -> str:
    """The group's line: what bounds it, then each piece of advice with its evidence."""
    lead, found = kernel_parts(result, row)
    return lead + "".join(f"; {text}" for text in found)


def kernel_parts(result, row) -> tuple[str, list[str]]:
    """(the verdict's sentence with its caveats, each piece of advice "text (from evidence)"):
    the terminal puts each piece on a line of its own, the other formats join them."""
    eff = row["efficiency"]
    eff = float(eff) if eff is not None and eff is not pd.NA and not pd.isna(eff) else float("nan")
    unmeasured = row.get("unmeasured", "")
    found = group_advice(result, row)
    text = explain.sentence(
        row["verdict"],
        eff,
        row["limiter"] if not pd.isna(row["limiter"]) else None,
        row["reason"] if not pd.isna(row["reason"]) else "",
        vendor_of(result, row["device_id"]),
        unmeasured if isinstance(unmeasured, str) else "",
        views.dram_fraction(result, row["device_id"], row.get("achieved_bytes_per_s")),
        specific=bool(found),
    )
    bus = row.get("comm_busbw_bytes_per_s")
    if bus is not None and not pd.isna(bus):
        size = row["comm_message_bytes"]
        text += f"; bus bandwidth {si(bus, 'B/s')}, messages {si(size, 'B')} on average"
    excess = row.get("excess_traffic")
    rules = {a.rule for a in found}
    if excess is not None and not pd.isna(excess) and advice.Rule.EXCESS_TRAFFIC not in rules:
        text += f"; moves {excess_text(excess)} the bytes its shapes need"
        if excess < 1:
            text += " (under 1×: tensors stayed in L2 between kernels, or the model over-counts)"
    return text + partial_text(row), [f"{a.text} (from {a.evidence})" for a in found]


def partial_text(row) -> str:
    """Where a group's verdict rests on some of its launches only: how many, and why not the
    rest ("" when it rests on all, or is no verdict)."""
    launches, analysed = row.get("launches"), row.get("analysed")
    if row.get("verdict") in verdicts.UNPLACED or pd.isna(launches) or pd.isna(analysed):
        return ""
    if int(analysed) >= int(launches):
        return ""
    reason = row.get("reason")
    why = f" (the others: {reason})" if isinstance(reason, str) and reason else ""
    return f"; the verdict rests on {int(analysed)} of its {int(launches)} launches{why}"


def excess_text(value) -> str:
    """3.14 -> "3.1×", 123.4 -> "123×" (a plain number, never 1.2e+02); NA -> "—"."""
    return "—" if value is None or pd.isna(value) else f"{ratio(value, 2)}×"


def full_name(result, row) -> str:
    """The group's full label: the whole kernel name (after its job's, inputs of several jobs),
    or the family/range/source."""
    if result.group_by not in ("kernel", "name") or not isinstance(row["kernel"], str):
        return str(row["group"])
    return _job(row) + row["kernel"]


def display_name(row, group_by: str, width: int = 48) -> str:
    """The group's short label, control characters shown escaped (its width is what it shows);
    inputs of several jobs lead it with the group's job ("job 2 · ...")."""
    if group_by in ("kernel", "name"):
        job = _job(row)
        return job + names.short_name(row["kernel"], max(width - len(job), 8))
    if group_by == "op":
        job = row.get("job")
        label = str(row["group"])
        if isinstance(job, str) and label.startswith(job + " "):  # "job 1 aten::mm [...] ..."
            return _job(row) + names.visible(opgroups.short_label(label[len(job) + 1 :]))
        return names.visible(opgroups.short_label(label))
    return names.visible(row["group"])


def _job(row) -> str:
    """ "job 2 · " for a group of one of several jobs' launches, else ""."""
    job = row.get("job")
    return f"{job} · " if isinstance(job, str) and job else ""


def ceiling_rows(result) -> list[dict]:
    """Every ceiling of every device used: name, value, unit, ridge point, source."""
    return [
        {
            "device": use.device.id,
            "ceiling": c["name"],
            "kind": c["kind"],
            "value": c["value"],
            "unit": c["unit"],
            "ridge_dram": c.get("ridge_dram"),
            "source": c["source"],
        }
        for use in result.devices
        if use.device is not None
        for c in report_schema.ceilings(use.device)
    ]


def accounting_line(result) -> str:
    acc = result.summary.accounting
    line = (
        f"launches read {acc['launches_read']} = analysed {acc['analysed']} + not analysable "
        f"{acc['not_analysable']}"
    )
    if acc["not_analysable_reasons"]:
        reasons = ", ".join(f"{n} {r}" for r, n in acc["not_analysable_reasons"].items())
        line += f" ({reasons})"
    if acc.get("outside_window"):
        line += f" + outside the window {acc['outside_window']['launches']}"
    return line


def accounting_lines(result) -> list[str]:
    """The accounting line, then the launches outside the window named apart."""
    return [
        accounting_line(result),
        *filter(None, [windows.outside_line(result.summary.accounting)]),
    ]


def total_text(result) -> str:
    """The headline's time: a timeline's busy time in its window, else the summed launch time."""
    summary = result.summary
    if result.timeline is not None:
        return windows.headline(summary.numbers(), result.timeline, windows.untimed(result))
    return f"total {si(summary.total_time_s, 's')}"


def timeline_lines(result) -> list[str]:
    """The breakdown of the busy time, per-step time, and the launches outside the window."""
    block = result.timeline
    if block is None:
        return []
    lines = [windows.breakdown_line(block), windows.steps_line(block)]
    return [line for line in lines if line] + ranks.lines(block.get("ranks"))


def notes(result) -> list[str]:
    """The caveats the readers attached to each input (estimates, modelled bytes, inferences)."""
    return sorted({f"{p.source}: {n}" for p in result.inputs for n in p.notes})


def esc(value) -> str:
    """A value as HTML text, escaped with quotes, control characters shown escaped ("" for a
    missing one): inline SVG is XML, where they are not allowed at all."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(names.visible(value), quote=True)
