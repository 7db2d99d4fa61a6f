"""The exceptions rooflint raises; only the CLI turns them into messages."""


class RooflintError(Exception):
    """Base of every error that is the user's to fix (bad input, bad usage).

    The message is one line: the input, the problem and the fix.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.problem = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)

    def __reduce__(self):  # whole across processes (a worker's error reaches the parent as it is)
        return type(self), (self.problem, self.path, self.line)


class InputError(RooflintError):
    """A profile, report or device file that cannot be read as what it claims to be."""


class UnsupportedFormatError(InputError):
    """A file that is not a profile rooflint reads (an nsys export, a text log, ...)."""


class DeviceError(RooflintError):
    """No usable ceilings: unknown device, malformed device file."""


class UsageError(RooflintError):
    """Bad options or configuration."""
