"""Option values from a fixed list; a misspelt one is refused with the closest ("did you mean")."""

from __future__ import annotations

import click

from rooflint.core.choices import unknown
from rooflint.core.errors import UsageError


class Suggesting(click.ParamType):
    """Like click.Choice, but a wrong value is one line naming the closest valid one (exit 2)."""

    name = "choice"

    def __init__(self, choices):
        self.choices = list(choices)

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(self.choices) + "]"

    def convert(self, value, param, ctx):
        if value is None or value in self.choices:
            return value
        option = param.opts[-1] if param is not None and param.opts else "the value"
        raise UsageError(unknown(option, value, self.choices))


class SeveralOf(Suggesting):
    """One value of a fixed list, or several joined by commas ("dram,l2,l1"): each is checked
    like Suggesting's, and the value comes back with spaces and repeats dropped."""

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(self.choices) + "][,...]"

    def convert(self, value, param, ctx):
        if value is None:
            return value
        parts = list(dict.fromkeys(p.strip().lower() for p in str(value).split(",")))
        for part in parts:
            super().convert(part, param, ctx)
        return ",".join(parts)
