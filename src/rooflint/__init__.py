"""rooflint: roofline verdicts and ranked headroom from GPU profiler exports."""

from __future__ import annotations

from rooflint.core.version import __version__

__all__ = ["__version__", "load", "read_profile", "analyze", "report"]


def read_profile(path):
    """Read one profile (file or folder) into a `rooflint.core.profile.Profile`."""
    from rooflint import parsers

    return parsers.read(path)


def load(path):
    """The canonical launch table of one profile (format detected from content)."""
    return read_profile(path).launches


def analyze(launches, device=None, latency_threshold=None):
    """Roofline columns for a launch table: pure, per partition (see rooflint.core.analysis)."""
    from rooflint.core import analysis

    threshold = analysis.LATENCY_THRESHOLD if latency_threshold is None else latency_threshold
    return analysis.analyze(launches, device, threshold)


def report(*paths, **options):
    """The full analysis Result for profile paths (see rooflint.pipeline.Options)."""
    from rooflint import pipeline

    return pipeline.build(paths, pipeline.Options(**options))
