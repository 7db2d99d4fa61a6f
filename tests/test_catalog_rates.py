"""Every catalog compute peak is its architecture's rate per SM/CU x units x the clock its
datasheet quotes, and every datasheet figure the catalog records re-derives from those three.

The rates come from the architecture whitepapers (hardware/architectures.toml, each row with its
source); the figures and clocks from each device's datasheet (hardware/devices/*.toml). The two
are independent documents: a figure quoted at another clock than the one recorded (H100's tensor
figures at 1830 MHz, not the 1980 MHz boost), a wrong SM count or a wrong architecture row shows
as a rate no SM of that architecture has.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest

from rooflint.core import schema
from rooflint.hardware import get
from rooflint.hardware.rates import architectures

FOLDER = resources.files("rooflint.hardware").joinpath("devices")
FILES = {
    entry.name.removesuffix(".toml"): tomllib.loads(entry.read_text(encoding="utf-8"))
    for entry in FOLDER.iterdir()
    if entry.name.endswith(".toml")
}
# Datasheet figures carry 3-5 significant digits (989.4, 1978.9): 0.5 % covers their rounding.
TOLERANCE = 0.005


def printed_unit(figure: float) -> float:
    """One unit in the last digit a figure is printed with; the catalog writes each figure as its
    datasheet prints it (34, 5.2, 989.4), and a two-digit figure ("34" for 33.45, "75" for 74.45,
    truncated or rounded) says no more than that."""
    return 10.0 ** -len(repr(figure).partition(".")[2])


def implied_rate(data: dict, entry: dict) -> float:
    """The rate per SM/CU per clock a datasheet figure implies: op/s / (units x clock)."""
    return entry["tflops"] * 1e12 / (data["sm_count"] * entry["clock_mhz"] * 1e6)


@pytest.mark.parametrize("device_id", sorted(FILES))
def test_datasheet_figures_imply_the_architecture_rate(device_id):
    data = FILES[device_id]
    arch = architectures()[data["architecture"]]
    checked = 0
    for cls, entry in data["compute"].items():
        if "tflops" not in entry:  # not in the datasheet: the rate alone sets it
            continue
        rate, figure = arch.rates[cls], entry["tflops"]
        slack = max(TOLERANCE, printed_unit(figure) / figure)
        implied = implied_rate(data, entry)
        assert abs(implied / rate - 1) <= slack, (
            f"{device_id} {cls}: {figure} TFLOP/s over {data['sm_count']} units at "
            f"{entry['clock_mhz']} MHz is {implied:.1f} op per unit per clock; {arch.key} does "
            f"{rate:g}"
        )
        checked += 1
    assert checked or device_id == "titan-v", f"{device_id}: no datasheet figure checked"


@pytest.mark.parametrize("device_id", sorted(FILES))
def test_every_peak_is_rate_times_units_times_quoted_clock(device_id):
    data, device = FILES[device_id], get(device_id)
    rates = architectures()[data["architecture"]].rates
    assert set(device.compute) == set(data["compute"])
    for cls, entry in data["compute"].items():
        expected = rates[cls] * data["sm_count"] * entry["clock_mhz"] * 1e6
        assert device.compute[cls].value == pytest.approx(expected, rel=1e-12), cls
        assert device.compute[cls].clock_hz == entry["clock_mhz"] * 1e6, cls


def test_hopper_tensor_figures_need_their_own_clock():
    """The figure the issue started from: 989.4 TFLOP/s BF16 over 132 SMs at the 1980 MHz boost
    would be 3786 FLOP per SM per clock, which no SM does; at 1830 MHz it is Hopper's 4096."""
    h100 = FILES["h100-sxm"]
    at_boost = dict(h100["compute"]["matrix_bf16"], clock_mhz=h100["boost_clock_mhz"])
    assert implied_rate(h100, at_boost) == pytest.approx(3785.6, abs=0.1)
    assert implied_rate(h100, h100["compute"]["matrix_bf16"]) == pytest.approx(4096, rel=1e-4)


def test_printed_unit_follows_the_digits_written():
    assert printed_unit(34) == 1  # H200 FP64: 33.45 printed "34"
    assert printed_unit(5.2) == pytest.approx(0.1)
    assert printed_unit(989.4) == pytest.approx(0.1)
    assert printed_unit(1978.9) == pytest.approx(0.1)
    # so a figure 1.6 % off passes only where its datasheet printed two digits
    assert max(TOLERANCE, printed_unit(34) / 34) > abs(33.45 / 34 - 1)
    assert max(TOLERANCE, printed_unit(989.4) / 989.4) < 0.016


@pytest.mark.parametrize("device_id", sorted(FILES))
def test_quoted_clocks_are_explained_and_never_above_the_boost(device_id):
    data = FILES[device_id]
    clocks = {entry["clock_mhz"] for entry in data["compute"].values()}
    assert max(clocks) <= data["boost_clock_mhz"], device_id
    if clocks != {data["boost_clock_mhz"]}:
        source = data.get("clock_source", "")
        for clock in clocks - {data["boost_clock_mhz"]}:
            assert f"{clock:g} MHz" in source, f"{device_id}: {clock} MHz not in clock_source"


def test_architecture_rows_have_sources_and_known_classes():
    for arch in architectures().values():
        assert re.search(r"\((19|20)\d\d\)", arch.source), f"{arch.key}: source names no year"
        assert set(arch.rates) <= set(schema.COMPUTE_CLASSES), arch.key
        assert all(rate > 0 for rate in arch.rates.values()), arch.key
        assert arch.name.split()[0] in ("NVIDIA", "AMD"), arch.key


@pytest.mark.parametrize("device_id", sorted(FILES))
def test_device_and_architecture_are_of_one_vendor(device_id):
    data = FILES[device_id]
    vendor = architectures()[data["architecture"]].name.split()[0].lower()
    assert vendor == data["vendor"], device_id
    assert get(device_id).architecture == data["architecture"]


def test_every_architecture_is_used():
    used = {data["architecture"] for data in FILES.values()}
    assert used == set(architectures())
