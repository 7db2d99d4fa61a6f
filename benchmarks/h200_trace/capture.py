"""A PyTorch trace and an Nsight Compute export of the same iterations of one model, for the join.

A bf16 transformer block (LayerNorm, attention through scaled_dot_product_attention, a GELU
MLP) runs two warm-up iterations, then two captured ones: once under torch.profiler (Chrome
trace, shapes and Python stacks recorded), once inside cudaProfilerStart/Stop under ncu with the
metrics `rooflint metrics ncu --arch hopper` prints. Needs a GPU, PyTorch and ncu:

    python3 benchmarks/h200_trace/capture.py --out DIR

Writes DIR/trace.json.gz and DIR/ncu-raw-stdout.csv (as `ncu --csv ... > file` leaves it).
With `--train STEPS` it captures that many training steps instead (forward, backward, AdamW),
printing a line per step as a live run does, into DIR/train-trace.json.gz and
DIR/train-ncu-raw-stdout.csv.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BATCH, SEQ, WIDTH, HEADS = 8, 1024, 2048, 16


def block(torch):
    nn = torch.nn

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
            self.out = nn.Linear(WIDTH, WIDTH)

        def forward(self, x):
            q, k, v = self.qkv(x).view(BATCH, SEQ, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
            y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out(y.transpose(1, 2).reshape(BATCH, SEQ, WIDTH))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.attn = Attention()
            self.mlp = nn.Sequential(
                nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH)
            )

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    return Block().cuda().to(torch.bfloat16)


def run(mode: str, out: Path, steps: int) -> None:
    import torch

    model = block(torch)
    x = torch.randn(BATCH, SEQ, WIDTH, device="cuda", dtype=torch.bfloat16)
    if steps:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        work = lambda: _train(model, x, optimizer, steps)  # noqa: E731
        _train(model, x, optimizer, 2)
        name = "train-trace.json"
    else:
        work = lambda: _forward(torch, model, x)  # noqa: E731
        _forward(torch, model, x)
        name = "trace.json"
    torch.cuda.synchronize()
    if mode == "trace":
        kinds = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=kinds, record_shapes=True, with_stack=True) as prof:
            work()
            torch.cuda.synchronize()
        prof.export_chrome_trace(str(out / name))
    else:
        torch.cuda.cudart().cudaProfilerStart()
        work()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def _forward(torch, model, x) -> None:
    with torch.no_grad():
        for _ in range(2):
            model(x)


def _train(model, x, optimizer, steps: int) -> None:
    for step in range(steps):
        loss = model(x).float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f}", flush=True)


def hopper_metrics() -> str:
    path = HERE.parents[1] / "src" / "rooflint" / "cli" / "commands" / "metrics.py"
    spec = importlib.util.spec_from_file_location("metrics", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ",".join(module._BASE + module._TENSOR["hopper"] + module._PEAKS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--mode", choices=["trace", "ncu"])
    parser.add_argument("--train", type=int, default=0, metavar="STEPS")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode:
        run(args.mode, args.out, args.train)
        return
    prefix = "train-" if args.train else ""
    app = [sys.executable, __file__, "--out", str(args.out), "--train", str(args.train)]
    subprocess.run(app + ["--mode", "trace"], check=True, stdout=subprocess.DEVNULL)
    trace = args.out / f"{prefix}trace.json"
    with trace.open("rb") as src, gzip.open(f"{trace}.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    trace.unlink()
    ncu = shutil.which("ncu") or "ncu"
    cmd = [ncu, "--profile-from-start", "off", "--csv", "--page", "raw", "--print-units", "base"]
    cmd += ["--metrics", hopper_metrics(), *app, "--mode", "ncu"]
    with (args.out / f"{prefix}ncu-raw-stdout.csv").open("w") as sink:
        subprocess.run(cmd, stdout=sink, check=True, timeout=400)


if __name__ == "__main__":
    main()
