"""The packet stage's installation: the optional extra, the test environment, and the error
when ns-3 is missing (none of these tests runs ns-3)."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.packet import _ns3

ROOT = Path(__file__).resolve().parents[1]


def test_packet_extra_is_declared_and_in_the_test_environment():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = meta["project"]["optional-dependencies"]["packet"]
    assert any(req.replace(" ", "").startswith("ns3") for req in extra)
    makefile = (ROOT / "Makefile").read_text()
    dev_line = next(
        line for line in makefile.splitlines() if "install -e" in line and "dev" in line
    )
    assert "packet" in dev_line


def test_missing_ns3_is_a_fluidnet_error_naming_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name in ("ns3", "cppyy") else real(name, *a, **k),
    )
    assert not _ns3.available()
    with pytest.raises(fn.packet.NotInstalledError) as info:
        _ns3.require()
    assert isinstance(info.value, fn.FluidnetError)
    assert isinstance(info.value, ImportError)
    assert "pip install 'fluidnet[packet]'" in str(info.value)
