"""The Python API: the command line's verdicts, a brief Result, the README example that runs."""

from __future__ import annotations

import csv
import io
import math
import re

import pytest
from click.testing import CliRunner

import rooflint
from rooflint.cli import main
from tests.conftest import ROOT, shared

CASES = [
    ("fixtures/ncu/a100-gemm-details.csv", "a100-pcie-40gb"),
    ("fixtures/ncu/rtx2080ti-sgemm-raw-base.csv", "rtx-2080-ti"),
    ("ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv", "a100-pcie-40gb"),
]


def _path(relative: str):
    return ROOT / relative if relative.startswith("fixtures/") else shared(relative)


def _cli_launches(path, device) -> list[dict]:
    result = CliRunner().invoke(
        main, ["report", str(path), "--device", device, "--format", "csv", "--per", "launch", "-q"]
    )
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.output)))


def _same(text: str, value) -> bool:
    if text == "":
        return value is None or (isinstance(value, float) and math.isnan(value))
    return float(text) == pytest.approx(float(value), rel=1e-12, abs=0)


@pytest.mark.parametrize("relative,device", CASES, ids=[c[1] + ":" + c[0] for c in CASES])
def test_analyze_gives_the_clis_verdicts(relative, device):
    path = _path(relative)
    api = rooflint.analyze(rooflint.load(path), device)
    cli = _cli_launches(path, device)
    assert len(cli) == len(api) > 0
    assert [row["verdict"] for row in cli] == api["verdict"].tolist()
    assert all(
        _same(row["efficiency"], value) for row, value in zip(cli, api["efficiency"], strict=True)
    )


def test_report_takes_device_and_shows_itself_briefly(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = rooflint.report("fixtures/ncu/a100-gemm-details.csv", device="a100-pcie-40gb")
    text = repr(result)
    # 11 launches in the file; 906 ms total, 192 ms headroom and 79 % as in the golden table
    # (tests/golden)
    assert text.startswith("<rooflint.Result: 11 launches, 906 ms, headroom 192 ms (79 % ")
    assert len(text.splitlines()) <= 2 and len(text) < 300
    html = result._repr_html_()
    assert "NVIDIA A100 PCIe 40GB" in html and html.count("<tr>") == 1 + len(result.kernels)
    assert "cutlass::Kernel&lt;…&gt;" in html


def test_repr_html_shows_the_warnings():
    result = rooflint.report(shared("rocprof"))
    assert "Warning:</b> device provisional" in result._repr_html_()
    assert "warning(s)" in repr(result)


def test_readme_api_example_runs(monkeypatch, capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- api-example -->\n```python\n(.*?)```", readme, re.S)
    assert block, "README lost its API example"
    monkeypatch.chdir(ROOT)
    exec(compile(block.group(1), "README.md (API example)", "exec"), {})
    out = capsys.readouterr().out
    assert "<rooflint.Result: 11 launches" in out and "compute-bound" in out


def test_a_loaded_launch_table_can_be_edited_in_place():
    """Users fill in what their profiler did not measure (`launches.loc[rows, col] = value`):
    no column of the table may be a read-only array, such as one NaN repeated by a zero-stride
    view (pandas raises "assignment destination is read-only" then)."""
    launches = rooflint.load(ROOT / "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv")
    unmeasured = [
        c for c in launches if launches[c].dtype == "float64" and launches[c].isna().all()
    ]
    assert unmeasured  # this export has quantities ncu did not give (bytes_lds among them)
    launches.loc[launches.index[:1], unmeasured] = 1.0
    assert (launches.loc[launches.index[0], unmeasured] == 1.0).all()


def test_launch_text_is_categorical_and_reads_as_text():
    """Kernel names repeat over thousands of launches, so the table holds its text as
    Categoricals; what a user does with text still works on them. The bundled A100 details
    export has 11 launches of 4 kernels, counted off the file's ID and Kernel Name cells: a
    CUTLASS GEMM 6 times, InitializeMatrix_kernel<__half> and <float> twice each, and
    ampere_s16816gemm_fp16_256x128_ldg8_stages_64x3_nn once."""
    launches = rooflint.load(ROOT / "fixtures/ncu/a100-gemm-details.csv")
    kernel = launches["kernel"]
    assert str(kernel.dtype) == "category"
    assert len(kernel.cat.categories) == 4
    assert list(kernel.cat.categories) == sorted(kernel.cat.categories)
    assert kernel.str.startswith("void InitializeMatrix_kernel<").sum() == 4
    assert (kernel == "ampere_s16816gemm_fp16_256x128_ldg8_stages_64x3_nn").sum() == 1
    assert sorted(kernel.value_counts().tolist(), reverse=True) == [6, 2, 2, 1]
    edited = launches["notes"].astype("string")  # new text goes into a "string" column
    edited.iloc[0] = "checked by hand"
    assert edited.iloc[0] == "checked by hand"
