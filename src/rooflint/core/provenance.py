"""Where a launch's FLOPs and DRAM bytes came from, as codes, and the notes made from them."""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import pandas as pd

from rooflint.core import schema


class Provenance(StrEnum):
    """The source of a quantity, as the `flops_source` and `bytes_source` columns hold it."""

    COUNTERS = "counters"  # the profiler's counters measured it
    MODEL = "model"  # an operator model worked it out from the trace's shapes
    # an estimate: from a generated kernel's arguments and name (torch.compile Triton kernels:
    # which buffers it reads and writes, and the arithmetic of its fused operations, are guessed),
    # or a fused MoE's weight bytes (which experts the router picked is not recorded)
    ESTIMATE = "estimate"
    # ncu's speed-of-light percentages (core.speed_of_light): estimates, never counted FLOPs or
    # bytes
    THROUGHPUT_PCT = "throughput_pct"  # DRAM bytes: DRAM throughput % x DRAM peak x duration
    PIPE_UTILISATION = "pipe_utilisation"  # compute time: the busiest SM pipe's share x duration
    SM_THROUGHPUT_PCT = "sm_throughput_pct"  # compute time: SM throughput % x duration


# The columns' one category list, whatever a table holds (sorted, as every text column's).
DTYPE = pd.CategoricalDtype(sorted(p.value for p in Provenance))
COLUMNS = ["flops_source", "bytes_source", "compute_source"]
# The sources that are ncu's percentages, not a measurement or a model of the work.
NCU_PERCENTAGES = (
    Provenance.THROUGHPUT_PCT,
    Provenance.PIPE_UTILISATION,
    Provenance.SM_THROUGHPUT_PCT,
)
# A launch whose DRAM bytes the operator model gave, by where its bytes come from now.
BYTES_NOTES = {
    Provenance.MODEL: "DRAM bytes = operator minimum from shapes",
    Provenance.ESTIMATE: "DRAM bytes = estimate, not a measurement (see the launch's notes)",
    Provenance.COUNTERS: "measured DRAM bytes from counters",  # lent by a counter export
}


def column(n: int, *sources: tuple[np.ndarray, Provenance]) -> pd.Categorical:
    """A provenance column of n rows: each row the source of the first (mask, source) pair
    whose mask holds there, NA where none does."""
    codes = np.full(n, -1, dtype=np.int8)
    for mask, source in reversed(sources):
        codes = np.where(np.asarray(mask, dtype=bool), DTYPE.categories.get_loc(source), codes)
    return pd.Categorical.from_codes(codes, dtype=DTYPE)


def changed(values: pd.Series, rows: np.ndarray, source: Provenance) -> pd.Categorical:
    """`values` (a provenance column) with `rows` (positions) now from `source`."""
    codes = pd.Categorical(values, dtype=DTYPE).codes.copy()
    codes[rows] = DTYPE.categories.get_loc(source)
    return pd.Categorical.from_codes(codes, dtype=DTYPE)


def has(values: pd.Series, *sources: Provenance) -> np.ndarray:
    """Rows of a provenance column that come from one of `sources` (NA: none)."""
    return pd.Series(values).isin(list(sources)).to_numpy(dtype=bool)


def note_bytes(launches: pd.DataFrame, modelled: np.ndarray) -> None:
    """Each launch whose DRAM bytes the operator model gave (`modelled`) gets the note of
    where they come from now: the model, or counters lent to it. Once the sources are settled
    (a trace reader leaves it to rooflint.join), so the words follow from `bytes_source`."""
    for source, note in BYTES_NOTES.items():
        where = modelled & has(launches["bytes_source"], source)
        if where.any():
            schema.add_note(launches, note, where)


def estimated(launches: pd.DataFrame) -> np.ndarray:
    """Rows whose DRAM bytes or compute time are ncu's percentages (NCU_PERCENTAGES)."""
    out = np.zeros(len(launches), dtype=bool)
    for column in ("bytes_source", "compute_source"):
        if column in launches:
            out |= launches[column].isin([s.value for s in NCU_PERCENTAGES]).to_numpy(dtype=bool)
    return out
