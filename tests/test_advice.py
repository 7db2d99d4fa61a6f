"""Advice from the evidence (core/advice.py): each rule's trigger taken from a real file.

- RTX 2080 Ti sgemm (fixtures/ncu/rtx2080ti-sgemm-raw-base.csv, a public ncu export): grid
  "(2, 25, 1)" = 50 blocks on the 2080 Ti's 68 SMs (catalog rtx-2080-ti; TU102 as sold: 68 SMs),
  latency-bound at 22 %: 18 SMs have no block to run.
- H200 training trace (fixtures/kineto/h200-train-trace.json.gz): "Memset (Device)" 360 launches
  in 328.833 µs, 913 ns each: launch overhead, not bandwidth, is their time.
"""

from __future__ import annotations

import json

import pytest

import rooflint
from rooflint.core import advice
from rooflint.reporters import common, render
from tests.helpers import FIXTURES, RTX

TRACE = FIXTURES / "kineto" / "h200-train-trace.json.gz"


def _advice(result, kernel_id: str) -> list[advice.Advice]:
    (row,) = result.kernels[result.kernels["id"] == kernel_id].to_dict("records")
    return common.group_advice(result, row)


def _rule(found: list[advice.Advice], rule: advice.Rule) -> advice.Advice:
    (one,) = [a for a in found if a.rule == rule]
    return one


def test_a_grid_smaller_than_the_device_leaves_sms_idle():
    result = rooflint.report(str(RTX))
    (row,) = result.kernels.to_dict("records")
    assert (row["grid"], row["verdict"]) == ("(2, 25, 1)", "latency-bound")
    found = _rule(common.group_advice(result, row), advice.Rule.SMALL_GRID)
    assert "grid of 50 blocks leaves 18 of the 68 SMs without work" in found.text  # 68 - 2·25
    assert found.evidence == "the grid and the device's SM count"


def test_many_tiny_launches_are_launch_bound():
    result = rooflint.report(str(TRACE))
    memsets = result.kernels[result.kernels["kernel"] == "Memset (Device)"]
    (row,) = memsets.to_dict("records")
    assert row["launches"] == 360
    assert row["duration_s"] / row["launches"] == pytest.approx(328.833e-6 / 360)  # 913.4 ns
    (found,) = common.group_advice(result, row)
    assert found.rule == advice.Rule.LAUNCH_BOUND
    assert found.text.startswith("launch-bound: 360 launches of 913 ns on average")


def test_no_rule_fires_without_its_evidence():
    base = {"verdict": "latency-bound", "launches": 1, "duration_s": 1e-3, "grid": "(1, 1, 1)"}
    h200 = advice.Context(units=132)
    assert advice.for_group(base, None) == []  # no device: the SM count is unknown
    assert advice.for_group({**base, "grid": None}, h200) == []  # no grid
    assert advice.for_group({**base, "verdict": "compute-bound"}, h200) == []  # at a roof
    many = {**base, "launches": 49, "duration_s": 49e-6}
    assert [a.rule for a in advice.for_group(many, advice.Context(units=1))] == []  # one short
    assert advice.grid_blocks("(80, 160, 2)") == 25_600


def test_communication_kernels_get_no_grid_advice():
    """NCCL runs on a few blocks by design (HTA's A100 NCCL excerpt: grids of 1-8 blocks)."""
    result = rooflint.report(str(FIXTURES / "kineto" / "hta-a100-nccl-backward-excerpt.json.gz"))
    comm = result.kernels[result.kernels["verdict"] == "communication"]
    assert len(comm)
    assert all(not common.group_advice(result, r) for r in comm.to_dict("records"))


def test_every_format_shows_the_advice_with_its_evidence():
    result = rooflint.report(str(RTX))
    expected = "18 of the 68 SMs without work"
    for fmt in ("table", "markdown", "html"):
        assert expected in " ".join(str(render(result, fmt)).split()), fmt
    (kernel,) = json.loads(render(result, "json"))["kernels"]
    assert kernel["advice"][0]["rule"] == "small-grid"
    assert expected in kernel["explanation"]


def test_a_verdict_resting_on_part_of_a_group_says_so():
    """The H200 training trace by family: "elementwise" is 640 launches of which 160 have a
    model (the others have no DRAM bytes); its verdict is theirs, and every format says so."""
    result = rooflint.report(str(TRACE), group_by="family")
    (row,) = result.kernels[result.kernels["group"] == "elementwise"].to_dict("records")
    assert (row["launches"], row["analysed"]) == (640, 160)
    expected = "the verdict rests on 160 of its 640 launches (the others: missing DRAM bytes)"
    assert expected in common.kernel_sentence(result, row)
    assert expected in " ".join(str(render(result, "table", top=50)).split())
    full = rooflint.report(str(RTX))  # every launch analysed: nothing added
    assert "rests on" not in common.kernel_sentence(full, full.kernels.iloc[0])
