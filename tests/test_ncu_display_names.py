"""Nsight Compute exports that label metrics by display name, and pages without grid and block
columns: the same launches, counters and launch configuration as the metric-name exports."""

from __future__ import annotations

import csv
import io

import pytest

import rooflint
from rooflint.parsers import ncu_launch, ncu_metrics, ncu_sol
from tests.helpers import FIXTURES, shared

REEXPORT = "ncu/reexport-ncu2024.2"
# The 2080 Ti sgemm report exported twice with ncu 2024.2 and --print-details all: by display
# name in auto units, and by metric name (--print-metric-name name) in base units.
BY_LABEL = f"{REEXPORT}/rtx2080ti-sgemm-details-all.csv"
BY_NAME = f"{REEXPORT}/rtx2080ti-sgemm-details-all-names-base.csv"
# One quantity that ncu labels alike wherever it shows it: the table maps the label to one name.
SAME_QUANTITY = {
    "SM Frequency": {
        "gpc__cycles_elapsed.avg.per_second",
        "sm__cycles_elapsed.avg.per_second",
        "smsp__cycles_elapsed.avg.per_second",
    }
}


def _label_pairs() -> dict[str, set[str]]:
    """Each display name of BY_LABEL with the metric names its rows carry in BY_NAME (the two
    files list the same rows in the same order)."""
    labelled = list(csv.reader(shared(BY_LABEL).open(encoding="utf-8")))
    named = list(csv.reader(shared(BY_NAME).open(encoding="utf-8")))
    assert len(labelled) == len(named)
    at, at_name = labelled[0].index("Metric Name"), named[0].index("Metric Name")
    pairs: dict[str, set[str]] = {}
    for a, b in zip(labelled[1:], named[1:], strict=True):
        if len(a) > at and len(b) > at_name and a[at]:
            pairs.setdefault(a[at], set()).add(b[at_name])
    return pairs


def test_every_display_name_maps_to_a_metric_rooflint_reads():
    for label, name in ncu_metrics.DISPLAY_NAMES.items():
        assert ncu_metrics.wanted(name), f"{label!r} -> {name}: rooflint does not read it"
        assert not ncu_metrics.wanted(label), label


def test_the_table_holds_every_label_of_a_metric_rooflint_reads():
    """Both ways over the real pair of exports: every label the table has names the metric the
    same rows carry, and every metric rooflint reads that ncu shows under another label is in
    the table (so a details page by display name loses none of them)."""
    pairs = _label_pairs()
    table = ncu_metrics.DISPLAY_NAMES
    for label, names in pairs.items():
        read = {n for n in names if ncu_metrics.wanted(n)}
        if not read or names == {label}:
            continue  # no metric rooflint reads, or one ncu shows under its own name
        # the table, else the pipes' rule, else the launch facts' (parsers/ncu_launch.py)
        name = table.get(label) or ncu_sol.metric_of(label) or ncu_launch.metric_of(label)
        assert name, f"{label!r} ({', '.join(sorted(read))}) is not in the table"
        assert name in read, label
        if label == "Memory Throughput":  # a % here, a byte/s rate there: the reader keeps the rate
            continue
        assert read == {name} or read <= SAME_QUANTITY.get(label, set()), label
    attested = {label for label, names in pairs.items() if names != {label}}
    # the rest are labels of other pages: the H200 details page's "# SMs" (unit SM, 132) and the
    # older "Memory Frequency" of the DRAM clock
    assert set(table) - attested == {"# SMs", "Memory Frequency"}


def test_the_display_name_export_finds_the_flop_counters():
    """Its metric-name twin gives 26,419,277 FLOPs: (2 x 936.30 FFMA + 14.63 FMUL + 0 FADD)
    per cycle over 1.072e-5 s x 1,305,874,122 Hz. The display-name export prints the SM clock
    as 1.31 GHz (auto units), so the same counters give 1887.23 x 1.31e9 x 1.072e-5 =
    26,502,748, the twin's count x 1.31 / 1.305874."""
    by_label = rooflint.load(shared(BY_LABEL))
    by_name = rooflint.load(shared(BY_NAME))
    assert by_name["ops_vector_fp32"].iloc[0] == pytest.approx(26_419_277, abs=1)
    flops = by_label["ops_vector_fp32"].iloc[0]
    assert flops == pytest.approx((2 * 936.30 + 14.63) * 1.31e9 * 10.72e-6, rel=1e-12)
    assert flops == pytest.approx(by_name["ops_vector_fp32"].iloc[0] * 1.31 / 1.305874122)
    assert by_label["ops_vector_fp64"].iloc[0] == 0
    # the run's own FP32 roof: 4352 FFMA per cycle ("Theoretical Predicated-On FFMA Thread
    # Instructions Executed") x 2 x "SM Frequency"
    assert by_label["peak_vector_fp32"].iloc[0] == pytest.approx(2 * 4352 * 1.31e9)
    result = rooflint.report(shared(BY_LABEL))
    assert result.summary.accounting["not_analysable"] == 0


def _without(path, columns: set[str], tmp_path):
    """A real raw page with some columns removed (ncu 2022.3 raw pages carry no "Grid Size" or
    "Block Size" column; no such file is public, so one is made from a later export)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    rows = list(csv.reader(io.StringIO("".join(lines[start:]))))
    keep = [i for i, name in enumerate(rows[0]) if name not in columns]
    assert len(keep) == len(rows[0]) - len(columns)
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        [[row[i] for i in keep] for row in rows]
    )
    target = tmp_path / path.name
    target.write_text("".join(lines[:start]) + out.getvalue(), encoding="utf-8")
    return target


RAW = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"  # grid (2, 25, 1), block (256, 1, 1)


def test_raw_page_without_grid_and_block_columns_keeps_them(tmp_path):
    page = _without(RAW, {"Grid Size", "Block Size"}, tmp_path)
    launches = rooflint.load(page)
    # launch__grid_dim_x/y/z = 2, 25, 1 and launch__block_dim_x/y/z = 256, 1, 1 in the file
    assert launches[["grid", "block"]].values.tolist() == [["(2, 25, 1)", "(256, 1, 1)"]]
    assert launches["ops_vector_fp32"].iloc[0] == rooflint.load(RAW)["ops_vector_fp32"].iloc[0]


def test_without_every_dimension_the_totals_stand_in(tmp_path):
    gone = {"Grid Size", "Block Size", "launch__grid_dim_x", "launch__block_dim_z"}
    launches = rooflint.load(_without(RAW, gone, tmp_path))
    # launch__grid_size = 2 x 25 x 1 = 50 blocks, launch__block_size = 256 threads
    assert launches[["grid", "block"]].values.tolist() == [["50", "256"]]


def test_old_details_pages_get_grid_and_block_from_their_launch_statistics():
    """ncu 2019.5 details pages have no grid or block column; their Launch Statistics rows
    "Grid Size" and "Block Size" (launch__grid_size, launch__block_size) give the totals: the
    13 BFS launches are 8 blocks of 512 threads."""
    launches = rooflint.load(shared("ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv"))
    assert len(launches) == 13
    assert launches[["grid", "block"]].drop_duplicates().values.tolist() == [["8", "512"]]
