"""The roofline chart model: `chart_data` says what to draw (HTML and matplotlib share it).

The numbers it places are the Result's: each group's intensity and throughput at the level
(core.views.at_level), a device's groups ranked alone (core.views.for_device), roofs and ridge
points from the device's ceilings (Device.ridge). It derives only the drawing: axis ranges in
whole decades, which compute classes get a flat roof, equal peaks merged into one roof, roof
segments' ends, the top N labelled, and how many launches ran on no device (a note). No drawing
and no matplotlib here; rooflint.reporters.chart_draw draws PNG/SVG/PDF from it.

A hierarchical chart (level "dram,l2,l1", as Nsight Compute's) places each group once per level it
has bytes for, at that level's intensity and the same FLOP/s, under one sloped roof per level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from rooflint.core import explain, names, schema, units, views
from rooflint.reporters import common

DEFAULT_TOP = 8
LEVELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
# A hierarchical chart's marker per level (matplotlib's names; the HTML draws the same shapes).
MARKERS = {"dram": "o", "l2": "s", "l1": "^"}
# Integer ops are not FLOPs, so the FLOP/s axis has no roof for them.
FLOP_CLASSES = [c for c in schema.COMPUTE_CLASSES if c != "matrix_int8"]


@dataclass(frozen=True)
class Point:
    """One kernel group as drawn: x = FLOP/byte at the level, y = FLOP/s (or byte/s in the
    strip)."""

    rank: int
    label: str  # short id, made unique among the points ("dead50", "dead50#3")
    name: str  # short name
    full_name: str
    intensity: float  # NaN for zero-FLOP kernels
    flops_per_s: float
    bytes_per_s: float  # at the chart's level
    duration_s: float
    time_share: float
    verdict: str
    efficiency: float
    device_id: str | None
    labelled: bool
    level: str = "dram"  # the memory level its intensity is at


@dataclass(frozen=True)
class Roof:
    """One roof segment from `start` to `end` (x in FLOP/byte, y in FLOP/s)."""

    device_id: str
    kind: str  # "memory" or "compute"
    # the level ("dram") or compute class ("matrix_fp16"; "vector_fp32+vector_fp16" when equal)
    name: str
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
    bandwidths: list[
        tuple[str, str, float]
    ]  # (device id, label, byte/s): the strip's reference lines
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    strip_range: tuple[float, float]
    notes: list[str] = field(default_factory=list)
    levels: tuple[str, ...] = ("dram",)  # several: a hierarchical chart

    @property
    def hierarchical(self) -> bool:
        return len(self.levels) > 1

    @property
    def level_names(self) -> str:
        """ "DRAM", or "DRAM, L2, L1" for a hierarchical chart."""
        return ", ".join(LEVELS[lvl] for lvl in self.levels)

    @property
    def axis_label(self) -> str:
        if self.hierarchical:
            return f"arithmetic intensity (FLOP per byte moved at each level: {self.level_names})"
        return f"arithmetic intensity (FLOP per {self.level_names} byte)"

    @property
    def legend(self) -> list[Point]:
        """The labelled points in rank order: the id → name table beside the chart."""
        return sorted((p for p in self.points + self.zero_flop if p.labelled), key=lambda p: p.rank)


def parse_levels(level: str) -> tuple[str, ...]:
    """ "dram" → ("dram",); "dram,l2,l1" → a hierarchical chart's levels, in the order given."""
    levels = tuple(dict.fromkeys(part.strip().lower() for part in str(level).split(",")))
    if not levels or any(lvl not in LEVELS for lvl in levels):
        raise ValueError(
            f"level must be one of {', '.join(LEVELS)} or several of them joined by commas "
            f"(dram,l2,l1), not {level!r}"
        )
    return levels


def chart_data(result, level: str = "dram", top: int | None = None) -> ChartData:
    """Everything the chart shows, from the Result's numbers: no drawing, no matplotlib."""
    levels = parse_levels(level)
    top = DEFAULT_TOP if top is None else top
    tables = {lvl: _groups(result, lvl) for lvl in levels}
    labels = _labels(result)
    points, zero, unplaced = [], [], []
    for rows in zip(*(t.itertuples(index=False) for t in tables.values()), strict=True):
        placed = [(lvl, row) for lvl, row in zip(levels, rows, strict=True) if not _why(row, lvl)]
        if not placed:
            unplaced.append((labels[rows[0].rank], _short(result, rows[0]), _why_all(rows, levels)))
        for lvl, row in placed:
            point = _point(result, row, labels[row.rank], lvl)
            (points if row.flops > 0 else zero).append(point)
    ranked = sorted({p.rank for p in points + zero})[:top]
    first = {}  # a group's label goes on its point at the first level that places it
    for p in points + zero:
        first.setdefault(p.rank, p.level)
    keep = {(rank, first[rank]) for rank in ranked}
    points = [_labelled(p, keep) for p in points]
    zero = [_labelled(p, keep) for p in zero]
    x_range, y_range = _ranges(result, points, levels)
    roofs, notes = _roofs(result, levels, x_range)
    notes += _missing_levels(tables, levels, {p.rank for p in points + zero})
    strip = _strip_range(zero, result, levels)
    return ChartData(
        level,
        _title(result, levels),
        points,
        zero,
        unplaced,
        roofs,
        _bandwidths(result, levels),
        x_range,
        y_range,
        strip,
        notes,
        levels,
    )


def _point(result, row, label: str, level: str) -> Point:
    return Point(
        int(row.rank),
        label,
        _short(result, row),
        _full(result, row),
        float(row.x) if row.flops > 0 else math.nan,
        float(row.y),
        float(row.bytes_per_s),
        float(row.duration_s),
        _float(row.time_share),
        str(row.verdict),
        _float(row.efficiency),
        row.device_id if isinstance(row.device_id, str) else None,
        False,
        level,
    )


def _missing_levels(tables, levels, placed: set[int]) -> list[str]:
    """On a hierarchical chart, how many drawn groups have no point at a level (no bytes)."""
    if len(levels) < 2:
        return []
    out = []
    for lvl, table in tables.items():
        lacking = sum(
            1 for row in table.itertuples(index=False) if row.rank in placed and _why(row, lvl)
        )
        if lacking:
            out.append(f"{lacking} group(s) have no {LEVELS[lvl]} bytes: no {LEVELS[lvl]} point")
    return out


def charts(result, level: str = "dram", top: int | None = None) -> list[ChartData]:
    """One chart per device: several GPUs' roofs on one chart make every point ambiguous.

    With one device (or none) this is [chart_data(result)]. With several, each chart holds that
    device's launches, ranked among themselves (time shares and the top-N labels are the device's
    own); launches on no known device are named in the first chart's notes."""
    ids = [d.id for d in _devices(result)]
    if len(ids) < 2:
        return [chart_data(result, level, top)]
    out = [chart_data(views.for_device(result, device_id), level, top) for device_id in ids]
    elsewhere = views.off_devices(result, ids)
    if elsewhere:
        out[0].notes.append(f"{elsewhere} launch(es) on no known device are on no chart")
    return out


def _float(value) -> float:
    return (
        float(value)
        if value is not None and value is not pd.NA and not pd.isna(value)
        else math.nan
    )


def _labelled(point: Point, keep: set[tuple[int, str]]) -> Point:
    return Point(**{**point.__dict__, "labelled": (point.rank, point.level) in keep})


def _groups(result, level: str) -> pd.DataFrame:
    """result.kernels with x (intensity), y (FLOP/s), bytes and bytes/s at `level`."""
    k = result.kernels
    numbers = views.at_level(result, level)
    return pd.DataFrame(
        {
            "rank": k["rank"].to_numpy(),
            "group": k["group"],
            "kernel": k["kernel"],
            "flops": k["flops"].astype("float64"),
            "duration_s": k["duration_s"].astype("float64"),
            "time_share": k["time_share"],
            "verdict": k["verdict"],
            "efficiency": k["efficiency"],
            "device_id": k["device_id"],
            "x": numbers["intensity"],
            "y": numbers["flops_per_s"],
            "bytes_per_s": numbers["bytes_per_s"],
            "bytes": numbers["bytes"],
        }
    )


def _missing(row) -> str:
    """What keeps a group's point off the chart: "flops", "duration", "bytes" ("" for none)."""
    if pd.isna(row.flops):
        return "flops"
    if pd.isna(row.duration_s) or row.duration_s <= 0:
        return "duration"
    if pd.isna(row.bytes) or row.bytes <= 0:
        return "bytes"
    return ""


def _why(row, level: str) -> str:
    """Why a group has no point at `level` ("" when it has one)."""
    missing = _missing(row)
    if missing == "bytes":
        return f"no {LEVELS[level]} bytes"
    return {"flops": "no FLOP counters", "duration": "no duration"}.get(missing, "")


def _why_all(rows, levels) -> str:
    """Why a group has no point at any of `levels`: "no DRAM bytes", "no DRAM, L2 or L1 bytes"."""
    if _missing(rows[0]) != "bytes" or len(levels) < 2:
        return _why(rows[0], levels[0])
    names = [LEVELS[lvl] for lvl in levels]
    return f"no {', '.join(names[:-1])} or {names[-1]} bytes"


def _labels(result) -> dict[int, str]:
    """The ranking's short id per rank (unique: one name in several configurations gets .1, .2)."""
    return dict(zip(result.kernels["rank"].astype(int), result.kernels["id"], strict=True))


def _short(result, row) -> str:
    if result.group_by in ("kernel", "name") and isinstance(row.kernel, str):
        return names.short_name(row.kernel)
    return str(row.group)


def _full(result, row) -> str:
    return common.full_name(result, {"kernel": row.kernel, "group": row.group})


def _used_classes(result, device_id: str) -> list[str]:
    """FLOP classes with any operations in this device's launches, canonical order."""
    return [c for c in views.used_classes(result, device_id) if c in FLOP_CLASSES]


def _roof_classes(result, device) -> list[str]:
    """The classes to draw a flat roof for: those the kernels use, else FP32 vector for reference
    (a chart of copies alone would otherwise show a slope that never ends)."""
    used = [c for c in _used_classes(result, device.id) if c in device.compute]
    if used:
        return used
    return [c for c in ("vector_fp32",) if c in device.compute]


def _devices(result):
    return [use.device for use in result.devices if use.device is not None]


def _ranges(result, points: list[Point], levels: tuple[str, ...]):
    xs = [p.intensity for p in points]
    ys = [p.flops_per_s for p in points]
    for device in _devices(result):
        for cls in _roof_classes(result, device):
            ys.append(device.compute[cls].value)
            xs += [device.ridge(cls, lvl) for lvl in levels if lvl in device.memory]
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    ys = [y for y in ys if y > 0 and math.isfinite(y)]
    x_range = _decades(min(xs) / 3, max(xs) * 3) if xs else (1e-2, 1e3)
    y_range = _decades(min(ys) / 3, max(ys) * 3) if ys else (1e9, 1e15)
    return x_range, y_range


def _decades(lo: float, hi: float) -> tuple[float, float]:
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if hi_e - lo_e < 2:
        lo_e, hi_e = lo_e - 1, hi_e + 1
    return 10.0**lo_e, 10.0**hi_e


def _roofs(result, levels: tuple[str, ...], x_range) -> tuple[list[Roof], list[str]]:
    roofs, notes = [], []
    devices = _devices(result)
    for device in devices:
        prefix = f"{device.id}: " if len(devices) > 1 else ""
        classes = _roof_classes(result, device)
        roofs += _compute_roofs(result, device, classes, levels, prefix, x_range)
        for level in levels:
            if level not in device.memory:
                notes.append(
                    f"{device.id} has no {LEVELS[level]} bandwidth: no memory roof at this level"
                )
                continue
            roofs.append(_memory_roof(device, classes, level, prefix, x_range))
    return roofs, notes


def _compute_roofs(result, device, classes, levels, prefix: str, x_range) -> list[Roof]:
    """A flat roof per peak, from the leftmost ridge (the fastest level's) to the right edge; its
    label gives the ridge against the first level."""
    reference = not any(c in device.compute for c in _used_classes(result, device.id))
    known = [lvl for lvl in levels if lvl in device.memory]
    out = []
    for same in _same_peak(device, classes):
        peak = device.compute[same[0]].value
        ridges = [device.ridge(same[0], lvl) for lvl in known]
        ridge = device.ridge(same[0], levels[0]) if levels[0] in device.memory else None
        roofs_label = " / ".join(explain.roof_label(c, device.vendor) for c in same)
        label = f"{prefix}{roofs_label} {common.si(peak, units.shown('compute', same[0]))}"
        if ridge is not None:
            where = f" ({LEVELS[levels[0]]})" if len(levels) > 1 else ""
            label += f", ridge {common.ratio(ridge)} FLOP/B{where}"
        if reference:
            label += " (for reference: no kernel here has FLOPs)"
        start = min(ridges) if ridges else x_range[0]
        out.append(
            Roof(
                device.id,
                "compute",
                "+".join(same),
                label,
                peak,
                ridge,
                (start, peak),
                (x_range[1], peak),
            )
        )
    return out


def _memory_roof(device, classes, level: str, prefix: str, x_range) -> Roof:
    """The sloped roof of `level`, from the left edge to its highest ridge."""
    bandwidth = device.memory[level].value
    lo, hi = x_range
    end = max((device.ridge(c, level) for c in classes), default=hi)
    return Roof(
        device.id,
        "memory",
        level,
        f"{prefix}{LEVELS[level]} {common.si(bandwidth, units.shown('memory'))}",
        bandwidth,
        None,
        (lo, bandwidth * lo),
        (end, bandwidth * end),
    )


def _same_peak(device, classes: list[str]) -> list[list[str]]:
    """Classes grouped by equal peak (FP32 and FP16 vector often coincide): one roof each group."""
    groups: dict[float, list[str]] = {}
    for cls in classes:
        groups.setdefault(round(device.compute[cls].value, -6), []).append(cls)
    return list(groups.values())


def _bandwidths(result, levels: tuple[str, ...]) -> list[tuple[str, str, float]]:
    out = []
    for device in _devices(result):
        for level in levels:
            if level in device.memory:
                value = device.memory[level].value
                label = f"{LEVELS[level]} {common.si(value, units.shown('memory'))}"
                out.append((device.id, label, value))
    return out


def _strip_range(zero: list[Point], result, levels: tuple[str, ...]) -> tuple[float, float]:
    values = [p.bytes_per_s for p in zero if p.bytes_per_s > 0] + [
        b[2] for b in _bandwidths(result, levels)
    ]
    return _decades(min(values) / 2, max(values) * 2) if values else (1e9, 1e13)


def _title(result, levels: tuple[str, ...]) -> str:
    names = ", ".join(LEVELS[lvl] for lvl in levels)
    kind = " (hierarchical)" if len(levels) > 1 else ""
    return f"Roofline, {names}{kind}: {common.device_line(result)}"
