"""The chart's layout on whole-model data: one chart per device, labels that never overlap
(measured with matplotlib's renderer), titles inside the figure, text kept as text in SVG."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import pandas as pd
import pytest

from rooflint import pipeline, reporters
from rooflint.core import schema
from rooflint.core.profile import Profile
from rooflint.pipeline import Options, assemble
from rooflint.reporters import chart, chart_draw, html

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
A100 = ROOT / "fixtures" / "ncu" / "a100-gemm-details.csv"
RTX2080 = ROOT / "fixtures" / "ncu" / "rtx2080ti-sgemm-raw-base.csv"


def two_gpus():
    return pipeline.build([str(A100), str(RTX2080)])


def crowded(groups: int = 300):
    """`groups` kernels packed into two clusters (as a whole model's GEMMs and elementwise
    kernels are), with uneven times so the top-N by headroom is not simply the first N."""
    rows = []
    for i in range(groups):
        gemm = i % 3 == 0
        rows.append(
            {
                "launch_id": i,
                "kernel": f"kernel_{i:03d}<{'gemm' if gemm else 'ew'}>",
                "grid": "(1, 1, 1)",
                "block": "(256, 1, 1)",
                "duration_s": 1e-4 * (1 + (i * 37) % 50),
                "ops_vector_fp32": (4e10 if gemm else 2e7) * (1 + (i * 13) % 7),
                "bytes_dram": (1e8 if gemm else 8e7) * (1 + (i * 7) % 5),
            }
        )
    frame = schema.conform(pd.DataFrame(rows))
    frame["source"] = pd.array(["model.csv"] * len(frame), dtype="string")
    return assemble(
        [Profile(source="model.csv", format="synthetic", launches=frame)],
        [],
        Options(device_id="a100-sxm4-80gb"),
    )


def text_boxes(figure):
    """Every visible text of every axes (ids, roof labels, strip labels) and the verdict
    legend, as pixel boxes per axes: the label ids without their leader lines."""
    from matplotlib.text import Text

    renderer = figure.canvas.get_renderer()
    out = []
    for ax in figure.axes:
        boxes = [
            (t.get_text(), Text.get_window_extent(t, renderer))
            for t in ax.texts
            if t.get_visible() and t.get_text()
        ]
        if ax.get_legend() is not None:
            boxes.append(("legend", ax.get_legend().get_window_extent(renderer)))
        out.append(boxes)
    return out


def assert_no_overlap(figure):
    for boxes in text_boxes(figure):
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
            assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"


def test_one_chart_per_device():
    res = two_gpus()
    charts = chart.charts(res)
    assert [{r.device_id for r in c.roofs} for c in charts] == [{"a100-pcie-40gb"}, {"rtx-2080-ti"}]
    # The "Kernel Name" column of the A100 export holds 4 names (cutlass::Kernel,
    # ampere_s16816gemm, InitializeMatrix_kernel<__half> and <float>); the RTX 2080 Ti one holds
    # one (volta_sgemm_32x128_nn).
    a100, rtx = charts
    assert len(a100.points) + len(a100.zero_flop) + len(a100.unplaced) == 4
    assert [p.name for p in rtx.points] == ["volta_sgemm_32x128_nn"]
    # A chart's time shares are of its own device's time: the only group there has all of it.
    assert rtx.points[0].time_share == pytest.approx(1.0)
    assert "A100" in a100.title and "2080 Ti" not in a100.title and "2080 Ti" in rtx.title


def test_one_device_keeps_the_single_chart():
    res = pipeline.build([str(A100)])
    [only] = chart.charts(res)
    assert only == chart.chart_data(res)


@pytest.mark.e2e  # over a second
def test_several_devices_draw_one_panel_each_with_its_own_title():
    figure = chart_draw.draw_all(chart.charts(two_gpus()))
    titles = [t.get_text() for t in figure.texts if t.get_text().startswith("Roofline")]
    assert len(titles) == 2 and "A100" in titles[0] and "2080 Ti" in titles[1]
    mains = [ax for ax in figure.axes if ax.get_xscale() == "log"]
    assert len(mains) == 2


@pytest.mark.parametrize(
    "case", ["a100", "two-gpus", pytest.param("crowded", marks=pytest.mark.e2e)]
)  # crowded: 300 groups, over a second
def test_no_two_labels_overlap(case):
    res = {"a100": lambda: pipeline.build([str(A100)]), "two-gpus": two_gpus, "crowded": crowded}[
        case
    ]()
    top = 25 if case == "crowded" else None
    figure = chart_draw.draw_all(chart.charts(res, top=top))
    assert_no_overlap(figure)
    ids = {t.get_text() for ax in figure.axes for t in ax.texts}
    labelled = [p for c in chart.charts(res, top=top) for p in c.legend]
    placed = [p for p in labelled if p.label in ids]
    assert len(placed) >= len(labelled) * 0.8  # room is found for nearly all of them


def test_crowded_chart_labels_only_the_top_n_by_headroom():
    res = crowded()
    data = chart.chart_data(res, top=12)
    assert [p.rank for p in data.legend] == list(range(1, 13))
    figure = chart_draw.draw(data)
    ids = {t.get_text() for ax in figure.axes for t in ax.texts}
    unlabelled = {p.label for p in data.points if not p.labelled}
    assert not ids & unlabelled


def test_titles_fit_the_figure():
    data = chart.chart_data(two_gpus())
    long = dataclasses.replace(
        data, title="Roofline, DRAM: " + "; ".join(["NVIDIA GeForce RTX 2080 Ti"] * 12)
    )
    figure = chart_draw.draw(long)
    renderer = figure.canvas.get_renderer()
    width = figure.bbox.width
    for text in figure.texts:
        box = text.get_window_extent(renderer)
        assert 0 <= box.x0 and box.x1 <= width, text.get_text()
    title = next(t for t in figure.texts if t.get_text().startswith("Roofline"))
    assert title.get_text().endswith("…")


def test_svg_keeps_text_as_text():
    svg = reporters.render(pipeline.build([str(A100)]), "svg").decode()
    assert "<text" in svg and "dead50" in svg and "Roofline, DRAM" in svg


def test_html_report_has_one_chart_per_device():
    page = html.render(two_gpus())
    assert page.count("<svg") == 2
    assert "one chart per device (2)" in page


# --- the hierarchical chart (--level dram,l2,l1) ---------------------------------------------

# rtx2080ti-sgemm-raw-base.csv, its one launch: FLOPs = its DRAM intensity 32.24001930951574
# FLOP/B (tests/golden) × dram__bytes_read.sum 819,456 B; L2 bytes = lts__t_sectors.sum 90,113 ×
# 32 B; L1 = l1tex__t_bytes.sum.per_second 257,602,985,074.63 B/s × gpu__time_duration 10,720 ns.
SGEMM_FLOPS = 32.24001930951574 * 819_456
SGEMM_BYTES = {"dram": 819_456, "l2": 90_113 * 32, "l1": 257_602_985_074.63 * 10_720e-9}


def test_hierarchical_chart_places_a_kernel_at_each_level():
    res = pipeline.build([str(RTX2080)])
    data = chart.chart_data(res, "dram,l2,l1")
    assert data.hierarchical and data.levels == ("dram", "l2", "l1")
    assert [p.level for p in data.points] == ["dram", "l2", "l1"]
    for p in data.points:
        assert p.intensity == pytest.approx(SGEMM_FLOPS / SGEMM_BYTES[p.level], rel=1e-9)
        assert p.flops_per_s == pytest.approx(SGEMM_FLOPS / 10.72e-6, rel=1e-9)  # one height
    assert [round(p.intensity, 2) for p in data.points] == [32.24, 9.16, 9.57]
    assert [p.labelled for p in data.points] == [True, False, False]  # one label per kernel
    # one sloped roof per level, from the run's own peaks; the flat roof starts at the
    # fastest level's ridge (L1), its label gives the DRAM ridge
    memory = {r.name: r for r in data.roofs if r.kind == "memory"}
    assert list(memory) == ["dram", "l2", "l1"]
    device = res.devices[0].device
    assert [memory[lvl].value for lvl in memory] == [device.memory[lvl].value for lvl in memory]
    [flat] = [r for r in data.roofs if r.kind == "compute"]
    assert flat.start[0] == pytest.approx(flat.value / device.memory["l1"].value)
    assert flat.label.endswith("ridge 17.8 FLOP/B (DRAM)")
    assert data.title.startswith("Roofline, DRAM, L2, L1 (hierarchical): ")
    # a single level is the chart it always was
    assert chart.chart_data(res, "dram") == chart.chart_data(res)


def test_hierarchical_chart_on_a_device_with_only_dram_roofs():
    """The H200 block export has L2 and L1 bytes for its 5 groups; the catalog's H200 has a DRAM
    bandwidth only: every group at every level, one sloped roof, and a note per missing roof."""
    res = pipeline.build([str(ROOT / "fixtures" / "ncu" / "h200-block-raw-stdout.csv")])
    data = chart.chart_data(res, "dram,l2,l1")
    assert len(data.points) == 3 * len(res.kernels) == 15
    assert [r.name for r in data.roofs if r.kind == "memory"] == ["dram"]
    assert data.notes == [
        "h200-sxm has no L2 bandwidth: no memory roof at this level",
        "h200-sxm has no L1 bandwidth: no memory roof at this level",
    ]
    labelled = [p for p in data.points if p.labelled]
    assert len(labelled) == 5 and {p.level for p in labelled} == {"dram"}


def test_hierarchical_chart_in_every_chart_format_and_html(tmp_path):
    res = pipeline.build([str(RTX2080)])
    svg = reporters.render(res, "svg", level="dram,l2,l1").decode()
    assert "FLOP per byte moved at each level: DRAM, L2, L1" in svg
    assert reporters.render(res, "png", level="dram,l2,l1")[:4] == b"\x89PNG"
    assert reporters.render(res, "pdf", level="dram,l2,l1")[:4] == b"%PDF"
    page = html.render(res, level="dram,l2,l1")
    # a circle (DRAM), a square (L2) and a triangle (L1) for the kernel, each with its details
    shapes = re.findall(r'<(circle|rect|polygon) [^>]*class="pt"', page)
    assert sorted(shapes) == ["circle", "polygon", "rect"]
    assert "9.16 FLOP/byte (L2)" in page and "9.57 FLOP/byte (L1)" in page
    assert page.count('href="#k-1"') == 3  # each links to the kernel's row


def test_a_level_not_known_is_refused():
    res = pipeline.build([str(RTX2080)])
    with pytest.raises(ValueError, match="dram,l2,l1"):
        chart.chart_data(res, "dram,l3")


def test_the_commands_take_several_levels(tmp_path):
    from click.testing import CliRunner

    from rooflint.cli import main

    target = tmp_path / "h.svg"
    done = CliRunner().invoke(
        main, ["plot", "-q", str(RTX2080), "-o", str(target), "--level", "dram, L2,l1"]
    )
    assert done.exit_code == 0, done.output
    assert "Roofline, DRAM, L2, L1 (hierarchical)" in target.read_text()
    page = tmp_path / "h.html"
    done = CliRunner().invoke(
        main, ["report", "-q", str(RTX2080), "-o", str(page), "--level", "dram,l1"]
    )
    assert done.exit_code == 0, done.output
    assert "FLOP per byte moved at each level: DRAM, L1" in page.read_text()
    done = CliRunner().invoke(
        main, ["plot", "-q", str(RTX2080), "-o", str(target), "--level", "dram,l3"]
    )
    assert done.exit_code == 2
    assert "--level 'l3' is not one of dram, l2, l1; did you mean l2?" in done.output
