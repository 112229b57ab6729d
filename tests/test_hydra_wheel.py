"""The wheel built from the repository ships the Hydra group files and the SearchPathPlugin."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_wheel_contains_group_files_and_plugin(tmp_path):
    source = tmp_path / "src"          # a copy, so that the build leaves nothing in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for package in ("optreg", "hydra_plugins"):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "dist").glob("optreg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(REPO).as_posix() for p in (REPO / "optreg" / "configs").rglob("*.yaml")}
    assert len(shipped) > 100 and "optreg/configs/optimizer/adamw.yaml" in shipped
    assert shipped <= names, sorted(shipped - names)[:5]
    assert "optreg/configs/quickstart.yaml" in names
    assert "hydra_plugins/optreg_searchpath/optreg_searchpath.py" in names
    assert "hydra_plugins/optreg_searchpath/__init__.py" in names
    assert "hydra_plugins/__init__.py" not in names        # namespace package, shared with other Hydra plugins
    assert not any(n.startswith(("tests/", "examples/")) for n in names)
