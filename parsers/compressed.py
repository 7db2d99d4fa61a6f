"""Inputs compressed with gzip, recognised by their magic bytes, read as a stream."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path
from typing import BinaryIO

from rooflint.core.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
# gzip.GzipFile reads the compressed file through its own buffer; larger reads cost fewer calls.
_READ_BUFFER = 1 << 20


def is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_binary(path: str | Path) -> BinaryIO:
    """The file's bytes, decompressed on the fly when it is a gzip stream."""
    raw = open(path, "rb", buffering=_READ_BUFFER)  # noqa: SIM115 - handed to the caller
    if raw.peek(2)[:2] == GZIP_MAGIC:
        return _Checked(gzip.GzipFile(fileobj=raw, mode="rb"), raw, str(path))
    return raw


def size_hint(fh) -> int | None:
    """How many bytes are left to read from an open_binary stream, for sizing buffers: exact for
    a plain file; for gzip the size its trailer records (right for a single-member stream under
    4 GiB, the common case; a reader must not rely on it). None when unknown."""
    raw = fh._raw if isinstance(fh, _Checked) else fh
    try:
        size = os.fstat(raw.fileno()).st_size
        if raw is fh:
            return size - fh.tell()
        # pread: the stream's own file position (and its buffer) must not move
        return int.from_bytes(os.pread(raw.fileno(), 4, size - 4), "little") if size >= 18 else None
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


def read_all(path: str | Path) -> bytes:
    """Every (decompressed) byte of a small input."""
    with open_binary(path) as fh:
        return fh.read()


class _Checked:
    """A GzipFile whose damage (a cut-off or corrupt stream) is an InputError naming the file."""

    def __init__(self, inner: gzip.GzipFile, raw: BinaryIO, source: str):
        self._inner, self._raw, self._source = inner, raw, source

    def read(self, size: int = -1) -> bytes:
        return self._checked(self._inner.read, size)

    def readinto(self, buffer) -> int:
        return self._checked(self._inner.readinto, buffer)

    def _checked(self, method, argument):
        try:
            return method(argument)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(
                f"gzip stream is damaged ({exc}); copy the file again or decompress "
                "it with gunzip to see how much survives",
                path=self._source,
            ) from None

    def close(self) -> None:
        self._inner.close()
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
