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
