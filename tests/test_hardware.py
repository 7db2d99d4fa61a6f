"""The device catalog, device files, matching and ceiling precedence (rooflint.hardware)."""

from __future__ import annotations

import dataclasses
import math
import re
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from rooflint.core import schema
from rooflint.core.errors import DeviceError
from rooflint.hardware import (
    Ceiling,
    CeilingSource,
    Device,
    Origin,
    catalog,
    get,
    load_device_file,
    match,
    profile_ceilings,
    resolve,
    scale_to_clock,
)

T = 1e12  # TFLOP/s -> FLOP/s
G = 1e9  # GB/s -> byte/s
CLOCK_2080TI = 1_305_874_122.04  # sm__cycles_elapsed.avg.per_second in the RTX 2080 Ti sgemm report

REQUIRED_IDS = {
    "k20c", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "v100-pcie-32gb", "t4",
    "rtx-2080-ti", "titan-v", "a100-pcie-40gb", "a100-sxm4-40gb", "a100-sxm4-80gb",
    "a100-pcie-80gb", "a30", "a10", "a40", "rtx-3070", "rtx-3090", "rtx-a6000", "l4", "l40s",
    "rtx-4090", "h100-pcie", "h100-sxm", "h100-nvl", "h200-sxm", "gh200", "b200", "b100", "gb200",
    "rtx-5090", "mi50", "mi60", "mi100", "mi210", "mi250", "mi250x", "mi300a", "mi300x", "mi325x",
    "mi350x", "mi355x", "rx-7900-xtx",
}  # fmt: skip


def launches(n: int = 3, **columns) -> pd.DataFrame:
    """A canonical launch table of `n` rows with the given columns (scalars are repeated)."""
    data = {k: (v if isinstance(v, list) else [v] * n) for k, v in columns.items()}
    return schema.conform(pd.DataFrame(data, index=range(n)))


def given(value: float, text: str) -> Ceiling:
    """A ceiling a device file gives, with the provenance line `text`."""
    return Ceiling(value, CeilingSource(Origin.USER, text))


def write(tmp_path, text: str, name: str = "dev.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# --- worked checks (DESIGN.md), computed by hand ------------------------------------------------


@pytest.mark.parametrize(
    "device_id,cls,ridge",
    [
        # DESIGN.md's worked checks, peaks as rate x units x clock: 304 CUs x 256 FLOP/clk x
        # 2.1 GHz = 163.43e12 FLOP/s over 5.3e12 byte/s = 30.836 FLOP/byte ("about 31")
        ("mi300x", "vector_fp32", 30.836),
        # 304 x 2048 x 2.1 GHz = 1307.44e12 / 5.3e12 = 246.687 FLOP/byte
        ("mi300x", "matrix_bf16", 246.687),
        # 132 SMs x 256 x 1.98 GHz = 66.908e12 / 3.35e12 = 19.973 FLOP/byte ("about 20")
        ("h100-sxm", "vector_fp32", 19.973),
        # 108 x 2048 x 1.41 GHz = 311.869e12 / 2039e9 = 152.952 FLOP/byte
        ("a100-sxm4-80gb", "matrix_bf16", 152.952),
    ],
)
def test_worked_ridge_points(device_id, cls, ridge):
    device = get(device_id)
    assert device.ridge(cls) == pytest.approx(ridge, abs=1e-3)
    assert device.ridge(cls, "dram") == device.ridge(cls)


def test_mi300x_matrix_ridge_is_eight_times_the_vector_ridge():
    mi300x = get("mi300x")
    assert mi300x.compute["vector_fp32"].value == 304 * 256 * 2.1e9  # 163.43 TFLOP/s
    assert mi300x.memory["dram"].value == 5300 * G
    # CDNA 3 matrix BF16 2048 FLOP per CU per clock against 256 for vector FP32: exactly 8
    assert mi300x.ridge("matrix_bf16") / mi300x.ridge("vector_fp32") == pytest.approx(8, rel=1e-12)


@pytest.mark.parametrize(
    "device_id,cores,boost_hz,dram_gb_s,sms,rel",
    [
        # 4352 cores x 2 FLOP (FMA) x 1.545 GHz = 13.447 TFLOP/s; 4352 / 64 cores per Turing SM = 68
        ("rtx-2080-ti", 4352, 1545e6, 616, 68, 1e-3),
        # 5888 cores x 2 x 1.725 GHz = 20.314 TFLOP/s; 5888 / 128 cores per GA10x SM = 46
        ("rtx-3070", 5888, 1725e6, 448, 46, 2e-3),
    ],
)
def test_geforce_figures(device_id, cores, boost_hz, dram_gb_s, sms, rel):
    d = get(device_id)
    assert d.compute["vector_fp32"].value == pytest.approx(cores * 2 * boost_hz, rel=rel)
    assert d.memory["dram"].value == dram_gb_s * G
    assert d.boost_clock_hz == boost_hz
    assert d.sm_count == sms


def test_mi250_family_is_per_gcd():
    # the package datasheets give 3276.8 GB/s and 220 / 208 CUs for two GCDs
    assert get("mi250x").memory["dram"].value == 3276.8 / 2 * G
    assert get("mi250").memory["dram"].value == 3276.8 / 2 * G
    assert get("mi250x").sm_count == 110
    assert get("mi250").sm_count == 104
    # MI250X package: 383 TFLOP/s FP16 matrix, so 191.5 per GCD: 110 CUs x 1024 x 1.7 GHz = 191.49
    assert get("mi250x").compute["matrix_fp16"].value == pytest.approx(191.5 * T, rel=1e-4)


# --- the catalog --------------------------------------------------------------------------------


def test_catalog_has_every_required_device():
    assert REQUIRED_IDS <= set(catalog())


def test_every_toml_loads_with_source_and_basic_ceilings():
    folder = resources.files("rooflint.hardware").joinpath("devices")
    stems = {e.name.removesuffix(".toml") for e in folder.iterdir() if e.name.endswith(".toml")}
    assert stems == set(catalog())
    for device in catalog().values():
        assert re.search(r"\((19|20)\d\d\)", device.source), f"{device.id}: source names no year"
        assert "vector_fp32" in device.compute, device.id
        assert "dram" in device.memory, device.id
        assert device.vendor in ("nvidia", "amd"), device.id
        assert device.profiler_names, device.id
        assert device.sm_count > 0 and device.boost_clock_hz > 0, device.id


def test_catalog_values_are_positive_si_and_use_schema_names():
    for device in catalog().values():
        assert set(device.compute) <= set(schema.COMPUTE_CLASSES), device.id
        assert set(device.memory) <= set(schema.MEMORY_LEVELS), device.id
        for ceiling in [*device.compute.values(), *device.memory.values()]:
            assert math.isfinite(ceiling.value) and ceiling.value > 0, device.id
            assert ceiling.source, device.id
        # SI units: no compute peak below 0.1 TFLOP/s, no bandwidth below 100 GB/s in this catalog
        assert min(c.value for c in device.compute.values()) > 0.1 * T, device.id
        assert device.memory["dram"].value >= 100 * G, device.id


def test_fp4_only_where_it_exists():
    with_fp4 = {d.id for d in catalog().values() if "matrix_fp4" in d.compute}
    assert with_fp4 == {"b200", "b100", "gb200", "rtx-5090", "mi350x", "mi355x"}


def test_vector_fp32_matches_cores_times_clock_where_public():
    # lanes per SM/CU x 2 (FMA) x boost clock, against the stored figure
    lanes = {
        "v100-sxm2-16gb": 64,
        "a100-sxm4-80gb": 64,
        "h100-sxm": 128,
        "rtx-4090": 128,
        "l4": 128,
    }
    for device_id, per_sm in lanes.items():
        d = get(device_id)
        expected = d.sm_count * per_sm * 2 * d.boost_clock_hz
        assert d.compute["vector_fp32"].value == pytest.approx(expected, rel=0.01), device_id


def test_ridge_points_are_derived_not_stored():
    assert not any("ridge" in f.name for f in dataclasses.fields(Device))
    folder = resources.files("rooflint.hardware").joinpath("devices")
    for entry in folder.iterdir():  # a word starting "ridge" (an NVLink bridge is no ridge)
        assert not re.search(r"\bridge", entry.read_text(encoding="utf-8")), entry.name


def test_ridge_of_missing_class_is_a_device_error():
    with pytest.raises(DeviceError, match=r"'k20c' has no compute class 'matrix_fp16'"):
        get("k20c").ridge("matrix_fp16")
    with pytest.raises(DeviceError, match=r"no memory level 'l2'"):
        get("k20c").ridge("vector_fp32", "l2")


def test_replace_ceilings_returns_a_new_device():
    h100 = get("h100-sxm")
    measured = Ceiling(3.0e12, "stream")
    changed = h100.replace_ceilings(memory={"dram": measured})
    assert changed.memory["dram"] is measured
    assert changed.compute == h100.compute
    assert h100.memory["dram"].value == 3350 * G  # the catalog device is untouched
    assert changed.ridge("vector_fp32") == pytest.approx(66.908 / 3.0, rel=1e-5)


def test_describe_rows():
    rows = get("k20c").describe()
    fp32 = 13 * 384 * 706e6  # 13 SMX x 192 cores x 2 FLOP x 706 MHz = 3.524 TFLOP/s
    assert ("vector_fp32", fp32, "op/s", get("k20c").compute["vector_fp32"].source) in rows
    assert ("dram", 208 * G, "byte/s", get("k20c").memory["dram"].source) in rows
    ridge = next(r for r in rows if r[0] == "ridge vector_fp32/dram")
    assert ridge[1] == pytest.approx(3.524352e12 / 208e9)  # 16.94 FLOP/byte
    assert ridge[2] == "op/byte"


def test_get_is_case_insensitive_and_unknown_lists_close_ids():
    assert get("H100-SXM").id == "h100-sxm"
    with pytest.raises(DeviceError) as err:
        get("h100")
    message = str(err.value)
    assert message.startswith("unknown device 'h100'; close matches: ")
    assert "h100-sxm" in message and "h100-pcie" in message
    assert message.endswith("pass --device ID (see `rooflint devices`) or --device-file FILE.toml")


# --- matching -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("display_name", "device_id"),
    [
        ("NVIDIA GeForce RTX 3070", "rtx-3070"),
        ("NVIDIA GeForce RTX 2080 Ti", "rtx-2080-ti"),
        ("GeForce RTX 2080 Ti", "rtx-2080-ti"),
        ("NVIDIA B200", "b200"),
        ("Tesla V100-PCIE-32GB", "v100-pcie-32gb"),
        ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"),
        ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("A100-PG509-200", "a100-sxm4-80gb"),  # the board name of the 80GB SXM part
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H200", "h200-sxm"),
        ("Tesla K20c", "k20c"),
        ("AMD Instinct MI300X", "mi300x"),
        ("AMD Instinct MI300A", "mi300a"),
        ("AMD Instinct MI250X", "mi250x"),
        ("AMD Instinct MI210", "mi210"),
        ("AMD Instinct MI100", "mi100"),
        ("AMD Instinct MI355X", "mi355x"),
        ("Radeon RX 7900 XTX", "rx-7900-xtx"),
        ("AMD Radeon RX 7900 XTX", "rx-7900-xtx"),
    ],
)
def test_match_fixture_names_exactly(display_name, device_id):
    device, how = match(display_name)
    assert device.id == device_id
    assert how == f"matched '{display_name}'"


@pytest.mark.parametrize(
    ("display_name", "device_id"),
    [
        ("Tesla K20c (0)", "k20c"),  # nvprof appends the device index
        ("NVIDIA Tesla T4", "t4"),
        ("GeForce RTX 3070 (1)", "rtx-3070"),
        ("MI300X_A1", "mi300x"),  # rocprof-compute sysinfo gpu_model
        ("MI300A_A1", "mi300a"),
        ("AMD Instinct MI300X VF", "mi300x"),  # SR-IOV virtual function
    ],
)
def test_match_normalised_names(display_name, device_id):
    device, how = match(display_name)
    assert device.id == device_id
    assert "by normalised name" in how


def test_exact_match_ignores_case_and_spacing():
    device, how = match("  nvidia   geforce  RTX 3070 ")
    assert device.id == "rtx-3070" and how.startswith("matched '")


def test_every_catalog_name_matches_its_own_device():
    for device in catalog().values():
        for label in (device.id, device.name, *device.profiler_names):
            assert match(label)[0].id == device.id, label


def test_similar_names_do_not_match_the_wrong_part():
    for name in (
        "NVIDIA GeForce RTX 3070 Ti",
        "NVIDIA GeForce RTX 2080",
        "NVIDIA A10G",
        "NVIDIA L40",
    ):
        with pytest.raises(DeviceError, match=re.escape(f"unknown device '{name}'")):
            match(name)


@pytest.mark.parametrize(
    ("arch", "cu_count", "device_id"),
    [
        ("gfx942", 228, "mi300a"),
        ("gfx942", 304, "mi300x"),
        ("gfx942:sramecc+:xnack-", 228, "mi300a"),
        ("gfx90a", 104, "mi210"),
        ("gfx90a", 110, "mi250x"),
        ("gfx908", 120, "mi100"),
        ("gfx950", 256, "mi350x"),
        ("gfx1100", 96, "rx-7900-xtx"),
    ],
)
def test_match_amd_by_gfx_and_cu_count(arch, cu_count, device_id):
    device, how = match(None, arch, {"cu_count": cu_count})
    assert device.id == device_id
    assert f"with {cu_count} CUs" in how


def test_amd_ambiguities_are_said():
    device, how = match(None, "gfx90a", {"cu_count": 104})
    assert "MI250 GCD also has 104 CUs" in how
    device, how = match(None, "gfx942")
    assert device.id == "mi300x" and "no CU count" in how and "mi325x" in how
    device, how = match("MI350", "gfx950")
    assert device.id == "mi350x" and "mi355x" in how
    device, how = match("mi200", None, {"cu_count": 104})  # Omniperf 1.x sysinfo name
    assert device.id == "mi210" and "name 'mi200' not in the catalog" in how


def test_name_listing_two_parts_uses_the_cu_count():
    device, how = match("AMD Instinct MI250X / MI250", None, {"cu_count": 104})
    assert device.id == "mi250" and "by its CU count 104" in how
    device, how = match("AMD Instinct MI250X / MI250")
    assert device.id == "mi250x" and "ambiguous" in how


def test_hints_supply_product_and_gfx():
    assert match(None, None, {"product": "AMD Instinct MI300A"})[0].id == "mi300a"
    assert match(None, None, {"gfx": "gfx942", "cu_count": "304"})[0].id == "mi300x"


@pytest.mark.parametrize(
    ("arch", "device_id"),
    [("3.5", "k20c"), ("7.0", "v100-sxm2-16gb"), ("8.0", "a100-sxm4-80gb"), ("sm_90", "h100-sxm"),
     ("10.0", "b200")],
)  # fmt: skip
def test_compute_capability_fallback(arch, device_id):
    device, how = match(None, arch)
    assert device.id == device_id
    cc = "9.0" if arch == "sm_90" else arch
    assert how.startswith(f"inferred from compute capability {cc}")
    assert how.endswith("pass --device to choose")


def test_unknown_name_is_not_guessed_from_compute_capability():
    with pytest.raises(DeviceError) as err:
        match("NVIDIA GeForce RTX 3080", "8.6")
    message = str(err.value)
    assert message.startswith("unknown device 'NVIDIA GeForce RTX 3080'; close matches: ")
    assert "rtx-3090" in message or "rtx-3070" in message


def test_nothing_to_match_on():
    with pytest.raises(DeviceError, match="names no device and no architecture"):
        match(None)
    with pytest.raises(DeviceError, match="no catalog default for architecture '8.7'"):
        match(None, "8.7")


# --- device files -------------------------------------------------------------------------------

FULL = """\
id = "my-gpu"
name = "Lab GPU"
vendor = "nvidia"
arch = "8.6"
[compute_tflops]
vector_fp32 = 10.0
[bandwidth_gbps]
dram = 500
"""


def test_full_user_file_is_used_as_is(tmp_path):
    path = write(tmp_path, FULL)
    device = load_device_file(path)
    assert device.id == "my-gpu" and device.name == "Lab GPU"
    assert device.compute == {"vector_fp32": given(10e12, f"user file {path}")}
    assert device.memory == {"dram": given(500e9, f"user file {path}")}
    assert (device.profiler_names, device.sm_count, device.boost_clock_hz) == ((), 0, 0.0)
    assert device.ridge("vector_fp32") == pytest.approx(20.0)  # 10e12 / 500e9


RATED = """\
name = "Lab GPU"
vendor = "nvidia"
arch = "9.0"
architecture = "hopper"
sm_count = 100
[compute]
vector_fp32 = { clock_mhz = 1500 }
matrix_bf16 = { clock_mhz = 1400, tflops = 573.4 }
[bandwidth_gbps]
dram = 500
"""


def test_user_file_may_give_compute_as_the_catalog_does(tmp_path):
    path = write(tmp_path, RATED)
    device = load_device_file(path)
    # Hopper: 256 FLOP per SM per clock x 100 SMs x 1.5 GHz; BF16 4096 x 100 x 1.4 GHz
    assert device.compute["vector_fp32"].value == pytest.approx(38.4e12, rel=1e-12)
    assert device.compute["matrix_bf16"].value == pytest.approx(573.44e12, rel=1e-12)
    assert device.compute["vector_fp32"].source == f"user file {path}"
    assert device.architecture == "hopper"
    # a device file's ceilings are used as given: the measured clock leaves them alone
    assert scale_to_clock(device, 1.0e9) is device


def rated(line: str) -> str:
    """RATED with its vector_fp32 line replaced."""
    return RATED.replace("vector_fp32 = { clock_mhz = 1500 }", line)


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        (rated("vector_fp32 = 5"), "'compute.vector_fp32'", "must be a table of clock_mhz"),
        (rated("vector_fp32 = { tflops = 1 }"), "'compute.vector_fp32'", "must be a table"),
        (rated("vector_fp32 = { clock_mhz = 1, peak = 2 }"), "'compute.vector_fp32'", "a table"),
        (rated("fp32 = { clock_mhz = 1500 }"), "'compute.fp32'", "unknown compute class"),
        (rated("matrix_fp4 = { clock_mhz = 1500 }"), "'hopper' has no matrix_fp4", "rate"),
        (
            rated("vector_fp32 = { clock_mhz = -1 }"),
            "'compute.vector_fp32.clock_mhz'",
            "must be a positive number (got -1)",
        ),
        (
            rated("vector_fp32 = { clock_mhz = 1500, tflops = 'x' }"),
            "'compute.vector_fp32.tflops'",
            "must be a positive number",
        ),
        (RATED.replace('architecture = "hopper"\n', ""), "'architecture'", "is missing"),
        (RATED.replace('"hopper"', '"hoper"'), "'architecture'", "names no architecture"),
        (RATED.replace("sm_count = 100", "sm_count = 0"), "'sm_count'", "must be positive"),
        (
            RATED.split("[compute]")[0] + "compute = 3\n[bandwidth_gbps]\ndram = 500\n",
            "'compute'",
            "must be a table",
        ),
    ],
)
def test_bad_rated_compute(tmp_path, text, key, problem):
    path = write(tmp_path, text)
    with pytest.raises(DeviceError) as err:
        load_device_file(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert key in message and problem in message
    assert "\n" not in message
    assert re.search(r"; (fix|add|rename|write)", message), message


def test_compute_given_twice_is_refused(tmp_path):
    path = write(tmp_path, RATED + "[compute_tflops]\nvector_fp32 = 10\n")
    with pytest.raises(DeviceError, match="'compute_tflops' and 'compute' both give compute"):
        load_device_file(path)


def test_user_file_own_source_is_kept_with_the_path(tmp_path):
    path = write(
        tmp_path, FULL.replace('arch = "8.6"\n', 'arch = "8.6"\nsource = "STREAM (2024)"\n')
    )
    assert load_device_file(path).memory["dram"].source == f"STREAM (2024) (user file {path})"


def test_base_overrides_only_listed_ceilings(tmp_path):
    path = write(
        tmp_path,
        'base = "h100-sxm"\n[bandwidth_gbps]\ndram = 2900\n[compute_tflops]\nmatrix_bf16 = 700\n',
    )
    device = load_device_file(path)
    h100 = get("h100-sxm")
    assert device.memory["dram"] == given(2900e9, f"user file {path}")
    assert device.compute["matrix_bf16"] == given(700e12, f"user file {path}")
    assert device.compute["vector_fp32"] == h100.compute["vector_fp32"]
    assert {k: v for k, v in device.compute.items() if k != "matrix_bf16"} == {
        k: v for k, v in h100.compute.items() if k != "matrix_bf16"
    }
    assert (device.id, device.name, device.arch, device.sm_count) == (
        "h100-sxm",
        h100.name,
        "9.0",
        132,
    )
    assert str(path) in device.source and "h100-sxm" in device.source


def test_base_must_be_a_catalog_id(tmp_path):
    path = write(tmp_path, 'base = "h100"\n')
    with pytest.raises(DeviceError) as err:
        load_device_file(path)
    assert str(err.value).startswith(
        f"{path}: key 'base' names no catalog device ('h100'; close matches: "
    )


def test_negative_bandwidth_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, FULL.replace("dram = 500", "dram = -5"))
    with pytest.raises(DeviceError) as err:
        load_device_file("dev.toml")
    assert (
        str(err.value)
        == "dev.toml: key 'bandwidth_gbps.dram' must be a positive number (got -5); fix the value"
    )


def dram(value: str) -> str:
    """FULL with its DRAM bandwidth set to `value` (TOML source text)."""
    return FULL.replace("dram = 500", f"dram = {value}")


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        (FULL.replace('name = "Lab GPU"\n', ""), "'name'", "missing key"),
        (FULL.replace("[bandwidth_gbps]\ndram = 500\n", ""), "'bandwidth_gbps'", "missing key"),
        ("sm_count = 'many'\n" + FULL, "'sm_count'", "must be a non-negative integer (got 'many')"),
        ("sm_count = 1.5\n" + FULL, "'sm_count'", "must be a non-negative integer"),
        (
            FULL.replace('vendor = "nvidia"', "vendor = 3"),
            "'vendor'",
            "must be a non-empty string (got 3)",
        ),
        ("profiler_names = 'A'\n" + FULL, "'profiler_names'", "must be a list of strings"),
        (dram("'500'"), "'bandwidth_gbps.dram'", "must be a positive number (got '500')"),
        (dram("0"), "'bandwidth_gbps.dram'", "must be a positive number (got 0)"),
        (dram("nan"), "'bandwidth_gbps.dram'", "must be a positive number (got nan)"),
        (dram("inf"), "'bandwidth_gbps.dram'", "must be a positive number (got inf)"),
        (dram("true"), "'bandwidth_gbps.dram'", "must be a positive number (got True)"),
        (FULL.replace("vector_fp32", "fp32"), "'compute_tflops.fp32'", "unknown compute class"),
        (FULL.replace("dram = 500", "hbm = 500"), "'bandwidth_gbps.hbm'", "unknown memory level"),
        (
            FULL.replace("[compute_tflops]\nvector_fp32 = 10.0\n", "compute_tflops = 5\n"),
            "'compute_tflops'",
            "must be a table",
        ),
        (FULL.replace("vector_fp32 = 10.0\n", ""), "'compute_tflops'", "is empty"),
        ("boost_clock_mhz = -1\n" + FULL, "'boost_clock_mhz'", "must be a non-negative number"),
        ("bandwith = 1\n" + FULL, "'bandwith'", "unknown key"),
    ],
)  # fmt: skip
def test_bad_device_files(tmp_path, text, key, problem):
    path = write(tmp_path, text)
    with pytest.raises(DeviceError) as err:
        load_device_file(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert key in message and problem in message
    assert "\n" not in message
    assert re.search(r"; (fix|add|rename|write)", message), message  # says how to fix it


def test_unreadable_and_invalid_toml(tmp_path):
    with pytest.raises(
        DeviceError, match=r"missing\.toml: cannot read device file .*; check the path"
    ):
        load_device_file(tmp_path / "missing.toml")
    path = write(tmp_path, "id = \n")
    with pytest.raises(DeviceError, match=r"dev\.toml: not valid TOML .*; fix the syntax"):
        load_device_file(path)


# --- ceilings from the profile, clocks, precedence ---------------------------------------------


def frame_2080ti(**extra) -> pd.DataFrame:
    # ncu: sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained = 4352 inst/cycle,
    # each FFMA 2 FLOP, at 1.305874 GHz: 4352 x 2 x 1.305874122e9 = 11.3663e12 FLOP/s
    columns = {
        "device_name": "NVIDIA GeForce RTX 2080 Ti",
        "arch": "7.5",
        "sm_clock_hz": CLOCK_2080TI,
        "peak_vector_fp32": 4352 * 2 * CLOCK_2080TI,
        "peak_bytes_dram": [637e9, np.nan, 637e9],  # given directly as byte/s
    }
    return launches(3, **{**columns, **extra})


def test_profile_ceilings_2080ti():
    found = profile_ceilings(frame_2080ti())
    assert set(found) == {"vector_fp32", "dram"}
    assert found["vector_fp32"].value == pytest.approx(11.3663e12, rel=1e-5)
    assert found["dram"].value == 637e9
    assert found["vector_fp32"].source == (
        "profile-derived: peak_sustained × measured clock (median of 3 launches, "
        "SM clock 1.306 GHz)"
    )
    assert "median of 2 launches" in found["dram"].source  # the NaN launch is not counted


def test_profile_ceilings_take_the_median():
    found = profile_ceilings(launches(3, peak_matrix_fp16=[1e12, 2e12, 100e12]))
    assert found["matrix_fp16"].value == 2e12
    assert found["matrix_fp16"].source.endswith("(median of 3 launches)")  # no clock reported


def test_profile_ceilings_empty_when_no_peaks():
    assert profile_ceilings(launches(2, device_name="NVIDIA B200")) == {}
    assert profile_ceilings(schema.empty()) == {}


def test_scale_to_clock():
    h100 = get("h100-sxm")
    scaled = scale_to_clock(h100, 1.5e9)
    # each class at its own rate per SM x 132 SMs x the measured clock, whichever clock its
    # datasheet figure assumes: FP32 256 FLOP/clk (quoted at the 1980 MHz boost) -> 50.688e12
    assert scaled.compute["vector_fp32"].value == pytest.approx(132 * 256 * 1.5e9, rel=1e-12)
    assert scaled.compute["vector_fp32"].source.endswith(
        "; scaled to measured SM clock 1.5 GHz from boost 1.98 GHz"
    )
    # BF16 4096 FLOP/clk, quoted at the 1830 MHz tensor clock -> 811.0e12; from the boost it
    # would have been 989.4e12 x 1.5 / 1.98 = 749.5e12
    assert scaled.compute["matrix_bf16"].value == pytest.approx(132 * 4096 * 1.5e9, rel=1e-12)
    assert scaled.compute["matrix_bf16"].source.endswith(
        "; scaled to measured SM clock 1.5 GHz from datasheet clock 1.83 GHz"
    )
    assert scale_to_clock(scaled, 1.98e9).compute == scale_to_clock(h100, 1.98e9).compute
    assert scaled.memory == h100.memory
    for clock in (None, 0, float("nan")):
        assert scale_to_clock(h100, clock) is h100
    measured = h100.replace_ceilings(compute={k: Ceiling(1e12, "saved") for k in h100.compute})
    assert scale_to_clock(measured, 1.5e9) is measured  # no datasheet roof: nothing to scale


def test_h100_bf16_roof_at_a_measured_1755_mhz():
    """The issue's known answer: 132 SMs x 4096 FLOP/clk x 1.755 GHz = 948.9 TFLOP/s (scaling
    the 989.4 TFLOP/s figure from the 1980 MHz boost instead gave 877.0)."""
    frame = launches(2, device_name="NVIDIA H100 80GB HBM3", arch="9.0", sm_clock_hz=1.755e9)
    device, lines = resolve(frame)
    assert device.compute["matrix_bf16"].value == pytest.approx(948.9e12, rel=1e-3)
    assert device.compute["vector_fp32"].value == pytest.approx(132 * 256 * 1.755e9, rel=1e-12)
    assert any(
        line.startswith("matrix_tf32, matrix_fp16, matrix_bf16, matrix_fp8, matrix_int8: ")
        and line.endswith("; scaled to measured SM clock 1.755 GHz from datasheet clock 1.83 GHz")
        for line in lines
    )


def test_resolve_profile_over_scaled_catalog():
    device, lines = resolve(frame_2080ti())
    assert device.id == "rtx-2080-ti"
    assert device.compute["vector_fp32"].value == pytest.approx(11.3663e12, rel=1e-5)
    assert device.memory["dram"].value == 637e9
    # no tensor peak in the profile: 68 SMs x 1024 FLOP/clk x 1.305874 GHz = 90.931 TFLOP/s
    assert device.compute["matrix_fp16"].value == pytest.approx(90.931e12, rel=1e-4)
    assert "scaled to measured SM clock 1.306 GHz" in device.compute["matrix_fp16"].source
    assert lines[0] == (
        "device: NVIDIA GeForce RTX 2080 Ti (rtx-2080-ti) — matched 'NVIDIA GeForce RTX 2080 Ti'"
    )
    assert any(line.startswith("vector_fp32: profile-derived") for line in lines)


def test_resolve_catalog_unscaled_without_clock():
    frame = launches(2, device_name="NVIDIA H100 80GB HBM3", arch="9.0")
    device, lines = resolve(frame)
    assert device.compute == get("h100-sxm").compute
    assert device.memory == get("h100-sxm").memory
    # the device line, the roofs at the boost clock, and the tensor roofs at their own clock
    assert len(lines) == 3
    assert lines[2].startswith("matrix_tf32, matrix_fp16, matrix_bf16, matrix_fp8, matrix_int8: ")
    assert lines[2].endswith("(catalog h100-sxm); at datasheet clock 1.83 GHz")


def test_resolve_measured_over_profile():
    device, lines = resolve(
        frame_2080ti(),
        measured={"dram": 600e9, "l2": 2e12, "bogus": 1.0},
        measured_source="roofline.csv",
    )
    measured = CeilingSource(Origin.MEASURED, "roofline.csv")
    assert device.memory["dram"] == Ceiling(600e9, measured)
    assert device.memory["l2"] == Ceiling(2e12, measured)
    assert measured.text == "measured: roofline.csv"
    assert device.compute["vector_fp32"].source.startswith("profile-derived")
    assert any("ignored measured ceiling 'bogus'" in line for line in lines)
    assert "dram, l2: measured: roofline.csv" in lines


def test_resolve_user_file_over_everything(tmp_path):
    path = write(
        tmp_path,
        'base = "rtx-2080-ti"\n[bandwidth_gbps]\ndram = 580\n[compute_tflops]\nmatrix_fp16 = 80\n',
    )
    device, lines = resolve(frame_2080ti(), device_file=path, measured={"dram": 600e9})
    assert device.memory["dram"] == given(580e9, f"user file {path}")
    assert device.compute["matrix_fp16"] == given(80e12, f"user file {path}")  # not clock-scaled
    assert device.compute["vector_fp32"].source.startswith("profile-derived")
    assert (
        lines[0] == f"device: NVIDIA GeForce RTX 2080 Ti (rtx-2080-ti) — from --device-file {path}"
    )


def test_resolve_device_id_overrides_the_name():
    device, lines = resolve(frame_2080ti(), device_id="t4")  # same compute capability, 7.5
    assert device.id == "t4"
    assert lines[0] == "device: NVIDIA Tesla T4 (t4) — chosen with --device"
    # catalog 8.1 TFLOP/s is replaced by the profile's own FP32 peak
    assert device.compute["vector_fp32"].value == pytest.approx(11.3663e12, rel=1e-5)


def test_resolve_full_user_file_not_in_catalog(tmp_path):
    path = write(tmp_path, FULL)
    device, _ = resolve(launches(1, device_name="Lab GPU"), device_file=path)
    assert device.id == "my-gpu"
    assert device.compute["vector_fp32"] == given(10e12, f"user file {path}")


def test_resolve_uses_most_common_device_name_and_says_so():
    frame = launches(3, device_name=["NVIDIA B200", "NVIDIA B200", "NVIDIA H200"], arch="10.0")
    device, lines = resolve(frame)
    assert device.id == "b200"
    assert lines[0].endswith(
        "the profile names 2 devices (NVIDIA B200, NVIDIA H200), used the most common"
    )


def test_resolve_passes_hints_for_amd():
    frame = launches(2, arch="gfx942")
    device, lines = resolve(frame, hints={"cu_count": 228})
    assert device.id == "mi300a"
    assert "inferred mi300a from gfx942 with 228 CUs" in lines[0]


def test_resolve_unknown_device_raises():
    with pytest.raises(DeviceError, match="unknown device 'Mystery GPU'"):
        resolve(launches(1, device_name="Mystery GPU"))
