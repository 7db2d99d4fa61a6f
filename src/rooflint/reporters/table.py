"""The terminal report: summary, warnings, the ranked table with what would help, then the rest.

Every line fits the terminal (reporters.terminal.width): kernel names shrink in the middle,
optional columns go when the name would get too narrow, and long lines wrap.
"""

from __future__ import annotations

from rooflint.core import coverage, units, windows
from rooflint.reporters import common, terminal

COLUMNS = [
    "#",
    "id",
    "kernel",
    "launches",
    "time",
    "share",
    "verdict",
    "eff",
    "headroom",
    "limiter",
]
NUMERIC = {"#", "launches", "time", "share", "eff", "headroom", "traffic/min"}
KERNEL = 2
# dropped when the kernel name would get too narrow (the top rows' sentences name the roof);
# traffic/min stays: it is what an export joined to a trace adds
OPTIONAL = ("limiter",)
MIN_KERNEL = 24
EXPLAINED = 5  # rows with a "what would help" line under them
GAP = "  "


def render(
    result, top: int | None = 20, verbose: bool = False, columns: int | None = None, **_options
) -> str:
    columns = columns or terminal.width()
    lines = terminal.wrap_all(_head(result), columns)
    lines += ["", *_table(result, top, columns)]
    lines += terminal.wrap_all(_tail(result, verbose), columns)
    return "\n".join(lines).rstrip("\n") + "\n"


def _head(result) -> list[str]:
    """The summary line, the accounting, then every warning."""
    s = result.summary
    lines = [
        f"rooflint: {common.total_text(result)}, headroom "
        f"{common.si(s.total_headroom_s, 's')}{windows.overlap_text(s.numbers())}, time-weighted "
        f"efficiency {common.pct(s.time_weighted_efficiency)} on {common.device_line(result)}",
        *common.timeline_lines(result),
        *common.accounting_lines(result),
    ]
    lines += [text for text in [coverage.line(result)] if text]
    lines += [f"WARNING: {w}" for w in common.warnings(result)]
    return lines


def _tail(result, verbose: bool) -> list[str]:
    """Where the ceilings came from (one line per device; all of it with --verbose), the
    readers' notes and the files that were not read."""
    lines = [""]
    for use in result.devices:
        lines += use.provenance if verbose else _folded(use)
    if verbose:
        ceilings = [_ceiling_text(row) for row in common.ceiling_rows(result)]
        lines += ["ceilings: " + ", ".join(ceilings)] if ceilings else []
    lines += [f"note: {note}" for note in common.notes(result)]
    lines += [f"skipped {source}: {problem}" for source, problem in result.skipped]
    return lines


def _folded(use) -> list[str]:
    """The device's identification line, then where its ceilings came from in one line."""
    if use.device is None:
        return use.provenance  # the reason it has none
    identity = [line for line in use.provenance if line.startswith("device")]
    others = [line for line in use.provenance if not line.startswith("device")]
    if not others:
        return identity
    sources = list(dict.fromkeys(line.split(": ", 1)[-1].split("; ")[0] for line in others))
    clauses = list(dict.fromkeys(_clause(line) for line in others if "; " in line))
    text = "; ".join([" + ".join(sources), *clauses])
    return identity + [f"ceilings: {text} (--verbose: each ceiling and its source)"]


def _clause(line: str) -> str:
    """A provenance line's clause after its document, naming the roofs it holds for when
    they are all tensor (or all vector) roofs: "tensor roofs at datasheet clock 1.83 GHz"."""
    names, text = line.split(": ", 1)
    clause = "; ".join(text.split("; ")[1:])
    kinds = {name.strip().split("_")[0] for name in names.split(",")}
    only = kinds.pop() if len(kinds) == 1 else None
    return {"matrix": "tensor roofs ", "vector": "vector roofs "}.get(only, "") + clause


def _table(result, top, columns: int) -> list[str]:
    kernels = result.kernels if top is None else result.kernels.head(top)
    records = kernels.to_dict("records")
    header = list(COLUMNS)
    rows = [_row(result, r, columns) for r in records]
    if "excess_traffic" in kernels and kernels["excess_traffic"].notna().any():  # trace + counters
        header.append("traffic/min")
        rows = [
            row + [common.excess_text(r["excess_traffic"])]
            for row, r in zip(rows, records, strict=True)
        ]
    header, rows, widths = _fit(header, rows, columns)
    if result.group_by in ("kernel", "name"):  # names.short_name elides template arguments first
        rows = [
            row[:KERNEL]
            + [
                terminal.middle(
                    common.display_name(r, result.group_by, widths[KERNEL]), widths[KERNEL]
                )
            ]
            + row[KERNEL + 1 :]
            for row, r in zip(rows, records, strict=True)
        ]
    out = [_line(header, header, widths)]
    for k, (row, record) in enumerate(zip(rows, records, strict=True)):
        out.append(_line(row, header, widths))
        if k < EXPLAINED:
            indent = " " * (widths[0] + len(GAP))
            lead, found = _help(result, record, row[KERNEL])
            out += terminal.wrap(lead, columns, indent + "  ", indent + "→ ")
            for text in found:  # each piece of advice on its own lines
                out += terminal.wrap(text, columns, indent + "    ", indent + "  · ")
    if top is not None and len(result.kernels) > top:
        out.append(f"... {len(result.kernels) - top} more group(s); use --top to show more")
    return out


def _help(result, record, shown: str) -> tuple[str, list[str]]:
    """The "what would help" sentence, after the group's name when the table had to cut it, and
    the advice (reporters/common.kernel_parts)."""
    name = common.display_name(record, result.group_by)
    sentence, found = common.kernel_parts(result, record)
    return (sentence if shown == name else f"{name}: {sentence}"), found


def _row(result, r, columns: int) -> list[str]:
    return [
        str(r["rank"]),
        r["id"],
        common.display_name(r, result.group_by, columns),
        str(r["launches"]),
        common.si(r["duration_s"], "s"),
        common.pct(r["time_share"], 1),
        r["verdict"],
        common.pct(r["efficiency"]),
        common.si(r["headroom_s"], "s"),
        r["limiter"] if isinstance(r["limiter"], str) else "—",
    ]


def _fit(header, rows, columns: int):
    """Drop optional columns until the kernel name gets MIN_KERNEL characters, then give it the
    rest of the width and shorten the names that still do not fit in the middle."""
    for name in OPTIONAL:
        if _kernel_room(header, rows, columns) >= MIN_KERNEL or name not in header:
            continue
        i = header.index(name)
        header = header[:i] + header[i + 1 :]
        rows = [row[:i] + row[i + 1 :] for row in rows]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    widths[KERNEL] = max(
        len(header[KERNEL]), min(widths[KERNEL], _kernel_room(header, rows, columns))
    )
    rows = [
        row[:KERNEL] + [terminal.middle(row[KERNEL], widths[KERNEL])] + row[KERNEL + 1 :]
        for row in rows
    ]
    return header, rows, widths


def _kernel_room(header, rows, columns: int) -> int:
    others = sum(
        max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header)) if i != KERNEL
    )
    return columns - others - len(GAP) * (len(header) - 1)


def _line(row, header, widths) -> str:
    cells = [
        str(c).rjust(w) if name in NUMERIC else str(c).ljust(w)
        for c, name, w in zip(row, header, widths, strict=True)
    ]
    return GAP.join(cells).rstrip()


def _ceiling_text(row) -> str:
    unit = units.shown(row["kind"], row["ceiling"])
    ridge = f" (ridge {common.ratio(row['ridge_dram'])})" if row.get("ridge_dram") else ""
    return f"{row['ceiling']} {common.si(row['value'], unit)}{ridge}"
