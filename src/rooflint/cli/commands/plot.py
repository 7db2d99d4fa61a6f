"""`rooflint plot`: profiles in, a roofline chart (PNG, SVG or PDF) out."""

from __future__ import annotations

from pathlib import Path

import click

import rooflint
from rooflint import reporters
from rooflint.cli import formats
from rooflint.cli import output as outputs
from rooflint.cli.choices import SeveralOf, Suggesting
from rooflint.cli.inputs import input_options
from rooflint.core.groupings import GROUPINGS


@click.command()
@click.argument("paths", metavar="INPUTS...", nargs=-1, required=True, type=click.Path())
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="CHART.png",
    help=f"Write the chart here ({formats.chart_extensions()}); '-' is stdout with --format.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(list(reporters.charts())),
    help="Chart format (default: from -o).",
)
@click.option(
    "--level",
    type=SeveralOf(["dram", "l2", "l1"]),
    default="dram",
    show_default=True,
    help="Memory level for the intensity axis and the sloped roof; several (dram,l2,l1): a "
    "hierarchical chart, each kernel at its intensity at each level.",
)
@click.option(
    "--top",
    type=click.IntRange(1),
    default=None,
    help="Label the top N kernel groups [default: 8].",
)
@click.option(
    "--group-by",
    type=Suggesting(list(GROUPINGS)),
    default="kernel",
    show_default=True,
    help="kernel = name + launch configuration; name merges configurations.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@input_options
def plot(paths, output, fmt, level, top, group_by, quiet, inputs):
    """Draw the roofline chart of the kernels in INPUTS (profile files or folders)."""
    from rooflint.cli import progress as progress_mod

    chosen = reporters.charts()[fmt or _format_of(output)]
    formats.refuse_binary_on_a_terminal(chosen, output)
    with progress_mod.bar(enabled=not quiet) as tick:
        res = rooflint.report(
            *paths, group_by=group_by, progress=tick, launches=chosen.rows, **vars(inputs)
        )
    outputs.write(output, reporters.render(res, chosen.name, level=level, top=top))


def _format_of(output: str) -> str:
    chosen = reporters.by_extension(Path(output).suffix, reporters.charts())
    if chosen is not None:
        return chosen.name
    raise click.UsageError(
        f"cannot tell the chart format from {output!r}; name it {formats.chart_extensions()} or "
        "pass --format"
    )
