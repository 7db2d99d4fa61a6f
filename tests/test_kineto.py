"""PyTorch profiler traces: launches, operators, models and counters against hand-worked values.

Expected numbers come from the traces themselves (read here with json + gzip, independently of
the reader) and from the formulas in ../shared/fixtures/README.md (kineto/ section)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from click.testing import CliRunner

from rooflint import parsers, pipeline
from rooflint.cli import main
from rooflint.core import explain, opmodels
from tests.helpers import FIXTURES, ncu_details, shared

TRACES = [
    "hta-a100-alexnet",
    "hta-a100-cupti-counters",
    "hta-mi250-minitoy",
    "tracelens-b200-eager_trace",
    "tracelens-h100-bert-small-uncased",
    "tracelens-h100-nsfw_image_detection",
    "tracelens-mi300-bert-small-uncased",
    "tracelens-torch_compile_triton-trace",
]
GPU = ("kernel", "gpu_memcpy", "gpu_memset")


def trace(name: str):
    """The trace, from fixtures/kineto when it is bundled (the same bytes: tests/test_fixtures.py),
    else from the shared folder (skipping when that is absent)."""
    bundled = FIXTURES / "kineto" / f"{name}.json.gz"
    return bundled if bundled.is_file() else shared(f"kineto/{name}.json.gz")


def traces(*cases: tuple) -> list:
    """pytest params over (trace name, ...) cases; those on a trace that is not bundled read the
    shared folder, so they are marked e2e."""
    bundled = {p.name.removesuffix(".json.gz") for p in (FIXTURES / "kineto").glob("*.json.gz")}
    return [pytest.param(*c, marks=[] if c[0] in bundled else [pytest.mark.e2e]) for c in cases]


def events(path) -> list[dict]:
    with gzip.open(path) as fh:
        return json.load(fh)["traceEvents"]


@pytest.fixture(scope="module")
def bert_h100():
    return parsers.read(trace("tracelens-h100-bert-small-uncased")).launches


@pytest.mark.parametrize("name", traces(*[(name,) for name in TRACES]))
def test_one_launch_per_gpu_activity(name):
    """Every kernel/gpu_memcpy/gpu_memset event is one launch, in the trace's order (the CUPTI
    counter trace records kernels only as cuda_profiler_range events: one launch each)."""
    path = trace(name)
    raw = events(path)
    gpu = [e for e in raw if e.get("cat") in GPU] or [
        e for e in raw if e.get("cat") == "cuda_profiler_range"
    ]
    launches = parsers.read(path).launches
    assert len(launches) == len(gpu) > 0
    assert launches["kernel"].astype("string").fillna("__missing__").tolist() == [
        e["name"] for e in gpu
    ]
    if "dur" in gpu[0] and name != "hta-a100-cupti-counters":
        assert launches["duration_s"].tolist() == pytest.approx([e["dur"] * 1e-6 for e in gpu])


@pytest.mark.parametrize(
    ("name", "device"),
    traces(
        ("tracelens-h100-bert-small-uncased", "h100-sxm"),  # "NVIDIA H100 80GB HBM3"
        ("tracelens-mi300-bert-small-uncased", "mi300x"),  # "AMD Instinct MI300X VF"
        ("tracelens-b200-eager_trace", "b200"),  # "NVIDIA B200"
        ("tracelens-torch_compile_triton-trace", "mi300x"),  # "AMD Instinct MI300X"
    ),
)
def test_catalog_device_from_device_properties(name, device):
    built = pipeline.build([str(trace(name))])
    assert [use.device.id for use in built.devices] == [device]


def test_ambiguous_amd_name_asks_for_device():
    profile = parsers.read(trace("hta-mi250-minitoy"))
    assert any("AMD Radeon Graphics" in n and "--device" in n for n in profile.notes)
    built = pipeline.build([str(trace("hta-mi250-minitoy"))], pipeline.Options(device_id="mi250"))
    assert built.devices[0].device.id == "mi250"


def test_innermost_operator_owns_the_kernel(bert_h100):
    """aten::linear -> aten::addmm -> GEMM kernel: 26 of the H100 BERT kernels carry the
    External id of an aten::addmm (counted with json in the exploration of the fixture)."""
    addmm = bert_h100[bert_h100["op"] == "aten::addmm"]
    assert len(addmm) == 26
    assert set(addmm["op_parent"]) == {"aten::linear"}
    assert set(bert_h100["range"].dropna()) == {"ProfilerStep#6"}
    assert (
        addmm["module"].str.startswith("BertLMHeadModel_0.").all()
    )  # every Linear is in the model


@pytest.mark.parametrize(
    ("dims", "flops"),
    [
        # addmm(bias[N], A[M,K], B[K,N]) with M=141 tokens: 2*M*N*K
        ("[[512],[141,512],[512,512],[],[]]", 2 * 141 * 512 * 512),  # 73,924,608
        ("[[2048],[141,512],[512,2048],[],[]]", 2 * 141 * 2048 * 512),  # 295,698,432
        ("[[512],[141,2048],[2048,512],[],[]]", 2 * 141 * 512 * 2048),
    ],
)
def test_gemm_flops_from_shapes(bert_h100, dims, flops):
    rows = bert_h100[(bert_h100["op"] == "aten::addmm") & (bert_h100["op_input_dims"] == dims)]
    main = rows[rows["flops_source"] == "model"]
    assert len(main) > 0
    assert main["ops_matrix_bf16"].tolist() == [flops] * len(
        main
    )  # BF16 inputs -> BF16 tensor roof
    # bytes: bias + A + B + C, 2 bytes each: N + M*K + K*N + M*N
    m, k, n = 141, *json.loads(dims)[2]
    assert main["bytes_model_min"].iloc[0] == 2 * (n + m * k + k * n + m * n)


def test_flash_attention_flops(bert_h100):
    """_flash_attention_forward(q [B,S,H,D] = [1,141,8,64], k same, is_causal False):
    4*B*H*S_q*S_k*D = 4*1*8*141*141*64."""
    flash = bert_h100[bert_h100["op"] == "aten::_flash_attention_forward"]
    assert flash["ops_matrix_bf16"].tolist() == [4 * 1 * 8 * 141 * 141 * 64] * 4


def test_torch_compile_trace_mm_and_attention():
    """torch.compile on MI300X: aten::mm [32768,2048] x [2048,8192] -> 2*32768*8192*2048;
    flash attention q [8,4096,16,128] (B,S,H,D), is_causal 'False' -> 4*8*16*4096*4096*128."""
    launches = parsers.read(trace("tracelens-torch_compile_triton-trace")).launches
    mm = launches[launches["op_input_dims"] == "[[32768,2048],[2048,8192],[32768,8192]]"]
    assert (
        mm["ops_matrix_bf16"].tolist() == [2 * 32768 * 8192 * 2048] * 2
    )  # gate and up projections
    flash = launches[launches["op"] == "aten::_flash_attention_forward"]
    assert flash["ops_matrix_bf16"].tolist() == [4 * 8 * 16 * 4096 * 4096 * 128]


def test_attention_formula_causal_and_backward():
    """Pure formula: causal halves, backward is 2.5x forward; q given as [B,H,S,D] for SDPA."""
    forward = 4 * 2 * 16 * 1024 * 1024 * 64
    work = opmodels.model(
        "aten::_scaled_dot_product_flash_attention",
        [[2, 16, 1024, 64]] * 3 + [[]] * 4,
        ["c10::Half"] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", "True", "False", ""],
    )
    assert work.flops == forward / 2 and work.precision == "fp16"
    assert opmodels.attention_flops(2, 16, 1024, 1024, 64, False, True) == 2.5 * forward


@pytest.mark.e2e
def test_convolution_flops():
    """ViT patch embedding in the H100 nsfw trace: cudnn_convolution x [4,3,224,224], w
    [768,3,16,16], stride 16, pad 0 -> P = Q = (224-16)/16+1 = 14; 2*N*K*C*R*S*P*Q."""
    launches = parsers.read(trace("tracelens-h100-nsfw_image_detection")).launches
    conv = launches[
        (launches["op"] == "aten::cudnn_convolution") & (launches["activity"] == "kernel")
    ]
    main = conv[conv["flops_source"] == "model"]
    assert main["ops_matrix_bf16"].tolist() == [2 * 4 * 768 * 3 * 16 * 16 * 14 * 14]
    # the three layout transforms around it (nchwToNhwc x2, nhwcToNchw) stay linked, no FLOPs
    others = conv[conv["flops_source"] != "model"]  # NA included
    assert len(others) == 3 and others["missing"].str.contains("auxiliary").all()


@pytest.mark.e2e
def test_cupti_counter_ranges():
    """First range (distribution_elementwise kernel): ffma 38,731,776, hfma 4,866,048, others 0
    -> FP32 = 2*38,731,776, FP16 = 2*4,866,048. Second ("__missing__"): ffma 9,119,334,400 and
    fmul 24,780,800 -> FP32 = 2*9,119,334,400 + 24,780,800."""
    launches = parsers.read(trace("hta-a100-cupti-counters")).launches
    assert launches["ops_vector_fp32"].iloc[0] == 2 * 38_731_776
    assert launches["ops_vector_fp16"].iloc[0] == 2 * 4_866_048
    assert launches["ops_vector_fp32"].iloc[1] == 2 * 9_119_334_400 + 24_780_800
    assert (launches["flops_source"] == "counters").all()
    assert launches["duration_s"].isna().all()  # range-profiler ranges carry no kernel time
    assert launches["op"].notna().all()  # 77 ranges, 77 cudaLaunchKernel calls, linked in order


def test_trace_with_ncu_export_lends_counters(tmp_path, bert_h100):
    """A synthetic ncu export of the first two launches of the H100 BERT trace's first GEMM
    kernel (same name, grid, block), moving 3x the operator's minimum bytes."""
    gemm = bert_h100[(bert_h100["op"] == "aten::addmm") & (bert_h100["flops_source"] == "model")]
    first = gemm.iloc[0]
    same = bert_h100[
        (bert_h100["kernel"] == first["kernel"]) & (bert_h100["grid"] == first["grid"])
    ]
    minimum = same["bytes_model_min"].iloc[:2].tolist()
    rows = [
        (
            first["kernel"],
            first["block"],
            first["grid"],
            {
                "gpu__time_duration.sum": ("nsecond", "5000"),
                "dram__bytes.sum": ("byte", str(int(3 * b))),
                "sm__ops_path_tensor_src_bf16_dst_fp32.sum": ("", "1000"),
            },
        )
        for b in minimum
    ]
    csv = tmp_path / "ncu.csv"
    csv.write_text(ncu_details(rows))
    built = pipeline.build([str(trace("tracelens-h100-bert-small-uncased")), str(csv)])
    launches = built.launches
    assert len(launches) == len(bert_h100)  # the ncu launches are folded into the trace's
    lent = launches.loc[same.index[:2]]
    assert lent["flops_source"].tolist() == ["counters", "counters"]
    assert lent["ops_matrix_bf16"].tolist() == [1000.0, 1000.0]
    assert lent["bytes_dram"].tolist() == [3 * b for b in minimum]
    assert lent["excess_traffic"].tolist() == pytest.approx([3.0, 3.0])
    assert launches.loc[same.index[2:], "excess_traffic"].isna().all()
    # the group of those launches: 3x over its two lent launches, in the table and the sentence
    from rooflint.reporters import common, table

    group = built.kernels[built.kernels["kernel"] == first["kernel"]]
    assert group["excess_traffic"].tolist() == pytest.approx([3.0] * len(group))
    assert "moves 3× the bytes its shapes need" in common.kernel_sentence(built, group.iloc[0])
    assert "traffic/min" in table.render(built, top=None)  # the column, named to fit 100 columns


@pytest.mark.parametrize("chunk", [700, 5000])
def test_stream_batches_match_json_load(chunk):
    """Splitting the event list at any chunk size gives exactly json.load's events."""
    from rooflint.parsers.kineto_stream import TraceStream

    path = trace("hta-mi250-minitoy")
    stream = TraceStream(path, chunk_bytes=chunk)
    got = [e for batch in stream.batches() for e in batch]
    with gzip.open(path) as fh:
        whole = json.load(fh)
    assert got == whole["traceEvents"]
    assert stream.header["deviceProperties"] == whole["deviceProperties"]


def _bad(tmp_path, name: str, data: bytes) -> tuple[int, str]:
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out.json"
    run = CliRunner().invoke(main, ["report", str(path), "-o", str(out)])
    assert not out.exists()
    return run.exit_code, run.output.strip()


def test_truncated_trace(tmp_path):
    text = gzip.decompress(trace("hta-mi250-minitoy").read_bytes())
    code, message = _bad(tmp_path, "cut.json.gz", gzip.compress(text[: len(text) // 2]))
    assert code == 2 and len(message.splitlines()) == 1
    assert "cut.json.gz" in message and "truncated" in message


def test_json_that_is_not_a_trace(tmp_path):
    code, message = _bad(tmp_path, "x.json", b'{"model": "bert", "traceEventz": []}')
    assert code == 2 and len(message.splitlines()) == 1 and "x.json" in message
    assert "neither a PyTorch profiler trace" in message
    code, message = _bad(tmp_path, "y.json.gz", gzip.compress(b'[{"name": "not an event"}]'))
    assert code == 2 and "y.json.gz" in message and "neither a PyTorch profiler trace" in message


def test_cpu_only_trace(tmp_path):
    doc = {
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "pid": 1,
                "tid": 1,
                "ts": 1,
                "dur": 2,
                "args": {"External id": 1},
            }
        ]
    }
    code, message = _bad(tmp_path, "cpu.json", json.dumps(doc).encode())
    assert code == 2 and len(message.splitlines()) == 1 and "cpu.json" in message
    assert "no GPU activity" in message


def test_cuda_graph_replays_attributed_to_the_graph_launch(tmp_path):
    """Synthetic: one cudaGraphLaunch (correlation 7) inside user range "decode" replays two
    kernels; both get the graph launch as their operator and the range, and no model."""
    cpu = {"pid": 1, "tid": 1}
    doc = {
        "deviceProperties": [
            {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}
        ],
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "decode", "ts": 0, "dur": 100, **cpu},
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaGraphLaunch",
                "ts": 10,
                "dur": 5,
                **cpu,
                "args": {"correlation": 7},
            },
            *(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": f"k{i}",
                    "pid": 0,
                    "tid": 7,
                    "ts": 20 + i,
                    "dur": 1,
                    "args": {
                        "correlation": 7,
                        "device": 0,
                        "stream": 7,
                        "grid": [1, 1, 1],
                        "block": [32, 1, 1],
                    },
                }
                for i in range(2)
            ),
        ],
    }
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(doc))
    launches = parsers.read(path).launches
    assert launches["op"].tolist() == ["cudaGraphLaunch"] * 2
    assert launches["range"].tolist() == ["decode"] * 2
    assert launches["graph_replay"].tolist() == [True, True]
    assert np.isnan(launches["bytes_model_min"]).all()


@pytest.mark.e2e
def test_diff_of_two_gpus_matches_operators(tmp_path):
    """The same BERT-small step on an H100 (saved as a JSON report) and on an MI300X: the GEMM
    kernels differ (cutlass/sm90_xmma vs hipBLASLt), the operators and shapes do not. The
    aten::addmm with input dims [[512],[141,512],[512,512]] runs 17 times in each trace (counted
    with json in each file: External ids of that addmm signature on kernels)."""
    saved = tmp_path / "h100.json"
    run = CliRunner().invoke(
        main, ["report", str(trace("tracelens-h100-bert-small-uncased")), "-o", str(saved)]
    )
    assert run.exit_code == 0, run.output
    out = tmp_path / "diff.json"
    run = CliRunner().invoke(
        main,
        [
            "diff",
            str(saved),
            str(trace("tracelens-mi300-bert-small-uncased")),
            "-f",
            "json",
            "-o",
            str(out),
        ],
    )
    assert run.exit_code == 0, run.output
    groups = json.loads(out.read_text())["groups"]
    addmm = [g for g in groups if g["kernel"].startswith("aten::addmm [[512],[141,512],[512,512]")]
    assert [(g["match"], g["base"]["launches"], g["head"]["launches"]) for g in addmm] == [
        ("exact", 17, 17)
    ]
    assert all(g["match"] == "exact" for g in groups)


def test_elementwise_and_gather_bytes():
    """H100 BERT: aten::add([1,141,512] bf16, [1,141,512] bf16): 72,192 elements, 1 FLOP each;
    bytes = 2 inputs + 1 output x 72,192 x 2. aten::eq([1,141] long, scalar) writes bools:
    141 x 8 read + 141 x 1 written. index_select(table [30522,512] bf16, index [141] long):
    141 x 8 + 2 x 141 x 512 x 2 (rows read and written)."""
    n = 1 * 141 * 512
    add = opmodels.model(
        "aten::add",
        [[1, 141, 512], [1, 141, 512], []],
        ["c10::BFloat16", "c10::BFloat16", "Scalar"],
        ["", "", "1"],
    )
    assert (add.flops, add.bytes_min, add.precision) == (n, 3 * n * 2, "fp32")
    eq = opmodels.model("aten::eq", [[1, 141], []], ["long int", "Scalar"], ["", "0"])
    assert eq.bytes_min == 141 * 8 + 141
    rows = opmodels.model(
        "aten::index_select",
        [[30522, 512], [], [141]],
        ["c10::BFloat16", "Scalar", "long int"],
        ["", "0", ""],
    )
    assert (rows.flops, rows.bytes_min) == (0, 141 * 8 + 2 * 141 * 512 * 2)


def test_op_group_label():
    """--group-by op rows show the operator, its tensor shapes and dtypes, without scalars."""
    from rooflint.core.opgroups import short_label

    group = (
        "aten::addmm [[512],[141,512],[512,512],[],[]] "
        "c10::BFloat16, c10::BFloat16, c10::BFloat16, Scalar, Scalar"
    )
    assert short_label(group) == "aten::addmm [[512],[141,512],[512,512]] BFloat16"
    assert short_label("aten::mm (none) (none)") == "aten::mm"


@pytest.mark.e2e
def test_b200_coverage_lists_unmodelled_operators():
    """B200 eager trace: the kernels of vllm::unified_attention_with_output (no per-sequence
    lengths in its step annotation) are the largest share of GPU time without a verdict, since
    vllm::moe_forward has its model (tests/test_opmodels_moe.py). Expected share worked out here
    from the raw events: durations of GPU activities whose External id is that operator's, over
    the GPU's busy time (the union of every activity's interval: the trace has no profiler step,
    so its window is the whole trace; its streams overlap, so busy time is less than the summed
    durations)."""
    from tests.helpers import plain_union

    name = "vllm::unified_attention_with_output"
    path = trace("tracelens-b200-eager_trace")
    raw = events(path)
    op_of = {e["args"]["External id"]: e["name"] for e in raw if e.get("cat") == "cpu_op"}
    gpu = [e for e in raw if e.get("cat") in GPU]
    total = plain_union([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    assert total < sum(e["dur"] for e in gpu)
    share = sum(e["dur"] for e in gpu if op_of.get(e["args"].get("External id")) == name)
    built = pipeline.build([str(path)])
    top = built.summary.accounting["unanalysed_top"][0]
    assert top["name"] == name
    assert top["share"] == pytest.approx(share / total)
    assert built.summary.accounting["time_s"] == pytest.approx(total * 1e-6, abs=1e-7)
    from rooflint.reporters import markdown, table

    escaped = name.replace("_", "\\_")  # Markdown escapes it; the terminal wraps the line
    for text in (table.render(built), markdown.render(built)):
        line = f"largest without: {escaped} {share / total * 100:.0f} %"
        assert line in " ".join(text.replace(name, escaped).split())


@pytest.mark.parametrize("name", ["hta-a100-nccl-rank0", "hta-a100-alexnet"])
def test_a100_board_name_decided_by_memory(name):
    """deviceProperties name "NVIDIA A100-PG509-200" (a board name the catalog lists for the
    SXM4 80GB) with totalGlobalMem 42,297,524,224 bytes and 108 SMs: a 40 GB A100 SXM4 (42.3 GB
    is 98.5 % of 40 GiB, 49 % of 80 GiB). The PCIe 40GB has the same ceilings: not provisional."""
    built = pipeline.build([str(trace(name))])
    (use,) = built.devices
    assert use.device.id == "a100-sxm4-40gb"
    assert use.device.memory["dram"].value == 1555e9
    assert not use.provisional
    assert "42.3 GB of device memory is a 40 GiB part's, not its 80 GiB" in use.evidence
    assert "108 SMs" in use.evidence


@pytest.mark.parametrize(
    ("kernel", "roof"),
    [
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(...)", "tf32"),
        ("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4", "tf32"),
        ("ampere_s16816gemm_tf32_128x128_ldg8_stages_32x3_nn", "tf32"),
        ("nvjet_tst_tf32_128x64_64x4_2x1_v_bz_TNN", "tf32"),
        ("ampere_sgemm_32x32_sliced1x4_tn", "vector"),
        ("cutlass_80_simt_sgemm_128x128_8x5_nn_align1", "vector"),
        ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4>", "vector"),
        ("triton_tem_fused_mm_0", None),
    ],
)
def test_fp32_gemm_roof_from_the_kernel_name(kernel, roof):
    """FP32 GEMM work goes to the TF32 tensor roof when the name says TF32 (tensorop_s1688 is
    CUTLASS's m16n8k8 TF32 MMA), to the FP32 vector roof for SIMT names, and when the name says
    neither, to the FP32 vector roof (PyTorch's default) with a caveat on the verdict."""
    work = opmodels.gemm(256, 256, 256, 1, "float")
    assert opmodels.fp32_path(kernel) == roof
    expected = "matrix_tf32" if roof == "tf32" else "vector_fp32"
    assert opmodels.compute_class(work, "NVIDIA", kernel) == expected


def test_fp32_roof_left_open_says_so_in_the_verdict(tmp_path):
    """A one-kernel trace: aten::mm on float [64,64]x[64,64] whose kernel name says neither TF32
    nor SIMT; the launch notes the assumption and the verdict sentence names the roof assumed."""
    trace_doc = {
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9,
                              "computeMinor": 0, "numSms": 132, "totalGlobalMem": 85018279936}],
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
             "dur": 50, "args": {"External id": 7, "Input Dims": [[64, 64], [64, 64]],
                                 "Input type": ["float", "float"]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 10, "dur": 5, "args": {"correlation": 3, "External id": 7}},
            {"ph": "X", "cat": "kernel", "name": "triton_tem_fused_mm_0", "pid": 0, "tid": 7,
             "ts": 100, "dur": 4, "args": {"correlation": 3, "External id": 7, "device": 0,
                                           "stream": 7, "grid": [1, 1, 1], "block": [128, 1, 1]}},
        ],
    }  # fmt: skip
    path = tmp_path / "mm.json"
    path.write_text(json.dumps(trace_doc))
    built = pipeline.build([str(path)])
    (launch,) = built.launches.itertuples()
    assert launch.ops_vector_fp32 == 2 * 64**3
    assert opmodels.FP32_ASSUMED in launch.notes
    (group,) = built.kernels.itertuples()
    assert "fp32_assumed" in group.unmeasured
    line = explain.sentence(
        group.verdict, group.efficiency, group.limiter, "", "nvidia", "fp32_assumed"
    )
    assert "FP32 vector roof assumed" in line


def test_cat_model_from_the_trace():
    """timesformer's aten::cat([[128,1,768],[128,196,768]], 1) on CatArrayBatchedCopy<OpaqueType<
    2u>> (2-byte elements): no FLOPs; bytes = inputs read + output written = 2 x 128 x 197 x 768
    x 2 = 77,463,552 (in the trace: 25 such launches of the contiguous kernel)."""
    path = trace("tracelens-h100-timesformer")
    raw = [
        e
        for e in events(path)
        if e.get("cat") == "cpu_op"
        and e["name"] == "aten::cat"
        and e["args"]["Input Dims"] == [[[128, 1, 768], [128, 196, 768]], []]
    ]
    launches = parsers.read(path).launches
    cat = launches[
        (launches["op"] == "aten::cat")
        & (launches["op_input_dims"] == "[[[128,1,768],[128,196,768]],[]]")
        & launches["flops_source"].notna()
    ]
    assert len(cat) == len(raw) > 0
    assert set(cat["bytes_dram"]) == {2 * 128 * 197 * 768 * 2}
    assert set(cat["ops_vector_fp32"]) == {0.0}
    assert opmodels.element_bytes("CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>") == 4
    assert opmodels.model("aten::cat", [[[2, 3], [2, 5]], []], ["TensorList", "Scalar"], []) is None


def test_models_of_the_step_operators():
    """Operators holding >= 1 % of a step in the shared traces (benchmarks/step_operators.py),
    shapes from those traces, worked by hand:
    - mse_loss([5,128] f32 x2, mean): 3 x 640 FLOPs; 640 x 4 x 2 + 4 bytes;
    - fused_add_rms_norm([888,2880] x2 bf16, [2880]): 5 x 2,557,440 FLOPs; 4 x 2,557,440 x 2 +
      2,880 x 2 bytes;
    - rotary_embedding(pos [888] long, q [888,512], k [888,64], head 64, cache [131072,64] bf16):
      rotated = 888 x (8 + 1) x 64, 3 FLOPs each; bytes 2 x (888 x 576 x 2) + 888 x 8 + 888 x 64
      x 2;
    - reshape_and_cache_flash(k, v [888,1,64] bf16, caches uint8, slots [888] long): 0 FLOPs;
      2 x 888 x 64 x 2 + 888 x 8 + 2 x 888 x 64 x 1 bytes;
    - all([1,141] bool): 0 FLOPs, 141 bytes; batch norm forward 8 FLOPs per element."""
    mse = opmodels.model(
        "aten::mse_loss", [[5, 128], [5, 128], []], ["float", "float", "Scalar"], ["", "", "1"]
    )
    assert (mse.flops, mse.bytes_min) == (3 * 640, 640 * 4 * 2 + 4)
    n = 888 * 2880
    norm = opmodels.model(
        "_C::fused_add_rms_norm",
        [[888, 2880], [888, 2880], [2880], []],
        ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"],
        ["", "", "", "1e-05"],
    )
    assert (norm.flops, norm.bytes_min) == (5 * n, 4 * n * 2 + 2880 * 2)
    rope = opmodels.model(
        "_C::rotary_embedding",
        [[888], [888, 512], [888, 64], [], [131072, 64], []],
        ["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"],
        ["", "", "", "64", "", "True"],
    )
    assert rope.flops == 3 * 888 * 9 * 64
    assert rope.bytes_min == 2 * 888 * 576 * 2 + 888 * 8 + 888 * 64 * 2
    cache = opmodels.model(
        "_C_cache_ops::reshape_and_cache_flash",
        [[888, 1, 64], [888, 1, 64], [4213816, 16, 1, 64], [4213816, 16, 1, 64], [888], [], [], []],
        [
            "c10::BFloat16",
            "c10::BFloat16",
            "unsigned char",
            "unsigned char",
            "long int",
            "",
            "float",
            "float",
        ],
        [""] * 8,
    )
    assert (cache.flops, cache.bytes_min) == (0, 2 * 888 * 64 * 2 + 888 * 8 + 2 * 888 * 64)
    flag = opmodels.model("aten::all", [[1, 141]], ["bool"], [""])
    assert (flag.flops, flag.bytes_min) == (0, 141)
    bn = opmodels.model(
        "aten::cudnn_batch_norm",
        [[32, 64, 56, 56], [64], [64], [64], [64], [], [], []],
        ["float"] * 5 + ["Scalar"] * 3,
        [""] * 8,
    )
    x = 32 * 64 * 56 * 56
    assert (bn.flops, bn.bytes_min) == (8 * x, 2 * x * 4 + 4 * 64 * 4)


def test_unmodelled_operators_say_why():
    """aten::index on the B200 trace has no model, and its launch says why (the index tensors'
    shapes are not recorded). A trace recorded without shapes (HTA's NCCL trace) says so
    instead of "no model"."""
    b200 = parsers.read(trace("tracelens-b200-eager_trace")).launches
    index = b200.loc[b200["op"] == "aten::index", "missing"].astype(str)
    assert (
        len(index)
        and index.str.contains(
            "no operator model for aten::index (the index tensors' shapes", regex=False
        ).all()
    )
    nccl = parsers.read(trace("hta-a100-nccl-rank0")).launches
    conv = nccl.loc[nccl["op"] == "aten::cudnn_convolution", "missing"].astype(str)
    assert conv.str.contains(
        "no input shapes recorded (profile with record_shapes=True)", regex=False
    ).any()
