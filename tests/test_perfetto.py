"""--format perfetto: the timeline written back as Chrome-trace JSON, every launch with its verdict.

Expectations come from the Result the same inputs give (rooflint.report): each launch's slice must
carry that launch's own verdict and sit where the trace put it (Kineto `ts`, rebased to the
trace's first event as the Kineto reader does), or, for an export without timestamps, end to end.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import rooflint
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
