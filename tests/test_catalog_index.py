"""The catalog's parsed index (hardware/tomlfiles.py): the same devices as parsing every file,
never stale, harmless where it cannot be read or written.

The numbers are checked against tomllib itself: every table taken from the index equals what
tomllib makes of the file's text now, and the catalog built through the index (cold, warm) equals
the catalog built with no index, device for device (the dataclasses compare every ceiling, clock
and source)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from rooflint.core.errors import DeviceError
from rooflint.hardware import tomlfiles
from tests.helpers import ROOT

CATALOG = sys.modules["rooflint.hardware.catalog"]  # `rooflint.hardware.catalog` is the function
RATES = sys.modules["rooflint.hardware.rates"]
FOLDER = tomlfiles.package_folder()
TEXTS = {
    e.name: e.read_text(encoding="utf-8")
    for e in sorted(FOLDER.joinpath("devices").iterdir(), key=lambda e: e.name)
    if e.name.endswith(".toml")
}


@pytest.fixture
def index_in(tmp_path, monkeypatch):
    """An empty cache folder for the index; the in-process catalog read again from it."""
    monkeypatch.setenv(tomlfiles.CACHE_ENV, str(tmp_path))
    for cached in (CATALOG._load_catalog, CATALOG._load_one, RATES.architectures):
        cached.cache_clear()
    yield tmp_path
    for cached in (CATALOG._load_catalog, CATALOG._load_one, RATES.architectures):
        cached.cache_clear()


def _fresh_catalog():
    for cached in (CATALOG._load_catalog, CATALOG._load_one, RATES.architectures):
        cached.cache_clear()
    return CATALOG.catalog()


def test_every_table_from_the_index_is_what_tomllib_makes_of_the_text(index_in):
    cold = tomlfiles.tables(TEXTS)  # parsed, the index written
    [written] = index_in.iterdir()
    warm = tomlfiles.tables(TEXTS)  # from the index
    assert len(warm) == 42
    for name, text in TEXTS.items():
        assert warm[name] == cold[name] == tomllib.loads(text), name
    assert set(json.loads(written.read_text())["files"]) == set(TEXTS)


def test_the_catalog_through_the_index_is_the_catalog_parsed(index_in, monkeypatch):
    """Catalog numbers do not change: every Device equal with a cold index, a warm one and none."""
    cold = _fresh_catalog()
    warm = _fresh_catalog()
    monkeypatch.setenv(tomlfiles.CACHE_ENV, "")  # no index: every file parsed
    parsed = _fresh_catalog()
    assert list(cold) == list(warm) == list(parsed)
    assert cold == warm == parsed
    assert warm["h100-sxm"].compute["matrix_bf16"].value == pytest.approx(989.4e12, rel=1e-3)


def test_an_edited_file_is_parsed_again_never_taken_from_the_index(index_in):
    """The index holds each file's text; a file whose text differs by one character is parsed
    (whatever its time says) and the index rewritten with the new text."""
    name = "h100-sxm.toml"
    tomlfiles.tables({name: TEXTS[name]})
    edited = TEXTS[name].replace("dram = 3350", "dram = 3351")
    assert edited != TEXTS[name]
    assert tomlfiles.tables({name: edited})[name]["bandwidth_gbps"]["dram"] == 3351
    [written] = index_in.iterdir()
    assert json.loads(written.read_text())["files"][name]["text"] == edited


def test_a_damaged_index_is_an_empty_one_and_is_rewritten(index_in):
    name = "a10.toml"
    tomlfiles.tables({name: TEXTS[name]})
    [written] = index_in.iterdir()
    for damage in ('{"files": {"a10.toml": {"text": 1}}', "[]", '{"files": 3}', "{trunc"):
        written.write_text(damage)
        assert tomlfiles.tables({name: TEXTS[name]})[name] == tomllib.loads(TEXTS[name])
    assert json.loads(written.read_text())["files"][name]["text"] == TEXTS[name]


def test_an_index_that_cannot_be_written_leaves_the_tables_right(tmp_path, monkeypatch):
    """A cache folder that cannot be made (here under a file; a read-only home alike): nothing
    written, no error, the files parsed."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(tomlfiles.CACHE_ENV, str(blocker / "rooflint"))
    got = tomlfiles.tables({"a10.toml": TEXTS["a10.toml"]})
    assert got["a10.toml"] == tomllib.loads(TEXTS["a10.toml"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_no_index_where_the_cache_folder_is_set_empty(monkeypatch, tmp_path):
    monkeypatch.setenv(tomlfiles.CACHE_ENV, "")
    assert tomlfiles.index_path() is None
    monkeypatch.delenv(tomlfiles.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tomlfiles.index_path().parent == tmp_path / "rooflint"


def test_a_table_json_cannot_carry_is_parsed_every_time(index_in):
    """TOML dates have no JSON form: such a file stays out of the index (and is still read)."""
    text = 'id = "x"\nwhen = 2026-12-02\n'
    got = tomlfiles.tables({"dated.toml": text})
    assert got["dated.toml"]["when"].isoformat() == "2026-12-02"
    assert not list(index_in.iterdir())


def test_a_file_that_is_not_toml_names_itself(index_in):
    with pytest.raises(DeviceError, match=r"^broken\.toml: not valid TOML \(.*\); fix the syntax"):
        tomlfiles.tables({"broken.toml": "id = \n"})


@pytest.mark.e2e  # two subprocesses
def test_devices_with_the_index_filled_imports_no_tomllib(index_in):
    """The second `rooflint devices` reads the catalog from the index: tomllib (and its 6.5 ms
    over 42 files) is not even imported; the listing is the first's."""
    code = (
        "import sys; from rooflint.cli import main\n"
        "try: main.main(['devices'], prog_name='rooflint')\n"
        "except SystemExit: pass\n"
        "print('tomllib' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, tomlfiles.CACHE_ENV: str(index_in)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
        )
        for _ in range(2)
    ]
    assert [run.stderr.strip() for run in runs] == ["True", "False"]
    assert runs[0].stdout == runs[1].stdout and "h100-sxm" in runs[0].stdout
