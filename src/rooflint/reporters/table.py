"""The terminal table: header (device, ceilings, accounting), then ranked kernels."""

from __future__ import annotations

from rooflint.core import coverage
from rooflint.reporters import common

COLUMNS = ["#", "id", "kernel", "launches", "time", "share", "verdict", "eff", "headroom", "limiter"]


def render(result, top: int | None = 20, **_options) -> str:
    lines = _header(result)
    kernels = result.kernels if top is None else result.kernels.head(top)
    rows = [_row(result, r) for _, r in kernels.iterrows()]
    header = COLUMNS
    if "excess_traffic" in kernels and kernels["excess_traffic"].notna().any():  # trace + counters
        header = COLUMNS + ["traffic/minimum"]
        rows = [row + [common.excess_text(r["excess_traffic"])] for row, (_, r) in zip(rows, kernels.iterrows(),
                                                                                      strict=True)]
    lines += [""] + _grid([header] + rows)
    if top is not None and len(result.kernels) > top:
        lines.append(f"... {len(result.kernels) - top} more group(s); use --top to show more")
    lines.append("")
    return "\n".join(lines) + "\n"


def _header(result) -> list[str]:
    s = common.summary_numbers(result)
    lines = [f"rooflint: {common.device_line(result)}",
             *[f"WARNING: {w}" for w in common.device_warnings(result)],
             f"total {common.si(s['total_time_s'], 's')}, headroom {common.si(s['total_headroom_s'], 's')}, "
             f"time-weighted efficiency {common.pct(s['time_weighted_efficiency'])}",
             common.accounting_line(result)]
    lines += [text for text in [coverage.line(result)] if text]
    for use in result.devices:
        lines += [f"  {line}" for line in use.provenance]
    ceilings = [_ceiling_text(row) for row in common.ceiling_rows(result)]
    if ceilings:
        lines.append("  ceilings: " + ", ".join(ceilings))
    for source, problem in result.skipped:
        lines.append(f"  skipped {source}: {problem}")
    # the caveats the other formats list (estimates, modelled bytes, ambiguous devices), here too
    notes = sorted({f"{p.source}: {n}" for p in result.inputs for n in p.notes}) + result.accounting["repairs"]
    lines += [f"  note: {note}" for note in notes]
    return lines


def _row(result, r) -> list[str]:
    return [str(r["rank"]), r["id"],
            common.display_name(r, result.group_by), str(r["launches"]), common.si(r["duration_s"], "s"),
            common.pct(r["time_share"], 1), r["verdict"], common.pct(r["efficiency"]),
            common.si(r["headroom_s"], "s"), r["limiter"] if isinstance(r["limiter"], str) else "—"]


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    numeric = {0, 3, 4, 5, 7, 8, 10}
    out = []
    for row in rows:
        cells = [str(c).rjust(w) if i in numeric else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


def _ceiling_text(row) -> str:
    unit = "B/s" if row["kind"] == "memory" else "OP/s" if row["ceiling"].endswith("int8") else "FLOP/s"
    ridge = f" (ridge {row['ridge_dram']:.3g})" if row.get("ridge_dram") else ""
    return f"{row['ceiling']} {common.si(row['value'], unit)}{ridge}"
