"""rooflint: roofline verdicts and ranked headroom from GPU profiler exports (the Python API).

The API is the one layer that knows parsers (reading files), hardware (picking ceilings) and core
(the maths); the command line calls these functions and nothing around them.
"""

from __future__ import annotations

import functools

from rooflint.core import display
from rooflint.core.version import __version__
from rooflint.options import takes_inputs

__all__ = ["__version__", "load", "read_profile", "analyze", "report", "diff"]


def _show(result, how: str) -> str:
    """repr(result) and result._repr_html_(): the registry's notebook reporter (core imports no
    reporter; the registry is imported on first use, so `import rooflint` loads no pandas)."""
    from rooflint import reporters

    return reporters.show(result, how)


display.show = _show


def read_profile(path, locale=None):
    """Read one profile (file or folder) into a `rooflint.core.profile.Profile` (a graph replay
    trace with the capture trace beside it, as `report` reads it)."""
    from rooflint import graphs, join, parsers

    profiles = graphs.pair([parsers.read(path, locale=locale)])
    return join.pair(profiles)[0]  # a trace's notes settled


def load(path, locale=None):
    """The canonical launch table of one profile (format detected from content)."""
    return read_profile(path, locale).launches


def analyze(launches, device=None, latency_threshold=None):
    """Roofline columns for a launch table (see rooflint.core.analysis).

    `device` is a `rooflint.hardware.Device` (used as given), a catalog id or a device-file path
    (resolved as `rooflint report --device/--device-file` does, scaled to the launches' measured
    SM clock), or None: identified from the launches as `rooflint report` does without
    --device (where no catalog device fits, every launch is not analysable, as in that report).
    """
    from rooflint import pipeline
    from rooflint.core import analysis

    threshold = pipeline.latency_threshold_of(latency_threshold)
    return analysis.analyze(launches, pipeline.device_of(launches, device), threshold)


@takes_inputs
def report(*paths, group_by="kernel", progress=None, device_id=None, launches=True, inputs):
    """The full analysis Result of profile files or folders, with the options of `rooflint report`
    (the input options: rooflint.options.InputOptions).

    Each path may be a str, a pathlib.Path or a list of them; a Result already analysed is
    ranked again by `group_by` (input options, which cannot change it, are refused with it).
    `group_by` is one of rooflint.core.groupings.GROUPINGS. `device_id` is the former name of
    `device`, still accepted. `launches=False` keeps no launch row: each file is reduced to its
    per-group sums as it is read (rooflint.reduced), so a folder's memory grows with its groups,
    not its launches; the Result's ranking, summary and accounting are the same, its `launches`
    an empty table (enough for the terminal and Markdown reports and the gates).
    `launches` may also be the registry's word for the rows a format needs ("all", "none",
    "pieces"). `launches="pieces"` reduces a folder so too and writes each file's launch rows to a
    temporary file where it is read (rooflint.spill): `result.launch_pieces()` gives them back
    a file at a time (what the JSON, CSV and Parquet reports write), the full path's rows.
    `launches="timeline"` (Perfetto) spills each file's launches outside its window too.
    """
    from rooflint import pipeline

    options = pipeline.Options(**vars(inputs), group_by=group_by, device_id=device_id)
    rows = _ROWS.get(launches) if isinstance(launches, (bool, str)) else None
    if rows is None:
        from rooflint.core.errors import UsageError

        raise UsageError(f"launches is True, False or 'pieces', not {launches!r}")
    if rows == "all":
        return pipeline.report(paths, options, progress)
    from rooflint import reduced

    spilled = rows in ("pieces", "timeline")
    make = functools.partial(reduced.build, spilled=spilled, outside=rows == "timeline")
    return pipeline.report(paths, options, progress, make=make)


# What `launches` asks for: every row in memory, none, or a folder's kept on disk (the
# registry's words, rooflint.reporters.ROWS, as the command line passes them).
_ROWS: dict[bool | str, str] = {True: "all", False: "none"}
_ROWS.update((word, word) for word in ("all", "none", "pieces", "timeline"))


@takes_inputs
def diff(base, head, *, threshold=None, min_time=0.0, level=None, inputs):
    """What HEAD changed against BASE: a core.diff.Diff.

    Each side is a profile, a saved JSON report or a Result, or a list of them (repeated runs of
    the same program: run-to-run noise is then measured per group). The numbers take the units
    of the command line: `threshold` is the regression gate in percent, as `--fail-on-regression`
    (10 or "10%" is 10 %; a bare number between 0 and 1 is refused as ambiguous: give 10, or
    "0.1%"); `min_time` the share of total time under which groups are ignored, as `--min-time`
    (0.01 or "1%"); `level` the confidence level of the intervals, as `--confidence` (0.95, 95 or
    "95%"); the input options are those of rooflint.options.InputOptions.
    """
    from rooflint import pipeline
    from rooflint.core import diff as diffs
    from rooflint.core import thresholds

    options = pipeline.Options(**vars(inputs))
    threshold = None if threshold is None else thresholds.parse_threshold(threshold, "threshold")
    min_time = thresholds.parse_fraction(min_time or 0.0, "min_time")
    level = None if level is None else thresholds.parse_level(level, "level")
    return diffs.compare(
        pipeline.side(base, options),
        pipeline.side(head, options),
        threshold=threshold,
        min_time=min_time,
        level=level,
    )
