"""GitHub-flavoured Markdown for PR comments and CI job summaries, under GitHub's size limit."""

from __future__ import annotations

import re

import pandas as pd

from rooflint.core import coverage, explain, names, units, windows
from rooflint.reporters import common

DEFAULT_TOP = 10
# GitHub refuses comment bodies of 65,536 characters or more; it counts UTF-16 code units.
LIMIT = 65_536

# Backslash-escapable characters that GitHub would otherwise read as markup inside a line:
# emphasis, code, links, strikethrough, math and the table cell separator.
_SPECIAL = re.compile(r"([\\`*_\[\]~|$])")


def escape(text) -> str:
    """Input text (kernel names, paths, reasons) as inert Markdown on one line: control
    characters shown escaped, no @mention that would notify anyone."""
    if text is None or text is pd.NA or (isinstance(text, float) and text != text):
        return ""
    text = names.unmentioned(names.visible(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def render(result, top: int | None = None, **_options) -> str:
    top = DEFAULT_TOP if top is None else top
    parts = _Parts(result, top)
    return parts.fit()


def length(text: str) -> int:
    """Characters as GitHub counts them (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


class _Parts:
    """Every piece of the report pre-rendered once; `fit` then drops rows until it fits."""

    def __init__(self, result, top: int):
        self.result = result
        kernels = result.kernels
        listed = kernels.head(top)
        self.head = _head(result)
        records = kernels.to_dict("records")  # plain dicts: far faster than iterrows on 10^4 groups
        self.top_rows = [_top_row(result, r) for r in records[: len(listed)]]
        self.sentences = [_sentence(result, r) for r in records[: len(listed)]]
        self.more = len(kernels) - len(listed)
        self.full_rows = [_full_row(result, r) for r in records]
        self.notes = _notes(result)
        self.ceilings = _ceilings(result)
        self.skipped = [f"- {escape(path)}: {escape(reason)}" for path, reason in result.skipped]

    def fit(self) -> str:
        n_top, n_full = len(self.top_rows), len(self.full_rows)
        n_notes, n_skipped = len(self.notes), len(self.skipped)
        # Least useful first: the full table's tail, then notes, skipped inputs, the top table.
        for which in ("full", "notes", "skipped", "top"):
            if length(self.document(n_top, n_full, n_notes, n_skipped)) < LIMIT:
                break
            fits = self._largest(which, n_top, n_full, n_notes, n_skipped)
            n_top, n_full, n_notes, n_skipped = fits
        text = self.document(n_top, n_full, n_notes, n_skipped)
        if length(text) >= LIMIT:  # header and ceilings alone are too big: say so, briefly
            text = (
                "### rooflint report\n\n*The report does not fit GitHub's 65,536-character limit; "
                "use `--format html` or `--format csv`.*\n"
            )
        return text

    def _largest(self, which: str, *counts: int) -> tuple[int, int, int, int]:
        """The counts with `which` reduced to the most rows that keep the report under the limit."""
        index = ("top", "full", "notes", "skipped").index(which)
        lo, hi = 0, counts[index]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            trial = list(counts)
            trial[index] = mid
            if length(self.document(*trial)) < LIMIT:
                lo = mid
            else:
                hi = mid - 1
        final = list(counts)
        final[index] = lo
        return tuple(final)

    def document(self, n_top: int, n_full: int, n_notes: int, n_skipped: int) -> str:
        lines = list(self.head)
        if self.top_rows:
            lines += ["", *_TOP_HEADER, *self.top_rows[:n_top]]
            lines += _omission(len(self.top_rows) - n_top)
            if self.more > 0:
                lines += ["", f"… and {self.more} more kernel group(s) in the full table below."]
            lines += ["", *self.sentences[:n_top]]
        if self.full_rows:
            lines += [
                "",
                _details(
                    f"All kernel groups ({len(self.full_rows)}), full names",
                    [
                        *_FULL_HEADER,
                        *self.full_rows[:n_full],
                        *_omission(len(self.full_rows) - n_full),
                    ],
                ),
            ]
        lines += ["", _details("Ceilings and their sources", self.ceilings)]
        if self.notes:
            lines += [
                "",
                _details(
                    f"Notes from the inputs ({len(self.notes)})",
                    self.notes[:n_notes] + _omission(len(self.notes) - n_notes),
                ),
            ]
        if self.skipped:
            lines += [
                "",
                f"**Skipped inputs ({len(self.skipped)})**",
                "",
                *self.skipped[:n_skipped],
            ]
            lines += _omission(len(self.skipped) - n_skipped)
        return "\n".join(lines) + "\n"


_TOP_HEADER = [
    "| # | id | kernel | launches | time | share | verdict | efficiency | headroom |",
    "|--:|:--|:--|--:|--:|--:|:--|--:|--:|",
]
_FULL_HEADER = [
    "| # | id | kernel | grid | block | launches | time | share | verdict | efficiency "
    "| headroom | limiter | FLOP/byte (DRAM) | FLOP/s |",
    "|--:|:--|:--|:--|:--|--:|--:|--:|:--|--:|--:|:--|--:|--:|",
]


def _omission(count: int) -> list[str]:
    if count <= 0:
        return []
    return [
        "",
        f"*{count} rows omitted to stay under GitHub's 65,536-character limit; "
        "`--format html` or `--format csv` has them all.*",
    ]


def _head(result) -> list[str]:
    s = result.summary
    if s.launches == 0:
        summary = "No kernel launches in the input."
    else:
        summary = (
            f"{_total(result)} · "
            f"**{common.si(s.total_headroom_s, 's')}** headroom"
            f"{escape(windows.overlap_text(s.numbers()))} · "
            f"**{common.pct(s.time_weighted_efficiency)}** time-weighted efficiency · "
            f"device: {escape(common.device_line(result))}"
        )
    lines = ["### rooflint report", "", summary]
    lines += [x for line in common.timeline_lines(result) for x in ("", escape(line))]
    lines += [x for line in common.accounting_lines(result) for x in ("", escape(line))]
    lines += ["", escape(text)] if (text := coverage.line(result)) else []
    lines += [f"\n**Warning: {escape(w)}**" for w in common.warnings(result)]
    return lines


def _total(result) -> str:
    """ "**906 ms** total", or on a timeline "**busy 31.9 ms of the 34.9 ms window ...**"."""
    if result.timeline is None:
        return f"**{common.si(result.summary.total_time_s, 's')}** total"
    return f"**{escape(common.total_text(result))}**"


def _text(value) -> str:
    return value if isinstance(value, str) else "—"


def _top_row(result, r) -> str:
    cells = [
        str(r["rank"]),
        f"`{r['id']}`",
        escape(common.display_name(r, result.group_by)),
        str(r["launches"]),
        common.si(r["duration_s"], "s"),
        common.pct(r["time_share"], 1),
        escape(r["verdict"]),
        common.pct(r["efficiency"]),
        common.si(r["headroom_s"], "s"),
    ]
    return "| " + " | ".join(cells) + " |"


def _full_row(result, r) -> str:
    cells = [
        str(r["rank"]),
        f"`{r['id']}`",
        escape(common.full_name(result, r)),
        escape(_text(r["grid"])),
        escape(_text(r["block"])),
        str(r["launches"]),
        common.si(r["duration_s"], "s"),
        common.pct(r["time_share"], 1),
        escape(r["verdict"]),
        common.pct(r["efficiency"]),
        common.si(r["headroom_s"], "s"),
        escape(_text(r["limiter"])),
        common.ratio(r["intensity_dram"]),
        common.si(r["achieved_flops_per_s"], "FLOP/s"),
    ]
    return "| " + " | ".join(cells) + " |"


def _sentence(result, r) -> str:
    """The group's sentence, each piece of advice a nested item under it."""
    name = escape(common.display_name(r, result.group_by))
    lead, found = common.kernel_parts(result, r)
    items = "".join(f"\n  - {escape(text)}" for text in found)
    return f"- **#{r['rank']}** `{r['id']}` {name}: {escape(lead)}{items}"


def _ceilings(result) -> list[str]:
    """Per device: which inputs used it and where each ceiling came from, then the ceilings."""
    lines = []
    for use in result.devices:
        device = use.device
        title = f"{device.name} ({device.id})" if device is not None else "no device"
        used = ", ".join(use.sources[:5]) + (
            f" and {len(use.sources) - 5} more" if len(use.sources) > 5 else ""
        )
        lines += [f"**{escape(title)}**, for {escape(used)}", ""]
        lines += [f"- {escape(line)}" for line in use.provenance]
        lines.append("")
    rows = common.ceiling_rows(result)
    if not rows:
        return lines + ["No ceilings: pass `--device ID` or `--device-file FILE.toml`."]
    vendors = {use.device.id: use.device.vendor for use in result.devices if use.device is not None}
    lines += [
        "| device | ceiling | roof | peak | ridge vs DRAM (FLOP/byte) |",
        "|:--|:--|:--|--:|--:|",
    ]
    for row in rows:
        unit = units.shown(row["kind"], row["ceiling"])
        roof = explain.roof_label(row["ceiling"], vendors.get(row["device"]))
        ridge = common.ratio(row["ridge_dram"]) if row.get("ridge_dram") else "—"
        lines.append(
            f"| {escape(row['device'])} | {escape(row['ceiling'])} | {escape(roof)} "
            f"| {common.si(row['value'], unit)} | {ridge} |"
        )
    return lines


def _notes(result) -> list[str]:
    return [f"- {escape(n)}" for n in common.notes(result)]


def _details(summary: str, body: list[str]) -> str:
    return "\n".join(
        ["<details>", f"<summary>{escape(summary)}</summary>", "", *body, "", "</details>"]
    )
