"""The share of each trace's step busy time that has a verdict (communication included).

    python benchmarks/trace_coverage.py [TRACE ...]   (default: ../shared/fixtures/kineto/*.json.gz)

Per trace, over its default timeline window (as `rooflint report` reports it): the busy time
(occupied time: overlapping streams counted once), the share of it occupied by launches with a
verdict (anything but not-analysable), and for the torch.compile Triton kernels (`triton_*`)
their summed time and the share of it with a verdict, or with a stated reason (a launch whose
`missing` words say why it has no FLOPs or bytes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import rooflint
from rooflint.core import verdicts, windows

DEFAULT = sorted((Path(__file__).resolve().parents[2] / "shared/fixtures/kineto").glob("*.json.gz"))
TRITON = r"^triton_"


def coverage(path: Path) -> dict:
    """Busy time, the share with a verdict, and the Triton kernels' figures of one trace."""
    result = rooflint.report(str(path))
    launches = result.launches
    judged = (launches["verdict"].astype(object) != verdicts.NOT_ANALYSABLE).to_numpy()
    busy = windows.occupied_s(launches)
    triton = launches["kernel"].astype(object).fillna("").str.contains(TRITON).to_numpy()
    duration = np.nan_to_num(launches["duration_s"].to_numpy(dtype=float, na_value=np.nan))
    reasoned = _reasoned(launches) & ~judged
    t_triton = float(duration[triton].sum())
    return {
        "trace": path.name.removesuffix(".json.gz"),
        "busy_s": busy,
        "verdict": windows.occupied_s(launches, judged) / busy if busy else float("nan"),
        "triton_n": int(triton.sum()),
        "triton_s": t_triton,
        "triton_verdict": float(duration[triton & judged].sum()) / t_triton if t_triton else None,
        "triton_reason": float(duration[triton & reasoned].sum()) / t_triton if t_triton else None,
    }


def _reasoned(launches: pd.DataFrame) -> np.ndarray:
    """Launches whose `missing` words say why they have no FLOPs (other than "no operator
    model" with no reason after it)."""
    words = launches["missing"].astype(object).fillna("").astype(str)
    bare = words.str.contains(r"no operator model for [^;(]*(?:$|;)", regex=True)
    return (words.str.len() > 0).to_numpy() & ~bare.to_numpy()


def _pct(x) -> str:
    return "     -" if x is None or x != x else f"{x * 100:5.1f}%"


def main(paths: list[str]) -> None:
    rows = [coverage(Path(p)) for p in paths or DEFAULT]
    print(f"{'trace':45} {'busy':>10} {'verdict':>7}  {'triton':>6} {'t_triton':>10} "
          f"{'verdict':>7} {'reason':>7}")  # fmt: skip
    for r in rows:
        print(
            f"{r['trace'][:45]:45} {r['busy_s'] * 1e3:8.3f}ms {_pct(r['verdict']):>7}  "
            f"{r['triton_n']:6d} {r['triton_s'] * 1e3:8.3f}ms {_pct(r['triton_verdict']):>7} "
            f"{_pct(r['triton_reason']):>7}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
