"""--format perfetto: the timeline written back as Chrome-trace JSON, every launch with its verdict.

Expectations come from the Result the same inputs give (rooflint.report): each launch's slice must
carry that launch's own verdict and sit where the trace put it (Kineto `ts`, rebased to the
trace's first event as the Kineto reader does), or, for an export without timestamps, end to end.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import rooflint
from rooflint import reporters, spill
from rooflint.cli.main import main
from rooflint.core import verdicts
from rooflint.reporters import choose, perfetto
from tests.helpers import A100, FIXTURES

TRACE = FIXTURES / "kineto" / "hta-a100-nccl-backward-excerpt.json.gz"


def _launch_slices(doc: dict) -> list[dict]:
    """The slices on the launch tracks (not the verdict twins)."""
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] < perfetto.VERDICT_TRACK]


def test_every_launch_of_a_real_trace_is_a_slice_with_its_verdict_at_its_time():
    result = rooflint.report(str(TRACE))
    doc = perfetto.document(result)
    slices = _launch_slices(doc)
    launches = result.launches
    assert len(slices) == len(launches) + len(result.outside_launches)
    window = slices[: len(launches)]
    assert [s["args"]["verdict"] for s in window] == launches["verdict"].astype(str).tolist()
    assert [s["tid"] for s in window] == launches["stream"].astype(int).tolist()
    # ts in µs = start_s × 1e6, to the nanosecond
    start_us, dur_us = launches["start_s"].to_numpy() * 1e6, launches["duration_s"].to_numpy() * 1e6
    assert np.allclose([s["ts"] for s in window], start_us, atol=1e-3)
    assert np.allclose([s["dur"] for s in window], dur_us, atol=1e-3)
    # the NCCL kernels are communication, coloured as such in both viewers
    comm = [s for s in window if s["args"]["verdict"] == verdicts.COMMUNICATION]
    assert comm and all(s["cname"] == perfetto.CNAME[verdicts.COMMUNICATION] for s in comm)
    twins = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] >= perfetto.VERDICT_TRACK]
    assert [t["name"] for t in twins[: len(launches)]] == [s["args"]["verdict"] for s in window]


def test_the_headroom_counter_ends_at_the_summed_headroom():
    result = rooflint.report(str(TRACE))
    doc = perfetto.document(result)
    counter = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    total_ms = (
        result.launches["headroom_s"].astype(float).fillna(0).sum()
        + result.outside_launches["headroom_s"].astype(float).fillna(0).sum()
    ) * 1e3
    assert counter[-1]["args"]["ms"] == pytest.approx(total_ms, rel=1e-9)
    values = [e["args"]["ms"] for e in counter]
    assert values == sorted(values)  # a running sum of non-negative headroom


def test_an_export_without_timestamps_is_laid_end_to_end_and_says_so():
    result = rooflint.report(str(A100))  # Nsight Compute details page: durations, no start times
    doc = perfetto.document(result)
    slices = _launch_slices(doc)
    assert len(slices) == len(result.launches) == 11
    ordered = sorted(slices, key=lambda s: s["ts"])
    for before, after in zip(ordered, ordered[1:], strict=False):  # no overlap, no gap
        assert after["ts"] == pytest.approx(before["ts"] + before["dur"], abs=2e-3)
    assert ordered[-1]["ts"] + ordered[-1]["dur"] == pytest.approx(
        result.launches["duration_s"].sum() * 1e6, rel=1e-9
    )
    assert all(s["args"]["placement"] == perfetto.LAID_END_TO_END for s in slices)
    names = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert perfetto.LAID_END_TO_END in names
    # a group's launches are consecutive
    groups = [s["args"]["group"] for s in ordered]
    assert all(g for g in groups)
    runs = sum(1 for a, b in zip([None, *groups], groups, strict=False) if a != b)
    assert len(set(groups)) == runs


def test_the_warnings_every_format_shows_are_in_the_trace():
    result = rooflint.report(str(TRACE))
    doc = perfetto.document(result)
    from rooflint.reporters import common

    expected = common.warnings(result)
    assert doc["otherData"]["warnings"] == expected
    shown = [e["name"] for e in doc["traceEvents"] if e["ph"] == "i"]
    assert shown == [f"WARNING: {w}" for w in expected]
    assert doc["otherData"]["accounting"] == common.accounting_lines(result)


def test_an_o_path_ending_perfetto_json_chooses_the_format_and_a_json_one_does_not():
    assert choose(None, "step.perfetto.json").name == "perfetto"
    assert choose(None, "report.json").name == "json"


def test_the_cli_writes_a_file_a_json_parser_opens(tmp_path):
    out = tmp_path / "step.perfetto.json"
    result = CliRunner().invoke(main, ["report", str(TRACE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["displayTimeUnit"] == "ns"
    assert len(_launch_slices(doc)) == len(rooflint.report(str(TRACE)).launches)


# A folder's timeline from its launch rows kept on disk file by file (launches="timeline").
RESNET = FIXTURES / "kineto" / "tracelens-mi300x-resnet18-train-excerpt.json.gz"
MINITOY = FIXTURES / "kineto" / "hta-mi250-minitoy.json.gz"


def _streamed(result) -> bytes:
    return b"".join(bytes(p) for p in reporters.render_pieces(result, "perfetto"))


def _outside_slices(doc: dict) -> list[dict]:
    return [s for s in _launch_slices(doc) if s["args"].get("outside_window")]


@pytest.mark.parametrize("name", ["kineto", "ncu", "rocprof"])
def test_the_command_line_writes_a_folder_s_timeline_as_the_full_path(name, spills):
    """`rooflint report DIR --format perfetto` from the folder's spilled pieces: Kineto traces
    (several jobs, streams, warm-up outside the window), rocprof exports and the ncu exports
    (whose analysed tables differ in columns): the full path's rendering, byte for byte."""
    folder = FIXTURES / name
    assert reporters.formats()["perfetto"].rows == "timeline"
    res = CliRunner().invoke(main, ["report", str(folder), "-q", "--format", "perfetto"])
    assert res.exit_code == 0, res.output
    full = rooflint.report(folder)
    assert res.stdout_bytes == perfetto.render(full).encode("utf-8")
    made = rooflint.report(folder, launches="timeline")
    assert made.pieces is not None
    assert _streamed(made) == res.stdout_bytes
    del made
    gc.collect()
    assert list(spills.iterdir()) == []


def test_the_warm_up_outside_the_window_is_laid_out_from_pieces(spills):
    """The Kineto folder: MI250 minitoy's 8 launches before its first complete step (7 traces,
    6166 launches in the windows) are spilled with its file and drawn, flagged, on its device
    (GPU 2, as the trace's own launches)."""
    made = rooflint.report(FIXTURES / "kineto", launches="timeline")
    assert made.pieces is not None and made.outside is None
    assert made.launch_count == 6166 and made.summary.accounting["launches_read"] == 6174
    assert sum(1 for p in made.pieces.outside if p) == 1
    doc = json.loads(_streamed(made))
    outside = _outside_slices(doc)
    assert len(outside) == 8 and len(_launch_slices(doc)) == 6174
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert {names[s["pid"]] for s in outside} == {f"{MINITOY} · GPU 2"}  # its ranks' GPU


@pytest.mark.parametrize("steps", ["16", "15-16"])
def test_traces_with_launches_outside_their_windows_are_the_full_path_s(steps, tmp_path, spills):
    """Two copies of the MI300X ResNet-18 excerpt (3653 launches, steps 15-17), one step or two
    reported: every launch outside the window is a slice flagged so, after the window's on its
    own device, and the whole timeline is the full path's, byte for byte."""
    for name in ("a", "b"):
        shutil.copy(RESNET, tmp_path / f"{name}.json.gz")
    full = rooflint.report(tmp_path, steps=steps)
    made = rooflint.report(tmp_path, steps=steps, launches="timeline")
    assert made.pieces is not None and all(made.pieces.outside)
    assert _streamed(made) == perfetto.render(full).encode("utf-8")
    doc = json.loads(_streamed(made))
    inside = len(full.launches) // 2
    assert len(full.outside_launches) == 2 * (3653 - inside) > 0
    slices = _launch_slices(doc)
    assert len(slices) == 2 * 3653
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    for source in ("a", "b"):
        own = [s for s in slices if names[s["pid"]].startswith(str(tmp_path / source))]
        flags = [bool(s["args"].get("outside_window")) for s in own]
        assert flags == [False] * inside + [True] * (3653 - inside)


def test_a_device_seen_only_outside_the_windows_is_laid_out_last(tmp_path, spills):
    """The minitoy's warm-up moved to device 7 (on both paths): that device's track is the last
    pid, after every device of the windows' launches; each spilled file is read once, in order,
    and the warm-up file once more for it. Claiming a source in two files (the inputs laid out
    joined) gives the same bytes."""
    shutil.copy(MINITOY, tmp_path / "m.json.gz")
    shutil.copy(TRACE, tmp_path / "n.json.gz")
    full = rooflint.report(tmp_path)
    moved = full.outside.assign(device_index=pd.array([7] * len(full.outside), dtype="Int64"))
    full = dataclasses.replace(full, outside=moved)
    made = rooflint.report(tmp_path, launches="timeline")
    outside = [p for p in made.pieces.outside if p]
    assert len(outside) == 1
    reads = []

    def read(path: str) -> pd.DataFrame:
        reads.append(path)
        table = spill.read(path)
        if path in outside:
            table["device_index"] = pd.array([7] * len(table), dtype="Int64")
        return table

    made = dataclasses.replace(made, pieces=dataclasses.replace(made.pieces, read=read))
    want = perfetto.render(full).encode("utf-8")
    assert _streamed(made) == want
    files = made.pieces.files
    assert reads == [files[0], outside[0], files[1], outside[0]]
    doc = json.loads(want)
    names = [e for e in doc["traceEvents"] if e["name"] == "process_name"]
    assert names[-1]["args"]["name"] == f"{tmp_path / 'm.json.gz'} · GPU 7"
    assert {s["pid"] for s in _outside_slices(doc)} == {names[-1]["pid"]} == {len(names) - 1}
    shared = (made.pieces.file_sources[0],) * len(files)
    joined = dataclasses.replace(made, pieces=dataclasses.replace(made.pieces, file_sources=shared))
    assert _streamed(joined) == want


def test_the_other_formats_runs_spill_no_warm_up_and_perfetto_refuses_their_result(spills):
    """launches="pieces" (JSON, CSV, Parquet) spills the Kineto folder's 7 tables alone, not
    the minitoy's 8 warm-up launches; the timeline of such a Result is refused, not drawn
    without them. launches="timeline" spills the 7 and the one warm-up table."""
    made = rooflint.report(FIXTURES / "kineto", launches="pieces")
    assert made.pieces.outside == () and len(made.pieces.files) == 7
    assert len(list(list(spills.iterdir())[0].iterdir())) == 7
    assert made.summary.accounting["launches_read"] == 6174  # the warm-up still counted
    with pytest.raises(rooflint.core.errors.UsageError, match="launches='timeline'"):
        _streamed(made)
    del made
    gc.collect()
    timeline = rooflint.report(FIXTURES / "kineto", launches="timeline")
    assert len(list(list(spills.iterdir())[0].iterdir())) == 8
    del timeline
    gc.collect()
