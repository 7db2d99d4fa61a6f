"""Host copies against the host link: a host-to-device or device-to-host copy is bytes over the
link to the host CPU (PCIe, Grace Hopper's NVLink-C2C), judged as a collective is against its
link roof (core/collectives.py): time at the roof = bytes / host-link bandwidth per direction.

A trace reader marks each host copy in the `collective` column with its Copy code (direction and
host memory, from the copy's name) and its bytes in `comm_bytes`; its kind stays memcpy, so the
timeline's breakdown keeps memcpy as its own class.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import pandas as pd

# Below this a copy's time is the fixed cost of one copy, not bytes over the link: a constant
# ~10 µs per cudaMemcpy up to about 8 KB, time rising linearly with size only beyond
# (University of Virginia, "Memory Transfer Overhead", cudaMemcpy over PCIe 2.0, both directions,
# pinned and pageable), 5-7 µs per cudaMemcpyAsync on current drivers (Wu et al., "DualPath",
# 2026, section 5.2). 128 KiB take 4.2 µs at PCIe 4.0's 31.5 GB/s, under that fixed cost: below
# it the copy is latency-bound. A fixed threshold read off those measurements, not a fit to this
# system: the report says so.
LATENCY_BYTES = 128 << 10
LATENCY = "copy_latency"  # the limiter of a host copy under LATENCY_BYTES


class Copy(StrEnum):
    """A host copy's direction and host memory: the `collective` column's value of a host copy."""

    HTOD_PAGEABLE = "HtoD pageable"
    HTOD_PINNED = "HtoD pinned"
    HTOD = "HtoD"  # the name does not say the host memory (ROCm: "Host -> Device")
    DTOH_PAGEABLE = "DtoH pageable"
    DTOH_PINNED = "DtoH pinned"
    DTOH = "DtoH"


# Pageable host memory: the driver stages each copy through a pinned bounce buffer.
PAGEABLE = (Copy.HTOD_PAGEABLE, Copy.DTOH_PAGEABLE)


class Missing(StrEnum):
    """Why a host copy has no verdict against the host link, in the words every format prints."""

    NO_BYTES = "no byte count for the host copy (its trace event carries no bytes)"
    NO_HOST_LINK = "device has no host-link roof (pass a device file with [host_link])"
    NO_DURATION = "missing duration of the host copy"


def is_host_copy(launches: pd.DataFrame) -> np.ndarray:
    """Launches a reader marked as host copies (a Copy code in `collective`, kind memcpy)."""
    if "collective" not in launches or "kind" not in launches:
        return np.zeros(len(launches), dtype=bool)
    memcpy = (launches["kind"].astype(object) == "memcpy").to_numpy(dtype=bool)
    marked = launches["collective"].isin([c.value for c in Copy]).to_numpy(dtype=bool)
    return memcpy & marked


def pageable(launches: pd.DataFrame) -> np.ndarray:
    """Host copies from or to pageable host memory."""
    if "collective" not in launches:
        return np.zeros(len(launches), dtype=bool)
    codes = [c.value for c in PAGEABLE]
    return is_host_copy(launches) & launches["collective"].isin(codes).to_numpy(dtype=bool)


def judge(
    host: np.ndarray, size: np.ndarray, duration: np.ndarray, link: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Per launch, 1.0 where a host copy is placed against its host link (NaN elsewhere) and the
    reason a host copy is not ("" where there is none)."""
    factor, reasons = np.full(len(host), np.nan), [""] * len(host)
    for row in np.flatnonzero(host).tolist():
        why = [
            (np.isnan(link[row]), Missing.NO_HOST_LINK),
            (not duration[row] > 0, Missing.NO_DURATION),
            (not size[row] > 0, Missing.NO_BYTES),
        ]
        reasons[row] = next((str(reason) for bad, reason in why if bad), "")
        if not reasons[row]:
            factor[row] = 1.0
    return factor, reasons
