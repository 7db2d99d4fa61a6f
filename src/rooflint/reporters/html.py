"""One self-contained HTML page: summary, hand-built SVG roofline, sortable kernel table, ceilings.

No network, no CDN, no matplotlib: inline CSS, inline SVG, one small inline script
(reporters/html_assets.py) that sorts and filters the table and shows a chart point's details.
The kernel table has one <tbody> per kernel group: its numbers, then what would help on a row
of its own under them, so that no column sits off-screen. A chart point links to its group's
<tbody> (id "k-RANK"). Every string that came from an input is escaped (common.esc).
"""

from __future__ import annotations

import pandas as pd

from rooflint.core import coverage, explain, units, windows
from rooflint.core.verdicts import COLOURS as VERDICT_COLOURS
from rooflint.core.version import __version__
from rooflint.reporters import common
from rooflint.reporters.chart import ChartData, charts
from rooflint.reporters.common import esc
from rooflint.reporters.html_assets import CSP, CSS, SCRIPT
from rooflint.reporters.html_svg import svg


def render(result, top: int | None = None, level: str = "dram", **_options) -> str:
    kernels = result.kernels if top is None else result.kernels.head(top)
    chart_list = charts(result, level, None)  # one per device
    links = {str(i): _anchor(rank) for i, rank in zip(kernels["id"], kernels["rank"], strict=True)}
    body = [
        "<h1>rooflint report</h1>",
        _summary(result),
        "<h2>Roofline</h2>"
        if len(chart_list) == 1
        else f"<h2>Roofline, one chart per device ({len(chart_list)})</h2>",
        *(
            part
            for data in chart_list
            for part in (_chart_heading(data, len(chart_list)), svg(data, links), _unplaced(data))
        ),
        f'<h2>Kernels <span class="muted">({len(kernels)} of {len(result.kernels)} groups; '
        "click a header to sort)</span></h2>",
        _tools(len(kernels)),
        _kernel_table(result, kernels),
        "<h2>Ceilings and their sources</h2>",
        _ceilings(result),
        _notes(result),
        _skipped(result),
        f'<p class="muted">rooflint {esc(__version__)}</p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>rooflint report: {esc(common.device_line(result))}</title>\n<style>{CSS}</style>\n"
        "</head>\n<body>\n"
        + "\n".join(b for b in body if b)
        + f'\n<div id="tip" role="tooltip"></div>\n<script>{SCRIPT}</script>\n</body>\n</html>\n'
    )


def _summary(result) -> str:
    s = result.summary
    parts = [
        f'<p class="summary">{_total(result)} · '
        f"<b>{esc(common.si(s.total_headroom_s, 's'))}</b> headroom"
        f"{esc(windows.overlap_text(s.numbers()))} · "
        f"<b>{esc(common.pct(s.time_weighted_efficiency))}</b> time-weighted efficiency</p>",
        *[f"<p>{esc(line)}</p>" for line in common.timeline_lines(result)],
        f"<p>Device: {esc(common.device_line(result))}</p>",
        *[f"<p>{esc(line)}</p>" for line in common.accounting_lines(result)],
    ]
    parts += [f"<p>{esc(text)}</p>"] if (text := coverage.line(result)) else []
    parts += [f'<p class="warn">{esc(w)}</p>' for w in common.warnings(result)]
    return "\n".join(parts)


def _total(result) -> str:
    if result.timeline is None:
        return f"<b>{esc(common.si(result.summary.total_time_s, 's'))}</b> total"
    return f"<b>{esc(common.total_text(result))}</b>"


def _num(value) -> str:
    """A data-sort value: the raw number, or empty for NA."""
    if value is None or value is pd.NA or pd.isna(value):
        return ""
    return repr(float(value))


_HEADERS = [
    ("#", True),
    ("id", False),
    ("kernel", False),
    ("launches", True),
    ("time", True),
    ("share", True),
    ("verdict", False),
    ("efficiency", True),
    ("headroom", True),
    ("limiter", False),
    ("FLOP/byte (DRAM)", True),
    ("FLOP/s", True),
]


def _anchor(rank) -> str:
    return f"k-{int(rank)}"


def _tools(count: int) -> str:
    return (
        '<p class="tools"><input type="search" id="filter" aria-label="filter kernel names" '
        'placeholder="filter kernel names"> '
        f'<span class="muted"><span id="shown">{count}</span> of {count} shown</span></p>'
    )


def _kernel_table(result, kernels: pd.DataFrame) -> str:
    head = "".join(
        f'<th class="n">{esc(h)}</th>' if numeric else f"<th>{esc(h)}</th>"
        for h, numeric in _HEADERS
    )
    groups = [_kernel_rows(result, r) for r in kernels.to_dict("records")]  # dicts: fast
    return (
        '<table class="sortable" id="kernels">\n'
        f"<thead><tr>{head}</tr></thead>\n" + "\n".join(groups) + "\n</table>"
    )


def _kernel_rows(result, r) -> str:
    """One kernel group's <tbody>: its numbers, then what would help, under them."""
    colour = VERDICT_COLOURS.get(r["verdict"], "#777")
    full = common.full_name(result, r)
    short = common.display_name(r, result.group_by)
    config = " ".join(str(r[c]) for c in ("grid", "block") if isinstance(r[c], str))
    name = (
        f"<details><summary>{esc(short)}</summary>"
        f'<div class="full">{esc(full)}</div>'
        + (f'<div class="muted">grid, block: {esc(config)}</div>' if config else "")
        + "</details>"
    )
    limiter = r["limiter"] if isinstance(r["limiter"], str) else ""
    cells = [
        _n(r["rank"], str(r["rank"])),
        f'<td class="id">{esc(r["id"])}</td>',
        f'<td class="name" data-sort="{esc(full.lower())}">{name}</td>',
        _n(r["launches"], str(r["launches"])),
        _n(r["duration_s"], common.si(r["duration_s"], "s")),
        _n(r["time_share"], common.pct(r["time_share"], 1)),
        f'<td class="verdict"><span class="dot" style="background:{colour}"></span>'
        f"{esc(r['verdict'])}</td>",
        _n(r["efficiency"], common.pct(r["efficiency"])),
        _n(r["headroom_s"], common.si(r["headroom_s"], "s")),
        f"<td>{esc(limiter)}</td>",
        _n(r["intensity_dram"], common.ratio(r["intensity_dram"])),
        _n(r["achieved_flops_per_s"], common.si(r["achieved_flops_per_s"], "FLOP/s")),
    ]
    words = " ".join(dict.fromkeys((full.lower(), short.lower(), str(r["id"]).lower())))
    return (
        f'<tbody id="{_anchor(r["rank"])}" data-name="{esc(words)}">'
        f'<tr class="row">{"".join(cells)}</tr>'
        f'<tr class="why"><td colspan="{len(_HEADERS)}">What would help: '
        f"{esc(common.kernel_sentence(result, r))}</td></tr></tbody>"
    )


def _n(raw, shown: str) -> str:
    return f'<td class="n" data-sort="{_num(raw)}">{esc(shown)}</td>'


def _ceilings(result) -> str:
    rows = common.ceiling_rows(result)
    if not rows:
        return (
            "<p>No ceilings: no device could be matched "
            "(pass <code>--device ID</code> or <code>--device-file</code>).</p>"
        )
    vendors = {u.device.id: u.device.vendor for u in result.devices if u.device is not None}
    out = [
        '<table class="sortable" id="ceilings">',
        '<thead><tr><th>device</th><th>ceiling</th><th>roof</th><th class="n">peak</th>'
        '<th class="n">ridge vs DRAM (FLOP/byte)</th><th>source</th></tr></thead>',
        "<tbody>",
    ]
    for row in rows:
        unit = units.shown(row["kind"], row["ceiling"])
        ridge = row.get("ridge_dram")
        out.append(
            f"<tr><td>{esc(row['device'])}</td><td>{esc(row['ceiling'])}</td>"
            f"<td>{esc(explain.roof_label(row['ceiling'], vendors.get(row['device'])))}</td>"
            + _n(row["value"], common.si(row["value"], unit))
            + _n(ridge, common.ratio(ridge) if ridge else "—")
            + f"<td>{esc(row['source'])}</td></tr>"
        )
    out += ["</tbody>", "</table>"]
    for use in result.devices:
        title = f"{use.device.name} ({use.device.id})" if use.device is not None else "no device"
        out.append(f"<p><b>{esc(title)}</b> for {esc(', '.join(use.sources))}</p><ul>")
        out += [f"<li>{esc(line)}</li>" for line in use.provenance]
        out.append("</ul>")
    return "\n".join(out)


def _notes(result) -> str:
    notes = common.notes(result)
    if not notes:
        return ""
    return (
        "<h2>Notes from the inputs</h2>\n<ul>"
        + "".join(f"<li>{esc(n)}</li>" for n in notes)
        + "</ul>"
    )


def _skipped(result) -> str:
    if not result.skipped:
        return ""
    items = "".join(f"<li>{esc(p)}: {esc(r)}</li>" for p, r in result.skipped)
    return f"<h2>Skipped inputs ({len(result.skipped)})</h2>\n<ul>{items}</ul>"


def _chart_heading(data: ChartData, count: int) -> str:
    return f"<h3>{esc(data.title)}</h3>" if count > 1 else ""


def _unplaced(data: ChartData) -> str:
    if not data.unplaced and not data.notes:
        return ""
    items = [
        f'<li><span class="id">{esc(label)}</span> {esc(name)}: {esc(why)}</li>'
        for label, name, why in data.unplaced[:50]
    ]
    if len(data.unplaced) > 50:
        items.append(f"<li>… and {len(data.unplaced) - 50} more (see the table)</li>")
    items += [f"<li>{esc(n)}</li>" for n in data.notes]
    title = (
        f"Not on the chart ({len(data.unplaced)} kernel group(s))"
        if data.unplaced
        else f"Chart notes ({len(data.notes)})"
    )
    return f"<details><summary>{esc(title)}</summary><ul>{''.join(items)}</ul></details>"
