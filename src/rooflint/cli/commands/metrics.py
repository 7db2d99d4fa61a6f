"""`rooflint metrics`: the profiler command line that collects what rooflint needs."""

from __future__ import annotations

import click

_VECTOR = [
    f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum"
    for p in "dfh"
    for op in ("add", "mul", "fma")
]
_BASE = [
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
] + _VECTOR
_PEAKS = [
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
]
_TENSOR = {
    "volta": ["sm__inst_executed_pipe_tensor.sum"],
    "turing": ["sm__inst_executed_pipe_tensor.sum"],
    "ampere": [
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_int8.sum",
    ],
}
# As `ncu --query-metrics` lists them on an H200 (ncu 2025.3.1): Hopper folds fp16 into one
# counter with no _dst_ suffix, and ncu refuses a command that names a metric the GPU lacks
# (benchmarks/tensor_ops/). Blackwell's list is assumed to match; no B200 query is recorded.
_TENSOR["hopper"] = [
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_int8.sum",
    "sm__ops_path_tensor_src_fp8.sum",
]
_TENSOR["blackwell"] = _TENSOR["hopper"]

# ncu's sections whose metrics the advice reads (parsers/ncu_launch.py): launch__waves_*,
# launch__occupancy_limit_* and the occupancies, l1tex/lts throughput %, the warp-state stall
# ratios and the PC-sampled stalls (`ncu --list-sections` names them).
ADVICE_SECTIONS = ("LaunchStats", "Occupancy", "SpeedOfLight", "WarpStateStats", "SourceCounters")

# rocprofv3 passes: what fits one pass together (FLOP counters, then memory counters).
ROCPROF_PASSES = [
    [
        "SQ_INSTS_VALU_ADD_F16",
        "SQ_INSTS_VALU_MUL_F16",
        "SQ_INSTS_VALU_FMA_F16",
        "SQ_INSTS_VALU_TRANS_F16",
        "SQ_INSTS_VALU_ADD_F32",
        "SQ_INSTS_VALU_MUL_F32",
        "SQ_INSTS_VALU_FMA_F32",
        "SQ_INSTS_VALU_TRANS_F32",
    ],
    [
        "SQ_INSTS_VALU_ADD_F64",
        "SQ_INSTS_VALU_MUL_F64",
        "SQ_INSTS_VALU_FMA_F64",
        "SQ_INSTS_VALU_TRANS_F64",
        "SQ_INSTS_VALU_MFMA_MOPS_F16",
        "SQ_INSTS_VALU_MFMA_MOPS_BF16",
        "SQ_INSTS_VALU_MFMA_MOPS_F32",
        "SQ_INSTS_VALU_MFMA_MOPS_F64",
    ],
    [
        "SQ_INSTS_VALU_MFMA_MOPS_I8",
        "SQ_INSTS_VALU_MFMA_MOPS_F8",
        "TCC_EA0_RDREQ_sum",
        "TCC_EA0_RDREQ_32B_sum",
        "TCC_EA0_WRREQ_sum",
        "TCC_EA0_WRREQ_64B_sum",
        "TCC_BUBBLE_sum",
    ],
    ["TCC_REQ_sum", "TCP_TOTAL_CACHE_ACCESSES_sum", "SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT"],
]


@click.group()
def metrics():
    """Print the profiler command that collects every counter rooflint uses."""


@metrics.command()
@click.option(
    "--arch",
    type=click.Choice(list(_TENSOR)),
    default="ampere",
    show_default=True,
    help="GPU generation: decides which tensor-core metrics exist.",
)
def ncu(arch):
    """Nsight Compute: raw page, base units, C locale (unambiguous numbers)."""
    names = _BASE + _TENSOR[arch] + _PEAKS
    click.echo(
        "# Nsight Compute metrics rooflint reads (duration, DRAM/L2/L1 bytes, FLOPs per precision,"
    )
    click.echo(
        "# tensor ops, and the run's own peaks). One row per launch, SI units, no locale grouping:"
    )
    click.echo(
        f"LC_ALL=C ncu --metrics {','.join(names)} \\\n"
        "    --csv --page raw --print-units base --log-file profile.csv ./your_app"
    )
    click.echo(
        "# From an existing report: "
        "LC_ALL=C ncu --import R.ncu-rep --csv --page raw --print-units base > profile.csv"
    )
    click.echo(
        "# For the advice on occupancy, waves, L1/L2 throughput and warp stalls, add: "
        + " ".join(f"--section {name}" for name in ADVICE_SECTIONS)
    )
    if arch in ("volta", "turing"):
        click.echo(
            "# This GPU has no sm__ops_path_tensor_* metrics: tensor ops are estimated from "
            "sm__inst_executed_pipe_tensor and the report says so."
        )


@metrics.command()
def rocprof():
    """rocprofv3: one --pmc line per pass (the counters do not all fit one pass)."""
    click.echo(
        "# rocprofv3 counters rooflint reads (FLOPs per precision, MFMA ops, HBM/L2/L1/LDS "
        "traffic),"
    )
    click.echo("# one pass per --pmc group; kernel durations come from --kernel-trace:")
    groups = " ".join(f"--pmc {' '.join(p)}" for p in ROCPROF_PASSES)
    click.echo(f"rocprofv3 --kernel-trace {groups} --output-format csv -d out -- ./your_app")
    click.echo(
        "# MI350 (gfx950): add TCC_EA0_RDREQ_DRAM_32B_sum TCC_EA0_WRREQ_DRAM_32B_sum for HBM bytes."
    )
    click.echo(
        "# MI100 (gfx908) and RDNA GPUs have no typed FLOP counters: rooflint reports their "
        "traffic only."
    )


NSYS_PROFILE = "nsys profile --trace=cuda,nvtx --cuda-graph-trace=node"
NSYS_SHAPES = "--pytorch=autograd-shapes-nvtx"


@metrics.command()
@click.option(
    "--shapes/--no-shapes",
    default=True,
    show_default=True,
    help="PyTorch programs: record each operator's input shapes as NVTX (operator models).",
)
def nsys(shapes):
    """Nsight Systems: CUDA and NVTX tracing, graph nodes as kernels, then the SQLite export."""
    click.echo(
        "# Nsight Systems: every kernel, copy and fill (CUDA), the ranges around them (NVTX),"
    )
    click.echo("# each CUDA graph node as its own kernel; then the SQLite export rooflint reads:")
    pytorch = f" {NSYS_SHAPES}" if shapes else ""
    click.echo(f"{NSYS_PROFILE}{pytorch} -o report ./your_app")
    click.echo("nsys export --type sqlite -o report.sqlite report.nsys-rep")
    if shapes:
        click.echo(
            f"# {NSYS_SHAPES} (PyTorch): operator names and input shapes as NVTX ranges; "
            "drop it for other programs"
        )
    click.echo(
        "# For measured FLOPs and bytes, pass an ncu export of the same program beside "
        "report.sqlite (`rooflint metrics ncu`)"
    )
