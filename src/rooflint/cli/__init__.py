"""The command line: click commands, [tool.rooflint] config, output writing, progress."""

from rooflint.cli.memory import return_freed_memory

return_freed_memory()  # before the commands import pandas

from rooflint.cli.main import main  # noqa: E402

__all__ = ["main"]
