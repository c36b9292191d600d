"""The ahead-of-time integrator (fluidnet.dde.engine) against the just-in-time kernel."""

import os
import shutil
import threading
import warnings

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.dde import engine as E
from fluidnet.dde.codegen import _digest, _record
from fluidnet.errors import CacheError

t = fn.t
H = sympy.Heaviside


@pytest.fixture(scope="module")
def aot_path():
    """The ahead-of-time engine of this checkout (built here when the warm-up did not)."""
    path, _ = E.build_engine()
    return path


def _run(mode, model, t_end, **kw):
    old = os.environ.get("FLUIDNET_ENGINE")
    os.environ["FLUIDNET_ENGINE"] = mode
    try:
        assert E.engine().kind == mode
        return fn.simulate(model, t_end, **kw)
    finally:
        if old is None:
            del os.environ["FLUIDNET_ENGINE"]
        else:
            os.environ["FLUIDNET_ENGINE"] = old


def _models():
    x, q = fn.states("x q")
    kappa, T = fn.params("kappa T")
    kelly = fn.Model(
        rhs={x: kappa * (1 - x(t) * x(t - T) ** 10)}, params={kappa: 0.2, T: 1.0}, name="k"
    )
    yield "kelly limit cycle", kelly, 300.0, {"history": {"x": 0.5}}, {}
    queue = fn.Model(
        rhs={x: 1 - q(t - 1) / 5 - x(t) / 4, q: x(t - 1) - 1}, params={}, nonnegative=[q]
    )
    yield "projected queue", queue, 60.0, {"history": {"x": 2.0, "q": 0.0}}, {}
    relay = fn.Model(rhs={x: -sympy.sign(x(t)) + 2 * sympy.sin(t)}, params={})
    yield "sliding relay", relay, 20.0, {"history": {"x": 0.0}}, {}
    delayed = fn.Model(rhs={x: sympy.Rational(1, 2) - H(x(t - 1))}, params={})
    yield "delayed relay", delayed, 20.0, {"history": {"x": 0.3}}, {}
    sdep = fn.Model(rhs={x: -x(t - 1 - x(t) ** 2 / 10) + sympy.cos(t)}, params={})
    yield "state-dependent delay", sdep, 30.0, {"history": {"x": 1.0}}, {}
    stiff = fn.Model(rhs={x: -1000 * (x(t) - sympy.cos(t)) - x(t - 1)}, params={})
    yield "stiff, ROS2", stiff, 10.0, {"history": {"x": 1.0}}, {"method": "ROS2"}


@pytest.mark.parametrize("case", list(_models()), ids=lambda c: c[0])
def test_ahead_of_time_engine_is_bit_identical_to_the_jit_kernel(aot_path, case):
    _, model, t_end, hist, opts = case
    te = np.linspace(0.0, t_end, 401)
    a = _run("aot", model, t_end, t_eval=te, **hist, **opts)
    b = _run("jit", model, t_end, t_eval=te, **hist, **opts)
    assert repr(a.counters) == repr(b.counters)  # exact (repr round-trips floats; nan too)
    for name in model.state_names:
        np.testing.assert_array_equal(a[name], b[name])
    assert a.counters.steps > 20


def test_ahead_of_time_engine_releases_the_gil(aot_path):
    """While one thread is inside the extension, another keeps running Python code."""
    x = fn.states("x")
    m = fn.Model(rhs={x: 0.2 * (1 - x(t) * x(t - 1) ** 10)}, params={}, name="gil")
    _run("aot", m, 10.0, history={"x": 0.5})  # compiled and loaded
    from fluidnet.dde import simulation as S

    calls = []
    real = E.engine

    def slow_engine():
        eng = real()

        def advance(st, run, budget):
            calls.append(counter[0])
            status = eng.advance(st, run, 10**9)  # one call for the whole run
            calls.append(counter[0])
            return status

        return E.Engine(eng.kind, eng.path, advance)

    counter = [0]
    done = threading.Event()
    errors = []

    def work():
        old = S.engine
        S.engine = slow_engine
        try:
            _run("aot", m, 40000.0, history={"x": 0.5}, dense=False, t_eval=[40000.0])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            S.engine = old
            done.set()

    th = threading.Thread(target=work)
    th.start()
    while not done.is_set():
        counter[0] += 1
    th.join()
    assert not errors
    inside = sum(b - a for a, b in zip(calls[::2], calls[1::2], strict=True))
    # with the GIL held during the calls, this loop could not have advanced inside them
    assert inside > 1000


def test_unknown_engine_mode_is_refused(monkeypatch):
    monkeypatch.setenv("FLUIDNET_ENGINE", "fast")
    with pytest.raises(ValueError, match="FLUIDNET_ENGINE.*'fast'"):
        E.engine()


def test_required_engine_missing_names_the_warmup(monkeypatch, tmp_path):
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    with pytest.raises(CacheError, match="fluidnet.dde.warmup"):
        E.engine()
    monkeypatch.setenv("FLUIDNET_ENGINE", "auto")
    assert E.engine().kind == "jit"


def test_a_replaced_extension_is_never_loaded(aot_path, monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    monkeypatch.setenv("FLUIDNET_CACHE", str(cache))
    path = E.engine_path()
    shutil.copy2(aot_path, path)
    _record(path.parent, path.name, _digest(path.read_bytes()))
    assert E.engine().kind == "aot"  # the verified copy loads
    E._ENGINES.clear()
    with open(path, "ab") as fh:
        fh.write(b"\0")  # planted or damaged after it was recorded
    with pytest.warns(RuntimeWarning, match="does not match the digest"):
        assert E.engine().kind == "jit"
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(CacheError):
            E.engine()


def test_arrays_of_another_layout_are_refused(aot_path, monkeypatch):
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    st, run = E._sample_run()
    bad = run._replace(hs=run.hs._replace(mc=np.asfortranarray(np.zeros((4, 2, 5)))))
    with pytest.raises(TypeError, match="another layout"):
        E.engine().advance(st[0], bad, 10)


def test_build_is_idempotent(aot_path):
    path, spent = E.build_engine()  # found built and verified: nothing compiled
    assert path == aot_path and spent == 0.0
