"""Projected (non-negative) states: exact boundary behaviour, RCP overload start."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn

t = fn.t
C, N, D0, T = 18750.0, 10.0, 0.2, 0.01


def _queue_exact():
    """q' = sin t - 1/2 projected at 0 from q(0) = 0: held, released at pi/6, back at t2."""
    t1 = np.pi / 6
    free = lambda s: np.cos(t1) - np.cos(s) - 0.5 * (s - t1)  # noqa: E731
    t2 = brentq(free, 5 * np.pi / 6, 2 * np.pi)

    def q(s):
        s = np.asarray(s, dtype=float)
        ph = np.mod(s, 2 * np.pi)
        return np.where((ph > t1) & (ph < t2), free(ph), 0.0)

    return q, t1, t2


@pytest.mark.parametrize("method", ["BS3", "DP5"])
def test_projected_queue_matches_closed_form(method):
    q = fn.states("q")
    m = fn.Model(rhs={q: fn.sympy.sin(t) - fn.sympy.Rational(1, 2)}, params={}, nonnegative=[q])
    exact, t1, t2 = _queue_exact()
    t_end = 4 * np.pi
    sol = fn.simulate(m, t_end, history={"q": 0.0}, rtol=1e-10, atol=1e-12, method=method)
    tt = np.linspace(0, t_end, 4001)
    np.testing.assert_allclose(sol(tt)[0], exact(tt), atol=1e-8)
    # time held at 0: [0, t1] + [t2, 2pi + t1] + [2pi + t2, 4pi]
    held = t1 + (2 * np.pi + t1 - t2) + (4 * np.pi - 2 * np.pi - t2)
    assert sol.counters.time_on_boundary["q"] == pytest.approx(held, abs=1e-8)
    # arrivals and departures are events located on the dense output
    assert np.min(np.abs(sol.mesh - t2)) < 1e-8
    assert np.min(np.abs(sol.mesh - (2 * np.pi + t1))) < 1e-8
    assert sol.counters.events == 4
    assert np.all(sol(tt)[0] >= 0.0)


def test_rcp_overload_start_keeps_queue_nonnegative_without_chattering():
    m = fn.models.rcp()
    sol = fn.simulate(m, 60.0, history={"R": 2 * C / N, "q": 0.0})
    assert np.all(sol["q"] >= 0.0)
    tt = np.linspace(0.0, 60.0, 200_001)
    q = sol(tt, "q")
    assert np.all(q >= 0.0)
    assert sol.counters.time_on_boundary["q"] > 1.0
    # the queue is exactly 0 while it is held (not a small negative or positive number)
    assert np.count_nonzero(q == 0.0) > 0.05 * q.size
    # no chattering: a few events per RTT at most, no cascade of tiny steps
    assert sol.counters.events < 60.0 / D0
    assert sol.counters.steps < 2000
    # the overload start first builds a queue, then drains it
    assert q.max() > 0.1 * C * D0
    assert sol(60.0, "R") == pytest.approx(C / N, rel=1e-3)


def test_rcp_from_equilibrium_stays_exactly_there():
    m = fn.models.rcp()
    sol = fn.simulate(m, 40.0)
    assert np.all(sol["R"] == C / N)
    assert np.all(sol["q"] == 0.0)
    assert sol.counters.time_on_boundary["q"] == pytest.approx(40.0)


def _heun_rcp(t_end: float, h: float, R0: float, alpha: float, beta: float):
    """Independent integrator: Heun's method on a grid where both delays are whole steps,
    with the queue clipped at 0 (a projected Euler-type treatment of the boundary)."""
    nT, nd = round(T / h), round(D0 / h)
    n = round(t_end / h)
    R = np.full(n + 1 + nd, R0)  # index i + nd is time i*h; history constant
    q = np.zeros(n + 1)

    def f(i, Ri, qi):
        d = D0 + qi / C
        RT, Rd = R[i + nd - nT], R[i + nd - nd]
        dR = RT * (alpha * (C - N * Rd) - beta * qi / d) / (C * d)
        dq = N * Rd - C
        return dR, (max(dq, 0.0) if qi <= 0.0 else dq)

    for i in range(n):
        Ri, qi = R[i + nd], q[i]
        k1 = f(i, Ri, qi)
        Rp, qp = Ri + h * k1[0], max(qi + h * k1[1], 0.0)
        R[i + nd + 1] = Rp  # the predictor serves the lags of the corrector stage
        k2 = f(i + 1, Rp, qp)
        R[i + nd + 1] = Ri + 0.5 * h * (k1[0] + k2[0])
        q[i + 1] = max(qi + 0.5 * h * (k1[1] + k2[1]), 0.0)
    return np.arange(n + 1) * h, R[nd:], q


def test_rcp_agrees_with_an_independent_fixed_step_integrator():
    """Heun with a clipped queue converges (first order, from the boundary) to our solution."""
    alpha, beta = 0.6, 0.8
    sol = fn.simulate(
        fn.models.rcp(alpha=alpha, beta=beta), 4.0, history={"R": 2 * C / N}, rtol=1e-9, atol=1e-9
    )
    errs = []
    for h in (2e-4, 1e-4):
        tt, R, q = _heun_rcp(4.0, h, 2 * C / N, alpha, beta)
        v = sol(tt)
        assert np.max(np.abs(v[0] - R)) < 1e-6 * C / N
        errs.append(np.max(np.abs(v[1] - q)) / (C * D0))
    assert errs[1] < 2e-4
    assert 1.6 < errs[0] / errs[1] < 2.6  # the difference is Heun's own O(h) error
