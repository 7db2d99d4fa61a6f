"""From input paths to one analysis result that every reporter formats (and never recomputes)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rooflint import analysis, families, hardware, parsers, ranking, schema
from rooflint.errors import InputError, RooflintError
from rooflint.profile import Profile


@dataclass
class DeviceUse:
    """A device as used for some inputs: its final ceilings and where each came from."""

    device: object  # rooflint.hardware.Device, or None when no ceilings could be found
    provenance: list[str]
    sources: list[str]
    # The device each source was analysed with: same id, but each profile's own clock and peaks.
    by_source: dict[str, object] = field(default_factory=dict)


@dataclass
class Result:
    launches: pd.DataFrame  # canonical columns + analysis.RESULT_COLUMNS + family
    kernels: pd.DataFrame  # ranking.KERNEL_COLUMNS
    group_by: str
    devices: list[DeviceUse]
    inputs: list[Profile]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    latency_threshold: float = analysis.LATENCY_THRESHOLD

    @property
    def accounting(self) -> dict:
        return accounting(self.launches, self.inputs, self.skipped)

    def per_source(self) -> pd.DataFrame:
        return per_source(self.launches)


@dataclass
class Options:
    device_id: str | None = None
    device_file: str | None = None
    locale: str | None = None
    group_by: str = "kernel"
    latency_threshold: float = analysis.LATENCY_THRESHOLD
    strict: bool = False


def build(paths: Iterable[str], options: Options | None = None,
          progress: Callable[[str, int], None] | None = None) -> Result:
    """Read every input, resolve each one's device, analyse, rank."""
    options = options or Options()
    profiles, skipped = read_all(paths, options, progress)
    return assemble(profiles, skipped, options)


def assemble(profiles: list[Profile], skipped: list[tuple[str, str]], options: Options) -> Result:
    frames, uses = [], {}
    user = _user_ceilings(options)
    for profile in profiles:
        device, provenance = _device_for(profile, options, user)
        key = getattr(device, "id", None)
        use = uses.setdefault(key, DeviceUse(device, provenance, []))
        use.sources.append(profile.source)
        use.by_source[profile.source] = device
        frames.append(analysis.analyze(profile.launches, device, options.latency_threshold))
    launches = pd.concat(frames, ignore_index=True) if frames else analysis.analyze(schema.empty(), None)
    launches["family"] = families.classify(launches["kernel"])
    kernels = ranking.rank(launches, options.group_by, options.latency_threshold)
    return Result(launches, kernels, options.group_by, list(uses.values()), profiles, skipped,
                  options.latency_threshold)


@dataclass
class _UserCeilings:
    """What `--device-file` gave, read once per run: a TOML device file, or the measured
    ceilings of a rocprof-compute roofline.csv (which then win over any in the profile's folder)."""

    device_file: str | None = None
    measured: dict[str, float] = field(default_factory=dict)
    source: str = ""
    notes: list[str] = field(default_factory=list)


def _user_ceilings(options: Options) -> _UserCeilings:
    path = options.device_file
    if path and parsers.is_roofline_csv(path):
        measured, notes = parsers.read_roofline(path)
        return _UserCeilings(None, measured, f"measured: rocprof-compute roofline.csv ({path})", notes)
    return _UserCeilings(device_file=path)


def _device_for(profile: Profile, options: Options, user: _UserCeilings):
    """The device and ceilings for one profile; an unknown device leaves it unanalysable."""
    measured, source = (user.measured, user.source) if user.measured else (
        profile.measured_ceilings, profile.measured_source)
    try:
        device, provenance = hardware.resolve(profile.launches, device_id=options.device_id,
                                              device_file=user.device_file, measured=measured or None,
                                              measured_source=source, hints=profile.device_hints or None)
        return device, provenance + user.notes
    except RooflintError as exc:
        if options.device_id or options.device_file or options.strict:
            raise
        return None, [f"{profile.source}: no ceilings: {exc.problem}"]


def read_all(paths: Iterable[str], options: Options, progress=None):
    """Profiles from files and folders (recursing); non-profiles are skipped with the reason."""
    paths = list(paths)
    candidates = [c for p in paths for c in _expand(Path(p))]
    single = len(paths) == 1 and len(candidates) == 1
    profiles, skipped = [], []
    reading = getattr(progress, "reading", None)  # bytes read within a file, where readers say
    for candidate, profile in zip(candidates, _read_each(candidates, options.locale, reading), strict=False):
        if isinstance(profile, RooflintError):
            if single or options.strict:
                raise profile
            skipped.append((str(candidate), profile.problem))
            continue
        profiles.append(profile)
        if progress:
            progress(str(candidate), len(profile.launches))
    if not profiles:
        if skipped:
            raise InputError(f"no usable profile among {len(skipped)} file(s) (first: {skipped[0][0]}: "
                             f"{skipped[0][1]})", path=", ".join(paths))
        raise InputError("no profile files found; pass Nsight Compute CSV exports or rocprof output",
                         path=", ".join(paths))
    return profiles, skipped


# Several large files are parsed on all cores: worker processes (forked, so they start in
# milliseconds with rooflint imported) read one file each; results come back in input order,
# so skips, the first error under --strict and progress are exactly those of one process.
PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 32 << 20


def _read_each(candidates: list[Path], locale: str | None, reading=None):
    """parsers.read of each candidate, in order; a RooflintError is yielded, not raised."""
    workers = _workers(candidates)
    if workers < 2:
        for candidate in candidates:
            yield _rebuilt(_read_one(candidate, locale, _bytes_progress(candidate, reading)))
        return
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        for outcome in pool.map(_read_one, candidates, [locale] * len(candidates)):
            yield _rebuilt(outcome)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _workers(candidates: list[Path]) -> int:
    if (len(candidates) < PARALLEL_MIN_FILES or "fork" not in multiprocessing.get_all_start_methods()
            or multiprocessing.current_process().daemon):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    size = sum(c.stat().st_size for c in candidates if c.is_file())
    return min(cores, len(candidates), 8) if size >= PARALLEL_MIN_BYTES else 1


def _bytes_progress(candidate: Path, reading):
    """progress(n) for a reader: calls reading(path, bytes so far, file size) as bytes come in."""
    if reading is None or not candidate.is_file():
        return None
    total, done = candidate.stat().st_size, [0]

    def advance(count: int) -> None:
        done[0] += count
        reading(str(candidate), done[0], total)

    return advance


def _read_one(candidate: Path, locale: str | None, progress=None):
    try:
        options = {"progress": progress} if progress else {}
        return _with_launches(parsers.read(candidate, locale=locale, **options))
    except RooflintError as exc:  # returned as its parts: an exception pickles only its message
        return (type(exc), exc.problem, exc.path, exc.line)


def _with_launches(profile: Profile) -> Profile:
    """A file that parses but holds no launch (a roofline.csv alone) is not a profile to report."""
    if len(profile.launches):
        return profile
    if profile.measured_ceilings:
        raise InputError("holds measured ceilings but no kernel dispatches; pass it as "
                         "--device-file next to the profile it belongs to", path=profile.source)
    raise InputError("holds no kernel launches; pass a profile with per-launch rows", path=profile.source)


def _rebuilt(outcome):
    if isinstance(outcome, tuple):
        kind, problem, path, line = outcome
        return kind(problem, path=path, line=line)
    return outcome


def _expand(path: Path) -> list[Path]:
    if not path.is_dir() or _is_profile_folder(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        here = Path(root)
        if here != path and _is_profile_folder(here):
            found.append(here)
            dirs.clear()
            continue
        found.extend(here / f for f in sorted(files) if not f.startswith("."))
    return found


def _is_profile_folder(path: Path) -> bool:
    return any(getattr(r, "sniff_folder", None) and r.sniff_folder(path) for r in parsers.READERS)


def accounting(launches: pd.DataFrame, inputs: list[Profile], skipped) -> dict:
    """launches read = analysed + not analysable, with the reasons counted."""
    not_ok = launches["verdict"] == analysis.NOT_ANALYSABLE
    reasons = launches.loc[not_ok, "reason"].value_counts(sort=False)
    reasons = dict(sorted(((str(k), int(v)) for k, v in reasons.items()), key=lambda kv: (-kv[1], kv[0])))
    return {
        "launches_read": int(len(launches)),
        "analysed": int((~not_ok).sum()),
        "not_analysable": int(not_ok.sum()),
        "not_analysable_reasons": reasons,
        "inputs_read": len(inputs),
        "inputs_skipped": [{"path": p, "reason": r} for p, r in skipped],
        "repairs": [f"{p.source}: {r}" for p in inputs for r in p.repairs],
    }


def per_source(launches: pd.DataFrame) -> pd.DataFrame:
    """Time, headroom and verdict mix per input file."""
    mix = pd.crosstab(launches["source"], launches["verdict"]).reindex(columns=list(analysis.VERDICTS), fill_value=0)
    sums = launches.groupby("source", sort=True).agg(launches=("duration_s", "size"),
                                                     duration_s=("duration_s", "sum"),
                                                     headroom_s=("headroom_s", "sum"))
    return sums.join(mix).reset_index()
