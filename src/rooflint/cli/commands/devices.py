"""`rooflint devices`: the catalog, with each device's ridge points."""

from __future__ import annotations

import json

import click

from rooflint.core import units
from rooflint.core.formatting import si
from rooflint.reporters import terminal


@click.group(invoke_without_command=True)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_context
def devices(ctx, fmt):
    """List the device catalog with ridge points (FLOP per DRAM byte) per compute class."""
    if ctx.invoked_subcommand:
        return
    from rooflint import hardware  # the catalog: read when listed, not for --help

    catalog = hardware.catalog()
    if fmt == "json":
        click.echo(json.dumps([_as_dict(d) for d in catalog.values()], indent=1))
        return
    click.echo(_catalog_table(catalog.values(), terminal.width()))


@devices.command()
@click.argument("device_id")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def show(device_id, fmt):
    """Every ceiling of one device, with its source and ridge point."""
    from rooflint import hardware

    device = hardware.get(device_id)
    if fmt == "json":
        click.echo(json.dumps(_as_dict(device), indent=1))
        return
    lines = [
        f"{device.name} ({device.id}), {device.vendor} {device.arch}, {device.sm_count} SM/CU, "
        f"boost {si(device.boost_clock_hz, 'Hz')}",
        f"source: {device.source}",
    ]
    for cls, c in device.compute.items():
        lines.append(
            f"  {cls:<12} {si(c.value, 'FLOP/s'):>14}  ridge {_ridge(device, cls)}  [{c.source}]"
        )
    for level, c in device.memory.items():
        lines.append(f"  {level:<12} {si(c.value, 'B/s'):>14}  [{c.source}]")
    if device.link is not None:  # per direction: what NCCL's bus bandwidth is measured against
        link = device.link
        lines.append(f"  {link.kind.label:<12} {si(link.value, 'B/s'):>14}  [{link.source}]")
    if device.host_link is not None:  # per direction: what host copies are placed against
        host = device.host_link
        label = f"host {host.kind.label}"
        lines.append(f"  {label:<12} {si(host.value, 'B/s'):>14}  [{host.source}]")
    click.echo("\n".join(terminal.wrap_all(lines, terminal.width(), " " * 6)))


def _ridge(device, cls) -> str:
    try:
        return f"{device.ridge(cls):.1f} FLOP/B"
    except Exception:  # no DRAM bandwidth
        return "—"


HEADER = ["id", "DRAM", "FP32", "ridge", "best matrix", "ridge", "name"]
FOOTNOTE = (
    "ridge: the intensity (FLOP per DRAM byte) where the FP32 or best matrix roof meets "
    "the DRAM roof; `rooflint devices show ID` has every ceiling"
)


def _catalog_table(devices, width: int) -> str:
    """One row per device; the name, last, takes what is left of the width (ridges in FLOP/B)."""
    rows = [HEADER] + [_cells(d) for d in devices]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    room = width - sum(widths[:-1]) - 2 * (len(HEADER) - 1)
    widths[-1] = max(len(HEADER[-1]), min(widths[-1], room))
    lines = []
    for row in rows:
        cells = [
            c.ljust(w) if i in (0, 4, 6) else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        cells[-1] = terminal.middle(row[-1], widths[-1])
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines + terminal.wrap(FOOTNOTE, width))


def _cells(device) -> list[str]:
    fp32 = device.compute.get("vector_fp32")
    dram = device.memory.get("dram")
    matrices = [
        (c.value, k)
        for k, c in device.compute.items()
        if k.startswith("matrix_") and k != "matrix_int8"
    ]
    best = max(matrices) if matrices else None
    return [
        device.id,
        si(dram.value if dram else None, "B/s"),
        si(fp32.value if fp32 else None, "FLOP/s"),
        _ridge_number(device, "vector_fp32"),
        f"{best[1].removeprefix('matrix_')} {si(best[0], 'FLOP/s')}" if best else "—",
        _ridge_number(device, best[1]) if best else "—",
        device.name,
    ]


def _ridge_number(device, cls) -> str:
    try:
        return f"{device.ridge(cls):.1f}"
    except Exception:  # no DRAM bandwidth
        return "—"


def _as_dict(device) -> dict:
    ceilings = {
        k: {"value": c.value, "unit": units.RATE[kind], "source": c.source}
        for kind in ("compute", "memory")
        for k, c in getattr(device, kind).items()
    }
    if device.link is not None:
        ceilings[str(device.link.kind)] = {
            "value": device.link.value,
            "unit": units.RATE["link"],
            "source": device.link.source,
            "kind": "link",
        }
    if device.host_link is not None:
        ceilings["host_" + str(device.host_link.kind)] = {
            "value": device.host_link.value,
            "unit": units.RATE["link"],
            "source": device.host_link.source,
            "kind": "host_link",
        }
    ridges = {}
    for cls in device.compute:
        try:
            ridges[cls] = device.ridge(cls)
        except Exception:
            pass
    return {
        "id": device.id,
        "name": device.name,
        "vendor": device.vendor,
        "arch": device.arch,
        "profiler_names": list(device.profiler_names),
        "sm_count": device.sm_count,
        "boost_clock_hz": device.boost_clock_hz,
        "source": device.source,
        "ceilings": ceilings,
        "ridge_dram_flop_per_byte": ridges,
    }
