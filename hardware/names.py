"""Normalising the device names profilers print, for matching and for suggesting close ids."""

from __future__ import annotations

import re

# Vendor and brand words that profilers add or drop between versions ("Tesla", "NVIDIA", ...).
NOISE = frozenset({"nvidia", "tesla", "geforce", "amd", "instinct", "accelerator", "vf"})


def spaced(name: str) -> str:
    """Case-folded, whitespace-normalised: the key for an exact match."""
    return " ".join(name.split()).casefold()


def tokens(name: str) -> frozenset[str]:
    """The words of a device name that identify the part, as a set."""
    text = spaced(name)
    text = re.sub(r"\s*\(\d+\)$", "", text)  # nvprof appends the device index: "Tesla K20c (0)"
    text = re.sub(r"_[a-z]\d+$", "", text)  # rocprof-compute appends the stepping: "MI300X_A1"
    return frozenset(t for t in re.split(r"[^a-z0-9]+", text) if t and t not in NOISE)


def token_key(name: str) -> str:
    """`tokens` as one sorted string, usable as a dictionary key and for fuzzy comparison."""
    return " ".join(sorted(tokens(name)))


def arch_key(arch: str | None) -> str | None:
    """'sm_80' and '8.0' as '8.0'; 'gfx90a:sramecc+:xnack-' as 'gfx90a'; blank as None."""
    if arch is None:
        return None
    text = str(arch).strip().lower()
    if not text or text in ("nan", "<na>", "none"):
        return None
    text = text.split(":", 1)[0]
    sm = re.fullmatch(r"sm_?(\d+)(\d)", text)
    if sm:
        return f"{sm.group(1)}.{sm.group(2)}"
    return text
