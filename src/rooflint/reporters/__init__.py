"""Reporters: the one registry of output formats, for `report`, `diff` and `plot`."""

from __future__ import annotations

import difflib
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
    "png": ("chart_draw", "render_png"),
    "svg": ("chart_draw", "render_svg"),
    "pdf": ("chart_draw", "render_pdf"),
}
# format -> (module, function) giving the output as consecutive pieces of text or bytes: formats
# whose output grows with the launch count, written without holding the whole output.
STREAMED = {
    "json": ("json_report", "chunks"),
    "csv": ("csv_report", "chunks"),
    "parquet": ("parquet_report", "pieces"),
}
CHART_FORMATS = ("png", "svg", "pdf")  # the formats `plot` draws: a subset of FORMATS
# diff format -> (module, function, default --top); github is Markdown also sent to the step summary
DIFF_FORMATS = {
    "table": ("diff_table", "render", 20),
    "markdown": ("diff_markdown", "render", 10),
    "json": ("diff_json", "render", None),
    "github": ("diff_markdown", "render", 10),
}
EXTENSIONS = {
    ".txt": "table",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".csv": "csv",
    ".parquet": "parquet",
    ".png": "png",
    ".svg": "svg",
    ".pdf": "pdf",
}


def choose_format(fmt: str | None, output: str | None, formats=FORMATS) -> str:
    """The explicit --format, else the -o file's extension (among `formats`), else a table."""
    if fmt:
        if fmt not in formats:
            close = difflib.get_close_matches(fmt.lower(), list(formats), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(formats)}{hint}")
        return fmt
    if output and output != "-":
        suffix = Path(output).suffix.lower()
        if EXTENSIONS.get(suffix) in formats:
            return EXTENSIONS[suffix]
        if suffix == "" and "parquet" in formats and Path(output).is_dir():
            return "parquet"
        if suffix:  # out.xlsx: never a text table under a name that promises something else
            known = " ".join(s for s, f in EXTENSIONS.items() if f in formats)
            raise UsageError(
                f"cannot tell the format from the extension {suffix!r} of -o "
                f"{output}; use one of {known}, or pass --format"
            )
    return "table"


def render(result, fmt: str, **options) -> str | bytes:
    module, function = FORMATS[fmt]
    try:
        renderer = getattr(import_module(f"rooflint.reporters.{module}"), function)
    except (ImportError, AttributeError):
        raise UsageError(f"format {fmt!r} is not available in this build") from None
    return renderer(result, **options)


def render_pieces(result, fmt: str, **options):
    """The output of `render`, as an iterable of pieces for a STREAMED format (else one piece)."""
    if fmt not in STREAMED:
        return render(result, fmt, **options)
    module, function = STREAMED[fmt]
    return getattr(import_module(f"rooflint.reporters.{module}"), function)(result, **options)


def render_diff(d, gates, fmt: str, top: int | None = None) -> str:
    """A diff (rooflint.core.diff.Diff) and its gate outcomes in one of DIFF_FORMATS."""
    module, function, default_top = DIFF_FORMATS[fmt]
    renderer = getattr(import_module(f"rooflint.reporters.{module}"), function)
    if default_top is None:
        return renderer(d, gates)
    return renderer(d, gates, top=top or default_top)
