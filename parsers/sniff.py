"""Reading the start of a file to recognise it, without trusting its name."""

from __future__ import annotations

from pathlib import Path

from rooflint.core.errors import InputError

from .compressed import GZIP_MAGIC, open_binary

HEAD_BYTES = 64 * 1024
NCU_REP_MAGIC = b"NVR\x00"
SQLITE_MAGIC = b"SQLite format 3\x00"
# Markers head_text returns instead of text for binary formats.
NCU_REP = "\x00ncu-rep"
SQLITE = "\x00sqlite"
BINARY = "\x00binary"

_UTF32 = "UTF-32 text; convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)"
_UTF16 = "UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"
# Tried in order: a UTF-32 little-endian byte-order mark begins with UTF-16's.
MAGIC = {
    b"PK\x03\x04": "a zip archive; extract the profile from it first",
    b"\xff\xfe\x00\x00": _UTF32,
    b"\x00\x00\xfe\xff": _UTF32,
    b"\xff\xfe": _UTF16,
    b"\xfe\xff": _UTF16,
}


def head_bytes(path: Path, size: int = HEAD_BYTES) -> bytes:
    try:
        with open_binary(path) as fh:  # a gzip stream: its decompressed head
            return fh.read(size)
    except PermissionError:
        raise InputError(
            "permission denied; make the file readable (chmod +r)", path=str(path)
        ) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror}); check the path", path=str(path)) from None


def head_text(path: Path) -> str:
    """The first (decompressed) bytes of `path` decoded as text; archives and binary files
    raise InputError."""
    raw = head_bytes(path)
    for magic, what in MAGIC.items():
        if raw.startswith(magic):
            raise InputError(f"this is {what}", path=str(path))
    if raw.startswith((NCU_REP_MAGIC, SQLITE_MAGIC, GZIP_MAGIC)) and _gzipped(path):
        raise InputError(
            "this is a gzip-compressed binary file (rooflint streams only compressed "
            "text exports); decompress it first (gunzip)",
            path=str(path),
        )
    if raw.startswith(NCU_REP_MAGIC):
        return NCU_REP
    if raw.startswith(SQLITE_MAGIC):
        return SQLITE
    if b"\x00" in raw[:4096]:
        return BINARY
    return raw.decode("utf-8", errors="replace")


def _gzipped(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC
