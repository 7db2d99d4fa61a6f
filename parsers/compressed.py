"""Inputs compressed with gzip, recognised by their magic bytes, read as a stream; the input
size limit, which a gzip stream's decompressed bytes must keep to as well."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path
from typing import BinaryIO

from rooflint.core.errors import InputError, UsageError

MAX_INPUT_ENV = "ROOFLINT_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 4 * 1024**3
GZIP_MAGIC = b"\x1f\x8b"
# gzip.GzipFile reads the compressed file through its own buffer; larger reads cost fewer calls.
_READ_BUFFER = 1 << 20


def max_input_bytes() -> int:
    """The largest input rooflint will parse: $ROOFLINT_MAX_INPUT_BYTES, else 4 GiB; a gzip
    stream's decompressed bytes count too (`open_binary`).

    A CSV needs several times its size in memory once parsed, so a file far beyond the machine
    fails here, before a byte of it is read, instead of swapping or being killed. Tested sizes
    (tests/test_bad_inputs.py): the 45,050-byte sgemm raw export is refused with the limit set
    through the variable to 1,024 bytes and to 45,049, and loads at 45,050; a bad value is a
    usage error. The 4 GiB default is not exercised with a file of that size.
    """
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_BYTES
    if not text.isdigit() or int(text) == 0:
        raise UsageError(
            f"{MAX_INPUT_ENV}={text!r} is not a positive whole number of bytes; "
            f"set it like {MAX_INPUT_ENV}=8589934592 (8 GiB) or unset it"
        )
    return int(text)


def is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_binary(path: str | Path) -> BinaryIO:
    """The file's bytes, decompressed on the fly when it is a gzip stream."""
    raw = open(path, "rb", buffering=_READ_BUFFER)  # noqa: SIM115 - handed to the caller
    if raw.peek(2)[:2] == GZIP_MAGIC:
        inner = gzip.GzipFile(fileobj=raw, mode="rb")
        return _Checked(inner, raw, str(path), max_input_bytes())  # type: ignore[return-value]
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


def csv_source(path: Path) -> Path | io.BytesIO:
    """What to hand a CSV parser (pandas, Arrow): the path of a plain file; a gzip stream's
    bytes decompressed and checked first (a damaged stream is an InputError here, not a
    crash inside the parser's own decompressor), within the input limit."""
    if not is_gzip(path):
        return path
    return io.BytesIO(read_all(path))


class _Checked:
    """A GzipFile whose damage (a cut-off or corrupt stream) is an InputError naming the file,
    and which refuses to give more than `limit` decompressed bytes (a gzip bomb): it is read
    a buffer at a time, so memory stays within the limit while reading."""

    def __init__(self, inner: gzip.GzipFile, raw: BinaryIO, source: str, limit: int):
        self._inner, self._raw, self._source = inner, raw, source
        self._left = limit

    def read(self, size: int | None = -1) -> bytes:
        if size is not None and size >= 0:  # never more than one byte past the limit
            return self._counted(self._checked(self._inner.read, min(size, self._left + 1)))
        whole = bytearray()
        while chunk := self.read(_READ_BUFFER):
            whole += chunk
        return bytes(whole)

    def readinto(self, buffer) -> int:
        with memoryview(buffer).cast("B") as view, view[: self._left + 1] as part:
            got = self._checked(self._inner.readinto, part)
        self._count(got)
        return got

    def _counted(self, data: bytes) -> bytes:
        self._count(len(data))
        return data

    def _count(self, size: int) -> None:
        self._left -= size
        if self._left < 0:
            limit = max_input_bytes()
            raise InputError(
                f"gzip stream decompresses to more than the input limit of {limit:,} bytes; "
                f"decompress it and split the export into smaller files, or raise "
                f"{MAX_INPUT_ENV}",
                path=self._source,
            )

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
