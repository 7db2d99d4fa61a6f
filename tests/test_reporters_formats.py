"""Every report format on awkward inputs (empty, one kernel, NaN-laden, 10,000 kernels, hostile
names), plus the Markdown, HTML, CSV and chart specifics and the `rooflint plot` command."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from rooflint import reporters
from rooflint.cli import main
from rooflint.core import ranking, schema
from rooflint.core.profile import Profile
from rooflint.pipeline import Options, assemble
from rooflint.reporters import chart, chart_draw, csv_report, markdown

ROOT = Path(__file__).resolve().parents[1]
A100 = ROOT / "fixtures" / "ncu" / "a100-gemm-details.csv"
DEVICE = "a100-sxm4-80gb"
FORMATS = ["table", "json", "markdown", "html", "csv", "png", "svg"]
HOSTILE = [
    "void gemm<float, cutlass::half_t, 128>(Params<T> const&)",
    "pipe|kernel|with|bars",
    "tick`kernel`name",
    "<script>alert(1)</script>",
    "star*under_score[bracket]~tilde~ $dollar$ back\\slash",
    "multi\nline\rkernel & amp",
]


def profile(rows: list[dict], source: str = "synthetic.csv") -> Profile:
    frame = schema.conform(pd.DataFrame(rows)) if rows else schema.empty()
    frame["source"] = pd.array([source] * len(frame), dtype="string")
    return Profile(source=source, format="synthetic", launches=frame)


def build(rows: list[dict]):
    return assemble([profile(rows)], [], Options(device_id=DEVICE))


def launch(i: int, name: str, duration=1e-3, fp32=1e9, dram=1e8, **extra) -> dict:
    return {
        "launch_id": i,
        "kernel": name,
        "grid": "(1, 1, 1)",
        "block": "(256, 1, 1)",
        "duration_s": duration,
        "ops_vector_fp32": fp32,
        "bytes_dram": dram,
        **extra,
    }


def empty():
    """A Result with no launches (a profile whose every row was unreadable, say)."""
    return build([])


def test_assemble_accepts_empty_input():
    res = build([])
    assert len(res.kernels) == 0


def single():
    return build([launch(0, "void saxpy<float>(float*, float const*, int)")])


def nan_laden():
    return build(
        [
            launch(0, "ok_kernel"),
            launch(1, "no_duration", duration=math.nan),
            launch(2, "zero_duration", duration=0.0),
            launch(3, "no_flops", fp32=math.nan),
            launch(4, "no_bytes", dram=math.nan),
            launch(5, "memcpy_like", fp32=0.0),
            launch(6, None),
            launch(7, "all_nan", duration=math.nan, fp32=math.nan, dram=math.nan),
        ]
    )


def ten_thousand():
    rng = np.random.default_rng(7)
    n = 10_000
    durations = rng.lognormal(-9, 1.5, n)
    flops = np.where(rng.random(n) < 0.1, 0.0, rng.lognormal(20, 3, n))
    return build(
        [
            launch(
                i,
                f"kernel_{i:05d}<{i % 7}>",
                duration=durations[i],
                fp32=flops[i],
                dram=rng.lognormal(18, 2, n)[0] * (1 + i % 5),
            )
            for i in range(n)
        ]
    )


def hostile():
    return build([launch(i, name, duration=1e-3 * (i + 1)) for i, name in enumerate(HOSTILE)])


INPUTS = {"empty": empty, "single": single, "nan": nan_laden, "10k": ten_thousand}
_cache: dict = {}


def cached(name: str):
    if name not in _cache:
        _cache[name] = INPUTS[name]()
    return _cache[name]


# --- every format on every awkward input ----------------------------------------------------


@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=pytest.mark.e2e) if k == "10k" else k for k in INPUTS]
)  # 10,000 kernels take seconds in each format
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_on_awkward_input(fmt, kind):
    res = cached(kind)
    out = reporters.render(res, fmt)
    n = len(res.kernels)
    if fmt == "png":
        assert out[:8] == b"\x89PNG\r\n\x1a\n"
    elif fmt == "svg":
        root = ET.fromstring(out)
        assert root.tag.endswith("svg")
    elif fmt == "json":
        document = json.loads(out)
        assert len(document["kernels"]) == n and len(document["launches"]) == len(res.launches)
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert rows[0] == csv_report.LAUNCH_COLUMNS and len(rows) == len(res.launches) + 1
    elif fmt == "markdown":
        assert markdown.length(out) < markdown.LIMIT
        assert f"launches read {len(res.launches)}" in out
    elif fmt == "html":
        page = parse_html(out)
        assert len(page.rows("kernels")) == n
        assert page.tags.count("svg") == 1
    else:
        assert f"launches read {len(res.launches)}" in out


def test_nan_laden_input_keeps_every_launch_and_reason():
    res = cached("nan")
    acc = res.summary.accounting
    assert acc["launches_read"] == 8 and acc["analysed"] + acc["not_analysable"] == 8
    text = reporters.render(res, "markdown")
    for reason in (
        "missing duration",
        "zero duration",
        "missing FLOP counters",
        "missing DRAM bytes",
    ):
        assert reason in text
    data = chart.chart_data(res)
    drawn = {p.name for p in data.points + data.zero_flop}
    unplaced = {name: why for _, name, why in data.unplaced}
    assert "ok_kernel" in drawn and "memcpy_like" in drawn  # the zero-FLOP one goes to the strip
    assert unplaced["no_flops"] == "no FLOP counters" and unplaced["no_bytes"] == "no DRAM bytes"
    assert unplaced["zero_duration"] == "no duration"
    assert len(drawn) + len(unplaced) == len(res.kernels)


# --- Markdown -------------------------------------------------------------------------------


def _md_tables(text: str) -> list[list[list[str]]]:
    """Each rendered table as rows of cell texts (entities and escapes resolved by the parser)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, row, cell = [], None, None
    for tok in tokens:
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            cell = []
        elif tok.type == "inline" and cell is not None:
            cell.append(
                "".join(c.content for c in tok.children if c.type in ("text", "code_inline"))
            )
            for c in tok.children:
                assert c.type not in (
                    "html_inline",
                    "link_open",
                    "em_open",
                    "strong_open",
                    "s_open",
                ), (c.type, tok.content)
        elif tok.type in ("th_close", "td_close"):
            row.append("".join(cell))
            cell = None
        elif tok.type == "tr_close":
            tables[-1].append(row)
    return tables


def test_markdown_escapes_hostile_names_in_cells():
    pytest.importorskip("markdown_it")
    from rooflint.core import names

    res = hostile()
    text = reporters.render(res, "markdown")
    assert "<script>" not in text and "alert(1)</script>" not in text
    top, full = _md_tables(text)[:2]
    assert top[0] == [
        "#",
        "id",
        "kernel",
        "launches",
        "time",
        "share",
        "verdict",
        "efficiency",
        "headroom",
    ]
    assert all(len(r) == 9 for r in top) and all(len(r) == 14 for r in full)
    # line breaks are shown escaped, as every control character is (issue 33, item 10)
    assert {r[2] for r in top[1:]} == {names.short_name(n) for n in HOSTILE}
    assert {r[2] for r in full[1:]} == {names.visible(n) for n in HOSTILE}
    assert "multi\\x0aline\\x0dkernel & amp" in {r[2] for r in full[1:]}
    ids = {r[1] for r in full[1:]}
    assert ids == {names.short_id(n) for n in HOSTILE}


def test_markdown_renders_no_html_from_names():
    pytest.importorskip("markdown_it")
    from markdown_it import MarkdownIt

    html_out = (
        MarkdownIt("commonmark").enable("table").render(reporters.render(hostile(), "markdown"))
    )
    assert "<script>" not in html_out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_out


def test_markdown_default_top_is_ten_and_sentences_follow():
    res = ten_thousand_small(25)
    text = reporters.render(res, "markdown")
    top = _md_tables(text)[0]
    assert len(top) == 1 + 10
    assert text.count("\n- **#") == 10
    assert "15 more kernel group(s)" in text
    assert len(_md_tables(reporters.render(res, "markdown", top=3))[0]) == 4


def ten_thousand_small(n: int):
    return build([launch(i, f"k{i}", duration=1e-3 * (i + 1)) for i in range(n)])


def test_markdown_stays_under_github_limit_and_says_what_it_cut():
    long_names = build(
        [
            launch(i, f"void k{i}<" + "cutlass::layout::RowMajor, " * 40 + ">()", duration=1e-3)
            for i in range(300)
        ]
    )
    text = reporters.render(long_names, "markdown")
    assert markdown.length(text) < markdown.LIMIT
    assert "rows omitted to stay under GitHub's 65,536-character limit" in text
    full = _md_tables(text)[1]
    omitted = int(text.split(" rows omitted")[0].rsplit("*", 1)[1])
    assert len(full) - 1 + omitted == 300
    assert [r[0] for r in full[1:]] == [str(i) for i in range(1, len(full))]  # cut from the bottom


def test_markdown_limit_counts_utf16_units():
    assert markdown.length("a😀") == 3  # GitHub counts what JavaScript counts


def test_markdown_escape_unit():
    assert markdown.escape("a|b") == r"a\|b"
    assert markdown.escape("<T>&") == "&lt;T&gt;&amp;"
    assert markdown.escape("x\ny") == r"x\\x0ay"  # shown escaped (issue 33, item 10)
    assert markdown.escape("*_`[]~$\\") == r"\*\_\`\[\]\~\$\\"


# --- HTML -----------------------------------------------------------------------------------


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self.script_text = [], 0, []
        self._table, self._tables, self._in_script, self._cell, self._row = (
            None,
            {},
            False,
            None,
            None,
        )
        self.titles, self._in_title, self.text = [], False, []
        self.advice, self._row_class = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "script":
            self.scripts += 1
            self._in_script = True
        elif tag == "table":
            self._table = attrs.get("id", f"table{len(self._tables)}")
            self._tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
            self._row_class = attrs.get("class")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"text": "", "sort": attrs.get("data-sort"), "tag": tag}
        elif tag == "title":
            self._in_title = True
            self.titles.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row_class == "why":  # a kernel's advice, on a row of its own under it
                self.advice.append(self._row[0]["text"])
            else:
                self._tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_script:
            self.script_text.append(data)
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell["text"] += data
        if self._in_title:
            self.titles[-1] += data

    def rows(self, table_id: str) -> list[list[dict]]:
        return [r for r in self._tables.get(table_id, []) if r and r[0]["tag"] == "td"]


def parse_html(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def test_html_table_chart_and_hostile_names():
    res = hostile()
    out = reporters.render(res, "html")
    page = parse_html(out)
    assert page.scripts == 1 and "sortable" in "".join(page.script_text)  # only our sorting script
    rows = page.rows("kernels")
    assert len(rows) == len(HOSTILE)
    assert [float(r[0]["sort"]) for r in rows] == list(range(1, len(HOSTILE) + 1))
    durations = [float(r[4]["sort"]) for r in rows]
    assert sorted(durations) == sorted(res.kernels["duration_s"].tolist())
    assert "<script>alert(1)</script>" in "".join(page.text)  # shown as text...
    assert "<script>alert(1)</script>" not in out  # ...because it was escaped
    assert page.tags.count("svg") == 1 and page.tags.count("circle") >= len(HOSTILE)
    assert any("<script>alert(1)</script>" in t for t in page.titles)  # hover label of its point
    assert "http://" not in out.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    ceilings = page.rows("ceilings")
    assert any(r[1]["text"] == "matrix_fp16" and "datasheet" in r[5]["text"] for r in ceilings)


def test_html_svg_points_match_chart_data():
    res = build([launch(0, "a", fp32=1e9, dram=1e8), launch(1, "b", fp32=0.0, dram=1e8)])
    page = parse_html(reporters.render(res, "html"))
    titles = [t for t in page.titles if t.startswith("#")]
    assert len(titles) == 2
    assert any("10 FLOP/byte" in t for t in titles) and any("0 FLOP" in t for t in titles)


# --- CSV ------------------------------------------------------------------------------------


def test_csv_round_trips_and_is_deterministic():
    res = cached("nan")
    text = reporters.render(res, "csv")
    assert text == reporters.render(res, "csv")
    back = pd.read_csv(io.StringIO(text), keep_default_na=True)
    for col in ("duration_s", "efficiency", "headroom_s", "ops_vector_fp32", "bytes_dram"):
        original = res.launches[col].to_numpy(dtype=float, na_value=np.nan)
        np.testing.assert_array_equal(back[col].to_numpy(dtype=float), original)
    per_kernel = list(csv.DictReader(io.StringIO(reporters.render(res, "csv", per="kernel"))))
    assert list(per_kernel[0]) == [*ranking.KERNEL_COLUMNS, "advice"]  # core/advice.py
    assert [int(r["rank"]) for r in per_kernel] == list(range(1, len(res.kernels) + 1))


def _awkward(res):
    """res's launches with the cells a CSV writer must get right: text with quotes, commas,
    line ends, non-ASCII and nothing in it; -0.0, infinities, NaN, 1e16, 1e-5; a missing
    integer; a column that holds one value."""
    launches = res.launches.copy()
    names = ['say "hi"', "a,b", "line\nend", "cr\rhere", "µs 😀", "", "plain"]
    kernel = [names[i % len(names)] for i in range(len(launches))]
    launches["kernel"] = pd.array(kernel, dtype="string")
    launches.loc[launches.index[:1], "kernel"] = pd.NA
    duration = launches["duration_s"].to_numpy().copy()
    duration[:6] = [-0.0, np.inf, -np.inf, np.nan, 1e16, 1e-5][: len(duration[:6])]
    launches["duration_s"] = duration
    launches["launch_id"] = launches["launch_id"].astype("Int64")
    launches.loc[launches.index[1:2], "launch_id"] = pd.NA
    flops = launches["flops"].astype("Float64")  # nullable floats, as a trace's columns are
    flops.iloc[:3] = [pd.NA, -0.0, 1e-5][: len(flops.iloc[:3])]
    launches["flops"] = flops
    return dataclasses.replace(res, launches=launches)


@pytest.mark.parametrize("per", ["launch", "kernel"])
@pytest.mark.parametrize("excel_safe", [False, True])
def test_csv_is_what_pandas_to_csv_writes(per, excel_safe, monkeypatch):
    """The CSV is built column by column with Arrow, a chunk at a time; expected: pandas'
    to_csv of the same rows (the writer before, which formats every cell in Python)."""
    res = _awkward(cached("nan"))
    assert len(res.launches) >= 6
    assert all(csv_report._cells(res.launches[c]) is not None for c in res.launches)  # no to_csv
    expected = csv_report.table(res, per)
    if excel_safe:
        expected = csv_report.defuse(expected)
    expected = expected.to_csv(index=False, lineterminator="\n")
    assert csv_report.render(res, per=per, excel_safe=excel_safe) == expected
    monkeypatch.setattr(csv_report, "CHUNK_ROWS", 2)  # many chunks: the same text
    assert csv_report.render(res, per=per, excel_safe=excel_safe) == expected


def test_csv_of_identical_launches_and_of_none():
    res = cached("nan")
    res = dataclasses.replace(res, launches=res.launches.iloc[[0, 0, 0]].reset_index(drop=True))
    assert csv_report.render(res) == csv_report.table(res).to_csv(index=False, lineterminator="\n")
    res = dataclasses.replace(res, launches=res.launches.iloc[:0])
    assert csv_report.render(res) == ",".join(csv_report.table(res).columns) + "\n"


def test_csv_excel_safe_defuses_formulas_only_when_asked():
    res = build(
        [
            launch(0, '=HYPERLINK("http://x")'),
            launch(1, "+cmd"),
            launch(2, "-x"),
            launch(3, "@sum"),
            launch(4, "\tTAB"),
            launch(5, "plain"),
        ]
    )
    raw = list(csv.DictReader(io.StringIO(reporters.render(res, "csv"))))
    assert raw[0]["kernel"] == '=HYPERLINK("http://x")'
    safe = list(csv.DictReader(io.StringIO(reporters.render(res, "csv", excel_safe=True))))
    assert [r["kernel"] for r in safe] == [
        '\'=HYPERLINK("http://x")',
        "'+cmd",
        "'-x",
        "'@sum",
        "'\tTAB",
        "plain",
    ]
    assert safe[0]["duration_s"] == raw[0]["duration_s"]  # numbers untouched


# --- chart ----------------------------------------------------------------------------------


def test_chart_data_on_a100_fixture():
    from rooflint import pipeline

    res = pipeline.build([str(A100)])
    data = chart.chart_data(res)
    by_name = {p.name: p for p in data.points}
    cublas = next(p for p in data.points if p.name.startswith("ampere_s16816gemm"))
    row = res.kernels[res.kernels["kernel"].str.startswith("ampere")].iloc[0]
    assert (
        cublas.intensity == row["intensity_dram"]
        and cublas.flops_per_s == row["achieved_flops_per_s"]
    )
    assert len(data.points) == 2 and len(data.zero_flop) == 2 and not data.unplaced
    assert all(
        math.isnan(p.intensity) and p.flops_per_s == 0 and p.bytes_per_s > 0 for p in data.zero_flop
    )
    memory = [r for r in data.roofs if r.kind == "memory"]
    compute = [r for r in data.roofs if r.kind == "compute"]
    assert [r.name for r in compute] == ["matrix_fp16"]  # the only class these kernels use
    device = res.devices[0].device
    peak, bw = device.compute["matrix_fp16"].value, device.memory["dram"].value
    assert compute[0].ridge == pytest.approx(peak / bw)
    assert compute[0].start == (pytest.approx(peak / bw), peak) and compute[0].end[1] == peak
    (slope,) = memory
    assert slope.end == (
        pytest.approx(peak / bw),
        pytest.approx(peak),
    )  # the slope meets the flat roof
    assert slope.start[1] == pytest.approx(bw * slope.start[0])
    assert [p.label for p in data.legend] == ["dead50", "2ec6a2", "0922ec", "0eb03a"]
    assert data.x_range[0] <= min(p.intensity for p in by_name.values()) <= data.x_range[1]
    # A100 PCIe 40GB: 312 TFLOP/s x 0.765 / 1.41 GHz = 169.28 TFLOP/s over 1.555 TB/s = 108.9
    assert "169 TFLOP/s" in compute[0].label and "ridge 109" in compute[0].label


def test_chart_data_other_levels_sum_bytes_per_group():
    from rooflint import pipeline

    res = pipeline.build([str(A100)])
    data = chart.chart_data(res, level="l2")
    cutlass = next(p for p in data.points if p.name.startswith("cutlass"))
    launches = res.launches[res.launches["kernel"].str.startswith("void cutlass")]
    assert cutlass.intensity == pytest.approx(launches["flops"].sum() / launches["bytes_l2"].sum())
    assert any("no L2 bandwidth" in n for n in data.notes)  # the catalog A100 has DRAM only
    assert not [r for r in data.roofs if r.kind == "memory"]


def test_chart_top_labels_and_unique_ids():
    rows = [
        launch(i, "same_kernel", duration=1e-3 * (i + 1), grid=f"({i}, 1, 1)") for i in range(3)
    ]
    data = chart.chart_data(build(rows), top=2)
    assert sum(p.labelled for p in data.points) == 2
    labels = [p.label for p in data.points]
    assert len(set(labels)) == 3 and all("." in label for label in labels)  # the ranking's .1 .2 .3


@pytest.mark.e2e  # over a second
def test_chart_with_ten_thousand_kernels_is_rasterised():
    data = chart.chart_data(cached("10k"))
    assert len(data.points) + len(data.zero_flop) + len(data.unplaced) == 10_000
    assert len(data.zero_flop) > 500  # zero-FLOP kernels are kept, in the strip
    figure = chart_draw.draw(data)
    collections = [c for ax in figure.axes for c in ax.collections]
    assert collections and all(c.get_rasterized() for c in collections)
    markers = [c for c in collections if c.get_gid() != "labelled"]  # not the rings of the labelled
    assert markers and max(c.get_alpha() for c in markers) < 0.5


def test_chart_text_from_input_is_literal():
    res = build([launch(0, "price_$x$_kernel")])
    figure = chart_draw.draw(chart.chart_data(res))
    texts = [t.get_text() for ax in figure.axes for t in ax.texts]
    assert any(r"price_\$x\$_kernel" in t for t in texts)
    assert reporters.render(res, "png")[:4] == b"\x89PNG"


@pytest.mark.e2e  # over a second
def test_svg_and_pdf_are_deterministic():
    res = single()
    assert reporters.render(res, "svg") == reporters.render(res, "svg")
    assert reporters.render(res, "pdf") == reporters.render(res, "pdf")


# --- CLI ------------------------------------------------------------------------------------


@pytest.mark.e2e  # a subprocess
def test_report_to_text_formats_does_not_import_matplotlib():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from rooflint.cli import main\n"
        "for fmt in ('table', 'json', 'markdown', 'csv', 'html'):\n"
        f"    r = CliRunner().invoke(main, ['report', '-q', '-f', fmt, {str(A100)!r}])\n"
        "    assert r.exit_code == 0, r.output\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.e2e  # over a second
def test_plot_command_writes_each_chart_format(tmp_path):
    runner = CliRunner()
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        target = tmp_path / f"chart{suffix}"
        done = runner.invoke(
            main, ["plot", "-q", str(A100), "-o", str(target), "--top", "2", "--level", "dram"]
        )
        assert done.exit_code == 0, done.output
        assert target.read_bytes().startswith(magic)


def test_plot_command_refuses_unknown_extension(tmp_path):
    target = tmp_path / "chart.txt"
    done = CliRunner().invoke(main, ["plot", "-q", str(A100), "-o", str(target)])
    assert done.exit_code == 2 and "name it .png, .svg or .pdf" in done.output
    assert not target.exists()


def test_plot_command_takes_input_options(tmp_path):
    target = tmp_path / "chart.svg"
    done = CliRunner().invoke(
        main, ["plot", "-q", str(A100), "-o", str(target), "--device", "a100-pcie-40gb"]
    )
    assert done.exit_code == 0, done.output
    assert "a100-pcie-40gb" in target.read_text()


def test_ratios_print_as_plain_numbers():
    from rooflint.core.formatting import ratio

    # hand-picked: never an SI prefix, never an exponent between 1e-4 and 1e6
    assert [ratio(v) for v in (0.0132, 0.25, 116.4, 2048.0, 6680.2, 1.5e-5)] == [
        "0.0132",
        "0.25",
        "116",
        "2048",
        "6680",
        "1.5e-05",
    ]
    assert ratio(float("nan")) == "—"


@pytest.mark.parametrize(
    ("trace", "kernel_id", "shown"),
    [
        # hta-mi250-minitoy: the mean reduction reads 640 floats (2560 bytes) for 640 FLOPs
        ("hta-mi250-minitoy.json.gz", "52d53e", "0.25"),
        # the clamp reads and writes 640 floats (5120 bytes) for 640 FLOPs
        ("hta-mi250-minitoy.json.gz", "baa952", "0.125"),
        # torch.compile attn_fwd: 1.0995e12 FLOPs over 5.369e8 bytes = 2048 (was "2.05 k")
        ("tracelens-torch_compile_triton-trace.json.gz", "bb44a9", "2048"),
    ],
)
def test_html_intensity_is_a_plain_number(trace, kernel_id, shown):
    from rooflint import pipeline

    res = pipeline.build([str(ROOT / "fixtures" / "kineto" / trace)])
    page = parse_html(reporters.render(res, "html"))
    row = next(r for r in page.rows("kernels") if r[1]["text"] == kernel_id)
    assert row[10]["text"] == shown
