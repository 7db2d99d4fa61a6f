"""Operator models applied to a trace's launches: FLOPs and minimum bytes on the working kernel."""

from __future__ import annotations

import re

import numpy as np
import orjson
import pandas as pd

from rooflint.core import opmodels, opmodels_llm, opmodels_split, provenance, schema
from rooflint.core.hostcopies import Copy
from rooflint.core.provenance import Provenance

from . import kineto_moe, kineto_triton
from .kineto_events import Columns, arguments, kernel_kwargs

MODEL_BYTES_NOTE = (
    "modelled launches have no measured DRAM bytes: their memory term uses the "
    "operator's minimum traffic from its shapes (what it must move unless its tensors "
    "stay in L2 between kernels), "
    "so each verdict compares the kernel with an ideal one that moves only those "
    "bytes and any excess traffic counts as headroom; pass an ncu/rocprof export "
    "of the same run for measured traffic"
)
HOST_COPY = "host transfer (bounded by the host link, not by device roofs)"
OTHER_COPY = "copy of another kind (peer or unknown: no link roof for it)"
# A host copy's name, as CUPTI (Kineto, Nsight Systems) and ROCm write it: "Memcpy HtoD (Pageable
# -> Device)", "Memcpy DtoH (Device -> Pinned)", "Memcpy HtoD (Host -> Device)", "Memcpy DtoH".
COPY_NAME = re.compile(r"^Memcpy (HtoD|DtoH)(?: \((\w+) -> (\w+)\))?$")
_HOST_MEMORY = {"Pageable": "pageable", "Pinned": "pinned"}
NO_MODEL = "no operator model"
NO_SHAPES = "no input shapes recorded (profile with record_shapes=True)"
UNFIT_SHAPES = (
    "its recorded shapes do not give the model what it needs (a tensor list recorded as [], "
    "as older PyTorch records aten::cat's inputs, or an argument missing)"
)
NO_OPERATOR = (
    "no CPU operator in the trace (launched outside any recorded operator, or its runtime call "
    "was not recorded)"
)
AUXILIARY = "auxiliary kernel of its operator (the model's work is on the operator's main kernel)"


def argument_text(ops: Columns, used: np.ndarray) -> tuple[list, list]:
    """Input Dims and Input type of operators `used`, as JSON text (dims) and ", "-joined types."""
    packed = ops.get("arguments")
    texts: dict[bytes, tuple] = {}  # operators repeat their arguments: each decoded once
    dims_text, types_text = [], []
    for i in used.tolist():
        text = texts.get(packed[i])
        if text is None:
            dims, types, _ = arguments(packed[i])
            types = ", ".join(map(str, types)) if isinstance(types, list) else None
            text = texts[packed[i]] = (_json(dims), types)
        dims_text.append(text[0])
        types_text.append(text[1])
    return dims_text, types_text


def kernel_names(launches: pd.DataFrame) -> np.ndarray:
    """The launches' kernel names ("" for none) as an object array in which equal names are one
    str: to_numpy made one per launch (150 MB of a 1 GB trace's peak, held while modelling)."""
    codes, uniques = pd.factorize(schema.filled(launches["kernel"], ""))
    return np.asarray(uniques, dtype=object)[codes]


def _json(value) -> str | None:
    return orjson.dumps(value).decode() if value is not None else None


def apply(
    launches: pd.DataFrame, vendor: str, notes: list[str], ops: Columns | None = None
) -> pd.DataFrame:
    """Fill modelled FLOPs and bytes into `launches` (trace columns `op`, `_op_index`, ...)."""
    n = len(launches)
    flops = np.full(n, np.nan)
    bytes_min = np.full(n, np.nan)
    klass = np.full(n, None, dtype=object)
    reason = np.full(n, NO_MODEL, dtype=object)
    assumed = np.zeros(n, dtype=bool)  # FP32 GEMMs whose kernel name leaves the roof open
    estimated = np.zeros(n, dtype=bool)  # torch.compile Triton kernels: estimates
    bytes_estimated = np.zeros(n, dtype=bool)  # fused MoE GEMMs: the experts hit are estimated
    if ops is not None and "activity" in launches:
        out = (flops, bytes_min, klass, reason, bytes_estimated)
        _operators(launches, ops, vendor, out, notes, assumed)
        _triton(launches, ops, vendor, (flops, bytes_min, klass, reason, estimated), notes)
        _copies(launches, flops, bytes_min, klass, reason)
        launches["roof_assumed"] = pd.array(assumed, dtype="boolean")
    return _store(launches, flops, bytes_min, klass, reason, notes, (estimated, bytes_estimated))


def _operators(launches, ops, vendor, out: tuple, notes, assumed) -> None:
    """Each operator's work on its main kernel (a fused MoE's on its kernels stage by stage);
    `out`: the flops, bytes, class, reason and bytes-estimated arrays it fills."""
    flops, bytes_min, klass, reason, _ = out
    owner = launches["_op_index"].to_numpy()
    kernel = (
        (launches["activity"] == "kernel").to_numpy()
        & (~launches["graph_replay"].to_numpy() | launches["_captured"].to_numpy())
        & (owner >= 0)
    )
    if not kernel.any():
        return
    main = _main_kernels(launches, owner, kernel)
    reason[kernel] = AUXILIARY
    cache: dict = {}
    names, packed = ops.get("name"), ops.get("arguments")
    tf32_note = False
    kernels = kernel_names(launches)
    ranges = launches["range"].to_numpy(dtype=object, na_value=None)
    durations = launches["duration_s"].to_numpy(dtype=float, na_value=np.nan)
    split = _rows_by_owner(owner, kernel & np.isin(owner, _split_ops(names)))
    triton = _triton_names(np.array(names + [""], dtype=object)[owner])  # _triton's
    for row in np.flatnonzero(main & ~triton).tolist():
        i = owner[row]
        typed = kernels[row] if names[i] in opmodels.KERNEL_TYPED else ""
        step = ranges[row] if names[i] in opmodels_llm.NEEDS_LENGTHS else None
        key = (names[i], packed[i], typed, step)
        if key not in cache:
            parsed = arguments(packed[i])  # (dims, types, concrete inputs), decoded once per key
            cache[key] = (*_model(names[i], parsed, typed, step), parsed[2], parsed[0])
        work, why, concrete, dims = cache[key]
        if work is None:
            known = _known(names[i])
            reason[row] = why or _unmodelled(known, dims)
            continue
        allow_tf32 = (
            names[i].endswith("cudnn_convolution") and str((concrete or [""])[-1]) == "True"
        )
        for at, done in _doers(row, work, split.get(i), kernels, durations):
            klass[at] = opmodels.compute_class(done, vendor, kernels[at], allow_tf32)
            flops[at], bytes_min[at], reason[at] = done.flops, done.bytes_min, ""
            fp32_matrix = done.unit == "matrix" and done.precision == "fp32"
            tf32_note |= fp32_matrix
            assumed[at] = (
                fp32_matrix and vendor != "AMD" and not allow_tf32
                and opmodels.fp32_path(kernels[at]) is None
            )  # fmt: skip
    _moe(launches, ops, kernel, vendor, out, notes)
    _unmodelled_helpers(owner, kernel, main, reason)
    if assumed.any():
        schema.add_note(launches, opmodels.FP32_ASSUMED, assumed)
    if tf32_note:
        notes.append(_fp32_note(vendor))


def _moe(launches, ops, kernel, vendor: str, out: tuple, notes: list[str]) -> None:
    """The fused-MoE calls' kernels, stage by stage (parsers/kineto_moe.py), and a note."""
    note = kineto_moe.apply(launches, ops, kernel, vendor, out, AUXILIARY)
    if note is not None:
        notes.append(note)


def _model(name: str, parsed: tuple, typed: str, step: str | None):
    """(Work or None, why) of operator `name` from its (dims, types, concrete) arguments; the
    Work of a split operator is its list of parts (core/opmodels_split.py)."""
    if opmodels_llm.handles(name):
        return opmodels_llm.model(name, *parsed, opmodels_llm.Lengths.of(step))
    if opmodels_split.handles(name):
        return opmodels_split.parts(name, *parsed), ""
    return opmodels.model(name, *parsed, typed), ""


def _unmodelled(known: bool, dims) -> str:
    """Why an operator's launch has no work: no model, no shapes, or shapes the model cannot
    use."""
    if not known:
        return NO_MODEL
    return NO_SHAPES if dims is None else UNFIT_SHAPES


def _known(name: str) -> bool:
    """Whether operator `name` has a model (so launches without shapes say shapes are missing)."""
    return name in opmodels.MODELS or opmodels_llm.handles(name) or opmodels_split.handles(name)


def _split_ops(names: list) -> np.ndarray:
    """Indices of the operators whose work is split over their kernels."""
    return np.flatnonzero([opmodels_split.handles(n) for n in names])


def _rows_by_owner(owner: np.ndarray, mask: np.ndarray) -> dict[int, np.ndarray]:
    """The rows of `mask`, by the operator instance that launched them."""
    rows = np.flatnonzero(mask)
    if not len(rows):
        return {}
    return {int(k): v.to_numpy() for k, v in pd.Series(rows).groupby(owner[rows])}


def _doers(row: int, work, rows: np.ndarray | None, kernels, durations) -> list:
    """(row, Work) pairs: the main kernel `row` with the operator's Work, or, for a split
    operator (its Work a list of parts), each part on the kernel `opmodels_split.assign` picks
    among the operator's kernels `rows`."""
    if not isinstance(work, list):
        return [(row, work)]
    if rows is None:
        return [(row, opmodels_split.total(work))]
    given = opmodels_split.assign(
        work, kernels[rows].tolist(), np.nan_to_num(durations[rows]).tolist()
    )
    return [(int(rows[j]), done) for j, done in sorted(given.items())]


def _triton(launches, ops, vendor: str, out: tuple, notes: list[str]) -> None:
    """torch.compile's Triton kernels, each from the operator Inductor records around it
    (parsers/kineto_triton.py); a note says how many were modelled and from what. `out`: the
    flops, bytes, class, reason and estimated arrays it fills."""
    flops, bytes_min, klass, reason, estimated = out
    owner = launches["_op_index"].to_numpy()
    names, packed = ops.get("name"), ops.get("arguments")
    kernel = (launches["activity"] == "kernel").to_numpy()
    by_op = kernel & _triton_names(np.array(names + [""], dtype=object)[owner])
    by_name = kernel & _triton_names(kernel_names(launches))
    reason[by_name & ~by_op] = kineto_triton.NAME_ONLY
    rows = np.flatnonzero(by_op).tolist()
    cache: dict = {}
    for row in rows:
        i = owner[row]
        if (names[i], packed[i]) not in cache:
            args = arguments(packed[i])
            kwargs = kernel_kwargs(packed[i])
            cache[names[i], packed[i]] = kineto_triton.model(names[i], *args, kwargs)
        work, why = cache[names[i], packed[i]]
        reason[row] = why or ""
        if work is None:
            continue
        flops[row], bytes_min[row] = work.flops, work.bytes_min
        klass[row] = opmodels.compute_class(work, vendor)
        estimated[row] = work.unit == "vector"
    if rows:
        notes.append(kineto_triton.count_note(len(rows), flops[rows], bytes_min[rows]))


def _triton_names(values: np.ndarray) -> np.ndarray:
    """Whether each name is a Triton kernel's (worked out once per distinct name)."""
    codes, distinct = pd.factorize(values)
    return np.array([kineto_triton.is_triton(str(n)) for n in distinct] + [False])[codes]


def _unmodelled_helpers(owner, kernel, main, reason) -> None:
    """The other kernels of an operator without a model (or shapes) say so, as its main one does:
    "auxiliary" would claim the work was counted elsewhere."""
    rows = np.flatnonzero(main)
    by_owner = pd.Series(reason[rows], index=owner[rows])
    unmodelled = by_owner[by_owner != ""]
    helpers = kernel & ~main & np.isin(owner, unmodelled.index.to_numpy())
    reason[helpers] = unmodelled.reindex(owner[helpers]).to_numpy()


def _fp32_note(vendor: str) -> str:
    if vendor == "AMD":
        return "FP32 GEMMs and convolutions are counted against the FP32 matrix (MFMA) roof"
    return (
        "FP32 GEMMs are counted against the TF32 tensor roof when the kernel name says so "
        "(tf32, CUTLASS tensorop_s1688), against the FP32 vector roof when it names a SIMT "
        "kernel (sgemm, gemv) and, where it says neither, against the FP32 vector roof "
        "(PyTorch's default, torch.backends.cuda.matmul.allow_tf32=False; such launches say "
        "so); cuDNN convolutions follow their allow_tf32 argument (TF32 roof when True)"
    )


HELPER_KERNEL = opmodels_split.HELPERS  # a GEMM's or a convolution's helpers: never its work


def _main_kernels(launches: pd.DataFrame, owner: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Per operator instance, its longest kernel that is no helper (`opmodels_split.HELPERS`):
    the one that does the work (a memset, split-K reduce or layout transpose beside a GEMM or a
    convolution stays linked to the operator, with no FLOPs of its own)."""
    codes, kernels = pd.factorize(schema.filled(launches["kernel"], ""))
    helper = np.array([bool(HELPER_KERNEL.search(k)) for k in kernels], dtype=bool)[codes]
    frame = pd.DataFrame(
        {
            "owner": owner[kernel],
            "helper": helper[kernel],
            "t": launches["duration_s"].to_numpy()[kernel],
            "row": np.flatnonzero(kernel),
        }
    )
    frame = frame.sort_values(
        ["owner", "helper", "t", "row"], ascending=[True, True, False, True], kind="mergesort"
    )
    main = np.zeros(len(launches), dtype=bool)
    main[frame.drop_duplicates("owner")["row"].to_numpy()] = True
    return main


def _copies(launches, flops, bytes_min, klass, reason) -> None:
    """Fills and device-to-device copies move the bytes the trace records, with no FLOPs; host
    copies are marked with their Copy code and bytes (`collective`, `comm_bytes`) for the host
    link's verdict (core/hostcopies.py); other copies stay without one."""
    activity = launches["activity"].to_numpy(dtype=object)
    name = kernel_names(launches)
    moved = launches["_bytes_arg"].to_numpy()
    memset = activity == "gpu_memset"
    dtod = activity == "gpu_memcpy"  # a DtoD copy by its name, looked at on the copies alone:
    dtod[dtod] = ["DtoD" in n for n in name[dtod]]  # a fixed-width copy of every name was 600 MB
    ok = (memset | dtod) & ~np.isnan(moved)
    flops[ok] = 0.0
    bytes_min[ok] = np.where(dtod[ok], 2 * moved[ok], moved[ok])  # a device copy reads and writes
    klass[ok] = "vector_fp32"
    reason[ok] = ""
    other = (activity == "gpu_memcpy") & ~dtod
    host = _mark_host_copies(launches, name, other, moved)
    reason[host] = HOST_COPY
    reason[other & ~host] = OTHER_COPY


def _mark_host_copies(launches, name: np.ndarray, copies: np.ndarray, moved) -> np.ndarray:
    """The host copies among `copies` (a mask), marked with their Copy code in `collective` and
    their bytes in `comm_bytes`; each distinct name is read once, not per launch."""
    codes, distinct = pd.factorize(name)
    copy_of = np.array([copy_code(str(n)) for n in distinct] + [None], dtype=object)
    named = np.array([c is not None for c in copy_of], dtype=bool)
    host = copies & named[codes]
    if host.any() and "collective" in launches:
        collective = launches["collective"].to_numpy(dtype=object, na_value=None)
        marked = np.where(host, copy_of[codes], collective)
        launches["collective"] = pd.array(marked, dtype="string")
        size = launches["comm_bytes"].to_numpy(dtype=float)
        launches["comm_bytes"] = np.where(host, moved, size)
    return host


def copy_code(name: str) -> str | None:
    """The Copy code of a host copy's name (None for any other name)."""
    found = COPY_NAME.match(name)
    if found is None:
        return None
    direction, source, target = found.groups()
    memory = _HOST_MEMORY.get(source if direction == "HtoD" else target or "")
    return str(Copy(f"{direction} {memory}" if memory else direction))


def _store(launches, flops, bytes_min, klass, reason, notes, estimates: tuple) -> pd.DataFrame:
    """`estimates`: the launches whose FLOPs and bytes are estimates, and those whose bytes
    alone are."""
    estimated, bytes_estimated = estimates
    out = launches
    measured_ops = schema.flops(out).notna().to_numpy()
    modelled = ~np.isnan(flops) & ~measured_ops
    for cls in set(klass[modelled].tolist()):
        where = modelled & (klass == cls)
        column = out["ops_" + cls].to_numpy(copy=True)
        column[where] = flops[where]
        out["ops_" + cls] = column
    measured_bytes = out["bytes_dram"].notna().to_numpy()
    use_model = ~np.isnan(bytes_min) & ~measured_bytes
    out["bytes_dram"] = np.where(use_model, bytes_min, out["bytes_dram"].to_numpy())
    out["bytes_model_min"] = bytes_min
    n = len(out)
    out["flops_source"] = provenance.column(
        n,
        (measured_ops, Provenance.COUNTERS),
        (modelled & estimated, Provenance.ESTIMATE),
        (modelled, Provenance.MODEL),
    )
    out["bytes_source"] = provenance.column(
        n,
        (measured_bytes, Provenance.COUNTERS),
        (use_model & (estimated | bytes_estimated), Provenance.ESTIMATE),
        (use_model, Provenance.MODEL),
    )
    if (modelled & estimated).any():
        schema.add_note(out, kineto_triton.ESTIMATE_NOTE, modelled & estimated)
    out["excess_traffic"] = np.full(n, np.nan)
    if use_model.any():  # each launch's note follows from bytes_source (provenance.note_bytes)
        notes.append(MODEL_BYTES_NOTE)
    _mark_unmodelled(out, reason)
    return out.drop(columns=[c for c in out.columns if c.startswith("_")])


def _why_text(op: str) -> str:
    why = opmodels.no_model_why(op)
    return f" ({why})" if why else ""


def _mark_unmodelled(out: pd.DataFrame, reason: np.ndarray) -> None:
    """`missing` says why a launch has no FLOPs/bytes: no model for its operator, auxiliary,
    host."""
    need = schema.flops(out).isna().to_numpy() & (reason != "")
    op = (
        out["op"].fillna("(no operator)").to_numpy(dtype=object)
        if "op" in out
        else np.full(len(out), "")
    )
    codes, distinct = pd.factorize(op)  # Series.map would call _why_text once per launch
    unmodelled = [f"no operator model for {o}{_why_text(o)}" for o in distinct]
    # the words made once per operator: made per launch they were a fixed-width array (370 MB
    # of a 1 GB trace's peak)
    words = np.where(reason == NO_MODEL, np.array(unmodelled + [""], dtype=object)[codes], reason)
    if "op" in out:  # no operator launched it: nothing to model, and the words say so
        words = np.where((reason == NO_MODEL) & out["op"].isna().to_numpy(), NO_OPERATOR, words)
    schema.add_missing(out, "ops", words.astype(object), need)
    no_bytes = need & out["bytes_dram"].isna().to_numpy()
    schema.add_missing(out, "bytes_dram", "no counters and no model", no_bytes)
