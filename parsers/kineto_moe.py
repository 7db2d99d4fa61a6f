"""Fused mixture-of-experts operators in a trace: each kernel of a vllm::moe_forward call gets the
work of its stage (core/opmodels_moe.py), from the call's inputs and the operators it encloses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint.core import opmodels, opmodels_moe, schema
from rooflint.core.opmodels_moe import Child, Stage

from .kineto_events import Columns, arguments

UNMODELLED = "fused MoE without a model: {}"
WANTED = {opmodels_moe.ALLOCATION, "TopK"}  # the enclosed operators the model reads


def apply(
    launches: pd.DataFrame,
    ops: Columns,
    kernel: np.ndarray,
    vendor: str,
    out: tuple,
    auxiliary: str,
) -> str | None:
    """Fill the work of every fused-MoE call's kernels into `out` (flops, bytes, class, reason,
    bytes-estimated arrays); `kernel`: the launches that are kernels with a known operator; the
    call's kernels of no stage get the reason `auxiliary`. Returns the trace's note on them
    (None without a modelled call)."""
    owner = launches["_op_index"].to_numpy()
    calls = _calls(launches, ops, kernel, owner)
    if not calls:
        return None
    kernels = schema.filled(launches["kernel"], "").to_numpy(dtype=object)
    inside = _Enclosed(ops)
    notes: dict[str, list[int]] = {}
    cache: dict = {}  # the calls of a trace repeat a few kernel sequences and shapes
    modelled: dict[str, int] = {}  # calls modelled, by their expected experts hit
    for call in calls:
        names = tuple(str(kernels[row]) for row in call.tolist())
        if names not in cache:
            cache[names] = opmodels_moe.stages(list(names))
        staged = [(call[i], stage) for i, stage in cache[names] if stage is not None]
        gemms = tuple(kernels[r] for r, s in staged if s in (Stage.GEMM1, Stage.GEMM2))
        key = (ops.get("arguments")[owner[call[0]]], inside.children(owner[call[0]]), gemms)
        if key not in cache:
            cache[key] = _model(*key)
        moe, why = cache[key]
        out[3][call] = auxiliary if moe is not None else UNMODELLED.format(why)
        if moe is not None:
            hit = f"{moe.experts_hit():.2f} of {moe.experts}"
            modelled[hit] = modelled.get(hit, 0) + 1
            notes.setdefault(opmodels_moe.estimate_note(moe), []).extend(
                _fill(moe, staged, vendor, out)
            )
    for text, where in notes.items():
        mask = np.zeros(len(launches), dtype=bool)
        mask[where] = True
        schema.add_note(launches, text, mask)
    return count_note(modelled, len(calls)) if modelled else None


def _calls(launches: pd.DataFrame, ops: Columns, kernel: np.ndarray, owner) -> list:
    """The kernel rows of each fused-MoE call (one operator instance), in launch order."""
    rows = np.flatnonzero(kernel)
    rows = rows[np.isin(owner[rows], _moe_ops(ops.get("name"), owner[rows]))]
    if not len(rows):
        return []
    start = launches["start_s"].to_numpy()
    rows = rows[np.lexsort((start[rows], owner[rows]))]
    return np.split(rows, np.flatnonzero(np.diff(owner[rows])) + 1)


def _fill(moe, staged: list, vendor: str, out: tuple) -> list[int]:
    """Each staged kernel's work into `out`; the rows whose bytes are estimates (the GEMMs')."""
    flops, bytes_min, klass, reason, estimated = out
    gemms = []
    for row, stage in staged:
        work = opmodels_moe.work(moe, stage)
        flops[row], bytes_min[row], reason[row] = work.flops, work.bytes_min, ""
        klass[row] = opmodels.compute_class(work, vendor)
        if stage in (Stage.GEMM1, Stage.GEMM2):
            estimated[row] = True
            gemms.append(row)
    return gemms


def _moe_ops(names: list, owners: np.ndarray) -> np.ndarray:
    distinct = np.unique(owners)
    return distinct[[names[i] in opmodels_moe.OPERATORS for i in distinct.tolist()]]


def _model(packed: bytes, children: tuple, gemms: tuple) -> tuple:
    """(Moe or None, why) of one call from its packed arguments, its enclosed operators' (name,
    packed arguments) and its GEMM kernels' names."""
    dims, types, _ = arguments(packed)
    kids = [Child(name, *(x or [] for x in arguments(args))) for name, args in children]
    return opmodels_moe.from_trace(dims, types, kids, list(gemms))


class _Enclosed:
    """The operators each operator encloses (same thread, within its interval), found through
    each thread's operators sorted by start."""

    def __init__(self, ops: Columns):
        self.ops = ops
        self.ts, self.end = ops.get("ts"), ops.get("ts") + np.nan_to_num(ops.get("dur"))
        thread = pd.Series(list(zip(ops.get("pid"), ops.get("tid"), strict=True)), dtype=object)
        self.thread = pd.factorize(thread)[0] if len(thread) else np.zeros(0, dtype=int)
        order = np.lexsort((self.ts, self.thread))
        self.by_thread = {
            t: order[self.thread[order] == t] for t in np.unique(self.thread).tolist()
        }

    def children(self, i: int) -> tuple[tuple[str, bytes], ...]:
        """(name, packed arguments) of the operators `WANTED` that operator i encloses."""
        mine = self.by_thread[int(self.thread[i])]
        lo = np.searchsorted(self.ts[mine], self.ts[i], side="left")
        hi = np.searchsorted(self.ts[mine], self.end[i], side="right")
        names, packed = self.ops.get("name"), self.ops.get("arguments")
        return tuple(
            (names[j], packed[j])
            for j in mine[lo:hi].tolist()
            if j != i and self.end[j] <= self.end[i] and names[j] in WANTED
        )


def count_note(modelled: dict[str, int], calls: int) -> str:
    """How many calls were modelled, and what their weight bytes rest on."""
    hits = ", ".join(f"{hit} experts" for hit in modelled)
    return (
        f"{sum(modelled.values())} of {calls} fused-MoE calls (vllm::moe_forward) modelled "
        "kernel by kernel (routing, quantization, GEMM1 gate+up, GEMM2 down, finalize) from the "
        "call's inputs, the top-k and buffers it allocates and its GEMM kernels' names; the "
        "GEMMs' weight bytes are estimates: which experts the router picked is not recorded, so "
        "they count the expected number hit when each token picks k distinct experts uniformly, "
        f"E(1-(1-k/E)^T) ({hits})"
    )
