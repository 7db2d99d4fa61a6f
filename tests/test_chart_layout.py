"""The chart's layout on whole-model data: one chart per device, labels that never overlap
(measured with matplotlib's renderer), titles inside the figure, text kept as text in SVG."""

from __future__ import annotations

import dataclasses
import itertools
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
