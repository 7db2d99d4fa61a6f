"""FLOPs and minimum bytes of LLM-serving operators (vLLM, AITER) from their shapes (pure maths).

Paged attention reads a KV cache whose lengths are not among the operator's shapes: vLLM names
them in the step's annotation (`execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086
sqsq32sqsk55086)`: per phase, the sums over its sequences of query length sq, context length sk,
sq² and sq·sk), which `Lengths` holds. The other models see the operator's arguments only, as
core.opmodels' do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rooflint.core.opmodels import DTYPES, Work, _numel, _tensors, normalisation

# "context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)" in a vLLM step's range
_PHASE = r"{}_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
VLLM_STEP = re.compile(_PHASE.format("context") + "_" + _PHASE.format("generation"))


@dataclass(frozen=True)
class Lengths:
    """Sums over a step's sequences, for the prefill (context) and decode (generation) phases:
    query tokens, KV tokens, Σ sq², Σ sq·sk."""

    context: tuple[int, int, int, int]
    generation: tuple[int, int, int, int]

    @classmethod
    def of(cls, text: str | None) -> Lengths | None:
        found = VLLM_STEP.search(text or "")
        if found is None:
            return None
        numbers = [int(x) for x in found.groups()]
        return cls(tuple(numbers[:4]), tuple(numbers[4:]))  # type: ignore[arg-type]


def paged_attention(dims, types, lengths: Lengths) -> Work | None:
    """vllm::unified_attention_with_output(query [T, H_q, d], key [T, H_kv, d], value, output):
    FLOPs 4·H_q·d·(Σ sq·sk) over the decode phase and 4·H_q·d·(Σ sq·sk − Σ sq²/2) over the
    prefill (causal); bytes = query read and output written, and the KV cache read once: Σ sk
    tokens × H_kv × d × 2 (K and V) at the key's element size (1 byte for an FP8 key)."""
    (q, tq), (k, tk), _v, (out, to) = _tensors(dims, types)[:4]
    heads, d, kv_heads = q[-2], q[-1], k[-2]
    c_sk, c_sqsq, c_sqsk = lengths.context[1:]
    g_sk, g_sqsk = lengths.generation[1], lengths.generation[3]
    flops = 4.0 * heads * d * (g_sqsk + c_sqsk - c_sqsq / 2)
    kv = (c_sk + g_sk) * kv_heads * d * 2 * DTYPES[tk][1]
    moved = _numel(q) * DTYPES[tq][1] + _numel(out) * DTYPES[to][1] + kv
    return Work(flops, "matrix", DTYPES[tq][0], float(moved))


def fused_add_rmsnorm(dims, types, concrete) -> Work | None:
    """aiter::rmsnorm2d_fwd_with_add_ck(out, input, residual_in, residual_out, weight, eps, ...):
    residual_out = input + residual_in, out = rms_norm(residual_out) · weight: 5 FLOPs per
    element (the add and the norm's 4); bytes = each tensor once (two read, two written, the
    weight read)."""
    tensors = _tensors(dims, types)
    if len(tensors) < 5:
        return None
    moved = sum(_numel(s) * DTYPES[t][1] for s, t in tensors[:5])
    return Work(5.0 * _numel(tensors[0][0]), "vector", "fp32", float(moved))


def rms_norm_out(dims, types, concrete) -> Work | None:
    """vLLM's _C::rms_norm(out, input, weight, eps): 4 FLOPs per element (square, sum, scale,
    weight); bytes = the input and weight read, out written, each once."""
    tensors = _tensors(dims, types)
    if len(tensors) < 3:
        return None
    moved = sum(_numel(s) * DTYPES[t][1] for s, t in tensors[:3])
    return Work(4.0 * _numel(tensors[1][0]), "vector", "fp32", float(moved))


def top_k(dims, types, concrete) -> Work | None:
    """TopK(scores [T, E], k, ...): no FLOPs (comparisons); bytes = the scores read, k values
    (the scores' type) and k int32 indices per row written."""
    (x, tx), *_ = _tensors(dims, types)
    k = int(concrete[1])
    rows = _numel(x[:-1])
    written = rows * k * (DTYPES[tx][1] + 4)
    return Work(0.0, "vector", "fp32", float(_numel(x) * DTYPES[tx][1] + written))


def sort_tokens(dims, types, concrete) -> Work | None:
    """SortTokens(topk_weights [T, k], topk_ids [T, k], experts): no FLOPs; bytes = both read
    and written once, reordered by expert (the expert offsets, a few bytes, left out)."""
    tensors = _tensors(dims, types)
    return Work(0.0, "vector", "fp32", 2.0 * sum(_numel(s) * DTYPES[t][1] for s, t in tensors))


def static_fp8_quant(dims, types, concrete) -> Work | None:
    """vLLM's _C::static_scaled_fp8_quant(out [n, d] FP8, input [n, d], scale [1]): 1 FLOP per
    element (the multiply by the inverse scale; the clamp to FP8's range is a comparison);
    bytes = the input read and the output written at their sizes (the scale, a 0-d tensor of 4
    bytes, left out: a minimum)."""
    (out, to), (x, tx) = _tensors(dims, types)[:2]
    moved = _numel(out) * DTYPES[to][1] + _numel(x) * DTYPES[tx][1]
    return Work(float(_numel(x)), "vector", "fp32", float(moved))


MODELS: dict[str, Callable] = {
    "aiter::rmsnorm2d_fwd_with_add_ck": fused_add_rmsnorm,
    "aiter::rms_norm": normalisation(4),
    "_C::rms_norm": rms_norm_out,
    "TopK": top_k,
    "SortTokens": sort_tokens,
    "_C::static_scaled_fp8_quant": static_fp8_quant,
}
NEEDS_LENGTHS = {"vllm::unified_attention_with_output": paged_attention}
NO_LENGTHS = (
    "the KV-cache lengths are not in its shapes, and no vLLM step annotation with the "
    "sequences' sums (execute_..._generation_N(sqAskB...)) encloses it (the plain "
    "execute_context_N(tokens)_generation_M(tokens) counts tokens, not KV lengths)"
)


def handles(name: str) -> bool:
    return name in MODELS or name in NEEDS_LENGTHS


def model(name: str, dims, types, concrete, lengths: Lengths | None) -> tuple[Work | None, str]:
    """The Work of LLM operator `name`, or None with why ("" when the shapes do not fit)."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return None, ""
    try:
        if name in NEEDS_LENGTHS:
            if lengths is None:
                return None, NO_LENGTHS
            return NEEDS_LENGTHS[name](dims, types, lengths), ""
        return MODELS[name](dims, types, concrete or []), ""
    except (ValueError, IndexError, TypeError, KeyError):
        return None, ""  # shapes that do not fit the formula: unmodelled, never a guess
