"""The roofline chart: `chart_data` says what to draw; PNG/SVG/PDF draw it with matplotlib.

matplotlib is imported inside the render functions only, so text reports never pay for it, and
only its object-oriented API is used (Figure + a canvas), never pyplot's global state.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core import analysis, explain, names, ranking, schema
from rooflint.reporters import common

DEFAULT_TOP = 8
LEVELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
VERDICT_COLOURS = {
    analysis.COMPUTE_BOUND: "#0072B2",
    analysis.MEMORY_BOUND: "#E69F00",
    analysis.LATENCY_BOUND: "#CC79A7",
    analysis.ABOVE_ROOF: "#000000",  # a data error: the one colour nothing else uses
    analysis.NOT_ANALYSABLE: "#7F7F7F",
}
# Integer ops are not FLOPs, so the FLOP/s axis has no roof for them.
FLOP_CLASSES = [c for c in schema.COMPUTE_CLASSES if c != "matrix_int8"]


@dataclass(frozen=True)
class Point:
    """One kernel group as drawn: x = FLOP/byte at the level, y = FLOP/s (or byte/s in the strip)."""

    rank: int
    label: str  # short id, made unique among the points ("dead50", "dead50#3")
    name: str  # short name
    full_name: str
    intensity: float  # NaN for zero-FLOP kernels
    flops_per_s: float
    bytes_per_s: float  # at the chart's level
    time_share: float
    verdict: str
    efficiency: float
    device_id: str | None
    labelled: bool


@dataclass(frozen=True)
class Roof:
    """One roof segment from `start` to `end` (x in FLOP/byte, y in FLOP/s)."""

    device_id: str
    kind: str  # "memory" or "compute"
    name: str  # the level ("dram") or compute class ("matrix_fp16"; "vector_fp32+vector_fp16" when equal)
    label: str
    value: float  # byte/s or FLOP/s
    ridge: float | None  # FLOP/byte where a flat roof meets the slope
    start: tuple[float, float]
    end: tuple[float, float]


@dataclass
class ChartData:
    level: str
    title: str
    points: list[Point]  # placed on the log-log axes
    zero_flop: list[Point]  # kernels with no FLOPs: drawn in the strip at the left (byte/s)
    unplaced: list[tuple[str, str, str]]  # (label, short name, why) for groups with no position
    roofs: list[Roof]
    bandwidths: list[tuple[str, str, float]]  # (device id, label, byte/s): the strip's reference lines
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    strip_range: tuple[float, float]
    notes: list[str] = field(default_factory=list)

    @property
    def legend(self) -> list[Point]:
        """The labelled points in rank order: the id → name table beside the chart."""
        return sorted((p for p in self.points + self.zero_flop if p.labelled), key=lambda p: p.rank)


def chart_data(result, level: str = "dram", top: int | None = None) -> ChartData:
    """Everything the chart shows, from the Result's numbers: no drawing, no matplotlib."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    top = DEFAULT_TOP if top is None else top
    groups = _groups(result, level)
    labels = _labels(result)
    points, zero, unplaced = [], [], []
    for row in groups.itertuples(index=False):
        label = labels[row.rank]
        why = _why_unplaced(row, level)
        if why:
            unplaced.append((label, _short(result, row), why))
            continue
        point = Point(int(row.rank), label, _short(result, row), _full(result, row),
                      float(row.x) if row.flops > 0 else math.nan, float(row.y), float(row.bytes_per_s),
                      _float(row.time_share), str(row.verdict), _float(row.efficiency),
                      row.device_id if isinstance(row.device_id, str) else None, False)
        (points if row.flops > 0 else zero).append(point)
    ranked = sorted(points + zero, key=lambda p: p.rank)[:top]
    keep = {p.rank for p in ranked}
    points = [_labelled(p, keep) for p in points]
    zero = [_labelled(p, keep) for p in zero]
    x_range, y_range = _ranges(result, points, level)
    roofs, notes = _roofs(result, level, x_range)
    strip = _strip_range(zero, result, level)
    return ChartData(level, _title(result, level), points, zero, unplaced, roofs,
                     _bandwidths(result, level), x_range, y_range, strip, notes)


def _float(value) -> float:
    return float(value) if value is not None and value is not pd.NA and not pd.isna(value) else math.nan


def _labelled(point: Point, keep: set[int]) -> Point:
    return Point(**{**point.__dict__, "labelled": point.rank in keep})


def _groups(result, level: str) -> pd.DataFrame:
    """result.kernels with x, y and bytes/s at `level` (DRAM straight from the ranking)."""
    k = result.kernels
    frame = pd.DataFrame({"rank": k["rank"].to_numpy(), "group": k["group"], "kernel": k["kernel"],
                          "flops": k["flops"].astype("float64"), "duration_s": k["duration_s"].astype("float64"),
                          "time_share": k["time_share"], "verdict": k["verdict"], "efficiency": k["efficiency"],
                          "device_id": k["device_id"]})
    if level == "dram":
        frame["x"] = k["intensity_dram"].astype("float64")
        frame["y"] = k["achieved_flops_per_s"].astype("float64")
        frame["bytes_per_s"] = k["achieved_bytes_per_s"].astype("float64")
        frame["bytes"] = k["bytes_dram"].astype("float64")
        return frame
    moved = _level_bytes(result, level)
    duration = frame["duration_s"].where(frame["duration_s"] > 0)
    frame["bytes"] = moved.to_numpy()
    frame["x"] = frame["flops"] / frame["bytes"].where(frame["bytes"] > 0)
    frame["y"] = frame["flops"] / duration
    frame["bytes_per_s"] = frame["bytes"] / duration
    return frame


def _level_bytes(result, level: str) -> pd.Series:
    """Bytes at `level` summed over each group's launches, grouped exactly as ranking groups them."""
    keys = ranking.GROUPINGS[result.group_by]
    launches = result.launches
    frame = pd.DataFrame({k: launches[k].astype("string").fillna("(none)") for k in keys})
    frame["bytes"] = launches[f"bytes_{level}"].astype("float64")
    sums = frame.groupby(keys, sort=False, dropna=False)["bytes"].sum(min_count=1)
    kernels = result.kernels
    if len(keys) > 1:
        index = pd.MultiIndex.from_frame(kernels[keys].astype("string").fillna("(none)"))
    else:
        index = pd.Index(kernels["group"].astype("string"), name=keys[0])
    return sums.reindex(index).reset_index(drop=True)


def _why_unplaced(row, level: str) -> str:
    if pd.isna(row.flops):
        return "no FLOP counters"
    if pd.isna(row.duration_s) or row.duration_s <= 0:
        return "no duration"
    if pd.isna(row.bytes) or row.bytes <= 0:
        return f"no {LEVELS[level]} bytes"
    return ""


def _labels(result) -> dict[int, str]:
    """The ranking's short id per rank (unique: one name in several configurations gets .1, .2)."""
    return dict(zip(result.kernels["rank"].astype(int), result.kernels["id"], strict=True))


def _key(result, row) -> str:
    value = row.kernel if result.group_by in ("kernel", "name") else row.group
    return value if isinstance(value, str) else str(row.group)


def _short(result, row) -> str:
    if result.group_by in ("kernel", "name") and isinstance(row.kernel, str):
        return names.short_name(row.kernel)
    return str(row.group)


def _full(result, row) -> str:
    return _key(result, row)


def _used_classes(result, device_id: str) -> list[str]:
    """Compute classes with any operations in this device's launches, canonical order."""
    launches = result.launches[result.launches["device_id"] == device_id]
    return [c for c in FLOP_CLASSES if launches[f"ops_{c}"].fillna(0).gt(0).any()]


def _roof_classes(result, device) -> list[str]:
    """The classes to draw a flat roof for: those the kernels use, else FP32 vector for reference
    (a chart of copies alone would otherwise show a slope that never ends)."""
    used = [c for c in _used_classes(result, device.id) if c in device.compute]
    if used:
        return used
    return [c for c in ("vector_fp32",) if c in device.compute]


def _devices(result):
    return [use.device for use in result.devices if use.device is not None]


def _ranges(result, points: list[Point], level: str):
    xs = [p.intensity for p in points]
    ys = [p.flops_per_s for p in points]
    for device in _devices(result):
        bandwidth = device.memory.get(level)
        for cls in _roof_classes(result, device):
            ys.append(device.compute[cls].value)
            if bandwidth is not None:
                xs.append(device.compute[cls].value / bandwidth.value)
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    ys = [y for y in ys if y > 0 and math.isfinite(y)]
    x_range = _decades(min(xs) / 3, max(xs) * 3) if xs else (1e-2, 1e3)
    y_range = _decades(min(ys) / 3, max(ys) * 3) if ys else (1e9, 1e15)
    return x_range, y_range


def _decades(lo: float, hi: float) -> tuple[float, float]:
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if hi_e - lo_e < 2:
        lo_e, hi_e = lo_e - 1, hi_e + 1
    return 10.0 ** lo_e, 10.0 ** hi_e


def _roofs(result, level: str, x_range) -> tuple[list[Roof], list[str]]:
    roofs, notes = [], []
    devices = _devices(result)
    lo, hi = x_range
    for device in devices:
        prefix = f"{device.id}: " if len(devices) > 1 else ""
        bandwidth = device.memory.get(level)
        classes = _roof_classes(result, device)
        reference = not any(c in device.compute for c in _used_classes(result, device.id))
        ridges = {c: device.compute[c].value / bandwidth.value if bandwidth else None for c in classes}
        for same in _same_peak(device, classes):
            peak, ridge = device.compute[same[0]].value, ridges[same[0]]
            roofs_label = " / ".join(explain.roof_label(c, device.vendor) for c in same)
            label = f"{prefix}{roofs_label} {common.si(peak, 'FLOP/s')}"
            if ridge is not None:
                label += f", ridge {ridge:.3g} FLOP/B"
            if reference:
                label += " (for reference: no kernel here has FLOPs)"
            roofs.append(Roof(device.id, "compute", "+".join(same), label, peak, ridge,
                              (ridge if ridge is not None else lo, peak), (hi, peak)))
        if bandwidth is None:
            notes.append(f"{device.id} has no {LEVELS[level]} bandwidth: no memory roof at this level")
            continue
        end = max((r for r in ridges.values() if r is not None), default=hi)
        roofs.append(Roof(device.id, "memory", level,
                          f"{prefix}{LEVELS[level]} {common.si(bandwidth.value, 'B/s')}", bandwidth.value, None,
                          (lo, bandwidth.value * lo), (end, bandwidth.value * end)))
    return roofs, notes


def _same_peak(device, classes: list[str]) -> list[list[str]]:
    """Classes grouped by equal peak (FP32 and FP16 vector often coincide): one roof each group."""
    groups: dict[float, list[str]] = {}
    for cls in classes:
        groups.setdefault(round(device.compute[cls].value, -6), []).append(cls)
    return list(groups.values())


def _bandwidths(result, level: str) -> list[tuple[str, str, float]]:
    out = []
    for device in _devices(result):
        if level in device.memory:
            value = device.memory[level].value
            out.append((device.id, f"{LEVELS[level]} {common.si(value, 'B/s')}", value))
    return out


def _strip_range(zero: list[Point], result, level: str) -> tuple[float, float]:
    values = [p.bytes_per_s for p in zero if p.bytes_per_s > 0] + [b[2] for b in _bandwidths(result, level)]
    return _decades(min(values) / 2, max(values) * 2) if values else (1e9, 1e13)


def _title(result, level: str) -> str:
    return f"Roofline, {LEVELS[level]}: {common.device_line(result)}"


# --- drawing -------------------------------------------------------------------------------


def render_png(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "png", {"Software": None})


def render_svg(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "svg", {"Date": None})


def render_pdf(result, level: str = "dram", top: int | None = None, **_options) -> bytes:
    return _save(result, level, top, "pdf", {"CreationDate": None, "ModDate": None})


def _save(result, level, top, fmt, metadata) -> bytes:
    import matplotlib

    # A fixed salt and no dates: the same input gives the same SVG/PDF bytes.
    with matplotlib.rc_context({"svg.hashsalt": "rooflint", "svg.fonttype": "path"}):
        figure = draw(chart_data(result, level, top))
        buffer = io.BytesIO()
        figure.savefig(buffer, format=fmt, metadata=metadata, dpi=130 if fmt == "png" else None)
    return buffer.getvalue()


def draw(data: ChartData):
    """A matplotlib Figure of the chart (object-oriented API: no pyplot, no global figure)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    has_strip, has_legend = bool(data.zero_flop), bool(data.legend)
    # Laid out in inches so the axes' labels never run into the neighbouring panel.
    strip_w, gap, main_w, legend_w = 1.1, 1.5, 7.2, 3.7
    left = 1.0 if has_strip else 1.45
    width = left + (strip_w + gap if has_strip else 0) + main_w + (legend_w + 0.3 if has_legend else 0.3)
    height, bottom, top = 6.6, 0.75, 1.05
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)

    def box(x: float, w: float):
        return figure.add_axes((x / width, bottom / height, w / width, (height - bottom - top) / height))

    strip = box(left, strip_w) if has_strip else None
    main_x = left + (strip_w + gap if has_strip else 0)
    main = box(main_x, main_w)
    _draw_main(main, data)
    if strip is not None:
        _draw_strip(strip, data)
    if has_legend:
        _draw_legend_table(box(main_x + main_w + 0.3, legend_w), data)
    figure.text(0.3 / width, 1 - 0.3 / height, _mpl(data.title), fontsize=12, ha="left", va="center")
    figure.text(0.3 / width, 1 - 0.6 / height, _mpl(_caption(data)), fontsize=8.5, color="#444444",
                ha="left", va="center")
    return figure


def _caption(data: ChartData) -> str:
    parts = ["marker area ∝ share of total time, colour = verdict"]
    if data.unplaced:
        parts.append(f"{len(data.unplaced)} kernel group(s) not drawn ({_reasons(data.unplaced)})")
    parts += data.notes
    return "; ".join(parts)


def _reasons(unplaced) -> str:
    counts = pd.Series([why for _, _, why in unplaced]).value_counts()
    return ", ".join(f"{n} {why}" for why, n in counts.items())


def _mpl(text: str) -> str:
    """Input text shown literally: `$` would start mathtext."""
    return str(text).replace("$", r"\$")


def _style(n: int) -> dict:
    """Markers for a handful of kernels or for ten thousand: smaller and fainter as n grows."""
    if n <= 200:
        return {"alpha": 0.85, "edgecolors": "white", "linewidths": 0.6, "min": 30, "scale": 900}
    return {"alpha": 0.35, "edgecolors": "none", "linewidths": 0.0, "min": 6, "scale": 900}


def _size(point: Point, style: dict) -> float:
    share = point.time_share if point.time_share == point.time_share else 0.0
    return style["min"] + style["scale"] * share


def _scatter(ax, xs, ys, points: list[Point]):
    style = _style(len(points))
    sizes = np.asarray([_size(p, style) for p in points])
    colours = np.asarray([VERDICT_COLOURS.get(p.verdict, "#7F7F7F") for p in points])
    order = np.argsort(-sizes, kind="stable")  # big markers first, so small ones stay visible on top
    ax.scatter(np.asarray(xs)[order], np.asarray(ys)[order], s=sizes[order], c=colours[order],
               alpha=style["alpha"], edgecolors=style["edgecolors"], linewidths=style["linewidths"],
               rasterized=True, zorder=3)


_HALO = {"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7}
_DIRECTIONS = [(1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1.3), (0, -1.3)]


def _annotate(ax, x, y, labelled: list[Point], n: int, obstacles: list = (), sides=(1, -1)):
    """Short ids beside the labelled markers: the first spot (corners, then farther out) that
    stays inside the axes and clear of the labelled markers, earlier labels and roof labels."""
    from matplotlib.transforms import Bbox

    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    points_px = ax.figure.dpi / 72
    style = _style(n)
    reaches = [math.sqrt(_size(p, style)) / 2 * 0.75 + 4 for p in labelled]  # marker radius + gap
    taken = [o.get_window_extent(renderer) for o in obstacles]
    for point, reach in zip(labelled, reaches, strict=True):
        cx, cy = ax.transData.transform((x(point), y(point)))
        r = (reach - 4) * points_px
        taken.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))
    for point, reach in zip(labelled, reaches, strict=True):
        tries = [(dx * reach * far, dy * reach * far) for far in (1.0, 2.2, 3.4)
                 for dx, dy in _DIRECTIONS if dx in sides or dx == 0]
        chosen = None
        for offset in tries:
            note = _note(ax, point.label, (x(point), y(point)), offset)
            box = _text_box(note, renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(t) for t in taken):
                chosen = box
                break
            note.remove()
        if chosen is None:  # crowded: accept the first spot rather than drop the label
            chosen = _text_box(_note(ax, point.label, (x(point), y(point)), tries[0]), renderer)
        taken.append(chosen)


def _text_box(note, renderer):
    """The label's own box in pixels, without its leader line."""
    from matplotlib.text import Text

    note.update_positions(renderer)
    return Text.get_window_extent(note, renderer)


def _note(ax, text: str, xy, offset):
    dx, dy = offset
    return ax.annotate(_mpl(text), xy, xytext=offset, textcoords="offset points",
                       ha="left" if dx > 0 else ("right" if dx < 0 else "center"),
                       va="bottom" if dy > 0 else "top", fontsize=8, family="monospace", zorder=5,
                       bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
                       arrowprops={"arrowstyle": "-", "color": "#555555", "lw": 0.6, "shrinkA": 0,
                                   "shrinkB": 0})


def _draw_main(ax, data: ChartData):
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*data.x_range)
    ax.set_ylim(*data.y_range)
    ax.grid(True, which="major", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"arithmetic intensity (FLOP per {LEVELS[data.level]} byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v, "FLOP/s")))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v)))
    roof_texts = []
    devices = sorted({r.device_id for r in data.roofs})
    dashes = {d: ("-" if i == 0 else "--") for i, d in enumerate(devices)}
    for roof in data.roofs:
        (x0, y0), (x1, y1) = roof.start, roof.end
        ax.plot([x0, x1], [y0, y1], color="#222222" if roof.kind == "compute" else "#555555",
                lw=1.6, ls=dashes[roof.device_id], zorder=2)
        if roof.kind == "compute":
            roof_texts.append(ax.text(x1 / 1.15, y1 * 1.08, _mpl(roof.label), ha="right", va="bottom",
                                      fontsize=8, zorder=4, bbox=_HALO))
            if roof.ridge is not None:
                ax.plot([roof.ridge], [y0], marker="o", ms=3.5, color="#222222", zorder=4)
        else:
            roof_texts += _slope_label(ax, roof)
    if data.points:
        _scatter(ax, [p.intensity for p in data.points], [p.flops_per_s for p in data.points], data.points)
        _annotate(ax, lambda p: p.intensity, lambda p: p.flops_per_s, [p for p in data.points if p.labelled],
                  len(data.points), roof_texts)
    else:
        ax.text(0.97, 0.3, "no kernel with FLOPs to place", transform=ax.transAxes, ha="right", color="#777777")
    present = [v for v in VERDICT_COLOURS if any(p.verdict == v for p in data.points + data.zero_flop)]
    handles = [Line2D([], [], ls="", marker="o", ms=7, color=VERDICT_COLOURS[v], label=v) for v in present]
    if handles:
        ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.9, title="verdict",
                  title_fontsize=8)


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
    return [ax.text(x, y * 1.25, _mpl(roof.label), rotation=angle, rotation_mode="anchor", fontsize=8,
                    ha="left", va="bottom", zorder=4, bbox=_HALO)]


def _draw_strip(ax, data: ChartData):
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_ylim(*data.strip_range)
    ax.xaxis.set_major_locator(NullLocator())
    ax.set_title("0 FLOP", fontsize=9)
    ax.set_ylabel(f"zero-FLOP kernels: achieved {LEVELS[data.level]} byte/s", fontsize=8.5)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v, "B/s")))
    ax.tick_params(axis="y", labelsize=7.5)
    ax.grid(True, axis="y", which="major", color="#dddddd", lw=0.6)
    ax.set_facecolor("#f6f6f6")
    texts = []
    for _device, label, value in data.bandwidths:
        ax.axhline(value, color="#555555", lw=1.4)
        texts.append(ax.text(0.03, value * 1.1, _mpl(label), fontsize=7, va="bottom"))
    xs = [_strip_x(p.rank) for p in data.zero_flop]
    _scatter(ax, xs, [p.bytes_per_s for p in data.zero_flop], data.zero_flop)
    _annotate(ax, lambda p: _strip_x(p.rank), lambda p: p.bytes_per_s,
              [p for p in data.zero_flop if p.labelled], len(data.zero_flop), texts)


def _strip_x(rank: int) -> float:
    """A fixed horizontal spread inside the strip (golden-ratio sequence), the same on every run."""
    return 0.2 + 0.6 * ((rank * 0.6180339887) % 1.0)


def _draw_legend_table(ax, data: ChartData):
    """id → short name, with rank, share of time and verdict: the key to the labels on the chart."""
    ax.axis("off")
    rows = data.legend
    ax.text(0.0, 1.0, "labelled kernels (by headroom)", fontsize=8.5, weight="bold", va="top",
            transform=ax.transAxes)
    step = min(0.075, 0.94 / max(len(rows), 1))
    for i, p in enumerate(rows):
        y = 0.93 - i * step
        ax.text(0.0, y, _mpl(p.label), fontsize=8, family="monospace", va="top", transform=ax.transAxes,
                color=VERDICT_COLOURS.get(p.verdict, "#333333"), weight="bold")
        ax.text(0.25, y, _mpl(_cut(p.name, 34)), fontsize=7.5, va="top", transform=ax.transAxes)
        ax.text(0.25, y - step * 0.42, f"#{p.rank} · {common.pct(p.time_share, 1)} of time · {p.verdict}",
                fontsize=7, va="top", transform=ax.transAxes, color="#555555")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
