"""Reading the start of a file to recognise it, without trusting its name."""

from __future__ import annotations

import zlib
from pathlib import Path

from rooflint.core.errors import InputError

HEAD_BYTES = 64 * 1024
NCU_REP_MAGIC = b"NVR\x00"
SQLITE_MAGIC = b"SQLite format 3\x00"
# Markers head_text returns instead of text for binary formats.
NCU_REP = "\x00ncu-rep"
SQLITE = "\x00sqlite"
BINARY = "\x00binary"

MAGIC = {
    b"\x1f\x8b": "a gzip archive; decompress it first (gunzip)",
    b"PK\x03\x04": "a zip archive; extract the profile from it first",
    b"\xff\xfe": "UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)",
    b"\xfe\xff": "UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)",
}


def head_bytes(path: Path, size: int = HEAD_BYTES) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except PermissionError:
        raise InputError("permission denied; make the file readable (chmod +r)", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror}); check the path", path=str(path)) from None


GZIP_TRACE = "\x00gzip\x00"  # marks the decompressed head of a gzip file that holds JSON


def head_text(path: Path) -> str:
    """The first bytes of `path` decoded as text; archives and binary files raise InputError,
    except gzip-compressed JSON (a PyTorch trace), returned decompressed after GZIP_TRACE."""
    raw = head_bytes(path)
    if raw.startswith(b"\x1f\x8b"):
        inner = _gunzip_head(raw)
        if inner.lstrip()[:1] in (b"{", b"["):
            return GZIP_TRACE + inner.decode("utf-8", errors="replace")
    for magic, what in MAGIC.items():
        if raw.startswith(magic):
            raise InputError(f"this is {what}", path=str(path))
    if raw.startswith(NCU_REP_MAGIC):
        return NCU_REP
    if raw.startswith(SQLITE_MAGIC):
        return SQLITE
    if b"\x00" in raw[:4096]:
        return BINARY
    return raw.decode("utf-8", errors="replace")


def _gunzip_head(raw: bytes) -> bytes:
    """The first decompressed bytes of gzip data (b"" when they cannot be decompressed)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(raw, HEAD_BYTES)
    except zlib.error:
        return b""
