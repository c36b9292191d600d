"""Generated code for large models (fluidnet.codegen.statements): loops over repeated structure.

Values of the looped functions are checked against sympy's own evaluation of the canonical
form; the size of the generated code (what numba has to type and compile) against the number
of shapes, not of flows.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.codegen import arrayform, statements
from fluidnet.codegen.compiled import compile_form
from fluidnet.codegen.csource import generate_c_source
from fluidnet.codegen.pysource import generate_source

_DP = ctypes.POINTER(ctypes.c_double)


def _ring(n: int) -> np.ndarray:
    """Routing of a ring network: flow i uses links i and i + 1 (mod n)."""
    A = np.zeros((n, n), dtype=int)
    for i in range(n):
        A[i, i] = A[(i + 1) % n, i] = 1
    return A


def _kelly_ring(n: int):
    return fn.models.kelly_primal(
        _ring(n), w=1.0, kappa=0.5, c=2.0, B=4.0, T=list(np.linspace(0.05, 0.15, n))
    )


def _call(func, x, z, p, w, aux, nout):
    arrs = [np.ascontiguousarray(a, dtype=float) for a in (x, z, p, w, aux)]
    out = np.zeros(nout)
    func.ctypes(0.25, *[a.ctypes.data_as(_DP) for a in (*arrs, out)])
    return out


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / "cache"))


#: How each backend's generated source writes a loop over a table.
LOOP = {"numba": "for r in range(", "c": "for (int r = 0; r < "}


@pytest.fixture(params=["c", "numba"])
def backend(request):
    return request.param


def test_large_network_code_is_looped_not_unrolled():
    src = generate_source(_kelly_ring(120).form)
    lines = src.count("\n")
    # one loop per shape (a handful), not one statement per flow and lag (120 flows, 360 lags:
    # about 1000 lines unrolled)
    assert lines < 150, lines
    assert src.count("for r in range(") >= 2
    csrc = generate_c_source(_kelly_ring(120).form)
    body = csrc[csrc.index("void fluidnet_rhs") :]  # after the helper functions and tables
    assert body.count("\n") < 150, body.count("\n")
    assert body.count(LOOP["c"]) >= 2


def test_looped_network_functions_equal_sympy(private_cache, backend):
    m = _kelly_ring(34)
    form = m.form
    assert len(form.rhs) > statements.LOOP_MIN_STATEMENTS  # the looped generator is used
    cm = compile_form(form, backend)
    assert cm.backend == backend
    assert LOOP[backend] in cm.path.read_text()
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, form.n)
    z = rng.uniform(0.5, 1.5, len(form.lags))
    p = np.array([m.values[k] for k in form.params]) * rng.uniform(0.9, 1.1, len(form.p))
    zs = [lag.symbol for lag in form.lags]
    want = np.array(sympy.lambdify([form.x, zs, form.p], list(form.rhs))(x, z, p), dtype=float)
    got = _call(cm.module.rhs, x, z, p, [0.0], [0.0], form.n)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    taus = np.array(sympy.lambdify([form.p], [lag.delay for lag in form.lags])(p), dtype=float)
    got = [_call(cm.module.delay, x, z, p, [0.0], [float(k)], 1)[0] for k in range(len(zs))]
    np.testing.assert_array_equal(got, taus)


def test_looped_switches_and_gradients_equal_sympy(private_cache, monkeypatch, backend):
    # a switched law per flow; the loop generator is forced for this small model
    monkeypatch.setattr(statements, "LOOP_MIN_STATEMENTS", 0)
    monkeypatch.setattr(statements, "LOOP_MIN_GROUP", 2)
    n = 6
    xs = [sympy.Function(f"q_{i}", real=True) for i in range(n)]
    c, T = fn.params("c T")
    t = fn.t
    rhs = {
        xs[i]: sympy.Max(xs[i](t - T) + xs[(i + 1) % n](t) - c, 0) - sympy.Heaviside(xs[i](t) - c)
        for i in range(n)
    }
    m = fn.Model(rhs=rhs, params={c: 1.0, T: 0.5}, name="switched ring")
    cm = compile_form(m.form, backend)
    assert cm.backend == backend
    assert LOOP[backend] in cm.path.read_text()
    sym = arrayform.array_form(m.form)
    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 2.0, n)
    z = rng.uniform(0.0, 2.0, cm.nlag)
    p = np.array([1.0, 0.5])
    w = rng.uniform(0.0, 1.0, cm.nswitch)
    aux = rng.uniform(-1.0, 1.0, cm.nlag)
    subs = {sympy.Symbol(f"x[{i}]", real=True): x[i] for i in range(n)}
    subs.update({sympy.Symbol(f"z[{k}]", real=True): z[k] for k in range(cm.nlag)})
    subs.update({sympy.Symbol(f"p[{j}]", real=True): p[j] for j in range(2)})
    subs.update({sympy.Symbol(f"w[{j}]", real=True): w[j] for j in range(cm.nswitch)})
    subs.update({sympy.Symbol(f"aux[{k}]", real=True): aux[k] for k in range(cm.nlag)})
    subs[fn.t] = 0.25

    def value(e):
        return float(sympy.sympify(e).xreplace(subs))

    np.testing.assert_allclose(
        _call(cm.module.rhs, x, z, p, w, aux, n), [value(e) for e in sym.rhs], rtol=1e-14
    )
    np.testing.assert_allclose(
        _call(cm.module.switch, x, z, p, w, aux, cm.nswitch),
        [value(s.surface) for s in sym.switches],
        rtol=1e-14,
    )
    flat = [g for row in sym.grads for g in row]
    np.testing.assert_allclose(
        _call(cm.module.sgrad, x, z, p, w, aux, len(flat)), [value(g) for g in flat], rtol=1e-14
    )
