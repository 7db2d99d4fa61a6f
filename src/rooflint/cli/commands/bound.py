"""`rooflint bound`: intensity, attainable FLOP/s and minimum time for a kernel not yet written."""

from __future__ import annotations

import functools
import json

import click

from rooflint.cli import exits
from rooflint.core import bounds, thresholds
from rooflint.core.formatting import si
from rooflint.core.names import visible

_DTYPE = click.Choice(list(bounds.DTYPE_BYTES))
_COUNT = click.IntRange(1, bounds.MAX_COUNT)
_ANY_COUNT = click.IntRange(0, bounds.MAX_COUNT)
_OPS = exits.Parsed(functools.partial(thresholds.parse_amount, high=bounds.MAX_COUNT), "OPS")


def _device_options(f):
    f = click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice(["table", "json"]),
        default="table",
        show_default=True,
        help="Text for people, or JSON (SI units) for scripts.",
    )(f)
    f = click.option(
        "--device-file",
        type=click.Path(dir_okay=False),
        metavar="FILE.toml",
        help="Device or measured ceilings (TOML) instead of a catalog device.",
    )(f)
    return click.option("--device", "device_id", metavar="ID", help="Catalog device id.")(f)


def _device(device_id: str | None, device_file: str | None):
    if (device_id is None) == (device_file is None):
        raise click.UsageError("pass exactly one of --device ID and --device-file FILE.toml")
    from rooflint import hardware  # the catalog: read when a bound is asked for, not for --help

    return hardware.get(device_id) if device_id else hardware.load_device_file(device_file)


@click.group()
def bound():
    """The roofline target for a GEMM, an elementwise op or a reduction."""


@bound.command()
@click.option("--m", type=_COUNT, required=True)
@click.option("--n", type=_COUNT, required=True)
@click.option("--k", type=_COUNT, required=True)
@click.option("--dtype", type=_DTYPE, default="bf16", show_default=True)
@_device_options
def gemm(m, n, k, dtype, device_id, device_file, fmt):
    """C[M,N] = A[M,K] x B[K,N] with perfect reuse."""
    device = _device(device_id, device_file)
    _show(bounds.gemm(device, m, n, k, dtype), device, fmt)


@bound.command()
@click.option("--n", type=_COUNT, required=True, help="Elements.")
@click.option("--inputs", type=_ANY_COUNT, default=2, show_default=True)
@click.option("--outputs", type=_ANY_COUNT, default=1, show_default=True)
@click.option("--ops-per-element", type=_OPS, default=1.0, show_default=True)
@click.option("--dtype", type=_DTYPE, default="fp32", show_default=True)
@_device_options
def elementwise(n, inputs, outputs, ops_per_element, dtype, device_id, device_file, fmt):
    """An elementwise kernel over N elements."""
    device = _device(device_id, device_file)
    _show(bounds.elementwise(device, n, dtype, inputs, outputs, ops_per_element), device, fmt)


@bound.command()
@click.option("--n", type=_COUNT, required=True, help="Elements reduced.")
@click.option("--dtype", type=_DTYPE, default="fp32", show_default=True)
@_device_options
def reduction(n, dtype, device_id, device_file, fmt):
    """A sum over N elements."""
    device = _device(device_id, device_file)
    _show(bounds.reduction(device, n, dtype), device, fmt)


def _show(b: bounds.Bound, device, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(_as_json(b, device), indent=1))
        return
    click.echo(
        f"device           {visible(device.id)} ({b.compute_class} {si(b.peak, 'FLOP/s')}, "
        f"DRAM {si(b.bandwidth, 'B/s')})"
    )
    click.echo(f"work             {si(b.ops, 'FLOP')}, {si(b.bytes, 'B')} moved (perfect reuse)")
    click.echo(f"intensity        {b.intensity:.3g} FLOP/B (ridge {b.peak / b.bandwidth:.3g})")
    click.echo(f"attainable       {si(b.attainable, 'FLOP/s')} ({b.bound_by}-bound)")
    click.echo(f"minimum time     {si(b.min_time_s, 's')}")
    for note in b.notes:
        click.echo(f"note             {note}")


def _as_json(b: bounds.Bound, device) -> dict:
    return {
        "device": {"id": device.id, "name": device.name},
        "compute_class": b.compute_class,
        "peak": b.peak,
        "bandwidth": b.bandwidth,
        "ops": b.ops,
        "bytes": b.bytes,
        "intensity": b.intensity,
        "ridge": b.peak / b.bandwidth,
        "attainable": b.attainable,
        "bound_by": b.bound_by,
        "min_time_s": b.min_time_s,
        "notes": b.notes,
        "units": {
            "peak": "op/s",
            "bandwidth": "byte/s",
            "ops": "op",
            "bytes": "byte",
            "intensity": "op/byte",
            "ridge": "op/byte",
            "attainable": "op/s",
            "min_time_s": "s",
        },
    }
