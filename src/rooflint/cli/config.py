"""Gate settings from `[tool.rooflint]` in the nearest pyproject.toml; command-line flags win."""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import click
from click.core import ParameterSource

from rooflint.core import thresholds
from rooflint.core.errors import UsageError

FILE = "pyproject.toml"
TABLE = "tool.rooflint"


def _boolean(value, what: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{what} must be true or false, not {value!r}")
    return value


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what} must be a non-empty string, not {value!r}")
    return value


# key in the file → (parameter name on the command line, parser)
KEYS = {
    "fail-on-regression": ("fail_on_regression", thresholds.percent_option),
    "fail-on-new-latency-bound": ("fail_on_new_latency_bound", _boolean),
    "fail-under": ("fail_under", thresholds.parse_fraction),
    "fail-if-above-roof": ("fail_if_above_roof", _boolean),
    "min-time": ("min_time", thresholds.parse_fraction),
    "confidence": ("confidence", thresholds.parse_level),
    "latency-threshold": ("latency_threshold", thresholds.parse_fraction),
    "scheduler": ("scheduler", _text),
}


@dataclass
class Config:
    path: Path | None = None
    values: dict[str, object] = field(default_factory=dict)  # by parameter name


def find(start: Path | None = None) -> Path | None:
    """The first pyproject.toml in `start` (default: the current folder) or any folder above it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / FILE
        if candidate.is_file():
            return candidate
    return None


def load(start: Path | None = None) -> Config:
    """The validated [tool.rooflint] table of the nearest pyproject.toml (empty when there is
    none)."""
    path = find(start)
    if path is None:
        return Config()
    table = _table(path)
    values = {}
    for key, value in table.items():
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise UsageError(
                f"[{TABLE}] unknown key '{key}'; {hint}known keys: {', '.join(KEYS)}",
                path=str(path),
            )
        name, parse = KEYS[key]
        try:
            values[name] = parse(value, f"[{TABLE}] {key}")
        except UsageError as exc:
            raise UsageError(exc.problem, path=str(path)) from None
    return Config(path, values)


def _table(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read ({exc}); fix the file or run from another folder", path=str(path)
        ) from None
    if "rooflint" not in text:
        return {}  # not ours: a broken pyproject.toml of another tool must not stop rooflint
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"not valid TOML ({exc}); fix the file", path=str(path)) from None
    table = doc.get("tool", {}).get("rooflint", {})
    if not isinstance(table, dict):
        raise UsageError(
            f"[{TABLE}] must be a table of settings, not {type(table).__name__}", path=str(path)
        )
    return table


def settle(ctx: click.Context, values: dict[str, object], config: Config | None = None):
    """Final settings: a flag on the command line wins, else the config file, else the default.

    The file is read once per command (the input options and a command's gates both ask).
    Returns (settings by parameter name, {parameter name: config path} for those from the file).
    """
    if config is None:
        if __name__ not in ctx.meta:
            ctx.meta[__name__] = load()
        config = ctx.meta[__name__]
    settled, origins = dict(values), {}
    for name in values:
        if not given(ctx, name) and name in config.values:
            settled[name] = config.values[name]
            origins[name] = str(config.path)
    return settled, origins


def given(ctx: click.Context, name: str) -> bool:
    """Whether the command line gave parameter `name` (a default does not count)."""
    source = ctx.get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
