"""`rooflint bound`: intensity, attainable FLOP/s and minimum time for a kernel not yet written."""

from __future__ import annotations

import click

from rooflint import hardware
from rooflint.core import bounds
from rooflint.core.formatting import si

_DTYPE = click.Choice(list(bounds.DTYPE_BYTES))


def _device_option(f):
    return click.option("--device", "device_id", required=True, metavar="ID", help="Catalog device id.")(f)


@click.group()
def bound():
    """The roofline target for a GEMM, an elementwise op or a reduction."""


@bound.command()
@click.option("--m", type=click.IntRange(1), required=True)
@click.option("--n", type=click.IntRange(1), required=True)
@click.option("--k", type=click.IntRange(1), required=True)
@click.option("--dtype", type=_DTYPE, default="bf16", show_default=True)
@_device_option
def gemm(m, n, k, dtype, device_id):
    """C[M,N] = A[M,K] x B[K,N] with perfect reuse."""
    _show(bounds.gemm(hardware.get(device_id), m, n, k, dtype), device_id)


@bound.command()
@click.option("--n", type=click.IntRange(1), required=True, help="Elements.")
@click.option("--inputs", type=click.IntRange(0), default=2, show_default=True)
@click.option("--outputs", type=click.IntRange(0), default=1, show_default=True)
@click.option("--ops-per-element", type=float, default=1.0, show_default=True)
@click.option("--dtype", type=_DTYPE, default="fp32", show_default=True)
@_device_option
def elementwise(n, inputs, outputs, ops_per_element, dtype, device_id):
    """An elementwise kernel over N elements."""
    _show(bounds.elementwise(hardware.get(device_id), n, dtype, inputs, outputs, ops_per_element), device_id)


@bound.command()
@click.option("--n", type=click.IntRange(1), required=True, help="Elements reduced.")
@click.option("--dtype", type=_DTYPE, default="fp32", show_default=True)
@_device_option
def reduction(n, dtype, device_id):
    """A sum over N elements."""
    _show(bounds.reduction(hardware.get(device_id), n, dtype), device_id)


def _show(b: bounds.Bound, device_id: str) -> None:
    click.echo(f"device           {device_id} ({b.compute_class} {si(b.peak, 'FLOP/s')}, DRAM {si(b.bandwidth, 'B/s')})")
    click.echo(f"work             {si(b.ops, 'FLOP')}, {si(b.bytes, 'B')} moved (perfect reuse)")
    click.echo(f"intensity        {b.intensity:.3g} FLOP/B (ridge {b.peak / b.bandwidth:.3g})")
    click.echo(f"attainable       {si(b.attainable, 'FLOP/s')} ({b.bound_by}-bound)")
    click.echo(f"minimum time     {si(b.min_time_s, 's')}")
