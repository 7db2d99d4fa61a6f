"""What a launch counts: operations per compute class and precision, bytes per memory level, and
the ceilings named after them. Plain lists (no pandas), shared by the launch table
(core/schema.py), the device model and the catalog."""

from __future__ import annotations

VECTOR_OPS = ["ops_vector_fp64", "ops_vector_fp32", "ops_vector_fp16"]
MATRIX_OPS = [
    "ops_matrix_fp64",
    "ops_matrix_fp32",  # genuine FP32 matrix math (AMD MFMA F32); NVIDIA has no such unit
    "ops_matrix_tf32",
    "ops_matrix_fp16",
    "ops_matrix_bf16",
    "ops_matrix_fp8",
    "ops_matrix_fp4",
    "ops_matrix_int8",
]
OPS = VECTOR_OPS + MATRIX_OPS
BYTES = ["bytes_dram", "bytes_l2", "bytes_l1", "bytes_lds"]
# Ceilings the profile itself measured for its run (ncu peak_sustained x clock), per launch.
PEAKS = ["peak_" + c.removeprefix("ops_") for c in OPS] + ["peak_" + b for b in BYTES]

# Compute classes and memory levels, named as the ceilings are named.
COMPUTE_CLASSES = [c.removeprefix("ops_") for c in OPS]
MEMORY_LEVELS = [b.removeprefix("bytes_") for b in BYTES]
