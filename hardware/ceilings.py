"""Choosing the ceilings of a run: user file > measured > profile-derived > catalog (at the run's
clock)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint.core.device import Ceiling, CeilingSource, Device, Origin
from rooflint.core.schema import COMPUTE_CLASSES, MEMORY_LEVELS, PEAKS, column_arrays

from .catalog import get, read_user_file
from .identify import Identification, check_choice, identify, positive_values, text_counts


def profile_ceilings(launches: pd.DataFrame) -> dict[str, Ceiling]:
    """The peaks the profile measured for its own run: the median over launches of each peak
    column."""
    clock = median_clock(launches)
    found = {}
    for column in PEAKS:
        values = positive_values(launches, column)
        if not len(values):
            continue
        key = column.removeprefix("peak_").removeprefix("bytes_")
        origin = CeilingSource(Origin.PROFILE, "", clock_hz=clock or 0.0, launches=len(values))
        found[key] = Ceiling(float(np.median(values)), origin)
    return found


def scale_to_clock(device: Device, sm_clock_hz: float | None) -> Device:
    """Datasheet compute ceilings at the measured SM clock: each class's rate x units x that
    clock, whatever clock its datasheet quotes (memory and other sources untouched)."""
    if not _usable(sm_clock_hz):
        return device
    compute = {k: c.at_clock(sm_clock_hz) for k, c in device.compute.items()}
    if all(compute[k] is c for k, c in device.compute.items()):
        return device
    return device.replace_ceilings(compute=compute)


def resolve(launches: pd.DataFrame, **options) -> tuple[Device, list[str]]:
    """The device of a run with every ceiling from the best source, and provenance lines
    (`options` are resolve_identified's: device_id, device_file, measured, ...)."""
    device, lines, _ = resolve_identified(launches, **options)
    return device, lines


def resolve_identified(
    launches: pd.DataFrame,
    *,
    device_id: str | None = None,
    device_file: str | Path | None = None,
    measured: dict[str, float] | None = None,
    measured_source: str = "",
    hints: dict | None = None,
    trust_measured: bool = True,
) -> tuple[Device, list[str], Identification]:
    """`resolve`, plus how the device was identified (evidence, open candidates).

    `trust_measured=False` (measured ceilings found beside the profile, not given by the user)
    drops them when they cannot come from this GPU."""
    columns = column_arrays(launches)  # read by name ~25 times: each column looked up once
    ident, user_keys = _pick_device(columns, device_id, device_file, hints)
    device, lines = ident.device, [ident.line()]
    scaled = scale_to_clock(device, median_clock(columns))
    foreign = (
        None if trust_measured else foreign_measurement(device, measured or {}, measured_source)
    )
    if foreign:
        lines.append(foreign)
        measured = {}
    measured_ceilings, ignored = _measured(measured or {}, measured_source)
    overrides = {**profile_ceilings(columns), **measured_ceilings}
    overrides = {k: c for k, c in overrides.items() if k not in user_keys}
    kept = {k: c for k, c in {**device.compute, **device.memory}.items() if k in user_keys}
    final = _apply(_apply(scaled, overrides), kept)
    return final, lines + ignored + _provenance(final), ident


# A measured roof (STREAM, a large GEMM) lands under the datasheet figure, rarely under half of
# it, and never far above it: outside these bounds it was measured on another GPU.
MEASURED_RANGE = (0.5, 1.25)


def foreign_measurement(device: Device, measured: dict[str, float], source: str) -> str | None:
    """Why measured ceilings cannot be this device's (their DRAM, else FP32, roof is far from
    the catalogued one), or None when they may be."""
    for key in ("dram", "vector_fp32"):
        listed = {**device.memory, **device.compute}.get(key)
        if key in measured and listed is not None and _usable(measured[key]):
            ratio = measured[key] / listed.value
            if not MEASURED_RANGE[0] <= ratio <= MEASURED_RANGE[1]:
                return (
                    f"ignored measured ceilings ({source or 'measured'}): their {key} roof is "
                    f"{ratio:.0%} of the {device.name}'s, so they were measured on another GPU; "
                    "pass the right roofline.csv with --device-file"
                )
            return None
    return None


def median_clock(launches: pd.DataFrame) -> float | None:
    """The median SM clock of the launches in Hz, or None when the profile does not report it."""
    values = positive_values(launches, "sm_clock_hz")
    return float(np.median(values)) if len(values) else None


def _pick_device(launches, device_id, device_file, hints) -> tuple[Identification, set[str]]:
    if device_file is not None:
        device, user_keys = read_user_file(device_file)
        return Identification(device, f"from --device-file {device_file}"), user_keys
    if device_id is not None:
        device = get(device_id)
        check_choice(device, launches, hints)
        return Identification(device, "chosen with --device"), set()
    ident = identify(launches, hints)
    names = text_counts(launches, "device_name")
    if len(names) > 1:
        ident.evidence += (
            f"; the profile names {len(names)} devices ({', '.join(names)}), used the most common"
        )
    return ident, set()


def _apply(device: Device, ceilings: dict[str, Ceiling]) -> Device:
    compute = {k: c for k, c in ceilings.items() if k in COMPUTE_CLASSES}
    memory = {k: c for k, c in ceilings.items() if k in MEMORY_LEVELS}
    return device.replace_ceilings(compute=compute, memory=memory)


def _measured(measured: dict[str, float], source: str) -> tuple[dict[str, Ceiling], list[str]]:
    origin = CeilingSource(Origin.MEASURED, source)
    label = origin.text
    found, ignored = {}, []
    for key, value in measured.items():
        if key not in COMPUTE_CLASSES and key not in MEMORY_LEVELS:
            ignored.append(
                f"ignored measured ceiling '{key}' ({label}): not a compute class or memory level"
            )
        elif not _usable(value):
            ignored.append(
                f"ignored measured ceiling '{key}' ({label}): {value!r} is not a positive number"
            )
        else:
            found[key] = Ceiling(float(value), origin)
    return found, ignored


def _provenance(device: Device) -> list[str]:
    """One line per source: which ceilings it supplied."""
    by_source: dict[str, list[str]] = {}
    for key, ceiling in {**device.compute, **device.memory}.items():
        by_source.setdefault(ceiling.source, []).append(key)
    return [f"{', '.join(keys)}: {source}" for source, keys in by_source.items()]


def _usable(value: object) -> bool:
    """A positive, finite number (numpy scalars included)."""
    if isinstance(value, bool):
        return False
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return 0 < number < math.inf
