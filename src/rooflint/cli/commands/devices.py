"""`rooflint devices`: the catalog, with each device's ridge points."""

from __future__ import annotations

import json

import click

from rooflint import hardware
from rooflint.core.formatting import si


@click.group(invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def devices(ctx, fmt):
    """List the device catalog with ridge points (FLOP per DRAM byte) per compute class."""
    if ctx.invoked_subcommand:
        return
    catalog = hardware.catalog()
    if fmt == "json":
        click.echo(json.dumps([_as_dict(d) for d in catalog.values()], indent=1))
        return
    click.echo(f"{'id':<22} {'name':<34} {'DRAM':>10} {'FP32':>12} {'ridge FP32':>10}  best matrix (ridge)")
    for device in catalog.values():
        click.echo(_line(device))


@devices.command()
@click.argument("device_id")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def show(device_id, fmt):
    """Every ceiling of one device, with its source and ridge point."""
    device = hardware.get(device_id)
    if fmt == "json":
        click.echo(json.dumps(_as_dict(device), indent=1))
        return
    click.echo(f"{device.name} ({device.id}), {device.vendor} {device.arch}, {device.sm_count} SM/CU, "
               f"boost {si(device.boost_clock_hz, 'Hz')}")
    click.echo(f"source: {device.source}")
    for cls, c in device.compute.items():
        ridge = _ridge(device, cls)
        click.echo(f"  {cls:<12} {si(c.value, 'FLOP/s'):>14}  ridge {ridge}  [{c.source}]")
    for level, c in device.memory.items():
        click.echo(f"  {level:<12} {si(c.value, 'B/s'):>14}  [{c.source}]")


def _ridge(device, cls) -> str:
    try:
        return f"{device.ridge(cls):.1f} FLOP/B"
    except Exception:  # no DRAM bandwidth
        return "—"


def _line(device) -> str:
    fp32 = device.compute.get("vector_fp32")
    dram = device.memory.get("dram")
    matrices = [(c.value, k) for k, c in device.compute.items() if k.startswith("matrix_") and k != "matrix_int8"]
    best = max(matrices) if matrices else None
    best_text = f"{best[1]} {si(best[0], 'FLOP/s')} ({_ridge(device, best[1])})" if best else "—"
    return (f"{device.id:<22} {device.name[:34]:<34} {si(dram.value if dram else None, 'B/s'):>10} "
            f"{si(fp32.value if fp32 else None, 'FLOP/s'):>12} {_ridge(device, 'vector_fp32'):>10}  {best_text}")


def _as_dict(device) -> dict:
    ceilings = {k: {"value": c.value, "unit": "op/s", "source": c.source} for k, c in device.compute.items()}
    ceilings.update({k: {"value": c.value, "unit": "byte/s", "source": c.source} for k, c in device.memory.items()})
    ridges = {}
    for cls in device.compute:
        try:
            ridges[cls] = device.ridge(cls)
        except Exception:
            pass
    return {"id": device.id, "name": device.name, "vendor": device.vendor, "arch": device.arch,
            "profiler_names": list(device.profiler_names), "sm_count": device.sm_count,
            "boost_clock_hz": device.boost_clock_hz, "source": device.source, "ceilings": ceilings,
            "ridge_dram_flop_per_byte": ridges}
