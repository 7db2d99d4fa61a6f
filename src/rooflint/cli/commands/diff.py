"""`rooflint diff BASE HEAD`: what a change did to every kernel, gated for CI."""

from __future__ import annotations

import os

import click

import rooflint
from rooflint import reporters
from rooflint.cli import config, exits, formats
from rooflint.cli import output as outputs
from rooflint.cli.choices import Suggesting
from rooflint.cli.inputs import input_options
from rooflint.core.errors import UsageError
from rooflint.core.names import visible


@click.command()
@click.argument("base", type=click.Path(), required=False)
@click.argument("head", type=click.Path(), required=False)
@click.option(
    "--base",
    "base_runs",
    multiple=True,
    metavar="PATH",
    help="A run of the base side (repeat it, or give a folder or a glob, for several "
    "runs); instead of BASE.",
)
@click.option(
    "--head",
    "head_runs",
    multiple=True,
    metavar="PATH",
    help="A run of the head side (repeatable, a folder or a glob); instead of HEAD.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=Suggesting(list(reporters.formats(reporters.DIFF))),
    help=formats.described(reporters.DIFF) + ".",
)
@click.option("-o", "--output", metavar="PATH", help="Write here (atomically); '-' is stdout.")
@click.option(
    "--top",
    type=click.IntRange(1),
    default=None,
    help="Rows in the table (default 20) or in the Markdown top-changes table (default 10).",
)
@click.option(
    "--min-time",
    metavar="FRACTION",
    type=exits.FRACTION,
    default=None,
    help="Ignore groups under this share of total time in both profiles (0.01 or 1%).",
)
@click.option(
    "--fail-on-regression",
    metavar="PCT",
    type=exits.PERCENT,
    default=None,
    help="Exit 1 when total time, or a group's time, grows by more than PCT percent "
    "with its whole confidence interval above PCT (and beyond the run-to-run "
    "noise, with several runs).",
)
@click.option(
    "--confidence",
    metavar="PCT",
    type=exits.LEVEL,
    default=None,
    help="Confidence level of the intervals (default 95%; 0.99 or 99%).",
)
@click.option(
    "--fail-on-new-latency-bound/--no-fail-on-new-latency-bound",
    default=False,
    help="Exit 1 when a group is latency-bound in head but was not (or did not exist) in base.",
)
@input_options
def diff(
    base,
    head,
    base_runs,
    head_runs,
    fmt,
    output,
    top,
    min_time,
    fail_on_regression,
    confidence,
    fail_on_new_latency_bound,
    inputs,
):
    """Compare HEAD against BASE: each a profile or a saved `rooflint report --format json` file.

    Kernel groups are matched by name and launch configuration, then by name, then by name without
    template arguments (reported as fuzzy). A group's change is the geometric mean of head/base
    ratios of its launches paired in order (or the ratio of geometric means when they cannot be
    paired), with a confidence interval. It is a regression only when the change and its whole
    interval exceed the threshold and, with several runs (--base A --base B --head C --head D),
    the change exceeds the measured run-to-run noise. Exit 0: gates passed; 1: a gate failed;
    2: an error.
    """
    ctx = click.get_current_context()
    settings, origins = config.settle(
        ctx,
        {
            "fail_on_regression": fail_on_regression,
            "fail_on_new_latency_bound": fail_on_new_latency_bound,
            "min_time": min_time,
            "confidence": confidence,
        },
    )
    from rooflint.core import gates as gate_mod  # pandas: only once a profile is read

    base_paths, head_paths = _runs(base, head, base_runs, head_runs)
    d = rooflint.diff(
        base_paths,
        head_paths,
        threshold=settings["fail_on_regression"],
        min_time=settings["min_time"],
        level=settings["confidence"],
        **vars(inputs),
    )
    threshold = None if settings["fail_on_regression"] is None else d.threshold
    gates = gate_mod.diff_gates(d, threshold, settings["fail_on_new_latency_bound"], origins)
    chosen, options = formats.choose(reporters.DIFF, fmt, output, {"top": top})
    text = reporters.render_diff(d, gates, chosen.name, **options)
    if chosen.name == "github":
        append_step_summary(text)
    outputs.write(output, text)
    if chosen.name == "github":  # workflow commands turn failures into annotations on the run
        for message in gate_mod.failures(gates):
            click.echo(f"::error title=rooflint::{_annotation(message)}")
    exits.enforce(gates)


def _runs(base, head, base_runs, head_runs) -> list[list[str]]:
    """The runs of each side: BASE and HEAD (one run each), or the --base and --head values."""
    from rooflint import diffruns  # only `diff` needs it

    if base_runs or head_runs:
        if base is not None:
            raise UsageError("give the sides either as BASE HEAD or with --base/--head, not both")
        if not (base_runs and head_runs):
            missing = "--head" if base_runs else "--base"
            raise UsageError(f"{missing} is missing; give at least one run on each side")
        return [diffruns.expand(base_runs, "--base"), diffruns.expand(head_runs, "--head")]
    if base is None or head is None:
        raise UsageError("give two inputs, BASE HEAD, or --base PATH --head PATH (repeatable)")
    return [[base], [head]]


def append_step_summary(text: str) -> None:
    """Append to the file GitHub Actions names in $GITHUB_STEP_SUMMARY (when it is set)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(
            f"cannot append to $GITHUB_STEP_SUMMARY ({exc.strerror}); check the variable",
            path=target,
        ) from None


def _annotation(message: str) -> str:
    """GitHub workflow-command escaping of a message (control characters shown escaped first)."""
    return visible(message).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
