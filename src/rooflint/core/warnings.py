"""The warnings every report leads with, in every format (and in a notebook's view of a Result)."""

from __future__ import annotations

from rooflint.core.formatting import pct


def device_warnings(result) -> list[str]:
    """One line per device whose identification the evidence left open (every format shows it)."""
    open_uses = [
        use
        for use in result.devices
        if use.device is not None and getattr(use, "provisional", False)
    ]
    return [
        f"device provisional: {use.device.name} ({use.device.id}) was picked, but the "
        f"profile's evidence also fits "
        f"{', '.join(c for c in use.candidates if c != use.device.id)}"
        f" with different ceilings, so the verdicts are provisional{_bounds(use)}; {use.advice}"
        for use in open_uses
    ]


def _bounds(use) -> str:
    """What a pick with the highest roofs of its candidates still tells."""
    if not getattr(use, "highest_roofs", False):
        return ""
    return (
        " (it has the highest roofs of them: each efficiency is a lower bound and each "
        "headroom an upper bound)"
    )


def above_roof_warning(result) -> str | None:
    """How many launches beat their roof and their share of the time (None when none do)."""
    summary = result.summary
    if not summary.above_roof_launches:
        return None
    return (
        f"{summary.above_roof_launches} launch(es) sit above the roof "
        f"({pct(summary.above_roof_share)} of the time): a data error "
        "(wrong device, clock, units or counters); check the ceilings"
    )


# The counters of a full roofline on NVIDIA, for launches judged from ncu's percentages.
FULL_ROOFLINE_COUNTERS = (
    "dram__bytes.sum, sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum and "
    "sm__ops_path_tensor_*"
)


def estimate_warning(result) -> str | None:
    """How many launches ncu's percentages stood in for counters on, and what to collect
    (None when none)."""
    summary = result.summary
    if not summary.estimated_launches:
        return None
    return (
        f"estimates: {summary.estimated_launches} launch(es) ({pct(summary.estimated_share)} of "
        "the time) have no DRAM byte or FLOP counters, only ncu's speed-of-light percentages: "
        "their verdicts are estimates (none where the percentages miss DRAM); collect "
        f"{FULL_ROOFLINE_COUNTERS} for a full roofline (`rooflint metrics ncu` prints the ncu "
        "command)"
    )


def warnings(result) -> list[str]:
    """Every warning a report leads with, in every format: provisional devices, launches above
    the roof, verdicts from ncu's percentages, rows the readers repaired or dropped (a
    cut-short file)."""
    out = list(device_warnings(result))
    out += [text for text in [above_roof_warning(result), estimate_warning(result)] if text]
    out += [f"repaired input: {repair}" for repair in result.summary.accounting["repairs"]]
    return out
