"""From input paths to one Result: read files (parsers), pick ceilings (hardware), run core."""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import InitVar, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint import cluster, diffruns, graphs, hardware, inputs, join, parsers, saved
from rooflint.core import (
    analysis,
    choices,
    families,
    partials,
    ranking,
    ranks,
    schema,
    thresholds,
    timeline,
    verdicts,
    windows,
)
from rooflint.core import diff as diffs
from rooflint.core.device import Device
from rooflint.core.errors import InputError, RooflintError, UsageError
from rooflint.core.groupings import GROUPINGS
from rooflint.core.profile import Profile
from rooflint.core.result import DeviceUse, Result
from rooflint.options import InputOptions


@dataclass(frozen=True)
class Options(InputOptions):
    """One analysis: the input options, how launches are grouped."""

    group_by: str = "kernel"
    device_id: InitVar[str | None] = None  # the former name of `device`, still accepted

    def __post_init__(self, device_id):
        super().__post_init__()
        choices.check("group_by", self.group_by, GROUPINGS)
        if device_id is not None and self.device is None:
            object.__setattr__(self, "device", device_id)


options = Options  # the former spelling: pipeline.options(device=..., ...)


def latency_threshold_of(value) -> float:
    """The latency threshold a Python caller gave (a fraction 0-1), or the default for None."""
    if value is None:
        return verdicts.LATENCY_THRESHOLD
    return thresholds.parse_fraction(value, "latency_threshold")


def device_of(launches: pd.DataFrame, device):
    """A Device for `analyze`: as given, resolved from a catalog id or a device-file path, or, for
    None, identified from the launches as `rooflint report` does (None when no device fits: then
    every launch is not analysable, as in a report without --device)."""
    if device is None:
        try:
            return hardware.resolve(launches)[0]
        except RooflintError:
            return None
    if not isinstance(device, (str, os.PathLike)):
        return device
    if isinstance(device, os.PathLike) or Path(device).is_file():
        return hardware.resolve(launches, device_file=device)[0]
    return hardware.resolve(launches, device_id=device)[0]


def report(given, options: Options, progress=None, make=None) -> Result:
    """`rooflint.report`: the profiles at the paths given (each may be a list of paths) read and
    analysed (by `make`, default the full path's build), or one Result already analysed, ranked
    again by `options.group_by`."""
    items = _inputs(given, "rooflint.report")
    results = [item for item in items if isinstance(item, Result)]
    if not results:
        return (make or build)([str(item) for item in items], options, progress)
    if len(items) > 1:
        raise UsageError(
            "rooflint.report takes paths, or one Result to rank again; to combine "
            "analysed runs use rooflint.diff's lists, or pass the paths of all of them"
        )
    _as_analysed(options)
    result = results[0]
    if result.totals is not None:
        raise UsageError(
            "this Result was reduced file by file (rooflint.report(..., launches=False)) and "
            "keeps no launch rows to rank again; report the paths again with group_by="
            f"{options.group_by!r}"
        )
    counts = [len(p.launches) for p in result.inputs if p.launches is not None]
    if sum(counts) != len(result.launches):  # a saved report's launches, not its inputs' rows
        counts = [len(result.launches)]
    partial, by_device = _partials(result.launches, counts, options.group_by)  # as rank does
    return dataclasses.replace(
        result,
        kernels=ranking.ranked(partial, result.latency_threshold),
        group_by=options.group_by,
        partial=partial,
        device_partials=by_device,
    )


def _inputs(given, where: str) -> list:
    """Paths and Results, lists of them flattened; anything else a UsageError naming it."""
    items: list = []
    for item in given:
        if isinstance(item, (str, os.PathLike, Result)):
            items.append(item)
        elif isinstance(item, (list, tuple)):
            items.extend(_inputs(item, where))
        else:
            raise UsageError(
                f"{where} takes paths (str or pathlib.Path), lists of them or a Result, not "
                f"{type(item).__name__}; for a launch table use rooflint.analyze(launches)"
            )
    return items


def _as_analysed(options: InputOptions) -> None:
    """A Result was analysed with its own device, steps and threshold: input options cannot
    change it, so one given with a Result is refused rather than ignored."""
    fields = dataclasses.fields(InputOptions)
    given = [f.name for f in fields if getattr(options, f.name) != f.default]
    if given:
        raise UsageError(
            f"{', '.join(given)} cannot apply to a Result, which is already analysed; pass the "
            "profile paths to analyse them with these options"
        )


def _label(item) -> str:
    """How a diff names one run: its path, or a Result's input files."""
    if isinstance(item, Result):
        return ", ".join(p.source for p in item.inputs) or "a Result"
    return str(item)


def side(paths, options: Options) -> diffs.Side:
    """One side of a diff: a profile (file or folder), a saved rooflint JSON report or a Result,
    or a list of such runs of the same program (their launches combined, each marked with its
    run)."""
    items = _inputs([paths], "rooflint.diff")
    if not items:
        raise UsageError("rooflint.diff: a side is an empty list; give at least one run")
    labels = [_label(item) for item in items]
    if len(items) == 1:
        result, tool = _side_run(items[0], options)
        return diffs.Side(labels[0], result, saved=tool)
    combined, tool = diffruns.load_runs(items, lambda p: _side_run(p, options))
    label = f"{len(items)} runs: {', '.join(labels)}"
    return diffs.Side(label, combined, saved=tool, runs=len(items), inputs=labels)


def _side_run(path, options: Options):
    """(Result, the tool that wrote it when it is a saved report, else None)."""
    if isinstance(path, Result):
        _as_analysed(options)
        return path, None
    path = str(path)
    doc = saved.read_document(path)
    if doc is not None:
        return saved.from_document(doc, path, options.latency_threshold), str(doc.get("tool"))
    return build([path], options), None


def build(
    paths: Iterable[str],
    options: Options | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Result:
    """Read every input, resolve each one's device, analyse, rank."""
    options = options or Options()
    profiles, skipped = read_all(paths, options, progress)
    return assemble(join.pair(graphs.pair(profiles)), skipped, options)


def assemble(profiles: list[Profile], skipped: list[tuple[str, str]], options: Options) -> Result:
    """The profiles analysed (each against its own device) and ranked: one Result."""
    return rank(analyse(profiles, options), skipped, options)


@dataclass
class Analysed:
    """Profiles analysed, not yet ranked: what `rank` makes a Result of, and what
    rooflint.reduced reduces a file to its partial sums and totals from."""

    launches: pd.DataFrame  # the launches in their windows, analysed, jobs labelled
    counts: list[int]  # each profile's rows of `launches`, in order
    devices: list[DeviceUse]
    profiles: list[Profile]  # each one's `launches` its rows of `launches` (a view)
    timelines: list[windows.Windowed]
    outside: pd.DataFrame | None  # the analysed launches outside every window (None: none)


def analyse(profiles: list[Profile], options: Options) -> Analysed:
    """Each profile's device resolved, every launch analysed against its own profile's device,
    the windows of traces taken and the jobs of ranks labelled."""
    devices: list[
        tuple[Device | None, int]
    ] = []  # (device, launch count) of each profile, in order
    uses: dict[str | None, DeviceUse] = {}
    user = _user_ceilings(options)
    for profile in profiles:
        device, provenance, ident = _device_for(profile, options, user)
        use = uses.setdefault(getattr(device, "id", None), DeviceUse(device, provenance, []))
        note_identity(use, ident)
        use.sources.append(profile.source)
        use.by_source[profile.source] = device
        devices.append((device, len(profile.launches)))
    # one analysis over every profile's launches, each launch with its own profile's ceilings
    launches = analysis.analyze_each(_joined(profiles), devices, options.latency_threshold)
    launches["family"] = families.classify(launches["kernel"])
    counts = [count for _, count in devices]
    timelines, inside = _windows(profiles, launches, counts, options.steps)
    outside = None
    if not inside.all():  # the warm-up before the steps: analysed, counted apart
        outside = launches[~inside].reset_index(drop=True)
        launches = launches[inside].reset_index(drop=True)
        counts = _counts(inside, counts)
    start = 0
    for profile, count in zip(profiles, counts, strict=True):
        profile.launches = launches.iloc[start : start + count]  # its rows, analysed: a view
        start += count
    _label_jobs(launches, timelines)
    return Analysed(launches, counts, list(uses.values()), profiles, timelines, outside)


def rank(analysed: Analysed, skipped: list[tuple[str, str]], options: Options) -> Result:
    """The Result of launches analysed: their groups ranked (each profile's partial sums,
    merged), the Summary made with it."""
    partial, by_device = _partials(analysed.launches, analysed.counts, options.group_by)
    return Result(
        analysed.launches,
        ranking.ranked(partial, options.latency_threshold),
        options.group_by,
        analysed.devices,
        analysed.profiles,
        skipped,
        options.latency_threshold,
        analysed.timelines,
        analysed.outside,
        partial=partial,
        device_partials=by_device,
    )


def _partials(launches: pd.DataFrame, counts: list[int], group_by: str):
    """Each profile's partial sums, merged in input order, and each device's: the ranking of a
    folder is that of its files' partials, exactly as rooflint.reduced ranks it without the
    launches (one sum over the joined table would differ from the files' sums added in the
    last bits, and order groups of equal time differently)."""
    ends = np.cumsum([0, *counts])
    tables = [launches.iloc[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True) if b > a]
    tables = tables or [launches]
    parts = [partials.of(table, group_by) for table in tables]
    devices = [partials.by_device(t, p, group_by) for t, p in zip(tables, parts, strict=True)]
    merged = partials.merge(parts)
    return merged, partials.merge_by_device(devices, parts, merged)


def _windows(profiles: list[Profile], launches: pd.DataFrame, counts: list[int], steps: str):
    """Each timeline profile's timeline over the steps asked for, and per launch whether it is
    inside its profile's window (launches without a timeline always are)."""
    inside = np.ones(len(launches), dtype=bool)
    found, start = [], 0
    for profile, count in zip(profiles, counts, strict=True):
        rows = launches.iloc[start : start + count]
        try:
            built = timeline.build(rows, profile.steps, steps)
        except UsageError as exc:  # a step this trace does not have: name the trace
            raise UsageError(exc.problem, path=profile.source) from None
        if built is not None:
            ranked = (
                windows.rank_trace(profile.source, profile.rank, built, rows)
                if profile.rank is not None
                else None
            )
            found.append(windows.Windowed(profile.source, built, ranked))
            inside[start : start + count] = built.inside
        start += count
    return found, inside


def _label_jobs(launches: pd.DataFrame, timelines: list[windows.Windowed]) -> None:
    """With ranks of several jobs among the inputs, each launch's job ("job 1", ...; NA for an
    input of no job), which the ranking then keeps apart: jobs are never summed."""
    job_of = ranks.job_of([w.ranked for w in timelines if w.ranked is not None])
    if job_of:
        launches["job"] = launches["source"].map(job_of)


def _counts(inside: np.ndarray, counts: list[int]) -> list[int]:
    """Each profile's launch count once those outside its window are taken out."""
    ends = np.cumsum([0, *counts])
    return [int(inside[a:b].sum()) for a, b in zip(ends[:-1], ends[1:], strict=True)]


def _joined(profiles: list[Profile]) -> pd.DataFrame:
    """Every profile's launches in one table. A folder's own tables are copied into it, then
    let go (each profile gets its rows back as a view) and their memory handed back at once."""
    if len(profiles) < 2:
        return profiles[0].launches if profiles else schema.empty()
    joined = schema.concat([p.launches for p in profiles], ignore_index=True)
    for profile in profiles:
        profile.launches = None
    _return_freed_heap()
    return joined


def _return_freed_heap() -> None:
    """glibc keeps the small blocks the tables were made of (unpickled from the reading pool, or
    parsed) as free heap, not reused by the large arrays that follow: 43 MiB of a 20 x 10k
    folder's peak. malloc_trim returns the free pages (10 ms); elsewhere this does nothing."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _glibc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


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
        return _UserCeilings(
            None, measured, f"measured: rocprof-compute roofline.csv ({path})", notes
        )
    return _UserCeilings(device_file=path)


def _device_for(profile: Profile, options: Options, user: _UserCeilings):
    """The device, ceilings and identification for one profile; an unknown device leaves it
    unanalysable."""
    measured, source = (
        (user.measured, user.source)
        if user.measured
        else (profile.measured_ceilings, profile.measured_source)
    )
    try:
        device, provenance, ident = hardware.resolve_identified(
            profile.launches,
            device_id=options.device,
            device_file=user.device_file,
            measured=measured or None,
            measured_source=source,
            hints=profile.device_hints or None,
            trust_measured=bool(user.measured),
        )
        return device, provenance + user.notes, ident
    except RooflintError as exc:
        if options.device or options.device_file or options.strict:
            raise
        return None, [f"{profile.source}: no ceilings: {exc.problem}"], None


def note_identity(use: DeviceUse, ident) -> None:
    """The first profile's evidence speaks for the device; any provisional pick makes it so."""
    if ident is None:
        return
    use.evidence = use.evidence or ident.evidence
    if ident.provisional and not use.provisional:
        use.provisional, use.candidates = True, list(ident.candidates)
        use.highest_roofs = ident.highest_roofs


def read_all(paths: Iterable[str], options: Options, progress=None, reduce=None):
    """Profiles from files and folders (recursing); every other file is skipped with the reason.
    With `reduce` (reduce(candidates, given, reading): each one's reduction or RooflintError, in
    order: rooflint.reduced), the reductions instead.

    Under --strict any skipped file is an error that lists them all."""
    paths = list(paths)
    candidates, skipped = inputs.expand(paths)
    single = len(paths) == 1 and len(candidates) == 1 and not skipped
    given = _reader_options(options, candidates, paths)
    profiles = []
    reading = getattr(progress, "reading", None)  # bytes read within a file, where readers say
    if reduce is not None:
        read = reduce(candidates, given, reading)
    elif options.scheduler:
        read = cluster.read_each(candidates, given, options.scheduler, read_one)
    else:
        read = read_each(candidates, given, reading)
    for candidate, profile in zip(candidates, read, strict=False):
        if isinstance(profile, RooflintError):
            if single:
                raise profile
            skipped.append((str(candidate), profile.problem))
            continue
        profiles.append(profile)
        skipped.extend(profile.skipped)
        if progress:
            progress(str(candidate), _launch_count(profile))
    skipped.sort()
    if options.strict and len(skipped) == 1:  # the file's own one-line error
        raise InputError(f"{skipped[0][1]} (--strict)", path=skipped[0][0])
    if options.strict and skipped:
        raise InputError(_strict_message(skipped), path=", ".join(paths))
    if not profiles:
        if len(paths) == 1 and [p for p, _ in skipped] == paths:  # the one path, not read
            raise InputError(skipped[0][1], path=paths[0])
        if skipped:
            raise InputError(
                f"no usable profile among {len(skipped)} file(s) (first: {skipped[0][0]}: "
                f"{skipped[0][1]})",
                path=", ".join(paths),
            )
        raise InputError(
            "no profile files found; pass Nsight Compute CSV exports or rocprof output",
            path=", ".join(paths),
        )
    return profiles, skipped


def _launch_count(read) -> int:
    """The launches of a profile read, or of a file reduced (rooflint.reduced.Reduction)."""
    return read.launch_count if hasattr(read, "launch_count") else len(read.launches)


def _strict_message(skipped: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{path} ({reason})" for path, reason in skipped[:5])
    more = f"; and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return (
        f"--strict: {len(skipped)} file(s) not read: {shown}{more}; pass only profiles, "
        "or drop --strict to skip them"
    )


# Several large files are parsed on all cores: worker processes (forked, so they start in
# milliseconds with rooflint imported) read one file each; results come back in input order,
# so skips, the first error under --strict and progress are exactly those of one process.
PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 32 << 20


READER_OPTIONS = ("locale", "nvtx_step")  # the input options a reader takes, not the analysis


def _reader_options(options: Options, candidates: list[Path], paths: list[str]) -> dict:
    """The reader options the run was given. Each input's reader gets those it takes (--locale is
    for ncu CSV exports, not for a trace read with them); one that no input takes is an error."""
    given = {
        name: getattr(options, name)
        for name in READER_OPTIONS
        if getattr(options, name) is not None
    }
    readers = [_reader_or_none(c) for c in candidates] if given else []
    taken = {option for reader in readers if reader for option in reader.options}
    for name in sorted(given.keys() - taken):
        takers = " and ".join(r.name for r in parsers.READERS if name in r.options)
        raise UsageError(
            f"option {name}={given[name]!r} applies only to {takers} input, and none of the "
            "inputs is; drop it",
            path=", ".join(paths),
        )
    return given


def _reader_or_none(candidate: Path):
    try:
        return parsers.detect(candidate)
    except InputError:  # the file is skipped with its reason when it is read
        return None


def read_each(candidates: list[Path], given: dict, reading=None, one=None):
    """parsers.read of each candidate (or `one`(candidate, given, progress): rooflint.reduced's
    reading and reducing), in order; a RooflintError is yielded, not raised."""
    workers = _workers(candidates)
    if workers < 2:
        for candidate in candidates:
            yield (one or read_one)(candidate, given, _bytes_progress(candidate, reading))
        return
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        yield from pool.map(one or read_one, candidates, [given] * len(candidates))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _workers(candidates: list[Path]) -> int:
    if (
        len(candidates) < PARALLEL_MIN_FILES
        or "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon
    ):
        return 1
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
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


def read_one(candidate: Path, given: dict | None, progress=None):
    """The profile in `candidate`, read with those of the `given` options its reader takes."""
    try:
        reader = parsers.detect(candidate)
        taken = {k: v for k, v in (given or {}).items() if k in reader.options}
        return _with_launches(reader.read(candidate, progress, **taken))
    except RooflintError as exc:  # returned, not raised: the other files are still read
        return exc


def _with_launches(profile: Profile) -> Profile:
    """A file that parses but holds no launch (a roofline.csv alone) is not a profile to report."""
    if len(profile.launches):
        return profile
    if profile.measured_ceilings:
        raise InputError(
            "holds measured ceilings but no kernel dispatches; pass it as "
            "--device-file next to the profile it belongs to",
            path=profile.source,
        )
    raise InputError(
        "holds no kernel launches; pass a profile with per-launch rows", path=profile.source
    )
