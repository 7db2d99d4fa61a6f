"""Synthetic Nsight Compute CSV exports for benchmarks: raw or details page, any size, seeded.

The exports look like what `ncu --csv` prints for a whole-model run on an H100: a few ==PROF==
lines, the header, (raw page) a units row, then one row per launch (raw) or one row per launch
and metric (details). The metrics are the ones `rooflint metrics ncu` asks for, so every launch
is analysable. Kernel names are long C++ template names in the styles of cuBLAS, CUTLASS,
PyTorch ATen, FlashAttention, Triton, cuDNN and NCCL; launches are spread over the distinct
kernels with a heavy-tailed (Zipf-like) weight, like a real model step.

    python benchmarks/generate.py raw 200000 benchmarks/data/raw-200k.csv
    python benchmarks/generate.py details 50000 benchmarks/data/details-50k.csv --kernels 400
    python benchmarks/generate.py raw 200000 raw.csv --stdout --locale de_DE --gzip

`--stdout` writes what `ncu --csv ... > profile.csv` captures from a live run: ==PROF== lines
before the header, the application's prints among the rows and ncu's closing ==PROF== lines
after the last row. `--locale` groups digits as ncu does under LC_ALL=en_US or de_DE (a raw
page under C by default, a details page under en_US). `--gzip` compresses the file.

The same arguments and seed always give the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

DEVICE_NAME = "NVIDIA H100 80GB HBM3"
CC = ("9", "0")
SM_CLOCK_HZ = 1.755e9
DRAM_CLOCK_HZ = 2.619e9
SM_COUNT = 132
# Per-cycle peaks as ncu reports them for the whole chip (H100 SXM).
FFMA_PER_CYCLE = 128.0 * SM_COUNT
DFMA_PER_CYCLE = 64.0 * SM_COUNT
DRAM_BYTES_PER_CYCLE = 1279.0
DRAM_BW = DRAM_BYTES_PER_CYCLE * DRAM_CLOCK_HZ
FP32_PEAK = 2 * FFMA_PER_CYCLE * SM_CLOCK_HZ
BF16_PEAK = 989.4e12 * SM_CLOCK_HZ / 1.98e9

IDENTITY = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]

# (metric, raw-page base unit, details-page unit)
METRICS = [
    ("device__attribute_compute_capability_major", "", ""),
    ("device__attribute_compute_capability_minor", "", ""),
    ("device__attribute_display_name", "", ""),
    ("dram__bytes.sum", "byte", "byte"),
    ("dram__bytes.sum.peak_sustained", "byte/cycle", "byte/cycle"),
    ("dram__cycles_elapsed.avg.per_second", "hz", "cycle/second"),
    ("gpu__time_duration.sum", "ns", "nsecond"),
    ("l1tex__t_bytes.sum", "byte", "byte"),
    ("lts__t_bytes.sum", "byte", "byte"),
    ("sm__cycles_elapsed.avg.per_second", "hz", "cycle/second"),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "", ""),
    ("sm__ops_path_tensor_src_fp16_dst_fp16.sum", "", ""),
    ("sm__ops_path_tensor_src_fp16_dst_fp32.sum", "", ""),
    ("sm__ops_path_tensor_src_fp64.sum", "", ""),
    ("sm__ops_path_tensor_src_int8.sum", "", ""),
    ("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "", ""),
    ("sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "inst", "inst"),
    (
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
        "inst/cycle",
        "inst/cycle",
    ),
    ("sm__sass_thread_inst_executed_op_dmul_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "inst"),
    (
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
        "inst/cycle",
        "inst/cycle",
    ),
    ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "inst", "inst"),
    ("sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "inst", "inst"),
]
RATES = {"dram__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second"}
TEXT = {
    "device__attribute_display_name",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
}

# Kernel name styles: (kind, template). {a}..{d} are filled from small per-kernel choices.
STYLES = [
    (
        "gemm",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize{a}x{b}x64_warpgroupsize1x1x1_execute_se"
        "gment_k_off_kernel__5x_cublas",
    ),
    (
        "gemm",
        "void "
        "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_{a}x{b}_32x{c}_tn_align8>"
        "(T1::Params)",
    ),
    ("gemm", "ampere_bf16_s16816gemm_bf16_{a}x{b}_ldg8_f2f_stages_64x{c}_tn"),
    (
        "gemm",
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
        "__nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, const float *, "
        "const __nv_bfloat16 *, __nv_bfloat16 *, const float *, const float *, const "
        "__nv_bfloat16 *, const float *, __nv_bfloat16 *, void *, long, float *, int *)",
    ),
    (
        "attention",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<{a}, {b}, 64, 4, false, false, "
        "cutlass::bfloat16_t, Flash_kernel_traits<{a}, {b}, 64, 4, cutlass::bfloat16_t>>, false, "
        "true, false, false, true, true, false, false>(Flash_fwd_params)",
    ),
    (
        "attention",
        "void "
        "pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kern"
        "el_traits<{a}, "
        "64, {b}, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, "
        "pytorch_flash::Flash_kernel_traits<{a}, 64, {b}, 8, cutlass::bfloat16_t>>, true, false, "
        "false, false, false, true>(pytorch_flash::Flash_bwd_params)",
    ),
    (
        "elementwise",
        "void at::native::vectorized_elementwise_kernel<{c}, "
        "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char *, 3>>(int, T2, T3)",
    ),
    (
        "elementwise",
        "void at::native::elementwise_kernel<128, {c}, "
        "at::native::gpu_kernel_impl_nocast<at::native::GeluCUDAKernelImpl(at::TensorIteratorBase "
        "&, at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() "
        "(instance 4)]::operator ()() const::[lambda(c10::BFloat16) (instance "
        "1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
    ),
    ("elementwise", "triton_poi_fused__to_copy_add_mul_silu_{a}"),
    (
        "normalization",
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
        "float, {d}>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
    ),
    ("normalization", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_{a}"),
    (
        "softmax",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<{c}, c10::BFloat16, float, "
        "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 "
        "*, int)",
    ),
    (
        "reduction",
        "void at::native::reduce_kernel<{b}, 1, at::native::ReduceOp<float, "
        "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator "
        "()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, "
        "{c}>>(T3)",
    ),
    (
        "copy",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
        "namespace)::OpaqueType<2>, unsigned int, {c}, 64, 64>(T1 *, at::native::(anonymous "
        "namespace)::CatArrInputTensorMetadata<T1, T2, 64, 64>, at::native::(anonymous "
        "namespace)::TensorSizeStride<T2, 4>, int, T2)",
    ),
    (
        "convolution",
        "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, "
        "__nv_bfloat16, __nv_bfloat16, float, float, true>(cudnn::cnn::GroupedDirectFpropParams, "
        "{d}, T8, T9, T7 *, T8 *)",
    ),
    (
        "communication",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
    ),
]
PARAMS = {
    "a": ["64", "128", "256"],
    "b": ["64", "128", "256"],
    "c": ["2", "3", "4", "5", "8"],
    "d": ["0", "1", "2", "3", "4", "5", "6", "7"],
}


@dataclass
class Kernels:
    names: list[str]
    kinds: np.ndarray  # style kind per kernel
    grid: list[str]
    block: list[str]
    weights: np.ndarray  # launch probability


def kernels(count: int, rng: np.random.Generator) -> Kernels:
    """`count` distinct kernel names (name + configuration), heavy-tailed launch weights."""
    names, kinds, grids, blocks, seen = [], [], [], [], set()
    while len(names) < count:
        kind, template = STYLES[int(rng.integers(len(STYLES)))]
        fill = {k: v[int(rng.integers(len(v)))] for k, v in PARAMS.items()}
        if template.startswith("triton_"):  # Triton numbers its generated kernels
            fill["a"] = str(len(names))
        name = template.format(**fill)
        grid = f"({int(rng.integers(1, 4096))}, {int(rng.choice([1, 1, 2, 16]))}, 1)"
        block = f"({int(rng.choice([128, 256, 384, 512]))}, 1, 1)"
        if (name, grid, block) in seen:
            continue
        seen.add((name, grid, block))
        names.append(name)
        kinds.append(kind)
        grids.append(grid)
        blocks.append(block)
    weights = 1.0 / np.arange(1, count + 1) ** 0.9
    rng.shuffle(weights)
    return Kernels(names, np.array(kinds), grids, blocks, weights / weights.sum())


def launches(
    n: int, kernel_count: int, seed: int
) -> tuple[Kernels, dict[str, np.ndarray], np.ndarray]:
    """Per-launch metric values (SI base units) and the kernel index of every launch."""
    rng = np.random.default_rng(seed)
    ks = kernels(kernel_count, rng)
    which = rng.choice(kernel_count, size=n, p=ks.weights)
    # Per kernel: a typical duration, an efficiency and what bounds it; per launch: jitter.
    base_ns = np.exp(rng.uniform(np.log(3e3), np.log(3e6), kernel_count))
    eff = rng.uniform(0.05, 0.97, kernel_count)
    eff[rng.random(kernel_count) < 0.01] = 1.12  # a few above the roof: data errors happen
    kind = ks.kinds[which]
    duration_ns = np.rint(base_ns[which] * rng.uniform(0.9, 1.1, n))
    t = duration_ns * 1e-9
    e = eff[which] * rng.uniform(0.97, 1.03, n)
    matrix = np.isin(kind, ["gemm", "attention", "convolution"])
    no_flops = np.isin(kind, ["copy", "communication"])
    tensor_ops = np.where(matrix, e * BF16_PEAK * t, 0.0)
    mem_share = np.where(matrix, rng.uniform(0.05, 0.5, n), 1.0)
    dram = e * mem_share * DRAM_BW * t
    fp32_ops = (
        np.where(matrix | no_flops, rng.uniform(0, 0.001, n), rng.uniform(0.5, 4.0, n)) * dram / 4
    )
    values = {
        "gpu__time_duration.sum": duration_ns,
        "sm__cycles_elapsed.avg.per_second": SM_CLOCK_HZ * rng.uniform(0.999, 1.001, n),
        "dram__cycles_elapsed.avg.per_second": DRAM_CLOCK_HZ * rng.uniform(0.999, 1.001, n),
        "dram__bytes.sum": np.rint(dram),
        "lts__t_bytes.sum": np.rint(dram * rng.uniform(1.2, 3.0, n)),
        "l1tex__t_bytes.sum": np.rint(dram * rng.uniform(1.5, 6.0, n)),
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": np.rint(tensor_ops),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": np.rint(fp32_ops * 0.4),
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": np.rint(fp32_ops * 0.15),
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": np.rint(fp32_ops * 0.05),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": np.full(
            n, FFMA_PER_CYCLE
        ),
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": np.full(
            n, DFMA_PER_CYCLE
        ),
        "dram__bytes.sum.peak_sustained": np.full(n, DRAM_BYTES_PER_CYCLE),
    }
    zero = np.zeros(n)
    for metric, _, _ in METRICS:
        if metric not in values and metric not in TEXT:
            values[metric] = zero
    return ks, values, which


def _text(metric: str, values: np.ndarray, grouping: bool | str) -> pa.Array:
    """Cells as ncu prints them: integers plain, rates with two decimals; en_US grouping
    (grouping True or "en_US"), de_DE grouping ("de_DE": "1.234.567,89") or none."""
    if metric in RATES:
        cells = pa.array(
            [f"{v:,.2f}" if grouping else f"{v:.2f}" for v in values.tolist()], pa.string()
        )
    elif grouping:
        cells = pa.array([f"{v:,}" for v in values.astype(np.int64).tolist()], pa.string())
    else:
        return pc.cast(pa.array(values.astype(np.int64)), pa.string())
    if grouping == "de_DE":  # swap the marks: "," <-> "."
        cells = pc.replace_substring(
            pc.replace_substring(pc.replace_substring(cells, ",", "\x00"), ".", ","), "\x00", "."
        )
    return cells


def _identity(
    ks: Kernels, which: np.ndarray, ids: np.ndarray, rng: np.random.Generator
) -> dict[str, pa.Array]:
    n = len(which)
    take = pa.array(which)
    return {
        "ID": pc.cast(pa.array(ids), pa.string()),
        "Process ID": pa.array(["48213"] * n),
        "Process Name": pa.array(["python3.11"] * n),
        "Host Name": pa.array(["127.0.0.1"] * n),
        "Kernel Name": pa.array(ks.names).take(take),
        "Context": pa.array(["1"] * n),
        "Stream": pc.cast(pa.array(rng.choice([7, 13, 14, 22], n)), pa.string()),
        "Block Size": pa.array(ks.block).take(take),
        "Grid Size": pa.array(ks.grid).take(take),
        "Device": pa.array(["0"] * n),
        "CC": pa.array([".".join(CC)] * n),
    }


# What ncu prints around the CSV when it profiles live (absent from `ncu --import ... --csv`).
PREAMBLE = (
    "==PROF== Connected to process 48213 (/usr/bin/python3.11)\n"
    "==PROF== Disconnected from process 48213\n"
)


def _csv(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(table, sink, pacsv.WriteOptions(quoting_style="all_valid", batch_size=1 << 16))
    return sink.getvalue()


def raw(
    n: int,
    kernel_count: int = 300,
    seed: int = 1,
    preamble: bool = False,
    grouping: bool | str = False,
) -> bytes:
    """A raw-page export (`--page raw --print-units base`): one row per launch, a units row."""
    ks, values, which = launches(n, kernel_count, seed)
    rng = np.random.default_rng(seed + 1)
    columns = _identity(ks, which, np.arange(n), rng)
    for metric, _, _ in METRICS:
        columns[metric] = _metric_cells(metric, values, n, grouping=grouping)
    table = pa.table(columns)
    units = ",".join('"' + u + '"' for u in [""] * len(IDENTITY) + [m[1] for m in METRICS]) + "\n"
    header, _, body = _csv(table).partition(b"\n")
    return (PREAMBLE.encode() if preamble else b"") + header + b"\n" + units.encode() + body


def _metric_cells(metric: str, values: dict, n: int, grouping: bool | str) -> pa.Array:
    if metric == "device__attribute_display_name":
        return pa.array([DEVICE_NAME] * n)
    if metric == "device__attribute_compute_capability_major":
        return pa.array([CC[0]] * n)
    if metric == "device__attribute_compute_capability_minor":
        return pa.array([CC[1]] * n)
    return _text(metric, values[metric], grouping)


def details(
    n: int,
    kernel_count: int = 300,
    seed: int = 1,
    grouping: bool | str = True,
    preamble: bool = False,
) -> bytes:
    """A details-page export: one row per launch and metric, en_US digit grouping by default
    (what ncu prints unless run with LC_ALL=C)."""
    ks, values, which = launches(n, kernel_count, seed)
    rng = np.random.default_rng(seed + 1)
    per_launch = _identity(ks, which, np.arange(n), rng)
    m = len(METRICS)
    repeat = pa.array(np.repeat(np.arange(n), m))
    columns = {k: v.take(repeat) for k, v in per_launch.items()}
    columns["Section Name"] = pa.array(["Command line profiler metrics"] * (n * m))
    columns["Metric Name"] = pa.array([name for name, _, _ in METRICS] * n)
    columns["Metric Unit"] = pa.array([unit for _, _, unit in METRICS] * n)
    # launch-major: the cells of launch i are rows i*m .. i*m+m-1, metric order as in METRICS
    cells = [_metric_cells(name, values, n, grouping) for name, _, _ in METRICS]
    interleave = np.arange(n * m).reshape(n, m).T.reshape(-1)  # position of (metric j, launch i)
    stacked = pa.concat_arrays(cells)
    order = np.empty(n * m, dtype=np.int64)
    order[interleave] = np.arange(n * m)
    columns["Metric Value"] = stacked.take(pa.array(order))
    return (PREAMBLE.encode() if preamble else b"") + _csv(pa.table(columns))


# What a live run prints among the rows and after them (`ncu --csv ... > file`).
APP_LINES = (
    b"step 120: loss 2.3125, lr 0.0003, 41.2 ms/step",
    b'[rank0] saved "checkpoint-120.pt", 1,024 tensors',
)
CLOSING = b"==PROF== Disconnected from process 48213\n==PROF== Report: /tmp/model.ncu-rep\n"


def stdout(export: bytes, every: int = 2000) -> bytes:
    """`export` as captured from a live run's stdout: ncu's ==PROF== lines before the header
    (added when absent) and after the last row, an application print every `every` lines."""
    lines = export.split(b"\n")
    tail = lines.pop() if lines and lines[-1] == b"" else None
    start = next(i for i, line in enumerate(lines) if line.startswith(b'"'))
    body = lines[start + 1 :]
    mixed = []
    for i in range(0, len(body), every):
        mixed.extend(body[i : i + every])
        if i + every < len(body):
            mixed.append(APP_LINES[(i // every) % len(APP_LINES)])
    head = lines[:start] if start else [PREAMBLE.encode().rstrip(b"\n").split(b"\n")[0]]
    out = b"\n".join(head + [lines[start]] + mixed) + (b"\n" if tail is not None else b"")
    return out + CLOSING


LOCALES = ("C", "en_US", "de_DE")


def export(
    kind: str,
    n: int,
    kernel_count: int = 300,
    seed: int = 1,
    shape: str = "import",
    locale: str | None = None,
) -> bytes:
    """One export; shape "import" (`ncu --import ... --csv`) or "stdout" (a live run)."""
    if kind == "raw":
        grouping = {None: False, "C": False, "en_US": "en_US", "de_DE": "de_DE"}[locale]
        data = raw(n, kernel_count, seed, grouping=grouping)
    else:
        grouping = {None: True, "C": False, "en_US": "en_US", "de_DE": "de_DE"}[locale]
        data = details(n, kernel_count, seed, grouping=grouping)
    return stdout(data) if shape == "stdout" else data


def write(
    kind: str,
    n: int,
    path: str | Path,
    kernel_count: int = 300,
    seed: int = 1,
    shape: str = "import",
    locale: str | None = None,
    compress: bool = False,
) -> Path:
    """Write one export (skipped when the file already exists, since output is deterministic)."""
    path = Path(path)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = export(kind, n, kernel_count, seed, shape, locale)
    if compress:
        data = gzip.compress(data, compresslevel=6, mtime=0)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    del data
    tmp.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["raw", "details"])
    parser.add_argument("launches", type=int)
    parser.add_argument("output")
    parser.add_argument(
        "--kernels", type=int, default=300, help="distinct kernels (name + configuration)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--stdout", action="store_true", help="the shape of a live run's captured stdout"
    )
    parser.add_argument(
        "--locale", choices=LOCALES, help="digit grouping (default: raw C, details en_US)"
    )
    parser.add_argument("--gzip", action="store_true", help="gzip the file")
    args = parser.parse_args()
    out = Path(args.output)
    out.unlink(missing_ok=True)
    write(
        args.kind,
        args.launches,
        out,
        args.kernels,
        args.seed,
        "stdout" if args.stdout else "import",
        args.locale,
        args.gzip,
    )
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
