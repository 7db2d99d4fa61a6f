"""Reading a saved `rooflint report --format json` file back into a Result, numbers unchanged."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from rooflint import saved_check
from rooflint.core import analysis, provenance, ranking, report_schema, schema, verdicts
from rooflint.core.device import HOST_PREFIX, Link, LinkKind
from rooflint.core.errors import InputError
from rooflint.core.profile import InputFormat, Profile
from rooflint.core.result import DeviceUse, Result
from rooflint.hardware import Ceiling, Device

FORMAT = InputFormat.SAVED_REPORT
READS = report_schema.FORMAT_VERSION  # the newest version read; every older one is read too
_RESULT_FILLS = {"reason": "", "verdict": verdicts.NOT_ANALYSABLE}


def looks_saved(path: str | Path) -> bool:
    """True when `path` is a file whose content starts like a JSON object (a saved report or
    not)."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as fh:
            start = fh.read(64)
    except OSError:
        return False
    return start.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def read_document(path: str | Path) -> dict | None:
    """The parsed report when `path` holds a rooflint JSON report, else None (not ours). A
    report laid out as `rooflint report` writes it has its launches read CHUNK_BYTES at a time
    into the launch table (`doc["launches"]` is then that DataFrame): read whole, as Python
    dicts, a 200k-launch report (261 MB) peaked at 1.09 GiB, in chunks at 0.55 GiB."""
    if not looks_saved(path):
        return None
    try:
        data = Path(path).read_bytes().removeprefix(codecs.BOM_UTF8)  # text: 1-4 bytes a char
        if b'"format_version"' not in data:  # a trace, not a report: not parsed twice
            return None
        written = _as_written(data)
        doc = json.loads((written[0] if written else data).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if _TOOL.search(data[:4096]):  # ours, cut or edited: not "neither a trace nor a profile"
            raise InputError(f"{BROKEN} ({exc}); {AGAIN}", path=str(path)) from None
        return None
    except RecursionError:
        raise InputError(NESTED, path=str(path)) from None
    if not isinstance(doc, dict) or "format_version" not in doc:
        return None
    if not str(doc.get("tool", "")).startswith("rooflint"):
        return None
    check_version(doc, path)  # a newer layout's lines are not read as this one's
    saved_check.document(doc, path)
    if written:
        doc["launches"] = _chunked_table(data, *written[1:], path, doc.get("sources"))
    return doc


CHUNK_BYTES = 8 << 20
_TOOL = re.compile(rb'"tool"\s*:\s*"rooflint')  # the writer puts it at the top of the document
AGAIN = "save it again with `rooflint report --format json`"
BROKEN = "a rooflint JSON report that is not valid JSON: it was cut or edited"
NESTED = f"JSON nested over 1,000 levels deep (a report nests a few levels); {AGAIN}"


def _as_written(data: bytes) -> tuple[bytes, int, int] | None:
    """(the document with an empty launch list, where the launch lines start and stop) of a
    report in the writer's layout (core.report_schema); None for any other (read whole)."""
    start = data.rfind(report_schema.LAUNCHES_OPEN)
    if start < 0 or not data.endswith(report_schema.LAUNCHES_CLOSE):
        return None
    head = data[:start] + report_schema.NO_LAUNCHES
    opened, closed = len(report_schema.LAUNCHES_OPEN), len(report_schema.LAUNCHES_CLOSE)
    return head, start + opened, len(data) - closed


def _chunked_table(data: bytes, start: int, stop: int, path, sources: list | None) -> pd.DataFrame:
    """launch_table of the launch lines data[start:stop], about CHUNK_BYTES at a time."""
    tables, first = [], 0
    while start < stop:
        end = data.find(b",\n", start + CHUNK_BYTES, stop)
        end = stop if end < 0 else end
        records = _records(data[start:end], path)
        tables.append(launch_table(records, path, sources, first))
        start, first = end + 2, first + len(records)
    if not tables:
        return launch_table([], path, sources)
    return schema.concat(tables, ignore_index=True)


def _records(lines: bytes, path) -> list:
    try:
        return json.loads(b"[" + lines + b"]")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"a launch line is not valid JSON ({exc}); the report was cut or edited: {AGAIN}",
            path=str(path),
        ) from None
    except RecursionError:
        raise InputError(NESTED, path=str(path)) from None


def load(path: str | Path, latency_threshold: float | None = None) -> Result:
    """A Result from a saved JSON report: launches as saved, groups re-ranked from them.

    The roofline numbers are taken as saved (they were computed against the ceilings the report
    lists); only the grouping is redone, so that a top-N report still diffs completely.
    """
    doc = read_document(path)
    if doc is None:
        raise InputError(
            "not a rooflint JSON report (expected an object with format_version and "
            "tool 'rooflint ...'); pass `rooflint report --format json` output or a profile",
            path=str(path),
        )
    return from_document(doc, path, latency_threshold)


def from_document(doc: dict, path, latency_threshold: float | None = None) -> Result:
    """`load` of a report already read (`read_document`): a large report is parsed once."""
    check_version(doc, path)
    launches = doc.get("launches")
    if isinstance(launches, list):
        launches = launch_table(launches, path, doc.get("sources"))
    elif not isinstance(launches, pd.DataFrame):  # read_document gives the table of a large one
        raise InputError(
            "rooflint JSON report has no 'launches' list; save the report again with "
            "`rooflint report --format json`",
            path=str(path),
        )
    saved_check.accounting_adds_up(doc, launches, path)
    saved_threshold = report_schema.number(doc.get("latency_threshold"), verdicts.LATENCY_THRESHOLD)
    threshold = saved_threshold if latency_threshold is None else latency_threshold
    kernels = ranking.rank(launches, "kernel", threshold)
    devices = [device_use(entry) for entry in doc.get("devices") or []]
    inputs = _inputs(doc, launches)
    skipped = [
        (s.get("path", ""), s.get("reason", ""))
        for s in (doc.get("accounting") or {}).get("inputs_skipped", [])
    ]
    return Result(
        launches, kernels, "kernel", devices, inputs, skipped, threshold,
        saved_timeline=_timeline(doc),
    )  # fmt: skip


def _timeline(doc: dict) -> dict | None:
    """The saved timeline block (format 3 on), checked for what the headline and a diff read."""
    block = doc.get("timeline")
    if not isinstance(block, dict):
        return None
    devices, steps = block.get("devices"), block.get("steps")
    if not isinstance(devices, list) or not isinstance(steps, dict) or "window" not in block:
        return None
    return block


def check_version(doc: dict, path) -> None:
    version = doc.get("format_version")
    if doc.get("kind") == "diff":
        raise InputError(
            "this is a saved `rooflint diff`, not a report; pass a `rooflint report "
            "--format json` file or a profile",
            path=str(path),
        )
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(
            f"format_version {version!r} is not a version rooflint wrote; save the report "
            "again with `rooflint report --format json`",
            path=str(path),
        )
    if version > READS:
        raise InputError(
            f"written by a newer rooflint ({doc.get('tool')}, format_version {version}); this "
            f"rooflint reads format_version {READS} and older: upgrade rooflint "
            "(pip install -U rooflint) or diff the original profile instead",
            path=str(path),
        )


def launch_table(records: list, path, sources: list | None = None, first: int = 0) -> pd.DataFrame:
    """The analysed launch table (canonical + result columns) from saved launch records: version 1
    names the source in each launch, version 2 gives an index into the document's `sources`
    and leaves null fields out (absent fields read as null)."""
    if records and not all(isinstance(r, dict) for r in records):
        raise InputError(
            "'launches' holds something other than objects; save the report again", path=str(path)
        )
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame(index=pd.RangeIndex(0))
    saved_check.launch_columns(frame, first, path)
    if "source_index" in frame:
        frame["source"] = _sources_of(frame.pop("source_index"), sources, path)
    if "missing" in frame:
        frame["missing"] = [_missing_text(m) for m in frame["missing"]]
    out = schema.conform(frame)
    n = len(out)
    for col in analysis.RESULT_COLUMNS + ["family"]:
        if col in analysis.RESULT_NUMBERS:
            values = frame[col] if col in frame else pd.Series([np.nan] * n)
            out[col] = pd.to_numeric(values, errors="coerce").astype("float64").to_numpy()
        else:
            values = frame[col] if col in frame else pd.Series([pd.NA] * n, dtype="string")
            out[col] = schema.text(values.astype("string"), _RESULT_FILLS.get(col))
    for col in [c for c in schema.OPTIONAL_COLUMNS if c in frame]:  # a trace's, ncu's percentages
        if schema.LAUNCH_FACT_DTYPES.get(col) == "category":  # ncu's launch facts: text as read
            out[col] = schema.text(frame[col].astype("string"), None)
            continue
        out[col] = pd.array(
            frame[col].to_numpy(dtype=object), dtype=_TRACE_DTYPES.get(col, "string")
        )
    return out


_TRACE_DTYPES = {
    **dict.fromkeys(provenance.COLUMNS, provenance.DTYPE),
    "bytes_model_min": "float64",  # as the readers make them (NaN where none)
    "excess_traffic": "float64",
    "stream": "Int64",
    "device_index": "Int64",
    "graph_replay": "boolean",
    "roof_assumed": "boolean",
    "start_s": "float64",
    "launch_s": "float64",
    "comm_bytes": "float64",
    "comm_ranks": "Int64",
    "rank": "Int64",
    **dict.fromkeys(["dram_throughput", "sm_throughput", "pipe_utilisation"], "float64"),
    **{c: d for c, d in schema.LAUNCH_FACT_DTYPES.items() if d != "category"},
}


def _sources_of(index: pd.Series, sources, path) -> np.ndarray:
    """Each launch's source name from its index into the document's `sources` list."""
    names = np.asarray(list(sources or []) + [None], dtype=object)
    codes = pd.to_numeric(index, errors="coerce")
    bad = codes.isna() | (codes < 0) | (codes >= len(names) - 1) | (codes % 1 != 0)
    if bad.any():
        raise InputError(
            "a launch's 'source_index' is not an index into 'sources'; save the report "
            "again with `rooflint report --format json`",
            path=str(path),
        )
    return names[codes.to_numpy(dtype="int64")]


def _missing_text(value) -> str:
    """The saved {quantity: reason} map back into the canonical `missing` cell."""
    if isinstance(value, dict):
        return "; ".join(f"{q}: {r}" for q, r in value.items())
    return value if isinstance(value, str) else ""


def device_use(entry: dict) -> DeviceUse:
    """A saved device entry (core.report_schema) as a DeviceUse whose device carries the saved
    ceilings."""
    saved = report_schema.read_device_entry(entry)
    if saved["id"] is None:
        return DeviceUse(None, saved["provenance"], saved["sources"])
    device = saved_device(saved, "saved rooflint report")
    return DeviceUse(
        device,
        saved["provenance"],
        saved["sources"],
        evidence=saved["evidence"],
        candidates=saved["candidates"],
        provisional=saved["provisional"],
        highest_roofs=saved["highest_roofs"],
    )


def saved_device(saved: dict, source: str) -> Device:
    """A Device with exactly the ceilings a report saved (`saved`: read by core.report_schema);
    what only the catalog knows (profiler names, SM count, boost clock) is not saved."""
    compute, memory = (
        {name: Ceiling(value, origin) for name, (value, origin) in saved[kind].items()}
        for kind in ("compute", "memory")
    )
    return Device(
        id=saved["id"],
        name=saved["name"],
        vendor=saved["vendor"],
        arch=saved["arch"],
        profiler_names=(),
        sm_count=0,
        boost_clock_hz=float("nan"),
        compute=compute,
        memory=memory,
        source=source,
        link=_saved_link(saved.get("link") or {}),
        host_link=_saved_link(saved.get("host_link") or {}, HOST_PREFIX),
    )


def _saved_link(saved: dict, prefix: str = "") -> Link | None:
    """The link roof a report saved ({kind: (value, source)}, a host link's kind after
    `prefix`), None when it saved none or one of a kind this version does not know."""
    for name, (value, origin) in saved.items():
        kind = name.removeprefix(prefix)
        if kind in {k.value for k in LinkKind}:
            return Link(LinkKind(kind), Ceiling(value, origin))
    return None


def _inputs(doc: dict, launches: pd.DataFrame) -> list[Profile]:
    """One Profile per source the report read, with its notes and repairs restored."""
    sources = list(dict.fromkeys(launches["source"].dropna().astype(str)))
    notes = list(doc.get("notes") or [])
    repairs = list((doc.get("accounting") or {}).get("repairs") or [])
    profiles = []
    for source in sources:
        prefix = source + ": "
        profiles.append(
            Profile(
                source=source,
                format=FORMAT,
                launches=launches[launches["source"] == source],
                notes=[n[len(prefix) :] for n in notes if n.startswith(prefix)],
                repairs=[r[len(prefix) :] for r in repairs if r.startswith(prefix)],
            )
        )
    return profiles
