"""The Reader contract: one registry of input readers, the options each takes, what each carries."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

import rooflint
from rooflint import parsers
from rooflint.cli import main
from rooflint.core import schema
from rooflint.core.errors import UsageError
from rooflint.core.profile import InputFormat
from rooflint.core.reader import Carries
from rooflint.parsers import kineto, ncu_csv, ncu_rep, nsys, nvprof, rocprof, rocprofv3_json
from tests.helpers import FIXTURES, ROOT, SHARED

PACKAGE_SOURCE = [ROOT / "src", ROOT / "parsers", ROOT / "hardware"]
TRACE = FIXTURES / "kineto" / "h200-train-trace.json.gz"
RAW = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
COUNTER_COLLECTION = FIXTURES / "rocprof" / "v3_docs_2025_counter_collection.csv"


# --- the registry: every reader module is in it -------------------------------------------


def reader_modules(folder: Path) -> set[str]:
    """Modules in `folder` that define a reader: a READER record, or a top-level sniff."""
    return {
        path.stem
        for path in folder.glob("*.py")
        if _top_level_names(path) & {"READER", "sniff", "sniff_folder"}
    }


def _top_level_names(path: Path) -> set[str]:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    assigned = [t for node in body if isinstance(node, ast.Assign) for t in node.targets]
    return {getattr(node, "name", None) for node in body} | {
        getattr(t, "id", None) for t in assigned
    }


def registered(readers) -> set[str]:
    return {reader.parse.__module__.rpartition(".")[2] for reader in readers}


def test_every_reader_module_is_registered():
    modules = reader_modules(ROOT / "parsers")
    assert modules == registered(parsers.READERS)
    for name in modules:  # each module's own record is the one registered, its functions its own
        reader = importlib.import_module(f"rooflint.parsers.{name}").READER
        assert reader in parsers.READERS
        assert {f.__module__ for f in (reader.sniff, reader.parse)} == {f"rooflint.parsers.{name}"}


def test_the_registry_check_finds_a_module_left_out(tmp_path):
    for path in (ROOT / "parsers").glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "omnitrace.py").write_text("def sniff(path, head):\n    return False\n")
    assert reader_modules(tmp_path) - registered(parsers.READERS) == {"omnitrace"}
    assert reader_modules(ROOT / "parsers") - registered(parsers.READERS[:-1]) == {"rocprof"}


def test_each_format_but_the_saved_report_is_read_by_one_reader():
    # a saved JSON report is read back by rooflint.saved (the API), not by a parser
    owners = {fmt: [r.name for r in parsers.READERS if fmt in r.formats] for fmt in InputFormat}
    assert owners.pop(InputFormat.SAVED_REPORT) == []
    assert all(len(names) == 1 for names in owners.values()), owners


# --- options: exactly those a reader takes -----------------------------------------------


@pytest.mark.parametrize("reader", parsers.READERS, ids=lambda r: r.name)
def test_a_reader_parses_with_exactly_its_options(reader):
    parameters = list(inspect.signature(reader.parse).parameters.values())
    assert parameters[0].name == "path"
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)  # no **options swallowed
    assert [p.name for p in parameters[1:]] == [
        *reader.options,
        *(["progress"] if reader.progress else []),
    ]


@pytest.mark.parametrize(
    "path,option,message",
    [
        (TRACE, "locale", "PyTorch profiler trace input takes no option 'locale' (it takes none)"),
        (COUNTER_COLLECTION, "locale", "rocprof input takes no option 'locale' (it takes: arch)"),
        (RAW, "arch", "Nsight Compute CSV input takes no option 'arch' (it takes: locale)"),
        (RAW, "device", "Nsight Compute CSV input takes no option 'device' (it takes: locale)"),
    ],
)
def test_an_option_a_reader_does_not_take_is_a_usage_error(path, option, message):
    with pytest.raises(UsageError) as raised:
        parsers.read(path, **{option: "x"})
    assert str(raised.value) == f"{path}: {message}; drop it"


def test_an_option_left_at_none_is_not_given_and_a_taken_one_arrives():
    assert len(parsers.read(TRACE, locale=None).launches) == len(parsers.read(TRACE).launches)
    # the file names no architecture (its arch column is empty); the option sets it
    assert parsers.read(COUNTER_COLLECTION).launches["arch"].isna().all()
    assert (parsers.read(COUNTER_COLLECTION, arch="gfx950").launches["arch"] == "gfx950").all()


def test_a_locale_for_no_input_of_the_run_is_exit_2_and_writes_nothing(tmp_path):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["report", str(TRACE), "--locale", "de_DE", "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"rooflint: error: {TRACE}: option locale='de_DE' applies only to Nsight Compute CSV "
        "input, and none of the inputs is; drop it\n"
    )
    assert not out.exists()


def _ambiguous_csv(path: Path) -> Path:
    """One launch whose time "84,480" reads as 84480 ns (en_US) or 84.48 ns (de_DE): ncu's CSV
    reader refuses to guess (tests/test_ncu_csv.py::test_ambiguous_locale_needs_an_override)."""
    path.write_text(
        '"ID","Process ID","Kernel Name","Block Size","Grid Size","Device","CC",'
        '"gpu__time_duration.sum"\n'
        '"","","","","","","","ns"\n'
        '"0","1","k","(1, 1, 1)","(1, 1, 1)","0","8.0","84,480"\n'
    )
    return path


def test_in_a_run_of_a_trace_and_a_csv_the_locale_reaches_the_csv_alone(tmp_path):
    csv = _ambiguous_csv(tmp_path / "ambiguous.csv")
    unsettled = rooflint.report(str(TRACE), str(csv))
    assert [path for path, _ in unsettled.skipped] == [str(csv)]  # read without a locale: refused
    settled = rooflint.report(str(TRACE), str(csv), locale="en_US")
    assert settled.skipped == []
    # the CSV is read; its one kernel ("k") is none of the trace's, so it is no counter export
    # of the trace's run (join.SAME_RUN) and is reported on its own, its launch not lost
    trace, counters = settled.inputs
    assert trace.format == "pytorch-trace"
    assert counters.launches["kernel"].tolist() == ["k"]
    assert counters.launches["duration_s"].tolist() == [84480e-9]  # en_US: 84,480 ns


# --- what a reader carries ----------------------------------------------------------------


def carried(profile) -> Carries:
    """What a profile's launch table holds: measured counters, a stream per launch, operators."""
    launches = profile.launches
    measured = launches[schema.OPS + schema.BYTES].notna().any(axis=1)
    for column in ("flops_source", "bytes_source"):  # a trace's modelled values are no counters
        if column in launches:
            measured &= launches[column].isna() | (launches[column] == "counters")
    found = Carries.COUNTERS if measured.any() else Carries.NONE
    if "stream" in launches and launches["stream"].notna().any():
        found |= Carries.TIMELINE
    if "op" in launches and launches["op"].notna().any():
        found |= Carries.OPERATORS
    return found


# reader -> real inputs that, together, show everything it claims to carry (str: a shared one)
SHOWN_BY = {
    ncu_csv.READER: [RAW, FIXTURES / "ncu" / "a100-gemm-details.csv"],
    ncu_rep.READER: [FIXTURES / "ncu" / "h200-tensor-ops" / "gemm-bf16.ncu-rep"],
    kineto.READER: [TRACE, "kineto/hta-a100-cupti-counters.json.gz"],  # the latter: CUPTI counters
    nvprof.READER: ["ncu/nvprof-k20c-metrics.csv"],
    rocprof.READER: [COUNTER_COLLECTION, "rocprof/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv"],
    nsys.READER: [FIXTURES / "nsys" / "nsysai-2xh100-excerpt.sqlite"],
    rocprofv3_json.READER: ["rocprof/v3_mi350x_rocm_json_results.json.gz"],
}


@pytest.mark.parametrize("reader", parsers.READERS, ids=lambda r: r.name)
def test_a_reader_carries_what_it_says(reader):
    if reader is ncu_rep.READER and not ncu_rep.available():
        pytest.skip("ncu_report is not installed")
    paths = [p if isinstance(p, Path) else SHARED / p for p in SHOWN_BY[reader]]
    shown = Carries.NONE
    for path in [p for p in paths if p.exists()]:
        assert parsers.detect(path) is reader
        profile = parsers.read(path)
        assert profile.format in reader.formats
        assert carried(profile) & ~reader.carries == Carries.NONE, path  # never more than it says
        shown |= carried(profile)
    if not all(p.exists() for p in paths):
        pytest.skip("shared/fixtures is not present beside the checkout")
    assert shown == reader.carries


# --- formats are enum members, never text ---------------------------------------------------

ENUM = ROOT / "src" / "rooflint" / "core" / "profile.py"
# texts equal to a format's that name something else: the rocpd database kind of rocprof_sqlite
NOT_FORMATS = {(ROOT / "parsers" / "rocprof_sqlite.py", "rocpd")}


def format_texts(path: Path) -> list[str]:
    """Every string literal in a module that is some InputFormat's text, as file:line:text. Any
    comparison or assignment of a format by text has one: `p.format == "pytorch-trace"`, a
    constant `TRACE_FORMAT = "pytorch-trace"`, `Profile(format="ncu-raw")`."""
    texts = {fmt.value for fmt in InputFormat}
    return [
        f"{path.name}:{node.lineno}:{node.value}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and node.value in texts
        and (path, node.value) not in NOT_FORMATS
    ]


def test_formats_are_named_by_the_enum_alone():
    modules = [p for folder in PACKAGE_SOURCE for p in folder.rglob("*.py") if p != ENUM]
    assert len(modules) > 50
    assert [hit for path in modules for hit in format_texts(path)] == []


def test_the_format_check_finds_text(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        'TRACE_FORMAT = "pytorch-trace"\n'
        'ok = p.format in ("ncu-raw", "ncu-details")\n'
        'Profile(source="x", format="rocpd", launches=None)\n'
        "same = p.format == InputFormat.NCU_RAW  # a member: fine\n"
        'text = "a pytorch-trace file"  # a longer text: fine\n'
    )
    assert format_texts(planted) == [
        "planted.py:1:pytorch-trace",
        "planted.py:2:ncu-raw",
        "planted.py:2:ncu-details",
        "planted.py:3:rocpd",
    ]


def test_device_and_ceiling_are_core_types_hardware_re_exports():
    from rooflint import hardware
    from rooflint.core import device

    assert (hardware.Device, hardware.Ceiling) == (device.Device, device.Ceiling)
    assert not (ROOT / "hardware" / "device.py").exists()


def test_a_bad_setting_is_not_hidden_behind_the_locale_check(tmp_path, monkeypatch):
    # ROOFLINT_MAX_INPUT_BYTES is checked as each file is recognised: its own usage error comes
    # through, not "no input takes --locale" for inputs that were never recognised
    monkeypatch.setenv("ROOFLINT_MAX_INPUT_BYTES", "lots")
    with pytest.raises(UsageError, match="ROOFLINT_MAX_INPUT_BYTES='lots' is not a positive"):
        rooflint.report(str(_ambiguous_csv(tmp_path / "a.csv")), locale="en_US")
