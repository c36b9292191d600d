"""Package metadata: one version source, the licence and citation files agree with it."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import fluidnet

ROOT = Path(__file__).resolve().parents[1]


def test_installed_version_is_the_package_version():
    assert metadata.version("fluidnet") == fluidnet.__version__


def test_cli_prints_the_version():
    out = subprocess.run(
        [sys.executable, "-m", "fluidnet", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"fluidnet {fluidnet.__version__}"


def test_citation_and_licence_agree_with_the_metadata():
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^license: BSD-3-Clause$", cff, re.M)
    assert metadata.metadata("fluidnet")["License"] == "BSD-3-Clause"
    assert "BSD 3-Clause License" in (ROOT / "LICENSE").read_text()
    released = re.search(r"^version: (\S+)$", cff, re.M).group(1)
    # the citation names a released version, which the changelog lists
    assert f"## {released} " in (ROOT / "CHANGELOG.md").read_text()
