"""Exit codes, and the click side of gates: thresholds as options, failed gates as exit code 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from rooflint.core import thresholds
from rooflint.core.names import visible

if TYPE_CHECKING:  # imported when gating: the commands that gate nothing load no pandas
    from rooflint.core import gates

EXIT_OK, EXIT_GATE, EXIT_ERROR = 0, 1, 2


class Parsed(click.ParamType):
    """An option's number read by a parser of rooflint.core.thresholds (the one home of the ranges):
    NaN, infinities and values out of range are one line naming the option (exit 2)."""

    def __init__(self, parse, metavar: str):
        self.parse, self.name = parse, metavar

    def get_metavar(self, param, ctx=None) -> str:
        return self.name

    def convert(self, value, param, ctx):
        if value is None:
            return None
        return self.parse(value, param.opts[-1] if param is not None and param.opts else "")


PERCENT = Parsed(thresholds.percent_option, "PCT")  # "10" → "10%", as rooflint.diff takes it
FRACTION = Parsed(thresholds.parse_fraction, "FRACTION")
LEVEL = Parsed(thresholds.parse_level, "PCT")


def enforce(outcomes: list[gates.Gate]) -> None:
    """Print every failure on stderr and exit with EXIT_GATE if any gate failed."""
    from rooflint.core import gates

    messages = gates.failures(outcomes)
    for message in messages:
        click.echo(f"rooflint: {visible(message)}", err=True)  # a kernel's name is outside text
    if messages:
        raise click.exceptions.Exit(EXIT_GATE)
