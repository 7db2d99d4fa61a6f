"""The package's TOML files (the device catalog, architectures.toml) as parsed tables, read fast.

tomllib takes 6.5 ms over the catalog's 42 files, 15 % of `python -c "import click"`: with it
`rooflint devices` started at 2.2x that (benchmarks/startup.py). So what tomllib made of each file
is kept in a derived index, `catalog-v1-<folder>.json` in the user's cache folder, each file's
text beside its table. A file's table is taken from the index only when the file's text now is,
character for character, the text the index holds; otherwise the file is parsed and the index
rewritten. The index is never stale whatever the files' times say, and one the process cannot read
(damaged, another version's) is an empty one. Where the cache folder cannot be written (a
read-only home) nothing is written and the files are parsed each time. `ROOFLINT_CACHE_DIR` names
another cache folder; set empty, there is no index.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from rooflint.core.errors import DeviceError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

VERSION = 1  # of the index's layout: {"files": {label: {"text": ..., "table": ...}}}
CACHE_ENV = "ROOFLINT_CACHE_DIR"


def package_folder() -> Traversable:
    """The hardware package's folder: the folder itself where the package is plain files (as pip
    installs it), else importlib.resources' view of it (a zip). importlib.resources costs 2.5 ms
    of imports (zipfile, tempfile) that a plain start does not need."""
    here = Path(__file__).parent
    if here.is_dir():
        return here
    from importlib import resources

    return resources.files(__package__)


def parse(text: str, label: str) -> dict:
    """The table of TOML `text`; DeviceError naming `label` where it is not TOML."""
    import tomllib  # here: 1.7 ms of imports that the index spares

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeviceError(f"not valid TOML ({exc}); fix the syntax", path=label) from exc


def tables(texts: dict[str, str]) -> dict[str, dict]:
    """The table of each text (by its label: a name unique among the package's TOML files), from
    the index where it holds that text, else parsed (and added to the index)."""
    path = index_path()
    held = _read(path) if path else {}
    out = {}
    added = False
    for label, text in texts.items():
        entry = held.get(label)
        if isinstance(entry, dict) and entry.get("text") == text:
            out[label] = entry["table"]
            continue
        out[label] = parse(text, label)
        if _round_trips(out[label]):
            held[label] = {"text": text, "table": out[label]}
            added = True
    if added and path:
        _write(path, held)
    return out


def index_path() -> Path | None:
    """Where the index of this package's files is (None: no index): one per installed folder, so
    that two installs do not overwrite each other's."""
    folder = os.environ.get(CACHE_ENV)
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "rooflint")
    if not folder:
        return None
    where = zlib.crc32(str(package_folder()).encode("utf-8", "replace"))
    return Path(folder) / f"catalog-v{VERSION}-{where:08x}.json"


def _read(path: Path) -> dict:
    try:
        index = json.loads(path.read_bytes())
    except (OSError, ValueError):  # none yet, unreadable, damaged
        return {}
    files = index.get("files") if isinstance(index, dict) else None
    return files if isinstance(files, dict) else {}


def _round_trips(table: dict) -> bool:
    """Whether JSON gives this table back exactly (TOML's dates it cannot, NaN is never equal)."""
    try:
        return json.loads(json.dumps(table)) == table
    except (TypeError, ValueError):
        return False


def _write(path: Path, files: dict) -> None:
    """The index, replaced whole (a reader sees the old one or the new one); nothing where the
    folder cannot be written."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps({"files": files}), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
