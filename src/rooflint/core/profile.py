"""A profile as read from one input: its launch table and what the file said about itself."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rooflint.core.timeline import Step


@dataclass
class Profile:
    """One input file (or folder) after parsing.

    `launches` is a canonical launch table (see `rooflint.core.schema`). `notes` are file-level
    remarks every report should repeat (estimates, fallbacks, low-confidence counters).
    `repairs` names rows that were dropped or repaired, so that nothing is lost silently.
    `measured_ceilings` are ceilings shipped alongside the counters (e.g. a rocprof-compute
    `roofline.csv`), keyed like the catalog (`vector_fp32`, `dram`, ...), in op/s and byte/s.
    `device_hints` carries extra facts for device matching (`cu_count`, `gfx`, `product`).
    `files` are the files the profile was read from (a folder reads several), `skipped` the
    other files under a profile folder with why each was not read: nothing goes unaccounted.
    `steps` are a timeline's step annotations (`ProfilerStep#N`, host- or device-side).
    """

    source: str
    format: str
    launches: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    measured_ceilings: dict[str, float] = field(default_factory=dict)
    measured_source: str = ""
    device_hints: dict[str, object] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
