"""One verdict rule for launches and groups, and the verdicts' names, order and colours."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from rooflint import hardware
from rooflint.core import analysis, ranking, schema, verdicts
from rooflint.hardware import Ceiling

# A toy device: 1 TFLOP/s FP32, 1 TB/s DRAM (a catalog entry with round ceilings put in).
TOY = {"vector_fp32": Ceiling(1e12, "test")}, {"dram": Ceiling(1e12, "test")}
DEVICE = dataclasses.replace(hardware.get("a100-pcie-40gb"), compute=TOY[0], memory=TOY[1])


def test_order_and_colours_are_one_table():
    assert verdicts.VERDICTS == (
        "compute-bound",
        "memory-bound",
        "latency-bound",
        "above-roof",
        "not-analysable",
        "communication",
    )
    assert list(verdicts.COLOURS) == list(verdicts.VERDICTS)
    assert verdicts.COLOURS["above-roof"] == "#000000"


@pytest.mark.parametrize(
    "efficiency, memory_wins, analysable, above, expected",
    [
        (0.60, True, True, False, "memory-bound"),  # at the threshold: bound
        (0.60, False, True, False, "compute-bound"),
        (0.5999, True, True, False, "latency-bound"),  # just under it
        (1.05, True, True, False, "memory-bound"),  # at the tolerance: still on the roof
        (1.0501, False, True, False, "above-roof"),
        (0.3, True, True, True, "above-roof"),  # a group holding a launch above its roof
        (2.0, True, False, False, "not-analysable"),  # nothing analysable wins over all
    ],
)
def test_classify(efficiency, memory_wins, analysable, above, expected):
    code = verdicts.classify(
        np.array([efficiency]), np.array([memory_wins]), np.array([analysable]), 0.6, above
    )
    assert verdicts.names(code).tolist() == [expected]


def test_communication_wins_over_every_other_verdict():
    """A collective (a timeline's kind communication) has no roofline placement, whatever its
    efficiency or analysability."""
    code = verdicts.classify(
        np.array([0.9, np.nan]),
        np.array([True, False]),
        np.array([True, False]),
        0.6,
        communication=np.array([True, True]),
    )
    assert verdicts.names(code).tolist() == ["communication", "communication"]


def test_launch_and_group_verdicts_come_from_the_same_rule():
    """Launches on a 1 TFLOP/s, 1 TB/s toy device, each in its own group: t_memory = bytes /
    1e12, t_compute = FLOPs / 1e12, efficiency = max(t) / duration. A group of one launch has
    that launch's efficiency and limiter, so both verdicts must agree, at every threshold."""
    rows = {  # (FLOPs, bytes, duration): efficiency, winner
        "memory 0.8": (1e6, 8e8, 1e-3),  # 0.8e-3 / 1e-3 = 0.8, memory
        "compute 0.7": (7e8, 1e6, 1e-3),  # 0.7, compute
        "latency 0.3": (1e6, 3e8, 1e-3),  # 0.3, memory
        "above 1.2": (1.2e9, 1e6, 1e-3),  # 1.2, compute
        "edge 0.6": (1e6, 6e8, 1e-3),  # exactly 0.6
    }
    frame = schema.conform(
        pd.DataFrame(
            {
                "kernel": list(rows),
                "ops_vector_fp32": [r[0] for r in rows.values()],
                "bytes_dram": [r[1] for r in rows.values()],
                "duration_s": [r[2] for r in rows.values()],
            }
        )
    )
    for threshold in (0.25, 0.6, 0.75):
        launches = analysis.analyze(frame, DEVICE, threshold)
        groups = ranking.rank(launches, "name", threshold).set_index("kernel")
        assert groups.loc[list(rows), "verdict"].tolist() == launches["verdict"].tolist()
    at_60 = analysis.analyze(frame, DEVICE, 0.6)["verdict"].tolist()
    assert at_60 == ["memory-bound", "compute-bound", "latency-bound", "above-roof", "memory-bound"]
