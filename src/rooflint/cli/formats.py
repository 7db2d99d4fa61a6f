"""A command's output format, from the registry: the options it takes, no bytes on a terminal."""

from __future__ import annotations

import sys

import click

from rooflint import reporters
from rooflint.cli import config
from rooflint.core.errors import UsageError


def choose(
    kind: reporters.Kind, fmt: str | None, output: str | None, values: dict
) -> tuple[reporters.Format, dict]:
    """The format (from --format, else -o) and, of `values` (the command's format options by
    parameter name), those it takes. An option it does not take is a usage error when the
    command line gave it; its default is simply not passed."""
    chosen = reporters.choose(fmt, output, kind)
    ctx = click.get_current_context()
    for name in values:
        if name not in chosen.options and config.given(ctx, name):
            raise UsageError(_not_taken(ctx, name, chosen))
    return chosen, {name: value for name, value in values.items() if name in chosen.options}


def _not_taken(ctx: click.Context, name: str, chosen: reporters.Format) -> str:
    """The refusal, e.g. `--excel-safe does not apply to json output (it is for csv); ...`."""
    flag = max(next(p for p in ctx.command.params if p.name == name).opts, key=len)
    takers = [f.name for f in reporters.formats(chosen.kind).values() if name in f.options]
    return (
        f"{flag} does not apply to {chosen.name} output (it is for {', '.join(takers)}); "
        "drop it, or choose one of those with --format"
    )


def refuse_binary_on_a_terminal(chosen: reporters.Format, output: str | None) -> None:
    if chosen.binary and output in (None, "-") and sys.stdout.isatty():
        raise click.UsageError(f"{chosen.name} output is binary; pass -o FILE")


def described(kind: reporters.Kind) -> str:
    """The formats of `kind` for --help, as `table (default), markdown (a PR comment), ...`."""
    words = [
        f"{f.name} ({f.about})" if f.about else f.name for f in reporters.formats(kind).values()
    ]
    return ", ".join(words[:-1]) + ", or " + words[-1]


def chart_extensions() -> str:
    """The -o extensions of the chart formats, as `.png, .svg or .pdf`."""
    names = [e for f in reporters.charts().values() for e in f.extensions]
    return f"{', '.join(names[:-1])} or {names[-1]}"
