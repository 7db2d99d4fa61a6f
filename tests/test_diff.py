"""`rooflint diff`: matching, the noise rule, sanity flags, gates and the three output formats."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import rooflint
from rooflint import hardware, pipeline, reporters, saved
from rooflint.cli import main
from rooflint.core import diff, names, schema
from rooflint.reporters import diff_markdown, diff_table
from tests.helpers import (
    A100,
    B200_RAW,
    FIXTURES,
    LEAN,
    RTX,
    as_dicts,
    raw_durations,
    rendered,
    scaled_raw,
    shared,
    synthetic,
    timed,
    tiny_roofs,
)

ROOT = Path(__file__).resolve().parents[1]
SDPA = "sdpa_sm100_flash"  # 8 launches, 96 % of it
LEAN_FULL = (
    "void cudnn::lean_reduction_kernel<0, 0, 0>(void *, float *, float *, float *, float *, "
    "const float *, float *, float *, float *, float *, float *" + ", unsigned int" * 20 + ", bool)"
)
INIT_FLOAT = "void InitializeMatrix_kernel<float, (bool)1>(T1 *, int, int, int)"


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


# --- building inputs from real exports ---------------------------------------------------------


def details_without(src: Path, dest: Path, kernel_part: str) -> Path:
    """A copy of a details export without the rows of one kernel."""
    kept = [
        line
        for line in src.read_text(encoding="utf-8").splitlines(keepends=True)
        if kernel_part not in line
    ]
    dest.write_text("".join(kept), encoding="utf-8")
    return dest


def saved_report(tmp_path: Path, profile: Path, name: str, *options) -> Path:
    out = tmp_path / name
    res = run("report", profile, "-f", "json", "-o", out, "-q", *options)
    assert res.exit_code == 0, res.output
    return out


# --- a profile against itself ------------------------------------------------------------------


def test_profile_against_itself_shows_no_change_and_passes():
    res = run(
        "diff",
        A100,
        A100,
        "-f",
        "json",
        "--fail-on-regression",
        "10",
        "--fail-on-new-latency-bound",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "pass"
    assert doc["totals"]["delta_s"] == 0 and doc["totals"]["delta_pct"] == 0
    assert (
        len(doc["groups"]) == 4
    )  # cutlass (6 launches), cuBLAS (1), two InitializeMatrix (2 each)
    assert {g["match"] for g in doc["groups"]} == {"exact"}
    assert {g["status"] for g in doc["groups"]} == {"unchanged"}
    assert all(
        g["delta_s"] == 0 and g["mean_delta_pct"] == 0 and g["headroom_delta_s"] == 0
        for g in doc["groups"]
    )
    assert not doc["device_changed"] and doc["ceiling_changes"] == [] and doc["warnings"] == []


def test_table_is_the_default_and_says_pass():
    res = run("diff", A100, A100)
    assert res.exit_code == 0
    assert res.stdout.startswith(
        "rooflint diff: PASS (no gate set) — total time +0.0 % [+0.0, +0.0] "
        "(base 906 ms → head 906 ms)"
    )
    assert "nothing was gated" in res.stdout.splitlines()[1]


# --- one kernel 30 % slower --------------------------------------------------------------------


def test_kernel_thirty_percent_slower_fails_the_gate_and_is_named_first(tmp_path):
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.3)
    lean = raw_durations(base, LEAN)
    assert len(lean) == 8
    res = run("diff", base, head, "--fail-on-regression", "10", "-f", "json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    first = doc["groups"][0]
    assert first["kernel"] == LEAN_FULL and first["status"] == "slower"
    assert first["base"]["duration_s"] == pytest.approx(sum(lean), rel=1e-12)
    assert first["head"]["duration_s"] == pytest.approx(1.3 * sum(lean), rel=1e-12)
    assert first["mean_delta_pct"] == pytest.approx(0.3, rel=1e-9)
    # every launch × 1.3: each of the 8 pairs has the ratio 1.3, so the interval is 1.3 too
    assert first["method"] == "paired" and first["pairs"] == 8
    assert first["change"] == pytest.approx(0.3, rel=1e-9)
    assert first["change_low"] == pytest.approx(0.3, rel=1e-9)
    assert first["change_high"] == pytest.approx(0.3, rel=1e-9)
    assert first["run_noise"] is None  # one run a side: not measured
    assert doc["groups"][1]["status"] == "unchanged"
    assert (
        f"gate failed: kernel {names.short_name(first['kernel'])} "
        f"[{names.short_id(first['kernel'])}] "
        "time +30.0 % [+30.0, +30.0] paired, 8 launches (mean per launch 7.6 µs → 9.87 µs) "
        "exceeds --fail-on-regression 10 %" in res.stderr
    )
    assert "total time" not in res.stderr  # +1.1 % in total is under the threshold


def test_kernel_thirty_percent_slower_markdown_renders_with_the_right_numbers(tmp_path):
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.3)
    lean = sum(raw_durations(base, LEAN))
    total = sum(raw_durations(base, ""))
    res = run("diff", base, head, "--fail-on-regression", "10", "-f", "markdown")
    assert res.exit_code == 1
    md = res.stdout
    first_line = md.splitlines()[0]
    expected_total = f"+{0.3 * lean / total * 100:.1f} %"  # 18.2 µs more on 1.59 ms
    # the interval's brackets are escaped in Markdown
    assert first_line.startswith(f"### ❌ rooflint diff: FAIL — total time {expected_total} \\[")
    assert first_line.endswith(
        f"\\] (base {total * 1e3:.3g} ms → head {(total + 0.3 * lean) * 1e3:.3g} ms); 1 slower"
    )
    html, tables = rendered(md)
    top = as_dicts(tables[0])
    assert len(top) == 1  # the other kernel did not change
    row = top[0]
    assert row["kernel"] == names.short_name(LEAN_FULL)
    assert row["base"] == f"{lean * 1e6:.3g} µs" == "60.8 µs"
    assert row["head"] == f"{1.3 * lean * 1e6:.3g} µs" == "79 µs"
    assert row["Δ time"] == f"+{0.3 * lean * 1e6:.3g} µs"
    assert row["Δ %"] == "+30.0 %" and row["change [CI]"] == "+30.0 % [+30.0, +30.0]"
    assert row["method"] == "paired, 8 launches" and row["run noise"] == "—"
    assert row["status"] == "slower"
    assert "<details>" in html and "</details>" in html
    everything = as_dicts(tables[1])
    assert [r["status"] for r in everything] == ["slower", "unchanged"]


def test_total_time_gate_restates_the_numbers(tmp_path):
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", SDPA, 1.3)
    sdpa, total = sum(raw_durations(base, SDPA)), sum(raw_durations(base, ""))
    res = run("diff", base, head, "--fail-on-regression", "10")
    assert res.exit_code == 1
    change = 0.3 * sdpa / total
    message = next(line for line in res.stderr.splitlines() if "total time" in line)
    assert message.startswith(f"rooflint: gate failed: total time +{change * 100:.1f} % [")
    head_ms = (total + 0.3 * sdpa) * 1e3
    assert message.endswith(
        f"] (base {total * 1e3:.3g} ms → head {head_ms:.3g} ms) exceeds --fail-on-regression 10 %"
    )


def test_uniform_change_inside_the_spread_of_launches_is_a_regression(tmp_path):
    # The spread of a group's launches (7.2 % here) says how they differ from each other, not how
    # a launch varies from run to run: +5 % on every launch is a real change, beyond a 2 % gate.
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.05)
    res = run("diff", base, head, "--fail-on-regression", "2", "-f", "json")
    assert res.exit_code == 1, res.stderr
    first = json.loads(res.stdout)["groups"][0]
    assert first["status"] == "slower" and first["change_low"] == pytest.approx(0.05, rel=1e-9)
    assert run("diff", base, head, "--fail-on-regression", "10").exit_code == 0


def test_min_time_ignores_small_groups(tmp_path):
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.3)
    res = run("diff", base, head, "--fail-on-regression", "10", "--min-time", "5%", "-f", "json")
    assert res.exit_code == 0, (
        res.stderr
    )  # 3.8 % of the time in base, 4.9 % in head: both under 5 %
    first = json.loads(res.stdout)["groups"][0]
    assert first["ignored"] and first["status"] == "ignored"


# --- the noise rule on hand-built launches -----------------------------------------------------

BASE_MS = [1.0, 1.1, 0.9]


@pytest.mark.parametrize(
    ("factors", "status"),
    [
        # +4 %: under the 10 % threshold, but its interval (+1.5 %, +6.5 %) excludes 0
        ([1.03, 1.05, 1.04], diff.SLOWER_WITHIN),
        ([0.97, 0.95, 0.96], diff.FASTER_WITHIN),
        ([0.98, 1.03, 1.00], diff.UNCHANGED),  # +0.3 %, its interval (-6 %, +7 %) holds 0
        ([1.05, 1.35, 1.20], diff.NOISE),  # +19 %, but the interval reaches below +10 %
        ([1.24, 1.26, 1.25], diff.SLOWER),  # +25 %, the whole interval above +10 %
        ([0.74, 0.76, 0.75], diff.FASTER),
    ],
)
def test_noise_rule_on_paired_launches(factors, status):
    head_ms = [b * f for b, f in zip(BASE_MS, factors, strict=True)]
    base = synthetic(timed("k", [t * 1e-3 for t in BASE_MS], roof=1e-4))
    head = synthetic(timed("k", [t * 1e-3 for t in head_ms], roof=1e-4))
    row = diff.compare(base, head, threshold=0.10).groups.iloc[0]
    # expected: a one-sample t interval on the log ratios, as scipy.stats computes it
    logs = np.log(np.array(factors))
    ci = stats.ttest_1samp(logs, 0.0).confidence_interval(0.95)
    assert row["method"] == "paired" and row["pairs"] == 3
    assert row["change"] == pytest.approx(np.expm1(logs.mean()), rel=1e-9)
    assert row["change_low"] == pytest.approx(np.expm1(ci.low), rel=1e-6, abs=1e-12)
    assert row["change_high"] == pytest.approx(np.expm1(ci.high), rel=1e-6, abs=1e-12)
    assert row["status"] == status
    if abs(row["change"]) <= 0.10:  # under the threshold: unchanged exactly when 0 is in reach
        assert (row["change_low"] <= 0 <= row["change_high"]) == (status == diff.UNCHANGED)


def test_too_few_launches_are_judged_on_the_threshold_alone():
    base = synthetic(timed("k", [1.0e-3]))
    head = synthetic(timed("k", [1.0e-3, 1.6e-3]))
    row = diff.compare(base, head, threshold=0.10).groups.iloc[0]
    assert row["mean_delta_pct"] == pytest.approx(0.3)
    assert row["method"] == "threshold only" and np.isnan(row["change_low"])
    assert row["change"] == pytest.approx(np.sqrt(1.0 * 1.6) - 1)  # ratio of geometric means
    assert row["status"] == diff.SLOWER


# --- matching ------------------------------------------------------------------------------------


def test_matching_exact_then_name_then_base_name():
    base = synthetic(
        timed("copy", [1e-3])
        + timed("gemm<128, 64>", [2e-3])
        + timed("old", [1e-3])
        + timed("scale", [1e-3], grid="(4, 1, 1)")
    )
    head = synthetic(
        timed("copy", [1e-3])
        + timed("gemm<256, 128>", [2e-3])
        + timed("new", [1e-3])
        + timed("scale", [1e-3], grid="(8, 1, 1)")
    )
    rows = {r["kernel"]: r for r in diff.compare(base, head).groups.to_dict(orient="records")}
    assert rows["copy"]["match"] == diff.EXACT
    assert rows["scale"]["match"] == diff.NAME
    assert (rows["scale"]["grid_base"], rows["scale"]["grid_head"]) == ("(4, 1, 1)", "(8, 1, 1)")
    assert rows["gemm<256, 128>"]["match"] == diff.BASE_NAME
    assert rows["gemm<256, 128>"]["kernel_base"] == "gemm<128, 64>"
    assert rows["new"]["match"] == diff.HEAD_ONLY and rows["new"]["status"] == diff.NEW
    assert rows["old"]["match"] == diff.BASE_ONLY and rows["old"]["status"] == diff.REMOVED
    assert rows["old"]["delta_s"] == pytest.approx(-1e-3)


def test_fuzzy_matches_are_reported_as_such():
    base = synthetic(timed("gemm<128, 64>", [2e-3]))
    head = synthetic(timed("gemm<256, 128>", [2e-3]))
    d = diff.compare(base, head)
    md = diff_markdown.render(d, [])
    _, tables = rendered(md)
    assert as_dicts(tables[0])[0]["match"] == "fuzzy: base name"
    assert "**Fuzzy matches**" in md
    assert d.totals["matched"] == {"exact": 0, "name": 0, "base-name": 1}


def test_real_template_kernels_keep_their_exact_partner(tmp_path):
    # InitializeMatrix_kernel<__half> and <float> share a base name; removing <float> from base
    # must leave head's <float> unmatched rather than pair it with <__half>.
    base = details_without(A100, tmp_path / "base.csv", "InitializeMatrix_kernel<float")
    res = run("diff", base, A100, "-f", "json")
    groups = {g["kernel"]: g for g in json.loads(res.stdout)["groups"]}
    half = groups["void InitializeMatrix_kernel<__half, (bool)1>(T1 *, int, int, int)"]
    new = groups[INIT_FLOAT]
    assert half["match"] == "exact" and new["match"] == "head-only" and new["status"] == "new"


# --- new latency-bound kernels ----------------------------------------------------------------


@pytest.mark.e2e  # over a second
def test_new_latency_bound_kernel_trips_the_gate(tmp_path):
    base = details_without(A100, tmp_path / "base.csv", "InitializeMatrix_kernel<float")
    ok = run("diff", base, A100, "--fail-on-regression", "50")
    assert ok.exit_code == 0, ok.stderr  # +1 % in total
    res = run("diff", base, A100, "--fail-on-new-latency-bound")
    assert res.exit_code == 1
    assert (
        f"gate failed: kernel {names.short_name(INIT_FLOAT)} [{names.short_id(INIT_FLOAT)}]"
        in res.stderr
    )
    assert "is latency-bound in head (efficiency 48 %" in res.stderr
    assert "did not exist in base; --fail-on-new-latency-bound" in res.stderr
    assert run("diff", A100, A100, "--fail-on-new-latency-bound").exit_code == 0


def test_kernel_turning_latency_bound_trips_the_gate():
    # 1 ms of DRAM traffic: 1.1 ms is 91 % of the roof (memory-bound), 3 ms is 33 % (latency-bound)
    base = synthetic(timed("stream", [1.1e-3]))
    head = synthetic(timed("stream", [3.0e-3]))
    from rooflint.core import gates

    d = diff.compare(base, head)
    row = d.groups.iloc[0]
    assert (row["verdict_base"], row["verdict_head"]) == ("memory-bound", "latency-bound")
    assert row["efficiency_base"] == pytest.approx(1 / 1.1) and row[
        "efficiency_head"
    ] == pytest.approx(1 / 3)
    failed = gates.failures(gates.diff_gates(d, fail_on_new_latency_bound=True))
    assert len(failed) == 1 and failed[0].startswith("gate failed: kernel stream [")
    assert "is latency-bound in head (efficiency 33 %, 3 ms) and was memory-bound" in failed[0]


# --- sanity: above the roof, other devices --------------------------------------------------------


def test_speed_up_above_the_roof_is_a_measurement_problem_not_a_win():
    base = synthetic(timed("stream", [1.1e-3]))
    head = synthetic(timed("stream", [0.5e-3]))  # twice as fast as DRAM allows
    d = diff.compare(base, head)
    row = d.groups.iloc[0]
    assert row["verdict_head"] == "above-roof" and row["status"] == diff.ABOVE_ROOF
    assert d.warnings[0].startswith(
        "measurement problem: stream is above its roof in head (efficiency 200 %)"
    )
    md = diff_markdown.render(d, [])
    assert "faster" not in md.split("<details>")[0]
    assert "measurement problem (above roof)" in md


@pytest.mark.e2e  # over a second
def test_other_device_is_shown_at_the_top(tmp_path):
    head = saved_report(tmp_path, A100, "sxm.json", "--device", "a100-sxm4-80gb")
    res = run("diff", A100, head)
    assert res.exit_code == 0
    lines = res.stdout.replace("\n    ", " ").splitlines()  # long lines wrap at 100 columns
    assert lines[3].startswith(
        "!! different devices: base ran on NVIDIA A100 PCIe 40GB (a100-pcie-40gb), head on "
        "NVIDIA A100 SXM4 80GB (a100-sxm4-80gb)"
    )
    sxm = hardware.get("a100-sxm4-80gb").memory["dram"].value
    assert lines[4] == (
        # the link roof too: PCIe Gen4 x16 (a100-pcie-40gb), NVLink 3 per direction (a100-sxm4-80gb)
        f"!! ceilings changed: dram 1.55 TB/s → {sxm / 1e12:.3g} TB/s, link 31.5 GB/s → 300 GB/s; "
        "efficiencies and verdicts are measured against different roofs"
    )
    md = run("diff", A100, head, "-f", "markdown").stdout.splitlines()
    assert md[2].startswith("> ⚠️ **different devices**:")


def test_head_above_roof_on_a_real_profile(tmp_path):
    from tests.helpers import tiny_roofs

    head = saved_report(
        tmp_path, A100, "tiny.json", "--device-file", tiny_roofs(tmp_path)
    )  # far lower roofs
    doc = json.loads(run("diff", A100, head, "-f", "json").stdout)
    assert doc["device_changed"]
    assert {g["status"] for g in doc["groups"]} == {"measurement problem"}
    assert sum(w.startswith("measurement problem:") for w in doc["warnings"]) == 4


# --- saved reports --------------------------------------------------------------------------------


@pytest.mark.e2e  # over a second
@pytest.mark.parametrize("profile", [A100, B200_RAW], ids=["a100-details", "b200-raw"])
def test_saved_report_diffs_like_the_profile(tmp_path, profile):
    head = tmp_path / "head.csv"
    if "raw" in profile.name:
        scaled_raw(profile, head, LEAN, 1.3)
    else:
        details_without(profile, head, "InitializeMatrix_kernel<float")
    base_json = saved_report(
        tmp_path, profile, "base.json", "--top", "1"
    )  # --top cuts kernels, not launches
    from_profile = json.loads(run("diff", profile, head, "-f", "json").stdout)
    from_saved = json.loads(run("diff", base_json, head, "-f", "json").stdout)
    assert from_saved["base"]["saved_report"].startswith("rooflint ")
    for key in ("groups", "totals", "warnings", "device_changed", "ceiling_changes", "summary"):
        assert from_saved[key] == from_profile[key], key


def test_saved_report_reads_back_every_launch():
    res = pipeline.build([str(A100)])
    text = run("report", A100, "-f", "json", "-q").stdout
    doc = json.loads(text)
    loaded = saved.launch_table(doc["launches"], "x", doc["sources"])
    pd.testing.assert_frame_equal(loaded, res.launches, check_exact=True, check_like=True)


def _saved_both_ways(path: Path, monkeypatch) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The launches of the JSON report at `path` read a few lines at a time (the writer's
    layout) and read whole (json.load, as any other layout is)."""
    monkeypatch.setattr(saved, "CHUNK_BYTES", 300)  # a chunk every line or two
    chunked = saved.read_document(path)["launches"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    whole = saved.launch_table(doc["launches"], path, doc["sources"])
    return chunked, whole


@pytest.mark.e2e  # over a second
def test_saved_report_read_in_chunks_is_the_report_read_whole(tmp_path, monkeypatch):
    """A report of ncu and rocprof exports and a PyTorch trace (whose op/module columns are
    present on some launches only): the table read chunk by chunk is the table read whole."""
    inputs = [A100, RTX, FIXTURES / "kineto" / "tracelens-h100-bert-small-uncased.json.gz"]
    for i, source in enumerate(inputs):
        out = tmp_path / f"r{i}.json"
        assert run("report", source, "-f", "json", "-q", "-o", out).exit_code == 0
        chunked, whole = _saved_both_ways(out, monkeypatch)
        assert isinstance(chunked, pd.DataFrame) and len(chunked) == len(whole) > 0
        pd.testing.assert_frame_equal(chunked, whole, check_exact=True)


def test_a_trace_is_not_parsed_to_learn_it_is_no_report(tmp_path, monkeypatch):
    """`rooflint diff trace.json ...` asks whether each side is a saved report: a JSON file
    without a format_version key is not, and is left unparsed for its own reader."""
    trace = tmp_path / "t.json"
    trace.write_text('{"schemaVersion": 1, "traceEvents": []}')
    monkeypatch.setattr(saved.json, "loads", lambda *a, **k: pytest.fail("parsed"))
    assert saved.read_document(trace) is None


def test_saved_report_in_another_layout_or_cut_short(tmp_path):
    """CRLF line ends (a checkout on Windows): read whole, the same launches. A launch line cut
    in the middle: one clear error naming the file, exit 2."""
    out = tmp_path / "r.json"
    run("report", A100, "-f", "json", "-q", "-o", out)
    expected = saved.load(out).launches
    crlf = tmp_path / "crlf.json"
    crlf.write_bytes(out.read_bytes().replace(b"\n", b"\r\n"))
    pd.testing.assert_frame_equal(saved.load(crlf).launches, expected, check_exact=True)
    lines = out.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b'  {"source_index"'))
    lines[at + 1] = lines[at + 1][:40]
    cut = tmp_path / "cut.json"
    cut.write_bytes(b"\n".join(lines))
    result = run("diff", cut, out)
    assert result.exit_code == 2
    assert "cut.json" in result.output and "not valid JSON" in result.output
    assert "Traceback" not in result.output


# Reports saved by rooflint before format_version 2 (the golden files as that release wrote them):
# every launch names its source and carries its null fields.
V1 = {
    "a100": ROOT / "tests" / "golden" / "v1" / "a100-gemm-details.json",
    "rtx": ROOT / "tests" / "golden" / "v1" / "rtx2080ti-sgemm-raw-base.json",
}


# The version-1 files were written by an earlier rooflint, which placed the A100 sample on the
# a100-sxm4-80gb and had no sm_count/dram_clock_hz columns: compare on what version 1 carried.
V1_DEVICE = {"a100": "a100-sxm4-80gb", "rtx": None}


def test_version_1_reports_still_read_back_every_launch(monkeypatch):
    """Each launch of a version-1 report comes back as today's reader reads the profile; its
    roofline columns as the ceilings the report saved give them (the catalog has changed
    since: its peaks are rates x units x clocks, no longer the datasheet's rounded figures)."""
    monkeypatch.chdir(ROOT)  # the golden files name their sources relative to the repository
    for name, profile in (("a100", A100), ("rtx", RTX)):
        doc = json.loads(V1[name].read_text())
        assert doc["format_version"] == 1
        old = saved.load(V1[name])
        built = pipeline.build(
            [str(profile.relative_to(ROOT))], pipeline.options(device=V1_DEVICE[name])
        )
        again = rooflint.analyze(built.launches[schema.COLUMNS], old.devices[0].device)
        columns = [c for c in doc["launches"][0] if c in built.launches]
        expected = built.launches[columns].copy()
        for column in [c for c in columns if c in again and c not in schema.COLUMNS]:
            expected[column] = again[column]
        pd.testing.assert_frame_equal(old.launches[columns], expected, check_exact=True)


@pytest.mark.e2e  # over a second
def test_version_1_and_version_2_reports_diff_alike(tmp_path):
    """The same launches and ceilings saved in either version diff alike."""
    new = {}
    for name in ("a100", "rtx"):
        new[name] = tmp_path / f"{name}.json"
        new[name].write_text(reporters.render(saved.load(V1[name]), "json"))
    assert json.loads(new["a100"].read_text())["format_version"] == 3
    from_v1 = run("diff", V1["a100"], V1["rtx"], "-f", "json")
    from_v2 = run("diff", new["a100"], new["rtx"], "-f", "json")
    assert from_v1.exit_code == from_v2.exit_code
    old, now = json.loads(from_v1.stdout), json.loads(from_v2.stdout)
    for key in ("verdict", "summary", "totals", "groups", "ceiling_changes"):
        assert old[key] == now[key], key


def test_a_source_index_outside_sources_is_a_clear_error(tmp_path):
    doc = json.loads(saved_report(tmp_path, A100, "r.json").read_text())
    doc["launches"][0]["source_index"] = 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    res = run("diff", bad, A100)
    assert res.exit_code == 2 and "'source_index' is not an index into 'sources'" in res.stderr


def test_newer_format_version_is_a_clear_error(tmp_path):
    doc = json.loads(saved_report(tmp_path, A100, "r.json").read_text())
    doc["format_version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    res = run("diff", newer, A100)
    assert res.exit_code == 2
    assert res.stderr.startswith(
        f"rooflint: error: {newer}: written by a newer rooflint (rooflint "
    )
    assert (
        "format_version 99); this rooflint reads format_version 3 and older: upgrade rooflint"
        in res.stderr
    )


def test_diff_json_is_not_taken_for_a_report(tmp_path):
    out = tmp_path / "d.json"
    assert run("diff", A100, A100, "-o", out).exit_code == 0
    res = run("diff", out, A100)
    assert res.exit_code == 2 and "this is a saved `rooflint diff`, not a report" in res.stderr


def test_other_json_is_not_a_profile(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"format_version": 1, "tool": "something else"}')
    res = run("diff", other, A100)
    assert res.exit_code == 2 and res.stderr.startswith(f"rooflint: error: {other}: ")


# --- the same report exported two ways ------------------------------------------------------------


def _two_exports() -> diff.Diff:
    folder = "ncu/reexport-ncu2024.2/"
    sides = [
        diff.Side(p, pipeline.build([str(shared(folder + p))]))
        for p in ("rtx2080ti-sgemm-details-all-names-base.csv", "rtx2080ti-sgemm-raw-base.csv")
    ]
    return diff.compare(*sides)


@pytest.mark.e2e
def test_same_report_exported_two_ways_has_zero_kernel_change():
    d = _two_exports()
    assert len(d.groups) == 1
    row = d.groups.iloc[0]
    assert row["match"] == diff.EXACT and row["status"] == diff.UNCHANGED
    for side_field in diff.SIDE_FIELDS:
        if side_field != "device_id":
            assert str(row[f"{side_field}_base"]) == str(row[f"{side_field}_head"]), side_field
    assert row["delta_s"] == 0 and row["headroom_delta_s"] == 0 and row["efficiency_delta"] == 0
    assert d.totals["delta_s"] == 0


@pytest.mark.e2e
def test_same_report_exported_two_ways_has_the_same_device_and_ceilings():
    # the details page names the GPU only in its embedded NUMA table ("GPU Name")
    d = _two_exports()
    assert not d.device_changed
    assert d.ceiling_changes == []


# --- Markdown: escaping, size, GitHub -------------------------------------------------------------

NASTY = "void k<float, Op<|>>(T1 *, `tick` | *bold* _u_ [link](x) & <b>html</b>)"
BARE = "fused_`add`|*relu*_[k]&amp;"  # no template to elide: the short name keeps every character


def test_markdown_escapes_kernel_names_so_they_survive():
    base = synthetic(timed(NASTY, [1e-3]) + timed(BARE, [1e-3]))
    head = synthetic(timed(NASTY, [2e-3]) + timed(BARE, [3e-3]))
    md = diff_markdown.render(diff.compare(base, head), [])
    html, tables = rendered(md)
    assert "<b>html</b>" not in html and "<a " not in html  # no raw HTML, no link
    assert all(len(row) == len(diff_markdown.dc.HEADER) for row in tables[0])  # no pipe split a row
    # emphasis or code would swallow the *, _ and ` characters: the text a reader sees is the name
    assert [r["kernel"] for r in as_dicts(tables[0])] == [BARE, names.short_name(NASTY)]
    text = text_of(html)
    assert f"{names.short_id(NASTY)} {NASTY}" in text and f"{names.short_id(BARE)} {BARE}" in text


def text_of(html: str) -> str:
    parser = Text()
    parser.feed(html)
    return "".join(parser.parts)


class Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


@pytest.mark.e2e  # over a second
def test_markdown_stays_under_the_github_limit_and_says_what_was_cut():
    long = (
        "void very_long_kernel_name_{i}<"
        + ", ".join(f"cutlass::arch::Sm{n}" for n in range(60))
        + ">()"
    )
    base = synthetic([launch for i in range(400) for launch in timed(long.format(i=i), [1e-3])])
    head = synthetic([launch for i in range(400) for launch in timed(long.format(i=i), [1.5e-3])])
    md = diff_markdown.render(diff.compare(base, head), [])
    assert len(md) < diff_markdown.LIMIT
    assert "run `rooflint diff --format json` for everything" in md
    html, tables = rendered(md)
    assert html.rstrip().endswith("</details>")
    assert len(tables[0]) == 11  # header + the top 10 changes


def test_github_format_appends_to_the_step_summary_and_prints(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    base = B200_RAW
    head = scaled_raw(base, tmp_path / "head.csv", LEAN, 1.3)
    res = run(
        "diff",
        base,
        head,
        "--format",
        "github",
        "--fail-on-regression",
        "10",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert res.exit_code == 1
    written = summary.read_text()
    assert written.startswith("earlier step\n### ❌ rooflint diff: FAIL")
    assert res.stdout.startswith(written.removeprefix("earlier step\n"))
    assert (
        f"::error title=rooflint::gate failed: kernel {names.short_name(LEAN_FULL)} [" in res.stdout
    )
    assert "+30.0 %25" in res.stdout  # % escaped for the workflow command


@pytest.mark.e2e  # over a second
def test_output_file_is_written_and_format_follows_the_extension(tmp_path):
    out = tmp_path / "diff.md"
    res = run("diff", A100, A100, "-o", out)
    assert res.exit_code == 0 and res.stdout == ""
    assert out.read_text().startswith("### ✅ rooflint diff: PASS")
    out_json = tmp_path / "diff.json"
    run("diff", A100, A100, "-o", out_json)
    doc = json.loads(out_json.read_text())
    assert doc["format_version"] == diff.DIFF_FORMAT_VERSION and doc["kind"] == "diff"
    assert doc["units"]["delta_s"] == "s" and doc["units"]["efficiency"] == "fraction of attainable"


def test_missing_input_is_an_error_naming_it(tmp_path):
    res = run("diff", tmp_path / "nope.csv", A100, "-o", tmp_path / "out.md")
    assert res.exit_code == 2
    assert (
        res.stderr
        == f"rooflint: error: {tmp_path / 'nope.csv'}: no such file or folder; check the path\n"
    )
    assert not (tmp_path / "out.md").exists()


# --- wording: a change under the gate is still a change (issue 31) ------------------------------


def test_thirty_percent_under_a_fifty_percent_gate_is_slower_within_the_threshold(tmp_path):
    """lean_reduction_kernel's 8 launches each 1.3x longer: +30 % [+30.0, +30.0] (every pair the
    ratio 1.3), under a 50 % gate. It passes the gate but it is not "unchanged"; the sdpa kernel,
    untouched (interval [0, 0]), is."""
    head = scaled_raw(B200_RAW, tmp_path / "head.csv", LEAN, 1.3)
    res = run("diff", B200_RAW, head, "--fail-on-regression", "50", "-f", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [g["status"] for g in doc["groups"]] == [diff.SLOWER_WITHIN, diff.UNCHANGED]
    assert doc["totals"]["status"][diff.SLOWER_WITHIN] == 1
    assert doc["totals"]["status"][diff.UNCHANGED] == 1
    table = run("diff", B200_RAW, head, "--fail-on-regression", "50", env={"COLUMNS": "200"})
    row = next(line for line in table.stdout.splitlines() if "lean_reduction" in line)
    assert re.search(r"\+30\.0 % \[\+30\.0, \+30\.0\] +slower, within the threshold$", row)


def test_a_uniform_small_change_is_not_unchanged(tmp_path):
    """+0.3 % on every launch (ratio 1.003 for each of the 8 pairs): the interval is [+0.3, +0.3],
    which excludes 0, so under the default 5 % threshold it is slower, within the threshold."""
    head = scaled_raw(B200_RAW, tmp_path / "head.csv", LEAN, 1.003)
    lean = next(g for g in diff_groups(B200_RAW, head) if LEAN in g["kernel"])
    assert lean["change_low"] == pytest.approx(0.003, rel=1e-9)
    assert lean["status"] == diff.SLOWER_WITHIN


def diff_groups(base, head) -> list[dict]:
    res = run("diff", base, head, "-f", "json")
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)["groups"]


def test_the_headline_efficiency_says_it_counts_launches_above_the_roof(tmp_path):
    """The A100 export (11 launches) against itself on roofs too small for it (tests/helpers.py
    tiny_roofs): every head launch is above its roof, and the efficiencies include them, so every
    diff format says so."""
    base = rooflint.report(A100)
    head = rooflint.report(A100, device_file=str(tiny_roofs(tmp_path)))
    assert head.summary.above_roof_launches == 11
    d = rooflint.diff(base, head)
    assert (d.totals["above_roof_base"], d.totals["above_roof_head"]) == (0, 11)
    clause = "(including launches above the roof: base 0, head 11)"
    assert clause in diff_table.render(d, [])
    assert clause in diff_markdown.render(d, [])
    plain = rooflint.diff(base, base)
    assert "above the roof" not in diff_table.render(plain, [])


def test_the_diff_format_version_is_the_one_the_docs_give():
    """docs/json-format.md names each document's version; version 3 of the diff (what the
    totals of two traces, short_id and 'unchanged' mean changed since version 2) is described."""
    from rooflint.core import report_schema

    text = (ROOT / "docs" / "json-format.md").read_text(encoding="utf-8")
    report, version = report_schema.FORMAT_VERSION, diff.DIFF_FORMAT_VERSION
    assert f"(report `{report}`, diff `{version}`)" in text
    assert f"Version {diff.DIFF_FORMAT_VERSION} of the diff" in text
    assert diff.DIFF_FORMAT_VERSION == 3
