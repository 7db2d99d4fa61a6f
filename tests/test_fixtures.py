"""The excerpts in fixtures/ are what fixtures/README.md says: pieces of the shared real profiles,
byte for byte (whole files, or whole lines in their order), or a subset of a database's rows."""

from __future__ import annotations

import sqlite3

import pytest

from tests.helpers import FIXTURES, shared

WHOLE, LINES, ROWS = "whole file", "whole lines in order", "rows of the KERN table"
TABLES = "rows of each table"  # a SQLite excerpt: every table's statement, a subset of its rows
# excerpt under fixtures/ -> (its source under shared/fixtures/, what was kept)
EXCERPTS = {
    "ncu/roofline-analysis-b200-ncu2025.x-raw.csv": (
        "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",
        WHOLE,
    ),
    "ncu/nvprof-k20c-metrics.csv": ("ncu/nvprof-k20c-metrics.csv", WHOLE),
    "ncu/rtx3070-nvtx-details-all_daxpy.csv": (
        "ncu/reexport-ncu2024.2/nvtx-details-all.csv",
        LINES,
    ),
    "ncu/rtx3070-nvtx-details-locale-de_DE_head.csv": (
        "ncu/reexport-ncu2024.2/nvtx-details-locale-de_DE.csv",
        LINES,
    ),
    **{
        f"rocprof/{name}": (f"rocprof/{name}", WHOLE)
        for name in (
            "omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
            "omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv",
            "omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv",
            "rocprofcompute31_mi350_rocprofv3_pmc_perf.csv",
        )
    },
    "rocprof/v1_mi200_rocm513_multipass_results_fp64_benchmark.csv": (
        "rocprof/v1_mi200_rocm513_multipass_results.csv",
        LINES,
    ),
    "rocprof/v1_mi250_rocm571_stats_mode_results_head.csv": (
        "rocprof/v1_mi250_rocm571_stats_mode_results.csv",
        LINES,
    ),
    "rocprof/v1_mi250_rocm571_counters_basenames_no_timestamps_head.csv": (
        "rocprof/v1_mi250_rocm571_counters_basenames_no_timestamps.csv",
        LINES,
    ),
    "rocprof/v1_mi250_rocm571_results_head.db": ("rocprof/v1_mi250_rocm571_results.db", ROWS),
    "nsys/nsysai-2xh100-excerpt.sqlite": ("nsys/nsysai-2xh100-1s.sqlite", TABLES),
    **{
        f"kineto/{name}": (f"kineto/{name}", WHOLE)
        for name in ("hta-mi250-minitoy.json.gz", "tracelens-torch_compile_triton-trace.json.gz")
    },
}


def in_order(part: list, whole: list) -> bool:
    """Every item of `part` is in `whole`, in the same order."""
    rest = iter(whole)
    return all(item in rest for item in part)


def kern(path) -> tuple[str, list[tuple]]:
    con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        (sql,) = con.execute("SELECT sql FROM sqlite_master WHERE name = 'KERN'").fetchone()
        return sql, con.execute("SELECT * FROM KERN ORDER BY rowid").fetchall()
    finally:
        con.close()


def test_every_excerpt_has_its_provenance_line():
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for name, (source, _) in EXCERPTS.items():
        assert (FIXTURES / name).is_file(), name
        (line,) = [x for x in readme.splitlines() if x.startswith(f"| `{name}` |")]
        assert f"`{source}`" in line or "| same |" in line, name


def test_the_excerpts_stay_small():
    assert sum((FIXTURES / name).stat().st_size for name in EXCERPTS) < 600_000


@pytest.mark.e2e  # reads the shared fixtures
@pytest.mark.parametrize("name", sorted(EXCERPTS))
def test_excerpt_is_cut_from_its_source(name):
    source_name, kept = EXCERPTS[name]
    source, excerpt = shared(source_name), FIXTURES / name
    if kept == WHOLE:
        assert excerpt.read_bytes() == source.read_bytes()
    elif kept == LINES:
        lines = excerpt.read_bytes().splitlines(keepends=True)
        assert lines[0] == source.read_bytes().splitlines(keepends=True)[0], "the header first"
        assert in_order(lines, source.read_bytes().splitlines(keepends=True))
    elif kept == ROWS:
        (sql, rows), (source_sql, source_rows) = kern(excerpt), kern(source)
        assert sql == source_sql and rows and in_order(rows, source_rows)
    else:
        whole = every_table(source)
        for table, (sql, rows) in every_table(excerpt).items():
            source_sql, source_rows = whole[table]
            assert sql == source_sql and set(rows) <= set(source_rows), table


def every_table(path) -> dict[str, tuple[str, list[tuple]]]:
    """Each table's CREATE statement and rows."""
    con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        names = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        return {n: (sql, con.execute(f'SELECT * FROM "{n}"').fetchall()) for n, sql in names}
    finally:
        con.close()


def test_in_order_tells_an_excerpt_from_an_edit():
    assert in_order([b"h\n", b"b\n"], [b"h\n", b"a\n", b"b\n"])
    assert not in_order([b"b\n", b"a\n"], [b"a\n", b"b\n"])
    assert not in_order([b"a 2\n"], [b"a 1\n", b"b\n"])
