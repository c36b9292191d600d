"""Runge-Kutta methods as data: order conditions of every tableau and measured orders."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.dde.methods import METHODS

t = fn.t
#: Orders of the propagated solution and of the continuous extension, from the literature
#: (Bogacki and Shampine 1989; Dormand and Prince 1980 with Hairer, Norsett and Wanner's dense
#: output; Tsitouras 2011).
ORDERS = {"BS3": (3, 3), "DP5": (5, 4), "Tsit5": (5, 4)}


def _residuals(w, A, c, order, theta=1.0):
    """Order conditions of the weights ``w`` (all rooted trees up to ``order``, at most 5).

    For a continuous extension, ``w`` are the weights at ``theta`` and the right-hand sides
    are ``theta**rho / gamma``.
    """
    Ac, Ac2, Ac3 = A @ c, A @ c**2, A @ c**3
    AAc = A @ Ac
    trees = [
        (1, 1, np.ones_like(c)),
        (2, 2, c),
        (3, 3, c**2),
        (3, 6, Ac),
        (4, 4, c**3),
        (4, 8, c * Ac),
        (4, 12, Ac2),
        (4, 24, AAc),
        (5, 5, c**4),
        (5, 10, c**2 * Ac),
        (5, 15, c * Ac2),
        (5, 30, c * AAc),
        (5, 20, Ac * Ac),
        (5, 20, Ac3),
        (5, 40, A @ (c * Ac)),
        (5, 60, A @ Ac2),
        (5, 120, A @ AAc),
    ]
    return np.array([w @ phi - theta**rho / gamma for rho, gamma, phi in trees if rho <= order])


@pytest.mark.parametrize("name", sorted(METHODS))
def test_tableau_satisfies_its_order_conditions(name):
    rk = METHODS[name]
    order, dense_order = ORDERS[name]
    assert (rk.order, rk.dense_order) == (order, dense_order)
    A, B, C = rk.A, rk.B, rk.C
    assert np.max(np.abs(A.sum(axis=1) - C)) < 1e-14
    assert np.all(np.triu(A) == 0.0)  # explicit
    assert np.max(np.abs(_residuals(B, A, C, order))) < 1e-14
    if order < 5:  # and not one more (the trees above list up to order 5)
        assert np.max(np.abs(_residuals(B, A, C, order + 1))) > 1e-6
    embedded = B - rk.E
    assert np.max(np.abs(_residuals(embedded, A, C, rk.error_order))) < 1e-14
    assert np.max(np.abs(_residuals(embedded, A, C, rk.error_order + 1))) > 1e-6
    # the continuous extension: y + h sum_j (K.T P)_j theta^(j+1) has weights P @ theta^j
    for theta in (0.2, 0.5, 0.9, 1.0):
        w = rk.P @ theta ** np.arange(1, rk.P.shape[1] + 1)
        assert np.max(np.abs(_residuals(w, A, C, dense_order, theta))) < 1e-13
    np.testing.assert_allclose(rk.P.sum(axis=1), B, atol=1e-15)  # ends at the step's end


def _fixed_step_errors(model, t_end, history, exact, hs, method):
    errs = []
    for h in hs:
        sol = fn.simulate(
            model,
            t_end,
            history=history,
            rtol=1e3,
            atol=1e3,
            first_step=h,
            max_step=h,
            method=method,
        )
        assert sol.counters.rejected == 0
        errs.append(abs(sol(t_end)[0] - exact))
    return np.diff(np.log(errs)) / np.diff(np.log(hs))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_measured_order_on_an_ode(name):
    """x' = -t x, x(0) = 1: exact x = exp(-t^2 / 2), error at t = 2 (fixed steps)."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -t * x(t)}, params={})
    hs = np.array([0.1, 0.05, 0.025])
    slopes = _fixed_step_errors(m, 2.0, {"x": 1.0}, np.exp(-2.0), hs, name)
    assert np.all(np.abs(slopes - ORDERS[name][0]) < 0.35), slopes


def _delayed_decay_exact(t_end: int) -> Fraction:
    """x' = -x(t - 1), x = 1 on [-1, 0], at ``t_end``: method of steps in exact arithmetic.

    Piece ``k`` (on ``[k-1, k]``) is a polynomial in ``t`` with rational coefficients,
    ``p_{k+1}(t) = p_k(k) - int_k^t p_k(s - 1) ds``.
    """

    def value(p, s):
        return sum(c * s**j for j, c in enumerate(p))

    def shifted(p):  # coefficients of p(s - 1)
        out = [Fraction(0)] * len(p)
        for j, c in enumerate(p):
            for i in range(j + 1):  # binomial expansion of (s - 1)^j
                out[i] += c * comb(j, i) * (-1) ** (j - i)
        return out

    p = [Fraction(1)]
    for k in range(t_end):
        q = shifted(p)
        integral = [Fraction(0)] + [c / (j + 1) for j, c in enumerate(q)]
        start = value(p, k)
        p = [-c for c in integral]
        p[0] += start + value(integral, k)
    return value(p, t_end)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_measured_order_on_a_dde(name):
    """x' = -x(t - 1) with history 1: fixed steps that divide the delay, error at t = 6.

    (At t = 10 the errors of the 5th-order methods are still pre-asymptotic at these steps.)
    """
    assert _delayed_decay_exact(5) == Fraction(19, 120)  # the known value at t = 5
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t - 1)}, params={})
    exact = float(_delayed_decay_exact(6))
    hs = np.array([1 / 2, 1 / 4, 1 / 8, 1 / 16])
    slopes = _fixed_step_errors(m, 6.0, {"x": 1.0}, exact, hs, name)
    assert np.all(np.abs(slopes - ORDERS[name][0]) < 0.3), slopes


@pytest.mark.parametrize("name", sorted(METHODS))
def test_measured_order_of_the_dense_output(name):
    """Largest error between mesh points on x' = -x (exact exp(-t)), fixed steps."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t)}, params={})
    hs = np.array([0.2, 0.1, 0.05])
    tt = np.linspace(0.0, 4.0, 4001)
    errs = []
    for h in hs:
        sol = fn.simulate(
            m, 4.0, history={"x": 1.0}, rtol=1e3, atol=1e3, first_step=h, max_step=h, method=name
        )
        errs.append(np.max(np.abs(sol(tt)[0] - np.exp(-tt))))
    slopes = np.diff(np.log(errs)) / np.diff(np.log(hs))
    # interpolation error h^(q+1) between mesh points on top of the global error h^p
    expected = min(ORDERS[name][0], ORDERS[name][1] + 1)
    assert np.all(np.abs(slopes - expected) < 0.35), slopes


def test_adaptive_tsit5_meets_the_tolerance():
    """Tsit5 with step control on the delayed decay: error at t = 10 near the tolerance."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t - 1)}, params={})
    exact = float(_delayed_decay_exact(10))
    for rtol in (1e-6, 1e-9):
        sol = fn.simulate(m, 10.0, history={"x": 1.0}, rtol=rtol, atol=rtol, method="Tsit5")
        assert abs(sol(10.0)[0] - exact) < 20 * rtol


def test_one_compiled_kernel_serves_every_method_and_model():
    """The methods are run-time data: the kernel has a single compiled specialization."""
    from fluidnet.dde._kernel import advance

    x, q = fn.states("x q")
    plain = fn.Model(rhs={x: -x(t - 1)}, params={})
    switched = fn.Model(
        rhs={x: 1 - 2 * sympy.Heaviside(x(t - 0.5) - 1), q: x(t) - 1},
        params={},
        nonnegative=[q],
    )
    for name in METHODS:
        fn.simulate(plain, 3.0, history={"x": 1.0}, method=name)
        fn.simulate(switched, 3.0, history={"x": 0.5, "q": 0.0}, method=name)
    assert len(advance.signatures) == 1
