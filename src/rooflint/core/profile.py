"""A profile as read from one input: its launch table and what the file said about itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePath

import pandas as pd

from rooflint.core.ranks import Rank
from rooflint.core.timeline import Step


class InputFormat(StrEnum):
    """What a profile was read from. A StrEnum: a member is its text wherever it is written."""

    NCU_RAW = "ncu-raw"  # Nsight Compute CSV, raw page: a row per launch
    NCU_DETAILS = "ncu-details"  # Nsight Compute CSV, details page: a row per metric
    NCU_REP = "ncu-rep"  # Nsight Compute report, read with ncu_report
    NVPROF_METRICS = "nvprof-metrics"  # nvprof --csv --metrics: per-kernel averages
    PYTORCH_TRACE = "pytorch-trace"  # PyTorch profiler (Kineto) trace
    NSYS_SQLITE = "nsys-sqlite"  # Nsight Systems export (nsys export --type sqlite)
    ROCPROF_V1_RESULTS = "rocprof-v1-results"
    ROCPROF_V1_DB = "rocprof-v1-db"
    ROCPROF_COMPUTE_PMC = "rocprof-compute-pmc"  # a pmc_perf.csv on its own
    ROCPROF_COMPUTE_WORKLOAD = "rocprof-compute-workload"  # a workload folder
    ROCPROF_COMPUTE_ROOFLINE = "rocprof-compute-roofline"  # measured ceilings, no launches
    ROCPROFV3_COUNTER_COLLECTION = "rocprofv3-counter-collection"
    ROCPROFV3_KERNEL_TRACE = "rocprofv3-kernel-trace"
    ROCPROFV3_FOLDER = "rocprofv3-folder"
    ROCPROFV3_JSON = "rocprofv3-json"  # rocprofv3 --output-format json
    ROCPD = "rocpd"  # a rocprofv3 rocpd database
    ROCPD_FOLDER = "rocpd-folder"
    SAVED_REPORT = "rooflint-json"  # a saved `rooflint report --format json`, read back


HIDDEN = "hidden file"  # why a file named ".*" under a folder is not read (.DS_Store, ...)


def is_hidden(path: PurePath) -> bool:
    return path.name.startswith(".")


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
    `rank` is which rank of which job a trace is (`distributedInfo`), None for one of no job.
    `captured_launches` counts a capture trace's launches recorded into graphs.
    """

    source: str
    format: InputFormat
    launches: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    measured_ceilings: dict[str, float] = field(default_factory=dict)
    measured_source: str = ""
    device_hints: dict[str, object] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    rank: Rank | None = None
    # A trace recorded while CUDA/HIP graphs were captured: how many kernel launches went into
    # graphs (they ran later, in a replay trace, which takes their operators from this one).
    captured_launches: int = 0
