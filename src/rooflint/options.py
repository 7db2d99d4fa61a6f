"""The input options, defined once: the command line's and the API's way to read and judge profiles.

`InputOptions` is the one definition. `rooflint report`, `diff` and `plot` take its fields as
options (`cli/inputs.py` builds them from it), and `rooflint.report` and `rooflint.diff` take
them as keyword arguments (`takes_inputs` adds them to their signatures).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field, fields

from rooflint.core import choices
from rooflint.core.verdicts import LATENCY_THRESHOLD


def _option(default, help: str, **cli):
    """A field with its help text (and the command line's metavar) as metadata."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass(frozen=True)
class InputOptions:
    """How profiles are read and judged. None for any of them means its default."""

    device: str | None = _option(
        None, "Use this catalog device (see `rooflint devices`).", metavar="ID"
    )
    device_file: str | None = _option(
        None,
        "Device or measured ceilings (TOML); wins over the profile and catalog.",
        metavar="FILE.toml",
    )
    locale: str | None = _option(None, "Number format of the export, when it is ambiguous.")
    latency_threshold: float = _option(
        LATENCY_THRESHOLD,
        "Below this fraction of the attainable roof a kernel is latency-bound.",
    )
    strict: bool = _option(False, "Fail on any input that is not a profile instead of skipping it.")
    steps: str = _option(
        "all",
        "Which ProfilerStep#N of a trace to report (default: every complete step; none: the "
        "whole trace).",
        metavar="all|N|A-B|none",
    )
    scheduler: str | None = _option(
        None,
        "Read the inputs on this Dask cluster, one task per file (the workers must see the "
        "same files); the report is the same.",
        metavar="ADDRESS",
        envvar="ROOFLINT_SCHEDULER",
    )

    nvtx_step: str | None = _option(
        None,
        "Nsight Systems: the NVTX range that marks a step (default: ProfilerStep#N ranges).",
        metavar="NAME",
    )

    def __post_init__(self):
        for f in fields(InputOptions):
            if getattr(self, f.name) is None:
                object.__setattr__(self, f.name, f.default)
        object.__setattr__(self, "strict", bool(self.strict))
        if self.locale is not None:
            choices.check("locale", self.locale, choices.LOCALES)
        from rooflint.core import thresholds
        from rooflint.core.timeline import parse_steps  # here: `import rooflint` loads no pandas

        threshold = thresholds.parse_fraction(self.latency_threshold, "latency_threshold")
        object.__setattr__(self, "latency_threshold", threshold)
        parse_steps(self.steps)  # a bad --steps is refused before any file is read


NAMES = tuple(f.name for f in fields(InputOptions))


def takes_inputs(function):
    """`function(..., inputs=InputOptions(...))` called as `function(..., device=..., strict=...)`:
    the input options become keyword-only arguments of its signature."""
    signature = inspect.signature(function)
    own = [p for p in signature.parameters.values() if p.name != "inputs"]
    added = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
        for f in fields(InputOptions)
    ]
    tail = [p for p in own if p.kind is inspect.Parameter.VAR_KEYWORD]
    head = [p for p in own if p.kind is not inspect.Parameter.VAR_KEYWORD]

    @functools.wraps(function)
    def with_inputs(*args, **kwargs):
        given = {name: kwargs.pop(name) for name in NAMES if name in kwargs}
        return function(*args, inputs=InputOptions(**given), **kwargs)

    with_inputs.__signature__ = signature.replace(parameters=head + added + tail)
    return with_inputs
