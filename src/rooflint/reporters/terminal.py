"""Terminal text that fits and shows only what it says: the width to use, wrapped lines, names
shortened in the middle, control characters escaped."""

from __future__ import annotations

import os
import re
import sys
import textwrap

from rooflint.core.names import visible

DEFAULT_WIDTH = 100  # when the output is not a terminal and COLUMNS is not set
MIN_WIDTH = 60


def width() -> int:
    """`COLUMNS` when set, else the terminal's width, else 100 (a file or a pipe)."""
    value = os.environ.get("COLUMNS", "").strip()
    if value.isdigit() and int(value) > 0:
        return max(MIN_WIDTH, int(value))
    try:
        if sys.stdout.isatty():
            import shutil  # here: 1.5 ms of imports (bz2, lzma) a pipe or COLUMNS never needs

            return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    except (AttributeError, ValueError, OSError):  # a replaced or closed stdout
        pass
    return DEFAULT_WIDTH


def wrap(line: str, columns: int, indent: str = "    ", first: str = "") -> list[str]:
    """`line` (after `first`) in lines of at most `columns`; later lines start with `indent`.
    Control characters are shown escaped (names.visible): wrapped text is outside text too."""
    wrapped = textwrap.wrap(
        _UNIT_GAP.sub(_JOINED, visible(first + line)),
        columns,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=True,
        drop_whitespace=True,
    )
    return [piece.replace(_JOINED, " ") for piece in wrapped] or [first.rstrip()]


# A number and its percent sign stay on one line ("2 %", never "2" then "%" on the next): the
# space is held by a placeholder while wrapping.
_UNIT_GAP = re.compile(r"(?<=\d) (?=%)")
_JOINED = "\x00"


def wrap_all(lines: list[str], columns: int, indent: str = "    ") -> list[str]:
    """Every line wrapped; a line's own leading spaces are kept and deepen its indent."""
    out = []
    for line in lines:
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += wrap(line.lstrip(" "), columns, lead + indent, lead) if line.strip() else [""]
    return out


def middle(text: str, columns: int) -> str:
    """`text` shortened in the middle to `columns` characters: both ends stay readable (and its
    control characters shown escaped)."""
    text = visible(text)
    if len(text) <= columns:
        return text
    if columns <= 1:
        return "…"[:columns]
    head = (columns - 1 + 1) // 2
    tail = columns - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")
