"""Integrator accuracy against exact solutions: method of steps, manufactured, closed form."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from scipy.optimize import brentq

import fluidnet as fn

t = fn.t
METHODS = ["BS3", "DP5"]


def _method_of_steps(t_end: int) -> list[sympy.Expr]:
    """Exact pieces of x' = -x(t-1), x = 1 on [-1, 0], on [k, k+1] (symbolic integration)."""
    s = sympy.Symbol("s")
    pieces = [sympy.Integer(1)]  # on [-1, 0]
    for k in range(t_end):
        prev = pieces[-1]
        start = prev.subs(s, k)
        pieces.append(sympy.expand(start - sympy.integrate(prev.subs(s, s - 1), (s, k, s))))
    return [p.subs(s, t) for p in pieces]


@pytest.mark.parametrize("method", METHODS)
def test_delayed_decay_matches_method_of_steps(method):
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t - 1)}, params={})
    pieces = _method_of_steps(5)
    exact5 = float(pieces[-1].subs(t, 5))
    assert exact5 == pytest.approx(19 / 120)  # 1 - 4 + 9/2 - 8/3 + 25/24 - 1/120 at t = 5
    sol = fn.simulate(m, 5.0, history={"x": 1.0}, rtol=1e-11, atol=1e-13, method=method)
    assert abs(sol(5.0)[0] - exact5) < 1e-8
    # the steps land on the jumps of derivatives up to the method's order, propagated from
    # t0 = 0: the k-th derivative jumps at t = k - 1
    order = 3 if method == "BS3" else 5
    for k in range(1, order):
        assert np.min(np.abs(sol.mesh - k)) < 1e-12
    # dense output inside the pieces, history included
    for k in range(1, 6):
        tt = np.linspace(k - 1, k, 7)
        exact = [float(pieces[k].subs(t, v)) for v in tt]
        np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-8)
    assert sol(-0.5)[0] == 1.0


@pytest.mark.parametrize(("method", "order"), [("BS3", 3), ("DP5", 5)])
def test_observed_convergence_order(method, order):
    """Fixed steps on x' = a x(t-1) whose exact solution is exp(lam t) (a = lam exp(lam))."""
    x = fn.states("x")
    a = fn.params("a")
    lam = -0.5
    m = fn.Model(rhs={x: a * x(t - 1)}, params={a: lam * np.exp(lam)})
    ts = np.linspace(-1.2, 0.0, 24001)  # history samples; spline error ~1e-17
    hist = {"x": (ts, np.exp(lam * ts))}
    hs = np.array([1 / 4, 1 / 8, 1 / 16, 1 / 32])
    errs = []
    for h in hs:
        sol = fn.simulate(
            m, 5.0, history=hist, rtol=1e3, atol=1e3, first_step=h, max_step=h, method=method
        )
        assert sol.counters.rejected == 0
        errs.append(abs(sol(5.0)[0] - np.exp(5 * lam)))
    slopes = np.diff(np.log(errs)) / np.diff(np.log(hs))
    assert np.all(np.abs(slopes - order) < 0.25), slopes


@pytest.mark.parametrize(("method", "order"), [("BS3", 3), ("DP5", 4)])
def test_dense_output_order(method, order):
    """Error of the continuous extension between mesh points (fixed steps, exact exp solution)."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t)}, params={})
    errs = []
    hs = np.array([0.4, 0.2, 0.1])
    for h in hs:
        sol = fn.simulate(
            m, 4.0, history={"x": 1.0}, rtol=1e3, atol=1e3, first_step=h, max_step=h, method=method
        )
        tt = np.linspace(0, 4.0, 4001)
        errs.append(np.max(np.abs(sol(tt)[0] - np.exp(-tt))))
    slopes = np.diff(np.log(errs)) / np.diff(np.log(hs))
    assert np.all(slopes > order - 0.3), slopes


def _manufactured(nested: bool):
    """x' = -x(t - tau) + F(t) with F chosen so that x(t) = 2 + sin t exactly."""
    x = fn.states("x")
    X = lambda s: 2 + sympy.sin(s)  # noqa: E731
    if nested:
        tau_model = 1 + x(t - 1) ** 2 / 10
        tau_exact = 1 + X(t - 1) ** 2 / 10
    else:
        tau_model = 1 + x(t) ** 2 / 10
        tau_exact = 1 + X(t) ** 2 / 10
    forcing = sympy.cos(t) + X(t - tau_exact)
    return fn.Model(rhs={x: -x(t - tau_model) + forcing}, params={}), tau_exact


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_manufactured_state_dependent_delay(method, nested):
    m, _ = _manufactured(nested)
    assert m.form.lags[-1].kind == "state"
    sol = fn.simulate(
        m, 10.0, history={"x": lambda s: 2 + np.sin(s)}, rtol=1e-9, atol=1e-11, method=method
    )
    tt = np.linspace(-1.0, 10.0, 2201)
    assert np.max(np.abs(sol(tt)[0] - (2 + np.sin(tt)))) < 1e-6


def test_state_dependent_discontinuity_is_located():
    """The jump at t0 reaches the lag argument when t - tau(x(t)) = 0; a step lands there."""
    m, tau_exact = _manufactured(False)
    g = sympy.lambdify(t, t - tau_exact)
    t_cross = brentq(g, 0.5, 3.0)  # independent: root of the exact lag argument
    sol = fn.simulate(m, 4.0, history={"x": lambda s: 2 + np.sin(s)}, rtol=1e-9, atol=1e-11)
    assert np.min(np.abs(sol.mesh - t_cross)) < 1e-7
    assert sol.counters.discontinuities >= 1


@pytest.mark.parametrize("method", METHODS)
def test_steep_delayed_feedback_reaches_equilibrium(method):
    """x' = 1 - x(t-1) (x(t-1)/10)^10 from history 5: equilibrium 10^(10/11), no overflow."""
    x = fn.states("x")
    m = fn.Model(rhs={x: 1 - x(t - 1) * (x(t - 1) / 10) ** 10}, params={})
    sol = fn.simulate(m, 200.0, history={"x": 5.0}, method=method)
    assert sol(200.0)[0] == pytest.approx(10 ** (10 / 11), rel=1e-6)
    assert np.all(np.isfinite(sol.y))


def test_long_steps_over_short_delays_iterate_to_the_exact_solution():
    """x' = a x(t - 0.01) with exact exp(lam t): steps much longer than the delay."""
    x = fn.states("x")
    a = fn.params("a")
    lam, tau = -1.0, 0.01
    m = fn.Model(rhs={x: a * x(t - tau)}, params={a: lam * np.exp(lam * tau)})
    ts = np.linspace(-0.02, 0.0, 401)
    sol = fn.simulate(m, 10.0, history={"x": (ts, np.exp(lam * ts))}, rtol=1e-8, atol=1e-12)
    assert np.median(np.diff(sol.mesh)) > 5 * tau
    assert sol.counters.iterations > 0
    tt = np.linspace(0, 10, 101)
    # global error: rtol-level relative error plus the absolute tolerance accumulated
    np.testing.assert_allclose(sol(tt)[0], np.exp(lam * tt), rtol=1e-7, atol=1e-10)
