"""A Result in a REPL and a notebook: the notebook reporter, reached without core importing it."""

from __future__ import annotations

import rooflint
from rooflint import pipeline, reporters
from rooflint.core import display
from tests.helpers import ROOT

A100 = "fixtures/ncu/a100-gemm-details.csv"


def test_repr_is_the_one_line_summary(monkeypatch):
    # the numbers of tests/golden/a100-gemm-details.table.txt (checked by hand in test_reporters)
    monkeypatch.chdir(ROOT)
    result = pipeline.build([A100])
    assert repr(result) == (
        "<rooflint.Result: 11 launches, 906 ms, headroom 192 ms (79 % efficiency) on NVIDIA A100 "
        "PCIe 40GB (a100-pcie-40gb);\n 4 kernel groups, top: cutlass::Kernel<…> 181 ms headroom>"
    )


def test_repr_html_is_the_summary_and_the_top_groups(monkeypatch):
    monkeypatch.chdir(ROOT)
    html = pipeline.build([A100])._repr_html_()
    assert html.startswith(
        '<div class="rooflint"><p><b>rooflint</b>: 906 ms total, 192 ms headroom, 79 % '
        "time-weighted efficiency on NVIDIA A100 PCIe 40GB (a100-pcie-40gb)<br>launches read 11 = "
        "analysed 11 + not analysable 0</p>\n<table><tr><th>#</th><th>kernel</th>"
    )
    assert "<tr><td>1</td><td>cutlass::Kernel&lt;…&gt;</td><td>6</td><td>790 ms</td>" in html
    assert html.count("<tr>") == 1 + 4 and html.endswith("</table></div>")


def test_the_view_is_the_registrys_notebook_reporter(monkeypatch):
    assert display.show is rooflint._show
    assert reporters.formats(reporters.REPR)["text"].module == "notebook"
    monkeypatch.chdir(ROOT)
    result = pipeline.build([A100])
    assert reporters.show(result, "html", top=1).count("<tr>") == 2
    seen = []
    monkeypatch.setattr(display, "show", lambda r, how: seen.append(how) or how)
    assert (repr(result), result._repr_html_()) == ("text", "html")
    assert seen == ["text", "html"]


def test_import_rooflint_loads_no_pandas():
    import subprocess
    import sys

    code = "import sys, rooflint; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_diff_s_repr_is_its_change_not_its_tables(monkeypatch):
    """repr(rooflint.diff(...)) printed every DataFrame of the Diff and of both Sides (thousands
    of lines). It is the diff's first line without a gate, as a Result's repr is its summary:
    the numbers of tests/golden/a100-vs-rtx2080ti.diff.table's first line (906 ms → 10.7 µs,
    1 new and 4 removed groups: 4 in base, 1 in head, none matched across devices) and its three
    '!!' warnings."""
    monkeypatch.chdir(ROOT)
    d = rooflint.diff(A100, "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv")
    assert repr(d) == (
        "<rooflint.Diff: total time -100.0 % [-100.0, -100.0] (base 906 ms → head 10.7 µs); "
        "1 new, 4 removed;\n 0 kernel groups matched (4 in base, 1 in head); 3 warning(s)>"
    )
    assert "DataFrame" not in repr(d.base) and "groups=" not in repr(d.base)
    assert repr(d.base).startswith("Side(label='fixtures/ncu/a100-gemm-details.csv', result=<")
