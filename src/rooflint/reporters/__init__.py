"""Reporters: each formats the one analysis Result; none recomputes a number."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from rooflint.core.errors import UsageError

# format -> (module, function). Chart formats import matplotlib only when asked for.
FORMATS = {
    "table": ("table", "render"),
    "json": ("json_report", "render"),
    "markdown": ("markdown", "render"),
    "html": ("html", "render"),
    "csv": ("csv_report", "render"),
    "parquet": ("parquet_report", "render"),
    "png": ("chart", "render_png"),
    "svg": ("chart", "render_svg"),
    "pdf": ("chart", "render_pdf"),
}
EXTENSIONS = {".txt": "table", ".json": "json", ".md": "markdown", ".markdown": "markdown",
              ".html": "html", ".htm": "html", ".csv": "csv", ".parquet": "parquet", ".png": "png",
              ".svg": "svg", ".pdf": "pdf"}


def choose_format(fmt: str | None, output: str | None) -> str:
    """The explicit --format, else the -o file's extension, else a terminal table."""
    if fmt:
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    if output and output != "-":
        suffix = Path(output).suffix.lower()
        if suffix in EXTENSIONS:
            return EXTENSIONS[suffix]
        if suffix == "" and Path(output).is_dir():
            return "parquet"
    return "table"


def render(result, fmt: str, **options) -> str | bytes:
    module, function = FORMATS[fmt]
    try:
        renderer = getattr(import_module(f"rooflint.reporters.{module}"), function)
    except (ImportError, AttributeError):
        raise UsageError(f"format {fmt!r} is not available in this build") from None
    return renderer(result, **options)
