"""The physical range of each number in a device file: a value outside it is refused at load."""

from __future__ import annotations

from rooflint.core.errors import DeviceError

# key (a table's entries share its key) -> (lowest, highest, unit as written in the file).
# Ranges no real device leaves, wide enough for any GPU to come and narrow enough that every
# value stays a finite float through the maths: 1e300 GB/s is 1e309 byte/s, an infinity that
# crashed the JSON and HTML reports. The catalog runs from 0.25 TFLOP/s (FP64 on consumer parts)
# to 10 PFLOP/s (FP4 on Blackwell), 208 GB/s to 8 TB/s, clocks from 585 to 3201 MHz, 13 to 304
# SMs/CUs, buses of 192 to 6144 bits.
RANGES = {
    # 1 GFLOP/s to 1 EFLOP/s: a whole rack of today's fastest GPUs stays under it
    "compute_tflops": (1e-3, 1e6, "TFLOP/s", "1 GFLOP/s to 1 EFLOP/s"),
    # 1 GB/s (below any GPU's DRAM, PCIe 1.0 x4) to 1 PB/s (above the L1/LDS of the largest GPU)
    "bandwidth_gbps": (1.0, 1e6, "GB/s", "1 GB/s to 1 PB/s"),
    # a GPU's links to its peers, per direction: 1 GB/s (below PCIe 2.0 x16's 8 GB/s) to 100 TB/s
    # (a hundred times NVLink 5's 900 GB/s)
    "link.gbps": (1.0, 1e5, "GB/s", "1 GB/s to 100 TB/s"),
    "host_link.gbps": (1.0, 1e5, "GB/s", "1 GB/s to 100 TB/s"),  # its host link, likewise
    # GPU cores run at 0.1-3 GHz and memory clocks stay under 20 GHz
    "boost_clock_mhz": (1.0, 1e5, "MHz", "1 MHz to 100 GHz"),
    "base_clock_mhz": (1.0, 1e5, "MHz", "1 MHz to 100 GHz"),
    "memory_clock_mhz": (1.0, 1e5, "MHz", "1 MHz to 100 GHz"),
    "sm_count": (1, 100_000, "SMs/CUs", "1 to 100,000 SMs/CUs"),
    "memory_bus_bits": (8, 65_536, "bits", "8 to 65,536 bits"),
    # device memory: GPUs carry 2 to 288 GiB today; 64 TiB leaves room for any to come
    "memory_gib": (1, 65_536, "GiB", "1 GiB to 64 TiB"),
}


def check(key: str, value: float, label: str, entry: str = "") -> None:
    """DeviceError naming the file, the key and the range when `value` lies outside the range of
    `key` (`entry` names the table's entry, e.g. "dram" in [bandwidth_gbps])."""
    low, high, unit, span = RANGES[key]
    if low <= value <= high:
        return
    name = f"{key}.{entry}" if entry else key
    shown = f"{value:,.10g}" if abs(value) <= 1e300 else "over 1e300"  # TOML ints have no limit
    raise DeviceError(
        f"key '{name}' = {shown} {unit} is outside {low:,.10g} to {high:,.10g} {unit} ({span}), "
        f"the range of any real device; fix the value",
        path=label,
    )
