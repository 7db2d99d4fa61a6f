"""The terminal diff: verdict line, warnings, gates, then every kernel group by |time change|.

Every line fits the terminal (reporters.terminal.width): text wraps, and each group takes a line
of numbers and a line of detail under it.
"""

from __future__ import annotations

import textwrap

from rooflint.core import diff as diffs
from rooflint.reporters import diff_common as dc
from rooflint.reporters import terminal
from rooflint.reporters.common import pct

# The columns of a group's row (diff_common) this table shows; its detail line gives the rest.
HEADER = ["#", "id", "kernel", "Δ time", "change [CI]", "status"]
SHOWN = [dc.HEADER.index(h) for h in HEADER]
NUMERIC = {k for k, i in enumerate(SHOWN) if i in dc.NUMERIC}
KERNEL = HEADER.index("kernel")
MIN_KERNEL = 16


def render(d, gates, top: int | None = 20, columns: int | None = None, **_options) -> str:
    width = columns or terminal.width()
    lines = [
        f"rooflint diff: {dc.summary_line(d, gates)}",
        f"base: {d.base.label} ({_device(d.base)})",
        f"head: {d.head.label} ({_device(d.head)})",
    ]
    lines += [f"!! {w}" for w in d.warnings]
    lines += dc.context_lines(d)
    for gate in gates:
        lines.append(f"gate {gate.label}: {'pass' if gate.passed else 'FAIL'}")
        lines += [f"  {m}" for m in gate.failures]
    lines = [wrapped for line in lines for wrapped in _wrap(line, width)]
    rows = dc.records(d)
    shown = rows if top is None else rows[:top]
    if shown:
        lines += [""] + _grid(shown, d.level, width)
    else:
        lines += ["", "no kernel groups on either side"]
    if len(rows) > len(shown):
        lines.append(f"... {len(rows) - len(shown)} more group(s); use --top to show more")
    lines += [wrapped for n in d.notes for wrapped in _wrap(f"note: {n}", width)]
    return "\n".join(lines) + "\n"


def _wrap(line: str, width: int, indent: str = "    ") -> list[str]:
    return textwrap.wrap(
        line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=True
    ) or [""]


def _device(side) -> str:
    return diffs.device_text(side.result)


def _cells(rank: int, r: dict) -> list[str]:
    cells = dc.cells(rank, r)
    return [cells[i] for i in SHOWN]


def detail(r: dict) -> list[str]:
    """The second line of a group, in parts: how the change was estimated, times, noise, verdict."""
    parts = [
        dc.method_text(r)
        if r["match"] not in (diffs.BASE_ONLY, diffs.HEAD_ONLY)
        else dc.match_text(r),
        f"time {dc.si(r['duration_s_base'], 's') if diffs.present(r, 'base') else '—'} → "
        f"{dc.si(r['duration_s_head'], 's') if diffs.present(r, 'head') else '—'}",
    ]
    noise = dc.noise_clause(r)
    if noise:
        parts.append(noise.removeprefix(", "))
    if r["match"] in diffs.FUZZY:
        parts.append(f"matched by {dc.match_text(r)}")
    parts.append(dc._verdicts(r))
    parts.append(f"efficiency {dc._pair(r, 'efficiency', pct)}")
    parts.append(f"Δ headroom {dc.signed_si(r['headroom_delta_s'])}")
    return parts


def _pack(parts: list[str], indent: str, width: int) -> list[str]:
    """`parts` joined by "; " into lines of `width`, breaking between parts (inside one only when it
    alone is too long)."""
    lines, line = [], ""
    for i, part in enumerate(parts):
        text = part + (";" if i < len(parts) - 1 else "")
        if line and len(indent) + len(line) + 1 + len(text) > width:
            lines.append(indent + line)
            line = ""
        line = f"{line} {text}" if line else text
    lines.append(indent + line)
    out = []
    for one in lines:
        out += (
            [one]
            if len(one) <= width
            else textwrap.wrap(one, width, subsequent_indent=indent, break_on_hyphens=False)
        )
    return out


def _grid(rows: list[dict], level: float, width: int) -> list[str]:
    header = HEADER[:4] + [f"change [{level * 100:g} % CI]"] + HEADER[5:]
    table = [header] + [_cells(i, r) for i, r in enumerate(rows, 1)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    others = sum(w for i, w in enumerate(widths) if i != KERNEL) + 2 * (len(widths) - 1)
    widths[KERNEL] = max(MIN_KERNEL, min(widths[KERNEL], width - others))
    indent = " " * (widths[0] + widths[1] + 4)
    out = []
    for k, row in enumerate(table):
        row[KERNEL] = terminal.middle(row[KERNEL], widths[KERNEL])
        cells = [
            c.rjust(w) if i in NUMERIC else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
        if k:
            out += _pack(detail(rows[k - 1]), indent, width)
    return out
