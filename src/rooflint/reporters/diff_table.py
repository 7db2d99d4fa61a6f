"""The terminal diff: verdict line, warnings, gates, then every kernel group by |time change|."""

from __future__ import annotations

from rooflint.reporters import diff_common as dc


def render(d, gates, top: int | None = 20, **_options) -> str:
    lines = [f"rooflint diff: {dc.summary_line(d, gates)}",
             f"base: {d.base.label} ({_device(d.base)})",
             f"head: {d.head.label} ({_device(d.head)})"]
    lines += [f"!! {w}" for w in d.warnings]
    lines += dc.context_lines(d)
    for gate in gates:
        lines.append(f"gate {gate.label}: {'pass' if gate.passed else 'FAIL'}")
        lines += [f"  {m}" for m in gate.failures]
    rows = dc.records(d)
    shown = rows if top is None else rows[:top]
    if shown:
        lines += [""] + _grid([dc.HEADER] + [dc.cells(i, r) for i, r in enumerate(shown, 1)])
    else:
        lines += ["", "no kernel groups on either side"]
    if len(rows) > len(shown):
        lines.append(f"... {len(rows) - len(shown)} more group(s); use --top to show more")
    lines += [f"note: {n}" for n in d.notes]
    return "\n".join(lines) + "\n"


def _device(side) -> str:
    from rooflint.core.diff import device_text

    return device_text(side.result)


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [c.rjust(w) if i in dc.NUMERIC else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out
