"""Which catalog GPU a profile came from, from every clue it carries, with the deciding evidence.

A compute capability (or gfx name) alone names an architecture, not a SKU: an A100 PCIe 40GB
and an A100 SXM4 80GB share 8.0 but not their DRAM roof. The profile usually says more. Nsight
Compute locks the SM clock to the SKU's base clock by default (`--clock-control base`), so the
measured `sm__cycles_elapsed.avg.per_second` is a fingerprint; the DRAM clock
(`dram__cycles_elapsed.avg.per_second`) and the SM count narrow it further. Clues are applied
in turn; a clue that no catalogued candidate fits is reported and ignored rather than trusted
to empty the list. When the survivors still differ in their ceilings, the pick is provisional
and every candidate is named with the `--device` that settles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rooflint.core.device import Device
from rooflint.core.errors import DeviceError

from .catalog import catalog
from .matching import CC_DEFAULT, GFX_RULES, match
from .names import arch_key

# (lowest, highest) measured/listed ratio that counts as "at the listed clock". Locked SM clocks
# read at or under the listed base clock on the shared fixtures (A100 PCIe 765/765 MHz, V100
# PCIe 1233/1245, RTX 2080 Ti 1306/1350, RTX 3070 1464/1500: 0 to -3.3 %); the upper 1.5 %
# absorbs ncu's rounding of auto-scaled units ("0.77 GHz"). The next SKU of each architecture
# lies outside: Titan V's 1200 MHz is 2.8 % under the V100 reading, V100 SXM2's 1312 6 % over.
SM_CLOCK_RANGE = (0.95, 1.015)
# ncu's DRAM clock reads 4.6-5.1 % under the nominal 7 GHz on the GDDR6 fixtures.
DRAM_CLOCK_RANGE = (0.92, 1.02)
# CUDA's totalGlobalMem (a trace's deviceProperties) is the listed GiB less what the driver
# keeps: 42.30e9 and 42.51e9 bytes on HTA's A100 40GB traces (98.5-99.0 % of 40 GiB).
MEMORY_RANGE = (0.95, 1.005)


@dataclass
class Identification:
    """The device picked for a profile, the evidence for it and what the evidence left open."""

    device: Device
    evidence: str  # one line: what decided
    candidates: list[str] = field(default_factory=list)  # ids still possible, ceilings differing
    provisional: bool = False
    # The pick has the highest roofs of the candidates: its efficiencies are lower bounds and
    # its headrooms upper bounds, whichever candidate the GPU is.
    highest_roofs: bool = False

    @property
    def advice(self) -> str:
        """What the user passes to settle a provisional pick."""
        if not self.provisional:
            return ""
        return "pass --device " + " or --device ".join(self.candidates)

    def line(self) -> str:
        """The device statement for reports: `device: NAME (id) — evidence`."""
        head = "device (provisional)" if self.provisional else "device"
        text = f"{head}: {self.device.name} ({self.device.id}) — {self.evidence}"
        return f"{text}; {self.advice}" if self.provisional else text


@dataclass
class Clues:
    """What one profile says about its GPU (None where it says nothing)."""

    name: str | None = None
    arch: str | None = None
    sm_count: int | None = None
    sm_clock_hz: float | None = None
    dram_clock_hz: float | None = None
    memory_bytes: float | None = None
    vendor: str | None = None  # "nvidia" or "amd", where the profile says
    version: str | None = None  # HIP's computeMajor.computeMinor ("9.0": gfx90x)
    sm_from: str | None = None  # where an SM count without deviceProperties came from

    @classmethod
    def of(cls, launches: pd.DataFrame, hints: dict | None = None) -> Clues:
        hints = hints or {}
        return cls(
            name=_most_common(launches, "device_name"),
            arch=arch_key(_most_common(launches, "arch")) or arch_key(hints.get("gfx")),
            sm_count=_count(_median(launches, "sm_count") or hints.get("cu_count")),
            sm_clock_hz=_median(launches, "sm_clock_hz"),
            dram_clock_hz=_median(launches, "dram_clock_hz"),
            memory_bytes=_count(hints.get("memory_bytes")),
            vendor=hints.get("vendor"),
            version=hints.get("compute_version"),
            sm_from=hints.get("sm_count_from"),
        )


def identify(launches: pd.DataFrame, hints: dict | None = None) -> Identification:
    """The catalog device for a profile, with the evidence line and any open candidates."""
    clues = Clues.of(launches, hints)
    if clues.name is None and clues.arch in CC_DEFAULT:
        return by_evidence(clues)
    try:
        device, how = match(clues.name, clues.arch, hints)
    except DeviceError:
        if clues.arch is None and clues.vendor and clues.sm_count:
            return by_properties(clues)  # a name no catalog part has ("AMD Radeon Graphics")
        raise
    if clues.arch in GFX_RULES and (clues.name is None or how.startswith("name ")):
        return _amd_twins(device, how, clues)
    if clues.memory_bytes and device.memory_bytes and not _MEMORY.fits(device, clues):
        return _by_memory(device, how, clues)
    return Identification(device, how)


def _by_memory(named: Device, how: str, clues: Clues) -> Identification:
    """The name matched a part whose memory the profile contradicts (a board name such as
    A100-PG509-200, printed for SXM4 A100s of either size): the parts of that architecture and
    SM count whose memory fits, the named part's form factor first."""
    pool = [
        d
        for d in catalog().values()
        if d.vendor == named.vendor
        and d.arch == named.arch
        and d.sm_count == (clues.sm_count or named.sm_count)
        and _MEMORY.fits(d, clues)
    ]
    memory = f"{_gb(clues.memory_bytes)} of device memory"
    if not pool:
        return Identification(named, f"{how}; {memory} fits no catalogued part (ignored)")
    pool.sort(key=lambda d: (_form(d) != _form(named), d.id))
    pick = pool[0]
    said = [
        f"{how}, but {memory} is a {pick.memory_bytes // 2**30} GiB part's, not its "
        f"{named.memory_bytes // 2**30} GiB: {pick.name} ({pick.id})"
    ]
    if clues.sm_count:
        said.append(f"{clues.sm_count} SMs")
    return _decide(pool, pick, said)


def by_properties(clues: Clues) -> Identification:
    """A GPU whose name and architecture say nothing the catalog knows, from its properties: the
    parts of its vendor and SM/CU count, narrowed by device memory and HIP's compute version.
    Candidates with the same ceilings are named as such; where they differ, the pick is the one
    with the highest roofs (so efficiency is a lower bound and headroom an upper bound) and it is
    provisional."""
    pool = [
        d for d in catalog().values() if d.vendor == clues.vendor and d.sm_count == clues.sm_count
    ]
    units = "CUs" if clues.vendor == "amd" else "SMs"
    counted = f"{clues.sm_count} {units}" + (f" ({clues.sm_from})" if clues.sm_from else "")
    said = [f"{_unnamed(clues)}: {_maker(clues.vendor or '')} with {counted}"]
    for label, fits in _PROPERTIES:
        shown = label(clues)
        if shown is None:
            continue
        kept = [d for d in pool if fits(d, clues)]
        said.append(shown if kept else f"{shown} fits none of them (ignored)")
        pool = kept or pool
    if not pool:
        raise DeviceError(
            f"the profile's GPU ({'; '.join(said)}) fits no catalogued part; pass --device ID "
            "(see `rooflint devices`) or --device-file FILE.toml"
        )
    said.append("fits " + ", ".join(d.id for d in pool))
    if clues.sm_from and not clues.memory_bytes:
        said.append(
            "the SM count alone: a MIG slice or an uncatalogued part with as many SMs reads the "
            "same (pass --device if it is one)"
        )
    return _highest(pool, said)


def _unnamed(clues: Clues) -> str:
    if clues.name:
        return f"'{clues.name}' names no catalogued part; from its properties"
    return "no device name or architecture in the trace; from its properties"


def _memory_shown(clues: Clues) -> str | None:
    return f"{_gb(clues.memory_bytes)} of device memory" if clues.memory_bytes else None


def _version_shown(clues: Clues) -> str | None:
    return f"HIP compute version {clues.version}" if clues.version else None


def _hip_version(gfx: str) -> str:
    """HIP's computeMajor.computeMinor of a gfx name: gfx90a -> 9.0, gfx942 -> 9.4, gfx1100 ->
    11.0 (the digits before the last two, then the next: the stepping is left out)."""
    return f"{gfx[3:-2]}.{gfx[-2]}" if gfx.startswith("gfx") and len(gfx) > 5 else ""


_PROPERTIES = (
    (_memory_shown, lambda d, c: bool(d.memory_bytes) and _MEMORY.fits(d, c)),
    (_version_shown, lambda d, c: _hip_version(d.arch) == c.version),
)


def _highest(pool: list[Device], said: list[str]) -> Identification:
    """The pick among candidates: where they share every ceiling, the one with the highest link
    roofs (the others named as having the same ceilings); where they differ, the one whose roofs
    are the highest, provisional."""
    groups = _by_ceilings(pool)
    pick = next((d for d in pool if _dominates(d, pool)), None)
    if pick is None:
        pick = max(pool, key=lambda d: (_dram(d), _roofs(d)))
        said.append(
            f"no candidate has the highest of every roof: took {pick.id}, the highest DRAM roof"
        )
    twins = [d for d in groups[_ceiling_key(pick)] if d.id != pick.id]
    if twins:
        said.append(_twins_text(pick, twins))
    if len(groups) == 1:
        return Identification(pick, "; ".join(said))
    others = [g[0].id for key, g in groups.items() if key != _ceiling_key(pick)]
    said.append(
        f"{len(groups)} parts with different ceilings: took {pick.id}, the highest roofs of them "
        f"(DRAM {_dram(pick) / 1e9:,.0f} GB/s), so efficiency is a lower bound and headroom an "
        "upper bound"
    )
    return Identification(
        pick, "; ".join(said), [pick.id, *others], provisional=True, highest_roofs=True
    )


def _twins_text(pick: Device, twins: list[Device]) -> str:
    """Parts with the pick's ceilings, and the link roofs where theirs are lower."""
    ids = ", ".join(d.id for d in twins)
    text = f"{ids} {'has' if len(twins) == 1 else 'have'} the same ceilings"
    lower = [d for d in twins if _links(d) != _links(pick)]
    if lower and pick.link is not None:
        text += (
            f" (but a lower link roof: collectives are judged against {pick.id}'s "
            f"{pick.link.kind.label}, {pick.link.value / 1e9:,.0f} GB/s; pass --device "
            f"{' or --device '.join(d.id for d in lower)} for that part)"
        )
    return text


def _dram(device: Device) -> float:
    dram = device.memory.get("dram")
    return dram.value if dram is not None else 0.0


def _links(device: Device) -> tuple[float, float]:
    return tuple(k.value if k is not None else 0.0 for k in (device.link, device.host_link))


def _roofs(device: Device) -> tuple:
    """Every roof of a device by name (compute, memory, the links), for comparing candidates."""
    return tuple(sorted(_ceiling_values(device).items())) + _links(device)


def _ceiling_values(device: Device) -> dict[str, float]:
    return {k: c.value for k, c in {**device.compute, **device.memory}.items()}


def _dominates(pick: Device, pool: list[Device]) -> bool:
    """No candidate has a higher roof than the pick's, ceiling by ceiling and link by link."""
    mine = _ceiling_values(pick)
    for other in pool:
        if any(v > mine.get(k, 0.0) for k, v in _ceiling_values(other).items()):
            return False
        if any(o > m for o, m in zip(_links(other), _links(pick), strict=True)):
            return False
    return True


def _form(device: Device) -> str:
    return next((f for f in ("sxm", "pcie", "nvl") if f in device.id), "")


def _gb(count: float) -> str:
    return f"{count / 1e9:.1f} GB"


def by_evidence(clues: Clues) -> Identification:
    """An NVIDIA GPU known only by compute capability: its SKUs scored against each clue.

    A clue no candidate fits is stated and ignored (clocks not locked, a part not catalogued);
    the others must all fit. When no candidate fits all of them, the clues disagree: the pick
    is the nearest and provisional, whatever the ceilings."""
    pool = [d for d in catalog().values() if d.vendor == "nvidia" and d.arch == clues.arch]
    said = [f"compute capability {clues.arch}"]
    checks = []
    for clue in _CLUES:
        if clue.value(clues) is None:
            continue
        if not any(clue.fits(d, clues) for d in pool):
            said.append(clue.ignored(clues))
            continue
        checks.append(clue)
    score = {d.id: sum(c.fits(d, clues) for c in checks) for d in pool}
    best = max(score.values(), default=0)
    top = [d for d in pool if score[d.id] == best]
    pick = _preferred(top, clues)
    said += [c.stated(pick, clues) for c in checks if c.fits(pick, clues)]
    if best < len(checks):
        missed = ", ".join(c.label for c in checks if not c.fits(pick, clues))
        said.append(f"but not its {missed}: the clues disagree (clocks not locked?)")
        return Identification(pick, "; ".join(said), [d.id for d in top], provisional=len(top) > 1)
    return _decide(top, pick, said)


@dataclass(frozen=True)
class _Clue:
    label: str
    value: object  # Clues -> number or None
    listed: object  # Device -> the catalogued number (0: not catalogued)
    within: tuple  # (lowest, highest) measured/listed ratio, or None for equality
    unit: str

    def fits(self, device: Device, clues: Clues) -> bool:
        measured, listed = self.value(clues), self.listed(device)
        if not measured or not listed:
            return False
        if self.within is None:
            return measured == listed
        low, high = self.within
        return low * listed <= measured <= high * listed

    def stated(self, device: Device, clues: Clues) -> str:
        if self.unit == "SM":
            return f"{self.value(clues)} SMs"
        listed = _mhz(self.listed(device))
        text = f"{self.label} {_mhz(self.value(clues))} ≈ its {self._listed_name} {listed}"
        return text + (" (ncu locks clocks to base)" if self.label == "SM clock" else "")

    def ignored(self, clues: Clues) -> str:
        shown = (
            f"{self.value(clues)} SMs"
            if self.unit == "SM"
            else f"{self.label} {_mhz(self.value(clues))}"
        )
        return f"{shown} fits no catalogued {clues.arch} part (ignored)"

    @property
    def _listed_name(self) -> str:
        return "base clock" if self.label == "SM clock" else "nominal"


_CLUES = (
    _Clue("SM count", lambda c: c.sm_count, lambda d: d.sm_count, None, "SM"),
    _Clue("SM clock", lambda c: c.sm_clock_hz, lambda d: d.base_clock_hz, SM_CLOCK_RANGE, "Hz"),
    _Clue(
        "DRAM clock", lambda c: c.dram_clock_hz, lambda d: d.memory_clock_hz, DRAM_CLOCK_RANGE, "Hz"
    ),
)
# Checked after a name match (a board name can fit parts of either memory size).
_MEMORY = _Clue("memory", lambda c: c.memory_bytes, lambda d: d.memory_bytes, MEMORY_RANGE, "B")


def _decide(pool: list[Device], pick: Device, said: list[str]) -> Identification:
    groups = _by_ceilings(pool)
    twins = [d.id for d in groups[_ceiling_key(pick)] if d.id != pick.id]
    if twins:
        said.append(f"{', '.join(twins)} {'has' if len(twins) == 1 else 'have'} the same ceilings")
    if len(groups) == 1:
        return Identification(pick, "; ".join(said))
    others = [g[0].id for key, g in groups.items() if key != _ceiling_key(pick)]
    said.append(f"fits {len(groups)} catalogued parts with different ceilings")
    return Identification(pick, "; ".join(said), [pick.id, *others], provisional=True)


def _preferred(pool: list[Device], clues: Clues) -> Device:
    """The nearest in measured clocks, else the architecture's usual part, else the first id."""

    def distance(device: Device) -> float:
        total = 0.0
        for measured, listed in (
            (clues.sm_clock_hz, device.base_clock_hz),
            (clues.dram_clock_hz, device.memory_clock_hz),
        ):
            if measured:
                total += abs(measured / listed - 1) if listed else 1.0
        return total

    usual = CC_DEFAULT.get(clues.arch or "")
    return min(pool, key=lambda d: (distance(d), d.id != usual, d.id))


def _amd_twins(device: Device, how: str, clues: Clues) -> Identification:
    """A part inferred from gfx (and CU count): others of that gfx with other ceilings stay open."""
    pool = [d for d in catalog().values() if d.arch == clues.arch]
    if clues.sm_count:
        pool = [d for d in pool if d.sm_count == clues.sm_count] or pool
    groups = _by_ceilings([device, *[d for d in pool if d.id != device.id]])
    if len(groups) == 1:
        return Identification(device, how)
    others = [g[0].id for key, g in groups.items() if key != _ceiling_key(device)]
    cus = f"{clues.sm_count} CUs" if clues.sm_count else "no CU count"
    evidence = (
        f"{clues.arch} ({cus}) fits {len(groups)} catalogued parts with different "
        f"ceilings; chose {device.id}"
    )
    return Identification(device, evidence, [device.id, *others], provisional=True)


def _by_ceilings(devices: list[Device]) -> dict[tuple, list[Device]]:
    groups: dict[tuple, list[Device]] = {}
    for device in devices:
        groups.setdefault(_ceiling_key(device), []).append(device)
    return groups


def _ceiling_key(device: Device) -> tuple:
    """What the roofline uses: every ceiling and the clock it holds at (a measured clock scales
    each by value / clock)."""
    ceilings = {**device.compute, **device.memory}
    return tuple(sorted((k, round(c.value), round(c.clock_hz)) for k, c in ceilings.items()))


def _mhz(hz: float) -> str:
    return f"{hz / 1e6:,.0f} MHz"


def _most_common(launches: pd.DataFrame, column: str) -> str | None:
    counts = text_counts(launches, column)
    return counts[0] if counts else None


def text_counts(launches: pd.DataFrame, column: str) -> list[str]:
    """Distinct non-blank values of a text column (stripped), most common first, ties in order
    of first appearance; counted over the few distinct cells, not per launch."""
    if column not in launches:
        return []
    codes, distinct = pd.factorize(launches[column])
    tally = np.bincount(codes[codes >= 0], minlength=len(distinct))
    counts: dict[str, int] = {}
    for value, count in zip(distinct, tally.tolist(), strict=True):
        text = str(value).strip()
        if text:
            counts[text] = counts.get(text, 0) + count
    return sorted(counts, key=counts.__getitem__, reverse=True)  # stable: ties keep order


def positive_values(launches: pd.DataFrame, column: str) -> np.ndarray:
    """The column's positive, finite values (NA, zero, negatives and text left out). `launches`
    (here and in text_counts, Clues.of, identify): a launch table, or its column arrays by name
    (schema.column_arrays: what resolve_identified reads them from)."""
    if column not in launches:
        return np.empty(0)
    values = launches[column]
    if values.dtype != np.float64:
        values = pd.to_numeric(pd.Series(values, copy=False), errors="coerce").astype("float64")
    values = np.asarray(values)
    return values[(values > 0) & (values < np.inf)]


def _median(launches: pd.DataFrame, column: str) -> float | None:
    values = positive_values(launches, column)
    return float(np.median(values)) if len(values) else None


def _count(value: object) -> int | None:
    try:
        number = int(round(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def check_choice(device: Device, launches: pd.DataFrame, hints: dict | None = None) -> None:
    """A `--device` of another vendor or architecture than the profile's is refused."""
    arch = Clues.of(launches, hints).arch
    if arch is None:
        return
    vendor = "amd" if arch.startswith("gfx") else "nvidia"
    if device.vendor == vendor and arch_key(device.arch) == arch:
        return
    what = "vendor" if device.vendor != vendor else "architecture"
    raise DeviceError(
        f"--device {device.id} is an {_maker(device.vendor)} "
        f"{_arch_name(arch_key(device.arch) or device.arch)} part, but the profile comes from an "
        f"{_maker(vendor)} {_arch_name(arch)} GPU (another {what}); pass a --device of that "
        f"{what} (see `rooflint devices`) or --device-file FILE.toml"
    )


def _maker(vendor: str) -> str:
    return "AMD" if vendor == "amd" else "NVIDIA" if vendor == "nvidia" else vendor


def _arch_name(arch: str) -> str:
    return arch if arch.startswith("gfx") else f"compute capability {arch}"
