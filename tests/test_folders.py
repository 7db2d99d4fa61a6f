"""Folders: every file under a folder is read or listed as skipped; workloads are folders with
pmc_perf.csv at their top; measured ceilings apply only to their own workload and GPU."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflint import pipeline
from rooflint.cli import main
from rooflint.parsers import rocprof
from tests.helpers import FIXTURES, shared


def files_under(folder: Path) -> int:
    """Counted here with os.walk, independently of rooflint's own walk."""
    return sum(len(names) for _, _, names in os.walk(folder))


def report_json(*args) -> dict:
    run = CliRunner().invoke(main, ["report", *map(str, args), "-f", "json", "-q"])
    assert run.exit_code == 0, run.output
    return json.loads(run.stdout)


@pytest.mark.e2e
def test_shared_rocprof_folder_accounts_for_every_file():
    folder = shared("rocprof")
    doc = report_json(folder)
    acc = doc["accounting"]
    assert len(acc["files_read"]) + len(acc["inputs_skipped"]) == files_under(folder)
    assert len(set(acc["files_read"])) == len(acc["files_read"])
    # the flat folder is no workload: each file is its own profile, read with nothing foreign
    assert all(not d["provenance"][1].startswith("ignored") for d in doc["devices"] if d["id"])
    assert not any("roofline.csv" in line for d in doc["devices"] for line in d["provenance"])
    assert doc["summary"]["above_roof_launches"] == 0
    vec_copy = [
        launch
        for launch in doc["launches"]
        if launch["kernel"].startswith("vecCopy")
        and "mi300x" in doc["sources"][launch["source_index"]]
    ]
    assert vec_copy and all(launch["verdict"] != "above-roof" for launch in vec_copy)


def test_strict_fails_on_a_folder_with_skipped_files(tmp_path):
    # two profiles and three files that are not: a roofline.csv, a kernel_stats summary, notes
    rocprof = FIXTURES / "rocprof"
    for name in (
        "v3_docs_2025_counter_collection.csv",
        "v3_rocm621_mi300a_kernel_trace_head.csv",
        "omniperf2_mi200_roofline.csv",
        "v3_rocm621_mi300a_kernel_stats.csv",
    ):
        shutil.copy(rocprof / name, tmp_path)
    (tmp_path / "notes.txt").write_text("run on node 7\n")
    run = CliRunner().invoke(main, ["report", str(tmp_path), "--strict", "-q"])
    assert run.exit_code == 2
    assert "--strict: 3 file(s) not read:" in run.output
    assert "omniperf2_mi200_roofline.csv (holds measured ceilings" in run.output


@pytest.fixture
def workload(tmp_path) -> Path:
    """An MI300X workload as rocprof-compute leaves it, with a roofline.csv from an MI200, a
    per-pass input folder and a hidden file."""
    folder = tmp_path / "MI300X_A1"
    (folder / "perfmon").mkdir(parents=True)
    shutil.copy(
        FIXTURES / "rocprof" / "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
        folder / "pmc_perf.csv",
    )
    shutil.copy(
        FIXTURES / "rocprof" / "omniperf2_mi300x_rocm620_sysinfo.csv", folder / "sysinfo.csv"
    )
    shutil.copy(FIXTURES / "rocprof" / "omniperf2_mi200_roofline.csv", folder / "roofline.csv")
    (folder / "perfmon" / "pmc_perf_0.txt").write_text("pmc: SQ_WAVES\n")
    (folder / ".DS_Store").write_bytes(b"\x00")
    return folder


@pytest.mark.e2e  # over a second
def test_workload_reads_its_three_files_and_lists_the_rest(workload):
    res = pipeline.build([str(workload)])
    (profile,) = res.inputs
    assert sorted(Path(f).name for f in profile.files) == [
        "pmc_perf.csv",
        "roofline.csv",
        "sysinfo.csv",
    ]
    assert sorted((Path(p).name, r) for p, r in res.skipped) == [
        (".DS_Store", "hidden file"),
        (
            "pmc_perf_0.txt",
            "not read: a rocprof-compute workload is read from its pmc_perf.csv, "
            "sysinfo.csv and roofline.csv",
        ),
    ]
    assert len(profile.files) + len(res.skipped) == files_under(workload)


@pytest.mark.e2e  # over a second
def test_roofline_of_another_gpu_is_not_applied(workload):
    """MI200 roofline.csv: HBM 1,388.79 GB/s = 26 % of the MI300X's 5.3 TB/s. On those roofs
    vecCopy (16 MiB in 7.2 us) sat at 167 % ("above roof"); on the MI300X's own it does not."""
    (use,) = pipeline.build([str(workload)]).devices
    assert use.device.id == "mi300x" and use.device.memory["dram"].value == 5300e9
    assert any(
        line.startswith("ignored measured ceilings") and "26%" in line for line in use.provenance
    )
    launches = pipeline.build([str(workload)]).launches
    assert (launches["verdict"] != "above-roof").all()


def test_a_folder_with_pmc_perf_only_deeper_down_is_not_a_workload(workload):
    parent = workload.parent
    (parent / "notes.txt").write_text("run log\n")
    assert not rocprof.sniff_folder(parent) and rocprof.sniff_folder(workload)
    res = pipeline.build([str(parent)])
    assert [p.source for p in res.inputs] == [str(workload)]
    assert "notes.txt" in {Path(p).name for p, _ in res.skipped}
    assert sum(len(p.files) for p in res.inputs) + len(res.skipped) == files_under(parent)
