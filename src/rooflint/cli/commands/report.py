"""`rooflint report`: profiles in, a ranked, classified headroom report out."""

from __future__ import annotations

import sys

import click

import rooflint
from rooflint import pipeline, reporters
from rooflint.cli import config, exits
from rooflint.cli import output as outputs
from rooflint.cli.choices import Suggesting
from rooflint.core import gates
from rooflint.core.analysis import LATENCY_THRESHOLD
from rooflint.core.ranking import GROUPINGS

FORMAT_CHOICES = list(reporters.FORMATS)


def input_options(f):
    """Options shared by every command that reads profiles."""
    for option in reversed(
        [
            click.option(
                "--device", metavar="ID", help="Use this catalog device (see `rooflint devices`)."
            ),
            click.option(
                "--device-file",
                type=click.Path(dir_okay=False),
                metavar="FILE.toml",
                help="Device or measured ceilings (TOML); wins over the profile and catalog.",
            ),
            click.option(
                "--locale",
                type=Suggesting(pipeline.LOCALES),
                help="Number format of the export, when it is ambiguous.",
            ),
            click.option(
                "--latency-threshold",
                type=click.FloatRange(0, 1),
                default=LATENCY_THRESHOLD,
                show_default=True,
                help="Below this fraction of the attainable roof a kernel is latency-bound.",
            ),
            click.option(
                "--strict",
                is_flag=True,
                help="Fail on any input that is not a profile instead of skipping it.",
            ),
            click.option(
                "--steps",
                metavar="all|N|A-B|none",
                help="Which ProfilerStep#N of a trace to report (default: every complete step; "
                "none: the whole trace).",
            ),
        ]
    ):
        f = option(f)
    return f


INPUT_OPTIONS = ("device", "device_file", "locale", "latency_threshold", "strict", "steps")


def api_options(kwargs: dict) -> dict:
    """The input options as keyword arguments of rooflint.report / rooflint.diff."""
    return {name: kwargs.get(name) for name in INPUT_OPTIONS}


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-f",
    "--format",
    "fmt",
    type=Suggesting(FORMAT_CHOICES),
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
    type=Suggesting(["dram", "l2", "l1"]),
    default="dram",
    show_default=True,
    help="Chart: memory level for the intensity axis.",
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
    callback=exits.click_fraction,
    help="Exit 1 when time-weighted efficiency is under EFF (0.6 or 60%).",
)
@click.option(
    "--fail-if-above-roof/--no-fail-if-above-roof",
    default=False,
    help="Exit 1 when any launch is above its roof (a measurement problem).",
)
@input_options
def report(
    inputs,
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
    **kwargs,
):
    """Rank the kernels in INPUTS (profile files or folders) by optimisation headroom."""
    from rooflint.cli import progress as progress_mod

    settings, origins = config.settle(
        click.get_current_context(),
        {
            "fail_under": fail_under,
            "fail_if_above_roof": fail_if_above_roof,
            "latency_threshold": kwargs.get("latency_threshold"),
        },
    )
    kwargs["latency_threshold"] = settings["latency_threshold"]
    fmt = reporters.choose_format(fmt, output)
    with progress_mod.bar(enabled=not quiet) as tick:
        res = rooflint.report(*inputs, group_by=group_by, progress=tick, **api_options(kwargs))
    default_top = 20 if fmt == "table" else None
    if fmt in ("png", "svg", "pdf", "parquet") and output in (None, "-") and sys.stdout.isatty():
        raise click.UsageError(f"{fmt} output is binary; pass -o FILE")
    data = reporters.render_pieces(
        res,
        fmt,
        top=top or default_top,
        per=per,
        excel_safe=excel_safe,
        level=level,
        output=output,
        verbose=verbose,
    )
    if data is not None:  # None: the reporter wrote a dataset folder itself (parquet -o DIR/)
        outputs.write(output, data)
    exits.enforce(
        gates.report_gates(res, settings["fail_under"], settings["fail_if_above_roof"], origins)
    )
