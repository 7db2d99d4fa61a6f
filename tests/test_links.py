"""The link roof: every catalog device's GPU-to-GPU bandwidth per direction, and [link] in files."""

from __future__ import annotations

import pytest

from rooflint.core.device import LinkKind
from rooflint.core.errors import DeviceError
from rooflint.hardware import catalog, get, load_device_file

G = 1e9

# Per direction, the figure NCCL's bus bandwidth is measured against (nccl-tests
# doc/PERFORMANCE.md: busBw "reflects how optimally the hardware is used" and compares with the
# hardware's peak bandwidth, each way). Datasheets quote NVLink and Infinity Fabric as the sum of
# both directions, so each figure is half the datasheet's, re-derived here from links x rate.
EXPECTED = {
    # NVIDIA A100 datasheet (2021): NVLink 600 GB/s = 12 third-generation links x 25 GB/s x 2
    "a100-sxm4-80gb": (LinkKind.NVLINK, 12 * 25),
    "a100-sxm4-40gb": (LinkKind.NVLINK, 12 * 25),
    # NVIDIA H100 (2023) and H200 (2024) datasheets: NVLink 900 GB/s = 18 fourth-gen links x 25 x 2
    "h100-sxm": (LinkKind.NVLINK, 18 * 25),
    "h200-sxm": (LinkKind.NVLINK, 18 * 25),
    "gh200": (LinkKind.NVLINK, 18 * 25),
    # DGX B200 datasheet (2024): NVLink 1.8 TB/s = 18 fifth-generation links x 50 GB/s x 2
    "b200": (LinkKind.NVLINK, 18 * 50),
    "b100": (LinkKind.NVLINK, 18 * 50),
    "gb200": (LinkKind.NVLINK, 18 * 50),
    # V100 datasheet: NVLink 300 GB/s = 6 second-generation links x 25 GB/s x 2
    "v100-sxm2-32gb": (LinkKind.NVLINK, 6 * 25),
    # MI300X datasheet (2023): 7 Infinity Fabric links of 128 GB/s (x16 at 32 GT/s: 64 each way)
    "mi300x": (LinkKind.INFINITY_FABRIC, 7 * 64),
    "mi325x": (LinkKind.INFINITY_FABRIC, 7 * 64),
    # MI355X datasheet (2025): 7 links of 153.6 GB/s (both directions)
    "mi355x": (LinkKind.INFINITY_FABRIC, 7 * 153.6 / 2),
    "mi350x": (LinkKind.INFINITY_FABRIC, 7 * 153.6 / 2),
    # MI250X datasheet (2021): 8 links per package (x16 at 25 GT/s = 50 GB/s each way), 4 per GCD
    "mi250x": (LinkKind.INFINITY_FABRIC, 4 * 50),
    # PCIe cards: x16 lanes x rate x encoding / 8 bits
    "a100-pcie-40gb": (LinkKind.PCIE, 16 * 16 * 128 / 130 / 8),  # Gen4: 31.5 GB/s
    "h100-pcie": (LinkKind.PCIE, 16 * 32 * 128 / 130 / 8),  # Gen5: 63 GB/s
    "t4": (LinkKind.PCIE, 16 * 8 * 128 / 130 / 8),  # Gen3: 15.75 GB/s
    "k20c": (LinkKind.PCIE, 16 * 5 * 8 / 10 / 8),  # Gen2 with 8b/10b: 8 GB/s
}


def test_every_catalog_device_has_a_link_roof_with_its_source():
    for device in catalog().values():
        link = device.link
        assert link is not None, device.id
        assert link.value > 0
        # the source names the document and says the figure is per direction
        assert "per direction" in link.source and "(" in link.source, device.id


@pytest.mark.parametrize("device_id", sorted(EXPECTED))
def test_link_roofs_per_direction(device_id):
    kind, gbps = EXPECTED[device_id]
    link = get(device_id).link
    assert link.kind is kind
    assert link.value == pytest.approx(gbps * G, rel=2e-3)  # 15.75 and 31.5 are rounded


def test_pcie_cards_say_which_bridge_they_leave_out():
    assert "NVLink bridge joins two cards at 600 GB/s" in get("a100-pcie-40gb").link.source
    assert get("a100-pcie-40gb").link.kind is LinkKind.PCIE


def test_a_user_file_gives_its_own_link(tmp_path):
    path = tmp_path / "pair.toml"
    path.write_text('base = "h100-pcie"\n[link]\nkind = "nvlink"\ngbps = 300\n')
    link = load_device_file(path).link
    assert link.kind is LinkKind.NVLINK and link.value == 300 * G
    assert str(path) in link.source  # no source given: the file is its source
    plain = tmp_path / "plain.toml"
    plain.write_text('base = "h100-sxm"\n')
    assert load_device_file(plain).link == get("h100-sxm").link  # the base's, kept


@pytest.mark.parametrize(
    "table, message",
    [
        ('kind = "ethernet"\ngbps = 25', "key 'link.kind' must be one of nvlink, infinity_fabric"),
        ('kind = "nvlink"\ngbps = -1', "key 'link.gbps' must be a positive number (got -1)"),
        ('kind = "nvlink"\ngbps = 1e9', "key 'link.gbps' = 1,000,000,000 GB/s is outside 1 to"),
        ('kind = "nvlink"', "key 'link' must be a table of kind, gbps, source"),
    ],
)
def test_bad_link_tables_are_one_line_errors(tmp_path, table, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'base = "h100-sxm"\n[link]\n{table}\n')
    with pytest.raises(DeviceError) as err:
        load_device_file(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_a_saved_report_keeps_the_link_roof():
    from rooflint import saved
    from rooflint.core import report_schema
    from rooflint.core.result import DeviceUse

    device = get("mi300x")
    entry = report_schema.device_entry(DeviceUse(device, [], ["x.json"]))
    link = next(c for c in entry["ceilings"] if c["kind"] == "link")
    assert link | {"source": ""} == {
        "name": "infinity_fabric",
        "kind": "link",
        "value": 448e9,
        "unit": "byte/s",
        "source": "",
    }
    back = saved.device_use(entry).device.link
    assert back.kind is LinkKind.INFINITY_FABRIC and back.value == 448e9
    assert back.source == device.link.source
    host = saved.device_use(entry).device.host_link  # saved as "host_pcie", kind host_link
    assert host.kind is LinkKind.PCIE and host.value == 63e9
    assert host.source == device.host_link.source
