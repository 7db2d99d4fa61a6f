"""A report without its launches, in memory that grows with groups, not launches.

`rooflint.report(..., launches=False)`: each file is read, analysed against its own device and
reduced to a `Reduction` (its per-group partial sums, core.partials; its totals, core.totals; its
device, timeline and profile without their rows) by the process that read it, its launch table
dropped there; the parent merges the reductions in input order into a Result whose `launches`
is an empty table of their columns. The ranking, the Summary, the accounting, the coverage, the
warnings and the gates are those of the full path (the same code over merged sums): what the
terminal, Markdown and HTML formats and the charts show (each device's partial sums too, for
its chart: core.partials.by_device), and CSV and Parquet per kernel group.

`launches="pieces"` (JSON, CSV and Parquet per launch) and `"timeline"` (Perfetto): the same,
and each file's analysed launch table is written where it is read to the parent's temporary folder
(rooflint.spill; the Reduction's `spilled`, with its table as read without rows), which the
Result's `pieces` read back a file at a time as the joined table's rows (core.pieces: also for
files whose analysed tables differ in columns). One file and Dask workers (their disks are not
the parent's) take the full path; so, read again, do files whose tables as read hold a column
in two dtypes (pieces.joinable: pandas would join them into a third, which the analysis would
read). Perfetto writes from the pieces too (`"timeline"`): each file's launches outside its
window are spilled beside its table (the Reduction's `outside`), as the full path keeps them in
Result.outside; the other formats write none of them, and their runs spill none.

A CUDA graph replay trace is paired with a capture trace as graphs.pair pairs it, once every
file is reduced: the capture traces among the inputs are known then (else those beside it), and
a replay that one lends operators to is read again with it and reduced in its place, the
capture's own reduction dropped (reduced.replays_paired). With --scheduler, a replay or capture
trace falls back to the full path, as does a trace with an ncu or rocprof export (join.pair
lends the export's counters to the trace). Each is found as the files are read, from the
profiles themselves (the folder is not walked and sniffed first): the reading stops at the
first such file.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint import cluster, graphs, inputs, join, pipeline, spill
from rooflint.core import partials, pieces, ranking, ranks, schema, totals, windows
from rooflint.core.errors import RooflintError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.result import DeviceUse, Result


@dataclass
class Reduction:
    """One file, analysed and reduced: what the parent merges."""

    partial: partials.Partial
    totals: totals.Totals
    devices: list[DeviceUse]
    profile: Profile  # its launches an empty table of their columns
    timelines: list[windows.Windowed]  # without their per-launch arrays
    launch_count: int  # the launches read (for progress)
    by_device: dict  # each device's partial sums (core.partials.by_device), for the charts
    spilled: spill.Spilled | None = None  # its analysed launch table, written (launches="pieces")
    outside: spill.Spilled | None = None  # its launches outside the window, written (Perfetto)
    replay: bool = False  # a CUDA graph replay trace, reduced without a capture (graphs.pair)
    capture_note: str | None = None  # a capture trace: its note where a replay uses it

    @property
    def skipped(self) -> list[tuple[str, str]]:
        return self.profile.skipped

    @property
    def format(self) -> InputFormat:
        return self.profile.format


@dataclass
class Failed:
    """A file read whose analysis raised (no device under --strict, a step it lacks): raised
    once every file is read, as the full path raises it after reading (a file not read is
    skipped or, under --strict, reported first)."""

    error: RooflintError
    skipped: list[tuple[str, str]]
    launch_count: int
    format: InputFormat


class _Together(Exception):
    """A trace is among exports, or a file is a graph replay or capture trace on a cluster:
    the inputs are read together (full path)."""


_TOGETHER = "read together"  # what a worker returns for such a file


def build(
    paths: Iterable[str],
    options: pipeline.Options | None = None,
    progress: Callable[[str, int], None] | None = None,
    spilled: bool = False,
    outside: bool = False,
) -> Result:
    """pipeline.build's Result, without its launches, made file by file; `spilled`: with its
    launch rows written file by file where they are read (rooflint.spill), the Result's
    `pieces` (`outside`: each file's launches outside its window spilled too, for Perfetto's
    timeline). One file, Dask workers (whose disks are not the parent's) and files whose
    tables as read differ in a column's dtype take the full path then."""
    options = options or pipeline.Options()
    paths = [str(p) for p in paths]
    if spilled and not _spillable(paths, options):
        return pipeline.build(paths, options, progress)
    folder = spill.Folder() if spilled else None
    try:
        return _built(paths, options, progress, folder, outside)
    except BaseException:
        if folder is not None:
            folder.remove()  # no spill left behind
        raise


def _built(paths: list[str], options: pipeline.Options, progress, folder, outside) -> Result:
    each = functools.partial(
        _reduce_each,
        options=options,
        spill_to=folder.path if folder is not None else None,
        outside=outside,
    )
    told = _Told(progress)
    try:
        reductions, skipped = pipeline.read_all(paths, options, told, reduce=each)
    except _Together:
        return _instead(paths, options, _Told(progress, skip=told.files), folder)
    failed = [r for r in reductions if isinstance(r, Failed)]
    if failed and any(r.replay or r.capture_note for r in reductions if isinstance(r, Reduction)):
        return _instead(paths, options, _Told(progress, skip=told.files), folder)  # as it raises
    if failed:
        raise failed[0].error
    spill_to = folder.path if folder is not None else None
    reductions = replays_paired(reductions, options, spill_to, outside)
    if folder is not None and not pieces.joinable([r.spilled.read for r in reductions]):
        return _instead(paths, options, _Told(progress, skip=told.files), folder)  # read again
    return merged(reductions, skipped, options, folder, outside)


def _instead(paths: list[str], options: pipeline.Options, progress, folder) -> Result:
    """The full path, the spill (where there was one) removed first."""
    if folder is not None:
        folder.remove()
    return pipeline.build(paths, options, progress)


def _spillable(paths: list[str], options: pipeline.Options) -> bool:
    """Whether launch rows are spilled: several files read here (one file's table is the
    Result's; a Dask worker's spill folder is not the parent's)."""
    return not options.scheduler and len(inputs.expand(paths)[0]) > 1


@dataclass
class _Told:
    """The caller's progress, counting the files it is told of; the first `skip` are not told
    again (the full path reads them again once the reduced path stopped at a file read
    together), so the progress line counts each file once."""

    progress: Callable[[str, int], None] | None
    skip: int = 0
    files: int = 0

    def __call__(self, path: str, launches: int) -> None:
        self.files += 1
        if self.progress is not None and self.files > self.skip:
            self.progress(path, launches)

    @property
    def reading(self):  # bytes read within a file (pipeline.read_all)
        return getattr(self.progress, "reading", None)


def _reduce_each(
    candidates: list[Path],
    given: dict,
    reading=None,
    *,
    options: pipeline.Options,
    spill_to: str | None = None,
    outside: bool = False,
) -> Iterator:
    """Each candidate's Reduction (or RooflintError), in input order, reduced where it is read:
    a worker process of a large folder, or a Dask worker with --scheduler."""
    one = functools.partial(reduce_file, options=options, spill_to=spill_to, outside=outside)
    read: Generator
    if options.scheduler:
        read = cluster.reduce_each(candidates, given, options.scheduler, one)
    else:
        read = pipeline.read_each(candidates, given, reading, one=one)
    kinds: set[bool] = set()  # whether each file read is a trace
    try:
        for item in read:
            if isinstance(item, str) and item == _TOGETHER:
                raise _Together
            if isinstance(item, (Reduction, Failed)):
                kinds.add(item.format in join.TRACE_FORMATS)
            if len(kinds) == 2:  # a trace among exports: join.pair may lend it their counters
                raise _Together
            yield item
    finally:
        read.close()


def reduce_file(
    candidate: Path,
    given: dict | None,
    progress=None,
    *,
    options: pipeline.Options,
    as_given=None,
    spill_to: str | None = None,
    outside: bool = False,
):
    """The file at `candidate` read (`progress` told the bytes read; its paths spelt by
    `as_given`, where given), analysed and reduced (its analysed launch table written to a file
    in `spill_to`, where given, with its table as read without rows); a RooflintError is
    returned, not raised."""
    read = pipeline.read_one(candidate, given, progress)
    if as_given is not None:
        read = as_given(read)
    if isinstance(read, RooflintError):
        return read
    replay = graphs.is_replay(read)
    if options.scheduler and (read.captured_launches or replay):
        return _TOGETHER  # the cluster's paths are not the parent's to pair
    note = graphs.own_note(read) if read.captured_launches else None
    try:
        reduction = _reduced_as_read(read, options, spill_to, outside)
    except RooflintError as exc:
        count = len(read.launches) if read.launches is not None else 0
        return Failed(exc, read.skipped, count, read.format)
    return dataclasses.replace(reduction, replay=replay, capture_note=note)


def _reduced_as_read(
    read: Profile, options: pipeline.Options, spill_to: str | None, outside: bool = False
) -> Reduction:
    """reduce(read), its spill told the table as read (its columns and dtypes, for the pieces)."""
    as_read = read.launches.iloc[:0].copy() if spill_to is not None else None  # its rows go
    reduction = reduce(read, options, spill_to, outside)
    if reduction.spilled is not None:
        reduction.spilled = dataclasses.replace(reduction.spilled, read=as_read)
    return reduction


def replays_paired(
    reductions: list[Reduction], options: pipeline.Options, spill_to=None, outside: bool = False
) -> list:
    """graphs.pair over reductions: each replay read again with the first capture trace that
    lends its kernels operators (the captures among the inputs, in input order, else those
    beside it) and reduced in its place (workers, as the files were read); the captures among
    the inputs that lent dropped, their notes on the replays."""
    replays = [r for r in reductions if r.replay]
    if not replays:
        return reductions
    given = {r.profile.source: r.capture_note for r in reductions if r.capture_note}
    read = {str(Path(r.profile.source)): r.profile for r in replays}  # without rows: files, skips
    pair = functools.partial(pair_replay, read=read, captures=given, options=options)
    pair = functools.partial(pair, spill_to=spill_to, outside=outside)
    paths = [Path(r.profile.source) for r in replays]
    paired = dict(zip(map(id, replays), pipeline.read_each(paths, {}, one=pair), strict=True))
    used = {found[0] for found in paired.values() if found is not None}
    out = []
    for reduction in reductions:
        found = paired.get(id(reduction))
        if reduction.profile.source not in used:
            out.append(found[1] if found is not None else reduction)
    return out


def pair_replay(
    path: Path, _given, _progress=None, *, read, captures, options, spill_to=None, outside=False
):
    """(capture, Reduction) of the replay trace at `path` (`read`: its profile as read, by
    source) read with the first capture that lends operators (graphs.paired: `captures`, the
    capture traces given and their notes, else those beside it), the capture's note among its
    notes; None where none lends."""
    found = graphs.paired(read[str(path)], list(captures))
    if found is None:
        return None
    replay, capture = found
    if capture in captures:
        replay.notes.append(captures[capture])
    return capture, _reduced_as_read(replay, options, spill_to, outside)


def reduce(
    profile: Profile, options: pipeline.Options, spill_to: str | None = None, outside: bool = False
) -> Reduction:
    """One profile analysed against its own device and reduced; its launches let go (written
    to a file in `spill_to` first, where given, and with `outside` those outside its window:
    only Perfetto's timeline draws them)."""
    count = len(profile.launches)
    analysed = pipeline.analyse(join.pair([profile]), options)  # as build: launches' notes
    launches = analysed.launches
    partial = partials.of(launches, options.group_by)  # what pipeline.rank ranks, of one file
    reduction = Reduction(
        partial,
        totals.of(launches, analysed.outside),  # what its Result's Summary is made from
        analysed.devices,
        dataclasses.replace(profile, launches=launches.iloc[:0].copy()),
        [_without_rows(w) for w in analysed.timelines],
        count,
        partials.by_device(launches, partial, options.group_by),
        spill.Spilled.of(launches, spill_to) if spill_to is not None else None,
        outside=_outside(analysed.outside, spill_to if outside else None),
    )
    profile.launches = None
    return reduction


def _outside(outside: pd.DataFrame | None, spill_to: str | None) -> spill.Spilled | None:
    """The launches outside the window written too (the Perfetto timeline lays them out)."""
    if spill_to is None or outside is None or not len(outside):
        return None
    sources = pd.factorize(outside["source"], use_na_sentinel=False)[1].tolist()
    return spill.Spilled(spill.write(outside, spill_to), len(outside), sources, None)


def _without_rows(windowed: windows.Windowed) -> windows.Windowed:
    built = dataclasses.replace(windowed.timeline, inside=np.zeros(0, dtype=bool))
    return dataclasses.replace(windowed, timeline=built)


def merged(
    reductions: list[Reduction], skipped, options: pipeline.Options, folder=None, outside=False
) -> Result:
    """The Result of the reductions' files read together, without their launches (their rows
    in `folder`'s files, its `pieces`, where they were spilled; with `outside`, those outside
    each file's window too)."""
    timelines = [w for r in reductions for w in r.timelines]
    job_of = ranks.job_of([w.ranked for w in timelines if w.ranked is not None])
    wholes = [_jobbed(r.partial, r, job_of) for r in reductions]
    partial = partials.merge(wholes)
    by_device = [
        {d: whole if p is r.partial else _jobbed(p, r, job_of) for d, p in r.by_device.items()}
        for r, whole in zip(reductions, wholes, strict=True)
    ]
    tables = [r.profile.launches for r in reductions]
    spilled = [r.spilled for r in reductions if r.spilled is not None]
    beside = [r.outside for r in reductions if r.spilled is not None] if outside else None
    rows = spill.pieces_of(spilled, tables, job_of, folder, beside) if folder is not None else None
    return Result(
        rows.columns if rows is not None else _columns(tables),
        ranking.ranked(partial, options.latency_threshold),
        options.group_by,
        _uses(reductions),
        [r.profile for r in reductions],
        skipped,
        options.latency_threshold,
        timelines,
        totals=totals.merge([r.totals for r in reductions]),
        pieces=rows,
        partial=partial,
        device_partials=partials.merge_by_device(by_device, wholes, partial),
    )


def _jobbed(partial: partials.Partial, reduction: Reduction, job_of: dict) -> partials.Partial:
    """A file's partial as one job's, with traces of several jobs (as it stands else)."""
    return partial.with_job(job_of.get(reduction.profile.source)) if job_of else partial


def _columns(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """An empty launch table with every column of the files' tables."""
    if len(tables) == 1:
        return tables[0]
    return schema.concat(tables, ignore_index=True)


def _uses(reductions: list[Reduction]) -> list[DeviceUse]:
    """The devices as pipeline.analyse keeps them: one per id, the first file's ceilings and
    evidence, provisional where any file's identification was."""
    uses: dict[str | None, DeviceUse] = {}
    for reduction in reductions:
        for each in reduction.devices:
            key = getattr(each.device, "id", None)
            use = uses.setdefault(key, DeviceUse(each.device, each.provenance, []))
            pipeline.note_identity(use, each)  # a DeviceUse carries what it reads
            use.sources.extend(each.sources)
            use.by_source.update(each.by_source)
    return list(uses.values())
