"""A CUTLASS GEMM's problem size and minimum DRAM traffic, read from what an ncu export holds of
it: the kernel's name (threadblock tile and element types), its grid, and its FLOPs.

CUTLASS 2.x's `cutlass::gemm::kernel::Gemm<MmaCore<GemmShape<Mt, Nt, Kt>, iterator of A, ...,
iterator of B, ...>, Epilogue<..., LinearCombination<ElementOutput, ...>>, ...>` names its
threadblock tile first, then A's and B's element types in their tile iterators, and its output's
in the epilogue's LinearCombination. With the identity threadblock swizzle, grid x covers M and
grid y covers N: M = grid.x × Mt and N = grid.y × Nt (each a whole number of tiles: the true
size rounded up to one), and K = FLOPs / (2·M·N). The minimum traffic reads A (M×K) and B (K×N)
once and writes C (M×N) once; a kernel with beta ≠ 0 also reads C, which no name says.
"""

from __future__ import annotations

import re

_KERNEL = "cutlass::gemm::kernel::Gemm<"
_TILE = re.compile(r"GemmShape<\(int\)(\d+), \(int\)(\d+), \(int\)(\d+)>")
_OPERAND = re.compile(
    r"PredicatedTile(?:Access)?Iterator<cutlass::MatrixShape<\(int\)\d+, \(int\)\d+>, ([\w:]+),"
)
_OUTPUT = re.compile(r"LinearCombination<([\w:]+),")
_GRID = re.compile(r"^\((\d+), (\d+), (\d+)\)$")
ELEMENT_BYTES = {
    "cutlass::half_t": 2,
    "cutlass::bfloat16_t": 2,
    "cutlass::tfloat32_t": 4,
    "float": 4,
    "double": 8,
    "int8_t": 1,
    "cutlass::int4b_t": 0.5,
    "int": 4,
}


def named_cutlass(name) -> bool:
    """Whether a kernel name is a CUTLASS 2.x GEMM's (its shape may still not be readable)."""
    return isinstance(name, str) and _KERNEL in name


def cutlass_tile(name, grid) -> tuple[int, int, float, float, float] | None:
    """(M, N, bytes per element of A, B and C) of a CUTLASS 2.x GEMM launch from its name and
    grid, before its FLOPs give K; None where they do not say."""
    if not named_cutlass(name) or not isinstance(grid, str):
        return None
    tile, dims = _TILE.search(name), _GRID.match(grid)
    operands, output = _OPERAND.findall(name)[:2], _OUTPUT.search(name)
    if not tile or not dims or len(operands) < 2 or not output or int(dims.group(3)) != 1:
        return None
    sizes = [ELEMENT_BYTES.get(t) for t in (*operands, output.group(1))]
    if None in sizes:
        return None
    m, n = int(dims.group(1)) * int(tile.group(1)), int(dims.group(2)) * int(tile.group(2))
    a, b, c = (float(s) for s in sizes if s is not None)  # (None is out above; for mypy)
    return m, n, a, b, c
