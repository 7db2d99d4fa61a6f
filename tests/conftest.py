"""Pytest fixtures and hypothesis profiles; the helpers test modules import live in helpers.py."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import FIXTURES, SHARED

settings.register_profile("ci", max_examples=30, deadline=None)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile("long" if os.environ.get("ROOFLINT_FUZZ") == "long" else "ci")


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def shared_fixtures() -> Path:
    if not SHARED.is_dir():
        pytest.skip("shared/fixtures is not present beside the checkout")
    return SHARED


@pytest.fixture(autouse=True, scope="session")
def _catalog_index(tmp_path_factory):
    """The catalog's parsed index (hardware/tomlfiles.py) goes to a folder of the session's, not
    the user's cache (subprocesses the tests start inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROOFLINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(autouse=True)
def _terminal_width(monkeypatch):
    """Terminal output is laid out for a 100-column terminal in every test (goldens included)."""
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture
def spills(tmp_path, monkeypatch) -> Path:
    """The temporary folder the spill folders are made in, to see what is left there."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where
