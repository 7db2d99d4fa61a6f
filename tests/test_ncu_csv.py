"""The Nsight Compute CSV reader against real exports, with expectations worked out by hand.

Every expected number below is typed from the fixture's own cells (quoted in the comments) and
combined with the formula rooflint documents, so a change in parsing or in the formulas fails here.
"""

from __future__ import annotations

import pytest

from rooflint import parsers
from rooflint.core import schema
from rooflint.core.errors import InputError
from tests.helpers import FIXTURES, shared

GEMM_FLOPS = 2 * 20480**3  # the A100/V100 GEMM fixtures multiply 20480 x 20480 matrices


def load(path):
    frame = parsers.read(path).launches
    schema.validate(frame)
    return frame


# --- raw page (one row per launch, units in row 2) ------------------------------------------


def test_raw_base_units_rtx2080ti_sgemm():
    t = load(FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv")
    assert len(t) == 1
    row = t.iloc[0]
    assert row["kernel"] == "volta_sgemm_32x128_nn"
    assert row["grid"] == "(2, 25, 1)" and row["block"] == "(256, 1, 1)"
    assert row["device_name"] == "NVIDIA GeForce RTX 2080 Ti" and row["arch"] == "7.5"
    # gpu__time_duration.sum "10720" ns
    assert row["duration_s"] == pytest.approx(10720e-9, rel=1e-12)
    # dram__bytes_read.sum "819456" + dram__bytes_write.sum "0"; cross-check: 25608 sectors x 32 B
    assert row["bytes_dram"] == 819456 == 25608 * 32
    # FP32 = (fadd + fmul + 2 ffma) per-cycle rates x elapsed cycles;
    # rates "0", "14.63", "936.30" inst/cycle; cycles = 1305874122.04 Hz x 10720 ns
    cycles = 1305874122.04 * 10720e-9
    assert row["ops_vector_fp32"] == pytest.approx((0 + 14.63 + 2 * 936.30) * cycles, rel=1e-9)
    assert row["ops_vector_fp64"] == 0
    # the run's own peaks: ffma 4352 inst/cycle x 2 x 1305874122.04 Hz;
    # DRAM 96 B/cycle x 6638805970.15 Hz
    assert row["peak_vector_fp32"] == pytest.approx(4352 * 2 * 1305874122.04, rel=1e-12)
    assert row["peak_vector_fp32"] == pytest.approx(11.37e12, rel=1e-3)
    assert row["peak_bytes_dram"] == pytest.approx(96 * 6638805970.15, rel=1e-12)
    assert row["peak_bytes_dram"] == pytest.approx(637e9, rel=1e-3)
    # a full-set export of a Turing GPU has no tensor-op counters: listed, not hidden
    assert list(schema.missing_map(row["missing"])) == ["ops_matrix"]


@pytest.mark.e2e
def test_raw_auto_units_match_base_units_within_printed_rounding():
    base = load(shared("ncu/reexport-ncu2024.2/rtx2080ti-sgemm-raw-base.csv")).iloc[0]
    auto = load(shared("ncu/reexport-ncu2024.2/rtx2080ti-sgemm-raw.csv")).iloc[0]
    # auto: "10.720000" us, "819.456000" Kbyte, "1.305874" Ghz (6 decimals), rates "936.297417"
    assert auto["duration_s"] == pytest.approx(base["duration_s"], rel=1e-9)
    assert auto["bytes_dram"] == pytest.approx(base["bytes_dram"], rel=1e-9)
    assert auto["sm_clock_hz"] == pytest.approx(base["sm_clock_hz"], rel=1e-6)
    # base prints the rate as 936.30 (0.01 rounding, 1e-5 relative); auto as 936.297417
    assert auto["ops_vector_fp32"] == pytest.approx(base["ops_vector_fp32"], rel=2e-5)


def test_raw_b200_ncu2025_with_prof_lines():
    t = load(FIXTURES / "ncu" / "roofline-analysis-b200-ncu2025.x-raw.csv")
    assert len(t) == 16
    assert set(t["device_name"]) == {"NVIDIA B200"} and set(t["arch"]) == {"10.0"}
    assert t["kernel"].iloc[0].startswith("void cudnn::lean_reduction_kernel<0, 0, 0>")
    assert t["duration_s"].iloc[0] == pytest.approx(7904e-9)  # gpu__time_duration.sum "7904" ns
    # this export has no DRAM byte or FLOP counters: NA (never 0), with the reason
    assert t["bytes_dram"].isna().all() and t[schema.OPS].isna().all().all()
    assert "bytes_dram: no DRAM traffic metric" in t["missing"].iloc[0]


# --- the same report, exported every way ----------------------------------------------------

NVTX_DURATIONS_NS = [84480, 249216, 88512]  # raw base export, gpu__time_duration.sum


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["nvtx-raw-base.csv", "nvtx-raw-base-locale-en_US.csv"])
def test_nvtx_raw_base_exports_are_exact(name):
    t = load(shared(f"ncu/reexport-ncu2024.2/{name}"))
    assert list(t["duration_s"]) == pytest.approx(
        [ns * 1e-9 for ns in NVTX_DURATIONS_NS], rel=1e-12
    )
    # dram__cycles_elapsed.avg.per_second is "6684848484.85" (C) / "6,684,848,484.85" (en_US)
    assert list(t["kernel"]) == [
        "init_data_kernel(int, double *)",
        "daxpy_kernel(int, double, double *, double *)",
        "check_results_kernel(int, double, double *)",
    ]
    assert list(t["range"]) == ["run_test/init_data", "run_test/daxpy", "run_test/check_results"]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "name, rounding",
    [
        ("nvtx-raw.csv", 1e-6),  # "84.480000" us: 6 decimals
        ("nvtx-raw-auto-locale-en_US.csv", 1e-6),
        ("nvtx-raw-instances.csv", 1e-6),  # values with instance lists
        ("nvtx-details.csv", 0.005e-6),  # "84.48" us: 2 decimals
        ("nvtx-details-base.csv", 0.5e-9),  # "84480" ns
        ("nvtx-details-locale-en_US.csv", 0.005e-6),
        ("nvtx-details-locale-de_DE.csv", 0.005e-6),  # "84,48" us
        ("nvtx-details-metricname-name.csv", 0.005e-6),
        ("nvtx-details-kernelbase-mangled.csv", 0.005e-6),
        ("nvtx-details-all.csv", 0.005e-6),
    ],
)
def test_nvtx_every_export_gives_the_same_durations(name, rounding):
    t = load(shared(f"ncu/reexport-ncu2024.2/{name}"))
    assert len(t) == 3
    for got, ns in zip(t["duration_s"], NVTX_DURATIONS_NS, strict=True):
        assert abs(got - ns * 1e-9) <= rounding + 1e-15
    assert list(t["range"]) == ["run_test/init_data", "run_test/daxpy", "run_test/check_results"]
    assert set(t["arch"]) == {"8.6"}


@pytest.mark.e2e
def test_de_DE_grouping_dot_is_thousands():
    # de_DE prints Elapsed Cycles as "124.056" (124056) and the SM clock "1,46" GHz style decimals
    de = load(shared("ncu/reexport-ncu2024.2/nvtx-details-locale-de_DE.csv"))
    en = load(shared("ncu/reexport-ncu2024.2/nvtx-details-locale-en_US.csv"))
    assert list(de["duration_s"]) == list(en["duration_s"])
    assert list(de["sm_clock_hz"]) == list(en["sm_clock_hz"])


@pytest.mark.e2e
def test_mangled_kernel_base_keeps_launches():
    t = load(shared("ncu/reexport-ncu2024.2/nvtx-details-kernelbase-mangled.csv"))
    assert t["kernel"].iloc[0].startswith("_Z")


def test_ambiguous_locale_needs_an_override(tmp_path):
    text = (
        '"ID","Process ID","Kernel Name","Block Size","Grid Size","Device","CC",'
        '"gpu__time_duration.sum"\n'
        '"","","","","","","","ns"\n'
        '"0","1","k","(1, 1, 1)","(1, 1, 1)","0","8.0","84,480"\n'
    )
    path = tmp_path / "ambiguous.csv"
    path.write_text(text)
    with pytest.raises(InputError, match="--locale"):
        parsers.read(path)
    assert parsers.read(path, locale="en_US").launches["duration_s"].iloc[0] == pytest.approx(
        84480e-9
    )
    assert parsers.read(path, locale="de_DE").launches["duration_s"].iloc[0] == pytest.approx(
        84.48e-9
    )


# --- details page, every ncu generation -----------------------------------------------------


def test_a100_gemm_tensor_flops_from_instruction_shapes():
    t = load(FIXTURES / "ncu" / "a100-gemm-details.csv")
    assert len(t) == 11 and set(t["arch"]) == {"8.0"}
    cutlass, cublas = t.iloc[4], t.iloc[10]
    # CUTLASS arch::Mma<GemmShape<16, 8, 8>> = HMMA.1688: 2*16*8*8 = 2048 ops per instruction;
    # sm__inst_executed_pipe_tensor.sum "8,388,608,000"
    assert cutlass["ops_matrix_fp16"] == 8_388_608_000 * 2048 == GEMM_FLOPS
    # cuBLAS ampere_s16816gemm = HMMA.16816: 4096 ops; "4,194,304,000" instructions
    assert cublas["ops_matrix_fp16"] == 4_194_304_000 * 4096 == GEMM_FLOPS
    assert "sm__inst_executed_pipe_tensor x 2048" in cutlass["notes"]
    # no gpu__time_duration: duration = sm__cycles_elapsed.avg / .per_second
    assert cublas["duration_s"] == pytest.approx(81_835_957.76 / 764_999_572.23, rel=1e-12)
    assert cublas["bytes_dram"] == 25_702_818_048  # dram__bytes.sum "25,702,818,048"
    assert cublas["bytes_l2"] == 250_820_640_576 and cublas["bytes_l1"] == 206_363_852_800
    # this export collected no vector FLOP counters: they are NA, tensor ops are known
    assert t["ops_vector_fp32"].isna().all()


@pytest.mark.e2e
def test_v100_gemm_tensor_flops_volta_hmma884():
    t = load(shared("ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv"))
    gemms = t[t["ops_matrix_fp16"] > 0]
    assert len(gemms) == 7  # six CUTLASS launches + one cutlass_70_tensorop_s884gemm
    # Volta has only HMMA.884: 2*8*8*4 = 512 ops; "33,554,432,000" instructions each
    assert (gemms["ops_matrix_fp16"] == 33_554_432_000 * 512).all()
    assert (abs(gemms["ops_matrix_fp16"] / GEMM_FLOPS - 1) < 0.005).all()
    # the epilogue: fmul "419,430,400" = 20480^2 (alpha x C, one per output); CUTLASS also has
    # fadd "2,126,643,200"; ffma "0"
    assert gemms["ops_vector_fp32"].iloc[-1] == 419_430_400 == 20480**2
    assert gemms["ops_vector_fp32"].iloc[0] == 2_126_643_200 + 419_430_400


@pytest.mark.e2e
def test_learningnote_smsp_variants_and_print_fp():
    t = load(shared("ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv"))
    gemm = t.iloc[2]
    assert gemm["kernel"].startswith("void gemm_v0<float>")
    # smsp__ ffma "34,359,738,368,000.00" (x2), fadd/fmul "0.00"; hfma "3,355,443,200.00" (x2)
    assert gemm["ops_vector_fp32"] == 2 * 34_359_738_368_000
    assert gemm["ops_vector_fp16"] == 2 * 3_355_443_200
    assert gemm["duration_s"] == pytest.approx(28_293_058_736.76 / 764_999_997.55, rel=1e-12)
    assert gemm["bytes_dram"] == 4_394_965_922_944


@pytest.mark.e2e
def test_actualparam_2021_ragged_rule_rows_and_en_US_grouping():
    t = load(shared("ncu/actualparam-a100-ncu2021.2-details-rules.csv"))
    assert len(t) == 10
    first = t.iloc[0]
    assert (
        first["bytes_dram"] == 384
    )  # dram__bytes.sum "384" in a 13-field row under a 15-field header
    # ffma "983,040" x 2 ; hadd "196,608"
    assert first["ops_vector_fp32"] == 2 * 983_040
    assert first["ops_vector_fp16"] == 196_608
    assert first["duration_s"] == pytest.approx(8_382.70 / 999_845_384.51, rel=1e-12)
    assert t["kernel"].str.len().max() > 1000  # multi-KB template names survive intact


@pytest.mark.e2e
def test_xplacer_ncu2019_kernel_time_column_nsecond_units():
    t = load(shared("ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv"))
    assert len(t) == 13
    first = t.iloc[0]
    assert first["kernel"] == "Kernel2(bool*,bool*,bool*,bool*,int)"
    assert first["duration_s"] == pytest.approx(3200e-9)  # "Duration","nsecond","3200"
    assert first["sm_clock_hz"] == pytest.approx(963_802_083.33)  # "SM Frequency","cycle/second"


@pytest.mark.e2e
def test_lassen_2019_dram_bytes_from_throughput_is_flagged():
    t = load(shared("ncu/xplacer-v100-lassen-ncu2019.x-details-stdout.csv"))
    # only "Memory Throughput" in byte/second is printed: bytes = rate x duration, said per launch
    assert t["bytes_dram"].notna().all()
    assert t["notes"].str.contains("DRAM bytes = DRAM throughput x duration").all()


# --- legacy nvprof and files that hold no profile -------------------------------------------


def test_nvprof_metrics_are_per_kernel_aggregates():
    profile = parsers.read(FIXTURES / "ncu" / "nvprof-k20c-metrics.csv")
    t = profile.launches
    kernel = "__kernel___forma_kernel__0__(float*, int, int, int, int, float*)"
    rows = t[t["kernel"] == kernel]
    assert len(rows) == 3  # "Invocations" 3
    assert (rows["ops_vector_fp32"] == 3_611_549_214).all()  # flop_count_sp Avg
    assert rows["duration_s"].isna().all()
    assert "no kernel time" in rows["missing"].iloc[0]
    assert set(t["device_name"]) == {"Tesla K20c"}


@pytest.mark.e2e
@pytest.mark.parametrize(
    "name, words",
    [
        ("roofline-analysis-b200-ncu2025.x-failed-run.csv", "ncu reported an error"),
        ("roofline-analysis-b200-ncu2025.x-prof-lines-only.csv", "profiled no kernel"),
        ("reexport-ncu2024.2/nvtx-details-nocsv.txt", "not CSV; export again adding --csv"),
        ("reexport-ncu2024.2/rtx2080ti-sgemm-details-all-nocsv.txt", "not CSV"),
        ("reexport-ncu2024.2/nvtx-summary-per-kernel.csv", "--print-summary page"),
        ("reexport-ncu2024.2/nvtx-summary-per-nvtx.csv", "--print-summary page"),
        ("reexport-ncu2024.2/rtx2080ti-sgemm-summary-per-kernel.csv", "--page raw"),
        ("reexport-ncu2024.2/nvtx-session.csv", "session page"),
    ],
)
def test_files_without_launches_are_refused_with_the_fix(name, words):
    path = shared(f"ncu/{name}")
    with pytest.raises(InputError) as err:
        parsers.read(path)
    message = str(err.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message


def test_details_metric_given_twice_for_a_launch_keeps_its_first_value(tmp_path):
    # fixtures/ncu/a100-gemm-details.csv (a real `ncu --csv > file` capture): launch 0's
    # dram__bytes.sum is "823,404,288" bytes. The same row again with another value, after the
    # launch's other rows, must not replace it (a pivot keeps each launch's first row).
    lines = (FIXTURES / "ncu" / "a100-gemm-details.csv").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"dram__bytes.sum"' in line)
    again = lines[first].replace('"823,404,288"', '"999"')
    last_of_launch0 = max(i for i, line in enumerate(lines) if line.startswith('"0",'))
    lines.insert(last_of_launch0 + 1, again)
    path = tmp_path / "twice.csv"
    path.write_text("\n".join(lines) + "\n")
    launches = parsers.read(path).launches
    plain = parsers.read(FIXTURES / "ncu" / "a100-gemm-details.csv").launches
    assert launches["bytes_dram"].iloc[0] == 823_404_288
    assert launches["bytes_dram"].tolist() == plain["bytes_dram"].tolist()
