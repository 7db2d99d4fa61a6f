"""FLOPs and minimum bytes of PyTorch operators from their input shapes and dtypes (pure maths).

One function per operator family, each with its formula; `MODELS` maps operator names to them.
A model sees the operator as torch.profiler records it with `record_shapes=True`: `dims` (one
entry per argument: a list of sizes for a tensor, [] for a scalar, a list of lists for a tensor
list), `types` (the dtype text per argument, e.g. "c10::BFloat16", "float") and `concrete`
(the printed value of scalar arguments, "" for tensors). It returns a Work or None when the shapes
do not fit. Minimum bytes are the operator's inputs read once plus its outputs written once: the
least DRAM traffic any implementation could have, so a verdict built on them bounds traffic from
below. Elementwise, normalisation and softmax arithmetic on 16-bit types runs in FP32 in PyTorch's
kernels (its "opmath" type), so those FLOPs count against the FP32 vector roof.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

# dtype text in a trace -> (canonical precision, bytes per element)
DTYPES = {
    "float": ("fp32", 4),
    "double": ("fp64", 8),
    "c10::Half": ("fp16", 2),
    "c10::BFloat16": ("bf16", 2),
    "c10::Float8_e4m3fn": ("fp8", 1),
    "c10::Float8_e5m2": ("fp8", 1),
    "c10::Float8_e4m3fnuz": ("fp8", 1),
    "c10::Float8_e5m2fnuz": ("fp8", 1),
    "long int": ("int64", 8),
    "int": ("int32", 4),
    "short int": ("int16", 2),
    "signed char": ("int8", 1),
    "unsigned char": ("uint8", 1),
    "bool": ("bool", 1),
}


@dataclass(frozen=True)
class Work:
    """What an operator must do: `flops` on `unit` ("matrix" or "vector") at `precision`
    ("fp32", "bf16", ...) and at least `bytes_min` bytes of device-memory traffic."""

    flops: float
    unit: str
    precision: str
    bytes_min: float


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _tensors(dims, types) -> list[tuple[list[int], str]]:
    """(shape, dtype text) of every tensor argument (scalars, lists and None left out)."""
    return [
        (d, t)
        for d, t in zip(dims, types, strict=False)
        if t in DTYPES and isinstance(d, list) and all(isinstance(x, int) for x in d) and d
    ]


def _size(shape, dtype: str) -> float:
    return float(_numel(shape) * DTYPES[dtype][1])


def _precision(dtype: str) -> str:
    return DTYPES[dtype][0]


def _flag(concrete, index: int) -> bool:
    return index < len(concrete) and str(concrete[index]).strip() in ("True", "1", "true")


def _ints(text) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", str(text))]


# ---- GEMM family: 2·M·N·K per product, times the batch ----------------------------------------


def gemm(m: int, n: int, k: int, batch: int, dtype: str, extra_bytes: float = 0.0) -> Work:
    """2·batch·M·N·K FLOPs on the matrix unit; bytes = A (M×K) + B (K×N) + C (M×N) per batch."""
    size = DTYPES[dtype][1]
    bytes_min = batch * (m * k + k * n + m * n) * size + extra_bytes
    return Work(2.0 * batch * m * n * k, "matrix", _precision(dtype), float(bytes_min))


def mm(dims, types, concrete) -> Work | None:
    """aten::mm(A[M,K], B[K,N]): 2·M·N·K."""
    (a, ta), (b, _) = _tensors(dims, types)[:2]
    return gemm(a[0], b[1], a[1], 1, ta)


def addmm(dims, types, concrete) -> Work | None:
    """aten::addmm(bias, A[M,K], B[K,N]): 2·M·N·K (the bias add is not counted); bytes add the
    bias."""
    (c, tc), (a, ta), (b, _) = _tensors(dims, types)[:3]
    return gemm(a[0], b[1], a[1], 1, ta, _size(c, tc))


def bmm(dims, types, concrete) -> Work | None:
    """aten::bmm(A[B,M,K], B[B,K,N]): 2·B·M·N·K."""
    (a, ta), (b, _) = _tensors(dims, types)[:2]
    return gemm(a[1], b[2], a[2], a[0], ta)


def baddbmm(dims, types, concrete) -> Work | None:
    """aten::baddbmm(bias, A[B,M,K], B[B,K,N]): 2·B·M·N·K; bytes add the bias."""
    (c, tc), (a, ta), (b, _) = _tensors(dims, types)[:3]
    return gemm(a[1], b[2], a[2], a[0], ta, _size(c, tc))


def matmul(dims, types, concrete) -> Work | None:
    """aten::matmul(A[...,M,K], B[...,K,N]) with broadcast batch dims: 2·batch·M·N·K
    (a 1-D operand is a single row or column)."""
    (a, ta), (b, _) = _tensors(dims, types)[:2]
    a2 = [1] + a if len(a) == 1 else a
    b2 = b + [1] if len(b) == 1 else b
    batch = max(_numel(a2[:-2]), _numel(b2[:-2]))
    return gemm(a2[-2], b2[-1], a2[-1], batch, ta)


def linear(dims, types, concrete) -> Work | None:
    """aten::linear(x[...,K], W[N,K], bias[N]?): 2·rows·N·K with rows the product of x's
    leading dims; bytes add the bias."""
    tensors = _tensors(dims, types)
    (x, tx), (w, _) = tensors[:2]
    bias = _size(*tensors[2]) if len(tensors) > 2 else 0.0
    return gemm(_numel(x[:-1]), w[0], x[-1], 1, tx, bias)


def scaled_mm(dims, types, concrete) -> Work | None:
    """aten::_scaled_mm(A[M,K], B[K,N], scales...): 2·M·N·K at A's (8-bit) precision; the output
    is written in 16 bits at least, counted as 2 bytes per element."""
    (a, ta), (b, _) = _tensors(dims, types)[:2]
    m, k, n = a[0], a[1], b[1]
    return Work(
        2.0 * m * n * k,
        "matrix",
        _precision(ta),
        float((m * k + k * n) * DTYPES[ta][1] + 2 * m * n),
    )


# ---- convolution: 2·N·K·(C/groups)·R·S·P·Q -----------------------------------------------------

# operator -> positions of (stride, padding, dilation, groups) among its arguments
CONV_ARGS = {
    "aten::convolution": (3, 4, 5, 8),
    "aten::_convolution": (3, 4, 5, 8),
    "aten::conv2d": (3, 4, 5, 6),
    "aten::conv1d": (3, 4, 5, 6),
    "aten::conv3d": (3, 4, 5, 6),
    "aten::cudnn_convolution": (3, 2, 4, 5),
    "aten::miopen_convolution": (4, 3, 5, 6),
}


def conv_output(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """Output length: floor((size + 2·pad − dilation·(kernel − 1) − 1) / stride) + 1."""
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def convolution_for(name: str) -> Callable:
    """The model of a forward convolution operator `name` (its backward, split over the data and
    weight gradients' kernels, is in core/opmodels_split.py)."""
    at = CONV_ARGS[name]

    def model(dims, types, concrete) -> Work | None:
        """2·N·K·(C/groups)·(R·S…)·(P·Q…); bytes = input + weight + output."""
        (x, tx), (w, tw) = _tensors(dims, types)[:2]
        spatial = len(x) - 2
        stride, pad, dil = (_ints(concrete[i]) or [1] * spatial for i in at[:3])
        stride, pad, dil = ([v[0]] * spatial if len(v) == 1 else v for v in (stride, pad, dil))
        out = [conv_output(x[2 + i], w[2 + i], stride[i], pad[i], dil[i]) for i in range(spatial)]
        flops = 2.0 * x[0] * w[0] * w[1] * _numel(w[2:]) * _numel(out)
        y = [x[0], w[0], *out]
        bytes_min = _size(x, tx) + _size(w, tw) + _size(y, tx)
        return Work(flops, "matrix", _precision(tx), bytes_min)

    return model


# ---- attention: 4·B·H·S_q·S_k·D forward, half when causal, backward 2.5× -------------------------

# operator -> (layout of q/k/v: "bhsd" or "bshd", position of the first of q, k, v,
#              position of is_causal (None: read from a mask type), backward?)
ATTENTION = {
    "aten::scaled_dot_product_attention": ("bhsd", 0, 5, False),
    "aten::_scaled_dot_product_flash_attention": ("bhsd", 0, 4, False),
    "aten::_scaled_dot_product_efficient_attention": ("bhsd", 0, 6, False),
    "aten::_scaled_dot_product_cudnn_attention": ("bhsd", 0, 6, False),
    "aten::_cudnn_attention_forward": ("bhsd", 0, 10, False),
    "aten::_flash_attention_forward": ("bshd", 0, 8, False),
    "aten::_efficient_attention_forward": ("bshd", 0, None, False),
    "aten::_scaled_dot_product_flash_attention_backward": ("bhsd", 1, 11, True),
    "aten::_scaled_dot_product_efficient_attention_backward": ("bhsd", 1, 10, True),
    "aten::_flash_attention_backward": ("bshd", 1, 10, True),
}
BACKWARD_FACTOR = 2.5  # two GEMMs forward; five in the backward pass (one recomputed)


def attention_flops(
    b: int, h: int, s_q: int, s_k: int, d: int, causal: bool, backward: bool
) -> float:
    """4·B·H·S_q·S_k·D (Q·Kᵀ and P·V, 2 FLOPs per multiply-add); causal halves it, backward ×2.5."""
    flops = 4.0 * b * h * s_q * s_k * d
    flops = flops / 2 if causal else flops
    return flops * BACKWARD_FACTOR if backward else flops


def attention_for(name: str) -> Callable:
    layout, first, causal_at, backward = ATTENTION[name]

    def model(dims, types, concrete) -> Work | None:
        """Attention by `attention_flops`; bytes = Q, K, V read and the output written once."""
        q, k, v = dims[first : first + 3]
        dtype = types[first]
        if dtype not in DTYPES or len(q) != 4 or len(k) != 4:
            return None
        if layout == "bhsd":
            (b, h, s_q, d), s_k = q, k[2]
        else:
            (b, s_q, h, d), s_k = q, k[1]
        causal = _flag(concrete, causal_at) if causal_at is not None else _mask_causal(concrete)
        bytes_min = (2 * _numel(q) + _numel(k) + _numel(v)) * DTYPES[dtype][1]
        bytes_min *= 2 if backward else 1  # gradients of q, k, v and the incoming one
        return Work(
            attention_flops(b, h, s_q, s_k, d, causal, backward),
            "matrix",
            _precision(dtype),
            float(bytes_min),
        )

    return model


def _mask_causal(concrete) -> bool:
    """_efficient_attention_forward's custom_mask_type (argument 9): 1 or 2 are causal masks."""
    return len(concrete) > 9 and str(concrete[9]).strip() in ("1", "2")


# ---- memory-bound families: FLOPs per element, inputs read once + outputs written once ----------


def _broadcast(shapes) -> list[int]:
    rank = max(len(s) for s in shapes)
    padded = [[1] * (rank - len(s)) + list(s) for s in shapes]
    return [max(col) for col in zip(*padded, strict=True)]


def per_element(
    flops_per_element: float, output_like_first: bool = False, out_bytes: int | None = None
) -> Callable:
    """Elementwise: FLOPs = k × output elements; bytes = every tensor input + the output, whose
    element is `out_bytes` (1 for a comparison's bool) or else the narrowest input's, so that
    mixed-dtype promotion never makes the minimum larger than it is."""

    def model(dims, types, concrete) -> Work | None:
        tensors = _tensors(dims, types)
        if not tensors:
            return None
        shape = tensors[0][0] if output_like_first else _broadcast([s for s, _ in tensors])
        element = out_bytes or min(DTYPES[t][1] for _, t in tensors)
        bytes_min = sum(_size(s, t) for s, t in tensors) + _numel(shape) * element
        precision = "fp64" if _precision(tensors[0][1]) == "fp64" else "fp32"
        return Work(flops_per_element * _numel(shape), "vector", precision, float(bytes_min))

    model.__doc__ = f"{flops_per_element:g} FLOP per output element; bytes = inputs + output."
    return model


def normalisation(flops_per_element: float) -> Callable:
    """Norms and softmax: k FLOPs per element of the first input; bytes = inputs + an output the
    size of the first input."""
    return per_element(flops_per_element, output_like_first=True)


_NO_TENSOR: tuple = (None, None)  # (dims, dtype) of an operator with no tensor input


def reduction(dims, types, concrete) -> Work | None:
    """Sum/mean/max: 1 FLOP per input element; bytes = the input (the output is at most as big,
    left out: the bound stays a minimum)."""
    (x, tx), *_ = _tensors(dims, types) or [_NO_TENSOR]
    if x is None:
        return None
    precision = "fp64" if _precision(tx) == "fp64" else "fp32"
    return Work(float(_numel(x)), "vector", precision, _size(x, tx))


_FLOATS = {"fp64", "fp32", "fp16", "bf16", "fp8"}


def gather_rows(dims, types, concrete) -> Work | None:
    """Embedding / index_select(table[V, D], indices[n]): no FLOPs; bytes = indices + n·D read
    + n·D written."""
    tensors = _tensors(dims, types)
    table = next(((s, t) for s, t in tensors if DTYPES[t][0] in _FLOATS), None)
    index = next(((s, t) for s, t in tensors if DTYPES[t][0].startswith("int")), None)
    if table is None or index is None or len(table[0]) != 2:
        return None
    rows = _numel(index[0]) * table[0][1]
    return Work(0.0, "vector", "fp32", _size(index[0], index[1]) + 2.0 * rows * DTYPES[table[1]][1])


def copy(dims, types, concrete) -> Work | None:
    """copy_(dst, src) / clone / contiguous: no FLOPs; bytes = the source read + the copy
    written."""
    tensors = _tensors(dims, types)
    if not tensors:
        return None
    src = tensors[1] if len(tensors) > 1 else tensors[0]
    return Work(0.0, "vector", "fp32", _size(*src) + _size(tensors[0][0], tensors[0][1]))


def fill(dims, types, concrete) -> Work | None:
    """fill_ / zero_: no FLOPs; bytes = the tensor written once."""
    tensors = _tensors(dims, types)
    return Work(0.0, "vector", "fp32", _size(*tensors[0])) if tensors else None


def cat(dims, types, concrete, kernel: str = "") -> Work | None:
    """aten::cat(tensors, dim): no FLOPs; bytes = every input read once + the output (as large as
    the inputs together) written once. A TensorList records no dtype: the element size comes
    from the kernel's template argument (CatArrayBatchedCopy<OpaqueType<2u>, ...>, <float, ...>)."""
    shapes = dims[0] if dims and isinstance(dims[0], list) else []
    if not shapes or not all(isinstance(x, list) and x for x in shapes):
        return None
    size = element_bytes(kernel) or (DTYPES[types[0]][1] if types and types[0] in DTYPES else 0)
    if not size:
        return None
    return Work(0.0, "vector", "fp32", 2.0 * sum(_numel(x) for x in shapes) * size)


_OPAQUE = re.compile(r"OpaqueType<(\d+)u?>")
_TEMPLATE_DTYPE = re.compile(r"<(float|double|c10::Half|c10::BFloat16|__half|__nv_bfloat16)\b")
_KERNEL_DTYPES = {"__half": "c10::Half", "__nv_bfloat16": "c10::BFloat16"}


def element_bytes(kernel: str) -> int | None:
    """Bytes per element named by a PyTorch kernel's template (OpaqueType<N> or a dtype)."""
    found = _OPAQUE.search(kernel or "")
    if found:
        return int(found.group(1))
    found = _TEMPLATE_DTYPE.search(kernel or "")
    return DTYPES[_KERNEL_DTYPES.get(found.group(1), found.group(1))][1] if found else None


def logical_reduction(dims, types, concrete) -> Work | None:
    """aten::all / aten::any(x): no FLOPs (logic, not arithmetic); bytes = the input."""
    (x, tx), *_ = _tensors(dims, types) or [_NO_TENSOR]
    return None if x is None else Work(0.0, "vector", "fp32", _size(x, tx))


def mse_loss(dims, types, concrete) -> Work | None:
    """aten::mse_loss(input, target, reduction): 3 FLOPs per element (subtract, square, sum);
    bytes = input + target + the output (a scalar, or elementwise when reduction = 0)."""
    (x, tx), (y, ty) = _tensors(dims, types)[:2]
    elementwise = len(concrete) > 2 and str(concrete[2]).strip() == "0"
    out = _size(x, tx) if elementwise else DTYPES[tx][1]
    return Work(3.0 * _numel(x), "vector", _vector(tx), _size(x, tx) + _size(y, ty) + out)


def max_pool_backward(dims, types, concrete) -> Work | None:
    """aten::max_pool2d_with_indices_backward(grad_output, self, ..., indices): one add per
    gradient element routed back; bytes = grad_output + indices read, grad_input (self's size)
    written."""
    tensors = _tensors(dims, types)
    (grad, tg), (x, tx) = tensors[:2]
    indices = tensors[2] if len(tensors) > 2 else ([], "long int")
    return Work(
        float(_numel(grad)),
        "vector",
        _vector(tg),
        _size(grad, tg) + (_size(*indices) if indices[0] else 0.0) + _size(x, tx),
    )


def fused_add_rms_norm(dims, types, concrete) -> Work | None:
    """vLLM's _C::fused_add_rms_norm(input, residual, weight, eps), in place: residual += input,
    input = rms_norm(residual) · weight: 5 FLOPs per element (the add and the norm's 4); bytes =
    input and residual read and written, the weight read."""
    (x, tx), (r, tr), (w, tw) = _tensors(dims, types)[:3]
    return Work(
        5.0 * _numel(x), "vector", "fp32", 2 * _size(x, tx) + 2 * _size(r, tr) + _size(w, tw)
    )


def rotary_embedding(dims, types, concrete) -> Work | None:
    """vLLM's _C::rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox), in
    place: 3 FLOPs per rotated element (x·cos − y·sin) over rot_dim = the cache's width of each
    head; bytes = query and key read and written, positions and one cache row per token read."""
    (pos, tp), (q, tq), (k, tk), (cache, tc) = _tensors(dims, types)[:4]
    head = int(concrete[3])
    rotated = _numel(pos) * (q[-1] // head + k[-1] // head) * cache[-1]
    bytes_min = 2 * (_size(q, tq) + _size(k, tk)) + _size(pos, tp)
    bytes_min += _numel(pos) * cache[-1] * DTYPES[tc][1]
    return Work(3.0 * rotated, "vector", "fp32", float(bytes_min))


def reshape_and_cache(dims, types, concrete) -> Work | None:
    """vLLM's _C_cache_ops::reshape_and_cache[_flash](key, value, key_cache, value_cache,
    slot_mapping, ...): no FLOPs (a conversion to an 8-bit cache is not counted); bytes = key,
    value and slot_mapping read, the same elements written at the cache's element size."""
    (key, tk), (value, tv), (kc, tkc), (_, tvc), (slots, ts) = _tensors(dims, types)[:5]
    written = _numel(key) * DTYPES[tkc][1] + _numel(value) * DTYPES[tvc][1]
    return Work(
        0.0, "vector", "fp32", _size(key, tk) + _size(value, tv) + _size(slots, ts) + written
    )


def fp8_rowwise_quantize(dims, types, concrete) -> Work | None:
    """fbgemm::FloatToFP8RowwiseQuantized(input[n, d]): 2 FLOPs per element (the row's max and the
    scaling); bytes = the input read, n·d one-byte values written (the per-row scales, a few
    bytes a row, left out: a minimum)."""
    (x, tx), *_ = _tensors(dims, types)
    return Work(2.0 * _numel(x), "vector", "fp32", _size(x, tx) + _numel(x))


def _vector(dtype: str) -> str:
    return "fp64" if _precision(dtype) == "fp64" else "fp32"


ELEMENTWISE = [
    "add",
    "sub",
    "mul",
    "div",
    "add_",
    "sub_",
    "mul_",
    "div_",
    "neg",
    "relu",
    "relu_",
    "gelu",
    "silu",
    "silu_",
    "sigmoid",
    "tanh",
    "exp",
    "rsqrt",
    "sqrt",
    "pow",
    "clamp",
    "clamp_min",
    "clamp_min_",
    "threshold_backward",
    "gelu_backward",
    "where",
    "masked_fill",
    "masked_fill_",
    "addcmul_",
    "addcdiv_",
    "lerp_",
    "abs",
    "reciprocal",
    "log",
    "sin",
    "cos",
    "maximum",
    "minimum",
]
COMPARISONS = ["eq", "ne", "lt", "gt", "le", "ge"]  # bool outputs: one byte per element
MODELS: dict[str, Callable] = {
    "aten::mm": mm,
    "aten::addmm": addmm,
    "aten::bmm": bmm,
    "aten::baddbmm": baddbmm,
    "aten::matmul": matmul,
    "aten::linear": linear,
    "aten::_scaled_mm": scaled_mm,
    **{name: convolution_for(name) for name in CONV_ARGS},
    **{name: attention_for(name) for name in ATTENTION},
    "aten::native_layer_norm": normalisation(8),
    "aten::layer_norm": normalisation(8),
    "aten::rms_norm": normalisation(4),
    "aten::_fused_rms_norm": normalisation(4),
    "aten::_softmax": normalisation(5),
    "aten::softmax": normalisation(5),
    "aten::_log_softmax": normalisation(6),
    **{f"aten::{name}": per_element(1) for name in ELEMENTWISE},
    **{f"aten::{name}": per_element(1, out_bytes=1) for name in COMPARISONS},
    "aten::sum": reduction,
    "aten::mean": reduction,
    "aten::amax": reduction,
    "aten::max": reduction,
    "aten::embedding": gather_rows,
    "aten::index_select": gather_rows,
    "aten::copy_": copy,
    "aten::clone": copy,
    "aten::contiguous": copy,
    "aten::fill_": fill,
    "aten::zero_": fill,
    "aten::cat": cat,
    "aten::all": logical_reduction,
    "aten::any": logical_reduction,
    "aten::mse_loss": mse_loss,
    "aten::cudnn_batch_norm": normalisation(8),
    "aten::miopen_batch_norm": normalisation(8),
    "aten::native_batch_norm_backward": normalisation(9),
    "aten::cudnn_batch_norm_backward": normalisation(9),
    "aten::miopen_batch_norm_backward": normalisation(9),
    "aten::max_pool2d_with_indices_backward": max_pool_backward,
    "_C::fused_add_rms_norm": fused_add_rms_norm,
    "_C::rotary_embedding": rotary_embedding,
    "_C_cache_ops::reshape_and_cache": reshape_and_cache,
    "_C_cache_ops::reshape_and_cache_flash": reshape_and_cache,
    "fbgemm::FloatToFP8RowwiseQuantized": fp8_rowwise_quantize,
}
KERNEL_TYPED = {"aten::cat"}  # models that read the element size from the kernel's name
# Operators that hold >= 1 % of a step's busy time in a shared trace (benchmarks/
# step_operators.py) and have no model, with why: what their work depends on is not recorded.
NO_MODEL_WHY = {
    "aten::index": "the index tensors' shapes are not recorded (Input Dims [] for the list), so "
    "the gathered size is unknown",
    "vllm::moe_forward": "which experts each token is routed to, and the experts' weights "
    "(their intermediate size and dtype), are not among its arguments",
    "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function": "the rows each bag pools "
    "(indices per table and each table's width) are not in the shapes",
    "torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>": "the backward of FBGEMM's "
    "table-batched embedding: the rows it updates are not in the shapes",
    "hipGraphLaunch": "a graph replay: its kernels' operators and shapes are in the capture",
    "cudaGraphLaunch": "a graph replay: its kernels' operators and shapes are in the capture",
}
GENERATED = re.compile(r"^triton_")  # Inductor's fused kernels, named as operators
GENERATED_WHY = "a torch.compile-generated Triton kernel: the fused operation is not recorded"


def no_model_why(name: str) -> str:
    """Why operator `name` has no model ("" when nothing is known)."""
    return NO_MODEL_WHY.get(name) or (GENERATED_WHY if GENERATED.match(name or "") else "")


def model(name: str, dims, types, concrete, kernel: str = "") -> Work | None:
    """The Work of operator `name` with these arguments (and the kernel that did its work); None
    without a model or fitting shapes."""
    fn = MODELS.get(name)
    if fn is None or not isinstance(dims, list) or not isinstance(types, list):
        return None
    try:
        if name in KERNEL_TYPED:
            return fn(dims, types, concrete or [], kernel)
        return fn(dims, types, concrete or [])
    except (ValueError, IndexError, TypeError, KeyError):
        return None  # shapes that do not fit the formula: unmodelled, never a guess


# FP32 GEMM kernels on NVIDIA's TF32 tensor path, named by cuBLAS, cuBLASLt, CUTLASS and nvjet:
# "tf32" (sm80_xmma_gemm_f32f32_tf32f32_..., ..._tf32_...), and CUTLASS's FP32 tensor-op GEMMs
# (tensorop_s1688gemm: the m16n8k8 TF32 MMA, the only tensor path for FP32 inputs).
TF32_KERNEL = re.compile(r"tf32|tensorop_s1688|s1688gemm", re.IGNORECASE)
# ... and on the FP32 vector units: SIMT GEMMs and GEMV.
FP32_VECTOR_KERNEL = re.compile(r"sgemm|simt|gemv|gemmSN|gemmk1", re.IGNORECASE)
FP32_ASSUMED = (
    "FP32 GEMM kernel whose name says neither TF32 nor SIMT: counted against the FP32 vector "
    "roof (PyTorch's default, allow_tf32=False)"
)


def fp32_path(kernel: str) -> str | None:
    """Which unit an NVIDIA FP32 GEMM kernel runs on by its name: "tf32", "vector", or None
    when the name does not say."""
    if TF32_KERNEL.search(kernel):
        return "tf32"
    if FP32_VECTOR_KERNEL.search(kernel):
        return "vector"
    return None


def compute_class(work: Work, vendor: str, kernel: str = "", allow_tf32: bool | None = None) -> str:
    """The roof an operator's FLOPs count against, e.g. "matrix_bf16" or "vector_fp32".

    FP32 matrix work: on AMD it runs on the FP32 matrix cores (MFMA F32). On NVIDIA the kernel
    name decides where it says (TF32 tensor path or SIMT, `fp32_path`); cuDNN convolutions
    follow their `allow_tf32` argument (default True); otherwise PyTorch's default
    (torch.backends.cuda.matmul.allow_tf32 = False) puts FP32 GEMMs on the FP32 vector units.
    """
    if work.unit == "vector":
        return (
            f"vector_{work.precision}"
            if work.precision in ("fp64", "fp32", "fp16")
            else "vector_fp32"
        )
    if work.precision != "fp32":
        return f"matrix_{work.precision}"
    if vendor == "AMD":
        return "matrix_fp32"
    path = fp32_path(kernel)
    if path == "tf32" or (path is None and allow_tf32):
        return "matrix_tf32"
    return "vector_fp32"
