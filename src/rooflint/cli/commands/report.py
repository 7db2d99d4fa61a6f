"""`rooflint report`: profiles in, a ranked, classified headroom report out."""

from __future__ import annotations

import click

import rooflint
from rooflint import reporters
from rooflint.cli import config, exits, formats
from rooflint.cli import output as outputs
from rooflint.cli.choices import SeveralOf, Suggesting
from rooflint.cli.inputs import input_options
from rooflint.core.groupings import GROUPINGS


@click.command()
@click.argument("paths", metavar="INPUTS...", nargs=-1, required=True, type=click.Path())
@click.option(
    "-f",
    "--format",
    "fmt",
    type=Suggesting(list(reporters.formats(reporters.REPORT))),
    help="Output format (default: from -o, else table).",
)
@click.option("-o", "--output", metavar="PATH", help="Write here (atomically); '-' is stdout.")
@click.option(
    "--group-by",
    type=Suggesting(list(GROUPINGS)),
    default="kernel",
    show_default=True,
    help="kernel = name + launch configuration; name merges configurations.",
)
@click.option("--top", type=click.IntRange(1), default=None, help="Show only the top N groups.")
@click.option(
    "--per",
    type=Suggesting(["launch", "kernel"]),
    default="launch",
    show_default=True,
    help="CSV/Parquet rows: one per launch or per kernel group.",
)
@click.option(
    "--excel-safe", is_flag=True, help="CSV: prefix cells that spreadsheets would run as formulas."
)
@click.option(
    "--level",
    type=SeveralOf(["dram", "l2", "l1"]),
    default="dram",
    show_default=True,
    help="Memory level for the intensity axis and the sloped roof; several (dram,l2,l1): a "
    "hierarchical chart, each kernel at its intensity at each level.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Table: every ceiling with its source, not one line per device.",
)
@click.option(
    "--fail-under",
    metavar="EFF",
    default=None,
    type=exits.FRACTION,
    help="Exit 1 when time-weighted efficiency is under EFF (0.6 or 60%).",
)
@click.option(
    "--fail-if-above-roof/--no-fail-if-above-roof",
    default=False,
    help="Exit 1 when any launch is above its roof (a measurement problem).",
)
@input_options
def report(
    paths,
    fmt,
    output,
    group_by,
    top,
    per,
    excel_safe,
    level,
    quiet,
    verbose,
    fail_under,
    fail_if_above_roof,
    inputs,
):
    """Rank the kernels in INPUTS (profile files or folders) by optimisation headroom."""
    from rooflint.cli import progress as progress_mod

    settings, origins = config.settle(
        click.get_current_context(),
        {"fail_under": fail_under, "fail_if_above_roof": fail_if_above_roof},
    )
    given = {"top": top, "per": per, "excel_safe": excel_safe, "level": level, "verbose": verbose}
    chosen, options = formats.choose(reporters.REPORT, fmt, output, given)
    from rooflint.core.gates import report_gates  # pandas: only once a profile is read

    with progress_mod.bar(enabled=not quiet) as tick:
        res = rooflint.report(
            *paths,
            group_by=group_by,
            progress=tick,
            launches=chosen.rows_for(options),  # the rows it writes (rooflint.reduced, .spill)
            **vars(inputs),
        )
    formats.refuse_binary_on_a_terminal(chosen, output)
    data = reporters.render_pieces(res, chosen.name, output=output, **options)
    if data is not None:  # None: the reporter wrote a dataset folder itself (parquet -o DIR/)
        outputs.write(output, data)
    exits.enforce(
        report_gates(res, settings["fail_under"], settings["fail_if_above_roof"], origins)
    )
