"""Synthetic PyTorch profiler traces (Kineto Chrome-trace JSON) of a given size, for benchmarks.

    python benchmarks/generate_trace.py 150 out.json     # about 150 MB

Each layer of a fake transformer step is what torch.profiler writes for it: a Python module
span, aten::linear -> aten::addmm with shapes and dtypes, the cudaLaunchKernel call, its ac2g
flow and the GEMM kernel; then an elementwise aten::add and its kernel; plus the Python call
events that make up most of a real trace's bytes. Synthetic: the names and sizes are invented.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HEADER = {
    "schemaVersion": 1,
    "deviceProperties": [
        {
            "id": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "computeMajor": 9,
            "computeMinor": 0,
            "numSms": 132,
        }
    ],
}
GEMM = (
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8>"
    "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8::Params)"
)
ADD = (
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
    "CUDAFunctorOnSelf_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::"
    "CUDAFunctorOnSelf_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, {lambda(int)#1})"
)
CPU = {"pid": 1000, "tid": 1000}


def layer(i: int, t: float) -> list[dict]:
    """The events of one layer starting at t µs (about 2.6 kB of JSON)."""
    ext, corr = 2 * i, 10 * i
    bf16 = "c10::BFloat16"
    events = [
        {
            "ph": "X",
            "cat": "python_function",
            "name": f"nn.Module: Linear_{i % 97}",
            **CPU,
            "ts": t,
            "dur": 30,
            "args": {"Python id": i},
        }
    ]
    events += [
        {
            "ph": "X",
            "cat": "python_function",
            "name": f"torch/nn/modules/module.py({k}): _call_impl",
            **CPU,
            "ts": t + k * 0.01,
            "dur": 0.5,
            "args": {"Python parent id": i},
        }
        for k in range(4)
    ]
    events += [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::linear",
            **CPU,
            "ts": t + 1,
            "dur": 20,
            "args": {
                "External id": ext,
                "Input Dims": [[8, 512, 1024], [4096, 1024], [4096]],
                "Input type": [bf16, bf16, bf16],
                "Concrete Inputs": ["", "", ""],
            },
        },
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::addmm",
            **CPU,
            "ts": t + 2,
            "dur": 15,
            "args": {
                "External id": ext + 1,
                "Input Dims": [[4096], [4096, 1024], [1024, 4096], [], []],
                "Input type": [bf16, bf16, bf16, "Scalar", "Scalar"],
                "Concrete Inputs": ["", "", "", "1", "1"],
            },
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            **CPU,
            "ts": t + 3,
            "dur": 5,
            "args": {"External id": ext + 1, "correlation": corr},
        },
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, **CPU, "ts": t + 3},
        {
            "ph": "X",
            "cat": "kernel",
            "name": GEMM,
            "pid": 0,
            "tid": 7,
            "ts": t + 10,
            "dur": 40,
            "args": {
                "External id": ext + 1,
                "device": 0,
                "stream": 7,
                "correlation": corr,
                "grid": [512, 1, 1],
                "block": [128, 1, 1],
                "registers per thread": 232,
                "shared memory": 73728,
            },
        },
        {
            "ph": "f",
            "cat": "ac2g",
            "name": "ac2g",
            "id": corr,
            "pid": 0,
            "tid": 7,
            "ts": t + 10,
            "bp": "e",
        },
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::add_",
            **CPU,
            "ts": t + 22,
            "dur": 6,
            "args": {
                "External id": ext + 2 + 10**9,
                "Input Dims": [[8, 512, 4096], [8, 512, 4096], []],
                "Input type": [bf16, bf16, "Scalar"],
                "Concrete Inputs": ["", "", "1"],
            },
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            **CPU,
            "ts": t + 23,
            "dur": 3,
            "args": {"External id": ext + 2 + 10**9, "correlation": corr + 1},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": ADD,
            "pid": 0,
            "tid": 7,
            "ts": t + 51,
            "dur": 9,
            "args": {
                "External id": ext + 2 + 10**9,
                "device": 0,
                "stream": 7,
                "correlation": corr + 1,
                "grid": [16384, 1, 1],
                "block": [128, 1, 1],
            },
        },
    ]
    return events


def write(megabytes: float, path: str | Path) -> Path:
    """A trace of about `megabytes` MB at `path` (indented one event per block, like Kineto)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = megabytes * 1e6
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(HEADER, indent=2)[:-2] + ',\n  "traceEvents": [\n')
        written, i = 0, 0
        while written < target:
            text = ",\n".join(json.dumps(e) for e in layer(i, i * 100.0))
            out.write(("" if i == 0 else ",\n") + text)
            written += len(text) + 2
            i += 1
        out.write('\n  ],\n  "traceName": "synthetic"\n}\n')
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("megabytes", type=float)
    parser.add_argument("output")
    args = parser.parse_args()
    print(write(args.megabytes, args.output))


if __name__ == "__main__":
    main()
