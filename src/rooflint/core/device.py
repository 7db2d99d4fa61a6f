"""A device and its ceilings: peak rates per compute class and bandwidths per memory level."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rooflint.core.errors import DeviceError
from rooflint.core.schema import COMPUTE_CLASSES, MEMORY_LEVELS


@dataclass(frozen=True)
class Ceiling:
    """One roof: `value` in op/s (compute) or byte/s (memory), and where the number came from."""

    value: float
    source: str


@dataclass(frozen=True)
class Device:
    """A GPU (or one GCD) with its ceilings; ridge points are derived, never stored."""

    id: str
    name: str
    vendor: str
    arch: str
    profiler_names: tuple
    sm_count: int
    boost_clock_hz: float
    compute: dict[str, Ceiling]
    memory: dict[str, Ceiling]
    source: str
    # Identification facts (0 = not catalogued): ncu locks the SM clock to the base clock by
    # default, and CUDA reports the memory clock; both tell SKUs of one architecture apart.
    base_clock_hz: float = 0.0
    memory_bus_bits: int = 0
    memory_bytes: int = 0  # device memory (`memory_gib`): CUDA's totalGlobalMem tells 40 from 80 GB
    identity_source: str = ""
    # The DRAM clock as measured on the part, where a datasheet's rounded bandwidth would
    # derive the wrong one (H200: 4800 GB/s over 6144 bits gives 3125 MHz; it runs at 3201).
    listed_memory_clock_hz: float = 0.0

    @property
    def memory_clock_hz(self) -> float:
        """The DRAM clock CUDA and ncu report (per-pin data rate / 2): the listed one, else from
        the DRAM bandwidth and the bus width; 0 when neither is known."""
        if self.listed_memory_clock_hz:
            return self.listed_memory_clock_hz
        dram = self.memory.get("dram")
        if not self.memory_bus_bits or dram is None:
            return 0.0
        return dram.value / (self.memory_bus_bits / 8) / 2

    def ridge(self, compute_class: str, level: str = "dram") -> float:
        """Arithmetic intensity (op/byte) where the `compute_class` roof meets the `level` slope."""
        peak = _lookup(self, self.compute, compute_class, "compute class")
        bandwidth = _lookup(self, self.memory, level, "memory level")
        return peak.value / bandwidth.value

    def replace_ceilings(
        self,
        compute: dict[str, Ceiling] | None = None,
        memory: dict[str, Ceiling] | None = None,
    ) -> Device:
        """A copy with the given ceilings added or replaced; the others are kept."""
        return dataclasses.replace(
            self,
            compute={**self.compute, **(compute or {})},
            memory={**self.memory, **(memory or {})},
        )

    def describe(self) -> list[tuple[str, float, str, str]]:
        """Rows (name, value, unit, source) for reports: ceilings, then ridge points vs DRAM."""
        rows = [
            (c, self.compute[c].value, "op/s", self.compute[c].source)
            for c in _ordered(self.compute, COMPUTE_CLASSES)
        ]
        rows += [
            (m, self.memory[m].value, "byte/s", self.memory[m].source)
            for m in _ordered(self.memory, MEMORY_LEVELS)
        ]
        if "dram" in self.memory:
            rows += [
                (f"ridge {c}/dram", self.ridge(c), "op/byte", "derived: peak / dram bandwidth")
                for c in _ordered(self.compute, COMPUTE_CLASSES)
            ]
        return rows


def _ordered(table: dict, canonical: list[str]) -> list[str]:
    return [k for k in canonical if k in table]


def _lookup(device: Device, table: dict[str, Ceiling], key: str, what: str) -> Ceiling:
    if key not in table:
        known = ", ".join(table) or "none"
        raise DeviceError(
            f"device '{device.id}' has no {what} '{key}' (it has: {known}); "
            "supply it with --device-file FILE.toml"
        )
    return table[key]
