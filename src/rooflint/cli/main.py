"""The `rooflint` command group: registers the commands, turns rooflint errors into exit 2 and
signals into 128 + their number."""

from __future__ import annotations

import sys

import click

from rooflint import __version__
from rooflint.cli import signals
from rooflint.cli.exits import EXIT_ERROR
from rooflint.core.errors import RooflintError
from rooflint.core.names import visible


class RooflintGroup(click.Group):
    """Turns rooflint's own errors into one line on stderr and exit code 2."""

    def invoke(self, ctx):
        try:
            with signals.handled():
                return super().invoke(ctx)
        except RooflintError as exc:
            _fail(str(exc))
        except click.BadParameter as exc:  # a value click's own types refused: one line too
            _fail(exc.format_message())
        except (signals.Stopped, KeyboardInterrupt) as exc:  # click would exit 1, "Aborted!"
            signals.exit_stopped(exc)
        except BrokenPipeError:
            signals.exit_broken_pipe()


def _fail(message: str):
    click.echo(f"rooflint: error: {visible(message)}", err=True)  # it may quote a name or path
    sys.exit(EXIT_ERROR)


@click.group(cls=RooflintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rooflint")
def main():
    """Roofline verdicts and ranked optimisation headroom from GPU profiler exports."""


def _register():
    from rooflint.cli.commands import bound, devices, diff, metrics, plot, report

    for command in (
        report.report,
        metrics.metrics,
        devices.devices,
        bound.bound,
        diff.diff,
        plot.plot,
    ):
        main.add_command(command)


_register()
