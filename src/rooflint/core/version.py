"""The package version, written into every report (kept in core so reporters can read it)."""

__version__ = "0.1.0"
