"""Host copies against the host link: [host_link] in the catalog, each HtoD/DtoH copy's verdict,
headroom and advice, worked out by hand from real traces."""

from __future__ import annotations

import pytest

import rooflint
from rooflint.core import explain, hostcopies
from rooflint.core.device import LinkKind
from rooflint.core.errors import DeviceError
from rooflint.hardware import catalog, get, load_device_file
from rooflint.parsers.kineto_models import copy_code
from tests.helpers import shared

G = 1e9
GEN4 = 16 * 16 * 128 / 130 / 8  # PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s
GEN5 = 16 * 32 * 128 / 130 / 8  # PCIe 5.0 x16: 63.0 GB/s
# Per direction; datasheets quote both directions summed (A100: PCIe Gen4 64 GB/s; H100, H200:
# PCIe Gen5 128 GB/s; MI300X: PCIe Gen 5 x16 128 GB/s; GH200: NVLink-C2C 900 GB/s).
EXPECTED = {
    "a100-sxm4-40gb": (LinkKind.PCIE, GEN4),  # the SXM4 module's host link is PCIe Gen4 too
    "a100-sxm4-80gb": (LinkKind.PCIE, GEN4),
    "a100-pcie-40gb": (LinkKind.PCIE, GEN4),
    "a100-pcie-80gb": (LinkKind.PCIE, GEN4),
    "h100-sxm": (LinkKind.PCIE, GEN5),
    "h100-pcie": (LinkKind.PCIE, GEN5),
    "h100-nvl": (LinkKind.PCIE, GEN5),
    "h200-sxm": (LinkKind.PCIE, GEN5),
    "b200": (LinkKind.PCIE, GEN5),
    "mi300x": (LinkKind.PCIE, GEN5),
    "gh200": (LinkKind.NVLINK_C2C, 900 / 2),
    "mi250": (LinkKind.PCIE, GEN4),
    "mi250x": (LinkKind.PCIE, GEN4),
    "mi210": (LinkKind.PCIE, GEN4),
}


@pytest.mark.parametrize("device_id", sorted(EXPECTED))
def test_host_link_per_direction_with_its_source(device_id):
    kind, gbps = EXPECTED[device_id]
    host = get(device_id).host_link
    assert host is not None and host.kind == kind
    assert host.value == pytest.approx(gbps * G, rel=2e-3)  # the files write 31.5 and 63
    assert "per direction" in host.source  # the figure each way, derived in the source


def test_every_host_link_names_its_document():
    for device in catalog().values():
        if device.host_link is not None:
            assert len(device.host_link.source) > 40, device.id


def test_a_device_file_gives_a_host_link(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('base = "a100-sxm4-80gb"\n[host_link]\nkind = "nvlink_c2c"\ngbps = 450\n')
    device = load_device_file(path)
    assert device.host_link.kind == LinkKind.NVLINK_C2C and device.host_link.value == 450 * G
    path.write_text('base = "a100-sxm4-80gb"\n[host_link]\nkind = "usb"\ngbps = 1\n')
    with pytest.raises(DeviceError, match="host_link.kind"):
        load_device_file(path)


@pytest.mark.parametrize(
    "name, code",
    [
        ("Memcpy HtoD (Pageable -> Device)", hostcopies.Copy.HTOD_PAGEABLE),
        ("Memcpy HtoD (Pinned -> Device)", hostcopies.Copy.HTOD_PINNED),
        ("Memcpy DtoH (Device -> Pageable)", hostcopies.Copy.DTOH_PAGEABLE),
        ("Memcpy DtoH (Device -> Pinned)", hostcopies.Copy.DTOH_PINNED),
        ("Memcpy HtoD (Host -> Device)", hostcopies.Copy.HTOD),  # ROCm: no host memory kind
        ("Memcpy DtoH", hostcopies.Copy.DTOH),  # rocprofv3
        ("Memcpy DtoD (Device -> Device)", None),
        ("Memcpy PtoP (Device -> Device)", None),
    ],
)
def test_copy_codes_from_names(name, code):
    assert copy_code(name) == (None if code is None else str(code))


@pytest.fixture(scope="module")
def alexnet():
    return rooflint.report(shared("kineto/hta-a100-alexnet.json.gz"))


def test_one_pageable_copy_by_hand(alexnet):
    """hta-a100-alexnet.json.gz's largest "Memcpy HtoD (Pageable -> Device)" (the trace's event:
    args bytes 150,994,944, dur 34,780 µs) on the a100-sxm4-40gb the trace is identified as
    (deviceProperties: A100-PG509-200 with 42.3 GB). Bytes / time = 150,994,944 / 34.780e-3 s
    = 4.3414 GB/s against the PCIe 4.0 x16 roof of 31.5 GB/s per direction = 13.782 %; time at
    the roof 150,994,944 / 31.5e9 = 4.7935 ms; headroom 34.780 - 4.7935 = 29.9865 ms."""
    launches = alexnet.launches
    copy = launches[launches["comm_bytes"] == 150_994_944].iloc[0]
    assert copy["kernel"] == "Memcpy HtoD (Pageable -> Device)"
    assert copy["collective"] == hostcopies.Copy.HTOD_PAGEABLE
    assert copy["duration_s"] == pytest.approx(34_780e-6)
    assert copy["comm_algbw_bytes_per_s"] == pytest.approx(4.3414e9, rel=1e-4)
    assert copy["efficiency"] == pytest.approx(0.13782, rel=1e-4)
    assert copy["t_bound_s"] == pytest.approx(4.7935e-3, rel=1e-4)
    assert copy["headroom_s"] == pytest.approx(29.9865e-3, rel=1e-5)
    assert copy["limiter"] == "host_pcie" and copy["verdict"] == "communication"
    assert copy["kind"] == "memcpy"  # the breakdown keeps memcpy as its own class


def test_a_small_copy_is_latency_bound(alexnet):
    """The trace's 256-byte HtoD copy (dur 1 µs): under hostcopies.LATENCY_BYTES (128 KiB), so
    latency; 256 / 31.5e9 = 8.13 ns at the roof, 0.813 % of its microsecond."""
    copy = alexnet.launches[alexnet.launches["comm_bytes"] == 256].iloc[0]
    assert copy["limiter"] == hostcopies.LATENCY
    assert copy["efficiency"] == pytest.approx(256 / GEN4 / G / 1e-6, rel=1e-3)
    text = explain.sentence("communication", copy["efficiency"], hostcopies.LATENCY)
    assert text.startswith("latency-bound copy at 1 % of the host link's roof")


def test_memcpy_stays_its_own_class_of_busy_time(alexnet):
    """The 16 HtoD copies sum to 55.503 ms (the trace's durations): the breakdown's memcpy."""
    figures = alexnet.summary.timeline["devices"][0]
    assert figures["memcpy_s"] == pytest.approx(55.503e-3, rel=1e-4)
    assert figures["communication_s"] == 0


def test_the_group_sentence_names_the_pcie_roof_and_the_pageable_advice(alexnet):
    from rooflint.reporters import common

    row = alexnet.kernels[alexnet.kernels["kernel"].astype(str).str.startswith("Memcpy HtoD")]
    row = row.iloc[0]
    assert row["comm_pageable"] == 16
    text = common.kernel_sentence(alexnet, row)
    assert text.startswith("communication-bound at 14 % of the PCIe roof (host copy")
    assert "pin the host memory (DataLoader(pin_memory=True)" in text
    assert "bus bandwidth" not in text


def test_a_copy_without_bytes_states_why():
    """hta-mi250-minitoy.json.gz's two "Memcpy HtoD (Host -> Device)" events carry no `bytes`
    argument: no verdict against the host link, and the reason says so."""
    result = rooflint.report(shared("kineto/hta-mi250-minitoy.json.gz"), device="mi250")
    copies = result.launches[result.launches["kind"].astype(str) == "memcpy"]
    assert len(copies) == 2
    assert set(copies["reason"].astype(str)) == {hostcopies.Missing.NO_BYTES.value}
    assert copies["efficiency"].isna().all()


def test_pcie_cards_reach_their_host_over_their_pcie_link():
    """A card whose GPU-to-GPU roof is PCIe (its [link]) crosses the same x16 link to its host;
    every other catalogued part has a [host_link] of its own but three: B100 and GB200 (no
    per-GPU host figure found: HGX B100's PCIe generation and how GB200's NVLink-C2C is split
    between the superchip's two GPUs) and MI300A (an APU: CPU and GPU share its HBM)."""
    for device in catalog().values():
        if device.link is not None and device.link.kind == LinkKind.PCIE:
            assert device.host_link.value == device.link.value, device.id
    missing = {d.id for d in catalog().values() if d.host_link is None}
    assert missing == {"b100", "gb200", "mi300a"}
