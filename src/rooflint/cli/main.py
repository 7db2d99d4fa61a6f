"""The command line: a thin click shell over the Python API."""

from __future__ import annotations

import sys

import click

from rooflint import __version__
from rooflint.cli.exits import EXIT_ERROR
from rooflint.core.errors import RooflintError


class RooflintGroup(click.Group):
    """Turns rooflint's own errors into one line on stderr and exit code 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except RooflintError as exc:
            click.echo(f"rooflint: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)


@click.group(cls=RooflintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rooflint")
def main():
    """Roofline verdicts and ranked optimisation headroom from GPU profiler exports."""


def _register():
    from rooflint.cli.commands import bound, devices, metrics, report

    main.add_command(report.report)
    main.add_command(metrics.metrics)
    main.add_command(devices.devices)
    main.add_command(bound.bound)
    try:
        from rooflint.cli.commands import diff

        main.add_command(diff.diff)
    except ImportError:  # pragma: no cover - diff lands separately
        pass
    try:
        from rooflint.cli.commands import plot

        main.add_command(plot.plot)
    except ImportError:  # pragma: no cover
        pass


_register()
