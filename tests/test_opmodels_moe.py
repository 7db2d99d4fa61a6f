"""Fused MoE (core/opmodels_moe.py, parsers/kineto_moe.py): the stage formulas worked by hand, the
shapes read from the traces' operators, and the vLLM decode replay (paired with its capture)
against TraceLens's MoE_unfused_fwd.csv; the B200 eager trace (FlashInfer's MXFP8 x MXFP4
TensorRT-LLM kernels) by hand."""

from __future__ import annotations

import csv
import json

import pytest

import rooflint
from rooflint.core import opmodels_moe
from rooflint.core.opmodels_moe import FORMATS, Child, Moe, Stage
from tests.helpers import shared

BF16, MXFP4, MXFP8 = FORMATS["bf16"], FORMATS["mxfp4"], FORMATS["mxfp8"]
# vLLM decode on MI300X (GPT-OSS, Triton's matmul_ogs): 32 tokens, H 3072 (2880 padded), I 2944
# (2880 padded), 32 experts, top-4, BF16 activations, MXFP4 weights.
ROCM = Moe(32, 3072, 2944, 32, 4, BF16, MXFP4, BF16, BF16)
ROCM_KERNELS = [
    "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu",
    "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1",
    "_finalize_matmul_scatter_bf16",
]
# The B200 eager prefill (GPT-OSS, tensor-parallel 8): 888 tokens, H 3072, I 512 (2880 / 8 = 360
# padded to 512), 128 experts, top-4, MXFP8 activations, MXFP4 weights, MXFP8 between the GEMMs.
B200 = Moe(888, 3072, 512, 128, 4, MXFP8, MXFP4, MXFP8, BF16)
B200_KERNELS = [
    "void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantization"
    "Type)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, float const*)",
    "void moe::dev::routing::routingRenormalize::routingIndicesHistogramScoresKernel<...>",
    "void moe::dev::routing::routingIndicesHistogramKernel<...>",
    "void moe::dev::routing::routingIndicesOffsetsKernel<...>",
    "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_swiGlu_sm100f",
    "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_sm100f",
    "void moe::dev::finalize::finalizeKernelVecLoad<...>",
]
# E(1 - (1 - k/E)^T) for 32 tokens, top-4 of 32 experts: 32 (1 - (7/8)^32)
ROCM_HIT = 32 * (1 - (7 / 8) ** 32)


def test_expected_experts_hit_and_bounds():
    """32 tokens x top-4 of 32 experts: 32 (1 - 0.875^32) = 31.5539 (0.875^32 = 0.013940); at
    least 4 (all tokens on the same experts), at most 32. 888 tokens x top-4 of 128: all 128 but
    7e-11."""
    assert ROCM.experts_hit() == pytest.approx(31.553925, abs=1e-6)
    assert ROCM.bounds() == (4, 32)
    assert B200.experts_hit() == pytest.approx(128, abs=1e-9)
    assert B200.bounds() == (4, 128)


def test_rocm_stages_by_hand():
    """GEMM1: 2 x 128 picks x 3072 x 5888 (2I) = 4,630,511,616 FLOPs; bytes = tokens 32 x 3072 x 2
    (196,608) + experts 31.5539 x 3072 x 5888 x (0.5 + 1/32) (9,609,216 each: MXFP4 and one scale
    byte per 32) + indices 128 x 4 (512) + out 128 x 2944 x 2 (753,664). GEMM2: 2 x 128 x 2944 x
    3072 = 2,315,255,808; bytes = 753,664 + 31.5539 x 2944 x 3072 x 0.53125 (4,804,608 each) +
    128 x 3072 x 2 (786,432). Finalize: 32 x 3072 x (2 x 4 - 1) = 688,128 FLOPs; 786,432 + 128 x 6
    + 32 x 3072 x 2 = 983,808 bytes."""
    gemm1, gemm2 = (opmodels_moe.work(ROCM, s) for s in (Stage.GEMM1, Stage.GEMM2))
    assert gemm1.flops == 4_630_511_616 and gemm2.flops == 2_315_255_808
    assert gemm1.bytes_min == pytest.approx(196_608 + ROCM_HIT * 9_609_216 + 512 + 753_664)
    assert gemm2.bytes_min == pytest.approx(753_664 + ROCM_HIT * 4_804_608 + 786_432)
    assert (gemm1.unit, gemm1.precision) == ("matrix", "bf16")  # BF16 x MXFP4 runs in BF16
    final = opmodels_moe.work(ROCM, Stage.FINALIZE)
    assert (final.flops, final.bytes_min, final.unit) == (688_128, 983_808, "vector")


def test_b200_stages_by_hand():
    """GEMM1: 2 x 3552 x 3072 x 1024 = 22,347,251,712; bytes = 888 x 3072 x 1.03125 (2,813,184) +
    128 x 3072 x 1024 x 0.53125 (213,909,504) + 3552 x 4 (14,208) + 3552 x 512 x 1.03125
    (1,875,456) = 218,612,352. GEMM2: 11,173,625,856; 1,875,456 + 128 x 512 x 3072 x 0.53125
    (106,954,752) + 3552 x 3072 x 2 (21,823,488) = 130,653,696. Quantize: 2 x 888 x 3072 =
    5,455,872 FLOPs, 2,727,936 x (2 + 1.03125) = 8,269,056 bytes. Top-k: logits 888 x 128 x 2 +
    3552 x 6 = 248,640; a later routing pass 3552 x 4 + 128 x 4 = 14,720."""
    expect = {
        Stage.GEMM1: (22_347_251_712, 218_612_352),
        Stage.GEMM2: (11_173_625_856, 130_653_696),
        Stage.QUANTIZE: (5_455_872, 8_269_056),
        Stage.ROUTE: (0, 248_640),
        Stage.ROUTE_PASS: (0, 14_720),
        Stage.FINALIZE: (888 * 3072 * 7, 21_823_488 + 21_312 + 5_455_872),
    }
    for stage, (flops, moved) in expect.items():
        work = opmodels_moe.work(B200, stage)
        assert work.flops == flops and work.bytes_min == pytest.approx(moved, abs=1e-3), stage
    assert opmodels_moe.work(B200, Stage.GEMM1).precision == "fp8"  # f8f6f4 MMA: FP8's rate


def test_kernel_names_give_stages_and_formats():
    assert [s for _, s in opmodels_moe.stages(ROCM_KERNELS)] == [
        Stage.GEMM1,
        Stage.GEMM2,
        Stage.FINALIZE,
    ]
    assert [s for _, s in opmodels_moe.stages(B200_KERNELS)] == [
        Stage.QUANTIZE,
        Stage.ROUTE,
        Stage.ROUTE_PASS,
        Stage.ROUTE_PASS,
        Stage.GEMM1,
        Stage.GEMM2,
        Stage.FINALIZE,
    ]
    assert [s for _, s in opmodels_moe.stages(ROCM_KERNELS * 2)][3:] == [None] * 3
    assert opmodels_moe.operands(ROCM_KERNELS[0]) == (BF16, BF16, MXFP4)  # out, activation, weights
    assert opmodels_moe.operands(B200_KERNELS[4]) == (MXFP8, MXFP8, MXFP4)
    assert opmodels_moe.operands(B200_KERNELS[5]) == (BF16, MXFP8, MXFP4)
    assert opmodels_moe.operands("_finalize_matmul_scatter_bf16") is None


def _empty(shape: str, code: int) -> Child:
    return Child("aten::empty", [[]] * 6, ["ScalarList", "Scalar"], [shape, str(code)])


# vllm::moe_forward's inputs and some of the operators its capture encloses (shapes as recorded)
ROCM_DIMS = [[32, 3072], [32, 32], [], []]
ROCM_TYPES = ["c10::BFloat16", "c10::BFloat16", "", ""]
ROCM_CHILDREN = [
    Child("TopK", [[32, 32], []], ["c10::BFloat16", "Scalar"], ["", "4", "True"]),
    _empty("[32, 4]", 15),
    _empty("[6, 512]", 3),
    _empty("[1, 128, 2944]", 15),  # GEMM1's output: T·k rows, I columns
    _empty("[1, 1, 128, 3072]", 15),  # GEMM2's: H columns
]


def test_shapes_from_the_operators_it_encloses():
    moe, why = opmodels_moe.from_trace(ROCM_DIMS, ROCM_TYPES, ROCM_CHILDREN, ROCM_KERNELS[:2])
    assert (moe, why) == (ROCM, "")
    b200, _ = opmodels_moe.from_trace(
        [[888, 3072], [888, 128], []],
        ["c10::BFloat16", "c10::BFloat16", ""],
        [_empty("[888, 4]", 3), _empty("[888, 3072]", 24), _empty("[5472, 512]", 0)],
        B200_KERNELS[4:6],
    )
    assert b200 == B200  # k from the [T, k] buffers; I = 512 one-byte MXFP8 values a row


def test_missing_evidence_says_what():
    no_k = [c for c in ROCM_CHILDREN if c.name != "TopK" and c.concrete[0] != "[32, 4]"]
    assert "top-k" in opmodels_moe.from_trace(ROCM_DIMS, ROCM_TYPES, no_k, ROCM_KERNELS[:2])[1]
    no_buffer = ROCM_CHILDREN[:3]
    why = opmodels_moe.from_trace(ROCM_DIMS, ROCM_TYPES, no_buffer, ROCM_KERNELS[:2])[1]
    assert "intermediate" in why
    one_gemm = opmodels_moe.from_trace(ROCM_DIMS, ROCM_TYPES, ROCM_CHILDREN, ROCM_KERNELS[:1])
    assert one_gemm[0] is None and "GEMM kernels" in one_gemm[1]


@pytest.fixture(scope="module")
def vllm():
    replay = shared("kineto/tracelens-vllm-decode-graph-replay.json.gz")
    capture = shared("kineto/tracelens-vllm-decode-graph-capture.json.gz")
    return rooflint.report(str(replay), str(capture)).launches


@pytest.mark.e2e
def test_vllm_moe_against_tracelens(vllm):
    """MoE_unfused_fwd.csv, per layer: up 4.831838208 GFLOPs, 284.9228 MB (2^20 B); down
    2.415919104 GFLOPs, 142.9302 MB. TraceLens's formula, rebuilt: inter_dim = hidden_dim = 3072
    (its stated limitation: "inter_dim is not in the trace"), weights 0.5 byte (no scales), the
    same expected experts 32 (1 - (1 - 4/32)^32); up = 32 x 3072 x 2 + n x 3072 x 6144 x 0.5 +
    128 x 3072 x 2, down = 128 x 3072 x 2 + n x 3072 x 3072 x 0.5 + 32 x 3072 x 2. rooflint's
    FLOPs are 2944/3072 of those (-4.17 %): the capture's weight views [32, 1536, 5888] (H/2
    packed bytes x 2I) and [32, 1472, 3072] (I/2 x H) and the [1, 128, 2944] buffer give I = 2944.
    Its bytes are +1.81 % (up) and +2.18 % (down): the weights x (2944/3072) x (17/16), the MXFP4
    scales (one byte per 32 weights, 1/16 of the packed bytes), and the down GEMM writes its 128
    (token, expert) rows, [1, 1, 128, 3072] in the trace, not 32: the sum is the finalize
    kernel's (modelled apart)."""
    rows = {r["name"].rsplit("_", 1)[-1]: r for r in _tracelens("MoE_unfused_fwd")}
    n = 32 * (1 - (1 - 4 / 32) ** 32)
    up = 32 * 3072 * 2 + n * 3072 * 6144 * 0.5 + 128 * 3072 * 2
    down = 128 * 3072 * 2 + n * 3072 * 3072 * 0.5 + 32 * 3072 * 2
    assert float(rows["up"]["Data Moved (MB)_first"]) == pytest.approx(up / 2**20, rel=1e-12)
    assert float(rows["down"]["Data Moved (MB)_first"]) == pytest.approx(down / 2**20, rel=1e-12)
    moe = vllm[vllm["op"] == "vllm::moe_forward"]
    for stage, kernel, tracelens in (("up", ROCM_KERNELS[0], up), ("down", ROCM_KERNELS[1], down)):
        ours = moe[moe["kernel"] == kernel]
        assert len(ours) == 24
        gemm = opmodels_moe.work(ROCM, Stage.GEMM1 if stage == "up" else Stage.GEMM2)
        assert set(ours["flops"]) == {gemm.flops}
        assert ours["bytes_dram"].to_numpy() == pytest.approx(gemm.bytes_min)
        assert gemm.flops / (float(rows[stage]["GFLOPS_first"]) * 1e9) == pytest.approx(2944 / 3072)
        assert (ours["flops_source"] == "model").all()
        assert (ours["bytes_source"] == "estimate").all()
        assert (ours["ops_matrix_bf16"] > 0).all()  # MI300X has no FP4 matrix roof: BF16 MFMA
        change = gemm.bytes_min / tracelens - 1
        assert change == pytest.approx(0.0181 if stage == "up" else 0.0218, abs=5e-4)
    assert moe["verdict"].ne("not-analysable").all()
    assert moe["notes"].astype(str).str.contains("31.55").sum() == 48


def _tracelens(name: str) -> list[dict]:
    path = shared(f"kineto/tracelens-known-answers/vllm-decode-{name}.csv")
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.e2e
def test_b200_moe_kernels_each_have_their_stage():
    """The B200 eager trace: 36 moe_forward calls of 7 kernels each, all modelled; the GEMMs on
    the FP8 tensor roof (MXFP8 x MXFP4), the numbers those worked by hand above."""
    launches = rooflint.report(str(shared("kineto/tracelens-b200-eager_trace.json.gz"))).launches
    moe = launches[launches["op"] == "vllm::moe_forward"]
    assert len(moe) == 36 * 7 and moe["flops"].notna().all()
    gemm1 = moe[moe["kernel"].astype(str).str.startswith("bmm_MxE4m3")]
    assert len(gemm1) == 36 and (gemm1["ops_matrix_fp8"] == 22_347_251_712).all()
    assert gemm1["bytes_dram"].to_numpy() == pytest.approx(218_612_352)


def _synthetic(tmp_path, gemm_names: list[str]):
    """A trace of one vllm::moe_forward(hidden [4, 64], logits [4, 8]) on an H100, enclosing a
    TopK (k = 2) and the [8, 32] buffer GEMM1 writes, that launches two GEMM kernels and a
    finalize kernel (External id 1)."""
    cpu = {"ph": "X", "pid": 1, "tid": 1}

    def op(name, ts, dur, dims, types, concrete, ext):
        args = {"External id": ext, "Input Dims": dims, "Input type": types}
        return {**cpu, "cat": "cpu_op", "name": name, "ts": ts, "dur": dur,
                "args": {**args, "Concrete Inputs": concrete}}  # fmt: skip

    def kernel(name, ts, correlation):
        args = {"correlation": correlation, "External id": 1, "device": 0, "stream": 7,
                "grid": [1, 1, 1], "block": [128, 1, 1]}  # fmt: skip
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts,
                "dur": 10, "args": args}  # fmt: skip

    names = [*gemm_names, "_finalize_matmul_scatter_bf16"]
    events = [
        op("vllm::moe_forward", 0, 100, [[4, 64], [4, 8]], ["c10::BFloat16"] * 2, ["", ""], 1),
        op("TopK", 5, 5, [[4, 8], []], ["c10::BFloat16", "Scalar"], ["", "2"], 2),
        op("aten::empty", 20, 1, [[]] * 2, ["ScalarList", "Scalar"], ["[8, 32]", "15"], 3),
        *(kernel(n, 200 + 20 * i, 10 + i) for i, n in enumerate(names)),
    ]
    doc = {
        "deviceProperties": [
            {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}
        ],
        "traceEvents": events,
    }
    path = tmp_path / "moe.json"
    path.write_text(json.dumps(doc))
    result = rooflint.report(str(path))
    launches = result.launches
    return launches.set_index(launches["kernel"].astype(str)), result.inputs[0].notes


def test_a_call_read_from_its_trace(tmp_path):
    """T 4, H 64, E 8, k 2 (TopK), I 32 (the [8, 32] buffer), BF16 throughout: GEMM1 2 x 8 x 64
    x 64 = 65,536 FLOPs; bytes 4 x 64 x 2 + 8 (1 - (6/8)^4) x 64 x 64 x 2 + 8 x 4 + 8 x 32 x 2
    (experts hit: 8 x 0.68359375 = 5.46875); GEMM2 2 x 8 x 32 x 64 = 32,768; finalize 4 x 64 x
    3 = 768 FLOPs."""
    gemms = ["_matmul_ogs_NNT_bf16xbf16xbf16_swiglu", "_matmul_ogs_NNT_bf16xbf16xbf16_"]
    launches, notes = _synthetic(tmp_path, gemms)
    hit = 8 * (1 - 0.75**4)
    assert hit == 5.46875
    first = launches.loc[gemms[0]]
    assert first["flops"] == 65_536 and first["ops_matrix_bf16"] == 65_536
    assert first["bytes_dram"] == 512 + hit * 8192 + 32 + 512
    assert launches.loc[gemms[1], "flops"] == 32_768
    assert launches.loc["_finalize_matmul_scatter_bf16", "flops"] == 768
    assert first["bytes_source"] == "estimate" and "5.47" in first["notes"]
    (note,) = [n for n in notes if "fused-MoE" in n]
    assert note.startswith("1 of 1 fused-MoE calls") and note.endswith("(5.47 of 8 experts)")


def test_a_call_without_formats_says_why(tmp_path):
    """vLLM's own Triton fused_moe_kernel names no operand formats: no model, and its kernels
    say so."""
    launches, notes = _synthetic(tmp_path, ["fused_moe_kernel", "fused_moe_kernel"])
    assert launches["flops"].isna().all() and not any("fused-MoE" in n for n in notes)
    assert launches["missing"].astype(str).str.contains("operand formats").all()
