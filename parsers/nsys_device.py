"""The GPUs of an Nsight Systems export: its device table, else what its names give away."""

from __future__ import annotations

import re

import numpy as np

# Product names an export's file names or command line may carry -> their compute capability.
PRODUCT_ARCH = {
    "gh200": "9.0", "h200": "9.0", "h100": "9.0", "h800": "9.0", "b200": "10.0", "b100": "10.0",
    "gb200": "10.0", "a100": "8.0", "a800": "8.0", "a30": "8.0", "a10": "8.6", "a40": "8.6",
    "l40s": "8.9", "l40": "8.9", "l4": "8.9", "v100": "7.0", "t4": "7.5",
}  # fmt: skip
_PRODUCT = re.compile(
    r"(?<![a-z0-9])(" + "|".join(sorted(PRODUCT_ARCH, key=len)[::-1]) + r")(?!\d)"
)
# Kernel names that need an architecture: cuBLAS/CUTLASS "sm90_xmma_...", Hopper's nvjet GEMMs.
_KERNEL_ARCH = re.compile(r"(?<![a-z0-9])sm_?(\d{2,3})(?=[a-z_])")
_HOPPER_KERNEL = re.compile(r"^nvjet_")


def devices(rows: list[dict]) -> dict[int, dict]:
    """TARGET_INFO_GPU rows as the deviceProperties records the Kineto path reads."""
    out = {}
    for row in rows:
        record = {
            "name": row.get("name"),
            "numSms": row.get("smCount"),
            "totalGlobalMem": row.get("totalMemory"),
        }
        if row.get("computeMajor") is not None:
            record["computeMajor"] = row["computeMajor"]
            record["computeMinor"] = row.get("computeMinor") or 0
        out[int(row["id"])] = {k: v for k, v in record.items() if v not in (None, "")}
    return out


def evidence(texts: list[str], kernels: np.ndarray) -> tuple[str | None, str]:
    """(compute capability, how it was found) for an export without a device table: a product
    named in its file names or command line, checked against the newest architecture its kernel
    names require; (None, why) when neither says."""
    products = sorted({m.group(1) for t in texts for m in _PRODUCT.finditer(t.lower())})
    needed = _kernel_arch(kernels)
    named = {PRODUCT_ARCH[p] for p in products}
    if len(named) == 1:
        arch = named.pop()
        said = f"'{products[0]}' in the export's file names or command line"
        if needed and _number(needed) > _number(arch):
            return needed, f"kernels built for compute capability {needed} (not {said})"
        check = f"; its kernels need compute capability {needed} or newer" if needed else ""
        return arch, f"compute capability {arch} from {said}{check}"
    if needed:
        return needed, f"kernels built for compute capability {needed} or newer"
    return None, "neither its file names nor its kernel names name a GPU"


def _kernel_arch(kernels: np.ndarray) -> str | None:
    """The newest architecture the kernels' names require ("9.0" for sm90_..., nvjet_...)."""
    found = set()
    for name in {str(k) for k in kernels}:
        found.update(int(m) for m in _KERNEL_ARCH.findall(name))
        if _HOPPER_KERNEL.match(name):
            found.add(90)
    if not found:
        return None
    top = max(found)
    return f"{top // 10}.{top % 10}"


def _number(arch: str) -> float:
    return float(arch)
