"""Planning from the theory: the best a kernel could do before it is written."""

from __future__ import annotations

from dataclasses import dataclass

from rooflint.core.errors import UsageError

DTYPE_BYTES = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "fp4": 0.5,
    "int8": 1,
}
MATRIX_CLASS = {
    "fp64": "matrix_fp64",
    "fp32": "matrix_fp32",
    "tf32": "matrix_tf32",
    "fp16": "matrix_fp16",
    "bf16": "matrix_bf16",
    "fp8": "matrix_fp8",
    "fp4": "matrix_fp4",
    "int8": "matrix_int8",
}
VECTOR_CLASS = {
    "fp64": "vector_fp64",
    "fp32": "vector_fp32",
    "tf32": "vector_fp32",
    "fp16": "vector_fp16",
    "bf16": "vector_fp16",
    "fp8": "vector_fp16",
    "fp4": "vector_fp16",
    "int8": "vector_fp32",
}
# A GEMM in these types runs on the vector units where the GPU has no matrix path for them;
# TF32, FP8, FP4 and INT8 GEMMs exist only as matrix (tensor core, MFMA) instructions.
GEMM_VECTOR_FALLBACK = ("fp64", "fp32", "fp16", "bf16")
# The largest count a bound takes (elements, GEMM sizes, arrays): 2^53, the last integer a float
# holds exactly. No GPU's memory holds that many elements (an H200 has 1.4e11 bytes), and every
# product of such counts stays a finite float (2^53 cubed is 7e47), so no bound overflows.
MAX_COUNT = 2**53
# What launching a kernel costs before it does any work (driver, queue, ramp-up): a few µs.
LAUNCH_OVERHEAD_S = (2e-6, 5e-6)


@dataclass(frozen=True)
class Bound:
    ops: float
    bytes: float
    compute_class: str
    peak: float
    bandwidth: float

    @property
    def intensity(self) -> float:
        return self.ops / self.bytes

    @property
    def attainable(self) -> float:
        return min(self.peak, self.bandwidth * self.intensity)

    @property
    def min_time_s(self) -> float:
        return max(self.ops / self.peak, self.bytes / self.bandwidth)

    @property
    def bound_by(self) -> str:
        return "compute" if self.ops / self.peak >= self.bytes / self.bandwidth else "memory"

    @property
    def notes(self) -> list[str]:
        """Caveats on the bound: one below launch overhead is not the time the kernel will take."""
        low, high = LAUNCH_OVERHEAD_S
        if self.min_time_s >= high:
            return []
        return [
            f"the bound is under the {low * 1e6:.0f}-{high * 1e6:.0f} µs a kernel launch "
            "costs: launch overhead, not the roofline, sets this kernel's time (fuse it or "
            "batch the work)"
        ]


def gemm(device, m: int, n: int, k: int, dtype: str, out_dtype: str | None = None) -> Bound:
    """C[m,n] = A[m,k] B[k,n]: 2mnk ops; perfect reuse reads A and B once and writes C once."""
    size = DTYPE_BYTES[dtype]
    out_size = DTYPE_BYTES[out_dtype or dtype]
    ops = 2.0 * m * n * k
    moved = (m * k + k * n) * size + m * n * out_size
    if MATRIX_CLASS[dtype] not in device.compute and dtype not in GEMM_VECTOR_FALLBACK:
        raise UsageError(
            f"{device.id} has no {dtype.upper()} matrix (tensor) path, the only way a GEMM runs "
            f"in {dtype}; its GEMM dtypes are: {', '.join(gemm_dtypes(device)) or 'none'}; "
            "pick one with --dtype or another device"
        )
    return _bound(device, ops, moved, MATRIX_CLASS[dtype], VECTOR_CLASS[dtype])


def gemm_dtypes(device) -> list[str]:
    """The --dtype values a GEMM bound can use on `device`."""
    return [
        d
        for d in MATRIX_CLASS
        if MATRIX_CLASS[d] in device.compute
        or (d in GEMM_VECTOR_FALLBACK and VECTOR_CLASS[d] in device.compute)
    ]


def elementwise(
    device, n: int, dtype: str, inputs: int = 2, outputs: int = 1, ops_per_element: float = 1.0
) -> Bound:
    """n elements: read `inputs` arrays, write `outputs`, `ops_per_element` each."""
    if inputs + outputs < 1:
        raise UsageError(
            "--inputs and --outputs are both 0: an elementwise kernel reads or writes at least "
            "one array; give 1 or more to either"
        )
    moved = n * (inputs + outputs) * DTYPE_BYTES[dtype]
    return _bound(device, ops_per_element * n, moved, VECTOR_CLASS[dtype], VECTOR_CLASS[dtype])


def reduction(device, n: int, dtype: str) -> Bound:
    """Sum of n elements: n reads, about n adds."""
    return _bound(
        device, float(n), n * DTYPE_BYTES[dtype], VECTOR_CLASS[dtype], VECTOR_CLASS[dtype]
    )


def _bound(device, ops, moved, preferred, fallback) -> Bound:
    cls = preferred if preferred in device.compute else fallback
    if cls not in device.compute:
        raise UsageError(
            f"{device.id} has no {preferred} or {fallback} ceiling; pick another --dtype or device"
        )
    if "dram" not in device.memory:
        raise UsageError(f"{device.id} has no DRAM bandwidth in the catalog")
    return Bound(ops, moved, cls, device.compute[cls].value, device.memory["dram"].value)
