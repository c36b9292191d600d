"""The compile cache of fluidnet.dde.codegen: private directories, verified modules, recovery
from corrupt files and one compilation across concurrent processes.

These tests use the numba backend (generated Python modules and numba's machine-code cache);
the C backend's libraries are tested in tests/test_dde_codegen_c.py.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import textwrap
import warnings

import numpy as np
import pytest
from process_helpers import run_together

import fluidnet as fn
from fluidnet.dde import cache as cache_module
from fluidnet.dde import codegen
from fluidnet.dde.codegen import cache_dir, compile_form
from fluidnet.errors import CacheError

PLANTED = textwrap.dedent(
    """
    import pathlib
    pathlib.Path({marker!r}).write_text("planted code ran")
    N_STATES = N_LAGS = N_SWITCHES = N_PARAMS = 0
    """
)


def _model():
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.sin(x(fn.t))}, params={a: 1.0})


def _forget(key: str) -> None:
    """Make this process behave as a new one for model ``key`` (memo, module, warnings)."""
    codegen._MEMO.pop(key, None)
    codegen._WARNED.discard(key)
    sys.modules.pop(f"fluidnet_gen_{key}", None)


def _rhs_value(cm) -> float:
    """``rhs`` at x = 0.5, z = 0.25, a = 2 through the compiled function: -2*0.25 + sin(0.5)."""
    import ctypes

    dp = ctypes.POINTER(ctypes.c_double)
    arrs = [np.array(v, dtype=float) for v in ([0.5], [0.25], [2.0], [0.0], [0.0], [0.0])]
    cm.module.rhs.ctypes(0.0, *[a.ctypes.data_as(dp) for a in arrs])
    return float(arrs[-1][0])


EXPECTED = -2 * 0.25 + np.sin(0.5)


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A model, its cache key and an empty cache directory named by FLUIDNET_CACHE."""
    m = _model()
    key = codegen._form_key(m.form)
    _forget(key)
    cache = tmp_path / "cache"
    monkeypatch.setenv("FLUIDNET_CACHE", str(cache))
    monkeypatch.setenv("FLUIDNET_BACKEND", "numba")
    monkeypatch.setattr(cache_module, "_FALLBACK", [])
    yield m, key, cache
    _forget(key)


def test_cache_directory_is_created_private(fresh):
    _, _, cache = fresh
    assert cache_dir() == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "__pycache__").stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_cache_writable_by_others_is_refused_and_planted_code_not_run(fresh, tmp_path, mode):
    m, key, cache = fresh
    cache.mkdir()
    marker = tmp_path / "marker"
    (cache / f"fluidnet_gen_{key}.py").write_text(PLANTED.format(marker=str(marker)))
    os.chmod(cache, mode)
    with pytest.raises(CacheError, match=str(cache)):
        compile_form(m.form)
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_cache_of_another_user_is_refused(fresh, tmp_path):
    m, key, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    (cache / f"fluidnet_gen_{key}.py").write_text(PLANTED.format(marker=str(marker)))
    os.chown(cache, 65534, -1)
    with pytest.raises(CacheError, match=f"{cache}.*belongs to user id 65534"):
        compile_form(m.form)
    assert not marker.exists()


def test_planted_module_in_own_cache_is_replaced_not_run(fresh, tmp_path):
    m, key, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    planted = cache / f"fluidnet_gen_{key}.py"
    planted.write_text(PLANTED.format(marker=str(marker)))
    cm = compile_form(m.form)
    assert not marker.exists()
    assert "planted" not in planted.read_text()
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)


def test_unusable_cache_falls_back_to_a_fresh_private_directory(fresh, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("FLUIDNET_CACHE", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="not usable"):
        first = cache_dir()
    assert first != blocker / "cache"
    assert first.name.startswith("fluidnet-cache-") and first.is_dir()
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    assert first.stat().st_uid == os.getuid()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache_dir() == first  # the same private directory for the rest of the process
    shutil.rmtree(first)


# ----------------------------------------------------------------------- corrupt caches
@pytest.fixture(scope="module")
def compiled_cache(tmp_path_factory):
    """A cache directory holding the compiled test model (compiled once for these tests)."""
    cache = tmp_path_factory.mktemp("compiled") / "cache"
    m = _model()
    key = codegen._form_key(m.form)
    old = os.environ.get("FLUIDNET_CACHE")
    os.environ["FLUIDNET_CACHE"] = str(cache)
    try:
        _forget(key)
        compile_form(m.form, "numba")
    finally:
        _forget(key)
        if old is None:
            del os.environ["FLUIDNET_CACHE"]
        else:
            os.environ["FLUIDNET_CACHE"] = old
    return cache


def _copy(compiled_cache, cache):
    shutil.copytree(compiled_cache, cache, copy_function=shutil.copy2)
    os.chmod(cache, 0o700)


def test_intact_cache_loads_machine_code_without_warning(fresh, compiled_cache):
    m, key, cache = fresh
    _copy(compiled_cache, cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = compile_form(m.form)
    assert cm.module.rhs.cache_hits == 1
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _garbage(path):
    path.write_bytes(b"\x80\x04garbage, not a pickle" * 10)


@pytest.mark.parametrize(
    ("pattern", "damage"),
    [
        ("__pycache__/*.rhs-*.nbi", _truncate),
        ("__pycache__/*.rhs-*.nbi", _garbage),
        ("__pycache__/*.delay-*.nbc", _truncate),
        ("__pycache__/*.sgrad-*.nbc", _garbage),
        ("fluidnet_gen_*.py", _truncate),
        ("index.json", _garbage),
    ],
)
def test_corrupt_cache_is_discarded_and_recompiled_with_one_warning(
    fresh, compiled_cache, pattern, damage
):
    m, key, cache = fresh
    _copy(compiled_cache, cache)
    (target,) = cache.glob(pattern)
    damage(target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cm = compile_form(m.form)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "corrupt" in messages[0] and str(cache) in messages[0]
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)
    # the next process finds a sound cache again
    _forget(key)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm2 = compile_form(m.form)
    assert cm2.module.rhs.cache_hits == 1


# ----------------------------------------------------------------------- concurrency
_COMPILE = textwrap.dedent(
    """
    import os, sys, time, pathlib
    import fluidnet as fn
    from fluidnet.dde.codegen import compile_form
    x = fn.states("x")
    a, b = fn.params("a b")
    m = fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.cos(b * x(fn.t))}, params={a: 1.0, b: 2.0})
    form = m.form
    pathlib.Path(sys.argv[1]).write_text("ready")
    go = pathlib.Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.01)
    mod = compile_form(form).module
    print(sum(f.cache_hits for f in (mod.rhs, mod.delay, mod.switch, mod.sgrad)))
    """
)


def test_concurrent_processes_compile_a_model_once(tmp_path):
    env = dict(os.environ, FLUIDNET_CACHE=str(tmp_path / "cache"), FLUIDNET_BACKEND="numba")
    outs = run_together(_COMPILE, env, tmp_path, timeout=300)
    # one process compiled the four functions, the other waited and loaded all four
    assert sorted(int(o.strip()) for o, _ in outs) == [0, 4]


def test_other_generated_modules_are_verified_too(fresh, tmp_path):
    # load_generated serves generated code outside the integrator (fluidnet.stochastic)
    _, _, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    name = "fluidnet_chain_test_planted"
    (cache / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))
    sys.modules.pop(name, None)
    try:
        module = codegen.load_generated(name, lambda: "ANSWER = 42\n")
        assert module.ANSWER == 42 and not marker.exists()
    finally:
        sys.modules.pop(name, None)
