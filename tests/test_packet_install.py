"""The packet stage's installation: the optional extra, the test environment, and the error
when ns-3 is missing (none of these tests runs ns-3)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.packet import _ns3

ROOT = Path(__file__).resolve().parents[1]


def _small_scenario():
    return fn.packet.Dumbbell(
        link=fn.packet.Link(10e6, buffer=100), flows=[fn.packet.Flows(n=2, rtt=0.05)]
    )


def test_packet_extra_is_declared_and_in_the_test_environment():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = meta["project"]["optional-dependencies"]["packet"]
    assert any(req.replace(" ", "").startswith("ns3") for req in extra)
    makefile = (ROOT / "Makefile").read_text()
    dev_line = next(
        line for line in makefile.splitlines() if "install -e" in line and "dev" in line
    )
    assert "packet" in dev_line


def _dry_run(target: str, tmp_path: Path) -> list[str]:
    """The commands ``make -n <target>`` prints in a fresh copy (no .venv, no outputs)."""
    for name in ("Makefile", "pyproject.toml", "setup.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    out = subprocess.run(
        ["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_reproduce_typed_first_installs_the_packet_extra(tmp_path):
    # issue 35: on a fresh machine `make reproduce` installed fluidnet without its packet extra,
    # and every packet item raised NotInstalledError
    lines = _dry_run("reproduce", tmp_path)
    run = next(i for i, line in enumerate(lines) if "fluidnet reproduce" in line)
    installs = [line for line in lines[:run] if "pip" in line and "install -e" in line]
    assert any("packet" in line for line in installs), installs
    assert "-j auto" in lines[run]  # one item per core


def test_ci_runs_make_reproduce_first():
    # issue 35: .ci/run began with `make lint`, which installs every extra, so the main job
    # never saw `make reproduce` as a new user does
    steps = [
        line.split()[1]
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.startswith("make ")
    ]
    assert steps[0] == "reproduce", steps
    assert steps.count("reproduce") == 1 and "docs" in steps


def test_missing_ns3_is_a_fluidnet_error_naming_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name in ("ns3", "cppyy") else real(name, *a, **k),
    )
    assert not _ns3.available()
    assert not fn.packet.ns3_available()
    for require in (_ns3.require, fn.packet.require_ns3):
        with pytest.raises(fn.packet.NotInstalledError) as info:
            require()
        assert isinstance(info.value, fn.FluidnetError)
        assert isinstance(info.value, ImportError)
        assert "pip install 'fluidnet[packet]'" in str(info.value)


def test_paper_items_ask_the_public_helper_not_the_private_module():
    # issue 33: four paper items imported the packet stage's private _ns3 module
    papers = ROOT / "fluidnet" / "papers"
    private = re.compile(r"\b_ns3\b")  # the module, not require_ns3
    users = sorted(
        str(p.relative_to(papers)) for p in papers.rglob("*.py") if private.search(p.read_text())
    )
    assert users == []
    assert "require_ns3" in (papers / "rcp" / "packet_fct.py").read_text()


def test_importing_the_packet_stage_loads_neither_ns3_nor_cppyy():
    code = (
        "import fluidnet as fn, sys, json\n"
        "sc = fn.packet.Dumbbell(link=fn.packet.Link(1e7), flows=[fn.packet.Flows()])\n"
        "sc.plan(1.0, 0)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert loaded.isdisjoint({"cppyy", "ns3", "ns", "libcppyy"}), loaded
