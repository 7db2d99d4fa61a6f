"""The roofline as inline SVG for the HTML report, drawn by hand: roofs, points, labels, strip."""

from __future__ import annotations

import math

from rooflint.core.verdicts import COLOURS as VERDICT_COLOURS
from rooflint.reporters import common
from rooflint.reporters.chart import LEVELS, ChartData, Point
from rooflint.reporters.common import esc

W, H = 960, 536
STRIP = (84, 40, 184, 460)  # x0, y0, x1, y1 of the zero-FLOP strip, when there is one
# Text over the points: a white outline keeps it readable, and the pointer reaches the points.
HALO = (
    'stroke="#fff" stroke-width="3" stroke-opacity="0.85" paint-order="stroke" '
    'pointer-events="none"'
)


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


def svg(data: ChartData, links: dict[str, str] | None = None) -> str:
    """The roofline as inline SVG: roofs, points with a <title> each (hover), labels, strip.
    `links` maps a point's id to the id of its row in the page: the point links there."""
    links = links or {}
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
    out += _grid(sx, sy, box, _decade, lambda v: common.si(v, "FLOP/s"))
    out.append(
        f'<text x="{(x0 + x1) / 2}" y="{y1 + 40}" text-anchor="middle" font-size="13">'
        f"{esc(data.axis_label)}</text>"
    )
    out.append(
        f'<text transform="translate({x0 - 86},{(y0 + y1) / 2}) rotate(-90)" text-anchor="middle" '
        'font-size="13">achieved FLOP/s</text>'
    )
    out.append('<g clip-path="url(#plot)">')
    obstacles, texts = [], []  # roof labels go on top of the points, with a white halo
    for roof in data.roofs:
        (ax, ay), (bx, by) = roof.start, roof.end
        colour = "#222" if roof.kind == "compute" else "#555"
        out.append(
            f'<line x1="{sx(ax):.1f}" y1="{sy(ay):.1f}" x2="{sx(bx):.1f}" y2="{sy(by):.1f}" '
            f'stroke="{colour}" stroke-width="2"><title>{esc(roof.label)}</title></line>'
        )
        if roof.kind == "compute":
            texts.append(
                f'<text x="{x1 - 6}" y="{sy(ay) - 5:.1f}" text-anchor="end" font-size="11" '
                f"{HALO}>{esc(roof.label)}</text>"
            )
            obstacles.append((x1 - 6 - 6.6 * len(roof.label), sy(ay) - 18, x1 - 6, sy(ay) - 1))
        else:
            texts.append(_slope_text(roof, sx, sy))
    out += _points(
        data.points,
        lambda p: sx(p.intensity),
        lambda p: sy(p.flops_per_s),
        "FLOP/s",
        box,
        links,
        obstacles,
    )
    out += texts
    out.append("</g>")
    if data.zero_flop:
        out += _strip(data, links)
    out += _verdict_key(data, box)
    out.append("</svg>")
    return "\n".join(out)


def _decade(value: float) -> str:
    """An intensity tick: 0.001 … 100000 as plain numbers, beyond as 1e6, 1e-4."""
    exponent = round(math.log10(value))
    return f"{value:g}" if -3 <= exponent <= 5 else f"1e{exponent}"


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
        f'<text x="{px:.1f}" y="{py - 6:.1f}" font-size="11" text-anchor="middle" {HALO} '
        f'transform="rotate({angle:.2f} {px:.1f} {py:.1f})">{esc(roof.label)}</text>'
    )


def _radius(point: Point, n: int) -> float:
    share = point.time_share if point.time_share == point.time_share else 0.0
    return (2.0 if n > 200 else 4.0) + 22 * math.sqrt(max(share, 0.0))


def hover(p: Point, unit: str) -> str:
    """A point's details, one line each (escaped apart: esc shows a line break in a name
    escaped): which kernel, its time, where it sits, its verdict and efficiency."""
    where = (
        f"{common.ratio(p.intensity)} FLOP/byte ({LEVELS[p.level]})"
        if p.intensity == p.intensity
        else "0 FLOP"
    )
    value = p.flops_per_s if unit == "FLOP/s" else p.bytes_per_s
    return "\n".join(
        esc(line)
        for line in (
            f"#{p.rank} {p.label} {p.full_name}",
            f"time {common.si(p.duration_s, 's')} ({common.pct(p.time_share, 1)} of the total)",
            f"{where}, {common.si(value, unit)}",
            f"{p.verdict}, {common.pct(p.efficiency)} of its roof",
        )
    )


def _points(
    points: list[Point],
    fx,
    fy,
    unit: str,
    frame,
    links: dict[str, str],
    obstacles: list | None = None,
) -> list[str]:
    """Markers (each with a hover <title>, linked to its table row when it has one) and the
    labelled ones' ids, placed clear of each other."""
    n = len(points)
    opacity = "0.85" if n <= 200 else "0.4"
    out = _ties(points, fx, fy)
    for p in sorted(points, key=lambda p: -(p.time_share if p.time_share == p.time_share else 0)):
        marker = _marker(
            p.level,
            fx(p),
            fy(p),
            _radius(p, n),
            f'class="pt" fill="{VERDICT_COLOURS.get(p.verdict, "#777")}" '
            f'fill-opacity="{opacity}" stroke="#fff" stroke-width="0.5"',
            f"<title>{hover(p, unit)}</title>",
        )
        target = links.get(p.label)
        out.append(f'<a href="#{esc(target)}">{marker}</a>' if target else marker)
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
            'fill="#fff" fill-opacity="0.8" rx="2" pointer-events="none"/>'
        )
        out.append(
            f'<text x="{x0 + 2:.1f}" y="{y1 - 3:.1f}" font-size="11" font-family="monospace" '
            'pointer-events="none">'
            f"{esc(p.label)}</text>"
        )
    return out


def _marker(level: str, x: float, y: float, r: float, paint: str, title: str) -> str:
    """A point's marker: a circle at DRAM, a square at L2, a triangle at L1 (chart.MARKERS)."""
    if level == "l2":
        side = r * 1.6
        return (
            f'<rect x="{x - side / 2:.1f}" y="{y - side / 2:.1f}" width="{side:.1f}" '
            f'height="{side:.1f}" {paint}>{title}</rect>'
        )
    if level == "l1":
        h = r * 1.9
        corners = f"{x:.1f},{y - h * 0.6:.1f} {x - h * 0.58:.1f},{y + h * 0.4:.1f} "
        corners += f"{x + h * 0.58:.1f},{y + h * 0.4:.1f}"
        return f'<polygon points="{corners}" {paint}>{title}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {paint}>{title}</circle>'


def _ties(points: list[Point], fx, fy) -> list[str]:
    """On a hierarchical chart, a thin line through each group's points (one FLOP/s, an
    intensity per level), in its verdict's colour."""
    by_group: dict[int, list[Point]] = {}
    for p in points:
        by_group.setdefault(p.rank, []).append(p)
    out = []
    for group in by_group.values():
        if len(group) > 1:
            xs = [fx(p) for p in group]
            out.append(
                f'<line x1="{min(xs):.1f}" y1="{fy(group[0]):.1f}" x2="{max(xs):.1f}" '
                f'y2="{fy(group[0]):.1f}" stroke="{VERDICT_COLOURS.get(group[0].verdict, "#777")}" '
                'stroke-width="1" stroke-opacity="0.6"/>'
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


def _strip(data: ChartData, links: dict[str, str]) -> list[str]:
    x0, y0, x1, y1 = STRIP
    sy = _Log(*data.strip_range, y1, y0)
    out = [
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#f6f6f6" '
        'stroke="#333"/>',
        f'<text x="{(x0 + x1) / 2}" y="{y0 - 8}" text-anchor="middle" font-size="12">0 FLOP</text>',
        f'<text transform="translate({x0 - 68},{(y0 + y1) / 2}) rotate(-90)" text-anchor="middle" '
        f'font-size="12">zero-FLOP kernels: {data.level_names} byte/s</text>',
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
        links,
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
    if data.hierarchical:
        for level in data.levels:
            out.append(_marker(level, x + 5, 21, 5, 'fill="#777"', ""))
            out.append(f'<text x="{x + 14}" y="26" font-size="12">{esc(LEVELS[level])}</text>')
            x += 30 + 7.2 * len(LEVELS[level])
    out.append(
        f'<text x="{box[2]}" y="{H - 4}" font-size="11" text-anchor="end" fill="#666">'
        "marker area ∝ share of time; hover a marker for details</text>"
    )
    return out
