"""`rooflint plot`: profiles in, a roofline chart (PNG, SVG or PDF) out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import rooflint
from rooflint import reporters
from rooflint.cli import output as outputs
from rooflint.cli.commands.report import api_options, input_options
from rooflint.core.ranking import GROUPINGS


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="CHART.png",
    help="Write the chart here (.png, .svg or .pdf); '-' is stdout with --format.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(reporters.CHART_FORMATS),
    help="Chart format (default: from -o).",
)
@click.option(
    "--level",
    type=click.Choice(["dram", "l2", "l1"]),
    default="dram",
    show_default=True,
    help="Memory level for the intensity axis and the sloped roof.",
)
@click.option(
    "--top",
    type=click.IntRange(1),
    default=None,
    help="Label the top N kernel groups [default: 8].",
)
@click.option(
    "--group-by",
    type=click.Choice(list(GROUPINGS)),
    default="kernel",
    show_default=True,
    help="kernel = name + launch configuration; name merges configurations.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@input_options
def plot(inputs, output, fmt, level, top, group_by, quiet, **kwargs):
    """Draw the roofline chart of the kernels in INPUTS (profile files or folders)."""
    from rooflint.cli import progress as progress_mod

    fmt = fmt or _format_of(output)
    if output == "-" and sys.stdout.isatty():
        raise click.UsageError(f"{fmt} output is binary; pass -o FILE")
    with progress_mod.bar(enabled=not quiet) as tick:
        res = rooflint.report(*inputs, group_by=group_by, progress=tick, **api_options(kwargs))
    outputs.write(output, reporters.render(res, fmt, level=level, top=top))


def _format_of(output: str) -> str:
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix in reporters.CHART_FORMATS:
        return suffix
    raise click.UsageError(
        f"cannot tell the chart format from {output!r}; name it .png, .svg or .pdf or pass --format"
    )
