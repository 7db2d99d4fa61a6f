"""The roofline chart drawn with matplotlib (PNG, SVG, PDF) from the chart model.

matplotlib is imported inside the functions only, so text reports never pay for it, and only its
object-oriented API is used (Figure + a canvas), never pyplot's global state.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd

from rooflint.core.verdicts import COLOURS as VERDICT_COLOURS
from rooflint.reporters import common
from rooflint.reporters.chart import LEVELS, MARKERS, ChartData, Point, Roof, charts
from rooflint.reporters.chart_legend import draw_legend_table, mpl_text


def render_png(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "png", {"Software": None})


def render_svg(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "svg", {"Date": None})


def render_pdf(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "pdf", {"CreationDate": None, "ModDate": None})


def _save(result, level, top, fmt, metadata) -> bytes:
    import matplotlib

    # A fixed salt and no dates: the same input gives the same SVG/PDF bytes. Text stays text in
    # SVG (searchable, selectable, small); the viewer's fonts draw it.
    with matplotlib.rc_context({"svg.hashsalt": "rooflint", "svg.fonttype": "none"}):
        figure = draw_all(charts(result, level, top))
        buffer = io.BytesIO()
        figure.savefig(buffer, format=fmt, metadata=metadata, dpi=130 if fmt == "png" else None)
    return buffer.getvalue()


def draw(data: ChartData):
    """A matplotlib Figure of one chart (object-oriented API: no pyplot, no global figure)."""
    return draw_all([data])


# Laid out in inches so the axes' labels never run into the neighbouring panel.
_STRIP_W, _GAP, _MAIN_W, _LEGEND_W, _PANEL_H = 1.1, 1.5, 7.2, 3.7, 6.6


def draw_all(charts: list[ChartData]):
    """One Figure with one panel per chart (one per device), stacked top to bottom, each with its
    own title, axes and label table: small multiples that share a width."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width = max(_panel_width(data) for data in charts)
    height = _PANEL_H * len(charts)
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    for row, data in enumerate(charts):
        _draw_panel(figure, data, width, height, top_in=row * _PANEL_H)
    return figure


def _panel_width(data: ChartData) -> float:
    left = 1.0 if data.zero_flop else 1.45
    return (
        left
        + (_STRIP_W + _GAP if data.zero_flop else 0)
        + _MAIN_W
        + (_LEGEND_W + 0.3 if data.legend else 0.3)
    )


def _draw_panel(figure, data: ChartData, width: float, height: float, top_in: float):
    has_strip, has_legend = bool(data.zero_flop), bool(data.legend)
    left = 1.0 if has_strip else 1.45
    bottom_in = height - top_in - _PANEL_H + 0.75  # the panel's axes bottom, from the figure's
    axes_h = _PANEL_H - 0.75 - 1.05

    def box(x: float, w: float):
        return figure.add_axes((x / width, bottom_in / height, w / width, axes_h / height))

    strip = box(left, _STRIP_W) if has_strip else None
    main_x = left + (_STRIP_W + _GAP if has_strip else 0)
    main = box(main_x, _MAIN_W)
    left_off = _draw_main(main, data)
    if strip is not None:
        left_off += _draw_strip(strip, data)
    if has_legend:
        draw_legend_table(box(main_x + _MAIN_W + 0.3, _LEGEND_W), data, {p.rank for p in left_off})
    room = (width - 0.6) * figure.dpi  # the title and caption fit between 0.3 in margins
    title = figure.text(
        0.3 / width,
        1 - (top_in + 0.3) / height,
        mpl_text(data.title),
        fontsize=12,
        ha="left",
        va="center",
    )
    caption = figure.text(
        0.3 / width,
        1 - (top_in + 0.6) / height,
        mpl_text(_caption(data)),
        fontsize=8.5,
        color="#444444",
        ha="left",
        va="center",
    )
    _fit(title, room, 9)
    _fit(caption, room, 7)


def _fit(text, room_px: float, smallest: float) -> None:
    """Shrink `text` down to `smallest` points, then cut it with an ellipsis, until it is at most
    `room_px` wide: a long device list must not run off the figure."""
    renderer = text.figure.canvas.get_renderer()
    while text.get_window_extent(renderer).width > room_px and text.get_fontsize() > smallest:
        text.set_fontsize(text.get_fontsize() - 0.5)
    full = text.get_text()
    keep = len(full)
    while text.get_window_extent(renderer).width > room_px and keep > 1:
        keep = int(keep * room_px / text.get_window_extent(renderer).width) - 1
        text.set_text(full[: max(keep, 1)].rstrip("\\") + "…")


def _caption(data: ChartData) -> str:
    parts = ["marker area ∝ share of total time, colour = verdict"]
    if data.unplaced:
        parts.append(f"{len(data.unplaced)} kernel group(s) not drawn ({_reasons(data.unplaced)})")
    parts += data.notes
    return "; ".join(parts)


def _reasons(unplaced) -> str:
    counts = pd.Series([why for _, _, why in unplaced]).value_counts()
    return ", ".join(f"{n} {why}" for why, n in counts.items())


def _style(n: int) -> dict:
    """Markers for a handful of kernels or for ten thousand: smaller and fainter as n grows."""
    if n <= 200:
        return {"alpha": 0.85, "edgecolors": "white", "linewidths": 0.6, "min": 30, "scale": 900}
    return {"alpha": 0.35, "edgecolors": "none", "linewidths": 0.0, "min": 6, "scale": 900}


def _size(point: Point, style: dict) -> float:
    share = point.time_share if point.time_share == point.time_share else 0.0
    return style["min"] + style["scale"] * share


def _scatter(ax, xs, ys, points: list[Point]):
    """The markers, biggest first so that small ones stay visible on top; one shape per memory
    level (chart.MARKERS), a thin line through each group's points on a hierarchical chart."""
    style = _style(len(points))
    _ties(ax, xs, ys, points)
    sizes = np.asarray([_size(p, style) for p in points])
    colours = np.asarray([VERDICT_COLOURS.get(p.verdict, "#7F7F7F") for p in points])
    levels = np.asarray([p.level for p in points])
    order = np.argsort(-sizes, kind="stable")
    for level in dict.fromkeys(levels[order]):
        mine = order[levels[order] == level]
        ax.scatter(
            np.asarray(xs)[mine],
            np.asarray(ys)[mine],
            s=sizes[mine],
            c=colours[mine],
            marker=MARKERS[level],
            alpha=style["alpha"],
            edgecolors=style["edgecolors"],
            linewidths=style["linewidths"],
            rasterized=True,
            zorder=3,
        )


def _ties(ax, xs, ys, points: list[Point]) -> None:
    spans: dict[int, list] = {}
    for x, y, p in zip(xs, ys, points, strict=True):
        spans.setdefault(p.rank, []).append((x, y, p.verdict))
    for span in spans.values():
        if len(span) > 1:
            lo, hi = min(s[0] for s in span), max(s[0] for s in span)
            colour = VERDICT_COLOURS.get(span[0][2], "#7F7F7F")
            ax.plot([lo, hi], [span[0][1]] * 2, color=colour, lw=0.8, alpha=0.6, zorder=2.5)


_HALO = {"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7}
# Where a label may go, nearest first: eight directions at growing distances (in marker reaches).
_DIRECTIONS = [(1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1.3), (0, -1.3), (1.4, 0), (-1.4, 0)]
_DISTANCES = (1.0, 2.2, 3.4, 5.0, 7.0, 9.5, 12.5)


def _annotate(
    ax, x, y, labelled: list[Point], points: list[Point], obstacles: list = (), sides=(1, -1)
) -> list[Point]:
    """Short ids beside the labelled markers, each with a leader line: the nearest spot that
    stays inside the axes and clear of the labelled markers, earlier labels, roof labels and the
    legend. A label with no free spot is left off (returned; the table beside still lists it):
    an overlapping label is worse than none."""
    from matplotlib.transforms import Bbox

    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    points_px = ax.figure.dpi / 72
    n = len(points)
    style = _style(n)
    crowd = ax.transData.transform(
        np.column_stack([[x(p) for p in points], [y(p) for p in points]])
    )
    reaches = [math.sqrt(_size(p, style)) / 2 * 0.75 + 4 for p in labelled]  # marker radius + gap
    if labelled:  # a dark ring marks the point each leader line ends at, even inside a cloud
        ax.scatter(
            [x(p) for p in labelled],
            [y(p) for p in labelled],
            s=[_size(p, style) for p in labelled],
            facecolors="none",
            edgecolors="#222222",
            linewidths=0.9,
            rasterized=True,
            zorder=4,
            gid="labelled",
        )
    taken = [o.get_window_extent(renderer) for o in obstacles]
    for point, reach in zip(labelled, reaches, strict=True):
        cx, cy = ax.transData.transform((x(point), y(point)))
        r = (reach - 4) * points_px
        taken.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))
    left_off = []
    for point, reach in zip(labelled, reaches, strict=True):
        xy = (x(point), y(point))
        box = _free_spot(ax, point, xy, max(reach, 9), sides, frame, taken, renderer, crowd)
        box = box or _free_spot(ax, point, xy, max(reach, 9), sides, frame, taken, renderer)
        if box is None:
            left_off.append(point)
        else:
            taken.append(box)
    return left_off


def _free_spot(ax, point, xy, reach, sides, frame, taken, renderer, crowd=None):
    """The label's box at the nearest free spot (clear of every marker centre in `crowd` too,
    when given, so that labels sit in white space rather than on the point cloud), else None."""
    for far in _DISTANCES:
        for dx, dy in _DIRECTIONS:
            if not (dx == 0 or math.copysign(1, dx) in sides):
                continue
            note = _note(ax, point.label, xy, (dx * reach * far, dy * reach * far))
            box = _text_box(note, renderer)
            inside = (
                frame.x0 <= box.x0
                and box.x1 <= frame.x1
                and frame.y0 <= box.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(t) for t in taken) and not _covers(box, crowd):
                return box
            note.remove()
    return None


def _covers(box, crowd) -> bool:
    if crowd is None or not len(crowd):
        return False
    x, y = crowd[:, 0], crowd[:, 1]
    return bool(((x > box.x0 - 3) & (x < box.x1 + 3) & (y > box.y0 - 3) & (y < box.y1 + 3)).any())


def _text_box(note, renderer):
    """The label's own box in pixels, without its leader line."""
    from matplotlib.text import Text

    note.update_positions(renderer)
    return Text.get_window_extent(note, renderer)


def _note(ax, text: str, xy, offset):
    dx, dy = offset
    return ax.annotate(
        mpl_text(text),
        xy,
        xytext=offset,
        textcoords="offset points",
        ha="left" if dx > 0 else ("right" if dx < 0 else "center"),
        va="bottom" if dy > 0 else ("top" if dy < 0 else "center"),
        fontsize=8,
        family="monospace",
        zorder=5,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        arrowprops={"arrowstyle": "-", "color": "#555555", "lw": 0.6, "shrinkA": 0, "shrinkB": 0},
    )


def _draw_main(ax, data: ChartData) -> list[Point]:
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*data.x_range)
    ax.set_ylim(*data.y_range)
    ax.grid(True, which="major", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(data.axis_label)
    ax.set_ylabel("achieved FLOP/s")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v, "FLOP/s")))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v)))
    roof_texts = []
    devices = sorted({r.device_id for r in data.roofs})
    dashes = {d: ("-" if i == 0 else "--") for i, d in enumerate(devices)}
    for roof in data.roofs:
        (x0, y0), (x1, y1) = roof.start, roof.end
        ax.plot(
            [x0, x1],
            [y0, y1],
            color="#222222" if roof.kind == "compute" else "#555555",
            lw=1.6,
            ls=dashes[roof.device_id],
            zorder=2,
        )
        if roof.kind == "compute":
            roof_texts.append(
                ax.text(
                    x1 / 1.15,
                    y1 * 1.08,
                    mpl_text(roof.label),
                    ha="right",
                    va="bottom",
                    fontsize=8,
                    zorder=4,
                    bbox=_HALO,
                )
            )
            if roof.ridge is not None:
                ax.plot([roof.ridge], [y0], marker="o", ms=3.5, color="#222222", zorder=4)
        else:
            roof_texts += _slope_label(ax, roof)
    present = [
        v for v in VERDICT_COLOURS if any(p.verdict == v for p in data.points + data.zero_flop)
    ]
    handles = [
        Line2D([], [], ls="", marker="o", ms=7, color=VERDICT_COLOURS[v], label=v) for v in present
    ]
    if data.hierarchical:
        handles += [
            Line2D([], [], ls="", marker=MARKERS[lvl], ms=7, color="#777777", label=LEVELS[lvl])
            for lvl in data.levels
        ]
    if handles:  # drawn before the labels, so that they keep off it
        roof_texts.append(
            ax.legend(
                handles=handles,
                loc="lower right",
                fontsize=8,
                framealpha=0.9,
                title="verdict, level" if data.hierarchical else "verdict",
                title_fontsize=8,
            )
        )
    if not data.points:
        ax.text(
            0.97,
            0.3,
            "no kernel with FLOPs to place",
            transform=ax.transAxes,
            ha="right",
            color="#777777",
        )
        return []
    _scatter(
        ax, [p.intensity for p in data.points], [p.flops_per_s for p in data.points], data.points
    )
    return _annotate(
        ax,
        lambda p: p.intensity,
        lambda p: p.flops_per_s,
        [p for p in data.points if p.labelled],
        data.points,
        roof_texts,
    )


def _tick(value: float, unit: str = "") -> str:
    """Decade ticks: SI prefixes where there is one (1 TFLOP/s), plain numbers for intensity
    (0.01 … 1000), powers of ten beyond."""
    if value <= 0:
        return ""
    exponent = round(math.log10(value))
    if unit and -9 <= exponent < 18:
        return common.si(value, unit)
    if not unit and -3 <= exponent <= 4:
        return f"{value:g}"
    return f"$10^{{{exponent}}}$" + (f" {unit}" if unit else "")


def _slope_label(ax, roof: Roof):
    """The bandwidth written along the sloped roof, at the angle it has on screen."""
    lo, hi = ax.get_xlim()
    ylo, yhi = ax.get_ylim()
    x = max(lo * 3, roof.start[0])
    y = roof.value * x
    if y < ylo * 2:  # the slope enters the axes above the bottom: label it there
        x = ylo * 4 / roof.value
        y = roof.value * x
    if not (lo < x < hi and ylo < y < yhi):
        return []
    p0 = ax.transData.transform((x, y))
    p1 = ax.transData.transform((x * 10, y * 10))
    angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
    return [
        ax.text(
            x,
            y * 1.25,
            mpl_text(roof.label),
            rotation=angle,
            rotation_mode="anchor",
            fontsize=8,
            ha="left",
            va="bottom",
            zorder=4,
            bbox=_HALO,
        )
    ]


def _draw_strip(ax, data: ChartData) -> list[Point]:
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_ylim(*data.strip_range)
    ax.xaxis.set_major_locator(NullLocator())
    ax.set_title("0 FLOP", fontsize=9)
    ax.set_ylabel(f"zero-FLOP kernels: achieved {data.level_names} byte/s", fontsize=8.5)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v, "B/s")))
    ax.tick_params(axis="y", labelsize=7.5)
    ax.grid(True, axis="y", which="major", color="#dddddd", lw=0.6)
    ax.set_facecolor("#f6f6f6")
    texts = []
    for _device, label, value in data.bandwidths:
        ax.axhline(value, color="#555555", lw=1.4)
        texts.append(ax.text(0.03, value * 1.1, mpl_text(label), fontsize=7, va="bottom"))
    xs = [_strip_x(p.rank) for p in data.zero_flop]
    _scatter(ax, xs, [p.bytes_per_s for p in data.zero_flop], data.zero_flop)
    return _annotate(
        ax,
        lambda p: _strip_x(p.rank),
        lambda p: p.bytes_per_s,
        [p for p in data.zero_flop if p.labelled],
        data.zero_flop,
        texts,
    )


def _strip_x(rank: int) -> float:
    """A fixed horizontal spread inside the strip (golden-ratio sequence), the same on every run."""
    return 0.2 + 0.6 * ((rank * 0.6180339887) % 1.0)
