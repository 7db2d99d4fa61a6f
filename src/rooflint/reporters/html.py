"""One self-contained HTML page: summary, hand-built SVG roofline, sortable kernel table, ceilings.

No network, no CDN, no matplotlib: inline CSS, inline SVG, one small inline script that sorts the
table. Every string that came from an input is escaped with html.escape(quote=True).
"""

from __future__ import annotations

import math
from html import escape as _escape

import pandas as pd

from rooflint.core import coverage, explain
from rooflint.core.version import __version__
from rooflint.reporters import common
from rooflint.reporters.chart import LEVELS, VERDICT_COLOURS, ChartData, Point, charts

CSS = (
    "\n"
    'body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;'
    "margin:24px auto;max-width:1240px;\n"
    "padding:0 16px;color:#1d1d1f}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}\n"
    ".summary{font-size:16px;margin:6px 0}.muted{color:#666}.warn{color:#a33;font-weight:600}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px}\n"
    "th,td{padding:4px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "th{background:#f4f4f6;position:sticky;top:0}\n"
    "table.sortable th{cursor:pointer;user-select:none}\n"
    'table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}\n'
    'table.sortable th[aria-sort=descending]::after{content:" \\25BC"}\n'
    "code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}\n"
    "details summary{cursor:pointer}.full{word-break:break-all;font-size:12px;color:#444}\n"
    ".verdict{white-space:nowrap}"
    ".dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:5px}\n"
    "svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}\n"
    "svg .pt:hover{stroke:#000;stroke-width:1.5}\n"
    ".scroll{overflow-x:auto}td.why{min-width:26em}td.name{min-width:16em}\n"
)

# Sorts table.sortable on a header click by each cell's data-sort (numbers) or its text.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col], raw = cell.getAttribute("data-sort");
        if (raw === null) return cell.textContent.toLowerCase();
        return raw === "" ? null : parseFloat(raw);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (down ? -1 : 1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def esc(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return _escape(str(value), quote=True)


def render(result, top: int | None = None, level: str = "dram", **_options) -> str:
    kernels = result.kernels if top is None else result.kernels.head(top)
    chart_list = charts(result, level, None)  # one per device
    body = [
        "<h1>rooflint report</h1>",
        _summary(result),
        "<h2>Roofline</h2>"
        if len(chart_list) == 1
        else f"<h2>Roofline, one chart per device ({len(chart_list)})</h2>",
        *(
            part
            for data in chart_list
            for part in (_chart_heading(data, len(chart_list)), svg(data), _unplaced(data))
        ),
        f'<h2>Kernels <span class="muted">({len(kernels)} of {len(result.kernels)} groups; '
        "click a header to sort)</span></h2>",
        _kernel_table(result, kernels),
        "<h2>Ceilings and their sources</h2>",
        _ceilings(result),
        _notes(result),
        _skipped(result),
        f'<p class="muted">rooflint {esc(__version__)}</p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>rooflint report: {esc(common.device_line(result))}</title>\n<style>{CSS}</style>\n"
        "</head>\n<body>\n"
        + "\n".join(b for b in body if b)
        + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def _summary(result) -> str:
    s = common.summary_numbers(result)
    parts = [
        f'<p class="summary"><b>{esc(common.si(s["total_time_s"], "s"))}</b> total · '
        f"<b>{esc(common.si(s['total_headroom_s'], 's'))}</b> headroom · "
        f"<b>{esc(common.pct(s['time_weighted_efficiency']))}</b> time-weighted efficiency</p>",
        f"<p>Device: {esc(common.device_line(result))}</p>",
        f"<p>{esc(common.accounting_line(result))}</p>",
    ]
    parts += [f"<p>{esc(text)}</p>"] if (text := coverage.line(result)) else []
    parts += [f'<p class="warn">{esc(w)}</p>' for w in common.warnings(result)]
    return "\n".join(parts)


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
    ("what would help", False),
]


def _kernel_table(result, kernels: pd.DataFrame) -> str:
    head = "".join(
        f'<th class="n">{esc(h)}</th>' if numeric else f"<th>{esc(h)}</th>"
        for h, numeric in _HEADERS
    )
    rows = [_kernel_row(result, r) for r in kernels.to_dict("records")]  # dicts: fast on 10^4 rows
    return (
        '<div class="scroll"><table class="sortable" id="kernels">\n'
        f"<thead><tr>{head}</tr></thead>\n"
        "<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table></div>"
    )


def _kernel_row(result, r) -> str:
    colour = VERDICT_COLOURS.get(r["verdict"], "#777")
    full = common.full_name(result, r)
    config = " ".join(str(r[c]) for c in ("grid", "block") if isinstance(r[c], str))
    name = (
        f"<details><summary>{esc(common.display_name(r, result.group_by))}</summary>"
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
        _n(r["intensity_dram"], common.si(r["intensity_dram"])),
        _n(r["achieved_flops_per_s"], common.si(r["achieved_flops_per_s"], "FLOP/s")),
        f'<td class="why">{esc(common.kernel_sentence(result, r))}</td>',
    ]
    return "<tr>" + "".join(cells) + "</tr>"


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
        unit = (
            "B/s"
            if row["kind"] == "memory"
            else ("OP/s" if row["ceiling"].endswith("int8") else "FLOP/s")
        )
        ridge = row.get("ridge_dram")
        out.append(
            f"<tr><td>{esc(row['device'])}</td><td>{esc(row['ceiling'])}</td>"
            f"<td>{esc(explain.roof_label(row['ceiling'], vendors.get(row['device'])))}</td>"
            + _n(row["value"], common.si(row["value"], unit))
            + _n(ridge, f"{ridge:.3g}" if ridge else "—")
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
    return (
        f"<details><summary>Not on the chart ({len(data.unplaced)} kernel group(s))</summary>"
        f"<ul>{''.join(items)}</ul></details>"
    )


# --- the SVG roofline, drawn by hand -------------------------------------------------------

W, H = 960, 536
STRIP = (84, 40, 184, 460)  # x0, y0, x1, y1 of the zero-FLOP strip, when there is one


def _main_box(data: ChartData) -> tuple[int, int, int, int]:
    """The main plot's box: right of the strip (and both y-axis labels) when there is a strip."""
    return (STRIP[2] + 110 if data.zero_flop else 110, 40, W - 24, 460)


class _Log:
    """Maps a log-scale value range onto a pixel range."""

    def __init__(self, lo: float, hi: float, p0: float, p1: float):
        self.lo, self.hi, self.p0, self.p1 = math.log10(lo), math.log10(hi), p0, p1

    def __call__(self, value: float) -> float:
        frac = (math.log10(value) - self.lo) / (self.hi - self.lo)
        return self.p0 + frac * (self.p1 - self.p0)

    def decades(self):
        return [10.0**e for e in range(math.ceil(self.lo), math.floor(self.hi) + 1)]


def svg(data: ChartData) -> str:
    """The roofline as inline SVG: roofs, points with a <title> each (hover), labels, strip."""
    box = _main_box(data)
    x0, y0, x1, y1 = box
    sx, sy = _Log(*data.x_range, x0, x1), _Log(*data.y_range, y1, y0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img" aria-label="{esc(data.title)}">',
        f"<title>{esc(data.title)}</title>",
        f'<defs><clipPath id="plot"><rect x="{x0}" y="{y0}" width="{x1 - x0}" '
        f'height="{y1 - y0}"/></clipPath></defs>',
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#fff" stroke="#333"/>',
    ]
    out += _grid(sx, sy, box, lambda v: f"{v:g}", lambda v: common.si(v, "FLOP/s"))
    out.append(
        f'<text x="{(x0 + x1) / 2}" y="{y1 + 40}" text-anchor="middle" font-size="13">'
        f"arithmetic intensity (FLOP per {LEVELS[data.level]} byte)</text>"
    )
    out.append(
        f'<text transform="translate({x0 - 86},{(y0 + y1) / 2}) rotate(-90)" text-anchor="middle" '
        'font-size="13">achieved FLOP/s</text>'
    )
    out.append('<g clip-path="url(#plot)">')
    obstacles = []
    for roof in data.roofs:
        (ax, ay), (bx, by) = roof.start, roof.end
        colour = "#222" if roof.kind == "compute" else "#555"
        out.append(
            f'<line x1="{sx(ax):.1f}" y1="{sy(ay):.1f}" x2="{sx(bx):.1f}" y2="{sy(by):.1f}" '
            f'stroke="{colour}" stroke-width="2"><title>{esc(roof.label)}</title></line>'
        )
        if roof.kind == "compute":
            out.append(
                f'<text x="{x1 - 6}" y="{sy(ay) - 5:.1f}" text-anchor="end" font-size="11">'
                f"{esc(roof.label)}</text>"
            )
            obstacles.append((x1 - 6 - 6.6 * len(roof.label), sy(ay) - 18, x1 - 6, sy(ay) - 1))
        else:
            out.append(_slope_text(roof, sx, sy))
    out += _points(
        data.points,
        lambda p: sx(p.intensity),
        lambda p: sy(p.flops_per_s),
        "FLOP/s",
        box,
        obstacles,
    )
    out.append("</g>")
    if data.zero_flop:
        out += _strip(data)
    out += _verdict_key(data, box)
    out.append("</svg>")
    return "\n".join(out)


def _grid(sx: _Log, sy: _Log, box, fx, fy) -> list[str]:
    x0, y0, x1, y1 = box
    out = []
    for v in sx.decades():
        px = sx(v)
        out.append(f'<line x1="{px:.1f}" y1="{y0}" x2="{px:.1f}" y2="{y1}" stroke="#e6e6e6"/>')
        out.append(
            f'<text x="{px:.1f}" y="{y1 + 16}" text-anchor="middle" font-size="11">'
            f"{esc(fx(v))}</text>"
        )
    for v in sy.decades():
        py = sy(v)
        out.append(f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" stroke="#e6e6e6"/>')
        out.append(
            f'<text x="{x0 - 6}" y="{py + 4:.1f}" text-anchor="end" font-size="11">'
            f"{esc(fy(v))}</text>"
        )
    return out


def _slope_text(roof, sx: _Log, sy: _Log) -> str:
    (ax, ay), (bx, by) = roof.start, roof.end
    angle = math.degrees(math.atan2(sy(by) - sy(ay), sx(bx) - sx(ax)))
    mx = math.sqrt(ax * bx)  # halfway along the segment on a log axis
    px, py = sx(mx), sy(roof.value * mx)
    return (
        f'<text x="{px:.1f}" y="{py - 6:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate({angle:.2f} {px:.1f} {py:.1f})">{esc(roof.label)}</text>'
    )


def _radius(point: Point, n: int) -> float:
    share = point.time_share if point.time_share == point.time_share else 0.0
    return (2.0 if n > 200 else 4.0) + 22 * math.sqrt(max(share, 0.0))


def _points(
    points: list[Point], fx, fy, unit: str, frame, obstacles: list | None = None
) -> list[str]:
    """Markers (each with a hover <title>) and the labelled ones' ids, placed clear of each
    other."""
    n = len(points)
    opacity = "0.85" if n <= 200 else "0.4"
    out = []
    for p in sorted(points, key=lambda p: -(p.time_share if p.time_share == p.time_share else 0)):
        x, y = fx(p), fy(p)
        value = p.flops_per_s if unit == "FLOP/s" else p.bytes_per_s
        where = (
            f"{common.si(p.intensity)} FLOP/byte, " if p.intensity == p.intensity else "0 FLOP, "
        )
        hover = (
            f"#{p.rank} {p.label} {p.full_name}\n{where}{common.si(value, unit)}, "
            f"{common.pct(p.time_share, 1)} of time, {p.verdict}, "
            f"{common.pct(p.efficiency)} of roof"
        )
        out.append(
            f'<circle class="pt" cx="{x:.1f}" cy="{y:.1f}" r="{_radius(p, n):.1f}" '
            f'fill="{VERDICT_COLOURS.get(p.verdict, "#777")}" fill-opacity="{opacity}" '
            f'stroke="#fff" stroke-width="0.5"><title>{esc(hover)}</title></circle>'
        )
    labelled = sorted((p for p in points if p.labelled), key=lambda p: p.rank)
    taken = list(obstacles or [])
    taken += [_around(fx(p), fy(p), _radius(p, n)) for p in labelled]
    for p in labelled:
        box = _place(fx(p), fy(p), _radius(p, n), len(p.label) * 6.7 + 4, frame, taken)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        lx, ly = min(max(fx(p), x0), x1), min(max(fy(p), y0), y1)  # the box's nearest point
        out.append(
            f'<line x1="{fx(p):.1f}" y1="{fy(p):.1f}" x2="{lx:.1f}" y2="{ly:.1f}" '
            'stroke="#555" stroke-width="0.7"/>'
        )
        out.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
            'fill="#fff" fill-opacity="0.8" rx="2"/>'
        )
        out.append(
            f'<text x="{x0 + 2:.1f}" y="{y1 - 3:.1f}" font-size="11" font-family="monospace">'
            f"{esc(p.label)}</text>"
        )
    return out


def _around(x: float, y: float, r: float) -> tuple[float, float, float, float]:
    return (x - r, y - r, x + r, y + r)


def _place(x: float, y: float, r: float, width: float, frame, taken: list):
    """The nearest label box (eight directions, then farther out) inside `frame` and clear of
    `taken`, which it joins; None when none is free: an overlapping label is worse than none
    (the kernel table below lists every id)."""
    height = 14
    fx0, fy0, fx1, fy1 = frame
    for far in (1.0, 2.0, 3.2, 4.6, 6.4, 8.6, 11.5):
        gap = r * far + 3
        for dx, dy in (
            (1, -1),
            (1, 1),
            (-1, -1),
            (-1, 1),
            (0, -1.4),
            (0, 1.4),
            (1.4, 0),
            (-1.4, 0),
        ):
            left = (
                x + gap * abs(dx)
                if dx > 0
                else (x - gap * abs(dx) - width if dx < 0 else x - width / 2)
            )
            top = (
                y - gap * abs(dy) - height
                if dy < 0
                else (y + gap * dy if dy > 0 else y - height / 2)
            )
            box = (left, top, left + width, top + height)
            inside = fx0 <= box[0] and box[2] <= fx1 and fy0 <= box[1] and box[3] <= fy1
            if inside and not any(_overlap(box, t) for t in taken):
                taken.append(box)
                return box
    return None


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _strip(data: ChartData) -> list[str]:
    x0, y0, x1, y1 = STRIP
    sy = _Log(*data.strip_range, y1, y0)
    out = [
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#f6f6f6" '
        'stroke="#333"/>',
        f'<text x="{(x0 + x1) / 2}" y="{y0 - 8}" text-anchor="middle" font-size="12">0 FLOP</text>',
        f'<text transform="translate({x0 - 68},{(y0 + y1) / 2}) rotate(-90)" text-anchor="middle" '
        f'font-size="12">zero-FLOP kernels: {LEVELS[data.level]} byte/s</text>',
    ]
    for v in sy.decades():
        out.append(
            f'<text x="{x0 - 4}" y="{sy(v) + 4:.1f}" text-anchor="end" font-size="10">'
            f"{esc(common.si(v, 'B/s'))}</text>"
        )
    for _device, label, value in data.bandwidths:
        out.append(
            f'<line x1="{x0}" y1="{sy(value):.1f}" x2="{x1}" y2="{sy(value):.1f}" stroke="#555" '
            f'stroke-width="2"><title>{esc(label)}</title></line>'
        )
        out.append(f'<text x="{x0 + 3}" y="{sy(value) - 4:.1f}" font-size="10">{esc(label)}</text>')
    width = x1 - x0
    out += _points(
        data.zero_flop,
        lambda p: x0 + width * (0.15 + 0.5 * ((p.rank * 0.6180339887) % 1.0)),
        lambda p: sy(p.bytes_per_s),
        "B/s",
        STRIP,
    )
    return out


def _verdict_key(data: ChartData, box) -> list[str]:
    present = [
        v for v in VERDICT_COLOURS if any(p.verdict == v for p in data.points + data.zero_flop)
    ]
    out, x = [], box[0]
    for verdict in present:
        out.append(f'<circle cx="{x + 5}" cy="22" r="5" fill="{VERDICT_COLOURS[verdict]}"/>')
        out.append(f'<text x="{x + 14}" y="26" font-size="12">{esc(verdict)}</text>')
        x += 30 + 7.2 * len(verdict)
    out.append(
        f'<text x="{box[2]}" y="{H - 4}" font-size="11" text-anchor="end" fill="#666">'
        "marker area ∝ share of time; hover a marker for details</text>"
    )
    return out
