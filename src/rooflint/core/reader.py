"""The contract of an input reader: how it recognises its files, reads them, and what they carry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Flag, auto
from pathlib import Path

from rooflint.core.errors import UsageError
from rooflint.core.profile import InputFormat, Profile


class Carries(Flag):
    """What a reader's launch tables can hold, beyond each launch's name, shape and duration."""

    NONE = 0
    COUNTERS = auto()  # measured operations and bytes (schema.OPS, schema.BYTES)
    TIMELINE = auto()  # each launch's place on the device: its stream and device index
    OPERATORS = auto()  # the framework operator behind each launch: op, its shapes, module


@dataclass(frozen=True)
class Reader:
    """One input format family: a module in parsers/ exposes one as READER.

    `sniff(path, head)` claims a file from its first (decompressed) text, never its name;
    `sniff_folder(path)`, where given, claims a folder read as a whole. `parse(path, **options)`
    reads it to a Profile whose format is one of `formats`, taking exactly `options` (keyword
    arguments) and, where `progress` is true, `progress(bytes)` called as the file streams in.
    """

    name: str  # as messages name the input: "Nsight Compute CSV export"
    formats: tuple[InputFormat, ...]
    sniff: Callable[[Path, str], bool]
    parse: Callable[..., Profile]
    options: tuple[str, ...] = ()
    progress: bool = False
    carries: Carries = Carries.NONE
    sniff_folder: Callable[[Path], bool] | None = None

    def read(self, path, progress: Callable[[int], None] | None = None, **options) -> Profile:
        """`parse` with the options given (None: not given); one it does not take is a
        UsageError, never dropped. `progress` reaches it only where it reports progress."""
        given = {name: value for name, value in options.items() if value is not None}
        for name in given:
            if name not in self.options:
                raise UsageError(self._refusal(name), path=str(path))
        if progress is not None and self.progress:
            given["progress"] = progress
        return self.parse(path, **given)

    def _refusal(self, option: str) -> str:
        """Why `option` cannot be given for this reader's input, and the fix."""
        takes = f"it takes: {', '.join(self.options)}" if self.options else "it takes none"
        return f"{self.name} input takes no option {option!r} ({takes}); drop it"
