"""Architecture rates per SM/CU per clock (architectures.toml): a catalog peak is rate x units x
the clock its datasheet quotes."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import tomlfiles


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
    name = "architectures.toml"
    text = tomlfiles.package_folder().joinpath(name).read_text("utf-8")
    [table] = tomlfiles.tables({name: text}).values()
    return {
        key: Architecture(
            key,
            entry.pop("name"),
            entry.pop("source"),
            {cls: float(rate) for cls, rate in entry.items()},
        )
        for key, entry in table.items()
    }
