"""Architecture rates per SM/CU per clock (architectures.toml): a catalog peak is rate x units x
the clock its datasheet quotes."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Architecture:
    """An architecture's dense operations per clock per SM (or CU), by compute class."""

    key: str
    name: str
    source: str
    rates: dict[str, float]


@functools.cache
def architectures() -> dict[str, Architecture]:
    """Every architecture of architectures.toml, by key (read once, from the package data)."""
    text = resources.files("rooflint.hardware").joinpath("architectures.toml").read_text("utf-8")
    return {
        key: Architecture(
            key,
            entry.pop("name"),
            entry.pop("source"),
            {cls: float(rate) for cls, rate in entry.items()},
        )
        for key, entry in tomllib.loads(text).items()
    }
