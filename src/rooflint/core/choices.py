"""Values from a fixed list: a misspelt one is refused with the closest ("did you mean"), the same
way on the command line and in the Python API."""

from __future__ import annotations

from collections.abc import Iterable

from rooflint.core.errors import UsageError

LOCALES = ("C", "en_US", "de_DE")  # the number formats of an ncu export (--locale, locale=)


def unknown(what: str, value, choices: Iterable[str]) -> str:
    """ "--format 'htlm' is not one of table, json, ...; did you mean html?\""""
    import difflib  # here: every command imports this module at start, few refuse a value

    choices = list(choices)
    close = difflib.get_close_matches(str(value).lower(), choices, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"{what} {value!r} is not one of {', '.join(choices)}{hint}"


def check(what: str, value, choices: Iterable[str]):
    """`value` if it is one of `choices`, else a UsageError naming the closest."""
    choices = list(choices)
    if value not in choices:
        raise UsageError(unknown(what, value, choices))
    return value
