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
) -> tuple[int, int]:
    """Fill the work of every fused-MoE call's kernels into `out` (flops, bytes, class, reason,
    bytes-estimated arrays); `kernel`: the launches that are kernels with a known operator; the
    call's kernels of no stage get the reason `auxiliary`. Returns how many calls were
    modelled, of how many."""
    flops, bytes_min, klass, reason, estimated = out
    owner = launches["_op_index"].to_numpy()
    names = ops.get("name")
    rows = np.flatnonzero(kernel)
    rows = rows[np.isin(owner[rows], _moe_ops(names, owner[rows]))]
    if not len(rows):
        return 0, 0
    start = launches["start_s"].to_numpy()
    rows = rows[np.lexsort((start[rows], owner[rows]))]
    calls = np.split(rows, np.flatnonzero(np.diff(owner[rows])) + 1)
    kernels = schema.filled(launches["kernel"], "").to_numpy(dtype=object)
    inside = _Enclosed(ops)
    notes: dict[str, list[int]] = {}
    modelled = 0
    for call in calls:
        staged = _stages(call, kernels)
        gemms = [kernels[r] for r, s in staged if s in (Stage.GEMM1, Stage.GEMM2)]
        dims, types, _ = arguments(ops.get("arguments")[owner[call[0]]])
        moe, why = opmodels_moe.from_trace(dims, types, inside.children(owner[call[0]]), gemms)
        if moe is None:
            reason[call] = UNMODELLED.format(why)
            continue
        modelled += 1
        reason[call] = auxiliary
        for row, stage in staged:
            work = opmodels_moe.work(moe, stage)
            flops[row], bytes_min[row], reason[row] = work.flops, work.bytes_min, ""
            klass[row] = opmodels.compute_class(work, vendor)
            if stage in (Stage.GEMM1, Stage.GEMM2):
                estimated[row] = True
                notes.setdefault(opmodels_moe.estimate_note(moe), []).append(row)
    for text, where in notes.items():
        mask = np.zeros(len(launches), dtype=bool)
        mask[where] = True
        schema.add_note(launches, text, mask)
    return modelled, len(calls)


def _moe_ops(names: list, owners: np.ndarray) -> np.ndarray:
    distinct = np.unique(owners)
    return distinct[[names[i] in opmodels_moe.OPERATORS for i in distinct.tolist()]]


def _stages(call: np.ndarray, kernels: np.ndarray) -> list:
    """(row, stage) for the kernels of one call, in launch order (`opmodels_moe.stages`)."""
    names = [str(kernels[row]) for row in call.tolist()]
    return [(call[i], stage) for i, stage in opmodels_moe.stages(names) if stage is not None]


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

    def children(self, i: int) -> list[Child]:
        mine = self.by_thread[int(self.thread[i])]
        lo = np.searchsorted(self.ts[mine], self.ts[i], side="left")
        hi = np.searchsorted(self.ts[mine], self.end[i], side="right")
        names, packed = self.ops.get("name"), self.ops.get("arguments")
        out = []
        for j in mine[lo:hi].tolist():
            if j != i and self.end[j] <= self.end[i] and names[j] in WANTED:
                dims, types, concrete = arguments(packed[j])
                out.append(Child(names[j], dims or [], types or [], concrete or []))
        return out


def count_note(modelled: int, calls: int) -> str:
    return (
        f"{modelled} of {calls} fused-MoE calls (vllm::moe_forward) modelled kernel by kernel "
        "(routing, quantization, GEMM1 gate+up, GEMM2 down, finalize) from the call's inputs, "
        "the top-k and buffers it allocates and its GEMM kernels' names; the GEMMs' weight "
        "bytes are estimates (which experts the router picked is not recorded)"
    )
