"""Do Nsight Compute's sm__ops_path_tensor_* metrics count two operations per multiply-add?

Profiles cuBLAS matrix products of known M, N, K (through PyTorch) under ncu and compares
each tensor-path counter, summed over the launches of one product, with 2*M*N*K. rooflint
reads these counters as operations with no multiplier (parsers/ncu_metrics.py), so a ratio
of 1.00 confirms it and 0.50 would mean they count multiply-adds.

Needs an NVIDIA GPU, PyTorch and ncu (hardware counters must be readable):

    python3 benchmarks/tensor_ops/check.py --out DIR

Writes DIR/<case>.csv (ncu's raw page as `ncu --csv > file` leaves it), DIR/query.txt (the
tensor metrics this GPU offers), DIR/results.json and DIR/results.md. `--summarise DIR`
rewrites the two results files from the CSVs of an earlier run, with no GPU.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

# (case name, dtype, M, N, K): square products, a size that tiles badly and a split-K shape.
CASES = [
    ("bf16_4096", "bf16", 4096, 4096, 4096),
    ("fp16_4096", "fp16", 4096, 4096, 4096),
    ("tf32_4096", "tf32", 4096, 4096, 4096),
    ("fp64_2048", "fp64", 2048, 2048, 2048),
    ("fp8_4096", "fp8", 4096, 4096, 4096),
    ("int8_4096", "int8", 4096, 4096, 4096),
    ("fp16_1000", "fp16", 1000, 1000, 1000),
    ("bf16_splitk", "bf16", 128, 128, 65536),
]
# The metrics `rooflint metrics ncu --arch hopper` asks for, beside the tensor ones.
BASE_METRICS = [
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "sm__inst_executed_pipe_tensor.sum",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
]


def run_gemm(dtype: str, m: int, n: int, k: int) -> None:
    """One product inside the profiled range, after unprofiled warm-ups of the same shape."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    product = _product(torch, dtype, m, n, k)
    for _ in range(3):
        product()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    product()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def _product(torch, dtype: str, m: int, n: int, k: int):
    dev = "cuda"
    if dtype == "fp8":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if dtype == "int8":
        a = torch.randint(-8, 8, (m, k), device=dev, dtype=torch.int8)
        b = torch.randint(-8, 8, (k, n), device=dev, dtype=torch.int8)
        return lambda: torch._int_mm(a, b)
    kind = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}
    kind["fp64"] = torch.float64
    a = torch.randn(m, k, device=dev, dtype=kind[dtype])
    b = torch.randn(k, n, device=dev, dtype=kind[dtype])
    return lambda: a @ b


def find_ncu() -> str:
    found = shutil.which("ncu") or sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    if not found:
        sys.exit("ncu not found on PATH or under /opt/nvidia/nsight-compute")
    return found if isinstance(found, str) else found[-1]


def tensor_metrics(ncu: str, out: Path) -> list[str]:
    """Every sm__ops_path_tensor_* and pipe-tensor instruction counter this GPU offers."""
    query = subprocess.run(
        [ncu, "--query-metrics", "--devices", "0"], capture_output=True, text=True, timeout=120
    )
    (out / "query.txt").write_text(query.stdout + query.stderr)
    names = [line.split()[0] for line in query.stdout.splitlines() if line.strip()]
    wanted = [
        n for n in names if n.startswith(("sm__ops_path_tensor", "sm__inst_executed_pipe_tensor"))
    ]
    return [f"{n}.sum" for n in wanted]


def profile(ncu: str, case: tuple, metrics: list[str], out: Path) -> Path:
    name, dtype, m, n, k = case
    target = out / f"{name}.csv"
    cmd = [ncu, "--profile-from-start", "off", "--clock-control", "none", "--csv"]
    cmd += ["--page", "raw", "--print-units", "base", "--metrics", ",".join(metrics)]
    cmd += [sys.executable, __file__, "--gemm", dtype, str(m), str(n), str(k)]
    with target.open("w") as sink:
        subprocess.run(cmd, stdout=sink, stderr=subprocess.STDOUT, timeout=240, check=False)
    return target


def read_rows(path: Path) -> list[dict[str, str]]:
    """The launch rows of an ncu raw page, skipping ==PROF== lines and the units row."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        return []
    body = [line for line in lines[start:] if line.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(body))))
    return [row for row in rows if row.get("ID", "").isdigit()]


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def summarise(case: tuple, rows: list[dict[str, str]]) -> dict:
    name, dtype, m, n, k = case
    expected = 2 * m * n * k
    counters = {}
    for metric in rows[0] if rows else []:
        tensor = metric.startswith(("sm__ops_path_tensor", "sm__inst_executed_pipe_tensor"))
        if tensor and metric.endswith(".sum"):
            total = sum(_number(row[metric]) for row in rows)
            if total:
                counters[metric] = total
    return {
        "case": name,
        "dtype": dtype,
        "mnk": [m, n, k],
        "two_mnk": expected,
        "kernels": [row.get("Kernel Name", "")[:90] for row in rows],
        "duration_s": sum(_number(row.get("gpu__time_duration.sum", "0")) for row in rows),
        "counters": counters,
        "ratios": {
            metric: total / expected
            for metric, total in counters.items()
            if metric.startswith("sm__ops")
        },
    }


def write_markdown(results: list[dict], path: Path) -> None:
    lines = ["| case | M×N×K | kernels | counter | counted | 2·M·N·K | ratio |", "|" + " --- |" * 7]
    for r in results:
        mnk = "×".join(str(v) for v in r["mnk"])
        for metric, ratio in r["ratios"].items() or [("(none non-zero)", 0.0)]:
            counted = r["counters"].get(metric, 0.0)
            lines.append(
                f"| {r['case']} | {mnk} | {len(r['kernels'])} | `{metric}` | {counted:.6g} "
                f"| {r['two_mnk']:.6g} | {ratio:.4f} |"
            )
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    parser.add_argument("--gemm", nargs=4)
    parser.add_argument("--summarise", type=Path, help="folder of an earlier run's CSVs")
    args = parser.parse_args()
    if args.gemm:
        dtype, *dims = args.gemm
        run_gemm(dtype, *(int(d) for d in dims))
        return
    if args.summarise:
        write_results([summarise(c, read_rows(args.summarise / f"{c[0]}.csv")) for c in CASES])
        return
    args.out.mkdir(parents=True, exist_ok=True)
    ncu = find_ncu()
    metrics = BASE_METRICS + [m for m in tensor_metrics(ncu, args.out) if m not in BASE_METRICS]
    print("tensor metrics:", [m for m in metrics if "tensor" in m], flush=True)
    results = []
    for case in CASES:
        rows = read_rows(profile(ncu, case, metrics, args.out))
        results.append(summarise(case, rows))
        print(json.dumps(results[-1]), flush=True)
        write_results(results, args.out)


def write_results(results: list[dict], out: Path = Path(__file__).parent) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    write_markdown(results, out / "results.md")


if __name__ == "__main__":
    main()
