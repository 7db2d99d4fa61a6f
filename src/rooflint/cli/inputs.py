"""The input options of every command that reads profiles, settled once with [tool.rooflint]."""

from __future__ import annotations

import functools
from dataclasses import fields

import click

from rooflint.cli import config, exits, memory
from rooflint.cli.choices import Suggesting
from rooflint.core import choices
from rooflint.options import InputOptions

# How the command line parses the input options that are not plain text (names, defaults and
# help are those of rooflint.options.InputOptions; a bool is a flag).
TYPES = {
    "device_file": click.Path(dir_okay=False),
    "locale": Suggesting(choices.LOCALES),
    "latency_threshold": exits.FRACTION,  # NaN, inf and values outside 0-1 refused
}


def input_options(command):
    """The InputOptions fields as options of `command`, which is called with them settled (a
    flag given on the command line, else [tool.rooflint], else the default) as `inputs`."""

    @functools.wraps(command)
    def settled(**kwargs):
        memory.return_freed_memory()  # before anything imports pandas or pyarrow
        given = {f.name: kwargs.pop(f.name) for f in fields(InputOptions)}
        values, _ = config.settle(click.get_current_context(), given)
        return command(inputs=InputOptions(**values), **kwargs)

    for f in reversed(fields(InputOptions)):
        settled = _option(f)(settled)
    return settled


def _option(f):
    flag = "--" + f.name.replace("_", "-")
    if f.type in (bool, "bool"):
        return click.option(flag, is_flag=True, default=f.default, help=f.metadata["help"])
    return click.option(
        flag,
        type=TYPES.get(f.name),
        default=f.default,
        show_default=f.default is not None,
        metavar=f.metadata.get("metavar"),
        envvar=f.metadata.get("envvar"),
        show_envvar="envvar" in f.metadata,
        help=f.metadata["help"],
    )
