"""A device and its ceilings: peak rates per compute class and bandwidths per memory level."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum

from rooflint.core.errors import DeviceError
from rooflint.core.quantities import COMPUTE_CLASSES, MEMORY_LEVELS


class Origin(StrEnum):
    """What kind of source a ceiling comes from."""

    DATASHEET = "datasheet"  # the catalog: rate per SM x SMs x the clock its datasheet quotes
    PROFILE = "profile"  # the profile's own peak_sustained x its measured clock
    MEASURED = "measured"  # measured ceilings (a roofline.csv, the API's `measured`)
    USER = "user"  # a device file


@dataclass(frozen=True)
class CeilingSource:
    """Where a ceiling came from; `text`, its provenance line, is made here and nowhere else."""

    origin: Origin
    document: str  # the source document and its date, or the file
    clock_hz: float = 0.0  # the figure's SM clock: the one its datasheet quotes, or measured
    scaled_hz: float = 0.0  # the measured SM clock a datasheet roof was scaled to (0: not scaled)
    at_boost: bool = True  # the quoted clock is the device's boost clock
    launches: int = 0  # profile: how many launches the median is over

    @property
    def text(self) -> str:
        """The provenance line: the document, and for a datasheet roof the clock it is at."""
        if self.origin is Origin.PROFILE:
            plural = "launch" if self.launches == 1 else "launches"
            where = f", SM clock {ghz(self.clock_hz)}" if self.clock_hz else ""
            return (
                "profile-derived: peak_sustained × measured clock "
                f"(median of {self.launches} {plural}{where})"
            )
        if self.origin is Origin.MEASURED:
            if not self.document:
                return "measured ceilings"
            measured = self.document.startswith("measured")
            return self.document if measured else f"measured: {self.document}"
        if self.origin is not Origin.DATASHEET or not self.clock_hz:
            return self.document
        quoted = f"{'boost' if self.at_boost else 'datasheet clock'} {ghz(self.clock_hz)}"
        if self.scaled_hz:
            return (
                f"{self.document}; scaled to measured SM clock {ghz(self.scaled_hz)} from {quoted}"
            )
        return self.document if self.at_boost else f"{self.document}; at {quoted}"


@dataclass(frozen=True)
class Ceiling:
    """One roof: `value` in op/s (compute) or byte/s (memory), and where the number came from
    (a provenance line read back from a saved report stays text)."""

    value: float
    origin: CeilingSource | str

    @property
    def source(self) -> str:
        """The provenance line every report shows."""
        return self.origin if isinstance(self.origin, str) else self.origin.text

    @property
    def clock_hz(self) -> float:
        """The SM clock this roof holds at (0: not known)."""
        origin = self.origin
        return 0.0 if isinstance(origin, str) else origin.scaled_hz or origin.clock_hz

    def at_clock(self, sm_clock_hz: float) -> Ceiling:
        """This datasheet roof at another SM clock (its rate x units x that clock); any other
        roof as it is."""
        origin = self.origin
        if isinstance(origin, str) or origin.origin is not Origin.DATASHEET or not origin.clock_hz:
            return self
        scaled = dataclasses.replace(origin, scaled_hz=sm_clock_hz)
        return Ceiling(self.value / self.clock_hz * sm_clock_hz, scaled)


class LinkKind(StrEnum):
    """A link of a device: the GPU-to-GPU one its collectives run over ([link]) or the one to its
    host CPU its host copies cross ([host_link]); its value is the device file's `kind` and the
    limiter a collective names."""

    NVLINK = "nvlink"
    INFINITY_FABRIC = "infinity_fabric"
    PCIE = "pcie"
    NVLINK_C2C = "nvlink_c2c"  # Grace Hopper's chip-to-chip link to its Grace CPU

    @property
    def label(self) -> str:
        """As reports name the roof: "NVLink", "Infinity Fabric", "PCIe"."""
        return _LINK_LABELS[self]


# A host link's name as a limiter and a saved ceiling: this prefix + its kind ("host_pcie").
HOST_PREFIX = "host_"

_LINK_LABELS = {
    LinkKind.NVLINK: "NVLink",
    LinkKind.INFINITY_FABRIC: "Infinity Fabric",
    LinkKind.PCIE: "PCIe",
    LinkKind.NVLINK_C2C: "NVLink-C2C",
}


@dataclass(frozen=True)
class Link:
    """The link roof: bandwidth per direction (byte/s) of one GPU's links to its peers, the figure
    NCCL's bus bandwidth is measured against (nccl-tests' PERFORMANCE.md), with its source."""

    kind: LinkKind
    ceiling: Ceiling

    @property
    def value(self) -> float:
        return self.ceiling.value

    @property
    def source(self) -> str:
        return self.ceiling.source


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
    # The row of architectures.toml whose rates per SM the catalog's compute peaks derive from.
    architecture: str = ""
    # The link roof collectives are placed against (None: not catalogued, no collective verdict).
    link: Link | None = None
    # The link to the host CPU that host-to-device and device-to-host copies cross (None: not
    # catalogued, no verdict for host copies).
    host_link: Link | None = None

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
        if self.link is not None:
            rows.append((f"link {self.link.kind}", self.link.value, "byte/s", self.link.source))
        if self.host_link is not None:
            host = self.host_link
            rows.append((f"host link {host.kind}", host.value, "byte/s", host.source))
        if "dram" in self.memory:
            rows += [
                (f"ridge {c}/dram", self.ridge(c), "op/byte", "derived: peak / dram bandwidth")
                for c in _ordered(self.compute, COMPUTE_CLASSES)
            ]
        return rows


def ghz(hz: float) -> str:
    """A clock as provenance lines write it ("1.755 GHz")."""
    return f"{hz / 1e9:.4g} GHz"


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
