"""The stepping loop of a discrete-time map (fluidnet.codegen.maploop): backends and cache."""

from __future__ import annotations

import numpy as np
import pytest

from fluidnet.codegen import build, maploop
from fluidnet.dde.maps import DiscreteMap, iterate_map
from fluidnet.errors import OptionError


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A fresh cache directory and no loop loaded in this process."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("FLUIDNET_CACHE", str(cache))
    monkeypatch.delenv("FLUIDNET_BACKEND", raising=False)
    monkeypatch.setattr(maploop, "_LOOPS", {})
    return cache


def _halving():
    """x <- x / 2 + u: x_k = 2^-k x0 + sum_j 2^-(k-j) u_j."""
    return DiscreteMap({"x": "x/2 + c*u"}, params={"c": 1.0}, random="u", name="halving")


def _expected(x0, draws):
    x, out = x0, [x0]
    for u in draws:
        x = x / 2 + u
        out.append(x)
    return np.array(out)


def test_sources_hold_the_statements_in_order():
    dm = DiscreteMap({"x": "s2"}, signals={"s1": "x + a", "s2": "2*s1"}, params={"a": 1.0})
    signals, updates = dm.array_form()
    c = maploop.generate_map_c_source(signals, updates, 0, "two signals")
    py = maploop.generate_map_source(signals, updates, 0, "two signals")
    for src in (c, py):
        assert src.index("s[0] = ") < src.index("s[1] = ") < src.index("xn[0] = ")
    assert "fluidnet_map_run" in c and "@njit(cache=True)" in py


def test_c_library_is_cached_and_verified(isolated):
    run = iterate_map(_halving(), [1.0], 50, seed=2)
    assert run.backend == "c"
    libs = list(isolated.glob("fluidnet_cmap_*.so"))
    assert len(libs) == 1 and libs[0].with_suffix(".c").exists()
    np.testing.assert_allclose(
        run.x[0], _expected(1.0, np.random.default_rng(2).random(50)), rtol=1e-15
    )


def test_auto_falls_back_to_numba_without_a_compiler(isolated, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("CC", "/bin/false")
    run = iterate_map(_halving(), [1.0], 50, seed=2)
    assert run.backend == "numba"
    assert not list(isolated.glob("*.so")) and list(isolated.glob("fluidnet_map_*.py"))
    np.testing.assert_allclose(
        run.x[0], _expected(1.0, np.random.default_rng(2).random(50)), rtol=1e-15
    )


def test_a_cached_library_serves_without_a_compiler(isolated, monkeypatch):
    iterate_map(_halving(), [1.0], 5)
    monkeypatch.setattr(maploop, "_LOOPS", {})
    monkeypatch.setenv("CC", "/bin/false")
    monkeypatch.setitem(build._BROKEN, ("/bin/false",), "known broken")
    assert iterate_map(_halving(), [1.0], 5).backend == "c"


def test_forced_c_with_a_broken_compiler_is_a_clear_error(isolated, monkeypatch):
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.raises(OptionError, match=r"C backend.*map 'halving'.*/bin/false"):
        iterate_map(_halving(), [1.0], 5, backend="c")
