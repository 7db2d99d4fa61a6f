"""`rooflint diff` of PyTorch traces: itself, a 3x slower copy, two GPUs; folders of a trace and
exports of other runs.

The slower copy is made here from the trace's JSON: every GPU activity (and device-side
annotation) stretched 3x in time about the first GPU start, so that each kernel runs 3x longer
and the GPU's timeline, steps included, is 3x as long; host events are left as they were."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from click.testing import CliRunner

from rooflint.cli import main
from tests.helpers import shared

TRACES = [
    "hta-2rank-sampled-rank-0",
    "hta-a100-alexnet",
    "hta-a100-nccl-rank0",
    "hta-a100-triton-example",
    "hta-mi250-minitoy",
    "tracelens-b200-eager_trace",
    "tracelens-h100-bert-small-uncased",
    "tracelens-h100-nsfw_image_detection",
    "tracelens-h100-timesformer",
    "tracelens-mi300-bert-small-uncased",
    "tracelens-mi300x-xdit-sd35-triton",
    "tracelens-torch_compile_triton-trace",
    "tracelens-vllm-decode-graph-capture",
    "tracelens-vllm-decode-graph-replay",
]
STRETCHED = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
# The sampled trace names no GPU; the MI250's name fits several parts.
DEVICE = {"hta-2rank-sampled-rank-0": "a100-sxm4-40gb", "hta-mi250-minitoy": "mi250"}


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def slower(path, target, factor: float = 3.0):
    with gzip.open(path) as fh:
        doc = json.load(fh)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu = [e for e in events if e.get("cat") in STRETCHED and "ts" in e]
    origin = min(e["ts"] for e in gpu)
    for e in gpu:
        e["ts"] = origin + (e["ts"] - origin) * factor
        e["dur"] = e.get("dur", 0) * factor
    with gzip.open(target, "wt") as fh:
        json.dump(doc, fh)
    return target


def device_args(name: str) -> list[str]:
    return ["--device", DEVICE[name]] if name in DEVICE else []


def printed_change(stdout: str) -> tuple[float, str, str]:
    """(change, base, head) as the first line prints them."""
    found = re.search(r"busy time ([+-]\d+\.\d) % \(base (.+?) → head (.+?)[);]", stdout)
    assert found, stdout.splitlines()[0]
    return float(found.group(1)) / 100, found.group(2), found.group(3)


@pytest.mark.parametrize("name", TRACES)
def test_trace_against_itself(name):
    """Exit 0, +0.0 %, every group found (none new or removed), no measurement problem."""
    path = shared(f"kineto/{name}.json.gz")
    res = run("diff", path, path, "--fail-on-regression", "10", "-f", "json", *device_args(name))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    totals = doc["totals"]
    assert totals["measure"] == "per-step busy time"
    assert totals["change"] == 0.0 and totals["time_base_s"] == totals["time_head_s"] > 0
    assert totals["base_only"] == totals["head_only"] == 0
    assert totals["status"]["not comparable"] == 0
    assert not [w for w in doc["warnings"] if w.startswith("measurement problem")]
    ids = [g["short_id"] for g in doc["groups"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", TRACES)
def test_three_times_slower_copy_fails_the_gate(name, tmp_path):
    """Exit 1 at --fail-on-regression 10, +200 %; the printed change is head/base - 1 of the
    per-step busy times printed beside it (to their three printed digits)."""
    path = shared(f"kineto/{name}.json.gz")
    slow = slower(path, tmp_path / f"{name}-slow.json.gz")
    res = run("diff", path, slow, "--fail-on-regression", "10", *device_args(name))
    assert res.exit_code == 1, res.output
    assert "gate failed: per-step busy time +200.0 %" in res.output
    change, base, head = printed_change(res.stdout)
    assert change == pytest.approx(seconds(head) / seconds(base) - 1, abs=0.01)


@pytest.mark.parametrize("name", ["tracelens-h100-timesformer", "hta-a100-nccl-rank0"])
def test_change_is_exactly_the_ratio_of_the_totals(name, tmp_path):
    """In the JSON the change is head/base - 1 of time_base_s and time_head_s, exactly."""
    path = shared(f"kineto/{name}.json.gz")
    slow = slower(path, tmp_path / f"{name}-slow.json.gz")
    t = json.loads(run("diff", path, slow, "-f", "json").stdout)["totals"]
    assert t["change"] == t["time_head_s"] / t["time_base_s"] - 1
    assert t["change"] == pytest.approx(2.0, rel=1e-5)  # the copy's own times are rounded


def seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"s": 1, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


def test_two_gpus_compare_per_step_busy_time():
    """BERT-small on an H100 and on an MI300X: each side's busy time in its own ProfilerStep#6
    (309.4 µs and 390.7 µs, the unions worked in tests/test_timeline.py's way), each side's
    efficiency against its own roofs; the change is 390.7 / 309.4 - 1 = +26.3 %."""
    h100 = shared("kineto/tracelens-h100-bert-small-uncased.json.gz")
    mi300 = shared("kineto/tracelens-mi300-bert-small-uncased.json.gz")
    doc = json.loads(run("diff", h100, mi300, "-f", "json").stdout)
    t = doc["totals"]
    assert t["time_base_s"] == pytest.approx(309.4377e-6, rel=1e-5)
    assert t["time_head_s"] == pytest.approx(390.7485e-6, rel=1e-5)
    assert t["change"] == pytest.approx(390.7485 / 309.4377 - 1, rel=1e-4)
    assert doc["device_changed"]


def test_folder_of_a_trace_and_exports_of_other_runs(tmp_path):
    """One PyTorch trace (BERT on an H100) beside ncu exports of other programs on other GPUs
    (an A100 GEMM, an RTX 2080 Ti SGEMM, an H200 transformer block): none is the trace's run, so
    none is joined to it; every export's launches are reported with their own file and
    `launches read` is the sum of what each file holds alone."""
    import shutil

    from rooflint import parsers, pipeline
    from tests.helpers import FIXTURES

    files = [
        FIXTURES / "kineto/tracelens-h100-bert-small-uncased.json.gz",
        FIXTURES / "ncu/a100-gemm-details.csv",
        FIXTURES / "ncu/rtx2080ti-sgemm-raw-base.csv",
        FIXTURES / "ncu/h200-block-raw-stdout.csv",
    ]
    for f in files:
        shutil.copy(f, tmp_path / f.name)
    alone = {f.name: len(parsers.read(f).launches) for f in files}
    built = pipeline.build([str(tmp_path)])
    by_file = (
        built.launches["source"].astype(str).map(lambda s: s.rsplit("/", 1)[-1]).value_counts()
    )
    assert by_file.to_dict() == alone
    acc = built.summary.accounting
    assert acc["launches_read"] == sum(alone.values()) == acc["analysed"] + acc["not_analysable"]
    assert not acc["repairs"]
    assert not any("filled" in n for p in built.inputs for n in p.notes)


def test_trace_and_export_of_the_same_run_are_joined(tmp_path):
    """The H200 block's trace and its ncu export (one run, fixtures/README.md): the export's 20
    kernels fill the trace's, and the accounting counts the trace's launches (each launch once)."""
    from rooflint import parsers, pipeline
    from tests.helpers import FIXTURES

    trace_path = FIXTURES / "kineto/h200-block-trace.json.gz"
    export = FIXTURES / "ncu/h200-block-raw-stdout.csv"
    built = pipeline.build([str(trace_path), str(export)])
    assert built.summary.accounting["launches_read"] == len(parsers.read(trace_path).launches)
    assert (built.launches["flops_source"] == "counters").sum() == len(
        parsers.read(export).launches
    )
