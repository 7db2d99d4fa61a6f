"""The diff as a pull-request comment: verdict line, warnings, top changes, rest in <details>."""

from __future__ import annotations

import re

from rooflint.core import diff as diffs
from rooflint.core import names
from rooflint.reporters import diff_common as dc

LIMIT = 65_536  # GitHub rejects comments and job summaries longer than this many characters
FULL_NAME_CHARS = 2_000  # one absurd template name must not eat the whole comment
MAX_GATE_LINES = 20
_BACKSLASHED = set("\\`*_[]|~#!")


def escape(text) -> str:
    """Kernel names (and any outside text) as literal Markdown: templates, pipes, backticks
    survive; control characters are shown escaped and no @mention notifies anyone."""
    out = []
    for ch in names.unmentioned(names.visible(text)):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in _BACKSLASHED:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def code(text) -> str:
    """`text` as an inline code span, whatever backticks it holds (never inside a table); GitHub
    mentions no one inside code, so only control characters need escaping."""
    text = names.visible(text)
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(d, gates, top: int | None = 10, **_options) -> str:
    head = _head(d, gates, top or 10)
    tail_open = [
        "",
        "<details>",
        f"<summary>All {len(d.groups)} kernel groups, devices and notes</summary>",
        "",
    ]
    tail_close = ["", "</details>", ""]
    budget = LIMIT - len(_join(head + tail_open + tail_close)) - 400  # room for the "cut" sentence
    body, cut = _fit(_details(d), budget)
    if cut:
        body += [
            "",
            f"_Cut {cut} line(s) here to stay under GitHub's {LIMIT:,}-character limit; "
            "run `rooflint diff --format json` for everything._",
        ]
    return _join(head + tail_open + body + tail_close)


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _head(d, gates, top: int) -> list[str]:
    icon = "❌" if dc.verdict(gates) == "FAIL" else "✅"
    lines = [f"### {icon} rooflint diff: {escape(dc.summary_line(d, gates))}", ""]
    lines += [
        f"> ⚠️ **{escape(w.split(':', 1)[0])}**:{escape(w.split(':', 1)[1])}" for w in d.warnings
    ]
    if d.warnings:
        lines.append("")
    lines += [escape(line) + "  " for line in dc.context_lines(d)]
    lines.append("")
    gate_lines = []
    for gate in gates:
        mark = "✅" if gate.passed else "❌"
        gate_lines.append(f"- {mark} {code(gate.label)}")
        gate_lines += [f"  - {escape(m)}" for m in gate.failures]
    if len(gate_lines) > MAX_GATE_LINES:
        more = len(gate_lines) - MAX_GATE_LINES
        gate_lines = gate_lines[:MAX_GATE_LINES] + [f"- … {more} more gate line(s) in the job log"]
    lines += gate_lines + ([""] if gate_lines else [])
    changed = [r for r in dc.records(d) if _changed(r)]
    if changed:
        lines += [
            f"**Top changes** (largest time change first; {len(changed)} group(s) changed)",
            "",
        ]
        lines += _table([dc.cells(i, r) for i, r in enumerate(changed[:top], 1)])
    else:
        lines.append("No kernel group changed time.")
    return lines


def _changed(r: dict) -> bool:
    return r["status"] not in (diffs.UNCHANGED, diffs.IGNORED) or (r["delta_s"] or 0) != 0


def _table(rows: list[list[str]]) -> list[str]:
    header = "| " + " | ".join(dc.HEADER) + " |"
    align = (
        "| "
        + " | ".join("---:" if i in dc.NUMERIC else "---" for i in range(len(dc.HEADER)))
        + " |"
    )
    return [header, align] + ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]


def _details(d) -> list[list[str]]:
    """Blocks of lines in order of importance; _fit keeps whole lines until the budget runs out."""
    rows = dc.records(d)
    blocks = [
        ["**All kernel groups**", ""] + _table([dc.cells(i, r) for i, r in enumerate(rows, 1)])
    ]
    noisy = [r for r in rows if _several(r)]
    if noisy:
        title = (
            "**Per-launch spread** (how different a group's launches are from each other; "
            "not noise)"
        )
        blocks.append(
            ["", title, "", "| id | kernel | base | head |", "| --- | --- | --- | --- |"]
            + [
                f"| {r['id']} | {escape(dc.display(r))} "
                f"| {escape(dc.spread_text(r, 'base'))} | {escape(dc.spread_text(r, 'head'))} |"
                for r in noisy
            ]
        )
    fuzzy = [r for r in rows if r["match"] in diffs.FUZZY]
    if fuzzy:
        blocks.append(
            ["", "**Fuzzy matches** (check these are the same kernel)", ""]
            + [
                f"- `{r['id']}` {escape(_cut(r['kernel_base']))} → "
                f"{escape(_cut(r['kernel_head']))} ({escape(dc.match_text(r))})"
                for r in fuzzy
            ]
        )
    blocks.append(
        [
            "",
            "**Devices and ceilings**",
            "",
            f"- base {code(d.base.label)}: {escape(_devices(d.base))}",
            f"- head {code(d.head.label)}: {escape(_devices(d.head))}",
        ]
        + [f"- changed: {escape(dc.ceiling_text(c))}" for c in d.ceiling_changes]
    )
    if d.notes:
        blocks.append(["", "**Notes**", ""] + [f"- {escape(n)}" for n in d.notes])
    blocks.append(
        ["", "**Full kernel names**", ""]
        + [f"- `{r['id']}` {escape(_cut(r['kernel']))}" for r in rows]
    )
    return blocks


def _several(r: dict) -> bool:
    return any(diffs.present(r, s) and r[f"launches_{s}"] > 1 for s in ("base", "head"))


def _cut(name) -> str:
    text = str(name)
    return text if len(text) <= FULL_NAME_CHARS else text[: FULL_NAME_CHARS - 1] + "…"


def _devices(side) -> str:
    return diffs.device_text(side.result)


def _fit(blocks: list[list[str]], budget: int) -> tuple[list[str], int]:
    """Whole lines, block after block, while they fit in `budget` characters; and how many were
    cut."""
    out, used, cut = [], 0, 0
    for block in blocks:
        for line in block:
            if cut or used + len(line) + 1 > budget:
                cut += 1
                continue
            out.append(line)
            used += len(line) + 1
    if cut and out and out[-1].startswith("|"):
        out.append("")
    return out, cut
