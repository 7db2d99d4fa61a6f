"""The CSV rows of an ncu export, streamed: its header and every quoted line after it.

ncu's CSV arrives among other lines: `==PROF==` messages before the header and after the last
row, the application's own output before and among the rows. The rules are those of reading
the file as text and splitting it with str.splitlines(): the header is the first quoted line
that names kernels, the rows are the quoted lines after it, every other line is dropped. The
bytes are handled in large pieces cut at line ends, so no line is ever split and no per-line
Python runs on the usual input (only the few lines that are not rows); a damaged row that
leaves a quote open goes with the next piece, whose first row it runs on into, as in one parse.

A plain file is mapped, not read: a piece is a view of the mapping, and its other lines are
left among its rows (`Loose`) for the parser to drop, when it can show that it does; so the
rows of a capture reach the parser without being copied or moved (96 MB of a 200k-launch
capture: 160 ms -> 55 ms; a 500 MB details page: 850 ms -> 290 ms).
"""

from __future__ import annotations

import csv
import mmap
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rooflint.core.errors import InputError

from .compressed import GZIP_MAGIC, open_binary, size_hint

PIECE_BYTES = 8 << 20  # two of Arrow's 4 MB blocks: parsed on 2 threads; 16 MB held 16-25 MB more
BOM = b"\xef\xbb\xbf"
_HEAD_BYTES = 1 << 16  # where the header is searched for first, without copying a piece
_LOOK_BACK = 64  # lines searched back from a piece's end for its last row (_open_end)
_LINE_PEEK = 4096  # a longer line among the rows is always moved out (Loose.others)
# Where str.splitlines() breaks besides \n and \r\n (in UTF-8): \r alone, \v, \f, \x1c-\x1e,
# U+0085, U+2028, U+2029. Rare: a piece holding one is rewritten with \n there.
_ODD_CODES = np.array([0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E], dtype=np.uint8)  # and \r
_ODD_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_ODD_BREAK = re.compile(rb"\r\n|[\r\x0b\x0c\x1c-\x1e]|\xc2\x85|\xe2\x80[\xa8\xa9]")


class NotUtf8(Exception):
    """The file is not UTF-8: read it again as latin-1, as a text reader would fall back to."""


def header_index(lines: list[str]) -> int | None:
    """The first line that is an ncu CSV header (a launch page, a summary or a session page)."""
    for i, line in enumerate(lines):
        launches = '"ID"' in line or '"Invocations"' in line
        if line.startswith('"') and '"Kernel Name"' in line and launches:
            return i
        if line.startswith('"Launch Attribute","Value"'):
            return i
    return None


class Rows:
    """Iterate to get the quoted rows after the header as UTF-8 pieces ending in newlines
    (bytes-like), or as `Loose` pieces with other lines still among the rows.

    After `open()`: `header` (the header's fields), or `header is None` and `lines` (every line
    of a file that has no header). After iterating: `cut` (the last line stopped mid-row and
    was left out).
    """

    def __init__(self, path: str | Path, encoding: str = "utf-8", progress=None):
        self.path, self.encoding, self.progress = Path(path), encoding, progress
        self.header: list[str] | None = None
        self.lines: list[str] = []
        self.cut = False
        self._pieces: Iterator[Piece] | None = None
        self._first: Piece | None = None

    def open(self) -> Rows:
        """Read up to the header line; what follows it waits for iteration."""
        self._pieces = self._read_pieces()
        data = None  # the pieces so far, when the first did not hold the header (rare)
        for piece in self._pieces:
            if data is None:
                if self._found(piece):  # the common case: no copy
                    return self
                data = bytearray(piece.data)
            else:
                data += piece.data
                if self._found(_piece(data)):
                    return self
        if data and not data.endswith(b"\n") and self._found(_piece(data + b"\n")):
            self._first = None  # the header is the file's last line
            return self
        self.lines = bytes(data or b"").decode("utf-8").splitlines()
        return self

    def _found(self, piece: Piece) -> bool:
        """Whether the piece holds the header; then what follows it is the first piece of rows."""
        data = piece.data
        found = _find_header(data if isinstance(data, bytearray) else _head(data))
        if found is None and isinstance(data, memoryview) and len(data) > _HEAD_BYTES:
            found = _find_header(bytes(data))  # a long preamble before the header
        if found is None:
            return False
        end, line = found
        self.header = next(csv.reader([line]))
        if isinstance(data, bytearray):
            del data[:end]  # a bytearray drops its front without moving the rest
        else:
            data = data[end:]
        self._first = Piece(data, piece.breaks[piece.breaks >= end] - end)
        return True

    def __iter__(self) -> Iterator[bytearray | memoryview | Loose]:
        pending, first = self._first, True
        for piece in self._pieces:
            if pending is not None and len(pending.data):
                rows = self._rows(pending, first)
                first = first and not len(rows)  # the first piece that holds a row
                yield rows
            pending = piece
        if pending is not None and len(pending.data):
            last = self._last(pending)
            if len(last.data) and last.data[-1] == ord("\n"):
                # the last row without its line end, as a join of the lines would give it
                last = Piece(last.data[:-1], last.breaks[last.breaks < len(last.data) - 1])
            yield self._rows(last, first)

    def _rows(self, piece: Piece, first: bool) -> bytearray | memoryview | Loose:
        """The piece's quoted lines; a piece after the first with other lines among its rows
        comes Loose, for the parser to decide whether they may stay (the first must start
        with a row: the units row and the number-format test read its first line)."""
        unquoted = _starts_after(piece.data, piece.breaks)
        if not unquoted:
            return piece.data
        ends_open = int(bool(len(piece.data)) and piece.data[-1] != ord("\n"))
        if len(unquoted) == len(piece.breaks) + ends_open:
            return bytearray()  # no row in it
        inside = continued(piece, unquoted)
        if inside:  # a line break inside a quoted cell: the row keeps the lines it runs on to
            unquoted = [start for start in unquoted if start not in inside]
            return Spanning(_tight(Spanning(piece.data), unquoted))
        if first:
            return _tight(piece.data, unquoted)
        return Loose(piece.data, unquoted, _line_count(piece))

    def _last(self, piece: Piece) -> Piece:
        """The final piece; a last line without a line end that stops mid-row is left out."""
        if piece.data[-1] in b"\n\r":
            return piece
        data = bytes(piece.data)
        start = data.rfind(b"\n") + 1
        line = data[start:]
        if start and continued(piece, [start]):  # the last line continues a quoted cell
            start = data.rfind(b'\n"', 0, start) + 1  # where its row starts
            line = data[start:]
        elif not line.startswith(b'"'):  # a text reader compares the last row with the file's end
            found = data.rfind(b'\n"', 0, start) + 1 if start else 0
            if data.startswith(b'"') and not found:
                found = 0 if data.find(b"\n") < start else -1
            last = data[found : data.find(b"\n", found)] if found >= 0 else b""
            if not last.startswith(b'"') or not line.endswith(last):
                return _piece(bytearray(data + b"\n"))
            start, line = found, last
        fields = next(csv.reader([line.decode("utf-8")]), [])
        if line.endswith(b'"') and len(fields) == len(self.header):
            return _piece(bytearray(data + b"\n"))
        self.cut = True
        return _piece(bytearray(data[:start]))

    def _read_pieces(self) -> Iterator[Piece]:
        """The file as UTF-8 pieces that end at a line end (except the last), breaks as \\n. A
        last line without a line end stays with the piece before it (a stray quote there reads
        on into it, as it would in one parse). A plain UTF-8 file is mapped, and a piece that
        needs no change is a view of the mapping: no byte is copied before Arrow parses it."""
        mapping = self._mapping()
        pieces = self._streamed() if mapping is None else _mapped(mapping)
        first, held = True, None
        for piece in pieces:
            if self.progress and len(piece):
                self.progress(len(piece))
            if first and bytes(piece[: len(BOM)]) == BOM:
                if isinstance(piece, bytearray):
                    del piece[: len(BOM)]
                else:
                    piece = piece[len(BOM) :]
            first = False
            piece = self._clean(piece)
            if held is not None:
                piece = _piece(bytearray(held) + piece.data)
            piece, held = _open_end(piece)
            yield piece
        if held is not None:
            yield _piece(bytearray(held))

    def _mapping(self) -> mmap.mmap | None:
        """The file mapped read-only when it is plain (not gzip), non-empty UTF-8; else None."""
        if self.encoding != "utf-8":
            return None
        try:
            if not stat.S_ISREG(self.path.stat().st_mode):  # a pipe is read once, as a stream
                return None
            with open(self.path, "rb") as fh:
                if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                    return None
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # empty, or not a regular file: read as a stream
            return None

    def _streamed(self) -> Iterator[bytearray]:
        """The (decompressed) file read into buffers of its own, cut as `_mapped` cuts it."""
        carry, held = b"", None
        with open_binary(self.path) as fh:
            left = size_hint(fh)  # a small capture is not read into a whole-piece buffer
            while True:
                want = PIECE_BYTES if left is None else min(PIECE_BYTES, left + 1)
                piece = bytearray(len(carry) + want)
                piece[: len(carry)] = carry
                view = memoryview(piece)[len(carry) :]
                got = fh.readinto(view)
                view.release()  # a profiler keeping the reader's frames keeps no hold on it
                left = None if left is None or left < got else left - got  # past it: no hint
                del piece[len(carry) + got :]
                if not got:
                    if held is not None or piece:
                        yield (held or bytearray()) + piece
                    return
                end = piece.rfind(b"\n") + 1
                carry = bytes(piece[end:])
                if end == 0:
                    continue
                del piece[end:]
                if held is not None:
                    yield held
                held = piece

    def _clean(self, piece) -> Piece:
        """The piece as UTF-8 with \\n line breaks (the same buffer when it already is), and
        where they are."""
        if self.encoding != "utf-8":
            piece = bytearray(bytes(piece).decode(self.encoding).encode("utf-8"))
        chars = np.frombuffer(piece, dtype=np.uint8)
        # a ufunc, not chars.max(): no Python frame (kept by a profiler) gets a view of it
        ascii_only = not len(chars) or int(np.maximum.reduce(chars)) < 128
        text = b"" if ascii_only else bytes(piece)
        if not ascii_only:
            try:
                text.decode("utf-8")
            except UnicodeDecodeError:
                raise NotUtf8 from None
        controls = np.flatnonzero(chars < 32)  # one pass finds the line ends and any odd break
        codes = chars[controls]
        del chars  # the view lets go of `piece` (resized later)
        odd = np.isin(codes, _ODD_CODES).any() or (any(b in text for b in _ODD_UTF8))
        if odd:  # rows joined by \n, as splitlines() would give them (rare: a second pass)
            return _piece(bytearray(_ODD_BREAK.sub(b"\n", piece)))
        return Piece(piece, controls[codes == ord("\n")])


def _mapped(whole: mmap.mmap) -> Iterator[memoryview]:
    """Views of the mapped file, each up to the last line end in PIECE_BYTES (or to the first
    after them); the last also takes a final line without a line end. The pages of pieces two
    behind (parsed by then) are dropped from this process's memory as it goes, so the mapping
    holds no more than the pieces read into buffers did."""
    size, start, ends = len(whole), 0, []
    view = memoryview(whole)
    while start < size:
        end = whole.rfind(b"\n", start, start + PIECE_BYTES) + 1
        if end <= start:
            end = whole.find(b"\n", start + PIECE_BYTES) + 1
        if end <= start or whole.find(b"\n", end) < 0:
            end = size
        yield view[start:end]
        ends.append(end)
        if len(ends) > 2:
            _release(whole, ends[-3])
        start = end


class Piece(NamedTuple):
    """A piece of the file (a bytearray, or a view of the mapped file) and its line ends."""

    data: bytearray | memoryview
    breaks: np.ndarray


class Spanning(bytearray):
    """Rows of which some run on past a line end inside a quoted cell (a line break in a
    kernel name): parsed with line ends allowed in values."""


class Loose(NamedTuple):
    """Rows with other lines still among them: `data` as read, `unquoted` where those lines
    begin, `lines` how many lines in it are not empty. The parser may read `data` as it is,
    its invalid-row handler dropping the other lines, when it refuses each of them as a row
    (`others`) and reads `lines` records (fewer: a quote left open ran a line into the next);
    else it reads `tight()`, the quoted lines alone."""

    data: bytearray | memoryview
    unquoted: list[int]
    lines: int

    def __len__(self) -> int:
        return len(self.data)

    def others(self) -> bytes | None:
        """The other lines, each with its line end (None when one is longer than _LINE_PEEK)."""
        lines = []
        for start in self.unquoted:
            line = bytes(self.data[start : start + _LINE_PEEK])
            end = line.find(b"\n")
            if end < 0:
                return None
            lines.append(line[: end + 1])
        return b"".join(lines)

    def tight(self) -> bytearray:
        """A copy: the parser may still hold the piece as it was (a bytearray it read)."""
        return _tight(bytearray(self.data), self.unquoted)


def _tight(data: bytearray | memoryview, unquoted: list[int]) -> bytearray:
    """The quoted lines alone, each with its line end (a view is copied first)."""
    data = data if isinstance(data, bytearray) else bytearray(data)
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return _moved_down(data, unquoted)


def _open_end(piece: Piece) -> tuple[Piece, bytes | None]:
    """(the piece, None), or (the piece up to the row that leaves a quote open at its end, the
    rest): a damaged row (`opens_quote`) or a line break inside a quoted cell opens one, and
    one parse of the whole file carries it on into the next line (`Quoting`). The rest goes
    with the next piece; the lines after the last row are not rows, and the next piece drops
    them as this one would."""
    data, breaks = piece.data, piece.breaks
    if not len(breaks) or breaks[-1] != len(data) - 1:
        return piece, None  # no whole last line (the file's end)
    lowest = max(len(breaks) - _LOOK_BACK, 0)
    whole = None  # the last whole row: no quote is open after it
    for i in range(len(breaks) - 1, lowest - 1, -1):
        line = _line(data, breaks, i)
        if line.startswith(b'"') and not opens_quote(line):
            whole = i
            break
    if whole is None and lowest:
        return piece, None  # no whole row near the end: left as it is
    quoting = Quoting()
    for i in range(0 if whole is None else whole, len(breaks)):
        quoting.step(_line(data, breaks, i), i)
    if quoting.opened is None:
        return piece, None
    i = quoting.opened
    start = int(breaks[i - 1]) + 1 if i else 0
    return Piece(data[:start], breaks[:i]), bytes(data[start:])


def _line(data, breaks: np.ndarray, i: int) -> bytes:
    """Line i of a piece, without its line end."""
    start = int(breaks[i - 1]) + 1 if i else 0
    end = int(breaks[i]) if i < len(breaks) else len(data)
    return bytes(data[start:end])


class Quoting:
    """Whether a quoted cell is open, line after line, as one parse of the file sees it: a
    whole row (an even count of quotes) closes every cell, a row with an odd count opens one
    or closes the one left open; a line that does not start with a quote continues the open
    cell (a line break inside a kernel name), flipping it by its own count, and is dropped
    when none is open. `opened` is the line whose row holds the cell still open."""

    def __init__(self) -> None:
        self.opened: int | None = None

    def step(self, line: bytes, index: int) -> bool:
        """Take the next line; whether it continues a quoted cell left open."""
        odd = opens_quote(line)
        if line.startswith(b'"'):
            self.opened = (index if self.opened is None else None) if odd else None
            return False
        if self.opened is None:
            return False
        self.opened = None if odd else self.opened
        return True


def continued(piece: Piece, unquoted: list[int]) -> set[int]:
    """Of the lines that do not start with a double quote (`unquoted`, their starts), those that
    continue a quoted cell a row before them left open (`Quoting`). Only the lines before
    each, back to a whole row, are read."""
    data, breaks = piece.data, piece.breaks
    states: dict[int, int | None] = {}  # line -> Quoting.opened after it
    inside = set()
    for start in unquoted:
        line = int(np.searchsorted(breaks, start))
        back = line - 1
        while back >= 0 and back not in states:
            text = _line(data, breaks, back)
            if text.startswith(b'"') and not opens_quote(text):
                break
            back -= 1
        quoting = Quoting()
        quoting.opened = states.get(back)  # a whole row (or none: the piece's start) closes
        for i in range(back + 1, line + 1):
            if quoting.step(_line(data, breaks, i), i) and i == line:
                inside.add(start)
            states[i] = quoting.opened
    return inside


def opens_quote(line: bytes) -> bool:
    """Whether a row leaves a quote open at its line end (an odd count of double quotes: ncu
    quotes every cell and doubles a quote inside one), so one parse of the file reads on into
    the next line."""
    return line.count(b'"') % 2 == 1


def _release(mapping: mmap.mmap, end: int) -> None:
    """Drop the mapped pages before `end` from this process (they stay in the page cache)."""
    end -= end % mmap.PAGESIZE
    if end and hasattr(mapping, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        mapping.madvise(mmap.MADV_DONTNEED, 0, end)


def _head(view: memoryview) -> bytes:
    """The start of a piece, where the header line usually is (searched without a whole copy)."""
    return bytes(view[:_HEAD_BYTES])


def _find_header(data: bytes) -> tuple[int, str] | None:
    """(end after its line break, text) of the header line among the whole lines of `data`."""
    pos = 0
    while True:
        if data[pos : pos + 1] != b'"':
            pos = data.find(b'\n"', pos)
            if pos < 0:
                return None
            pos += 1
        end = data.find(b"\n", pos)
        if end < 0:
            return None  # the header line may continue in the next piece
        line = data[pos:end].decode("utf-8").rstrip("\r")
        if header_index([line]) == 0:
            return end + 1, line
        pos = end + 1


def quoted_lines(piece: bytes | bytearray) -> bytearray:
    """The lines of `piece` that start with a double quote, each ending in \\n; a bytearray is
    changed in place."""
    piece = piece if isinstance(piece, bytearray) else bytearray(piece)
    return _tight(piece, _unquoted_starts(piece))


def _moved_down(piece: bytearray, starts: list[int]) -> bytearray:
    """`piece` without the lines at `starts`: the runs of rows after each are moved down over
    it, so the rows are moved at most once and never copied into a new buffer."""
    if not starts:
        return piece
    view, kept = memoryview(piece), starts[0]
    for i, start in enumerate(starts):
        end = piece.find(b"\n", start) + 1
        stop = starts[i + 1] if i + 1 < len(starts) else len(piece)
        view[kept : kept + stop - end] = view[end:stop]
        kept += stop - end
    view.release()
    del piece[kept:]
    return piece


def _piece(data: bytearray) -> Piece:
    chars = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(chars == ord("\n"))
    del chars  # the view lets go of `data` (resized later) even if a profiler holds this frame
    return Piece(data, breaks)


def _line_count(piece: Piece) -> int:
    """The piece's lines that are not empty (a CSV parser skips empty ones)."""
    breaks, size = piece.breaks, len(piece.data)
    if not len(breaks):
        return int(size > 0)
    empty = np.count_nonzero(np.diff(breaks) == 1) + int(breaks[0] == 0)
    return len(breaks) - empty + int(breaks[-1] < size - 1)


def _unquoted_starts(piece) -> list[int]:
    """Where the lines that do not start with a double quote begin."""
    return _starts_after(piece, _piece(piece).breaks)


def _starts_after(piece, breaks: np.ndarray) -> list[int]:
    """Where the lines that do not start with a double quote begin, from the line ends."""
    chars = np.frombuffer(piece, dtype=np.uint8)
    breaks = breaks[breaks < len(chars) - 1]
    starts = (breaks[chars[breaks + 1] != ord('"')] + 1).tolist()
    first = len(chars) > 0 and chars[0] != ord('"')
    del chars
    return [0, *starts] if first else starts


def no_profile_message(lines: list[str]) -> str:
    """Why a file with no header line holds no profile, and what to do."""
    errors = [line for line in lines if line.startswith("==ERROR==")]
    if errors:
        return (
            f"no profile data, ncu reported an error ({errors[0][:120].strip()}); "
            "fix the run and export again with `ncu --csv --page raw --print-units base`"
        )
    if prof_only(lines):
        return (
            "no profile data: only ==PROF== messages, ncu profiled no kernel; check the "
            "--kernel-name/--launch-skip filters and that the application launched kernels"
        )
    return (
        'not an ncu CSV export (no header line with "ID" and "Kernel Name"); export '
        "per-launch data with `ncu --import R.ncu-rep --csv --page raw --print-units base`"
    )


def prof_only(lines: list[str]) -> bool:
    """ncu's own messages and nothing else: a run that profiled no kernel (or failed)."""
    return (
        bool(lines)
        and any(line.startswith("==PROF==") for line in lines)
        and not any(line.startswith('"') for line in lines)
    )


def check_readable(path: Path) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror}); check the path", path=str(path)) from None
