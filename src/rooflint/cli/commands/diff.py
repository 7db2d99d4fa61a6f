"""`rooflint diff BASE HEAD`: what a change did to every kernel, gated for CI."""

from __future__ import annotations

import os

import click

import rooflint
from rooflint import reporters
from rooflint.cli import config, exits
from rooflint.cli import output as outputs
from rooflint.cli.commands.report import api_options, input_options
from rooflint.core import gates as gate_mod
from rooflint.core.errors import UsageError


@click.command()
@click.argument("base", type=click.Path())
@click.argument("head", type=click.Path())
@click.option("-f", "--format", "fmt", type=click.Choice(list(reporters.DIFF_FORMATS)),
              help="table (default), markdown (a PR comment), json, or github (Markdown, also appended to "
                   "$GITHUB_STEP_SUMMARY).")
@click.option("-o", "--output", metavar="PATH", help="Write here (atomically); '-' is stdout.")
@click.option("--top", type=click.IntRange(1), default=None,
              help="Rows in the table (default 20) or in the Markdown top-changes table (default 10).")
@click.option("--min-time", metavar="FRACTION", callback=exits.click_fraction, default=None,
              help="Ignore groups under this share of total time in both profiles (0.01 or 1%).")
@click.option("--fail-on-regression", metavar="PCT", callback=exits.click_percent, default=None,
              help="Exit 1 when total time, or a group's mean per-launch time beyond its noise, grows by "
                   "more than PCT percent.")
@click.option("--fail-on-new-latency-bound/--no-fail-on-new-latency-bound", default=False,
              help="Exit 1 when a group is latency-bound in head but was not (or did not exist) in base.")
@input_options
def diff(base, head, fmt, output, top, min_time, fail_on_regression, fail_on_new_latency_bound, **kwargs):
    """Compare HEAD against BASE: each a profile or a saved `rooflint report --format json` file.

    Kernel groups are matched by name and launch configuration, then by name, then by name without
    template arguments (reported as fuzzy). A group is a regression only when its mean per-launch
    time grows by more than the threshold and by more than the larger relative spread,
    (max - min) / mean, of its launches in either profile. Exit 0: gates passed; 1: a gate failed;
    2: an error.
    """
    ctx = click.get_current_context()
    settings, origins = config.settle(ctx, {"fail_on_regression": fail_on_regression,
                                            "fail_on_new_latency_bound": fail_on_new_latency_bound,
                                            "min_time": min_time,
                                            "latency_threshold": kwargs.get("latency_threshold")})
    kwargs["latency_threshold"] = settings["latency_threshold"]
    d = rooflint.diff(base, head, threshold=settings["fail_on_regression"],
                      min_time=settings["min_time"], **api_options(kwargs))
    gates = gate_mod.diff_gates(d, settings["fail_on_regression"], settings["fail_on_new_latency_bound"], origins)
    fmt = reporters.choose_format(fmt, output, reporters.DIFF_FORMATS)
    text = reporters.render_diff(d, gates, fmt, top)
    if fmt == "github":
        append_step_summary(text)
    outputs.write(output, text)
    if fmt == "github":  # workflow commands turn failures into annotations on the run
        for message in gate_mod.failures(gates):
            click.echo(f"::error title=rooflint::{_annotation(message)}")
    exits.enforce(gates)


def append_step_summary(text: str) -> None:
    """Append to the file GitHub Actions names in $GITHUB_STEP_SUMMARY (when it is set)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot append to $GITHUB_STEP_SUMMARY ({exc.strerror}); check the variable",
                         path=target) from None


def _annotation(message: str) -> str:
    """GitHub workflow-command escaping of a message."""
    return message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
