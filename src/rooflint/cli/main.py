"""The `rooflint` command group: registers the commands, turns rooflint errors into exit 2 and
signals into 128 + their number."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import NamedTuple

import click

from rooflint import __version__
from rooflint.cli import signals
from rooflint.cli.exits import EXIT_ERROR
from rooflint.core.choices import unknown
from rooflint.core.errors import RooflintError, UsageError
from rooflint.core.names import visible


class Listed(NamedTuple):
    """A command as `rooflint --help` lists it without importing it: the module of
    rooflint.cli.commands that defines it and the first paragraph of its help (the command's own
    docstring says the same, tests/test_startup.py). A NamedTuple: a dataclass costs this import
    0.4 ms, 1 % of the start."""

    module: str
    summary: str


# Each command, imported when it runs: `rooflint --version`, `--help` and `rooflint devices` import
# no other command's module.
COMMANDS = {
    "report": Listed(
        "report", "Rank the kernels in INPUTS (profile files or folders) by optimisation headroom."
    ),
    "metrics": Listed(
        "metrics", "Print the profiler command that collects every counter rooflint uses."
    ),
    "devices": Listed(
        "devices",
        "List the device catalog with ridge points (FLOP per DRAM byte) per compute class.",
    ),
    "bound": Listed("bound", "The roofline target for a GEMM, an elementwise op or a reduction."),
    "diff": Listed(
        "diff",
        "Compare HEAD against BASE: each a profile or a saved `rooflint report --format json` "
        "file.",
    ),
    "plot": Listed(
        "plot", "Draw the roofline chart of the kernels in INPUTS (profile files or folders)."
    ),
}


class RooflintGroup(click.Group):
    """Loads its commands on first use; turns rooflint's own errors into one line on stderr and
    exit code 2."""

    def list_commands(self, ctx):
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = import_module(f"rooflint.cli.commands.{COMMANDS[cmd_name].module}")
            self.add_command(getattr(module, cmd_name))
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx, formatter):
        """The commands' list in `rooflint --help`, as click writes it, from COMMANDS' summaries
        for those not loaded (a loaded command lists itself)."""
        listed = [(name, self._listing(name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in listed if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, c.get_short_help_str(limit)) for name, c in shown])

    def _listing(self, name: str) -> click.Command:
        if name in self.commands:
            return self.commands[name]
        return click.Command(name, help=COMMANDS[name].summary)

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
