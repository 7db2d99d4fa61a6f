"""Nothing lost: every launch read is analysed or listed as not analysable, with the reason;
rows dropped or repaired are counted and named."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import FIXTURES, profile_params, real_path

LOADABLE = profile_params(("ncu", "rocprof"))
BUNDLED = [real_path(p.values[0]) for p in profile_params(("ncu", "rocprof"), shared_too=False)]


def json_report(*inputs, tmp_path: Path) -> dict:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["report", *map(str, inputs), "-q", "-o", str(out)])
    assert result.exit_code == 0, (result.stderr, result.exception)
    return json.loads(out.read_text(encoding="utf-8"))


def check_books(doc: dict) -> dict:
    acc = doc["accounting"]
    verdicts = [launch["verdict"] for launch in doc["launches"]]
    assert acc["launches_read"] == len(doc["launches"])
    assert acc["launches_read"] == acc["analysed"] + acc["not_analysable"]
    assert acc["not_analysable"] == verdicts.count("not-analysable")
    assert sum(acc["not_analysable_reasons"].values()) == acc["not_analysable"]
    reasons = [
        launch["reason"] for launch in doc["launches"] if launch["verdict"] == "not-analysable"
    ]
    assert all(reasons), "a launch is not analysable without a reason"
    assert {r: reasons.count(r) for r in set(reasons)} == acc["not_analysable_reasons"]
    return acc


def test_there_are_fixtures_to_account_for():
    assert len(BUNDLED) >= 3


@pytest.mark.parametrize("path", LOADABLE)
def test_every_launch_is_accounted_for(path, tmp_path):
    path = real_path(path)
    doc = json_report(path, tmp_path=tmp_path)
    acc = check_books(doc)
    assert acc["inputs_read"] == 1 and acc["inputs_skipped"] == []
    assert all(repair.startswith(f"{path}: ") for repair in acc["repairs"])
    expected = _launches_in_ncu_csv(path)
    if expected is not None:
        assert acc["launches_read"] == expected


def _launches_in_ncu_csv(path: Path) -> int | None:
    """Launches an ncu CSV holds, counted without rooflint: distinct IDs among the rows long
    enough to be launch data (a raw page's units row has no ID, a details page repeats IDs,
    an embedded NUMA table has five fields)."""
    if path.suffix != ".csv":
        return None
    text = path.read_bytes().decode("utf-8", errors="replace")
    rows = [r for r in csv.reader(line for line in text.splitlines() if line.startswith('"'))]
    header = next((r for r in rows if "ID" in r and "Kernel Name" in r), None)
    if header is None or "Launch Attribute" in header:
        return None
    id_col = header.index("ID")
    least = header.index("Metric Value") + 1 if "Metric Value" in header else len(header)
    ids = {
        r[id_col]
        for r in rows
        if r is not header and len(r) >= least and r[id_col].strip().isdigit()
    }
    return len(ids)


@pytest.mark.e2e  # over a second
def test_all_inputs_at_once_add_up(tmp_path):
    each = [json_report(p, tmp_path=tmp_path)["accounting"]["launches_read"] for p in BUNDLED]
    together = check_books(json_report(*BUNDLED, tmp_path=tmp_path))
    assert together["launches_read"] == sum(each)
    assert together["inputs_read"] == len(BUNDLED)


def test_dropped_and_repaired_rows_are_counted_and_named(tmp_path):
    raw = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    header, units, launch = list(csv.reader(raw.read_text(encoding="utf-8").splitlines()))
    rows = [header, units]
    for i in range(4):
        row = list(launch)
        row[0] = str(i)
        rows.append(row)
    rows[3][0] = "0"  # launch ID 0 twice
    rows[4][header.index("gpu__time_duration.sum")] = "-1"  # an impossible value
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    text = buf.getvalue().splitlines(keepends=True)
    text.insert(3, '"NUMA","affinity","table"\n')  # two short lines that are not launches
    text.insert(5, '"0","1"\n')
    cut = "".join(text)[:-3000]  # and the last launch cut off mid-row
    path = tmp_path / "damaged.csv"
    path.write_text(cut, encoding="utf-8")
    acc = check_books(json_report(path, tmp_path=tmp_path))
    assert acc["launches_read"] == 3
    assert acc["repairs"] == [
        f"{path}: last line cut short (the file ends mid-row: a truncated copy?) skipped",
        f"{path}: 2 line(s) that are not launch rows "
        "(an embedded table such as NUMA affinity, or a row cut short) skipped",
        f"{path}: 2 rows share 1 launch ID(s): 0 (2 rows); all rows kept "
        "(two exports joined into one file?)",
        f"{path}: 1 launch(es) with a negative or infinite value, read as missing "
        "(each launch's notes name the quantity)",
    ]
    assert acc["not_analysable_reasons"] == {"missing duration": 1}


def test_largest_kernels_without_a_verdict_worked_by_hand():
    """Five launches, 10 s: `a` analysed (4 s); `gemm` twice (1 s + 2 s), `copy` (2.5 s) and an
    unnamed launch (0.5 s) without a verdict. By hand: gemm 3 s (0.3), copy 2.5 s (0.25),
    (unnamed) 0.5 s (0.05); analysed time 4 s. Rows picked from the whole name column."""
    import numpy as np
    import pandas as pd

    from rooflint.core import coverage, windows
    from rooflint.core.verdicts import MEMORY_BOUND, NOT_ANALYSABLE

    launches = pd.DataFrame(
        {
            "kernel": pd.array(["gemm", "a", "copy", None, "gemm"], dtype="string"),
            "duration_s": [1.0, 4.0, 2.5, 0.5, 2.0],
            "verdict": pd.array([NOT_ANALYSABLE, MEMORY_BOUND] + [NOT_ANALYSABLE] * 3, "string"),
        },
        index=[10, 11, 12, 13, 14],  # not 0..n-1: rows are picked by position
    )
    ok = (launches["verdict"] != NOT_ANALYSABLE).to_numpy()
    total = windows.occupied_s(launches)
    assert total == 10.0 and windows.occupied_s(launches, ok) == 4.0
    times = coverage.unanalysed_times(launches, np.flatnonzero(~ok))  # as totals.of takes them
    assert coverage.largest(times, total, 2) == [
        {"name": "gemm", "time_s": 3.0, "share": 0.3},
        {"name": "copy", "time_s": 2.5, "share": 0.25},
    ]
    assert coverage.largest(times, total)[-1]["name"] == "(unnamed)"
