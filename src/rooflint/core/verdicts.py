"""The verdicts: their names, display order and colours, and the one rule that gives them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported by the rule itself: `import rooflint` loads none of it
    import numpy as np

# NVIDIA's guidance: latency-bound when both compute and memory throughput are under 60 % of peak.
LATENCY_THRESHOLD = 0.60
# Counters and clocks jitter by a few percent; beyond this a launch is above its roof: a data error.
ABOVE_ROOF_TOLERANCE = 0.05

COMPUTE_BOUND = "compute-bound"
MEMORY_BOUND = "memory-bound"
LATENCY_BOUND = "latency-bound"
ABOVE_ROOF = "above-roof"
NOT_ANALYSABLE = "not-analysable"
# NCCL/RCCL collectives (a timeline's kind "communication"): data moved between GPUs, bounded by
# the links, not by this GPU's roofs; no FLOPs, no roofline placement, never "not analysable".
COMMUNICATION = "communication"
# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), in the order
# every format lists the verdicts.
COLOURS = {
    COMPUTE_BOUND: "#0072B2",
    MEMORY_BOUND: "#E69F00",
    LATENCY_BOUND: "#CC79A7",
    ABOVE_ROOF: "#000000",  # a data error: the one colour nothing else uses
    NOT_ANALYSABLE: "#7F7F7F",
    COMMUNICATION: "#009E73",
}
VERDICTS = tuple(COLOURS)
UNPLACED = (NOT_ANALYSABLE, COMMUNICATION)  # verdicts without a roofline placement
_CODE = {verdict: code for code, verdict in enumerate(VERDICTS)}


def classify(
    efficiency: np.ndarray,
    memory_wins: np.ndarray,
    analysable: np.ndarray,
    threshold: float,
    above_roof: np.ndarray | bool = False,
    communication: np.ndarray | bool = False,
) -> np.ndarray:
    """Codes into VERDICTS, of a launch or a group: at or above `threshold` of its roof it is
    bound by the term that wins (memory or compute), under it latency-bound; beyond the roof by
    more than the tolerance (or holding a launch that is, `above_roof`) above-roof; not
    analysable where `analysable` is False; communication where `communication` (collectives
    between GPUs: no roofline placement)."""
    import numpy as np

    bound = np.where(memory_wins, _CODE[MEMORY_BOUND], _CODE[COMPUTE_BOUND])
    verdict = np.where(efficiency >= threshold, bound, _CODE[LATENCY_BOUND])
    verdict = np.where(
        (efficiency > 1 + ABOVE_ROOF_TOLERANCE) | above_roof, _CODE[ABOVE_ROOF], verdict
    )
    verdict = np.where(analysable, verdict, _CODE[NOT_ANALYSABLE])
    return np.where(communication, _CODE[COMMUNICATION], verdict)


def names(codes: np.ndarray) -> np.ndarray:
    """The verdict of each code, as text (object array)."""
    import numpy as np

    return np.asarray(VERDICTS, dtype=object)[codes]
