"""rooflint.report(..., launches="pieces"): a folder's launch rows kept on disk file by file and
written from there (rooflint.spill, core.pieces) are the full path's, byte for byte."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import rooflint
from rooflint import reduced, reporters, spill
from rooflint.cli.main import main
from rooflint.core import analysis, pieces, provenance, schema, speed_of_light
from tests.helpers import FIXTURES, replay_folder, shared, with_launches

# Folders whose files' tables have the same columns (rocprof of MI100-MI350; seven PyTorch
# traces, several jobs among them; three RTX 3070 ncu exports, one in de_DE's decimal comma)
FOLDERS = {
    "rocprof": [FIXTURES / "rocprof"],
    "kineto": [FIXTURES / "kineto"],
    "ncu-rtx3070": sorted((FIXTURES / "ncu").glob("rtx3070-*.csv")),
}
# Folders whose analysed tables differ in columns, which took the full path before: every
# bundled ncu export (ncu's percentages standing in for the RTX 3070's and B200's missing
# counters, beside A100, H200, RTX 2080 Ti and nvprof exports with counters: compute_source and
# bytes_source on every row of the joined table, the launch facts NA in the rows of files
# without them), and those beside the rocprof exports.
MIXED = {
    "ncu": [FIXTURES / "ncu"],
    "ncu-rocprof": [FIXTURES / "ncu", FIXTURES / "rocprof"],
}
FOLDERS.update(MIXED)
# (format, options, the rows the registry says it needs with them)
RENDERS = [
    ("json", {}, "pieces"),
    ("csv", {}, "pieces"),
    ("csv", {"excel_safe": True}, "pieces"),
    ("csv", {"per": "kernel"}, "none"),
    ("parquet", {}, "pieces"),
    ("parquet", {"per": "kernel"}, "none"),
]


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for path in FOLDERS[name]:
        if path.is_dir():
            shutil.copytree(path, folder, dirs_exist_ok=True)
        else:
            shutil.copy(path, folder)
    return folder


def _bytes(result, fmt: str, **options) -> bytes:
    return b"".join(bytes(p) for p in reporters.render_pieces(result, fmt, **options))


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", list(FOLDERS))
def test_a_folder_s_pieces_are_the_full_path_s_rows(name, tmp_path, spills):
    """Each piece is its file's rows of the joined table: the same values, dtypes, Categorical
    categories (the union of every file's), positions and `job` column (several jobs)."""
    folder = _folder(tmp_path, name)
    full = rooflint.report(folder)
    streamed = rooflint.report(folder, launches="pieces")
    assert streamed.pieces is not None and len(streamed.launches) == 0
    parts = list(streamed.launch_pieces())
    assert len(parts) == len(full.inputs) > 1
    assert streamed.launch_count == sum(map(len, parts)) == len(full.launches)
    pd.testing.assert_frame_equal(pd.concat(parts), full.launches, check_exact=True)
    for part in parts:
        assert list(part.dtypes) == list(full.launches.dtypes)
    pd.testing.assert_frame_equal(streamed.launches, full.launches.iloc[:0])
    pd.testing.assert_frame_equal(streamed.per_source(), full.per_source(), check_exact=True)
    assert streamed.summary.numbers() == full.summary.numbers()
    assert streamed.summary.accounting == full.summary.accounting


@pytest.mark.parametrize("name", list(FOLDERS))
@pytest.mark.parametrize("fmt, options, rows", RENDERS, ids=lambda v: str(v))
def test_a_folder_written_from_its_pieces_is_the_full_path_s_output(
    name, fmt, options, rows, tmp_path, spills
):
    """JSON (its sources and every source_index), CSV and Parquet of a folder made from the
    rows the registry says the format needs: byte for byte the full path's."""
    folder = _folder(tmp_path, name)
    assert reporters.formats()[fmt].rows_for(options) == rows
    made = rooflint.report(folder, launches=rows)
    assert (made.pieces is not None) == (rows == "pieces")
    assert _bytes(made, fmt, **options) == _bytes(rooflint.report(folder), fmt, **options)


@pytest.mark.parametrize("per", ["launch", "kernel"])
def test_a_parquet_dataset_from_pieces_is_the_full_path_s(per, tmp_path, spills):
    """`-o DIR/`: each source's partition, its row groups and metadata, as the full path's."""
    folder = _folder(tmp_path, "kineto")
    rows = reporters.formats()["parquet"].rows_for({"per": per})
    for launches, out in [(True, "full"), (rows, "made")]:
        made = rooflint.report(folder, launches=launches)
        reporters.render(made, "parquet", output=str(tmp_path / out) + "/", per=per)
    assert _files(tmp_path / "made") == _files(tmp_path / "full")
    assert len(_files(tmp_path / "full")) == (7 if per == "launch" else 1)


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "json"],
        ["--format", "csv"],
        ["--format", "csv", "--per", "kernel"],
        ["--format", "parquet", "-o", "OUT.parquet"],
        ["--format", "parquet", "-o", "OUT/"],
    ],
    ids=" ".join,
)
def test_the_command_line_writes_a_folder_as_the_full_path(args, tmp_path, spills):
    """`rooflint report DIR --format ...` (spilled where the format writes launch rows): the
    full path's output, and no spill folder left once the command is done."""
    folder = _folder(tmp_path, "rocprof")
    args = [a.replace("OUT", str(tmp_path / "out")) for a in args]
    res = CliRunner().invoke(main, ["report", str(folder), "-q", *args])
    assert res.exit_code == 0, res.output
    full = rooflint.report(folder)
    fmt, options = args[1], ({"per": "kernel"} if "kernel" in args else {})
    if "-o" not in args:
        assert res.stdout_bytes == _bytes(full, fmt, **options)
    elif args[-1].endswith("/"):
        reporters.render(full, fmt, output=str(tmp_path / "full") + "/")
        assert _files(tmp_path / "out") == _files(tmp_path / "full")
    else:
        assert (tmp_path / "out.parquet").read_bytes() == _bytes(full, fmt)
    gc.collect()
    assert list(spills.iterdir()) == []


def test_the_spill_folder_goes_with_the_result(tmp_path, spills):
    """One file per input while the Result lives (its analysed table; the table as read goes
    once the files' tables are found to join); none once it is let go."""
    result = rooflint.report(_folder(tmp_path, "rocprof"), launches="pieces")
    (made,) = spills.iterdir()
    assert len(list(made.iterdir())) == len(result.inputs) > 1
    del result
    gc.collect()
    assert list(spills.iterdir()) == []


def test_no_spill_is_left_behind_when_a_run_fails(tmp_path, spills, monkeypatch):
    """A failure once the files are written (here in the merge) removes them all."""

    def failing(*_args, **_kwargs):
        raise RuntimeError("merge failed")

    monkeypatch.setattr(reduced, "merged", failing)
    with pytest.raises(RuntimeError, match="merge failed"):
        rooflint.report(_folder(tmp_path, "rocprof"), launches="pieces")
    assert list(spills.iterdir()) == []


def test_a_file_that_fails_its_analysis_leaves_no_spill(tmp_path, spills):
    """--steps naming a step one trace lacks: the error the full path raises, no spill left."""
    folder = _folder(tmp_path, "kineto")
    with pytest.raises(rooflint.core.errors.UsageError) as full:
        rooflint.report(folder, steps="99")
    with pytest.raises(rooflint.core.errors.UsageError) as made:
        rooflint.report(folder, steps="99", launches="pieces")
    assert str(made.value) == str(full.value)
    assert list(spills.iterdir()) == []


@pytest.mark.parametrize("name", list(MIXED))
def test_files_of_different_columns_spill_their_analysed_tables_alone(name, tmp_path, spills):
    """The mixed folders: one Arrow file per input while the Result lives, each its analysed
    table (verdicts in it), none its table as read; the rows of files without ncu's percentages
    say counters where counted, as the joined analysis marks them; no file read twice."""
    folder = _folder(tmp_path, name)
    reads: list[Path] = []
    read_one = rooflint.pipeline.read_one
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            rooflint.pipeline, "read_one", lambda c, *a: reads.append(c) or read_one(c, *a)
        )
        made = rooflint.report(folder, launches="pieces")
    assert made.pieces is not None and len(made.pieces.as_read) == len(made.inputs) > 5
    assert len(reads) == len(set(reads)) >= len(made.inputs)  # skipped files too
    (where,) = spills.iterdir()
    tables = [spill.read(str(p)) for p in where.iterdir()]
    assert len(tables) == len(made.inputs)
    assert all("verdict" in t and "family" in t for t in tables)
    assert not schema.alike([t.iloc[:0] for t in tables])  # they differ in columns
    full = rooflint.report(folder)
    a100 = full.launches[full.launches["source"].str.endswith("a100-gemm-details.csv")]
    assert len(a100) == 11 and set(a100["compute_source"]) == {"counters"}  # not in its table
    assert set(a100["bytes_source"]) == {"counters"}
    assert list(made.launches.columns) == list(full.launches.columns)
    pd.testing.assert_frame_equal(pd.concat(made.launch_pieces()), full.launches, check_exact=True)
    del made
    gc.collect()
    assert list(spills.iterdir()) == []


def test_tables_that_hold_a_column_in_two_dtypes_are_read_again(tmp_path, spills, monkeypatch):
    """One RTX 3070 export's stall_top as str beside the others' Categoricals: the joined table
    holds pandas' join of the two, which the analysis reads, so the folder takes the full path
    (each file read again, nothing spilled kept): its output."""
    folder = _folder(tmp_path, "ncu-rtx3070")
    reads: list[Path] = []
    read_one = rooflint.pipeline.read_one

    def as_str(candidate, *args):
        reads.append(candidate)
        profile = read_one(candidate, *args)
        if candidate.name == "rtx3070-nvtx-raw.csv":
            profile.launches["stall_top"] = profile.launches["stall_top"].astype("str")
        return profile

    monkeypatch.setattr(rooflint.pipeline, "read_one", as_str)
    made = rooflint.report(folder, launches="pieces")
    assert made.pieces is None and len(made.launches) > 0
    assert len(reads) == 2 * len(set(reads)) == 2 * len(made.inputs)
    assert list(spills.iterdir()) == []
    full = rooflint.report(folder)
    for fmt in ("json", "csv", "parquet"):
        assert _bytes(made, fmt) == _bytes(full, fmt), fmt


@pytest.mark.parametrize("model_bytes", [True, False], ids=["bytes_source-as-read", "none"])
def test_a_piece_has_the_marks_the_joined_analysis_gives_it(model_bytes):
    """core.pieces and speed_of_light.as_joined on hand-made tables against analysis of them
    joined: an export with counters on one launch and ncu's percentages on two, a trace's table
    with bytes_source as read (or not), and a table of counters alone. Worked out by hand: with
    a bytes_source as read, the joined analysis keeps it and marks only the estimate (a
    counted launch is NA there, not counters); without, counters where counted."""
    estimates = _raw("a", bytes_dram=[2e6, np.nan, np.nan], ops_vector_fp32=[1e6, np.nan, np.nan])
    estimates["dram_throughput"] = [np.nan, 0.5, np.nan]
    estimates["sm_throughput"] = [np.nan, np.nan, 0.3]
    counted = _raw("c", bytes_dram=[3e6], ops_vector_fp32=[np.nan])
    raw = [estimates, counted]
    if model_bytes:
        model = _raw("b", bytes_dram=[1e6, np.nan], ops_vector_fp32=[2e6, np.nan])
        model["bytes_source"] = provenance.column(2, (np.array([True, False]), "model"))
        raw.insert(1, model)
    device = _Toy()
    joined = analysis.analyze_each(
        schema.concat(raw, ignore_index=True), [(device, len(t)) for t in raw], 0.6
    )
    alone = [analysis.analyze(t, device) for t in raw]
    read = [t.iloc[:0] for t in raw]
    assert pieces.joinable(read)
    columns = pieces.columns_of([t.iloc[:0] for t in alone], {}, read)
    assert pieces.remarked([t.iloc[:0] for t in alone], read)
    union = pd.Index(list(dict.fromkeys(c for t in raw for c in t.columns)))
    made, start = [], 0
    for table, as_read in zip(alone, raw, strict=True):
        marks = speed_of_light.as_joined(table, as_read.columns, union)
        made.append(pieces.joined_like(table, columns, start, {}, marks))
        start += len(table)
    pd.testing.assert_frame_equal(pd.concat(made), joined, check_exact=True)
    by_source = joined.set_index("source")
    model_na = [np.nan] if model_bytes else ["counters"]
    assert by_source.loc["a", "bytes_source"].tolist()[:2] == [model_na[0], "throughput_pct"]
    assert by_source.loc["a", "compute_source"].tolist()[::2] == ["counters", "sm_throughput_pct"]
    assert pd.isna(by_source.loc["a", "compute_source"].iloc[1])  # neither FLOPs nor a pipe
    assert by_source.loc[["c"], "bytes_source"].tolist() == model_na
    assert "bytes_source" not in alone[-1] and "compute_source" not in alone[-1]


class _Toy:
    """A device without a DRAM clock: the DRAM roof as given."""

    id = "toy"
    compute = {"vector_fp32": 1e12}
    memory = {"dram": 1e11}


def _raw(source: str, **columns) -> pd.DataFrame:
    """A launch table as read: `columns` (lists of one length) and a kernel per launch."""
    n = len(next(iter(columns.values())))
    frame = pd.DataFrame(
        {"source": [source] * n, "kernel": [f"k{i}" for i in range(n)], "duration_s": 1e-3}
    )
    return schema.conform(frame.assign(missing="", **columns))


def test_one_file_and_dask_keep_the_full_path(tmp_path, spills):
    """One input file: its table is the Result's (no spill). With a scheduler, a worker's disk
    is not the parent's: the full path there too."""
    one = rooflint.report(FIXTURES / "ncu" / "a100-gemm-details.csv", launches="pieces")
    assert one.pieces is None and len(one.launches) == 11
    assert list(spills.iterdir()) == []
    folder = [str(_folder(tmp_path, "rocprof"))]
    assert reduced._spillable(folder, rooflint.pipeline.Options())
    assert not reduced._spillable(folder, rooflint.pipeline.Options(scheduler="tcp://x:1"))


@pytest.mark.e2e  # reads ../shared/fixtures
@pytest.mark.parametrize("layout", ["given", "beside"])
def test_graph_replays_paired_are_written_from_pieces(layout, tmp_path, spills):
    """A vLLM graph replay with its capture (among the inputs, or in capture_traces/): each
    replay's piece is its rows read with the capture, the capture's own dropped; JSON, CSV and
    the Perfetto timeline the full path's, byte for byte, and no spill left behind."""
    folder = replay_folder(tmp_path, layout)
    full = rooflint.report(folder)
    made = rooflint.report(folder, launches="pieces")
    assert made.pieces is not None and made.launch_count == len(full.launches)
    pd.testing.assert_frame_equal(pd.concat(list(made.launch_pieces())), full.launches)
    for fmt in ("json", "csv", "perfetto"):
        assert _bytes(made, fmt) == _bytes(full, fmt), fmt
    del made
    gc.collect()
    assert list(spills.iterdir()) == []


def test_inputs_read_together_take_the_full_path(spills):
    """A trace with an ncu export of the same run: read together, as before."""
    trace = FIXTURES / "kineto" / "h200-train-trace.json.gz"
    paths = [trace, FIXTURES / "ncu" / "h200-train-raw-stdout.csv.gz"]
    result = rooflint.report(*paths, launches="pieces")
    assert result.pieces is None and len(result.launches) > 0
    assert list(spills.iterdir()) == []


def test_the_registry_says_which_rows_each_format_needs():
    """none: table, markdown, HTML, the charts (and CSV/Parquet per kernel group); pieces:
    JSON, CSV, Parquet; timeline (and the warm-up): Perfetto; all: no format now (the word
    stays the full path's)."""
    by_rows: dict[str, set] = {}
    for f in reporters.formats().values():
        by_rows.setdefault(f.rows, set()).add(f.name)
    assert by_rows == {
        "none": {"table", "markdown", "html", "png", "svg", "pdf"},
        "pieces": {"json", "csv", "parquet"},
        "timeline": {"perfetto"},
    }
    assert set(by_rows) <= set(reporters.ROWS)
    assert reporters.formats()["csv"].rows_for({"per": "kernel"}) == "none"
    assert reporters.formats()["json"].rows_for({"per": "kernel"}) == "pieces"


def test_launches_takes_true_false_or_the_registry_s_words():
    with pytest.raises(rooflint.core.errors.UsageError, match="'pieces'"):
        rooflint.report(FIXTURES / "rocprof", launches="some")


@pytest.mark.e2e  # reads ../shared/fixtures
def test_shared_traces_written_from_pieces_are_the_full_path_s(tmp_path, spills):
    """PyTorch traces of H100, MI300 and A100 runs (shared fixtures): JSON, CSV and Parquet."""
    names = [
        "kineto/tracelens-h100-bert-small-uncased.json.gz",
        "kineto/tracelens-mi300-bert-small-uncased.json.gz",
        "kineto/tracelens-h100-timesformer.json.gz",
        "kineto/hta-a100-alexnet.json.gz",
    ]
    for name in names:
        shutil.copy(shared(name), tmp_path)
    full, made = rooflint.report(tmp_path), rooflint.report(tmp_path, launches="pieces")
    assert made.pieces is not None
    for fmt in ("json", "csv", "parquet"):
        assert _bytes(made, fmt) == _bytes(full, fmt), fmt


def test_a_piece_is_recoded_into_the_union_of_categories():
    """core.pieces on a hand-made pair of tables: codes mapped into the joined categories,
    the positions of the joined table, the job by source."""
    a = pd.DataFrame({"source": schema.text(pd.Series(["a", "a"])), "x": [1.0, 2.0]})
    b = pd.DataFrame({"source": schema.text(pd.Series(["b"])), "x": [3.0]})
    assert pieces.joinable([a, b])
    columns = pieces.columns_of([a.iloc[:0], b.iloc[:0]], {"a": "job 1", "b": "job 2"})
    piece = pieces.joined_like(b, columns, 2, {"a": "job 1", "b": "job 2"})
    joined = schema.concat([a, b], ignore_index=True)
    joined["job"] = joined["source"].map({"a": "job 1", "b": "job 2"})
    pd.testing.assert_frame_equal(piece, joined.iloc[2:])
    assert pieces.joinable([a, b.assign(y=1)])  # y: NA in a's rows
    assert not pieces.joinable([a, b.assign(x=[3])])  # x: float64 and int64
    assert pieces.first_seen([["b", "a"], ["a", "c"]]) == ["b", "a", "c"]


def test_a_spilled_table_reads_back_exactly(tmp_path):
    """The Arrow file keeps a Categorical's categories (an empty one's str too), pandas' string
    and nullable dtypes and the RangeIndex."""
    table = pd.DataFrame(
        {
            "source": schema.text(pd.Series(["s", "s", None])),
            "range": schema.text(pd.Series([None, None, None], dtype="str")),
            "op": pd.array(["x", None, "y"], dtype="string"),
            "stream": pd.array([1, None, 3], dtype="Int64"),
            "duration_s": np.array([1e-6, np.nan, 3.0]),
            "headroom_s": np.array([0.0, np.nan, 1.0]),
            "verdict": schema.text(pd.Series(["memory-bound", "latency-bound", None])),
        }
    )
    written = spill.Spilled.of(table, str(tmp_path))
    back = spill.read(written.path)
    assert table["range"].cat.categories.dtype == "str"
    pd.testing.assert_frame_equal(back, table, check_exact=True)
    assert written.rows == 3


def test_every_fixture_s_tables_read_back_exactly(tmp_path):
    """Every bundled fixture's launch table, as read and analysed (what a folder spills), comes
    back from its Arrow file with the same values, dtypes, categories and index."""
    files = [p for n in ("ncu", "kineto", "rocprof", "nsys") for p in (FIXTURES / n).iterdir()]
    tables = []
    for path in with_launches(sorted(files)):
        launches = rooflint.load(path)
        tables += [launches, rooflint.analyze(launches)]
    assert len(tables) > 50
    for table in tables:
        back = spill.read(spill.write(table, str(tmp_path)))
        pd.testing.assert_frame_equal(back, table, check_exact=True, check_categorical=True)


def test_a_disk_that_refuses_the_spill_is_one_line(tmp_path, spills, monkeypatch):
    """No room for the launch tables: a UsageError naming the folder and TMPDIR, no spill."""

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill.ipc, "new_file", full_disk)
    folder = _folder(tmp_path, "rocprof")
    res = CliRunner().invoke(main, ["report", str(folder), "-q", "--format", "json"])
    assert res.exit_code == 2
    assert "No space left on device" in res.output and "TMPDIR" in res.output
    assert "Traceback" not in res.output
    assert list(spills.iterdir()) == []
