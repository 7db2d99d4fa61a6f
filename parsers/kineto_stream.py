"""Streaming a Chrome-trace JSON file: events in parsed batches, never the whole list at once."""

from __future__ import annotations

import codecs
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from rooflint.core.errors import InputError

from . import compressed

CHUNK_BYTES = 1 << 20  # msgspec decodes 1 MB batches 10-25 % faster than 4 MB ones (in cache)
# Where one event object ends and the next begins: `}` `,` `{` then a key's opening quote. Inside a
# JSON string every `"` is escaped (`\"`), so a quote after `{` and blanks is always structural;
# a split between objects nested inside an event is caught because the batch then fails to parse.
_BETWEEN = re.compile(rb"\}\s*,\s*\{\s*\"")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_LIST_END = re.compile(rb'\](?=\s*(?:,\s*"|\}\s*$))')
_TRIES = 8  # candidate splits tried (last first) before reading more
_NEAR = 64 << 10  # the tail of the buffer searched first for a split
TRUNCATED = (
    "truncated or malformed JSON (the trace ends inside its event list); export the "
    "trace again and check the copy is complete (gzip -t for .gz files)"
)
NESTED = (  # orjson's limit, 1,024 levels
    "JSON nested over 1,000 levels deep (a trace's events nest a few levels): the file is "
    "damaged or not a trace; export the trace again"
)


def open_bytes(path: Path):
    """A binary file object of the trace's JSON text, decompressing gzip on the fly, within the
    input limit on the decompressed bytes too (compressed.open_binary)."""
    return compressed.open_binary(path)


class TraceStream:
    """Iterate over a trace's events in batches (lists of dicts); `header` holds every other
    top-level key once the iteration is done (deviceProperties, schemaVersion, ...).

    `parse` decodes one batch, a JSON array of whole events, into a list (orjson.loads by
    default; parsers/kineto_bulk.parse gives Structs), raising orjson.JSONDecodeError for text
    that is not one: the split tried was not between two events, and another is tried."""

    def __init__(self, path: Path, chunk_bytes: int = CHUNK_BYTES, parse: Callable = orjson.loads):
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.parse = parse
        self.header: dict = {}
        self._prefix = b""

    def batches(self) -> Iterator[list[dict]]:
        try:
            with open_bytes(self.path) as fh:
                yield from self._batches(fh)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(
                f"cannot read the trace ({exc}); export it again", path=str(self.path)
            ) from None

    def _batches(self, fh) -> Iterator[list[dict]]:
        buf = self._skip_to_events(fh)
        while True:
            chunk = fh.read(self.chunk_bytes)
            if not chunk:
                break
            buf += chunk
            events, buf = self._split(buf)
            if events:
                yield events
        yield self._finish(buf)

    def _skip_to_events(self, fh) -> bytes:
        """Read up to the `[` that opens the event list; keep what came before as the prefix."""
        head = b""
        while True:
            chunk = fh.read(self.chunk_bytes)
            head = (head + chunk).removeprefix(codecs.BOM_UTF8)
            stripped = head.lstrip()
            if stripped.startswith(b"["):  # the bare-array form of the Chrome trace format
                self._prefix = b""
                return stripped[1:]
            found = _EVENTS_KEY.search(head)
            if found:
                self._prefix = head[: found.end() - 1]
                return head[found.end() :]
            if not chunk:
                raise InputError(
                    "JSON without a traceEvents list: not a PyTorch profiler trace; pass "
                    "a torch.profiler export (prof.export_chrome_trace or "
                    "tensorboard_trace_handler)",
                    path=str(self.path),
                )

    def _split(self, buf: bytes) -> tuple[list[dict], bytes]:
        """Parse the complete events at the front of `buf`; return them and the rest."""
        for match in reversed(self._splits(buf)):
            cut = match.start() + 1
            try:
                events = self.parse(b"".join((b"[", memoryview(buf)[:cut], b"]")))
            except orjson.JSONDecodeError as exc:
                self._check_depth(exc)  # a prefix of the list holds real nesting
                continue
            rest = buf[cut:].lstrip()
            return events, rest[1:].lstrip()  # drop the separating comma
        return [], buf

    def _splits(self, buf: bytes) -> list:
        """The last _TRIES places between two events in the buffer's last chunk and 4 kB: found
        in its last 64 kB where they hold more than that (the same matches; a scan of the whole
        chunk was 0.3 s of a 150 MB trace's read), else in the whole of it."""
        start = max(0, len(buf) - self.chunk_bytes - 4096)
        near = list(_BETWEEN.finditer(buf, max(start, len(buf) - _NEAR)))
        if len(near) > _TRIES or len(buf) - _NEAR <= start:
            return near[-_TRIES:]
        return list(_BETWEEN.finditer(buf, start))[-_TRIES:]

    def _finish(self, buf: bytes) -> list:
        """The last events, up to the `]` that closes the list, and the top-level keys after it:
        by `parse`, the list ending at one of the last few `]` of buf that a top-level key or
        the closing brace follows (the last that parses is the list's own), else by json as the
        text allows (NaN, broken UTF-8, deep nesting)."""
        ends = [m.start() for m in _LIST_END.finditer(buf)]
        for end in reversed(ends[-_TRIES:]):
            try:
                events = self.parse(b"[" + buf[: end + 1])
            except orjson.JSONDecodeError:
                continue
            self.header = self._parse_header(buf[end + 1 :].decode("utf-8", errors="replace"))
            return events
        return self._finish_text(buf)

    def _finish_text(self, buf: bytes) -> list[dict]:
        text = "[" + buf.decode("utf-8", errors="replace")
        try:
            events, end = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError:
            raise InputError(TRUNCATED, path=str(self.path)) from None
        except RecursionError:  # json's limit depends on the caller's stack: orjson's does not
            events, suffix = self._finish_nested(buf)
        else:
            suffix = text[end:]
        self.header = self._parse_header(suffix)
        return events

    def _finish_nested(self, buf: bytes) -> tuple[list[dict], str]:
        """_finish by orjson (nesting up to its fixed 1,024 levels): the list ends at one of the
        `]` of buf, tried from the last."""
        end = len(buf)
        while (end := buf.rfind(b"]", 0, end)) >= 0:
            try:
                events = orjson.loads(b"[" + buf[: end + 1])
            except orjson.JSONDecodeError as exc:
                self._check_depth(exc)
                continue
            return events, buf[end + 1 :].decode("utf-8", errors="replace")
        raise InputError(TRUNCATED, path=str(self.path))

    def _check_depth(self, exc: orjson.JSONDecodeError) -> None:
        if "depth limit" in str(exc):
            raise InputError(NESTED, path=str(self.path)) from None

    def _parse_header(self, suffix: str) -> dict:
        if not self._prefix:
            return {}
        try:
            header = orjson.loads(self._prefix + b"[]" + suffix.encode())
        except orjson.JSONDecodeError as exc:
            self._check_depth(exc)
            raise InputError(
                TRUNCATED.replace("inside its event list", "after its event list"),
                path=str(self.path),
            ) from None
        return header if isinstance(header, dict) else {}
