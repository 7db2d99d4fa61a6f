"""Golden files for every text report format (table, Markdown, JSON, CSV, HTML) on real
profiles; README sample.

The formats come from the registry (tests/helpers.py: report_formats), so a new text format gets
goldens here without a test edit; a missing or different golden fails, and the output is left in
tests/actual/ for review. Refresh after an intended change, then read the diff before committing:

    ROOFLINT_UPDATE_GOLDEN=1 pytest tests/test_reporters.py tests/test_golden_html_diff.py

The goldens are only as good as the numbers in them, so the figures they show are also checked
here against values worked out by hand from the raw counters (see the spot checks below).
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from pathlib import Path

import pytest

from rooflint import pipeline, reporters
from tests.helpers import REFRESH, ROOT, UPDATE, check_golden, report_formats

A100 = "fixtures/ncu/a100-gemm-details.csv"
RTX = "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv"
README_START, README_END = "<!-- sample-report:start -->", "<!-- sample-report:end -->"
README_IMAGE = "docs/roofline-a100.png"

# Options that give a format more than one golden: label → options (others: the defaults, once).
VARIANTS = {"csv": {"launches": {"per": "launch"}, "kernels": {"per": "kernel"}}}


def golden_cases() -> list:
    """(format, options, golden suffix) for every text format of the registry."""
    return [
        pytest.param(fmt, options, suffix, id=suffix.lstrip("."))
        for fmt, extension in report_formats().items()
        for label, options in VARIANTS.get(fmt, {"": {}}).items()
        for suffix in [f".{label}{extension}" if label else extension]
    ]


@pytest.fixture
def in_root(monkeypatch):
    """Relative fixture paths, so the `source` recorded in every report is the same on any
    machine."""
    monkeypatch.chdir(ROOT)


def _build(path: str):
    return pipeline.build([path])


@pytest.mark.parametrize("path", [A100, RTX], ids=["a100", "rtx2080ti"])
@pytest.mark.parametrize("fmt,options,suffix", golden_cases())
def test_golden(in_root, path, fmt, options, suffix):
    text = reporters.render(_build(path), fmt, **options)
    check_golden(f"{Path(path).stem}{suffix}", text)


def test_every_text_format_has_goldens():
    """The derivation finds the formats the goldens were first written for, and more only by
    a registry change (a binary format, or a second text one, added to the registry)."""
    suffixes = {case.values[2] for case in golden_cases()}
    assert {".txt", ".md", ".json", ".html", ".launches.csv", ".kernels.csv"} <= suffixes
    assert not suffixes & {".parquet", ".png", ".svg", ".pdf"}


# --- the numbers in the goldens, checked by hand -------------------------------------------


def _a100_counters() -> dict[str, dict]:
    """Launch ID → {kernel name, metric: value} straight from the details-page CSV."""
    launches: dict[str, dict] = {}
    with open(ROOT / A100, newline="") as fh:
        for row in csv.reader(fh):
            if len(row) == 15 and row[0].isdigit():
                entry = launches.setdefault(row[0], {"name": row[4]})
                entry[row[12]] = float(row[14].replace(",", ""))
    return launches


def test_a100_cublas_efficiency_by_hand(in_root):
    """ampere_s16816gemm (cuBLAS, M = N = K = 20480, FP16 tensor cores), worked by hand:

    duration  = sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second
              = 81,835,634.7 cycles / 764,999,572 Hz ≈ 0.10698 s (→ "107 ms")
    FLOPs     = 2 · 20480³ = 17,179,869,184,000 (the true GEMM count, fixtures README)
    peak      = A100 dense FP16 tensor: 108 SMs x 2048 FLOP/clk (A100 whitepaper) at the median
                SM clock the profile reports (0.765 GHz, clocks locked to base) ≈ 169.2 TFLOP/s
                (the datasheet's 312 TFLOP/s is the same rate at the 1.41 GHz boost)
    t_bound   = 17.18e12 / 169.2e12 ≈ 0.10153 s;  DRAM: 25.7 GB / 2.039 TB/s ≈ 0.0126 s (smaller)
    efficiency = t_bound / t ≈ 0.9491 (→ "95 %"), headroom = t − t_bound ≈ 5.44 ms, compute-bound.
    """
    counters = _a100_counters()
    clock = statistics.median(c["sm__cycles_elapsed.avg.per_second"] for c in counters.values())
    (cublas,) = [c for c in counters.values() if c["name"].startswith("ampere_s16816gemm")]
    duration = cublas["sm__cycles_elapsed.avg"] / cublas["sm__cycles_elapsed.avg.per_second"]
    t_bound = 2 * 20480**3 / (108 * 2048 * clock)
    assert cublas["dram__bytes.sum"] / 2.039e12 < t_bound

    res = _build(A100)
    row = res.kernels[res.kernels["kernel"].str.startswith("ampere_s16816gemm")].iloc[0]
    assert row["efficiency"] == pytest.approx(t_bound / duration, rel=1e-9)
    assert row["headroom_s"] == pytest.approx(duration - t_bound, rel=1e-9)
    assert row["verdict"] == "compute-bound"

    markdown = reporters.render(res, "markdown")
    (line,) = [
        x
        for x in markdown.splitlines()
        if x.startswith("| 2 | `2ec6a2` |") and "launches" not in x and x.count("|") == 10
    ]
    assert (
        "| 107 ms |" in line
        and "| 95 % |" in line
        and "| 5.44 ms |" in line
        and "compute-bound" in line
    )


def test_a100_zero_flop_initialiser_by_hand(in_root):
    """InitializeMatrix_kernel<__half>: no tensor instructions, so 0 FLOPs and a pure DRAM roof.

    The export came from an A100 PCIe 40GB (1.555 TB/s; the SM clock of 765 MHz is its base
    clock, see hardware/identify.py). launch 0: 823,404,288 B / 1.555 TB/s = 0.52952 ms;
    duration 1,708,634.2 / 765,001,631 Hz = 2.23350 ms; efficiency 0.2371 (→ "24 %",
    latency-bound: under the 60 % threshold).
    """
    launch0 = _a100_counters()["0"]
    duration = launch0["sm__cycles_elapsed.avg"] / launch0["sm__cycles_elapsed.avg.per_second"]
    expected = launch0["dram__bytes.sum"] / 1.555e12 / duration
    assert expected == pytest.approx(0.2371, abs=1e-4)
    res = _build(A100)
    first = res.launches[res.launches["launch_id"] == 0].iloc[0]
    assert first["efficiency"] == pytest.approx(expected, rel=1e-9)
    assert first["flops"] == 0
    assert "| 3 | `0922ec` |" in reporters.render(res, "markdown")
    table = reporters.render(res, "table")
    assert re.search(r"^3\s+0922ec\s+InitializeMatrix.*latency-bound\s+24 %", table, re.M)


def test_rtx2080ti_efficiency_by_hand(in_root):
    """volta_sgemm_32x128_nn, raw page in base units with the run's own peaks:

    cycles   = gpu__time_duration 10,720 ns × SM clock 1,305,874,122 Hz ≈ 13,998.97
    FLOPs    = (2 × FFMA 936.30 + FMUL 14.63 + FADD 0) per cycle × cycles ≈ 26.419 MFLOP
    FP32 peak = 4352 FFMA/cycle × 2 × 1.305874 GHz ≈ 11.366 TFLOP/s → t_fp32 ≈ 2.3243 µs
    L2       = 2,883,616 B / (1408 B/cycle × 1.242444 GHz) ≈ 1.648 µs;
    DRAM     ≈ 1.286 µs (L2 and DRAM both smaller)
    efficiency = 2.3243 / 10.72 ≈ 0.2168 (→ "22 %", latency-bound), limiter vector_fp32.
    """
    cycles = 10_720e-9 * 1_305_874_122.04
    flops = (2 * 936.30 + 14.63) * cycles
    t_bound = flops / (4352 * 2 * 1_305_874_122.04)
    res = _build(RTX)
    row = res.kernels.iloc[0]
    assert row["flops"] == pytest.approx(flops, rel=1e-6)
    assert row["efficiency"] == pytest.approx(t_bound / 10.72e-6, rel=1e-6)
    assert row["limiter"] == "vector_fp32" and row["verdict"] == "latency-bound"
    document = json.loads(reporters.render(res, "json"))
    assert document["kernels"][0]["efficiency"] == pytest.approx(0.2168, abs=1e-4)
    rows = list(csv.DictReader(io.StringIO(reporters.render(res, "csv", per="launch"))))
    assert float(rows[0]["efficiency"]) == row["efficiency"]  # CSV keeps every digit


# --- README sample --------------------------------------------------------------------------


def readme_block(res) -> str:
    """What README.md holds between the sample-report markers: the chart, then the Markdown
    report."""
    return (
        "\n![Roofline of the A100 sample: two FP16 GEMMs under the tensor roof, two zero-FLOP "
        f"initialisers in the strip]({README_IMAGE})\n\n"
        f"`rooflint report {A100} --format markdown`:\n\n" + reporters.render(res, "markdown")
    )


def test_readme_sample_is_current(in_root):
    res = _build(A100)
    expected = readme_block(res)
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    if UPDATE:
        text = text[:start] + expected + text[end:]
        readme.write_text(text, encoding="utf-8", newline="")
        (ROOT / README_IMAGE).parent.mkdir(exist_ok=True)
        (ROOT / README_IMAGE).write_bytes(reporters.render(res, "png"))
        start, end = text.index(README_START) + len(README_START), text.index(README_END)
    assert text[start:end] == expected, f"README sample is stale; run {REFRESH}"
    assert (ROOT / README_IMAGE).read_bytes().startswith(b"\x89PNG")


def test_ceilings_line_names_each_document_once(in_root):
    """H100 (bert-small trace, catalog h100-sxm): the vector roofs are at the boost clock, the
    tensor roofs at the datasheet clock 1.83 GHz, both from the same datasheet — the folded line
    names the datasheet once and says which roofs the clock clause is for."""
    result = pipeline.report(
        ["fixtures/kineto/tracelens-h100-bert-small-uncased.json.gz"], pipeline.Options()
    )
    text = reporters.render(result, "table")
    line = " ".join(text.split("\nceilings: ", 1)[1].split("\nnote:")[0].split())
    assert line.count("NVIDIA H100 Tensor Core GPU datasheet (2023)") == 1
    assert "(catalog h100-sxm); tensor roofs at datasheet clock 1.83 GHz" in line
