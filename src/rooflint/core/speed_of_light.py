"""Where an ncu export lacks counters, its speed-of-light percentages stand in: the estimated
DRAM bytes and compute times, their sources and notes (issue 30; core.analysis uses them)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import provenance, schema
from rooflint.core.provenance import Provenance

DRAM_NOTE = "DRAM bytes estimated from ncu's DRAM throughput % (x the DRAM roof x duration)"
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
        n = len(kept)
        counted = ~np.isnan(kept["bytes_dram"].to_numpy(dtype=float))
        if "bytes_source" in kept:
            rows = np.flatnonzero(self.bytes_estimated)
            source = provenance.changed(kept["bytes_source"], rows, Provenance.THROUGHPUT_PCT)
        else:
            source = provenance.column(
                n, (self.bytes_estimated, Provenance.THROUGHPUT_PCT), (counted, Provenance.COUNTERS)
            )
        flops = ~schema.all_na(kept, schema.OPS)
        by_pipe, by_sm = self.compute & self.by_pipe, self.compute & self.by_sm
        compute = provenance.column(
            n,
            (by_pipe, Provenance.PIPE_UTILISATION),
            (by_sm, Provenance.SM_THROUGHPUT_PCT),
            (flops, Provenance.COUNTERS),
        )
        kept = kept.assign(bytes_dram=self.bytes_dram, bytes_source=source, compute_source=compute)
        for where, note in [
            (self.bytes_estimated, DRAM_NOTE),
            (by_pipe, COMPUTE_NOTES[Provenance.PIPE_UTILISATION]),
            (by_sm, COMPUTE_NOTES[Provenance.SM_THROUGHPUT_PCT]),
        ]:
            if where.any():
                schema.add_note(kept, note, where)
        return kept


def _column(launches: pd.DataFrame, name: str) -> np.ndarray:
    if name not in launches:
        return np.full(len(launches), np.nan)
    return launches[name].to_numpy(dtype="float64", na_value=np.nan)
