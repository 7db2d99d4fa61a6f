"""The command line: click commands, [tool.rooflint] config, output writing, progress."""

from rooflint.cli.main import main

__all__ = ["main"]
