"""Where an ncu export lacks counters, its speed-of-light percentages stand in: the estimated
DRAM bytes and compute times, their sources and notes (issue 30; core.analysis uses them)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import provenance, schema
from rooflint.core.provenance import Provenance

DRAM_NOTE = "DRAM bytes estimated from ncu's DRAM throughput % (x the DRAM roof x duration)"
# The columns `Estimates.marked` gives a table with estimates (every row of it).
MARKS = ["bytes_source", "compute_source"]
COMPUTE_NOTES = {
    Provenance.PIPE_UTILISATION: "compute time estimated from ncu's busiest-pipe utilisation "
    "(not FLOPs)",
    Provenance.SM_THROUGHPUT_PCT: "compute time estimated from ncu's SM throughput % (not FLOPs)",
}


class Estimates:
    """Where an ncu export lacks counters, ncu's percentages of peak (schema.SOL_COLUMNS) stand
    in: DRAM bytes = DRAM throughput x the DRAM roof at the measured DRAM clock x duration
    (bytes_source throughput_pct); where no FLOP counter has a value, the compute time = the
    busiest pipe's share (else the SM throughput) x duration, limited by that pipe ("pipe_alu")
    or "sm" (compute_source pipe_utilisation / sm_throughput_pct). With both, efficiency is
    ncu's larger percentage and the verdict NVIDIA's speed-of-light rule: the same rule."""

    def __init__(self, launches: pd.DataFrame, duration, dram_roof, known: np.ndarray):
        """`dram_roof`: each launch's DRAM roof at its DRAM clock (byte/s, NaN where none);
        `known`: the launch has a device."""
        n = len(launches)
        measured = launches["bytes_dram"].to_numpy(dtype=float)
        estimate = _column(launches, "dram_throughput") * dram_roof * duration
        self.bytes_estimated = np.isnan(measured) & ~np.isnan(estimate)
        self.bytes_dram = np.where(self.bytes_estimated, estimate, measured)
        no_flops = schema.all_na(launches, schema.OPS)
        pipe_share = _column(launches, "pipe_utilisation")
        sm_share = _column(launches, "sm_throughput")
        self.by_pipe = no_flops & ~np.isnan(pipe_share)
        self.by_sm = no_flops & ~self.by_pipe & ~np.isnan(sm_share)
        self.compute = (self.by_pipe | self.by_sm) & known
        self.t_compute = np.where(self.by_pipe, pipe_share, sm_share) * duration
        pipes = launches["pipe"] if "pipe" in launches else schema.repeated(None, n)
        codes, names = pd.factorize(pd.Series(pipes, copy=False), use_na_sentinel=True)
        labels = [f"pipe_{p}" for p in names] + ["sm"]
        code = np.where(self.by_pipe, codes, np.where(self.by_sm, len(names), -1))
        self.limiter = (np.where(self.compute, code, -1), labels)

    def marked(self, kept: pd.DataFrame) -> pd.DataFrame:
        """The launch table with the estimated DRAM bytes in place, their sources (bytes_source,
        compute_source) and a note on each estimated launch; unchanged where none was."""
        if not (self.bytes_estimated.any() or self.compute.any()):
            return kept
        by_pipe, by_sm = self.compute & self.by_pipe, self.compute & self.by_sm
        sources = _sources(kept, self.bytes_estimated, by_pipe, by_sm)
        kept = kept.assign(bytes_dram=self.bytes_dram, **sources)
        for where, note in [
            (self.bytes_estimated, DRAM_NOTE),
            (by_pipe, COMPUTE_NOTES[Provenance.PIPE_UTILISATION]),
            (by_sm, COMPUTE_NOTES[Provenance.SM_THROUGHPUT_PCT]),
        ]:
            if where.any():
                schema.add_note(kept, note, where)
        return kept


def as_joined(piece: pd.DataFrame, read: pd.Index, joined_read: pd.Index) -> dict:
    """MARKS of the rows of a file's analysed table (`piece`; `read`: the columns of its table
    as read) where they are rows of a joined table that has estimates (`joined_read`: the
    columns of the joined table as read), as `marked` gives them there: each row's own
    estimates (a row's alone), else counters where counted; bytes_source as read where the
    joined table had one (NA for a file that had none), not made anew."""
    own = {m: piece[m] if m in piece else pd.Series(np.nan, piece.index) for m in MARKS}
    estimated = provenance.has(own["bytes_source"], Provenance.THROUGHPUT_PCT)
    by_pipe = provenance.has(own["compute_source"], Provenance.PIPE_UTILISATION)
    by_sm = provenance.has(own["compute_source"], Provenance.SM_THROUGHPUT_PCT)
    kept = piece.drop(columns=[m for m in MARKS if m in piece and m not in read])
    if "bytes_source" in joined_read and "bytes_source" not in kept:
        kept = kept.assign(bytes_source=provenance.column(len(kept)))  # NA as read
    return _sources(kept, estimated, by_pipe, by_sm)


def _sources(kept: pd.DataFrame, estimated, by_pipe, by_sm) -> dict[str, pd.Categorical]:
    """bytes_source (estimated: DRAM bytes from the throughput %; as read elsewhere, where the
    table has it, else counters where counted) and compute_source (the pipe or SM estimates,
    else counters where a FLOP counter has a value) of a table with estimates."""
    n = len(kept)
    if "bytes_source" in kept:
        rows = np.flatnonzero(estimated)
        source = provenance.changed(kept["bytes_source"], rows, Provenance.THROUGHPUT_PCT)
    else:
        counted = ~np.isnan(kept["bytes_dram"].to_numpy(dtype=float))
        source = provenance.column(
            n, (estimated, Provenance.THROUGHPUT_PCT), (counted, Provenance.COUNTERS)
        )
    flops = ~schema.all_na(kept, schema.OPS)
    compute = provenance.column(
        n,
        (by_pipe, Provenance.PIPE_UTILISATION),
        (by_sm, Provenance.SM_THROUGHPUT_PCT),
        (flops, Provenance.COUNTERS),
    )
    return {"bytes_source": source, "compute_source": compute}


def _column(launches: pd.DataFrame, name: str) -> np.ndarray:
    if name not in launches:
        return np.full(len(launches), np.nan)
    return launches[name].to_numpy(dtype="float64", na_value=np.nan)
