"""What a launch lacks, as codes (`missing_codes`) beside the words (`missing`), and the
decisions taken on the codes: the not-analysable reason, the unmeasured flags, the count of
invalid values. The words are what every format prints, unchanged."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rooflint import distributed, hardware, pipeline, saved
from rooflint.core import analysis, ranking, schema
from rooflint.core.analysis import Reason
from rooflint.core.schema import Absence, Missing
from rooflint.reporters import json_report, parquet_report
from tests.conftest import shared

DEVICE = hardware.get("mi100")  # the catalog's: any device with a DRAM roof would do


def table(**columns) -> pd.DataFrame:
    rows = max(len(v) for v in columns.values())
    return schema.conform(pd.DataFrame({"kernel": [f"k{i}" for i in range(rows)], **columns}))


def test_mark_missing_writes_the_words_and_their_codes():
    frame = table(
        duration_s=[1e-3, np.nan, 1e-3],
        ops_matrix_fp16=[5.0, np.nan, np.nan],  # row 0: matrix counted, vector not
        bytes_dram=[1.0, 2.0, 3.0],
    )
    schema.mark_missing(
        frame,
        {
            "duration_s": "no duration metric",
            "ops": schema.no_flop_counters("gfx908"),
            "ops_vector": "no vector FLOP counters",
            "bytes_dram": "not reached: every row has DRAM bytes",
        },
    )
    assert frame["missing"].tolist() == [
        "ops_vector: no vector FLOP counters",
        "duration_s: no duration metric; ops: gfx908 has no typed FLOP counters",
        "ops: gfx908 has no typed FLOP counters",
    ]
    assert schema.lacks(frame, "duration_s").tolist() == [False, True, False]
    assert schema.lacks(frame, "ops", Absence.NO_COUNTERS).tolist() == [False, True, True]
    assert schema.lacks(frame, "ops", Absence.NOT_COUNTED).tolist() == [False, False, False]
    assert schema.lacks(frame, "ops_vector").tolist() == [True, False, False]
    assert not schema.lacks(frame, "bytes_dram").any()
    schema.validate(frame)


def test_the_codes_decide_not_the_words():
    """Words that merely mention a quantity or "has no typed FLOP counters" decide nothing:
    only the entry's code does (on main, analysis searched the words for that phrase)."""
    frame = table(duration_s=[1e-3, 1e-3], bytes_dram=[1e6, 1e6])
    schema.mark_missing(
        frame,
        {"ops": Missing("the export's ops_vector: column has no typed FLOP counters")},
    )
    out = analysis.analyze(frame, DEVICE)
    assert out["reason"].tolist() == [Reason.NO_FLOPS, Reason.NO_FLOPS]  # not NO_FLOP_COUNTERS
    group = np.arange(2)
    assert ranking.unmeasured(out, group).tolist() == ["", ""]  # no ops_vector entry
    schema.mark_missing(frame, {"ops": schema.no_flop_counters("gfx1100")})  # a second entry
    out = analysis.analyze(frame, DEVICE)
    assert out["reason"].tolist() == [Reason.NO_FLOP_COUNTERS] * 2


def test_add_missing_takes_each_rows_words_and_clear_missing_drops_them():
    frame = table(duration_s=[1.0, 1.0, 1.0])
    words = np.array(["no operator model for aten::a", "", "no operator model for aten::b"])
    schema.add_missing(frame, "ops", words.astype(object), np.array([True, False, True]))
    schema.add_missing(frame, "bytes_dram", "no counters and no model", np.array([1, 0, 0]))
    assert frame["missing"].tolist() == [
        "ops: no operator model for aten::a; bytes_dram: no counters and no model",
        "",
        "ops: no operator model for aten::b",
    ]
    assert schema.lacks(frame, "bytes_dram").tolist() == [True, False, False]
    schema.clear_missing(frame, np.array([True, False, False]))
    assert frame["missing"].tolist() == ["", "", "ops: no operator model for aten::b"]
    assert schema.lacks(frame, "ops").tolist() == [False, False, True]
    assert not schema.lacks(frame, "bytes_dram").any()


def test_invalid_values_are_counted_from_the_codes():
    """conform reads -1 s and an infinite byte count as missing: two launches, with notes."""
    frame = table(duration_s=[-1.0, 1.0, 2.0], bytes_dram=[1.0, np.inf, 3.0], peak_l2=[1.0] * 3)
    assert schema.invalid_rows(frame) == 2
    assert frame["notes"].tolist()[:2] == [
        f"duration_s {schema.INVALID_NOTE}",
        f"bytes_dram {schema.INVALID_NOTE}",
    ]
    # a note that only says the same words is not an invalid value
    schema.add_note(frame, f"bytes_l2 {schema.INVALID_NOTE}", np.array([0, 0, 1]))
    assert schema.invalid_rows(frame) == 2
    assert schema.invalid_rows(schema.conform(frame)) == 2  # conformed again: codes kept


def test_words_read_back_give_the_same_codes():
    """A saved report or a Parquet dataset carries the words only; conform reads their codes
    back: each entry's quantity, and no_flop_counters' words as NO_COUNTERS."""
    made = table(duration_s=[np.nan, 1.0], ops_matrix_fp16=[np.nan, 4.0])
    schema.mark_missing(
        made,
        {
            "duration_s": "no timestamps; ops: not a quantity",  # words with '; ' and ': '
            "ops": schema.no_flop_counters("gfx908"),
            "ops_vector": "no vector FLOP counters",
        },
    )
    read = schema.conform(pd.DataFrame({"missing": made["missing"].astype(str)}))
    assert read["missing_codes"].tolist() == made["missing_codes"].tolist()
    assert schema.lacks(read, "ops", Absence.NO_COUNTERS).tolist() == [True, False]


def test_a_saved_report_and_a_parquet_dataset_keep_the_codes(tmp_path):
    """rocprof on an MI100 (gfx908, no typed FLOP counters): its launches are not analysable
    for that reason. Saved as JSON, or written as Parquet and analysed again partition by
    partition (rooflint.distributed), they still are: the codes are read back from the words."""
    result = pipeline.build([str(shared("rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv"))])
    assert (result.launches["reason"] == Reason.NO_FLOP_COUNTERS).all()
    report = tmp_path / "r.json"
    report.write_text(json_report.render(result))
    back = saved.load(report)
    assert back.launches["missing_codes"].tolist() == result.launches["missing_codes"].tolist()
    device = result.devices[0].device
    again = analysis.analyze(back.launches, device)
    assert (again["reason"] == Reason.NO_FLOP_COUNTERS).all()
    dataset = tmp_path / "launches.parquet"
    dataset.write_bytes(parquet_report.render(result))
    part = distributed.analyze_partition(pd.read_parquet(dataset), {None: device}, 0.6)
    assert (part["reason"] == Reason.NO_FLOP_COUNTERS).all()


def test_every_code_fits_an_int64():
    """Bit 0 and two bits for each of the 20 quantities: 41 bits; an Absence more is 61."""
    assert len(schema.MISSING_QUANTITIES) == 20
    highest = schema._bit(schema.MISSING_QUANTITIES[-1], max(Absence))
    assert highest == 1 << 40 and highest < np.iinfo(np.int64).max
