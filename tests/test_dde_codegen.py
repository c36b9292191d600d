"""Code generation (fluidnet.codegen): generated functions against sympy's own evaluation."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.codegen.cache import cache_dir
from fluidnet.codegen.compiled import compile_form, compile_model
from fluidnet.errors import ModelError
from fluidnet.symbolic.switches import extract_switches

t = fn.t
_DP = ctypes.POINTER(ctypes.c_double)


def _call(cfunc, tt, x, z, p, w, aux, nout):
    """Call a generated cfunc through ctypes; returns its output vector."""
    arrs = [np.ascontiguousarray(a, dtype=float) for a in (x, z, p, w, aux)]
    out = np.zeros(nout)
    ptrs = [a.ctypes.data_as(_DP) for a in (*arrs, out)]
    cfunc.ctypes(float(tt), *ptrs)
    return out


def _sym_value(expr, form, tt, x, z, p):
    F = sympy.Float
    subs = {form.t: F(tt)}
    subs.update({s: F(v) for s, v in zip(form.x, x, strict=True)})
    subs.update({lag.symbol: F(v) for lag, v in zip(form.lags, z, strict=True)})
    subs.update({s: F(v) for s, v in zip(form.p, p, strict=True)})
    return float(sympy.sympify(expr).xreplace(subs).evalf(30))


def test_rcp_rhs_and_delays_match_sympy():
    m = fn.models.rcp(alpha=0.7, beta=0.3)
    form = m.form
    cm = compile_model(m)
    rng = np.random.default_rng(1)
    p = np.array([m.values[k] for k in form.params])
    for _ in range(5):
        x = rng.uniform([100, 0], [4000, 5000])
        z = rng.uniform(100, 4000, size=len(form.lags))
        got = _call(cm.module.rhs, 0.3, x, z, p, [0.0], [0.0], form.n)
        want = [_sym_value(e, form, 0.3, x, z, p) for e in form.rhs]
        np.testing.assert_allclose(got, want, rtol=1e-13)
        for k, lag in enumerate(form.lags):
            tau = _call(cm.module.delay, 0.3, x, z, p, [0.0], [float(k)], 1)[0]
            assert tau == pytest.approx(_sym_value(lag.delay, form, 0.3, x, z, p), rel=1e-14)
    assert list(cm.lag_statedep) == [0, 0]
    assert list(cm.nonnegative) == [0, 1]


def test_nested_state_dependent_delay_is_evaluated_with_earlier_lags():
    x = fn.states("x")
    c = fn.params("c")
    m = fn.Model(rhs={x: -x(t - 1 - x(t - 1) / c)}, params={c: 2.0})
    form = m.form
    cm = compile_model(m)
    assert [lag.kind for lag in form.lags] == ["constant", "state"]
    z = np.array([0.6, 0.0])
    tau1 = _call(cm.module.delay, 0.0, [1.0], z, [2.0], [0.0], [1.0], 1)[0]
    assert tau1 == pytest.approx(1 + 0.6 / 2.0, rel=1e-15)
    assert list(cm.lag_statedep) == [0, 1]


def _switched_values(new_exprs, switches, subs):
    """Evaluate rewritten expressions with every weight set by the sign of its surface."""
    vals = dict(subs)
    for sw in switches:
        s = float(sw.surface.xreplace(vals))
        vals[sw.weight] = 1.0 if s > 0 else 0.0
    return [float(e.xreplace(vals)) for e in new_exprs]


def test_extract_switches_reproduces_every_switching_function():
    a, b = sympy.symbols("a b", real=True)
    exprs = [
        sympy.Heaviside(a - 1) * 3 + b,
        sympy.sign(a * b) - sympy.Abs(b - 2),
        sympy.Max(a, b, 0.5) + sympy.Min(a, 2 * b),
        sympy.Piecewise((a**2, a > 1), (b, b <= 0), (7, True)),
        sympy.exp(sympy.Heaviside(sympy.Max(a, 0) - 0.3)),  # nested switches
    ]
    new, switches = extract_switches(exprs)
    assert not any(e.has(sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise) for e in new)
    rng = np.random.default_rng(7)
    for _ in range(40):
        va, vb = rng.uniform(-3, 3, size=2)
        want = [float(e.subs({a: va, b: vb})) for e in exprs]
        got = _switched_values(new, switches, {a: va, b: vb})
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_opposite_surfaces_share_one_weight():
    a = sympy.Symbol("a", real=True)
    new, switches = extract_switches([sympy.Heaviside(a - 1) + sympy.Heaviside(1 - a)])
    assert len(switches) == 1
    assert sympy.simplify(new[0]) == 1


def test_piecewise_without_default_branch_is_a_model_error():
    a = sympy.Symbol("a", real=True)
    with pytest.raises(ModelError, match="True"):
        extract_switches([sympy.Piecewise((a, a > 0), (2 * a, a < -1))])
    with pytest.raises(ModelError, match="single inequality"):
        extract_switches([sympy.Piecewise((a, sympy.Eq(a, 0)), (1, True))])


def test_switch_gradient_is_the_surface_derivative():
    x, y = fn.states("x y")
    B = fn.params("B")
    m = fn.Model(
        rhs={x: 1 - 2 * sympy.Heaviside(x(t) * y(t) - B), y: -y(t - 1) + sympy.sin(t)},
        params={B: 1.5},
    )
    cm = compile_model(m)
    assert cm.nswitch == 1
    vals = _call(cm.module.sgrad, 0.2, [2.0, 3.0], [0.0], [1.5], [1.0], [0.0], 3)
    np.testing.assert_allclose(vals, [3.0, 2.0, 0.0])  # d(xy - B)/dx, /dy, /dt
    s = _call(cm.module.switch, 0.2, [2.0, 3.0], [0.0], [1.5], [1.0], [0.0], 1)
    assert s[0] == pytest.approx(2.0 * 3.0 - 1.5)


def test_same_structure_shares_compiled_code_and_cache_key():
    m1 = fn.models.rcp()
    m2 = fn.models.rcp(alpha=1.1, beta=0.9)
    assert compile_model(m1).key == compile_model(m2).key
    x = fn.states("x")
    k = fn.params("k")
    other = fn.Model(rhs={x: -k * x(t - 1)}, params={k: 1.0})
    assert compile_form(other.form).key != compile_model(m1).key


def test_cache_dir_follows_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache"
    assert (tmp_path / "cache").is_dir()


def test_second_process_loads_compiled_model_from_disk(tmp_path):
    # the numba backend: its machine code is numba's cache (for the C backend's library see
    # tests/test_dde_codegen_c.py)
    script = textwrap.dedent(
        """
        import fluidnet as fn
        from fluidnet.codegen.compiled import compile_model
        x, = (fn.states("x"),)
        a = fn.params("a")
        m = fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.sin(x(fn.t))}, params={a: 1.0})
        cm = compile_model(m)
        mod = cm.module
        print(cm.path.parent, [f.cache_hits for f in (mod.rhs, mod.delay, mod.switch, mod.sgrad)])
        """
    )
    env = dict(os.environ, FLUIDNET_CACHE=str(tmp_path), FLUIDNET_BACKEND="numba")
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.split(" ", 1)
        for _ in range(2)
    ]
    assert runs[0][0] == str(tmp_path)
    assert runs[0][1].strip() == "[0, 0, 0, 0]"  # first process compiles
    assert runs[1][1].strip() == "[1, 1, 1, 1]"  # second process loads machine code
    assert len(list(tmp_path.glob("fluidnet_gen_*.py"))) == 1
