"""The wheel ships every package: each folder with an __init__.py is listed in pyproject.toml."""

from __future__ import annotations

import re
import shlex
import tomllib

from tests.helpers import ROOT

FOLDERS = {
    "rooflint": ROOT / "src" / "rooflint",
    "rooflint.parsers": ROOT / "parsers",
    "rooflint.hardware": ROOT / "hardware",
}


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_python_package_is_listed_for_setuptools():
    config = _setuptools()
    listed = set(config["packages"])
    found = set()
    for package, folder in FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((package, *relative)))
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    for package in listed:
        prefixes = {".".join(package.split(".")[:i]) for i in range(1, package.count(".") + 2)}
        assert prefixes & set(config["package-dir"]), f"{package} has no folder in package-dir"


def test_every_folder_of_package_data_is_listed_for_setuptools():
    """A folder of data files only (hardware/devices) is still importable, so setuptools warns
    that it is absent from `packages` (and may one day leave its files out): each is listed,
    with package data of its own."""
    config = _setuptools()
    for package, folder in FOLDERS.items():
        for data in folder.rglob("*.toml"):
            relative = data.parent.relative_to(folder).parts
            name = ".".join((package, *relative))
            assert name in config["packages"], f"add {name} to [tool.setuptools] packages"
            assert name in config["package-data"], f"add {name} to package-data"


def test_the_readmes_ci_examples_install_rooflint_from_where_it_is():
    """rooflint is on no package index: a workflow that copies `pip install rooflint` fails at
    that step (issue 31). Every `pip install` in the README's YAML examples installs from the
    repository (a PEP 508 `name @ git+URL@ref`, pinned) or a local path or wheel."""
    from packaging.requirements import Requirement

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    installs = [m for b in blocks for m in re.findall(r"pip install (.+)", b)]
    assert installs, "the README lost its GitHub Actions example"
    for args in installs:
        for arg in shlex.split(args):
            if arg.startswith(("-", ".", "/")) or arg.endswith(".whl"):
                continue  # an option, a checkout or a built wheel
            requirement = Requirement(arg)
            assert requirement.url and requirement.url.startswith("git+https://"), arg
            assert requirement.name == "rooflint", arg
            assert re.search(r"\.git@|rooflint@[\w.]+$", requirement.url), f"unpinned: {arg}"
