"""rooflint: roofline verdicts and ranked headroom from GPU profiler exports (the Python API).

The API is the one layer that knows parsers (reading files), hardware (picking ceilings) and core
(the maths); the command line calls these functions and nothing around them.
"""

from __future__ import annotations

from rooflint.core.version import __version__

__all__ = ["__version__", "load", "read_profile", "analyze", "report", "diff"]


def read_profile(path, locale=None):
    """Read one profile (file or folder) into a `rooflint.core.profile.Profile`."""
    from rooflint import parsers

    return parsers.read(path, locale=locale)


def load(path, locale=None):
    """The canonical launch table of one profile (format detected from content)."""
    return read_profile(path, locale).launches


def analyze(launches, device=None, latency_threshold=None):
    """Roofline columns for a launch table (see rooflint.core.analysis).

    `device` is a `rooflint.hardware.Device` (used as given), a catalog id or a device-file path
    (resolved as `rooflint report --device/--device-file` does, scaled to the launches' measured
    SM clock), or None (no ceilings: every launch is not analysable).
    """
    from rooflint import pipeline
    from rooflint.core import analysis

    threshold = analysis.LATENCY_THRESHOLD if latency_threshold is None else latency_threshold
    return analysis.analyze(launches, pipeline.device_of(launches, device), threshold)


def report(
    *paths,
    device=None,
    device_file=None,
    locale=None,
    group_by="kernel",
    latency_threshold=None,
    strict=False,
    progress=None,
    device_id=None,
    steps=None,
):
    """The full analysis Result of profile files or folders, with the options of `rooflint report`.

    `steps` chooses a trace's profiler steps ("all", "6", "4-6" or "none" for the whole trace).
    `device_id` is the former name of `device`, still accepted.
    """
    from rooflint import pipeline

    return pipeline.build(
        paths,
        pipeline.options(
            device or device_id, device_file, locale, group_by, latency_threshold, strict, steps
        ),
        progress,
    )


def diff(
    base,
    head,
    *,
    threshold=None,
    min_time=0.0,
    level=None,
    device=None,
    device_file=None,
    locale=None,
    latency_threshold=None,
    strict=False,
    steps=None,
):
    """What HEAD changed against BASE: a core.diff.Diff.

    Each side is a profile or a saved JSON report, or a list of them (repeated runs of the same
    program: run-to-run noise is then measured per group). `threshold` is the regression fraction
    (`--fail-on-regression`), `min_time` the share of total time under which groups are ignored
    (`--min-time`), `level` the confidence level of the intervals (`--confidence`, default 0.95).
    """
    from rooflint import pipeline
    from rooflint.core import diff as diffs

    options = pipeline.options(
        device, device_file, locale, "kernel", latency_threshold, strict, steps
    )
    return diffs.compare(
        pipeline.side(base, options),
        pipeline.side(head, options),
        threshold=threshold,
        min_time=min_time or 0.0,
        level=level,
    )
