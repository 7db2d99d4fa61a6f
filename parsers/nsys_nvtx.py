"""NVTX range texts read as operators: PyTorch's emit_nvtx ranges and DLProf/pyprof markers."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np
import orjson
import pandas as pd

# torch.autograd.profiler.emit_nvtx: "aten::addmm, seq = 12, op_id = 5[, sizes = [[2, 3], [3]]]"
# (sizes with record_shapes=True; newer PyTorch adds ", input_op_ids = [...]").
EMIT_NVTX = re.compile(r"^(?P<name>[^,]+?)(?P<fields>(?:, (?:seq|op_id) = \d+)+)(?P<rest>, .*)?$")
SIZES = re.compile(r", sizes = (\[.*?\])(?:, input_op_ids = |$)")
# An operator's name (aten::addmm, _C::rotary_embedding); other emit_nvtx ranges
# (record_function's "FSDP::pre_forward (shared)", "ProfilerStep#3") are annotation ranges.
OPERATOR = re.compile(r"^[A-Za-z_][\w.]*::[\w.]+$")
BARE_OPERATOR = re.compile(r"^aten::\w+$")  # without seq/op_id: ATen's namespace only
# DLProf / pyprof markers: a Python dict's repr, "{'mod': ..., 'op': 'conv2d', 'args': [...]}".
DLPROF_OP = "'op':"
DLPROF_STACK = "'funcStack':"
# DLProf dtype names -> the dtype text a PyTorch trace records (what core.opmodels reads).
DTYPES = {
    "float32": "float", "float": "float", "float64": "double", "double": "double",
    "float16": "c10::Half", "half": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool",
}  # fmt: skip
# torch.nn.functional's convolution defaults (stride 1, padding 0, dilation 1, groups 1) at the
# positions core.opmodels reads for aten::conv*d, filled where a marker records only tensors.
FUNCTIONAL_DEFAULTS = {
    f"aten::{name}": ["", "", "", "1", "0", "1", "1"] for name in ("conv1d", "conv2d", "conv3d")
}


@dataclass(frozen=True)
class Operator:
    """An operator range: its name as a PyTorch trace names it, and its packed arguments
    (orjson of (Input Dims, Input type, Concrete Inputs), as kineto_events packs them)."""

    name: str
    arguments: bytes
    shaped: bool = False  # a DLProf marker (its shapes and dtypes), not an emit_nvtx range


NO_ARGUMENTS = orjson.dumps((None, None, None))
_IDS = r"(, (?:seq|op_id) = )\d+"  # the numbers that make each emit_nvtx text unique


def read_all(texts: list) -> list[Operator | str | None]:
    """`read` of every range's text, worked out once per distinct text (emit_nvtx's seq and
    op_id numbers set aside: they tell instances apart, not operators)."""
    plain = pd.Series(texts, dtype=object).fillna("").str.replace(_IDS, r"\g<1>0", regex=True)
    codes, distinct = pd.factorize(plain)
    read_once = np.empty(len(distinct) + 1, dtype=object)
    read_once[:-1] = [read(t) for t in distinct]
    return read_once[codes].tolist()


def read(text: str | None) -> Operator | str | None:
    """An operator (emit_nvtx or DLProf), else the range's name as an annotation (a DLProf call
    stack: its funcStack), else None for an empty text."""
    if not text:
        return None
    if text.startswith("{") and (DLPROF_OP in text or DLPROF_STACK in text):
        return _dlprof(text)
    found = EMIT_NVTX.match(text)
    if found is None:  # a bare operator name: emit_nvtx's for an operator outside autograd
        return Operator(text, NO_ARGUMENTS) if BARE_OPERATOR.match(text) else text
    name = found.group("name")
    if not OPERATOR.match(name):
        return name
    sizes = SIZES.search(found.group("rest") or "")
    dims = _json(sizes.group(1)) if sizes else None
    return Operator(name, NO_ARGUMENTS if dims is None else orjson.dumps((dims, None, None)))


def _json(text: str):
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _dlprof(text: str) -> Operator | str:
    try:
        marker = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if not isinstance(marker, dict):
        return text
    if "op" not in marker:
        return str(marker.get("funcStack") or text)
    name = f"aten::{marker['op']}"
    dims, types, concrete = [], [], []
    for arg in marker.get("args") or []:
        if not isinstance(arg, dict):
            continue
        if arg.get("type") == "tensor":
            shape = arg.get("shape")
            dims.append(list(shape) if isinstance(shape, tuple | list) else [])
            types.append(DTYPES.get(str(arg.get("dtype")), str(arg.get("dtype"))))
            concrete.append("")
        else:
            dims.append([])
            types.append(str(arg.get("type", "")))
            concrete.append(str(arg.get("value", "")))
    defaults = FUNCTIONAL_DEFAULTS.get(name, [])
    concrete += defaults[len(concrete) :]
    return Operator(name, orjson.dumps((dims, types, concrete)), shaped=True)
