"""A CUDA/HIP graph replay trace paired with the capture trace of its graphs (given with it, or
found beside it): the replayed kernels take their operators and shapes from the capture."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rooflint.core.errors import RooflintError
from rooflint.core.profile import InputFormat, Profile
from rooflint.parsers import kineto

CAPTURE_FOLDER = "capture_traces"  # where vLLM's and TraceLens's layout keeps capture traces
CAPTURE_GLOBS = ("*capture*.json", "*capture*.json.gz")


def pair(profiles: list[Profile]) -> list[Profile]:
    """Each replay trace re-read with a capture trace whose graphs it replays: one given among
    `profiles`, else one beside it (its folder or its capture_traces/ folder, a file named
    *capture*). A capture trace given that lent its operators is reported through the replay,
    its own activities (run while capturing) named in a note; one that matched nothing is
    reported as it is."""
    captures = {p.source: p for p in profiles if p.captured_launches}
    used: set[str] = set()
    out = []
    for profile in profiles:
        found = paired(profile, list(captures)) if is_replay(profile) else None
        if found is None:
            out.append(profile)
            continue
        replay, capture = found
        if capture in captures:
            used.add(capture)
            replay.notes.append(own_note(captures[capture]))
        out.append(replay)
    return [p for p in out if p.source not in used]


def is_replay(profile: Profile) -> bool:
    return (
        profile.format == InputFormat.PYTORCH_TRACE
        and "graph_replay" in profile.launches
        and bool(profile.launches["graph_replay"].fillna(False).any())
    )


def paired(profile: Profile, given: list[str]) -> tuple[Profile, str] | None:
    """The replay re-read with the first capture that lends operators to its kernels."""
    for capture in given or _beside(Path(profile.source)):
        try:
            replay, lent = kineto.read_replay(profile.source, capture)
        except RooflintError:
            continue
        if lent:
            return replace(replay, files=profile.files, skipped=profile.skipped), capture
    return None


def own_note(capture: Profile) -> str:
    launches = capture.launches
    return (
        f"capture trace {capture.source}: its own {len(launches)} GPU activities "
        f"({launches['duration_s'].sum() * 1e3:.3f} ms, run while the graphs were captured) "
        "are not reported; pass it alone to see them"
    )


def _beside(path: Path) -> list[str]:
    """Capture traces next to a replay trace: named *capture*, in its folder or capture_traces/."""
    found: list[Path] = []
    for folder in (path.parent, path.parent / CAPTURE_FOLDER):
        for pattern in CAPTURE_GLOBS:
            found += sorted(folder.glob(pattern)) if folder.is_dir() else []
    return [str(p) for p in found if p != path and kineto.captured_launches(p)]
