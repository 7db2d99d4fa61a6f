"""FLOPs and minimum bytes of a fused mixture-of-experts layer, stage by stage (pure maths).

A fused MoE operator (vLLM's `vllm::moe_forward`) sends each of T tokens to k of E experts, each
a gated MLP: GEMM1 (gate and up, H → 2I, the activation fused: it writes I columns) and GEMM2
(down, I → H), then a finalize kernel sums each token's k outputs weighted by the router. Its
kernels split that work, so each kernel gets its stage (`Stage`, told by the kernel's name,
`stage_of`): routing, the activations' block quantization, GEMM1, GEMM2, finalize.

What is known and what is estimated: FLOPs follow from T·k rows through each expert GEMM
(exact for the padded sizes the kernels run). The bytes depend on which experts the T·k picks
hit, which no trace records: each hit expert's weights are read once, and the model takes the
expected number of distinct experts when the router picks k distinct experts per token
uniformly, E·(1 − (1 − k/E)^T) (at least k, at most min(E, T·k)), so the weight bytes are an
estimate. Block-scaled formats (OCP MX: one 8-bit E8M0 scale per 32 elements along the
reduction) count their scales: MXFP4 0.5 + 1/32 bytes per element, MXFP8 1 + 1/32.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from rooflint.core.opmodels import Work

SCALE_BLOCK = 32  # OCP Microscaling (MX) v1.0: elements sharing one E8M0 scale byte
INDEX_BYTES = 4  # an int32 routing index per (token, expert) pick
GATE_BYTES = 2  # a BF16 router weight per pick


@dataclass(frozen=True)
class Element:
    """How one operand is stored: bytes per element (its block scales included) and the
    precision it feeds the matrix unit at."""

    name: str
    bytes: float
    precision: str


FORMATS = {
    "bf16": Element("bf16", 2.0, "bf16"),
    "fp16": Element("fp16", 2.0, "fp16"),
    "fp32": Element("fp32", 4.0, "fp32"),
    "fp8": Element("fp8", 1.0, "fp8"),
    "mxfp8": Element("mxfp8", 1.0 + 1.0 / SCALE_BLOCK, "fp8"),
    "mxfp4": Element("mxfp4", 0.5 + 1.0 / SCALE_BLOCK, "fp4"),
}
# Narrowest first: a GEMM of two formats runs at the wider one's precision (Triton upcasts MXFP4
# weights to BF16 for a BF16 activation; Blackwell's f8f6f4 MMA runs MXFP8 x MXFP4 at FP8's rate).
WIDTH = ("fp4", "fp8", "bf16", "fp16", "fp32")


class Stage(StrEnum):
    ROUTE = "route"
    ROUTE_PASS = "route_pass"
    QUANTIZE = "quantize"
    GEMM1 = "gemm1"
    GEMM2 = "gemm2"
    FINALIZE = "finalize"


# Kernel names of the stages: Triton's matmul_ogs (triton_kernels, vLLM on ROCm), TensorRT-LLM's
# trtllm-gen batched GEMMs (bmm_*, FlashInfer on Blackwell), vLLM's own fused_moe_kernel. GEMMs
# are GEMM1 then GEMM2 in launch order.
GEMM_KERNEL = re.compile(r"matmul_ogs|^bmm_|fused_moe_kernel")
STAGE_KERNELS = (
    (Stage.FINALIZE, re.compile(r"finalize", re.IGNORECASE)),
    (Stage.QUANTIZE, re.compile(r"quantize", re.IGNORECASE)),
    (Stage.ROUTE, re.compile(r"routing|topk", re.IGNORECASE)),
)


def stage_of(kernel: str) -> Stage | None:
    """The stage a kernel of a fused MoE runs, by its name alone (GEMM1 for any GEMM)."""
    if GEMM_KERNEL.search(kernel):
        return Stage.GEMM1
    return next((stage for stage, name in STAGE_KERNELS if name.search(kernel)), None)


def stages(kernels: list[str]) -> list[tuple[int, Stage | None]]:
    """(position, stage) of each kernel of one call, given in launch order: its first two GEMMs
    are GEMM1 and GEMM2; its first routing kernel is the top-k (ROUTE) and each later one a
    pass over the picks (ROUTE_PASS); the first quantize and finalize kernels do theirs; any
    other kernel has no stage (None: an auxiliary kernel, its work counted elsewhere)."""
    out: list[tuple[int, Stage | None]] = []
    seen: list[Stage] = []
    for at, kernel in enumerate(kernels):
        stage = stage_of(kernel)
        if stage == Stage.GEMM1 and Stage.GEMM1 in seen:
            stage = None if Stage.GEMM2 in seen else Stage.GEMM2
        elif stage == Stage.ROUTE and Stage.ROUTE in seen:
            stage = Stage.ROUTE_PASS
        elif stage in seen:
            stage = None
        out.append((at, stage))
        seen += [stage] if stage is not None else []
    return out


# Operand formats in GEMM kernel names, as (output, activation, weights):
# matmul_ogs_NNT_bf16xbf16xmxfp4_... (output x activation x weights) and trtllm-gen's
# bmm_<output>_<weights><activation>_<accumulator>_... (weights are its A operand).
_TRITON = re.compile(r"_(bf16|fp16|fp32|fp8|mxfp8|mxfp4)x(bf16|fp16|fp8|mxfp8)x(bf16|fp8|mxfp4)_")
_TRTLLM_TYPE = r"(MxE2m1|MxE4m3|E4m3|E2m1|Bfloat16|Fp16|Fp32)"
_TRTLLM = re.compile(rf"^bmm_{_TRTLLM_TYPE}_{_TRTLLM_TYPE}{_TRTLLM_TYPE}_")
_TRTLLM_NAMES = {
    "MxE2m1": "mxfp4", "MxE4m3": "mxfp8", "E4m3": "fp8", "Bfloat16": "bf16", "Fp16": "fp16",
    "Fp32": "fp32",
}  # fmt: skip


def operands(kernel: str) -> tuple[Element, Element, Element] | None:
    """(output, activation, weights) formats a GEMM kernel's name states, or None."""
    found = _TRITON.search(kernel)
    if found:
        return FORMATS[found[1]], FORMATS[found[2]], FORMATS[found[3]]
    found = _TRTLLM.search(kernel)
    if found and all(t in _TRTLLM_NAMES for t in found.groups()):
        out, weights, act = (FORMATS[_TRTLLM_NAMES[t]] for t in found.groups())
        return out, act, weights
    return None


def wider(a: Element, b: Element) -> str:
    """The precision a GEMM of formats a and b runs at: the wider of the two."""
    return max(a.precision, b.precision, key=WIDTH.index)


@dataclass(frozen=True)
class Moe:
    """One fused MoE call: T tokens of width H (as the kernels run it, padded), E experts of
    intermediate size I, k experts per token; the formats of GEMM1's input (`activation`), the
    expert weights, GEMM1's output (`middle`, GEMM2's input), GEMM2's output, and the
    operator's own input and router logits (`hidden`)."""

    tokens: int
    width: int
    inter: int
    experts: int
    top_k: int
    activation: Element
    weights: Element
    middle: Element
    output: Element
    hidden: Element = FORMATS["bf16"]

    @property
    def picks(self) -> int:
        return self.tokens * self.top_k

    def experts_hit(self) -> float:
        """Expected distinct experts hit when each token picks k distinct experts uniformly:
        E·(1 − (1 − k/E)^T)."""
        return self.experts * (1.0 - (1.0 - self.top_k / self.experts) ** self.tokens)

    def bounds(self) -> tuple[int, int]:
        """The fewest and most experts T·k picks can hit: k, and min(E, T·k)."""
        return self.top_k, min(self.experts, self.picks)


def work(moe: Moe, stage: Stage) -> Work:
    """The work of one stage of `moe`."""
    return _STAGES[stage](moe)


def _route(m: Moe) -> Work:
    """Top-k of the router logits [T, E]: comparisons, no FLOPs; the logits read, an index
    and a weight per pick written."""
    moved = m.tokens * m.experts * m.hidden.bytes + m.picks * (INDEX_BYTES + GATE_BYTES)
    return Work(0.0, "vector", "fp32", moved)


def _route_pass(m: Moe) -> Work:
    """A later routing pass (the experts' histogram, the permutation's offsets): at least each
    pick's expert read and a count per expert written."""
    return Work(0.0, "vector", "fp32", float(m.picks * INDEX_BYTES + m.experts * INDEX_BYTES))


def _quantize(m: Moe) -> Work:
    """The hidden states [T, H] block-quantized for GEMM1: 2 FLOPs per element (the block's
    max, the scaling); read at the input's size, written at the activation format's."""
    n = m.tokens * m.width
    return Work(2.0 * n, "vector", "fp32", n * (m.hidden.bytes + m.activation.bytes))


def _gemm1(m: Moe) -> Work:
    """Gate and up: 2·(T·k)·H·2I FLOPs; the tokens read once, each hit expert's [H, 2I] weights
    read once, the routing indices read, the activated [T·k, I] written."""
    flops = 2.0 * m.picks * m.width * 2 * m.inter
    moved = (
        m.tokens * m.width * m.activation.bytes
        + m.experts_hit() * m.width * 2 * m.inter * m.weights.bytes
        + m.picks * INDEX_BYTES
        + m.picks * m.inter * m.middle.bytes
    )
    return Work(flops, "matrix", wider(m.activation, m.weights), moved)


def _gemm2(m: Moe) -> Work:
    """Down: 2·(T·k)·I·H FLOPs; [T·k, I] read, each hit expert's [I, H] weights read once,
    [T·k, H] written."""
    flops = 2.0 * m.picks * m.inter * m.width
    moved = (
        m.picks * m.inter * m.middle.bytes
        + m.experts_hit() * m.inter * m.width * m.weights.bytes
        + m.picks * m.width * m.output.bytes
    )
    return Work(flops, "matrix", wider(m.middle, m.weights), moved)


def _finalize(m: Moe) -> Work:
    """Each token's k outputs weighted and summed: (2k − 1) FLOPs per output element; the
    [T·k, H] outputs, indices and weights read, [T, H] written."""
    flops = float(m.tokens * m.width * (2 * m.top_k - 1))
    moved = (
        m.picks * m.width * m.output.bytes
        + m.picks * (INDEX_BYTES + GATE_BYTES)
        + m.tokens * m.width * m.hidden.bytes
    )
    return Work(flops, "vector", "fp32", moved)


_STAGES = {
    Stage.ROUTE: _route,
    Stage.ROUTE_PASS: _route_pass,
    Stage.QUANTIZE: _quantize,
    Stage.GEMM1: _gemm1,
    Stage.GEMM2: _gemm2,
    Stage.FINALIZE: _finalize,
}


def estimate_note(m: Moe) -> str:
    """What the bytes of `m` rest on, for each of its launches."""
    low, high = m.bounds()
    return (
        f"fused MoE: expert weights read = the expected distinct experts hit by {m.picks} "
        f"picks ({m.tokens} tokens x top-{m.top_k}) of {m.experts}, "
        f"E(1-(1-k/E)^T) = {m.experts_hit():.2f} (routing not recorded; between {low} and "
        f"{high}), at {m.weights.name} ({m.weights.bytes:g} bytes per weight"
        + (", block scales included)" if m.weights.name.startswith("mx") else ")")
    )


# ---- the shapes a trace gives: the operator's inputs and the operators it encloses ------------

OPERATORS = ("vllm::moe_forward",)
ALLOCATION = "aten::empty"  # Concrete Inputs: the size list ("[128, 2944]"), the dtype's code
# c10::ScalarType codes of the buffers an intermediate can be stored in (not the index types)
BUFFER_TYPES = {0: "uint8", 5: "fp16", 6: "fp32", 15: "bf16", 23: "fp8", 24: "fp8", 25: "fp8",
                26: "fp8"}  # fmt: skip
ELEMENTS_PER_BYTE = {"mxfp4": 2}  # a uint8 buffer of packed 4-bit values


@dataclass(frozen=True)
class Child:
    """An operator enclosed by the MoE operator, as the trace records it."""

    name: str
    dims: list
    types: list
    concrete: list


def from_trace(dims, types, children: list[Child], gemms: list[str]) -> tuple[Moe | None, str]:
    """The Moe of a vllm::moe_forward(hidden_states [T, H], router_logits [T, E], ...) call, from
    what the trace holds: k from its TopK operator's argument, else from the [T, k] top-k buffers
    it allocates; I from the [≥ T·k rows, I] buffer GEMM1 writes (its allocation); the formats
    from its two GEMM kernels' names (in launch order). vLLM's FusedMoE holds gate and up as
    one w13 weight [E, 2I, H] (is_act_and_mul, its default): gated. (None, why) when a piece is
    missing."""
    try:
        (tokens, width), (_, experts) = dims[0], dims[1]
    except (TypeError, ValueError, IndexError):
        return None, "its first two inputs are not hidden states [T, H] and router logits [T, E]"
    formats = [operands(k) for k in gemms[:2]]
    if len(formats) < 2 or None in formats:
        return None, "its two GEMM kernels' names do not state their operand formats"
    (middle, activation, weights), (output, _, _) = formats  # type: ignore[misc]
    buffers = _allocations(children)
    top_k = _top_k(tokens, experts, children, buffers)
    if top_k is None:
        return None, "no top-k among the operators it encloses (TopK, or [T, k] buffers)"
    inter = _intermediate(tokens * top_k, width, middle, buffers)
    if inter is None:
        return None, "no [T·k, I] intermediate buffer among its allocations (I unknown)"
    hidden = FORMATS.get(_DTYPE_FORMATS.get(str(types[0]), ""), FORMATS["bf16"])
    moe = Moe(tokens, width, inter, experts, top_k, activation, weights, middle, output, hidden)
    return moe, ""


_DTYPE_FORMATS = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32"}


def _allocations(children: list[Child]) -> list[tuple[list[int], str | None]]:
    """(shape, buffer format or None) of each aten::empty among `children`."""
    out = []
    for child in children:
        if child.name != ALLOCATION or len(child.concrete) < 2:
            continue
        shape = [int(x) for x in re.findall(r"-?\d+", str(child.concrete[0]))]
        code = str(child.concrete[1]).strip()
        out.append((shape, BUFFER_TYPES.get(int(code)) if code.isdigit() else None))
    return out


def _top_k(tokens: int, experts: int, children: list[Child], buffers) -> int | None:
    for child in children:
        if child.name == "TopK" and len(child.concrete) > 1 and str(child.concrete[1]).isdigit():
            return int(child.concrete[1])
    found = {s[1] for s, _ in buffers if len(s) == 2 and s[0] == tokens and 0 < s[1] < experts}
    return found.pop() if len(found) == 1 else None


def _intermediate(picks: int, width: int, middle: Element, buffers) -> int | None:
    """I from the one buffer of >= T·k rows (its leading sizes' product) and a last size other
    than H, in a floating-point or byte type."""
    found = set()
    for shape, kind in buffers:
        rows = 1
        for size in shape[:-1]:
            rows *= size
        if kind is not None and len(shape) >= 2 and rows >= picks and shape[-1] != width:
            found.add(shape[-1] * (ELEMENTS_PER_BYTE.get(middle.name, 1) if kind == "uint8" else 1))
    return found.pop() if len(found) == 1 else None
