"""The .ncu-rep reader against NVIDIA's own report files and their CSV re-exports.

The re-exports in ncu/reexport-ncu2024.2/ were made by the real `ncu --import R.ncu-rep --csv`
from the same reports, so the launch table read from a report must equal the one read from its
export, to within what the export printed. Hand-worked expectations are quoted from the counters.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from rooflint import parsers
from rooflint.core import schema
from rooflint.core.errors import InputError, UnsupportedFormatError
from rooflint.parsers import ncu_rep
from tests.helpers import FIXTURES, SHARED_PROFILES, shared

NCU = "ncu/"
REEXPORT = "ncu/reexport-ncu2024.2/"
SGEMM = NCU + "nsight-compute-files-rtx2080ti-sgemm.ncu-rep"
NVTX = NCU + "nsight-training-manual_nvtx.ncu-rep"
VECADD = NCU + "nsight-training-CuVectorAddDrv.ncu-rep"
REPORTS = sorted(p.removeprefix(NCU) for p in SHARED_PROFILES if p.endswith(".ncu-rep"))
# Base-unit exports print clocks and rates to 2 decimals and counts exactly: 1e-6 relative
# covers them. The auto-unit export prints 6 significant digits ("3.232000" us, "1.417595" Ghz).
PAIRS = [
    (SGEMM, "rtx2080ti-sgemm-raw-base.csv", 1e-6),
    (NVTX, "nvtx-raw-base.csv", 1e-6),
    (VECADD, "vecadd-raw.csv", 5e-6),
]
IDENTITY = ["launch_id", "process_id", "kernel", "grid", "block", "device_name", "arch", "range"]


@pytest.fixture
def ncu_report():
    module = pytest.importorskip("ncu_report")
    if ncu_rep.too_old():
        pytest.skip("ncu-report older than 2026.2 crashes alongside pandas; the reader refuses it")
    return module


def load(path):
    profile = parsers.read(path)
    schema.validate(profile.launches)
    return profile


@pytest.mark.e2e
@pytest.mark.parametrize("name", REPORTS)
def test_every_report_loads(ncu_report, name):
    profile = load(shared(NCU + name))
    t = profile.launches
    assert profile.format == "ncu-rep" and len(t) >= 1
    assert t["launch_id"].tolist() == list(range(len(t)))
    assert t["kernel"].notna().all() and t["kernel_mangled"].notna().all()
    assert (t["duration_s"] > 0).all()
    assert t["device_name"].str.startswith("NVIDIA GeForce RTX").all()
    assert t["arch"].str.fullmatch(r"\d+\.\d").all()
    assert t["grid"].str.fullmatch(r"\(\d+, \d+, \d+\)").all()


@pytest.mark.e2e
@pytest.mark.parametrize(("report", "export", "rel"), PAIRS)
def test_report_equals_its_csv_export(ncu_report, report, export, rel):
    rep = load(shared(report)).launches
    csv = load(shared(REEXPORT + export)).launches
    assert len(rep) == len(csv)
    pd.testing.assert_frame_equal(rep[IDENTITY], csv[IDENTITY])
    assert rep["missing"].tolist() == csv["missing"].tolist()
    # FLOPs the export derived from rounded per-cycle rates: compared in the test below
    rate_derived = [
        c
        for c in schema.VECTOR_OPS
        if f"{c.removeprefix('ops_vector_')} FLOPs = per-cycle rate" in csv["notes"].iloc[0]
    ]
    for column in schema.FLOAT_COLUMNS:
        if column in rate_derived:
            continue
        np.testing.assert_array_equal(rep[column].isna(), csv[column].isna(), err_msg=column)
        np.testing.assert_allclose(rep[column], csv[column], rtol=rel, atol=0, err_msg=column)


@pytest.mark.e2e
def test_sgemm_flops_from_rates_agree_within_the_printed_rounding(ncu_report):
    # The base-unit export prints the per-cycle rates rounded to 0.01 (fmul "14.63", ffma
    # "936.30", fadd "0"), so its FLOPs, add + mul + 2 fma rates x elapsed cycles, can be off by
    # (0.005 + 0.005 + 2 x 0.005) x cycles. The report keeps the rates unrounded.
    rep = load(shared(SGEMM)).launches.iloc[0]
    csv = load(shared(REEXPORT + "rtx2080ti-sgemm-raw-base.csv")).launches.iloc[0]
    cycles = 1305874122.04 * 10720e-9  # sm__cycles_elapsed.avg.per_second x gpu__time_duration
    assert rep["ops_vector_fp32"] == pytest.approx(csv["ops_vector_fp32"], abs=0.02 * cycles)
    assert rep["ops_vector_fp32"] != csv["ops_vector_fp32"]  # the export's is the rounded one
    assert rep["ops_vector_fp64"] == csv["ops_vector_fp64"] == 0


@pytest.mark.e2e
def test_sgemm_report_by_hand(ncu_report):
    profile = load(shared(SGEMM))
    row = profile.launches.iloc[0]
    assert (
        row["kernel"] == row["kernel_mangled"] == "volta_sgemm_32x128_nn"
    )  # extern "C": no mangling
    assert (row["grid"], row["block"], row["arch"]) == ("(2, 25, 1)", "(256, 1, 1)", "7.5")
    assert row["process_id"] == 9741
    assert row["duration_s"] == pytest.approx(
        10720e-9, rel=1e-12
    )  # gpu__time_duration.sum 10720 ns
    assert row["bytes_dram"] == 819456 == 25608 * 32  # dram__bytes_read.sum; 25608 sectors x 32 B
    # The grid covers M = 25 x 128 = 3200 rows, N = 2 x 32 = 64 columns, K = 64: 3200 x 64 x 64
    # FFMA and one FMUL (alpha) per output, so FP32 FLOPs = 2 x 3200 x 64 x 64 + 3200 x 64. The
    # unrounded rates in the report give exactly that (the export's rounded ones do not).
    assert row["ops_vector_fp32"] == pytest.approx(2 * 3200 * 64 * 64 + 3200 * 64, rel=1e-12)
    # The run's own ceilings: ffma peak 4352 inst/cycle x 2 x the SM clock, DRAM 96 B/cycle x
    # the DRAM clock (sm__/dram__cycles_elapsed.avg.per_second 1305874122.04 and 6638805970.15 Hz).
    assert row["peak_vector_fp32"] == pytest.approx(2 * 4352 * 1305874122.04, rel=1e-9)
    assert row["peak_vector_fp32"] == pytest.approx(11.37e12, rel=1e-3)
    assert row["peak_bytes_dram"] == pytest.approx(96 * 6638805970.15, rel=1e-9)
    assert row["peak_bytes_dram"] == pytest.approx(637e9, rel=1e-3)
    assert all("rounded as printed" not in n for n in profile.notes)


@pytest.mark.e2e
def test_nvtx_ranges_and_mangled_names(ncu_report):
    t = load(shared(NVTX)).launches
    assert t["range"].tolist() == ["run_test/init_data", "run_test/daxpy", "run_test/check_results"]
    assert t["kernel"].tolist() == [
        "init_data_kernel(int, double *)",
        "daxpy_kernel(int, double, double *, double *)",
        "check_results_kernel(int, double, double *)",
    ]
    # the same report exported with --print-kernel-base mangled
    mangled = load(shared(REEXPORT + "nvtx-details-kernelbase-mangled.csv")).launches
    assert t["kernel_mangled"].tolist() == mangled["kernel"].tolist()
    assert t["kernel_mangled"].iloc[0] == "_Z16init_data_kerneliPd"


@pytest.mark.e2e
def test_recognised_by_content_not_name(ncu_report, tmp_path):
    renamed = tmp_path / "profile.bin"
    shutil.copyfile(shared(VECADD), renamed)
    assert parsers.detect(renamed) is ncu_rep.READER
    row = load(renamed).launches.iloc[0]
    assert row["kernel"] == "VecAdd_kernel" and row["process_id"] == 198250
    assert row["duration_s"] == pytest.approx(3232e-9, rel=1e-12)  # gpu__time_duration.sum 3232 ns


@pytest.mark.e2e
def test_process_ids_come_from_the_report_container():
    # ncu_report does not expose the process; the container's block headers do
    assert ncu_rep.result_process_ids(shared(NVTX)) == [129325] * 3
    assert ncu_rep.result_process_ids(shared(VECADD)) == [198250]


def test_without_ncu_report_the_install_message_is_given(tmp_path, monkeypatch):
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"NVR\x00" + bytes(64))
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import ncu_report now fails
    assert not ncu_rep.available()
    for call in (parsers.read, ncu_rep.read):
        with pytest.raises(
            UnsupportedFormatError, match=r"install `rooflint\[ncu-rep\]`.*--print-units base"
        ):
            call(report)


@pytest.mark.e2e
def test_truncated_report_is_refused(ncu_report, tmp_path):
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(shared(VECADD).read_bytes()[:20000])  # ends inside the result block
    with pytest.raises(InputError, match="truncated or damaged"):
        parsers.read(cut)
    magic_only = tmp_path / "magic.ncu-rep"
    magic_only.write_bytes(b"NVR\x00")
    with pytest.raises(InputError, match="truncated or damaged"):
        parsers.read(magic_only)


@pytest.mark.e2e
def test_report_without_results_is_refused(ncu_report, tmp_path):
    # The session block and the source block end at byte 8888; the result block follows them.
    head = tmp_path / "no-results.ncu-rep"
    head.write_bytes(shared(VECADD).read_bytes()[:8888])
    assert ncu_rep.result_process_ids(head) == []
    with pytest.raises(InputError, match="holds no profiled kernels"):
        parsers.read(head)


@pytest.mark.e2e
def test_too_old_ncu_report_is_refused_not_crashed(ncu_report, monkeypatch):
    # ncu-report 2025.3.1 dies with SIGSEGV in IMetric.unit() once pandas is imported
    monkeypatch.setattr(ncu_rep.importlib.metadata, "version", lambda name: "2025.3.1")
    with pytest.raises(
        UnsupportedFormatError, match=r"ncu-report 2025\.3\.1 is too old.*ncu-report>=2026\.2"
    ):
        parsers.read(shared(VECADD))


@pytest.mark.e2e  # a subprocess
def test_a_report_that_crashes_the_library_is_one_unreadable_input(tmp_path, monkeypatch):
    """NVIDIA's library aborted the process on a fuzzed copy of a real report (2026-12-01,
    ROOFLINT_FUZZ=long): the report is read in a forked child, whose death is an InputError."""
    import os

    if "fork" not in ncu_rep.multiprocessing.get_all_start_methods():
        pytest.skip("no fork here: the report is read in this process")
    monkeypatch.setattr(ncu_rep, "_load", lambda path, source: os.abort())
    report = tmp_path / "damaged.ncu-rep"
    report.write_bytes(b"NVR\x00" + bytes(64))
    with pytest.raises(InputError, match="ncu_report crashed reading the report") as err:
        ncu_rep.read(report)
    assert str(err.value).startswith(f"{report}: ") and "\n" not in str(err.value)


def test_an_error_in_the_child_arrives_whole(tmp_path, monkeypatch):
    def refuse(path, source):
        raise InputError("report is truncated or damaged", path=source, line=7)

    monkeypatch.setattr(ncu_rep, "_load", refuse)
    report = tmp_path / "cut.ncu-rep"
    report.write_bytes(b"NVR\x00")
    with pytest.raises(InputError) as err:
        ncu_rep.read(report)
    assert (err.value.problem, err.value.path, err.value.line) == (
        "report is truncated or damaged",
        str(report),
        7,
    )


GEMM_REP = FIXTURES / "ncu" / "h200-tensor-ops" / "gemm-bf16.ncu-rep"
# One byte of its one result block changed (offset 37,494: 0xc9 -> 0x39, found by the fuzzer's
# byte flips): ncu_report 2026.2 logs through absl on stderr ("WARNING: All log messages before
# absl::InitializeLog() ...", "E0000 ... Can't parse message of type
# NV.Profiler.Messages.ProfileResult ...") and loads the result empty, which was read as one
# launch with no name and no counters.
DAMAGED_AT, DAMAGED_TO = 37_494, 0x39


def _damaged(tmp_path, how: str):
    if how == "cut":  # a truncated copy of a real report (ends inside the result block)
        data = shared(VECADD).read_bytes()[:20000]
    else:
        data = bytearray(GEMM_REP.read_bytes())
        assert data[DAMAGED_AT] == 0xC9
        data[DAMAGED_AT] = DAMAGED_TO
    path = tmp_path / f"{how}.ncu-rep"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("how", "problem"),
    [
        ("cut", "report is truncated or damaged (it ends inside a block); copy or save it again"),
        (
            "byte",
            "report is damaged (ncu_report could not read any of its results); copy or save it "
            "again",
        ),
    ],
)
def test_a_damaged_report_is_one_line_without_the_library_s_log(
    ncu_report, tmp_path, capfd, how, problem
):
    """What the user sees is rooflint's one line; the C++ library's log lines, written to file
    descriptor 2 (of the forked child that reads the report), are not shown."""
    from click.testing import CliRunner

    from rooflint.cli import main

    path = _damaged(tmp_path, how)
    capfd.readouterr()
    res = CliRunner().invoke(main, ["report", str(path), "-q"])
    library = capfd.readouterr()
    assert res.exit_code == 2
    assert res.stderr == f"rooflint: error: {path}: {problem}\n"
    assert library.err == "" and library.out == ""
