"""Reporters: the one registry of output formats, for `report`, `diff`, `plot` and a Result's repr.

Each output format is one `Format` record in REGISTRY, and everything that lists formats reads it:
the commands' --format choices, the -o extensions, which formats are binary, streamed or charts,
the options each takes and the --top it shows by default. Adding a format is its module and one
record. A renderer's module is imported only when it renders (a chart's matplotlib with it).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from rooflint.core.errors import UsageError


class Kind(enum.StrEnum):
    """What a format renders."""

    REPORT = "report"  # a core Result: `rooflint report` and `rooflint plot`
    DIFF = "diff"  # a core Diff and its gate outcomes: `rooflint diff`
    REPR = "repr"  # a Result's repr() and a notebook's _repr_html_()


REPORT, DIFF, REPR = Kind.REPORT, Kind.DIFF, Kind.REPR


@dataclass(frozen=True)
class Format:
    """One output format: the function that renders it and what a command may ask of it."""

    name: str  # --format NAME (a repr: "text" for repr(), "html" for _repr_html_())
    module: str  # rooflint.reporters.MODULE
    function: str = "render"  # (result, **options); a diff format's: (diff, gates, **options)
    kind: Kind = REPORT
    extensions: tuple[str, ...] = ()  # an -o path ending in one of these chooses the format
    options: tuple[str, ...] = ()  # the options it takes, by parameter name: excel_safe
    top: int | None = None  # the --top it shows when none is given (None: all, or a chart's own)
    binary: bool = False  # bytes: never written to a terminal
    streamed: str = ""  # a function giving the output as pieces, written one after another
    chart: bool = False  # a roofline chart: what `plot` draws
    folder: bool = False  # `-o DIR/` writes a dataset folder: the renderer is given `output`
    about: str = ""  # a few words for --help, where a command describes its formats
    # the launch rows it needs (ROWS): "none" (table, markdown, HTML, the charts) is given a
    # Result reduced file by file (rooflint.reduced: memory grows with groups only); "pieces"
    # (JSON, CSV, Parquet, Perfetto) one whose rows a folder keeps on disk, written from them a
    # file at a time (rooflint.spill); "all" the full path's, every row in memory (no format
    # of the registry now); "timeline" (Perfetto) the pieces and each file's launches outside
    # its window, spilled beside them (the others' runs spill no warm-up)
    rows: str = "all"

    def rows_for(self, options: dict) -> str:
        """The rows it needs with these options: per kernel group (--per kernel) none."""
        return "none" if "per" in self.options and options.get("per") == "kernel" else self.rows


ROWS = ("none", "pieces", "timeline", "all")


def _chart(name: str) -> Format:
    """A roofline chart, drawn by chart_draw.render_NAME."""
    return Format(
        name,
        "chart_draw",
        f"render_{name}",
        extensions=(f".{name}",),
        options=("level", "top"),
        binary=True,
        chart=True,
        rows="none",
    )


REGISTRY = (
    Format(
        "table",
        "table",
        extensions=(".txt",),
        options=("top", "verbose", "columns"),
        top=20,
        rows="none",
    ),
    Format(
        "json",
        "json_report",
        extensions=(".json",),
        options=("top",),
        streamed="chunks",
        rows="pieces",
    ),
    Format("markdown", "markdown", extensions=(".md", ".markdown"), options=("top",), rows="none"),
    Format("html", "html", extensions=(".html", ".htm"), options=("top", "level"), rows="none"),
    Format(
        "csv",
        "csv_report",
        extensions=(".csv",),
        options=("per", "excel_safe"),
        streamed="chunks",
        rows="pieces",
    ),
    Format(
        "parquet",
        "parquet_report",
        extensions=(".parquet",),
        options=("per",),
        binary=True,
        streamed="pieces",
        folder=True,
        rows="pieces",
    ),
    Format(
        "perfetto",
        "perfetto",
        extensions=(".perfetto.json",),
        streamed="chunks",
        rows="timeline",
        about="the timeline as Chrome-trace JSON for Perfetto, each launch with its verdict",
    ),
    _chart("png"),
    _chart("svg"),
    _chart("pdf"),
    Format(
        "table",
        "diff_table",
        kind=DIFF,
        extensions=(".txt",),
        options=("top", "columns"),
        top=20,
        about="default",
    ),
    Format(
        "markdown",
        "diff_markdown",
        kind=DIFF,
        extensions=(".md", ".markdown"),
        options=("top",),
        top=10,
        about="a PR comment",
    ),
    Format("json", "diff_json", kind=DIFF, extensions=(".json",)),
    Format(
        "github",
        "diff_markdown",
        kind=DIFF,
        options=("top",),
        top=10,
        about="Markdown, also appended to $GITHUB_STEP_SUMMARY",
    ),
    Format("text", "notebook", "text", kind=REPR),
    Format("diff_text", "notebook", "diff_text", kind=REPR),  # a Diff's repr()
    Format("html", "notebook", "html", kind=REPR, options=("top",)),
)
# Modules that render no format themselves: what the renderers above share.
HELPERS = (
    "common",
    "arrow_text",
    "terminal",
    "chart",
    "chart_legend",
    "html_svg",
    "html_assets",
    "diff_common",
)


def formats(kind: Kind = REPORT) -> dict[str, Format]:
    """The formats of one kind by name, in registry order."""
    return {f.name: f for f in REGISTRY if f.kind == kind}


def charts() -> dict[str, Format]:
    """The report formats that are roofline charts (what `plot` draws)."""
    return {name: f for name, f in formats(REPORT).items() if f.chart}


def extensions(known: dict[str, Format]) -> list[str]:
    """The -o extensions that choose one of `known`, in the order the registry first names them."""
    return list(dict.fromkeys(e for f in REGISTRY for e in f.extensions if by_extension(e, known)))


def by_extension(suffix: str, known: dict[str, Format]) -> Format | None:
    return next((f for f in known.values() if suffix.lower() in f.extensions), None)


def choose(fmt: str | None, output: str | None, kind: Kind = REPORT) -> Format:
    """The explicit --format, else the -o file's extension (among the formats of `kind`), else a
    table."""
    known = formats(kind)
    if fmt:
        if fmt not in known:
            import difflib  # here: `rooflint devices` imports this package (its terminal helpers)

            close = difflib.get_close_matches(fmt.lower(), list(known), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(known)}{hint}")
        return known[fmt]
    if output and output != "-":
        path = Path(output)
        suffix = path.suffix.lower()
        if suffix:
            double = "".join(path.suffixes[-2:]).lower()  # x.perfetto.json
            chosen = by_extension(double, known) or by_extension(suffix, known)
            if chosen is None:  # out.xlsx: never a text table under a name that promises more
                raise UsageError(
                    f"cannot tell the format from the extension {suffix!r} of -o "
                    f"{output}; use one of {' '.join(extensions(known))}, or pass --format"
                )
            return chosen
        folder = next((f for f in known.values() if f.folder), None)
        if folder is not None and path.is_dir():
            return folder
    return known["table"]


def render(result, fmt: str, output: str | None = None, **options) -> str | bytes | None:
    """`result` (a core Result) in the report format `fmt`, whole; None when a folder format
    wrote a dataset folder at `output` itself."""
    chosen = formats(REPORT)[fmt]
    return _call(chosen, chosen.function, (result,), options, output)


def render_pieces(result, fmt: str, output: str | None = None, **options):
    """The output of `render`, as an iterable of pieces for a streamed format (else one piece)."""
    chosen = formats(REPORT)[fmt]
    return _call(chosen, chosen.streamed or chosen.function, (result,), options, output)


def render_diff(d, gates, fmt: str, **options) -> str:
    """A diff (rooflint.core.diff.Diff) and its gate outcomes in the diff format `fmt`."""
    chosen = formats(DIFF)[fmt]
    return _call(chosen, chosen.function, (d, gates), options, None)


def show(result, how: str, **options) -> str:
    """How a Result shows itself: "text" for repr(result), "html" for result._repr_html_()."""
    chosen = formats(REPR)[how]
    return _call(chosen, chosen.function, (result,), options, None)


def _call(chosen: Format, function: str, args: tuple, options: dict, output):
    """The renderer's output; an option the format does not take is a usage error."""
    refused = [name for name in options if name not in chosen.options]
    if refused:
        takes = ", ".join(chosen.options) or "no options"
        raise UsageError(
            f"the {chosen.name} format does not take {refused[0]!r} (it takes {takes})"
        )
    options = dict(options)
    if "top" in chosen.options and options.get("top") is None and chosen.top is not None:
        options["top"] = chosen.top
    if chosen.folder:
        options["output"] = output
    try:
        renderer = getattr(import_module(f"rooflint.reporters.{chosen.module}"), function)
    except (ImportError, AttributeError):
        raise UsageError(f"format {chosen.name!r} is not available in this build") from None
    return renderer(*args, **options)
