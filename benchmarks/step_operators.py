"""Which operators hold >= 1 % of the step's busy time in each trace, and whether they have a model.

    python benchmarks/step_operators.py [TRACE ...]   (default: ../shared/fixtures/kineto/*.json.gz)

Per trace: the default timeline window (its complete profiled steps, else the whole trace); per
operator (the innermost CPU operator of each launch, or "(none)"), the summed duration of its
launches inside the window as a share of the window's busy time, and whether rooflint has an
operator model for it (`core.opmodels.MODELS`) or why its launches have no verdict.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from rooflint import parsers
from rooflint.core import opmodels, opmodels_llm, opmodels_moe, timeline
from rooflint.parsers import kineto_triton

SHARE = 0.01
DEFAULT = sorted((Path(__file__).resolve().parents[2] / "shared/fixtures/kineto").glob("*.json.gz"))


def operators(path: Path) -> pd.DataFrame:
    profile = parsers.read(path)
    launches = profile.launches
    tl = timeline.build(launches, profile.steps)
    if tl is None or not tl.busy_s:
        return pd.DataFrame()
    inside = launches[tl.inside]
    op = inside["op"].astype(object).fillna("(none)")
    kind = inside["kind"].astype(object)
    label = op.where(kind == "kernel", "(" + kind + ")")
    time = inside["duration_s"].groupby(label.to_numpy()).sum() / tl.busy_s
    out = time[time >= SHARE].sort_values(ascending=False).to_frame("share")
    modelled = inside["flops_source"].notna().groupby(label.to_numpy()).mean()
    out["model"] = [_status(name, modelled.get(name, 0.0)) for name in out.index]
    return out


def _status(name: str, modelled: float) -> str:
    """ "model" (with the share of its launches modelled), or why there is none."""
    known = name in opmodels.MODELS or name in opmodels_moe.OPERATORS
    if known or opmodels_llm.handles(name) or kineto_triton.is_triton(name):
        return f"model ({modelled * 100:.0f} % of launches)"
    if name.startswith("("):
        return "none: not an operator (a kind of activity)"
    return f"none: {opmodels.no_model_why(name) or 'NO REASON GIVEN'}"


def main(paths: list[str]) -> None:
    for path in [Path(p) for p in paths] or DEFAULT:
        table = operators(path)
        print(f"== {path.name}")
        for name, row in table.iterrows():
            print(f"  {row['share'] * 100:5.1f} %  {name}: {row['model']}")


if __name__ == "__main__":
    main(sys.argv[1:])
