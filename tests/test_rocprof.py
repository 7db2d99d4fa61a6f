"""The AMD reader on real rocprof/rocprofv3/rocprof-compute exports, against hand-worked answers."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.parsers import rocprof
from rooflint.parsers.sniff import head_text
from tests import helpers

SHARED = helpers.SHARED / "rocprof"
LOCAL = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
MIB = 2**20
VECCOPY_BYTES = 16 * MIB  # vecCopy of 1,048,576 doubles: 8 MiB read + 8 MiB written


def shared(name: str) -> Path:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"shared fixture {name} not available")
    return path


def local(name: str) -> Path:
    return LOCAL / name


def read(path: Path, **options):
    profile = rocprof.read(path, **options)
    schema.validate(profile.launches)
    return profile


def missing(launches, row: int) -> dict[str, str]:
    return schema.missing_map(launches["missing"].iloc[row])


# --- every shared file: read into a valid table, or refused with a clear message -------------

REFUSED = {
    "omniperf2_mi300x_rocm620_sysinfo.csv": "rocprof-compute sysinfo file",
    "rocprofcompute31_mi350_sysinfo.csv": "rocprof-compute sysinfo file",
    "v1_mi200_rocm513_omniperf1_sysinfo.csv": "rocprof-compute sysinfo file",
    "v3_rocm621_mi300a_agent_info.csv": "rocprofv3 agent_info file",
    "v3_rocm633_rx7900xtx_agent_info.csv": "rocprofv3 agent_info file",
    "v1_mi250_rocm571_results.stats.csv": "pass the results.csv",
    "v3_rocm621_mi300a_kernel_stats.csv": "pass the *_kernel_trace.csv",
    "v1_mi200_rocm513_multipass_input.txt": "not a rocprof table",
}
LAUNCHES = {
    "omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv": 3,
    "omniperf2_mi200_roofline.csv": 0,
    "omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv": 6,
    "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv": 3,
    "rocprofcompute31_mi350_rocprofv3_pmc_perf.csv": 3,
    "rocprofcompute32_mi300x_rocm700_rocpd_pmc_perf_long.csv": 3,
    "v1_mi100_rocm42_single_pass_results.csv": 167,
    "v1_mi200_rocm513_multipass_results.csv": 167,
    "v1_mi250_rocm571_counters_basenames_no_timestamps.csv": 1004,
    "v1_mi250_rocm571_results.db": 1004,
    "v1_mi250_rocm571_stats_mode_results.csv": 1004,
    "v3_docs_2024_counter_collection.csv": 7,
    "v3_docs_2025_counter_collection.csv": 4,
    "v3_docs_2025_kernel_trace.csv": 9,
    "v3_rocm621_mi300a_kernel_trace_head.csv": 9,
    "v3_rocm711_mi300a_rocpd2csv_kernel_trace_head.csv": 9,
    "v3_rocm7x_mi300a_counter_collection_head.csv": 8,
}


# Shared rocprof files that are not rocprof CSV/SQLite output: another reader's
# (rocprofv3 JSON: parsers/rocprofv3_json.py, tests/test_rocprofv3_json.py).
OTHER_FORMATS = {"v3_mi350x_rocm_json_results.json.gz": "rocprofv3 --output-format json"}


@pytest.mark.e2e
def test_every_shared_file_is_known_here():
    if not SHARED.exists():
        pytest.skip("shared fixtures not available")
    known = {**REFUSED, **LAUNCHES, **OTHER_FORMATS}
    assert sorted(p.name for p in SHARED.iterdir()) == sorted(known)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(LAUNCHES))
def test_shared_file_reads_into_a_valid_table(name):
    path = shared(name)
    assert rocprof.sniff(path, head_text(path))
    profile = read(path)
    launches = profile.launches
    assert len(launches) == LAUNCHES[name]
    assert list(launches.columns) == schema.COLUMNS + schema.CODES
    assert (launches["source"] == str(path)).all()
    assert launches["launch_id"].is_unique
    assert not launches["kernel"].str.contains(r"\.kd\b|\[clone", regex=True).any()


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_shared_file_without_launches_is_refused(name):
    path = shared(name)
    with pytest.raises(InputError) as err:
        rocprof.read(path)
    assert REFUSED[name] in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.e2e
def test_local_copies_are_byte_exact():
    if not SHARED.exists():
        pytest.skip("shared fixtures not available")
    for path in LOCAL.glob("*.csv"):
        if not (SHARED / path.name).exists():
            continue  # an excerpt: tests/test_fixtures.py checks it against its source
        assert path.read_bytes() == (SHARED / path.name).read_bytes(), path.name


# --- known answers: HBM bytes of vecCopy --------------------------------------------------------


def test_mi100_veccopy_bytes_from_tcc_ea_counters_and_no_flops():
    launches = read(local("omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv")).launches
    # Dispatch 0: TCC_EA_RDREQ_sum = 131,407, TCC_EA_RDREQ_32B_sum = 0,
    # TCC_EA_WRREQ_sum = TCC_EA_WRREQ_64B_sum = 131,072.
    # read = 32*0 + 64*(131,407 - 0) = 8,410,048; write = 64*131,072 + 32*0 = 8,388,608
    # total 16,798,656 = 16 MiB + 0.13 %.
    assert launches["bytes_dram"].iloc[0] == 16_798_656
    assert launches["bytes_dram"].iloc[0] == pytest.approx(VECCOPY_BYTES, rel=0.005)
    # Dispatches 1 and 2 re-write the same 8 MiB while much of it is still dirty in the 8 MB
    # L2: only 86,694 and 86,461 64 B write requests reach memory. That is what the counters
    # say, so it is what we report: 64*(131,403 + 86,694) = 13,958,208.
    assert launches["bytes_dram"].iloc[1] == 13_958_208
    # MI100 has no typed FLOP counters: ops NA, with the reason, never 0.
    assert launches[schema.OPS].isna().all().all()
    assert missing(launches, 0)["ops"] == "gfx908 has no typed FLOP counters"
    assert (launches["arch"] == "gfx908").all()
    # Duration: End_Timestamp - Start_Timestamp = 24,480 ns.
    assert launches["duration_s"].iloc[0] == pytest.approx(24_480e-9)


@pytest.mark.e2e
def test_mi100_single_pass_has_no_memory_or_flop_counters():
    launches = read(shared("v1_mi100_rocm42_single_pass_results.csv")).launches
    assert launches["bytes_dram"].isna().all()
    assert launches[schema.OPS].isna().all().all()
    why = missing(launches, 0)
    assert why["ops"].startswith("no FLOP counters in this file")
    assert why["bytes_dram"].startswith("no HBM read counters")
    # DispatchNs/BeginNs/EndNs present: row 0 EndNs - BeginNs = 323,518 ns.
    assert launches["duration_s"].iloc[0] == pytest.approx(323_518e-9)


def test_mi300x_rocprofv2_veccopy_bytes():
    launches = read(local("omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv")).launches
    # Dispatch 0: TCC_BUBBLE_sum = 65,536 (128 B reads), TCC_EA0_RDREQ_sum = 65,786,
    # TCC_EA0_RDREQ_32B_sum = 0, TCC_EA0_WRREQ_sum = TCC_EA0_WRREQ_64B_sum = 131,072.
    # read = 128*65,536 + 32*0 + 64*(65,786 - 65,536 - 0) = 8,388,608 + 16,000 = 8,404,608
    # write = 64*131,072 = 8,388,608; total 16,793,216 = 16 MiB + 0.095 %.
    assert launches["bytes_dram"].iloc[0] == 16_793_216
    assert np.allclose(launches["bytes_dram"], VECCOPY_BYTES, rtol=0.005)
    assert (launches["arch"] == "gfx942").all()
    # vecCopy does no floating-point math: 0 FLOPs, measured (not missing).
    assert schema.flops(launches).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.e2e
def test_mi300x_rocpd_long_veccopy_bytes_and_median_duration():
    profile = read(shared("rocprofcompute32_mi300x_rocm700_rocpd_pmc_perf_long.csv"))
    launches = profile.launches
    assert launches["launch_id"].tolist() == [1, 2, 3]
    # Dispatch 1: TCC_BUBBLE_sum = 65,536, TCC_EA0_RDREQ_sum = 65,757, RDREQ_32B = 0,
    # WRREQ = WRREQ_64B = 131,072. read = 8,388,608 + 64*221 = 8,402,752; + 8,388,608 written.
    assert launches["bytes_dram"].iloc[0] == 16_791_360
    assert np.allclose(launches["bytes_dram"], VECCOPY_BYTES, rtol=0.005)
    # Dispatch 1 was timed in 12 passes: 6690 7251 7291 7411 8052 8052 | 8532 8533 8613 8653
    # 8853 9574 ns; the median is (8052 + 8532) / 2 = 8292 ns.
    assert launches["duration_s"].iloc[0] == pytest.approx(8292e-9)
    assert any("median of its passes" in n for n in profile.notes)


def test_mi350_without_gfx950_counters_falls_back_and_says_reads_are_low():
    launches = read(local("rocprofcompute31_mi350_rocprofv3_pmc_perf.csv")).launches
    assert (launches["arch"] == "gfx950").all()
    # No TCC_EA0_RDREQ_DRAM_32B / RDREQ_64B / RDREQ_128B in this file, and TCC_BUBBLE_sum = 0
    # on gfx950. MI300 formula: read = 128*0 + 32*0 + 64*65,640 = 4,200,960 (half of 8 MiB),
    # write = 64*131,072 = 8,388,608; total 12,589,568.
    assert launches["bytes_dram"].iloc[0] == 12_589_568
    assert launches["bytes_dram"].iloc[0] < 0.8 * VECCOPY_BYTES
    assert "MI300 HBM formula on gfx950: reads ~2× low" in launches["notes"].iloc[0]


# --- known answers: FLOPs and durations ---------------------------------------------------------


def test_mi300a_openmp_flops():
    launches = read(local("omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv")).launches
    kernels = launches["kernel"].tolist()
    assert kernels[0] == "__omp_offloading_32_6b6b__QQmain_l18"  # ".kd" stripped
    # l18: SQ_INSTS_VALU_MUL_F32 = 3,648 and TRANS_F32 = 3,648 wave instructions:
    # 64*(3,648 + 3,648) = 466,944 FLOP = 2 per work-item of the 233,472-item grid.
    assert launches["ops_vector_fp32"].iloc[0] == 466_944
    assert schema.flops(launches).iloc[0] == 466_944
    assert launches["grid"].iloc[0] == "233472"
    # l41: F64 ADD 12,582,912, MUL 2,097,152, FMA 12,582,912, TRANS 2,097,152:
    # 64*(12,582,912 + 2,097,152 + 2,097,152) + 128*12,582,912 = 2,684,354,560, plus the
    # same 466,944 FP32 ops: 2,684,821,504 FLOP.
    assert launches["ops_vector_fp64"].iloc[2] == 2_684_354_560
    assert schema.flops(launches).iloc[2] == 2_684_821_504
    assert "packed FP16/FP32" in launches["notes"].iloc[2]


def test_mi200_multipass_fp64_benchmark_dispatch():
    launches = read(local("v1_mi200_rocm513_multipass_results_fp64_benchmark.csv")).launches
    row = launches.index[
        launches["kernel"] == "void benchmark_func<double, 256, 8u, 512u>(double, double*)"
    ]
    assert len(row) == 1
    hit = launches.loc[row[0]]
    # SQ_INSTS_VALU_FMA_F64 = 268,697,600 wave FMAs, every other F64 counter 0:
    # 128 * 268,697,600 = 34,393,292,800 FLOP (34.39 GFLOP).
    assert hit["ops_vector_fp64"] == 34_393_292_800
    # EndNs - BeginNs = 16,706,329,658,106 - 16,706,327,942,595 = 1,715,511 ns.
    assert hit["duration_s"] == pytest.approx(1.715511e-3)
    assert hit["launch_id"] == 164 and hit["process_id"] == 170055
    assert hit["arch"] == "gfx90a"


def test_mi200_roofline_csv_gives_measured_ceilings():
    profile = read(local("omniperf2_mi200_roofline.csv"))
    assert len(profile.launches) == 0
    ceilings = profile.measured_ceilings
    # FP64Flops = 20,272.682 GFLOP/s; HBMBw = 1,388.7948 GB/s; MFMABF16Flops = 170,487.92.
    assert ceilings["vector_fp64"] == pytest.approx(20_272.682e9)
    assert ceilings["dram"] == pytest.approx(1_388.7948e9)
    assert ceilings["matrix_bf16"] == pytest.approx(170_487.92e9)
    assert ceilings["matrix_int8"] == pytest.approx(166_413.58e9)
    assert set(ceilings) == {
        "dram",
        "l2",
        "l1",
        "lds",
        "vector_fp32",
        "vector_fp64",
        "matrix_bf16",
        "matrix_fp16",
        "matrix_fp32",
        "matrix_fp64",
        "matrix_int8",
    }
    assert ceilings["matrix_fp32"] == pytest.approx(41_438.844e9)  # MFMAF32Flops
    assert profile.measured_source.startswith("measured: rocprof-compute roofline.csv (")


def test_results_db_reads_like_its_csv():
    launches = read(local("v1_mi250_rocm571_results_head.db")).launches
    # KERN row 0: KernelName '"test_function_kernel"' (quotes stored), DurationNs 1,087,688,
    # EndNs - BeginNs = 2,001,401,021,036,510 - 2,001,401,019,948,822 = 1,087,688 ns.
    assert launches["kernel"].iloc[0] == "test_function_kernel"
    assert launches["duration_s"].iloc[0] == pytest.approx(1_087_688e-9)
    assert launches["kernel"].iloc[2] == "__amd_rocclr_fillBufferAligned"
    # The excerpt keeps KERN rows 0-2; DurationNs of rows 1 and 2: 2,647,539 and 5,441 ns.
    assert launches["duration_s"].tolist() == pytest.approx([1_087_688e-9, 2_647_539e-9, 5_441e-9])


def test_v1_stats_mode_results_strip_clone_suffix():
    launches = read(local("v1_mi250_rocm571_stats_mode_results_head.csv")).launches
    assert launches["kernel"].iloc[0] == (
        "void test_function_kernel<double>(double*, int, int, int, double, double, double)"
    )
    # DurationNs 1,130,883 equals EndNs - BeginNs.
    assert launches["duration_s"].iloc[0] == pytest.approx(1_130_883e-9)
    assert launches["grid"].iloc[0] == "134217728" and launches["block"].iloc[0] == "256"


def test_v1_counters_without_timestamps_use_fetch_and_write_size():
    launches = read(local("v1_mi250_rocm571_counters_basenames_no_timestamps_head.csv")).launches
    # Row 0: FETCH_SIZE 6.8125 KiB, WRITE_SIZE 1,044,480 KiB -> (6.8125 + 1,044,480) * 1024.
    assert launches["bytes_dram"].iloc[0] == (6.8125 + 1_044_480) * 1024
    assert launches["duration_s"].isna().all()
    assert "without --timestamp on" in missing(launches, 0)["duration_s"]
    # TCP_TCC_READ_REQ_sum 0 + TCP_TCC_WRITE_REQ_sum 16,777,216 (no atomics collected): x 64 B.
    assert launches["bytes_l2"].iloc[0] == 64 * 16_777_216
    # TCP_TOTAL_CACHE_ACCESSES_sum 33,554,432 x 64 B.
    assert launches["bytes_l1"].iloc[0] == 64 * 33_554_432


# --- rocprofv3 CSV ------------------------------------------------------------------------------


def test_v3_2025_counter_collection_uses_its_own_timestamps():
    launches = read(local("v3_docs_2025_counter_collection.csv")).launches
    # Dispatch 1: 3,200,098,838,483,232 - 3,200,098,838,431,081 = 52,151 ns (its own run; the
    # kernel_trace.csv of the docs is another run and must not replace it).
    assert launches["duration_s"].iloc[0] == pytest.approx(52_151e-9)
    assert launches["kernel"].iloc[0].startswith("void addition_kernel<float>")
    assert launches["grid"].iloc[0] == "1048576" and launches["block"].iloc[0] == "64"


def test_v3_2024_counter_collection_without_timestamps_or_trace():
    launches = read(local("v3_docs_2024_counter_collection.csv")).launches
    assert launches["launch_id"].tolist() == [1, 2, 5, 9, 13, 3, 6]
    assert launches["process_id"].tolist() == [19396] * 7
    assert launches["duration_s"].isna().all()
    assert "no *_kernel_trace.csv" in missing(launches, 0)["duration_s"]


def test_v3_counter_collection_joined_with_its_kernel_trace(tmp_path):
    # A same-run pair, rebuilt from the 2025 docs counter file: its timestamps move to a
    # kernel trace (rocprofv3's trace columns), the counter file keeps none. Durations must
    # then come from the trace, matched on dispatch id, agent and kernel name.
    import pandas as pd

    counters = pd.read_csv(local("v3_docs_2025_counter_collection.csv"))
    counters.drop(columns=["Start_Timestamp", "End_Timestamp"]).to_csv(
        tmp_path / "run_counter_collection.csv", index=False
    )
    trace = counters[
        [
            "Agent_Id",
            "Queue_Id",
            "Thread_Id",
            "Dispatch_Id",
            "Kernel_Id",
            "Kernel_Name",
            "Correlation_Id",
        ]
    ].assign(
        Kind="KERNEL_DISPATCH",
        Start_Timestamp=counters["Start_Timestamp"],
        End_Timestamp=counters["End_Timestamp"],
    )
    trace.to_csv(tmp_path / "run_kernel_trace.csv", index=False)
    profile = read(tmp_path / "run_counter_collection.csv")
    # 3,200,098,838,483,232 - ...431,081 = 52,151 ns; ...638,794 - ...589,014 = 49,780 ns;
    # ...793,025 - ...746,207 = 46,818 ns; ...927,550 - ...879,399 = 48,151 ns.
    assert profile.launches["duration_s"].tolist() == pytest.approx(
        [52_151e-9, 49_780e-9, 46_818e-9, 48_151e-9]
    )
    assert any("joined from run_kernel_trace.csv" in n for n in profile.notes)


def test_v3_docs_trace_is_another_run_and_lends_no_durations(tmp_path):
    # The docs' kernel_trace.csv ran on "Agent 4" (pid 834304); its counter_collection.csv on
    # "Agent 1" (pid 15606). Same dispatch ids and kernels, different runs: no join.
    import pandas as pd

    counters = pd.read_csv(local("v3_docs_2025_counter_collection.csv"))
    counters.drop(columns=["Start_Timestamp", "End_Timestamp"]).to_csv(
        tmp_path / "docs_counter_collection.csv", index=False
    )
    shutil.copy(local("v3_docs_2025_kernel_trace.csv"), tmp_path / "docs_kernel_trace.csv")
    launches = read(tmp_path / "docs_counter_collection.csv").launches
    assert launches["duration_s"].isna().all()
    assert (
        "no dispatch with the same kernel in docs_kernel_trace.csv"
        in missing(launches, 0)["duration_s"]
    )


def test_v3_scientific_notation_and_agent_names():
    launches = read(local("v3_rocm7x_mi300a_counter_collection_head.csv")).launches
    assert launches["kernel"].tolist()[:3] == [
        "init_gaussian",
        "apply_reflect_bc",
        "apply_reflect_bc",
    ]
    # Dispatch 2: 1,569,078,135,503,821 - 1,569,078,135,498,332 = 5,489 ns.
    assert launches["duration_s"].iloc[1] == pytest.approx(5_489e-9)


def test_kernel_trace_alone_has_durations_and_no_counters():
    launches = read(local("v3_rocm621_mi300a_kernel_trace_head.csv")).launches
    # No Dispatch_Id column in ROCm 6.2.1 traces: Correlation_Id is the launch id.
    assert launches["launch_id"].tolist() == list(range(1, 10))
    # 5,329,321,973,322,123 - 5,329,321,973,213,203 = 108,920 ns.
    assert launches["duration_s"].iloc[0] == pytest.approx(108_920e-9)
    assert (
        launches["grid"].iloc[0] == "(233472, 1, 1)" and launches["block"].iloc[0] == "(256, 1, 1)"
    )
    assert launches[schema.OPS + schema.BYTES].isna().all().all()
    assert missing(launches, 0)["ops"].startswith("kernel trace only")


def test_rocpd2csv_trace_with_guid():
    launches = read(local("v3_rocm711_mi300a_rocpd2csv_kernel_trace_head.csv")).launches
    assert launches["launch_id"].tolist() == list(range(1, 10))
    # Dispatch 3: workgroup 32x1x1; 1,678,314,009,790,891 - ...761,051 = 29,840 ns.
    assert launches["block"].iloc[2] == "(32, 1, 1)"
    assert launches["duration_s"].iloc[2] == pytest.approx(29_840e-9)


# --- folders ------------------------------------------------------------------------------------


def test_rocprofv3_folder_uses_agent_info(tmp_path):
    host = tmp_path / "node01"
    host.mkdir()
    shutil.copy(local("v3_rocm621_mi300a_agent_info.csv"), host / "4242_agent_info.csv")
    shutil.copy(local("v3_rocm621_mi300a_kernel_trace_head.csv"), host / "4242_kernel_trace.csv")
    shutil.copy(local("v3_rocm621_mi300a_kernel_stats.csv"), host / "4242_kernel_stats.csv")
    assert rocprof.sniff_folder(tmp_path)
    profile = read(tmp_path)
    launches = profile.launches
    assert len(launches) == 9
    # Agent_Id 4 is the GPU with Node_Id 4: gfx942, "AMD Instinct MI300A", 228 CUs.
    assert (launches["arch"] == "gfx942").all()
    assert (launches["device_name"] == "AMD Instinct MI300A").all()
    assert profile.device_hints == {
        "product": "AMD Instinct MI300A",
        "gfx": "gfx942",
        "cu_count": 228,
    }
    assert (launches["source"] == str(host / "4242_kernel_trace.csv")).all()


def test_mi350_workload_folder_flags_unusable_sysinfo(tmp_path):
    shutil.copy(local("rocprofcompute31_mi350_rocprofv3_pmc_perf.csv"), tmp_path / "pmc_perf.csv")
    shutil.copy(local("rocprofcompute31_mi350_sysinfo.csv"), tmp_path / "sysinfo.csv")
    assert rocprof.sniff_folder(tmp_path)
    profile = read(tmp_path)
    assert profile.device_hints == {"product": "MI350", "gfx": "gfx950", "cu_count": 128}
    note = next(n for n in profile.notes if "unusable" in n)
    assert "max_sclk = 0" in note and "ignored" in note
    assert (profile.launches["device_name"] == "MI350").all()


def test_mi200_workload_folder_with_sysinfo(tmp_path):
    shutil.copy(
        local("v1_mi200_rocm513_multipass_results_fp64_benchmark.csv"), tmp_path / "pmc_perf.csv"
    )
    shutil.copy(local("v1_mi200_rocm513_omniperf1_sysinfo.csv"), tmp_path / "sysinfo.csv")
    profile = read(tmp_path)
    assert profile.device_hints == {"product": "mi200", "gfx": "gfx90a", "cu_count": 104}
    assert not any("inferred" in n for n in profile.notes)  # sysinfo named the arch
    assert len(profile.launches) == 1  # the excerpt keeps 1 of the 167 dispatches


def test_pmc_perf_picks_up_sibling_sysinfo_and_roofline(tmp_path):
    shutil.copy(local("omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv"), tmp_path / "pmc_perf.csv")
    shutil.copy(local("omniperf2_mi300x_rocm620_sysinfo.csv"), tmp_path / "sysinfo.csv")
    shutil.copy(local("omniperf2_mi200_roofline.csv"), tmp_path / "roofline.csv")
    profile = read(tmp_path / "pmc_perf.csv")
    assert profile.device_hints == {"product": "MI300X_A1", "gfx": "gfx942", "cu_count": 304}
    assert profile.measured_ceilings["vector_fp64"] == pytest.approx(20_272.682e9)
    assert str(tmp_path / "roofline.csv") in profile.measured_source


def test_folder_without_dispatches_is_refused(tmp_path):
    shutil.copy(local("rocprofcompute31_mi350_sysinfo.csv"), tmp_path / "sysinfo.csv")
    with pytest.raises(InputError, match="folder holds no kernel dispatches"):
        rocprof.read(tmp_path)
