"""A ceiling's unit: as machine-readable outputs write it (op/s) and as reports show it (FLOP/s)."""

from __future__ import annotations

# The unit of a ceiling's value in JSON, Parquet and device listings, by kind.
RATE = {"compute": "op/s", "memory": "byte/s", "link": "byte/s", "host_link": "byte/s"}


def shown(kind: str, ceiling: str | None = None) -> str:
    """The unit a ceiling is shown in (after an SI prefix): B/s for memory, FLOP/s for compute,
    OP/s for an integer class when the ceiling is named (the diff's texts name none yet)."""
    if kind in ("memory", "link", "host_link"):
        return "B/s"
    return "OP/s" if ceiling is not None and ceiling.endswith("int8") else "FLOP/s"
