"""How a Result shows itself in a REPL (one or two lines) and in a notebook (a small HTML table),
and a Diff in a REPL (one or two lines)."""

from __future__ import annotations

from html import escape

from rooflint.core import names, windows
from rooflint.core.formatting import pct, si
from rooflint.core.result import device_description
from rooflint.core.warnings import warnings

TOP = 10


def text(result) -> str:
    """`<rooflint.Result: 11 launches, 906 ms, headroom 192 ms (79 % efficiency) on NVIDIA A100
    PCIe 40GB (a100-pcie-40gb); 4 kernel groups, top: cutlass::Kernel<…> 181 ms>`"""
    s = result.summary
    line = (
        f"<rooflint.Result: {len(result.launches)} launches, {si(s.total_time_s, 's')}, "
        f"headroom {si(s.total_headroom_s, 's')} "
        f"({pct(s.time_weighted_efficiency)} efficiency) on {_devices(result)}"
    )
    kernels = result.kernels
    if len(kernels):
        top = kernels.iloc[0]
        line += (
            f";\n {len(kernels)} {result.group_by} groups, top: {_label(top, result)} "
            f"{si(top['headroom_s'], 's')} headroom"
        )
    warned = len(warnings(result))
    return line + (f"; {warned} warning(s)" if warned else "") + ">"


def diff_text(d) -> str:
    """`<rooflint.Diff: total time +30.0 % [+29.9, +30.1] (base 906 ms → head 1.18 s); 1 slower;
     4 kernel groups matched (4 in base, 4 in head); 1 warning(s)>`: the change as the diff's
    first line gives it, without gates (a Diff has none)."""
    from rooflint.reporters import diff_common

    t = d.totals
    matched = sum(t["matched"].values())
    warned = len(d.warnings)
    return (
        f"<rooflint.Diff: {diff_common.change_line(d)};\n {matched} kernel groups matched "
        f"({t['groups_base']} in base, {t['groups_head']} in head)"
        + (f"; {warned} warning(s)" if warned else "")
        + ">"
    )


def _outside(acc: dict) -> bool:
    return bool(acc.get("outside_window"))


def html(result, top: int = TOP) -> str:
    """The summary, the warnings and the top kernel groups as an HTML fragment."""
    s = result.summary
    acc = s.accounting
    parts = [
        f"<p><b>rooflint</b>: {escape(si(s.total_time_s, 's'))} total, "
        f"{escape(si(s.total_headroom_s, 's'))} headroom, "
        f"{escape(pct(s.time_weighted_efficiency))} time-weighted efficiency on "
        f"{escape(device_description(result))}<br>launches read {acc['launches_read']} = "
        f"analysed {acc['analysed']} + not analysable {acc['not_analysable']}"
        + (f" + outside the window {acc['outside_window']['launches']}" if _outside(acc) else "")
        + "</p>"
    ]
    block = result.timeline
    if block is not None:  # a trace: its window's busy time and breakdown lead
        lines = [windows.headline(s.numbers(), block, windows.untimed(result))]
        lines.append(windows.breakdown_line(block))
        lines += [x for x in [windows.steps_line(block), windows.outside_line(acc)] if x]
        parts.insert(0, "<p>" + "<br>".join(escape(x) for x in lines) + "</p>")
    parts += [f'<p style="color:#a33"><b>Warning:</b> {escape(w)}</p>' for w in warnings(result)]
    head = ["#", "kernel", "launches", "time", "share", "verdict", "efficiency", "headroom"]
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in result.kernels.head(top).to_dict("records"):
        cells = [
            r["rank"],
            _label(r, result),
            r["launches"],
            si(r["duration_s"], "s"),
            pct(r["time_share"], 1),
            r["verdict"],
            pct(r["efficiency"]),
            si(r["headroom_s"], "s"),
        ]
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    more = len(result.kernels) - min(top, len(result.kernels))
    parts.append("<table>" + "".join(rows) + "</table>")
    if more:
        parts.append(f"<p>… and {more} more group(s) in <code>result.kernels</code></p>")
    return '<div class="rooflint">' + "\n".join(parts) + "</div>"


def _devices(result) -> str:
    many = len(result.devices) > 2
    return f"{len(result.devices)} devices" if many else device_description(result)


def _label(row, result) -> str:
    if result.group_by in ("kernel", "name"):
        return names.short_name(row["kernel"])
    return str(row["group"])
