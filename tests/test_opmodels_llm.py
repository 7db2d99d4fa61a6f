"""LLM-serving operator models (core/opmodels_llm.py): formulas by hand, and the vLLM decode replay
(paired with its capture) against TraceLens's InferenceAttention_fwd.csv and RMSNorm_fwd.csv."""

from __future__ import annotations

import csv

import pytest

import rooflint
from rooflint.core import opmodels_llm
from rooflint.core.opmodels_llm import Lengths
from tests.helpers import shared

STEP = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"
ATTENTION_DIMS = [[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]
ATTENTION_TYPES = ["c10::BFloat16"] * 4 + ["", "", "", "c10::BFloat16"]


def test_vllm_step_lengths_from_the_annotation():
    assert Lengths.of(STEP) == Lengths((0, 0, 0, 0), (32, 55086, 32, 55086))
    assert Lengths.of("ProfilerStep#3") is None


def test_paged_attention_by_hand():
    """Decode, 32 sequences, 55,086 KV tokens in all, H_q 64, H_kv 8, d 64, BF16: FLOPs
    4 x 64 x 64 x 55,086 = 902,529,024; bytes = q + out (2 x 32 x 64 x 64 x 2 = 524,288) + K and
    V (55,086 x 8 x 64 x 2 x 2 = 112,816,128) = 113,340,416. An FP8 key halves the KV bytes."""
    work, why = opmodels_llm.model(
        "vllm::unified_attention_with_output", ATTENTION_DIMS, ATTENTION_TYPES, [], Lengths.of(STEP)
    )
    assert (work.flops, work.bytes_min, why) == (902_529_024, 113_340_416, "")
    fp8 = ["c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", *ATTENTION_TYPES[3:]]
    work8, _ = opmodels_llm.model(
        "vllm::unified_attention_with_output", ATTENTION_DIMS, fp8, [], Lengths.of(STEP)
    )
    assert work8.bytes_min == 524_288 + 112_816_128 // 2


def test_prefill_attention_is_causal():
    """One prefill of 128 tokens (sq = sk = 128, Σ sq² = Σ sq·sk = 16,384): 4·H·d·(16,384 −
    8,192)."""
    lengths = Lengths((128, 128, 16384, 16384), (0, 0, 0, 0))
    work, _ = opmodels_llm.model(
        "vllm::unified_attention_with_output", ATTENTION_DIMS, ATTENTION_TYPES, [], lengths
    )
    assert work.flops == 4 * 64 * 64 * 8192


def test_static_fp8_quant_by_hand():
    """_C::static_scaled_fp8_quant as the B200 trace records it: out [888, 512] FP8, input
    [888, 512] BF16, scale: 454,656 elements, 1 FLOP each; bytes 454,656 x (1 + 2) = 1,363,968."""
    work, _ = opmodels_llm.model(
        "_C::static_scaled_fp8_quant",
        [[888, 512], [888, 512], []],
        ["c10::Float8_e4m3fn", "c10::BFloat16", "float"],
        ["", "", ""],
        None,
    )
    assert (work.flops, work.bytes_min, work.unit) == (454_656, 1_363_968, "vector")


def test_vllm_rms_norm_by_hand():
    """_C::rms_norm(out, input, weight, eps) as the B200 trace records it: [888, 2880] BF16 twice
    and a [2880] weight: 2,557,440 elements x 4 FLOPs = 10,229,760; bytes 2 x 2,557,440 x 2 +
    2880 x 2 = 10,235,520 (the input read, out written, the weight read)."""
    work, _ = opmodels_llm.model(
        "_C::rms_norm",
        [[888, 2880], [888, 2880], [2880], []],
        ["c10::BFloat16"] * 3 + ["Scalar"],
        ["", "", "", "1e-05"],
        None,
    )
    assert (work.flops, work.bytes_min) == (10_229_760, 10_235_520)


def test_without_the_step_annotation_attention_says_why():
    work, why = opmodels_llm.model(
        "vllm::unified_attention_with_output", ATTENTION_DIMS, ATTENTION_TYPES, [], None
    )
    assert work is None and why == opmodels_llm.NO_LENGTHS


@pytest.fixture(scope="module")
def vllm():
    replay = shared("kineto/tracelens-vllm-decode-graph-replay.json.gz")
    capture = shared("kineto/tracelens-vllm-decode-graph-capture.json.gz")
    return rooflint.report(str(replay), str(capture)).launches


def _tracelens(name: str) -> list[dict]:
    path = shared(f"kineto/tracelens-known-answers/vllm-decode-{name}.csv")
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.e2e
def test_attention_agrees_with_tracelens(vllm):
    """InferenceAttention_fwd.csv: GFLOPS 0.902529024, Data Moved 108.08984375 MB (2^20 B) for
    both rows (the 2d and the 3d kernel's layers): rooflint's exactly. The 12 launches of
    kernel_unified_attention_2d move those bytes in 13.5 µs, 8.4 TB/s (TraceLens's TB/s_mean
    too), above MI300X's 5.3 TB/s: they are GPT-OSS's sliding-window layers, which read the last
    128 tokens of each sequence only, and neither the shapes nor the annotation say so; rooflint
    flags them above the roof rather than hide it."""
    rows = _tracelens("InferenceAttention_fwd")
    attention = vllm[(vllm["op"] == "vllm::unified_attention_with_output")]
    modelled = attention[attention["flops_source"] == "model"]
    assert len(modelled) == 24
    for row in rows:
        assert set(modelled["flops"]) == {float(row["GFLOPS_first"]) * 1e9}
        assert set(modelled["bytes_dram"] / 2**20) == {float(row["Data Moved (MB)_first"])}
    two_d = modelled[modelled["kernel"] == "kernel_unified_attention_2d"]
    assert (two_d["verdict"] == "above-roof").all() and len(two_d) == 12


@pytest.mark.e2e
def test_rmsnorm_agrees_with_tracelens(vllm):
    """RMSNorm_fwd.csv: aiter::rmsnorm2d_fwd_with_add_ck (32, 2880) BF16: TraceLens 460,864
    FLOPs, rooflint 5 per element = 460,800 (TraceLens adds 2 per row, the mean's division and
    the rsqrt: 0.014 %); 0.7086181640625 MB = 743,040 B (four [32, 2880] tensors and the weight
    once) the same. aiter::rms_norm: TraceLens 368,704 FLOPs, rooflint 4 per element = 368,640
    (2 per row again: 0.017 %); bytes 374,400 (input, output, weight) the same."""
    expected = {r["name"]: r for r in _tracelens("RMSNorm_fwd")}
    for name, flops in (
        ("aiter::rmsnorm2d_fwd_with_add_ck", 460_800),
        ("aiter::rms_norm", 368_640),
    ):
        rows = vllm[(vllm["op"] == name) & (vllm["flops_source"] == "model")]
        assert len(rows) > 0 and set(rows["flops"]) == {flops}
        assert set(rows["bytes_dram"] / 2**20) == {float(expected[name]["Data Moved (MB)_first"])}
        tracelens = float(expected[name]["GFLOPS_first"]) * 1e9
        assert tracelens - flops == 2 * 32  # 2 per row of 32
        assert flops == pytest.approx(tracelens, rel=0.01)
