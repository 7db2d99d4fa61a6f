"""Devices identified from their properties (hardware/identify.by_properties): a GPU whose name
the catalog does not know, or a trace with no deviceProperties at all.

Expected parts come from ../shared/fixtures/README.md's provenance table: hta-mi250-minitoy is
an MI250 (ROCm 6.2) named only "AMD Radeon Graphics"; the hta-2rank traces are "A100 class".
"""

from __future__ import annotations

import pytest

import rooflint
from rooflint.core import warnings
from rooflint.hardware import get
from rooflint.hardware.identify import Clues, _hip_version, by_properties, identify
from rooflint.parsers import kineto
from tests.helpers import shared


@pytest.fixture(scope="module")
def minitoy():
    return kineto.READER.read(shared("kineto/hta-mi250-minitoy.json.gz"))


@pytest.fixture(scope="module")
def rank0():
    return kineto.READER.read(shared("kineto/hta-2rank-sampled-rank-0.json.gz"))


def test_the_properties_the_parser_keeps(minitoy):
    """The trace's deviceProperties: name "AMD Radeon Graphics", numSms 104, totalGlobalMem
    68,702,699,520 (99.98 % of 64 GiB), computeMajor 9, computeMinor 0, warpSize 64 (AMD)."""
    assert minitoy.device_hints == {
        "vendor": "amd",
        "cu_count": 104,
        "compute_version": "9.0",
        "memory_bytes": 68_702_699_520,
    }


def test_an_mi250_gcd_from_vendor_cus_memory_and_version(minitoy):
    """AMD parts with 104 CUs: mi210 and mi250 (one GCD); both 64 GiB, both gfx90a (HIP 9.0),
    and the same compute and DRAM ceilings (1700 MHz, 1638.4 GB/s: their TOMLs). Their link
    roofs differ (MI210 PCIe 4.0 x16 31.5 GB/s, an MI250 GCD's Infinity Fabric 150 GB/s): the
    pick is the higher, so a collective's share of its roof is not overstated."""
    ident = identify(minitoy.launches, minitoy.device_hints)
    assert ident.device.id == "mi250" and not ident.provisional
    assert "'AMD Radeon Graphics' names no catalogued part" in ident.evidence
    assert "AMD with 104 CUs; 68.7 GB of device memory; HIP compute version 9.0" in ident.evidence
    assert "mi210 has the same ceilings (but a lower link roof" in ident.evidence
    assert get("mi210").link.value < get("mi250").link.value


def test_the_sm_count_from_grid_and_blocks_per_sm(rank0):
    """The trace's first kernel, fbgemm_gpu::permute_2D_lengths_kernel: grid [2400, 1, 1],
    args "blocks per SM" 22.222221; 2400 / 22.222221 = 108.000005, rounded 108 (an A100's SM
    count). Every one of its 1154 kernels with a grid gives 108; its 50 copies and fills none."""
    launches = rank0.launches
    first = launches.iloc[0]
    assert first["grid"] == "(2400, 1, 1)" and first["sm_count"] == 108
    assert set(launches["sm_count"].dropna()) == {108}
    assert rank0.device_hints["vendor"] == "nvidia"


def test_the_a100_family_from_its_sm_count_takes_the_highest_roofs(rank0):
    """The catalog's 108-SM parts are the four A100s; their DRAM roofs differ (40GB 1555,
    PCIe 80GB 1935, SXM4 80GB 2039 GB/s: the TOMLs), the compute roofs agree (1410 MHz boost).
    The SXM4 80GB has the highest of every roof (NVLink 300 GB/s against PCIe 31.5): picked,
    provisional, with every efficiency a lower bound."""
    ident = identify(rank0.launches, rank0.device_hints)
    assert ident.device.id == "a100-sxm4-80gb"
    assert ident.provisional and ident.highest_roofs
    assert set(ident.candidates) == {"a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb"}
    assert "108 SMs (grid blocks / CUPTI's blocks per SM)" in ident.evidence
    assert "a100-sxm4-40gb has the same ceilings" not in ident.evidence  # the pick's group only


def test_the_warning_names_the_bound_and_the_device_option():
    result = rooflint.report(shared("kineto/hta-2rank-sampled-rank-0.json.gz"))
    (line,) = warnings.device_warnings(result)
    assert "each efficiency is a lower bound and each headroom an upper bound" in line
    assert "pass --device a100-sxm4-80gb or --device a100-pcie-40gb" in line
    chosen = rooflint.report(
        shared("kineto/hta-2rank-sampled-rank-0.json.gz"), device="a100-pcie-40gb"
    )
    assert chosen.devices[0].device.id == "a100-pcie-40gb"
    assert not warnings.device_warnings(chosen)


def test_a_vendor_and_count_no_part_has_is_refused():
    from rooflint.core.errors import DeviceError

    with pytest.raises(DeviceError, match="fits no catalogued part"):
        by_properties(Clues(vendor="nvidia", sm_count=7))


@pytest.mark.parametrize(
    "gfx, version", [("gfx90a", "9.0"), ("gfx908", "9.0"), ("gfx942", "9.4"), ("gfx1100", "11.0")]
)
def test_hip_compute_versions_of_gfx_names(gfx, version):
    """HIP's hipDeviceProp_t major.minor of each gfx target (ROCm's gcnArchName table)."""
    assert _hip_version(gfx) == version


def test_where_no_candidate_has_every_highest_roof_the_dram_roof_decides():
    """A100 PCIe 40GB against V100 SXM2 32GB (their TOMLs): the A100 has the higher DRAM roof
    (1555 against 900 GB/s) and compute roofs, the V100 the higher link roof (NVLink 150 GB/s per
    direction against PCIe 4.0's 31.5): neither has every highest roof; the DRAM roof decides
    and the line says so."""
    from rooflint.hardware.identify import _highest

    pool = [get("v100-sxm2-32gb"), get("a100-pcie-40gb")]
    ident = _highest(pool, ["two parts"])
    assert ident.device.id == "a100-pcie-40gb" and ident.provisional
    assert "no candidate has the highest of every roof" in ident.evidence
