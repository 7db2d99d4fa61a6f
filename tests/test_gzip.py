"""gzip-compressed inputs: recognised by their magic bytes, read as streams, same launches.

Each real export is gzipped into tmp_path under its own name (no .gz: the name decides nothing)
and must load into exactly the launch table, notes and repairs of the uncompressed file.
"""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

from rooflint import parsers
from rooflint.core.errors import InputError
from tests.helpers import FIXTURES, shared

REAL = [
    "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",  # ==PROF== lines around a raw page
    "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv",  # app output, details
    "ncu/reexport-ncu2024.2/nvtx-details-locale-de_DE.csv",
    "ncu/actualparam-a100-ncu2021.2-details-rules.csv",  # ragged rule rows
    "ncu/nvprof-k20c-metrics.csv",
    "rocprof/v3_docs_2025_counter_collection.csv",
    "rocprof/v1_mi250_rocm571_stats_mode_results.csv",
]


def _same(plain, packed) -> None:
    a, b = parsers.read(plain), parsers.read(packed)
    assert (a.format, a.notes, a.repairs) == (b.format, b.notes, b.repairs)
    pd.testing.assert_frame_equal(
        a.launches.drop(columns="source"), b.launches.drop(columns="source"), check_exact=True
    )
    assert (b.launches["source"] == str(packed)).all()


@pytest.mark.e2e
@pytest.mark.parametrize("name", REAL)
def test_gzipped_real_export_reads_like_the_file(name, tmp_path):
    plain = shared(name)
    packed = tmp_path / plain.name
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    _same(plain, packed)


def test_gzipped_bundled_export_with_gz_name(tmp_path):
    plain = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    packed = tmp_path / "profile.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    _same(plain, packed)


def test_gzip_stream_cut_short_is_one_clear_error(tmp_path):
    plain = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    packed = tmp_path / "profile.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes())[:-100])
    with pytest.raises(InputError, match="gzip stream is damaged") as err:
        parsers.read(packed)
    assert str(err.value).startswith(str(packed)) and "\n" not in str(err.value)


@pytest.mark.parametrize("piece", [4096, 16 << 20])
def test_gzip_of_several_members_reads_past_its_trailer_size(piece, tmp_path, monkeypatch):
    # `cat a.gz b.gz` is one valid stream whose trailer records only the last member's size,
    # which the reader takes as a hint for its buffer: it must read on past it
    from parsers import ncu_lines

    monkeypatch.setattr(ncu_lines, "PIECE_BYTES", piece)
    plain = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    data = plain.read_bytes()
    cut = data.index(b"\n", len(data) - 300) + 1  # the last member: the final few rows
    packed = tmp_path / "profile.csv.gz"
    packed.write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    assert len(data) - cut < 300 < len(data)
    _same(plain, packed)


def test_gzip_larger_than_the_read_buffer_reads_like_the_file(tmp_path, monkeypatch):
    # the trailer's size is read beside the stream: the stream's file position must not move
    # (with the file larger than the buffer, a moved position cut the stream short)
    from rooflint.parsers import compressed

    monkeypatch.setattr(compressed, "_READ_BUFFER", 256)
    plain = FIXTURES / "ncu" / "rtx2080ti-sgemm-raw-base.csv"
    packed = tmp_path / "profile.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert packed.stat().st_size > 256 * 4
    _same(plain, packed)
