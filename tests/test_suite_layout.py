"""The suite's own rules: test modules share code through tests/helpers.py, never each other."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import helpers
from tests.helpers import ROOT

TESTS = ROOT / "tests"


def imported_test_modules(path: Path) -> list[str]:
    """The test modules and conftest that `path` imports, at any depth (lazy imports count)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "tests" if node.level else node.module or ""
            base = f"{base}.{node.module}" if node.level and node.module else base
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [n for n in names if n.split(".")[:2][-1].startswith(("test_", "conftest"))]
    return sorted(set(found))


def test_no_test_module_imports_another():
    offenders = {
        path.name: imported_test_modules(path)
        for path in sorted(TESTS.glob("*.py"))
        if imported_test_modules(path)
    }
    assert offenders == {}, "move what they share into tests/helpers.py"


def test_the_rule_catches_each_spelling(tmp_path):
    spellings = [
        "from tests.test_diff import shared",
        "from .test_batch import x",
        "from . import test_fuzz",
        "import tests.conftest as conftest",
        "from tests import conftest",
        "def lazy():\n    from tests.test_reporters import A100",
    ]
    for line in spellings:
        path = tmp_path / "test_planted.py"
        path.write_text(line + "\n", encoding="utf-8")
        assert imported_test_modules(path), line
    path.write_text("from tests.helpers import shared\nfrom tests import ncu_reference\n")
    assert imported_test_modules(path) == []


def test_a_golden_mismatch_leaves_the_output_for_review(tmp_path, monkeypatch):
    monkeypatch.setattr(helpers, "ROOT", tmp_path)
    monkeypatch.setattr(helpers, "GOLDEN", tmp_path / "golden")
    monkeypatch.setattr(helpers, "ACTUAL", tmp_path / "actual")
    monkeypatch.setattr(helpers, "UPDATE", False)
    with pytest.raises(pytest.fail.Exception, match="golden/x.md is missing; the output is in "):
        helpers.check_golden("x.md", "new\n")
    assert (tmp_path / "actual" / "x.md").read_text() == "new\n"
    (tmp_path / "golden").mkdir()
    (tmp_path / "golden" / "x.md").write_text("old\n")
    with pytest.raises(pytest.fail.Exception, match=r"differs .* actual/x.md .* ROOFLINT_UPDATE"):
        helpers.check_golden("x.md", "new\r\n")
    assert (tmp_path / "actual" / "x.md").read_bytes() == b"new\r\n"  # byte for byte
    helpers.check_golden("x.md", "old\n")
    assert not (tmp_path / "actual" / "x.md").exists(), "a passing golden leaves no stale output"


# --- the lists of real profiles (tests/helpers.py) match the folders --------------------------


def _files(root: Path, folders=("ncu", "rocprof", "kineto", "nsys")) -> list[Path]:
    return sorted(p for f in folders for p in (root / f).rglob("*") if p.is_file())


@pytest.mark.e2e  # reads every bundled profile
def test_bundled_profiles_are_listed():
    loaded = helpers.with_launches(_files(helpers.FIXTURES))
    assert sorted(p.relative_to(helpers.FIXTURES).as_posix() for p in loaded) == sorted(
        helpers.BUNDLED_PROFILES
    )


@pytest.mark.e2e  # reads every shared profile
def test_shared_profiles_are_listed():
    helpers.shared("ncu")  # skips on a clean clone
    loaded = helpers.with_launches(_files(helpers.SHARED))
    assert sorted(p.relative_to(helpers.SHARED).as_posix() for p in loaded) == sorted(
        helpers.SHARED_PROFILES
    )


@pytest.mark.e2e  # collects the whole suite twice, in subprocesses
def test_a_clean_clone_collects_the_same_tests(tmp_path):
    """Without ../shared/fixtures every test is still collected (and those that need it skip
    one by one): no module-level skip, no parametrisation found by listing the shared folder."""

    def collected(shared: str) -> list[str]:
        env = {**os.environ, "ROOFLINT_SHARED_FIXTURES": shared}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-o",
                "addopts=",
                "-p",
                "no:cacheprovider",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return sorted(line for line in done.stdout.splitlines() if "::" in line)

    with_shared = collected(str(helpers.SHARED))
    assert len(with_shared) > 1000
    assert collected(str(tmp_path / "absent")) == with_shared
