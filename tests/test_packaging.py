"""The wheel ships every package: each folder with an __init__.py is listed in pyproject.toml."""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT


def test_every_python_package_is_listed_for_setuptools():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    folders = {
        "rooflint": ROOT / "src" / "rooflint",
        "rooflint.parsers": ROOT / "parsers",
        "rooflint.hardware": ROOT / "hardware",
    }
    found = set()
    for package, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((package, *relative)))
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    for package in listed:
        prefixes = {".".join(package.split(".")[:i]) for i in range(1, package.count(".") + 2)}
        assert prefixes & set(config["package-dir"]), f"{package} has no folder in package-dir"
