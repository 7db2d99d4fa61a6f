"""Nsight Systems SQLite exports (parsers/nsys.py), against what plain sqlite3 reads from them.

Counts, intervals and the NVTX range around each launch are queried here with sqlite3 and plain
Python, never through the reader; the convolution's FLOPs and bytes are worked by hand from the
shapes its DLProf marker records.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pandas as pd
import pytest
from click.testing import CliRunner

from rooflint import parsers
from rooflint.cli import main
from rooflint.core import timeline
from rooflint.core.errors import InputError, UnsupportedFormatError
from rooflint.core.profile import InputFormat
from rooflint.hardware.identify import identify
from rooflint.parsers import nsys
from tests.helpers import FIXTURES, ncu_details, plain_union, shared

EXCERPT = FIXTURES / "nsys" / "nsysai-2xh100-excerpt.sqlite"
ACTIVITY = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
)
READABLE = ("fuser-h200-matmul", "nsysai-2xh100-1s", "dlprof-rtx2070s-nvtx-shapes")
# ns kept as seconds from the first activity: a float64 of ~1 s resolves 2e-16 s
CLOCK = 1e-12


def query(path, sql: str, *args) -> list[tuple]:
    con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def activity_rows(path) -> list[tuple]:
    """(start, end, deviceId) of every kernel, copy and fill (ns)."""
    return [row for t in ACTIVITY for row in query(path, f"SELECT start, end, deviceId FROM {t}")]


def innermost_operator(path) -> dict[int, str]:
    """kernel correlation id -> the operator of the innermost emit_nvtx operator range open on
    its launching thread when the runtime call began (plain SQL and a regex, per kernel)."""
    rows = query(
        path,
        "SELECT k.correlationId, n.start, n.text FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "AND (r.globalTid >> 24) = (k.globalPid >> 24) "
        "JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND n.start <= r.start "
        'AND n."end" >= r.start',
    )
    best: dict[int, tuple[int, str]] = {}
    for corr, start, text in rows:
        found = re.match(r"^([A-Za-z_]\w*::\w+), (seq|op_id) = ", text or "")
        if found and (corr not in best or start > best[corr][0]):
            best[corr] = (start, found.group(1))
    return {corr: op for corr, (_, op) in best.items()}


# --- the bundled excerpt (a plain clone) -----------------------------------------------------


def test_excerpt_is_claimed_and_every_activity_is_a_launch():
    assert parsers.detect(EXCERPT) is nsys.READER
    profile = parsers.read(EXCERPT)
    assert profile.format == InputFormat.NSYS_SQLITE
    assert len(profile.launches) == len(activity_rows(EXCERPT)) == 300


def test_excerpt_busy_time_per_device_is_the_union_of_its_intervals():
    rows = activity_rows(EXCERPT)
    profile = parsers.read(EXCERPT)
    devices = timeline.build(profile.launches, profile.steps).devices
    assert [d.device for d in devices] == [0, 1]
    for device in devices:
        mine = [(s, e) for s, e, d in rows if d == device.device]
        assert device.launches == len(mine)
        assert device.busy_s == pytest.approx(plain_union(mine) * 1e-9, abs=CLOCK)


def kernel_ops(path) -> dict[int, str]:
    """kernel correlation id -> the `op` rooflint gave it, matched by device and start time."""
    rows = query(path, "SELECT correlationId, start, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")
    by_start = {(start, device): corr for corr, start, device in rows}
    origin = min(s for s, _, _ in activity_rows(path))
    launches = parsers.read(path).launches
    kernels = launches[launches["activity"] == "kernel"]
    return {
        by_start[(round(start_s * 1e9) + origin, device)]: op
        for start_s, device, op in zip(
            kernels["start_s"], kernels["device_index"], kernels["op"], strict=True
        )
    }


def test_excerpt_emit_nvtx_operators_reach_their_kernels():
    expected = innermost_operator(EXCERPT)
    ops = kernel_ops(EXCERPT)
    assert len(expected) > 100
    assert {c: ops[c] for c in expected} == expected
    assert {"aten::mm", "aten::copy_", "aten::mul"} <= set(expected.values())


def test_excerpt_device_from_evidence_is_provisional():
    """The excerpt keeps the export's metadata: perf_h100_sp2_fa3.nsys-rep names the H100."""
    profile = parsers.read(EXCERPT)
    assert set(profile.launches["arch"].dropna()) == {"9.0"}
    assert any("no TARGET_INFO_GPU" in n and "'h100'" in n for n in profile.notes)
    found = identify(profile.launches, profile.device_hints)
    assert (found.device.id, found.provisional) == ("h100-sxm", True)
    assert {"h100-pcie", "h100-nvl"} <= set(found.candidates)


def test_group_by_op_on_the_excerpt(tmp_path):
    out = tmp_path / "r.json"
    run = CliRunner().invoke(
        main, ["report", str(EXCERPT), "--group-by", "op", "-q", "-o", str(out), "--top", "1000"]
    )
    assert run.exit_code == 0, run.output
    doc = json.loads(out.read_text())
    names = {g["group"].split(" ")[0] for g in doc["kernels"]}
    assert {"aten::mm", "aten::copy_"} <= names


def test_a_rocprof_database_is_not_claimed():
    path = FIXTURES / "rocprof" / "v1_mi250_rocm571_results_head.db"
    assert parsers.detect(path) is not nsys.READER


def test_metrics_nsys_prints_the_capture_and_export():
    run = CliRunner().invoke(main, ["metrics", "nsys"])
    assert run.exit_code == 0
    assert (
        "nsys profile --trace=cuda,nvtx --cuda-graph-trace=node --pytorch=autograd-shapes-nvtx"
        in run.output
    )
    assert "nsys export --type sqlite -o report.sqlite report.nsys-rep" in run.output
    plain = CliRunner().invoke(main, ["metrics", "nsys", "--no-shapes"]).output
    assert "--pytorch" not in plain.splitlines()[2]


def test_an_nsys_rep_is_refused_with_the_export_command(tmp_path):
    path = tmp_path / "report.nsys-rep"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UnsupportedFormatError) as err:
        parsers.read(path)
    assert "nsys export --type sqlite -o report.sqlite report.nsys-rep" in str(err.value)


# --- the shared exports ----------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("name", READABLE)
def test_every_kernel_copy_and_fill_is_one_launch(name):
    path = shared(f"nsys/{name}.sqlite")
    counts = [query(path, f"SELECT count(*) FROM {t}")[0][0] for t in ACTIVITY]
    assert len(parsers.read(path).launches) == sum(counts)


@pytest.mark.e2e
@pytest.mark.parametrize("name", READABLE)
def test_busy_time_per_device_is_the_union_of_kernels_copies_and_fills(name):
    path = shared(f"nsys/{name}.sqlite")
    rows = activity_rows(path)
    profile = parsers.read(path)
    devices = timeline.build(profile.launches, profile.steps).devices
    assert sorted(d.device for d in devices) == sorted({d for _, _, d in rows})
    for device in devices:
        mine = [(s, e) for s, e, d in rows if d == device.device]
        assert device.busy_s == pytest.approx(plain_union(mine) * 1e-9, abs=CLOCK)


@pytest.mark.e2e
def test_fuser_export_is_an_h200_from_its_device_table():
    """TARGET_INFO_GPU: "NVIDIA H200", 132 SMs, compute capability 9.0."""
    profile = parsers.read(shared("nsys/fuser-h200-matmul.sqlite"))
    launches = profile.launches
    assert set(launches["device_name"]) == {"NVIDIA H200"} and set(launches["sm_count"]) == {132}
    found = identify(launches, profile.device_hints)
    assert (found.device.id, found.provisional) == ("h200-sxm", False)


@pytest.mark.e2e
def test_two_h100s_by_evidence():
    path = shared("nsys/nsysai-2xh100-1s.sqlite")
    profile = parsers.read(path)
    assert sorted(profile.launches["device_index"].unique()) == [0, 1]
    found = identify(profile.launches, profile.device_hints)
    assert (found.device.id, found.provisional) == ("h100-sxm", True)


@pytest.mark.e2e
def test_emit_nvtx_operator_names_reach_the_kernels():
    path = shared("nsys/nsysai-2xh100-1s.sqlite")
    expected = innermost_operator(path)
    ops = kernel_ops(path)
    assert len(expected) > 1000
    assert {c: ops[c] for c in expected} == expected
    unlinked = [c for c, op in ops.items() if c not in expected]
    assert all(ops[c] is pd.NA for c in unlinked)  # no range around them: no operator


@pytest.mark.e2e
def test_dlprof_convolution_model_by_hand():
    """The first conv2d marker: input (1, 3, 32, 32), weight (6, 3, 3, 3), bias (6,), float32,
    F.conv2d's defaults (stride 1, padding 0): output 30 x 30. FLOPs 2·N·K·C·R·S·P·Q =
    2·1·6·3·3·3·30·30 = 291,600; bytes 4·(3·32·32 + 6·27 + 6·30·30) = 12,288 + 648 + 21,600 =
    34,536; on the longest kernel launched inside the marker (cuDNN tries several algorithms):
    found here by SQL over the runtime calls that begin inside it."""
    path = shared("nsys/dlprof-rtx2070s-nvtx-shapes.sqlite")
    (lo, hi, tid) = query(
        path,
        "SELECT start, \"end\", globalTid FROM NVTX_EVENTS WHERE text LIKE '%''op'': ''conv2d''%' "
        "ORDER BY start LIMIT 1",
    )[0]
    (longest,) = query(
        path,
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "JOIN StringIds s ON s.id = k.demangledName "
        "WHERE r.globalTid = ? AND r.start BETWEEN ? AND ? "
        'ORDER BY k."end" - k.start DESC LIMIT 1',
        tid, lo, hi,
    )[0]  # fmt: skip
    launches = parsers.read(path).launches
    row = launches[launches["ops_vector_fp32"] == 291_600]
    assert len(row) == 1
    assert row["kernel"].iloc[0] == longest and row["op"].iloc[0] == "aten::conv2d"
    assert row["bytes_dram"].iloc[0] == 34_536
    assert row["op_input_dims"].iloc[0] == "[[1,3,32,32],[6,3,3,3],[6]]"


@pytest.mark.e2e
def test_a_capture_without_cuda_tracing_is_refused_with_the_command():
    path = shared("nsys/dynamicvit-no-cuda-tables.sqlite")
    assert parsers.detect(path) is nsys.READER
    with pytest.raises(InputError) as err:
        parsers.read(path)
    assert "nsys profile --trace=cuda,nvtx" in str(err.value)


# --- a hand-built export with the real schema -------------------------------------------------

THREAD = (7 << 24) | 42  # globalTid: pid 7, tid 42 (the kernel's globalPid is pid 7, tid 0)


def handmade(tmp_path, ranges, calls, kernels):
    """An export with the excerpt's CREATE statements and these rows: ranges (start, end,
    eventType, text[, domainId]), calls (start, correlationId), kernels (start, end,
    correlationId)."""
    path = tmp_path / "hand.sqlite"
    con = sqlite3.connect(path)
    for (sql,) in query(EXCERPT, "SELECT sql FROM sqlite_master WHERE type = 'table'"):
        con.execute(sql)
    con.executemany(
        "INSERT INTO StringIds VALUES (?, ?)", [(1, "kernel_a"), (2, "cudaLaunchKernel_v7000")]
    )
    con.executemany(
        'INSERT INTO NVTX_EVENTS (start, "end", eventType, text, globalTid, domainId) '
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(*r[:4], THREAD, r[4] if len(r) > 4 else 0) for r in ranges],
    )
    con.executemany(
        'INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, '
        "correlationId, nameId, returnValue) VALUES (?, ?, 1, ?, ?, 2, 0)",
        [(s, s + 5, THREAD, c) for s, c in calls],
    )
    columns = (
        'start, "end", deviceId, contextId, streamId, correlationId, globalPid, demangledName, '
        "shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
        "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, "
        "tensorSizeMinusOneElements"
    )
    con.executemany(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({columns}) VALUES "
        "(?, ?, 0, 1, 7, ?, ?, 1, 1, 32, 4, 2, 1, 128, 1, 1, 0, 0, 0, 0, 1, '[]')",
        [(s, e, c, 7 << 24) for s, e, c in kernels],
    )
    con.commit()
    con.close()
    return path


def test_nested_ranges_and_profiler_steps(tmp_path):
    """Two ProfilerStep ranges (push/pop) with a start/end range "forward" of the domain "Train"
    inside the first;
    each kernel takes the ranges open around its launch call; the third kernel, launched after
    the steps, falls outside their window. (The steps are 10 ns apart: kineto_link's sweep
    counts a range that ends where the next starts as still open.)"""
    path = handmade(
        tmp_path,
        ranges=[
            (1_000, 2_000, 59, "ProfilerStep#1"),
            (0, None, 75, "Train", 5),
            (1_100, 1_900, 60, "forward", 5),
            (2_010, 3_000, 59, "ProfilerStep#2"),
        ],
        calls=[(1_200, 11), (2_100, 12), (4_000, 13)],
        kernels=[(1_500, 1_700, 11), (2_200, 2_600, 12), (5_000, 5_100, 13)],
    )
    profile = parsers.read(path)
    launches = profile.launches
    assert list(launches["range"][:2]) == ["ProfilerStep#1/Train:forward", "ProfilerStep#2"]
    assert launches["range"].isna().iloc[2]
    assert list(launches["grid"]) == ["(4, 2, 1)"] * 3 and list(launches["stream"]) == [7] * 3
    assert list(launches["launch_s"] * 1e9) == pytest.approx([1_200 - 1_500, 2_100 - 1_500, 2_500])
    assert [(s.name, s.start_s * 1e9, s.end_s * 1e9) for s in profile.steps] == [
        ("ProfilerStep#1", pytest.approx(-500), pytest.approx(500)),
        ("ProfilerStep#2", pytest.approx(510), pytest.approx(1_500)),
    ]
    tl = timeline.build(launches, profile.steps)
    assert tl.outside_launches == 1
    (device,) = tl.devices
    assert device.busy_s == pytest.approx((200 + 400) * 1e-9, abs=CLOCK)


def test_diff_between_two_captures_goes_op_by_op(tmp_path):
    """The excerpt against itself: every operator group matched, none new or removed."""
    out = tmp_path / "d.json"
    run = CliRunner().invoke(main, ["diff", str(EXCERPT), str(EXCERPT), "-o", str(out)])
    assert run.exit_code == 0, run.output
    groups = json.loads(out.read_text())["groups"]
    assert {g["status"] for g in groups} == {"unchanged"}
    assert {"aten::mm", "aten::copy_"} <= {g["kernel"] for g in groups}


def test_a_damaged_table_is_one_line_with_the_export_again(tmp_path):
    path = tmp_path / "bad.sqlite"
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start TEXT, "end" INTEGER)')
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 5)")
    con.commit()
    con.close()
    with pytest.raises(InputError) as err:
        parsers.read(path)
    assert "cannot be read" in str(err.value) and "nsys export --type sqlite" in str(err.value)


@pytest.mark.e2e
def test_an_ncu_export_beside_the_capture_lends_its_counters(tmp_path):
    """A synthetic ncu export of the DLProf capture's modelled convolution kernel (same name,
    grid and block) moving 3x the operator's minimum bytes (34,536): its counters replace the
    model on that kernel, and the excess-traffic ratio is 3."""
    from rooflint import pipeline

    path = shared("nsys/dlprof-rtx2070s-nvtx-shapes.sqlite")
    alone = parsers.read(path).launches
    modelled = alone[alone["ops_vector_fp32"] == 291_600].iloc[0]
    csv = tmp_path / "ncu.csv"
    csv.write_text(
        ncu_details(
            [
                (
                    modelled["kernel"],
                    modelled["block"],
                    modelled["grid"],
                    {
                        "gpu__time_duration.sum": ("nsecond", "10688"),
                        "dram__bytes.sum": ("byte", str(3 * 34_536)),
                        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": ("", "1000"),
                    },
                )
            ],
            cc="7.5",
        )
    )
    launches = pipeline.build(
        [str(path), str(csv)], pipeline.Options(device="rtx-2080-ti")
    ).launches
    assert len(launches) == len(alone)
    lent = launches[launches["flops_source"] == "counters"]
    assert len(lent) == 1 and lent["kernel"].iloc[0] == modelled["kernel"]
    assert lent["bytes_dram"].iloc[0] == 3 * 34_536
    assert lent["excess_traffic"].iloc[0] == pytest.approx(3.0)


def test_nvtx_step_names_the_step_ranges(tmp_path):
    """--nvtx-step train: the two "train" ranges are steps 1 and 2 (in time order); --steps 2
    reports the second alone."""
    path = handmade(
        tmp_path,
        ranges=[(2_010, 3_000, 59, "train"), (1_000, 2_000, 59, "train")],
        calls=[(1_200, 11), (2_100, 12)],
        kernels=[(1_500, 1_700, 11), (2_200, 2_600, 12)],
    )
    assert parsers.read(path).steps == []  # no ProfilerStep#N range
    profile = parsers.read(path, nvtx_step="train")
    assert [s.name for s in profile.steps] == ["train#1", "train#2"]
    assert [s.number for s in profile.steps] == [1, 2]
    tl = timeline.build(profile.launches, profile.steps, "2")
    assert tl.window.steps == ("train#2",) and tl.outside_launches == 1
    out = tmp_path / "r.json"
    run = CliRunner().invoke(
        main, ["report", str(path), "--nvtx-step", "train", "--steps", "1", "-q", "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    assert json.loads(out.read_text())["accounting"]["launches_read"] == 2


def test_nvtx_step_with_no_nsys_input_is_a_usage_error(tmp_path):
    out = tmp_path / "r.json"
    raw = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    run = CliRunner().invoke(main, ["report", str(raw), "--nvtx-step", "x", "-o", str(out)])
    assert run.exit_code == 2 and "Nsight Systems" in run.output and not out.exists()


def test_diff_between_an_nsys_capture_and_a_pytorch_trace(tmp_path):
    """Both sides group by operator where they know it: the excerpt's aten::mm (emit_nvtx
    recorded no shapes), the bundled BERT trace's aten::addmm with its shapes and dtypes."""
    trace = FIXTURES / "kineto" / "tracelens-h100-bert-small-uncased.json.gz"
    out = tmp_path / "d.json"
    run = CliRunner().invoke(
        main, ["diff", str(EXCERPT), str(trace), "--device", "h100-sxm", "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    groups = {g["kernel"]: g["status"] for g in json.loads(out.read_text())["groups"]}
    assert groups["aten::mm"] == "removed"
    assert {v for k, v in groups.items() if k.startswith("aten::addmm [[")} == {"new"}
