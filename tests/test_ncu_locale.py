"""The column conversions of parsers/ncu_locale.py against the Arrow kernels they stand in for."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rooflint.parsers.ncu_locale import _edited


def _cells(seed: int, n: int = 2000) -> pa.Array:
    rng = np.random.default_rng(seed)
    alphabet = np.array(list("0123456789.,- (a"))
    lengths = rng.integers(0, 12, n)  # empty cells included
    return pa.array(["".join(rng.choice(alphabet, k)) for k in lengths], pa.string())


@pytest.mark.parametrize("seed", range(4))
def test_grouping_removed_as_replace_substring_removes_it(seed):
    cells = _cells(seed)
    for part in (cells, cells.slice(37, 1500), cells.slice(5, 0)):  # sliced: offset buffers
        assert _edited(part, ",").equals(pc.replace_substring(part, ",", ""))
        de_de = pc.replace_substring(pc.replace_substring(part, ".", ""), ",", ".")
        assert _edited(part, ".", swap=(",", ".")).equals(de_de)


def test_cells_without_the_character_are_returned_or_only_swapped():
    cells = pa.array(["1", "22", ""], pa.string())
    assert _edited(cells, ",") is cells
    assert _edited(pa.array(["0,5", "7"]), ".", swap=(",", ".")).to_pylist() == ["0.5", "7"]


def test_null_cells_take_arrows_own_kernel():
    cells = pa.array(["1,234", None, "5"], pa.string())
    assert _edited(cells, ",").to_pylist() == ["1234", None, "5"]


def test_de_DE_details_page_reads_its_grouping_and_decimal_marks():
    """The de_DE re-export's launch 0 (fixtures/ncu/rtx3070-nvtx-details-locale-de_DE_head.csv),
    read by hand: "Duration" us "84,48" is 84.48 µs (not 8,448); "SM Frequency" Ghz "1,46" and
    "DRAM Frequency" Ghz "6,68" are 1.46 and 6.68 GHz; "Elapsed Cycles" "124.056" is 124,056
    cycles, which at 1.46 GHz is 84.97 µs: the duration and the clock agree (the printed clock
    is rounded to 10 MHz), as they would not if either mark were read the other way."""
    from rooflint import parsers
    from tests.helpers import FIXTURES

    profile = parsers.read(FIXTURES / "ncu" / "rtx3070-nvtx-details-locale-de_DE_head.csv")
    (launch,) = profile.launches.to_dict("records")
    assert launch["kernel"] == "init_data_kernel(int, double *)"
    assert launch["duration_s"] == pytest.approx(84.48e-6, rel=1e-12)
    assert launch["sm_clock_hz"] == 1.46e9 and launch["dram_clock_hz"] == 6.68e9
    assert 124_056 / launch["sm_clock_hz"] == pytest.approx(launch["duration_s"], rel=0.01)
    assert launch["grid"] == "(16384, 1, 1)" and launch["range"] == "run_test/init_data"
