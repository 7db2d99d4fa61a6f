"""Reading the inputs on a Dask cluster: each file one task, read by a worker where it lies.

`rooflint report --scheduler tcp://HOST:8786 INPUTS...` (or ROOFLINT_SCHEDULER, or `scheduler`
in [tool.rooflint]) sends every input file to a `dask.distributed` cluster as a task of
`read_one`; the profiles come back in input order and the report is made from them exactly as
from profiles read locally, so it is the same report, byte for byte. The workers open the files
by path: they must see the same file system (a shared or network mount); a relative path is made
absolute against the current folder, and the profile a worker returns is labelled with the path
as given. Needs the `dask` extra (`pip install "rooflint[dask]"`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pandas as pd

from rooflint.core.errors import RooflintError, UsageError
from rooflint.core.profile import Profile

ReadOne = Callable[[Path, dict], "Profile | RooflintError"]


def read_each(
    candidates: list[Path], given: dict, scheduler, read_one: ReadOne
) -> Iterator[Profile | RooflintError]:
    """read_one(candidate, given) of every candidate on the cluster at `scheduler` (an address,
    or a `distributed.Client` already made), yielded in input order."""
    if not candidates:
        return
    client, own = _client(scheduler)
    try:
        absolute = [str(Path(c).absolute()) for c in candidates]
        futures = client.map(
            read_one, [Path(a) for a in absolute], [given] * len(absolute), pure=False
        )
        for n, (candidate, path, future) in enumerate(
            zip(candidates, absolute, futures, strict=True)
        ):
            read = future.result()
            if own and n == len(futures) - 1:
                # Closed before the last yield, where a consumer stops (it raises a lone file's
                # error; zip ends there): a generator left suspended closes only when collected,
                # after the cluster may be gone, and its client then retried the scheduler
                # (a CancelledError traceback at exit).
                client.close()
            yield as_given(read, path, str(candidate))
    finally:
        if own:
            client.close()  # a consumer that stopped earlier (closing twice does nothing)


def reduce_each(candidates: list[Path], given: dict, scheduler, reduce_file: Callable) -> Generator:
    """reduce_file(candidate, given, as_given=...) of every candidate on the cluster at
    `scheduler`, in input order: each worker reads its file, spells its paths as the user gave
    them and reduces it there (rooflint.reduced), so only the per-group sums come back."""
    if not candidates:
        return
    client, own = _client(scheduler)
    try:
        absolute = [str(Path(c).absolute()) for c in candidates]
        spellers = [_AsGiven(a, str(c)) for a, c in zip(absolute, candidates, strict=True)]
        futures = [
            client.submit(reduce_file, Path(a), given, as_given=speller, pure=False)
            for a, speller in zip(absolute, spellers, strict=True)
        ]
        for n, future in enumerate(futures):
            read = future.result()
            if own and n == len(futures) - 1:
                client.close()  # as read_each: before the last yield
            yield read
    finally:
        if own:
            client.close()


@dataclasses.dataclass(frozen=True)
class _AsGiven:
    """as_given(read, absolute, given), sent to a worker with its file."""

    absolute: str
    given: str

    def __call__(self, read):
        return as_given(read, self.absolute, self.given)


def _client(scheduler):
    """(client, whether this run made it and closes it)."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "--scheduler needs Dask's distributed scheduler; install it with "
            'pip install "rooflint[dask]", or drop --scheduler to read the inputs here'
        ) from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout="10s", set_as_default=False), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"cannot reach the Dask scheduler at {scheduler} ({exc}); start it "
            "(dask scheduler, or a cluster manager) or correct the address"
        ) from None


def as_given(read: Profile | RooflintError, absolute: str, given: str):
    """The worker's profile (or error) with its paths spelt as the user gave them."""
    respelt = _respeller(absolute, given)
    if isinstance(read, RooflintError):
        path = respelt(read.path) if read.path is not None else None
        return type(read)(read.problem, path=path, line=read.line)
    launches = read.launches
    if isinstance(launches["source"].dtype, pd.CategoricalDtype):
        launches["source"] = launches["source"].cat.rename_categories(respelt)
    return dataclasses.replace(
        read,
        source=respelt(read.source),
        files=[respelt(f) for f in read.files],
        skipped=[(respelt(path), reason) for path, reason in read.skipped],
        measured_source=respelt(read.measured_source),
    )


def _respeller(absolute: str, given: str) -> Callable[[str], str]:
    """A path under `absolute` (the file, or a folder's member) spelt from `given` instead."""

    def respell(path):
        if not isinstance(path, str) or not path.startswith(absolute):
            return path
        return given + path[len(absolute) :]

    return respell
