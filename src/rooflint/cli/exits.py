"""Exit codes, and the click side of gates: thresholds as options, failed gates as exit code 1."""

from __future__ import annotations

import click

from rooflint.core import gates
from rooflint.core.errors import UsageError

EXIT_OK, EXIT_GATE, EXIT_ERROR = 0, 1, 2


def click_percent(ctx, param, value):
    """click callback: parse a percentage option or report it as a usage error (exit 2)."""
    return _click(gates.parse_percent, value)


def click_level(ctx, param, value):
    return _click(gates.parse_level, value)


def click_fraction(ctx, param, value):
    return _click(gates.parse_fraction, value)


def _click(parser, value):
    if value is None:
        return None
    try:
        return parser(value, "")
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from None


def enforce(outcomes: list[gates.Gate]) -> None:
    """Print every failure on stderr and exit with EXIT_GATE if any gate failed."""
    messages = gates.failures(outcomes)
    for message in messages:
        click.echo(f"rooflint: {message}", err=True)
    if messages:
        raise click.exceptions.Exit(EXIT_GATE)
