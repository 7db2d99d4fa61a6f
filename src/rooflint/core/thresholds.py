"""Thresholds as users type them (the command line, `[tool.rooflint]` and the Python API): one
home for their units and ranges. Imports nothing heavy, so the commands that only print help or
the catalog load no pandas."""

from __future__ import annotations

import math
import re

from rooflint.core.errors import UsageError
from rooflint.core.formatting import show_pct

# A number as typed, with an optional % sign; a sign, "nan" and "inf" are matched too, so that
# they are refused for what they are (below 0, not finite) rather than as "not a number".
_PERCENT = re.compile(
    r"^\s*([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|nan|inf(?:inity)?))\s*(%?)\s*$", re.I
)
# The largest regression threshold (as a fraction): past a 100-fold slowdown a threshold is no
# longer a choice but a typo (1e300), and its text would run to hundreds of digits in every gate
# line.
MAX_REGRESSION = 100.0


def parse_percent(value, what: str = "--fail-on-regression") -> float:
    """A percentage ("10", "10%", 10, 2.5) as a fraction (0.10), at most MAX_REGRESSION."""
    number, _ = _split(value, what, "a percentage such as 10 or 10%")
    return _regression(number / 100.0, what, value)


def percent_option(value, what: str = "--fail-on-regression") -> str:
    """A --fail-on-regression value (checked by parse_percent) marked as percent for the API,
    which refuses a bare number under 1 as ambiguous: "0.5" → "0.5%", 10 → "10%"."""
    parse_percent(value, what)
    text = str(value).strip()
    return text if text.endswith("%") else f"{text}%"


def parse_threshold(value, what: str = "threshold") -> float:
    """The API's regression threshold, in percent as on the command line (10, "10%" and "2.5%"
    are 10 %, 10 % and 2.5 %), as a fraction. A bare number between 0 and 1 is refused: 0.1 is
    0.1 % here but 10 % to anyone who thinks in fractions, and neither reading may be silent."""
    number, percent = _split(value, what, "a percentage such as 10 or '10%'")
    if not percent and 0 < number < 1:
        raise UsageError(
            f"{_subject(what, value)} is ambiguous: the threshold is in percent, as "
            f"`--fail-on-regression` (10 means 10 %); give {number * 100:g} for "
            f"{number * 100:g} %, or '{number:g}%' for {number:g} %"
        )
    return _regression(number / 100.0, what, value)


def _regression(fraction: float, what: str, value) -> float:
    if fraction > MAX_REGRESSION:
        raise UsageError(
            f"{_subject(what, value)} is above {show_pct(MAX_REGRESSION)} (a "
            f"{MAX_REGRESSION + 1:g}-fold slowdown); give a threshold such as 10%"
        )
    return fraction


def parse_fraction(value, what: str = "--fail-under") -> float:
    """An efficiency as a fraction 0-1 ("0.6", 0.6) or a percentage with a sign ("60%")."""
    number, percent = _split(value, what, "a fraction 0-1 such as 0.6, or a percentage such as 60%")
    if percent:
        number /= 100.0
    if number > 1:
        raise UsageError(
            f"{_subject(what, value)} is above 1; give a fraction 0-1 (0.6) or a percentage with "
            "a % sign (60%)"
        )
    return number


def parse_level(value, what: str = "--confidence") -> float:
    """A confidence level as a fraction strictly between 0.5 and 1 ("95%", 95, "0.95")."""
    number, percent = _split(value, what, "a level such as 95% or 0.95")
    if percent or number > 1:
        number /= 100.0
    if not 0.5 <= number < 1:
        raise UsageError(
            f"{_subject(what, value)} is not a confidence level; give one from "
            "50 % to under 100 %, such as 95% or 0.99"
        )
    return number


def parse_amount(value, what: str, high: float) -> float:
    """A plain number from 0 to `high` (no % sign): a count or a rate such as ops per element."""
    number, percent = _split(value, what, f"a number from 0 to {high:,.0f}")
    if percent or number > high:
        raise UsageError(f"{_subject(what, value)} is not a number from 0 to {high:,.0f}")
    return number


def _split(value, what: str, expected: str) -> tuple[float, bool]:
    if isinstance(value, bool):
        raise UsageError(f"{_subject(what, value)} is not a number; give {expected}")
    if isinstance(value, (int, float)):
        number, percent = (float(value) if abs(value) < 1e308 else math.inf), False
    else:
        m = _PERCENT.match(str(value))
        if not m:
            raise UsageError(f"{_subject(what, value)} is not a number; give {expected}")
        number, percent = float(m.group(1)), bool(m.group(2))
    if not math.isfinite(number) or number < 0:
        raise UsageError(
            f"{_subject(what, value)} must be a finite number at or above 0; give {expected}"
        )
    return number, percent


def _subject(what: str, value) -> str:
    return f"{what} {value!r}".strip()
