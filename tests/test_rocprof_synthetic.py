"""The AMD reader on small hand-built inputs whose every expected number is worked out here."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rooflint.core import schema
from rooflint.core.errors import InputError
from rooflint.parsers import rocprof, rocprof_counters
from rooflint.parsers.rocprof_counters import Counters
from rooflint.parsers.sniff import head_text
from tests.helpers import make_rocpd

LOCAL = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
MIB = 2**20

V3_HEADER = (
    "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Id,"
    "Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
    "SGPR_Count,Counter_Name,Counter_Value,Start_Timestamp,End_Timestamp"
)


def v3_counter_file(
    path: Path,
    dispatches: dict[int, dict[str, float]],
    agent="Agent 1",
    kernel="vecCopy(double*, double*, double*, int, int)",
) -> Path:
    """A rocprofv3 (ROCm 6.4+) counter collection: one row per counter per dispatch."""
    lines = [V3_HEADER]
    for dispatch, counters in dispatches.items():
        start = 1_000_000 + dispatch * 100_000
        for name, value in counters.items():
            lines.append(
                f'{dispatch},{dispatch},"{agent}",1,77,77,1048576,3,"{kernel}",256,0,0,'
                f'8,0,16,"{name}",{value},{start},{start + 20_000}'
            )
    path.write_text("\n".join(lines) + "\n")
    return path


def read(path, **options):
    profile = rocprof.read(path, **options)
    schema.validate(profile.launches)
    return profile


def missing(launches, row=0):
    return schema.missing_map(launches["missing"].iloc[row])


# --- counters: instances read exactly once ------------------------------------------------------


def test_sum_column_wins_over_plain_and_instances():
    frame = pd.DataFrame(
        {"TCC_HIT[0]": [1.0], "TCC_HIT[1]": [2.0], "TCC_HIT": [30.0], "TCC_HIT_sum": [300.0]}
    )
    assert Counters(frame).get("TCC_HIT").tolist() == [300.0]


def test_plain_column_wins_over_instances():
    frame = pd.DataFrame({"TCC_HIT[0]": [1.0], "TCC_HIT[1]": [2.0], "TCC_HIT": [30.0]})
    assert Counters(frame).get("TCC_HIT").tolist() == [30.0]


def test_instances_are_summed_when_alone():
    frame = pd.DataFrame(
        {"TCC_HIT[0]": [1.0, np.nan], "TCC_HIT[1]": [2.0, np.nan], "TCC_HIT[10]": [4.0, np.nan]}
    )
    got = Counters(frame).get("TCC_HIT")
    assert got.iloc[0] == 7.0 and np.isnan(got.iloc[1])  # all instances NA -> NA, not 0


def test_every_counter_the_formulas_read_is_pivoted_from_long_tables():
    source = Path(rocprof_counters.__file__).read_text()
    literals = set(re.findall(r'"((?:SQ|TCC|TCP)_[A-Z0-9_]+|FETCH_SIZE|WRITE_SIZE)"', source))
    literals = {n for n in literals if not n.endswith("_")}  # prefixes of f-strings
    # The names the f-strings build:
    literals |= {
        f"SQ_INSTS_VALU_{k}_{p}"
        for k in rocprof_counters.VALU_KINDS
        for p in rocprof_counters.VALU_PRECISIONS
    }
    literals |= {f"SQ_INSTS_VALU_MFMA_MOPS_{k}" for k in [*rocprof_counters.MFMA_COLUMNS, "F32"]}
    literals |= {f"{p}{n}" for p in ("TCC_EA0_", "TCC_EA_") for n in ("WRREQ", "WRREQ_64B")}
    assert literals - rocprof_counters.USED == set()


# --- HBM bytes per architecture -----------------------------------------------------------------


def test_gfx950_dram_sector_counters_give_veccopy_bytes(tmp_path):
    # vecCopy of 8 MiB on MI350 with the gfx950 counters: 8 MiB = 262,144 sectors of 32 B.
    # Reads: 262,400 sectors (a little over: page-table and kernel-argument reads);
    # writes: 262,144 sectors, atomics 0.
    # bytes = 32 * (262,400 + 262,144 + 0) = 16,785,408 = 16 MiB + 0.049 %.
    path = v3_counter_file(
        tmp_path / "a_counter_collection.csv",
        {
            1: {
                "TCC_EA0_RDREQ_DRAM_32B_sum": 262_400,
                "TCC_EA0_WRREQ_WRITE_DRAM_32B_sum": 262_144,
                "TCC_EA0_WRREQ_ATOMIC_DRAM_32B_sum": 0,
                "TCC_EA0_RDREQ_sum": 65_600,
                "TCC_EA0_RDREQ_32B_sum": 0,
                "TCC_BUBBLE_sum": 0,
                "TCC_EA0_WRREQ_sum": 131_072,
                "TCC_EA0_WRREQ_64B_sum": 131_072,
            }
        },
    )
    launches = read(path).launches
    assert launches["arch"].iloc[0] == "gfx950"  # inferred from the *_DRAM_32B counters
    assert launches["bytes_dram"].iloc[0] == 16_785_408
    assert launches["bytes_dram"].iloc[0] == pytest.approx(16 * MIB, rel=0.01)
    assert "2× low" not in launches["notes"].iloc[0]


def test_gfx950_read_sizes_split_32_64_128(tmp_path):
    # read = 32*10 + 64*20 + 128*65,536 = 320 + 1,280 + 8,388,608 = 8,390,208
    # write = 64*131,072 + 32*(131,100 - 131,072) = 8,388,608 + 896 = 8,389,504
    path = v3_counter_file(
        tmp_path / "b_counter_collection.csv",
        {
            1: {
                "TCC_EA0_RDREQ_32B": 10,
                "TCC_EA0_RDREQ_64B": 20,
                "TCC_EA0_RDREQ_128B": 65_536,
                "TCC_EA0_RDREQ": 65_566,
                "TCC_EA0_WRREQ": 131_100,
                "TCC_EA0_WRREQ_64B": 131_072,
            }
        },
    )
    launches = read(path, arch="gfx950").launches
    assert launches["bytes_dram"].iloc[0] == 8_390_208 + 8_389_504


def test_mi300_formula_needs_tcc_bubble_on_gfx942(tmp_path):
    path = v3_counter_file(
        tmp_path / "c_counter_collection.csv",
        {
            1: {
                "TCC_EA0_RDREQ": 65_536,
                "TCC_EA0_RDREQ_32B": 0,
                "TCC_EA0_WRREQ": 1,
                "TCC_EA0_WRREQ_64B": 1,
            }
        },
    )
    launches = read(path).launches
    assert launches["arch"].iloc[0] == "gfx942"
    assert np.isnan(launches["bytes_dram"].iloc[0])
    assert missing(launches)["bytes_dram"].startswith("TCC_BUBBLE not collected")


def test_mi200_formula_and_negative_differences(tmp_path):
    # gfx90a: read = 32*RDREQ_32B + 64*(RDREQ - RDREQ_32B); write = 64*WRREQ_64B + 32*(WRREQ - 64B).
    # Dispatch 1: 32*100 + 64*900 + 64*50 + 32*10 = 3,200 + 57,600 + 3,200 + 320 = 64,320.
    # Dispatch 2: RDREQ_32B > RDREQ (passes disagree): the difference clips to 0:
    # 32*120 + 0 + 64*50 + 32*10 = 3,840 + 3,200 + 320 = 7,360, with a note.
    common = {"TCC_EA_WRREQ": 60, "TCC_EA_WRREQ_64B": 50, "SQ_INSTS_VALU_MFMA_MOPS_F16": 0}
    path = v3_counter_file(
        tmp_path / "d_counter_collection.csv",
        {
            1: {"TCC_EA_RDREQ": 1000, "TCC_EA_RDREQ_32B": 100, **common},
            2: {"TCC_EA_RDREQ": 100, "TCC_EA_RDREQ_32B": 120, **common},
        },
    )
    launches = read(path).launches
    assert launches["arch"].tolist() == ["gfx90a", "gfx90a"]
    assert launches["bytes_dram"].tolist() == [64_320, 7_360]
    assert "clipped to 0" in launches["notes"].iloc[1]
    assert "clipped" not in launches["notes"].iloc[0]


# --- operations ---------------------------------------------------------------------------------


def test_mfma_mops_per_precision_and_fp32_mfma_kept_apart(tmp_path):
    counters = {
        "SQ_INSTS_VALU_MFMA_MOPS_F16": 1,
        "SQ_INSTS_VALU_MFMA_MOPS_BF16": 2,
        "SQ_INSTS_VALU_MFMA_MOPS_F32": 3,
        "SQ_INSTS_VALU_MFMA_MOPS_F64": 4,
        "SQ_INSTS_VALU_MFMA_MOPS_F8": 5,
        "SQ_INSTS_VALU_MFMA_MOPS_F6F4": 6,
        "SQ_INSTS_VALU_MFMA_MOPS_I8": 7,
    }
    launches = read(v3_counter_file(tmp_path / "e_counter_collection.csv", {1: counters})).launches
    row = launches.iloc[0]
    # Each MOP is 512 operations.
    assert row["ops_matrix_fp16"] == 512 and row["ops_matrix_bf16"] == 1024
    assert row["ops_matrix_fp64"] == 2048 and row["ops_matrix_fp8"] == 2560
    assert row["ops_matrix_fp4"] == 3072 and row["ops_matrix_int8"] == 3584
    # FP32 MFMA (3 * 512 = 1,536 ops) is genuine FP32 matrix math, not TF32.
    assert row["ops_matrix_fp32"] == 1536
    assert np.isnan(row["ops_matrix_tf32"]) and np.isnan(row["ops_vector_fp32"])
    assert "FP6 and FP4" in row["notes"]
    # FLOPs exclude the integer ops: 512 * (1 + 2 + 3 + 4 + 5 + 6) = 10,752.
    assert schema.flops(launches).iloc[0] == 10_752


def test_valu_ops_need_all_four_counters_of_a_precision(tmp_path):
    counters = {
        f"SQ_INSTS_VALU_{k}_F32": v for k, v in {"ADD": 1, "MUL": 2, "FMA": 3, "TRANS": 4}.items()
    }
    counters |= {"SQ_INSTS_VALU_ADD_F64": 5, "SQ_INSTS_VALU_FMA_F64": 6}
    launches = read(
        v3_counter_file(tmp_path / "f_counter_collection.csv", {1: counters}), arch="gfx942"
    ).launches
    # FP32: 64 * (1 + 2 + 4) + 128 * 3 = 448 + 384 = 832.
    assert launches["ops_vector_fp32"].iloc[0] == 832
    # FP64 has ADD and FMA only: not guessed.
    assert np.isnan(launches["ops_vector_fp64"].iloc[0])
    why = missing(launches)["ops_vector_fp64"]
    assert "SQ_INSTS_VALU_MUL_F64" in why and "SQ_INSTS_VALU_TRANS_F64" in why


def test_rdna_folder_has_no_flops_and_low_confidence_bytes(tmp_path):
    (tmp_path / "host").mkdir()
    agent = (LOCAL / "v3_rocm633_rx7900xtx_agent_info.csv").read_bytes()
    (tmp_path / "host" / "9_agent_info.csv").write_bytes(agent)
    # The RX 7900 XTX is agent (node) 1. FETCH_SIZE 2,048 KiB + WRITE_SIZE 1,024 KiB
    # = 3,072 * 1,024 = 3,145,728 bytes.
    v3_counter_file(
        tmp_path / "host" / "9_counter_collection.csv",
        {1: {"FETCH_SIZE": 2048, "WRITE_SIZE": 1024, "SQ_WAVES": 10}},
    )
    profile = read(tmp_path)
    launches = profile.launches
    assert launches["arch"].iloc[0] == "gfx1100"
    assert launches["device_name"].iloc[0] == "AMD Radeon RX 7900 XTX"
    assert launches["bytes_dram"].iloc[0] == 3_145_728
    assert "low-confidence" in launches["notes"].iloc[0]
    assert missing(launches)["ops"] == "gfx1100 has no typed FLOP counters"
    assert profile.device_hints["cu_count"] == 96


def test_arch_option_overrides_inference(tmp_path):
    path = v3_counter_file(tmp_path / "g_counter_collection.csv", {1: {"TCC_EA0_RDREQ": 1}})
    profile = read(path, arch="gfx940")
    assert profile.launches["arch"].iloc[0] == "gfx940"
    assert not any("inferred" in n for n in profile.notes)


def test_lds_bytes(tmp_path):
    # (SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT) * 4 B * 32 banks = (1,000 - 200) * 128 = 102,400.
    path = v3_counter_file(
        tmp_path / "h_counter_collection.csv",
        {1: {"SQ_LDS_IDX_ACTIVE": 1000, "SQ_LDS_BANK_CONFLICT": 200}},
    )
    assert read(path).launches["bytes_lds"].iloc[0] == 102_400


# --- rocprof v1 results.csv: merged pmc passes ---------------------------------------------------

V1 = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",'
    '"vgpr","sgpr","fbar","sig","obj","DispatchNs","BeginNs","EndNs","CompleteNs",'
    '"SQ_WAVES","TCP_TOTAL_CACHE_ACCESSES_sum"\n'
)


def test_v1_merged_pmc_passes_become_one_launch(tmp_path):
    # Dispatch 0 appears in two passes (timed 1,000 ns and 3,000 ns); pass 1 counted SQ_WAVES,
    # pass 2 TCP_TOTAL_CACHE_ACCESSES_sum. Dispatch 1 appears once.
    body = (
        '0,"k(int*) [clone .kd]",0,0,0,5,5,1024,256,0,0,8,16,0,0x0,0x1,0,10000,11000,0,16,\n'
        '1,"j(int*) [clone .kd]",0,0,1,5,5,512,256,0,0,8,16,0,0x0,0x1,0,20000,22000,0,8,\n'
        '0,"k(int*) [clone .kd]",0,0,0,5,5,1024,256,0,0,8,16,0,0x0,0x1,0,50000,53000,0,,40\n'
    )
    path = tmp_path / "results.csv"
    path.write_text(V1 + body)
    profile = read(path)
    launches = profile.launches
    assert launches["launch_id"].tolist() == [0, 1]
    assert launches["kernel"].tolist() == ["k(int*)", "j(int*)"]
    # Median of 1,000 and 3,000 ns = 2,000 ns; dispatch 1: 2,000 ns.
    assert launches["duration_s"].tolist() == pytest.approx([2_000e-9, 2_000e-9])
    # vL1D bytes: 40 * 64 = 2,560 for dispatch 0; dispatch 1 never had the counter -> NA.
    assert launches["bytes_l1"].iloc[0] == 2_560 and np.isnan(launches["bytes_l1"].iloc[1])
    assert profile.repairs == [
        "results.csv: merged 1 duplicate rows into 1 dispatches "
        "(the same dispatch in several pmc passes)"
    ]


def test_v1_repeated_ids_with_different_kernels_are_all_kept(tmp_path):
    body = (
        '0,"a",0,0,0,5,5,64,64,0,0,8,16,0,0x0,0x1,0,100,200,0,1,1\n'
        '0,"b",0,0,0,5,5,64,64,0,0,8,16,0,0x0,0x1,0,300,500,0,1,1\n'
    )
    path = tmp_path / "results.csv"
    path.write_text(V1 + body)
    profile = read(path)
    assert profile.launches["kernel"].tolist() == ["a", "b"]
    assert profile.launches["launch_id"].tolist() == [0, 1]  # row numbers, now unique
    assert any("launch_id is the row number" in n for n in profile.notes)
    assert any("repeat with different kernels" in n for n in profile.notes)


# --- rocpd SQLite -------------------------------------------------------------------------------


def test_rocpd_database(tmp_path):
    path = make_rocpd(tmp_path / "run_results.db")
    assert rocprof.sniff(path, head_text(path))
    profile = read(path)
    launches = profile.launches
    assert profile.format == "rocpd"
    assert launches["launch_id"].tolist() == [1, 2]
    assert launches["device_name"].tolist() == ["AMD Instinct MI300X"] * 2
    assert profile.device_hints == {
        "product": "AMD Instinct MI300X",
        "gfx": "gfx942",
        "cu_count": 304,
    }
    # 128*65,536 + 64*(65,757 - 65,536) + 64*131,072 = 8,388,608 + 14,144 + 8,388,608.
    assert launches["bytes_dram"].iloc[0] == 16_791_360
    assert launches["duration_s"].iloc[0] == pytest.approx(8_292e-9)
    assert (
        launches["grid"].iloc[1] == "(4096, 4096, 1)" and launches["block"].iloc[1] == "(16, 16, 1)"
    )
    assert launches["ops_matrix_bf16"].iloc[1] == 512_000  # 1,000 MOPS * 512


def test_other_sqlite_databases_are_not_claimed(tmp_path):
    path = tmp_path / "nsys.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER)")
    con.commit()
    con.close()
    assert not rocprof.sniff(path, head_text(path))
    with pytest.raises(InputError, match="not a rocprof one"):
        rocprof.read(path)


# --- errors -------------------------------------------------------------------------------------


def test_header_without_dispatches(tmp_path):
    path = tmp_path / "empty_counter_collection.csv"
    path.write_text(V3_HEADER + "\n")
    with pytest.raises(InputError, match="header but no dispatches"):
        rocprof.read(path)


def test_unrelated_csv_is_not_claimed(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b,c\n1,2,3\n")
    assert not rocprof.sniff(path, head_text(path))
    with pytest.raises(InputError, match="not a rocprof table"):
        rocprof.read(path)


def test_agent_info_refusal_names_the_fix():
    with pytest.raises(InputError) as err:
        rocprof.read(LOCAL / "v3_rocm633_rx7900xtx_agent_info.csv")
    assert str(err.value).endswith(
        "holds no kernel dispatches (it is a rocprofv3 agent_info file); pass the rocprofv3 "
        "output folder or its *_counter_collection.csv / *_kernel_trace.csv"
    )


# --- device files -------------------------------------------------------------------------------


def test_roofline_zero_means_not_measured_and_typos_are_tolerated(tmp_path):
    path = tmp_path / "roofline.csv"
    path.write_text(
        "device,HBMBw,hbmBwHigh,L2Bw,FP32Flops,MFMAF8Flops,MFMAFI8Ops,MFMAF6F4Flops\n"
        "0,5000.5,5100,0,100000,0,2000000,4000000\n"
    )
    ceilings = read(path).measured_ceilings
    # 0 (L2Bw, MFMAF8Flops) = not measured; *High columns are bounds, not ceilings.
    assert ceilings == {
        "dram": 5000.5e9,
        "vector_fp32": 1e14,
        "matrix_int8": 2e15,
        "matrix_fp4": 4e15,
    }


def test_sysinfo_with_zero_cu_count_gives_no_cu_hint(tmp_path):
    text = (
        (LOCAL / "omniperf2_mi300x_rocm620_sysinfo.csv")
        .read_text()
        .replace(",304,4,32,", ",0,4,32,")
    )
    (tmp_path / "sysinfo.csv").write_text(text)
    v3_counter_file(tmp_path / "pmc_perf.csv", {1: {"TCC_EA0_RDREQ": 1}})
    profile = read(tmp_path)
    assert profile.device_hints == {"product": "MI300X_A1", "gfx": "gfx942"}
    assert any("cu_per_gpu = 0" in n for n in profile.notes)
