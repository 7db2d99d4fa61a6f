"""Several runs on one side of a diff: expanding --base/--head values, combining the results."""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from pathlib import Path

from rooflint.core import ranking, schema
from rooflint.core.errors import UsageError
from rooflint.core.result import DeviceUse, Result
from rooflint.inputs import expand_folder

GLOB_CHARS = set("*?[")


def expand(values: Sequence[str], option: str) -> list[str]:
    """One path per run: a file is one run, a folder holds one run per profile in it, a glob
    pattern one run per match (sorted). A path given twice is a usage error."""
    runs: list[str] = []
    for value in values:
        if GLOB_CHARS & set(value) and not Path(value).exists():
            found = sorted(glob.glob(value, recursive=True))
            if not found:
                raise UsageError(f"{option} {value!r} matches no file; check the pattern")
            runs += found
        elif Path(value).is_dir():
            found = [str(p) for p in expand_folder(Path(value))[0]]
            if not found:
                raise UsageError(
                    f"{option} {value!r} is an empty folder; give the folder of the runs"
                )
            runs += found
        else:
            runs.append(value)
    seen: set[str] = set()
    for run in runs:
        key = str(Path(run).resolve())
        if key in seen:
            raise UsageError(f"{option}: {run} is given twice; each run counts once")
        seen.add(key)
    return runs


def combine(results: list[Result]) -> Result:
    """One Result holding every run's launches, each marked with its run (0, 1, ...)."""
    if len(results) == 1:
        return results[0]
    launches = schema.concat(
        [r.launches.assign(run=i) for i, r in enumerate(results)], ignore_index=True
    )
    first = results[0]
    kernels = ranking.rank(launches, first.group_by, first.latency_threshold)
    uses: dict = {}
    for r in results:
        for use in r.devices:
            key = getattr(use.device, "id", None)
            have = uses.setdefault(key, DeviceUse(use.device, list(use.provenance), []))
            have.sources += [s for s in use.sources if s not in have.sources]
            have.provenance += [p for p in use.provenance if p not in have.provenance]
            have.by_source.update(use.by_source)
    inputs = [p for r in results for p in r.inputs]
    skipped = [s for r in results for s in r.skipped]
    return Result(
        launches,
        kernels,
        first.group_by,
        list(uses.values()),
        inputs,
        skipped,
        first.latency_threshold,
    )


def load_runs(paths: list, load: Callable[..., tuple[Result, str | None]]):
    """(combined Result, the tool that wrote any saved report among them or None): `paths` are
    what `load` takes (paths, or Results given to rooflint.diff)."""
    loaded = [load(p) for p in paths]
    saved = next((tool for _, tool in loaded if tool), None)
    return combine([res for res, _ in loaded]), saved
