"""CI gates: thresholds on a diff or a report, decided into Gate outcomes with the numbers restated
(the command line turns a failed gate into exit code 1)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rooflint.core import diff as diffs
from rooflint.core import names, verdicts
from rooflint.core.diff_text import change_text, interval_text, noise_clause
from rooflint.core.formatting import pct, show_pct, si


@dataclass
class Gate:
    """One gate that was set: how it reads, where it was set, and why it failed (if it did)."""

    option: str  # as a flag, e.g. "--fail-on-regression"
    setting: str  # the threshold as shown, e.g. "10 %"; "" for on/off gates
    origin: str = ""  # "" for the command line, else the config file
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def label(self) -> str:
        text = f"{self.option} {self.setting}".strip()
        return f"{text} (from {self.origin})" if self.origin else text

    def fail(self, what: str) -> None:
        self.failures.append(f"gate failed: {what}")


# --- the gates --------------------------------------------------------------------------------


def diff_gates(
    d: diffs.Diff,
    fail_on_regression: float | None = None,
    fail_on_new_latency_bound: bool = False,
    origins: dict | None = None,
) -> list[Gate]:
    """The diff gates that are set, each with its failures (see rooflint.core.diffstats for the
    noise rule)."""
    origins = origins or {}
    gates = []
    if fail_on_regression is not None:
        gate = Gate(
            "--fail-on-regression",
            show_pct(fail_on_regression),
            origins.get("fail_on_regression", ""),
        )
        _total_regression(gate, d, fail_on_regression)
        for r in d.regressions.to_dict(orient="records"):
            means = f"{si(r['mean_s_base'], 's')} → {si(r['mean_s_head'], 's')}"
            gate.fail(
                f"{_kernel(r)} time {change_text(r)} (mean per launch {means}"
                f"{noise_clause(r)}) exceeds {gate.label}"
            )
        gates.append(gate)
    if fail_on_new_latency_bound:
        gate = Gate("--fail-on-new-latency-bound", "", origins.get("fail_on_new_latency_bound", ""))
        for r in new_latency_bound(d).to_dict(orient="records"):
            before = (
                "did not exist in base"
                if r["match"] == diffs.HEAD_ONLY
                else f"was {r['verdict_base']}"
            )
            gate.fail(
                f"{_kernel(r)} is latency-bound in head (efficiency {pct(r['efficiency_head'])}, "
                f"{si(r['duration_s_head'], 's')}) and {before}; {gate.label}"
            )
        gates.append(gate)
    return gates


def _total_regression(gate: Gate, d: diffs.Diff, threshold: float) -> None:
    from rooflint.core import diffstats  # only diff pays for the statistics' import

    t = d.totals
    total = pd.DataFrame([t]).reindex(columns=diffstats.ESTIMATE_COLUMNS)
    if diffstats.decide(total, threshold)[0] == diffstats.SLOWER:
        gate.fail(
            f"{t.get('measure', 'total time')} {interval_text(t)} (base "
            f"{si(t['time_base_s'], 's')} → head "
            f"{si(t['time_head_s'], 's')}{noise_clause(t)}) exceeds {gate.label}"
        )


def new_latency_bound(d: diffs.Diff):
    """Groups latency-bound in head that were not (or did not exist) in base, above --min-time."""
    g = d.groups
    latency = (g["verdict_head"] == verdicts.LATENCY_BOUND) & ~g["ignored"].astype(bool)
    was = g["verdict_base"] == verdicts.LATENCY_BOUND
    return g[latency & ~was]


def report_gates(
    result,
    fail_under: float | None = None,
    fail_if_above_roof: bool = False,
    origins: dict | None = None,
) -> list[Gate]:
    """The report gates that are set: time-weighted efficiency and launches above the roof."""
    origins = origins or {}
    summary = result.summary
    gates = []
    if fail_under is not None:
        gate = Gate("--fail-under", show_pct(fail_under), origins.get("fail_under", ""))
        eff = summary.time_weighted_efficiency
        if eff is None:
            gate.fail(
                "no launch could be analysed, so time-weighted efficiency is unknown; "
                f"{gate.label} needs FLOP and DRAM counters and device ceilings"
            )
        elif eff < fail_under:
            gate.fail(
                f"time-weighted efficiency {show_pct(eff)} (over "
                f"{si(summary.analysed_time_s, 's')} analysed) is under {gate.label}"
            )
        gates.append(gate)
    if fail_if_above_roof:
        gate = Gate("--fail-if-above-roof", "", origins.get("fail_if_above_roof", ""))
        worst = summary.worst_above_roof
        if worst is not None:
            gate.fail(
                f"{summary.above_roof_launches} launch(es) above the roof "
                f"(worst: {names.short_name(worst.kernel)} at "
                f"efficiency {pct(worst.efficiency)}, "
                f"tolerance {show_pct(verdicts.ABOVE_ROOF_TOLERANCE)}); "
                f"{gate.label}: check the device, clocks and counters"
            )
        gates.append(gate)
    return gates


def _kernel(r: dict) -> str:
    text = f"kernel {names.short_name(r['kernel'])} [{r.get('id') or names.short_id(r['kernel'])}]"
    if r["match"] in diffs.FUZZY:
        text += f" (matched by {r['match']} to {names.short_name(r['kernel_base'])})"
    return text


def failures(gates: list[Gate]) -> list[str]:
    return [m for g in gates for m in g.failures]
