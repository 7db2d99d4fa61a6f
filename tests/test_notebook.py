"""A Result in a REPL and a notebook: the notebook reporter, reached without core importing it."""

from __future__ import annotations

import rooflint
from rooflint import pipeline, reporters
from rooflint.core import display
from tests.conftest import ROOT

A100 = "fixtures/ncu/a100-gemm-details.csv"


def test_repr_is_the_one_line_summary(monkeypatch):
    # the numbers of tests/golden/a100-gemm-details.table.txt (checked by hand in test_reporters)
    monkeypatch.chdir(ROOT)
    result = pipeline.build([A100])
    assert repr(result) == (
        "<rooflint.Result: 11 launches, 906 ms, headroom 193 ms (79 % efficiency) on NVIDIA A100 "
        "PCIe 40GB (a100-pcie-40gb);\n 4 kernel groups, top: cutlass::Kernel<…> 181 ms headroom>"
    )


def test_repr_html_is_the_summary_and_the_top_groups(monkeypatch):
    monkeypatch.chdir(ROOT)
    html = pipeline.build([A100])._repr_html_()
    assert html.startswith(
        '<div class="rooflint"><p><b>rooflint</b>: 906 ms total, 193 ms headroom, 79 % '
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
