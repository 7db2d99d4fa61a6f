"""rooflint.report(..., launches=False): a folder reduced file by file reports as the full path."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

import rooflint
from rooflint import reporters
from rooflint.cli.main import main
from rooflint.core.errors import UsageError
from rooflint.reporters import chart, html, markdown, table
from tests.helpers import A100, FIXTURES, RTX, replay_folder, shared

FOLDERS = [FIXTURES / "ncu", FIXTURES / "rocprof", FIXTURES / "kineto"]


def _close(a, b) -> bool:
    """Equal, numbers but for the last bits of their sums (a folder's partial sums added)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, nan_ok=True)
    return a == b


def _both(*paths, **options):
    return rooflint.report(*paths, **options), rooflint.report(*paths, launches=False, **options)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
@pytest.mark.parametrize("group_by", ["kernel", "family"])
def test_a_reduced_folder_reports_as_the_full_path(folder, group_by):
    """The bundled fixture folders (ncu exports of five GPUs; rocprof of MI100-MI350; seven
    PyTorch traces): the terminal and Markdown reports are the full path's, byte for byte."""
    full, reduced = _both(folder, group_by=group_by)
    assert len(reduced.launches) == 0 < len(full.launches)  # no launch row kept
    assert table.render(reduced, top=None) == table.render(full, top=None)
    assert markdown.render(reduced) == markdown.render(full)
    assert _close(reduced.summary.accounting, full.summary.accounting)
    assert _close(reduced.summary.numbers(), full.summary.numbers())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
@pytest.mark.parametrize("level", ["dram", "dram,l2,l1"])
def test_a_reduced_folder_charts_as_the_full_path(folder, level):
    """The HTML page and the charts from merged partials: each device's groups ranked alone
    (the ncu folder holds six GPUs), the L2 and L1 bytes per group, the classes that get a
    roof, the launches on no device; the full path's page byte for byte."""
    full, reduced = _both(folder)
    assert repr(chart.charts(reduced, level)) == repr(chart.charts(full, level))
    assert html.render(reduced, level=level) == html.render(full, level=level)


@pytest.mark.e2e  # reads ../shared/fixtures
def test_the_two_hta_ranks_reduced_report_as_the_full_path(tmp_path):
    """HTA's two sampled rank traces (shared fixtures): one job of two ranks, its collectives."""
    for n in (0, 1):
        shutil.copy(shared(f"kineto/hta-2rank-sampled-rank-{n}.json.gz"), tmp_path)
    full, reduced = _both(tmp_path)
    assert len(reduced.launches) == 0
    assert table.render(reduced, top=None) == table.render(full, top=None)
    assert _close(reduced.summary.numbers(), full.summary.numbers())


@pytest.mark.e2e  # reads ../shared/fixtures
@pytest.mark.parametrize("layout", ["given", "beside", "alone"])
def test_graph_replays_are_paired_file_by_file_as_the_full_path(layout, tmp_path):
    """TraceLens's vLLM replay trace with the capture of its graphs among the inputs, in a
    capture_traces/ folder (two ranks' replays), or with no capture at all: reduced file by file
    (no launch row kept), the replay read again with the capture once every file is reduced;
    the full path's reports byte for byte (its 434 replayed kernels take the capture's
    operators: tests/test_kineto_graphs.py)."""
    folder = replay_folder(tmp_path, layout)
    full, reduced = _both(folder)
    assert len(reduced.launches) == 0 < len(full.launches)
    assert [p.source for p in reduced.inputs] == [p.source for p in full.inputs]
    assert table.render(reduced, top=None) == table.render(full, top=None)
    assert markdown.render(reduced) == markdown.render(full)
    assert html.render(reduced) == html.render(full)
    # the capture among the inputs (capture_traces/ is searched too) is reported through each
    # replay it lent to, a note on each saying so; with none the replay is reported as it is
    notes = [n for p in reduced.inputs for n in p.notes if n.startswith("capture trace ")]
    assert (len(reduced.inputs), len(notes)) == {"given": (1, 1), "beside": (2, 2)}.get(
        layout, (2, 0)
    )


def test_a_trace_with_an_ncu_export_is_read_together():
    """A trace and an ncu export may be of the same run (join.pair lends the counters): such
    inputs take the full path, launches and all."""
    trace = FIXTURES / "kineto" / "h200-train-trace.json.gz"
    full, reduced = _both(trace, FIXTURES / "ncu" / "h200-train-raw-stdout.csv.gz")
    assert len(reduced.launches) == len(full.launches) > 0
    assert table.render(reduced) == table.render(full)


@pytest.mark.parametrize("export_first", [False, True])
def test_a_trace_found_among_exports_as_read_is_told_to_progress_once(export_first):
    """The reduced path finds the trace among exports as it reads them and hands over to the
    full path, which reads them again: the progress line still counts each file once."""
    paths = [FIXTURES / "kineto" / "h200-train-trace.json.gz"]
    paths.append(FIXTURES / "ncu" / "h200-train-raw-stdout.csv.gz")
    paths = paths[::-1] if export_first else paths

    def ticks(**options):
        told: list[tuple[str, int]] = []
        rooflint.report(*paths, progress=lambda path, n: told.append((path, n)), **options)
        return told

    full = ticks()
    assert [path for path, _ in full] == [str(p) for p in paths]
    assert ticks(launches=False) == full


def test_a_lone_file_reduced_keeps_its_profile_s_notes_and_devices():
    """a100-gemm-details.csv: one profile, 11 launches read, on the A100 PCIe it names."""
    full, reduced = _both(A100)
    assert reduced.summary.accounting["launches_read"] == 11
    assert [u.device.id for u in reduced.devices] == [u.device.id for u in full.devices]
    assert [p.notes for p in reduced.inputs] == [p.notes for p in full.inputs]


def test_the_formats_without_launch_rows_are_all_but_those_that_write_each_launch():
    """The registry says which formats a reduced Result is enough for: all but those that
    write every launch (JSON, CSV, Parquet and the Perfetto timeline: pieces)."""
    reduced = {
        f.name for f in reporters.REGISTRY if f.kind == reporters.REPORT and f.rows == "none"
    }
    assert reduced == {"table", "markdown", "html", "png", "svg", "pdf"}


def test_the_command_line_reports_a_folder_as_before(tmp_path):
    """`rooflint report DIR` (the table, reduced) and --fail-under (a gate read from the
    Summary): the same text as the Python full path's table, exit 1 under 100 %."""
    for path in (A100, RTX):
        shutil.copy(path, tmp_path)
    res = CliRunner().invoke(main, ["report", str(tmp_path), "--fail-under", "100%"])
    assert res.exit_code == 1
    full = rooflint.report(tmp_path)
    assert res.stdout == table.render(full)


def test_the_command_line_pages_and_plots_a_folder_as_before(tmp_path):
    """`rooflint report DIR -o page.html` and `rooflint plot DIR -o chart.svg` (reduced): the
    page and the SVG (a fixed hash salt, no date: reporters/chart_draw.py) are the Python full
    path's, byte for byte."""
    page, drawn = tmp_path / "page.html", tmp_path / "chart.svg"
    for args in (
        ["report", str(FIXTURES / "rocprof"), "-o", str(page)],
        ["plot", str(FIXTURES / "rocprof"), "-o", str(drawn), "-q"],
    ):
        assert CliRunner().invoke(main, args).exit_code == 0
    full = rooflint.report(FIXTURES / "rocprof")
    assert page.read_text() == html.render(full)
    assert drawn.read_bytes() == reporters.render(full, "svg")


def test_a_reduced_result_is_refused_rather_than_ranked_empty():
    """A reduced Result keeps no launch rows: ranking it again would give an empty table, so
    rooflint.report refuses it and says to report the paths again."""
    reduced = rooflint.report(A100, launches=False)
    with pytest.raises(UsageError, match="reduced file by file"):
        rooflint.report(reduced, group_by="family")
