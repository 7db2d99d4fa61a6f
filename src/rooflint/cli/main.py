"""The `rooflint` command group: registers the commands, turns rooflint errors into exit 2 and
signals into 128 + their number."""

from __future__ import annotations

import sys
from importlib import import_module

import click

from rooflint import __version__
from rooflint.cli import signals
from rooflint.cli.exits import EXIT_ERROR
from rooflint.core.choices import unknown
from rooflint.core.errors import RooflintError, UsageError
from rooflint.core.names import visible

# Each command and the module of rooflint.cli.commands that defines it, imported when the command
# runs (or --help lists them): `rooflint --version` and `rooflint devices` import no other.
COMMANDS = {
    "report": "report",
    "metrics": "metrics",
    "devices": "devices",
    "bound": "bound",
    "diff": "diff",
    "plot": "plot",
}


class RooflintGroup(click.Group):
    """Loads its commands on first use; turns rooflint's own errors into one line on stderr and
    exit code 2."""

    def list_commands(self, ctx):
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = import_module(f"rooflint.cli.commands.{COMMANDS[cmd_name]}")
            self.add_command(getattr(module, cmd_name))
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx, args):
        """A misspelt command is one line naming the closest ("did you mean report?"), exit 2."""
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UsageError(unknown("command", args[0], self.list_commands(ctx)))
        return super().resolve_command(ctx, args)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command, loaded (for tests and documentation that walk them)."""
        found = {name: self.get_command(None, name) for name in self.list_commands(None)}
        return {name: command for name, command in found.items() if command is not None}

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
