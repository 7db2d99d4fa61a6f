"""The key beside a matplotlib roofline: each label's id, name, rank, time share and verdict."""

from __future__ import annotations

from rooflint.core.verdicts import COLOURS as VERDICT_COLOURS
from rooflint.reporters import common
from rooflint.reporters.chart import ChartData


def mpl_text(text: str) -> str:
    """Input text shown literally: `$` would start mathtext."""
    return str(text).replace("$", r"\$")


def draw_legend_table(ax, data: ChartData, unlabelled: set[int] = frozenset()):
    """id → short name, with rank, share of time and verdict: the key to the labels on the chart.
    Two lines a kernel while they fit; one line each for a long top-N; past that, a count."""
    ax.axis("off")
    rows = data.legend
    ax.text(
        0.0,
        1.0,
        "labelled kernels (by headroom)",
        fontsize=8.5,
        weight="bold",
        va="top",
        transform=ax.transAxes,
    )
    height_pt = ax.get_window_extent().height * 72 / ax.figure.dpi
    two_lines = len(rows) * 22 <= height_pt * 0.9
    step = (
        max(22.0, min(0.075 * height_pt, 0.9 * height_pt / max(len(rows), 1)))
        if two_lines
        else 11.5
    ) / height_pt
    fits = len(rows) if two_lines else int(0.9 / step) - 1
    for i, p in enumerate(rows[:fits]):
        y = 0.93 - i * step
        where = " · no room to label it" if p.rank in unlabelled else ""
        ax.text(
            0.0,
            y,
            mpl_text(p.label),
            fontsize=8 if two_lines else 7,
            family="monospace",
            va="top",
            transform=ax.transAxes,
            color=VERDICT_COLOURS.get(p.verdict, "#333333"),
            weight="bold",
        )
        if not two_lines:
            ax.text(
                0.3,
                y,
                mpl_text(f"#{p.rank} {_cut(p.name, 30)}{where and ' (unlabelled)'}"),
                fontsize=7,
                va="top",
                transform=ax.transAxes,
            )
            continue
        ax.text(0.25, y, mpl_text(_cut(p.name, 34)), fontsize=7.5, va="top", transform=ax.transAxes)
        ax.text(
            0.25,
            y - step * 0.45,
            f"#{p.rank} · {common.pct(p.time_share, 1)} of time · {p.verdict}{where}",
            fontsize=7,
            va="top",
            transform=ax.transAxes,
            color="#555555",
        )
    if fits < len(rows):
        ax.text(
            0.0,
            0.93 - fits * step,
            f"… and {len(rows) - fits} more: see the report's kernel table",
            fontsize=7,
            va="top",
            transform=ax.transAxes,
            color="#555555",
        )


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
