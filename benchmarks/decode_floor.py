"""How fast can a trace's events be decoded? Candidate decoders against orjson.loads of the same
bytes with the garbage collector off, on the 150 MB synthetic trace (generate_trace.py):

    python benchmarks/decode_floor.py [TRACE]     # output committed as decode_floor.txt

Each candidate decodes the whole event list into something the reader can walk: msgspec into
typed Structs holding only the fields rooflint reads (parsers/kineto_bulk.py's), simdjson into
its lazy document (then the fields read, event by event), pyarrow.json and DuckDB's read_json
into Arrow tables (both need the events one per line, so they get a newline-delimited copy:
the conversion is not timed, though a real reader would pay it, and DuckDB runs on every core).
Times are the fastest of a few interleaved repeats, each a ratio to orjson.loads measured in the
same process.
"""

from __future__ import annotations

import gc
import io
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
TRACE = HERE / "data" / "trace-150mb.json"
FIELDS = ("cat", "name", "pid", "tid", "ts", "dur")


def _orjson(data: bytes, _ndjson: bytes):
    return orjson.loads(data)


def _msgspec(data: bytes, _ndjson: bytes):
    from rooflint.parsers import kineto_bulk

    return kineto_bulk.decode_trace(data)


def _simdjson(data: bytes, _ndjson: bytes):
    import simdjson

    doc = simdjson.Parser().parse(data)
    return [(e.get("cat"), e.get("name"), e.get("ts")) for e in doc["traceEvents"]]


def _pyarrow(_data: bytes, ndjson: bytes):
    import pyarrow.json as pj

    return pj.read_json(io.BytesIO(ndjson))


def _duckdb(_data: bytes, ndjson: bytes):
    import duckdb

    path = TRACE.with_suffix(".ndjson")
    if not path.exists():
        path.write_bytes(ndjson)
    con = duckdb.connect()
    return con.sql(
        f"select cat, name, ts, dur, args from read_json('{path}', format='newline_delimited')"
    ).to_arrow_table()  # .arrow() is a lazy reader in DuckDB 2: it would read nothing


CANDIDATES = {
    "msgspec typed Structs": _msgspec,
    "simdjson (parse, 3 fields read)": _simdjson,
    "pyarrow.json (ndjson)": _pyarrow,
    "DuckDB read_json (ndjson)": _duckdb,
}


def timed(fn, *args) -> float:
    gc.disable()
    try:
        start = time.perf_counter()
        out = fn(*args)
        took = time.perf_counter() - start
        del out
        return took
    finally:
        gc.enable()


def main(argv: list[str]) -> int:
    trace = Path(argv[0]) if argv else TRACE
    if not trace.exists():
        import generate_trace

        generate_trace.write(150, trace)
    data = trace.read_bytes()
    events = orjson.loads(data)["traceEvents"]
    ndjson = b"\n".join(orjson.dumps(e) for e in events)
    del events
    repeats = 3
    best = {name: float("inf") for name in ("orjson.loads", *CANDIDATES)}
    for _ in range(repeats):
        best["orjson.loads"] = min(best["orjson.loads"], timed(_orjson, data, ndjson))
        for name, fn in CANDIDATES.items():
            best[name] = min(best[name], timed(fn, data, ndjson))
    ref = best["orjson.loads"]
    print(f"{trace.name}, {len(data) / 1e6:.0f} MB; fastest of {repeats}, GC off")
    for name, took in best.items():
        print(f"  {name:34} {took:6.2f} s  {took / ref:5.2f}x orjson.loads")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
