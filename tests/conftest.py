"""Shared test fixtures: where the bundled and the shared real profiles live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# The full set of real profiles beside the checkout; ROOFLINT_SHARED_FIXTURES=/nonexistent runs the
# suite as a clean clone does (the tests that need it skip, one by one).
SHARED = Path(os.environ.get("ROOFLINT_SHARED_FIXTURES") or ROOT.parent / "shared" / "fixtures")

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


def with_launches(paths) -> list[Path]:
    """The files among `paths` that load into at least one launch (a roofline.csv loads, but
    holds ceilings, not launches; non-profiles do not load)."""
    from rooflint import parsers
    from rooflint.core.errors import RooflintError

    found = []
    for path in paths:
        try:
            if len(parsers.read(path).launches):
                found.append(path)
        except RooflintError:
            continue
    return found


def shared(relative: str) -> Path:
    """A file under ../shared/fixtures, skipping the test when the folder is absent."""
    if not SHARED.is_dir():
        pytest.skip("shared/fixtures is not present beside the checkout")
    return SHARED / relative


@pytest.fixture(autouse=True)
def _terminal_width(monkeypatch):
    """Terminal output is laid out for a 100-column terminal in every test (goldens included)."""
    monkeypatch.setenv("COLUMNS", "100")
