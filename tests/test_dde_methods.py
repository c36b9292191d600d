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
#: output; Tsitouras 2011; Verwer, Spee, Blom and Hundsdorfer 1999 for ROS2).
ORDERS = {"BS3": (3, 3), "DP5": (5, 4), "Tsit5": (5, 4), "ROS2": (2, 2)}
EXPLICIT = sorted(name for name, rk in METHODS.items() if not rk.implicit)


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


@pytest.mark.parametrize("name", EXPLICIT)
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
    if name == "ROS2":  # its third-order error term is large: slopes 1.57, 1.76 at these steps
        hs = hs / 4
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


# ------------------------------------------------------------------ linearly implicit (ROS2)
def _linear_step(rk, z, w, theta=1.0):
    """One step of ``rk`` on ``y' = lambda y`` from ``y = 1`` with ``h lambda = z`` and the
    matrix of the linear systems built from ``h mu = w`` (``mu != lambda``: an inexact
    Jacobian), evaluated on the continuous extension at ``theta``."""
    S = rk.stages
    K = np.zeros(S, dtype=complex)
    for s in range(S):
        f = z * (1.0 + rk.A[s, :s] @ K[:s])  # h f(Y_s)
        g = rk.G[s, s]
        K[s] = (f + rk.G[s, :s] @ K[:s]) / (1.0 - g * w) if g > 0.0 else f
    weights = rk.P @ theta ** np.arange(1, rk.P.shape[1] + 1)
    return 1.0 + weights @ K, 1.0 + (rk.B - rk.E) @ K


def test_ros2_is_a_second_order_w_method_and_l_stable():
    """The step of ROS2 on y' = lambda y agrees with exp(z) to O(h^3) whatever matrix the
    linear systems use (a W-method: w = c z, c = 0 is the explicit limit, c = 1 the exact
    Jacobian), its embedded value to O(h^2); it is L-stable (R(z) -> 0 as z -> -inf) and the
    continuous extension is second order with the exact Jacobian."""
    rk = METHODS["ROS2"]
    assert rk.implicit and rk.gamma == pytest.approx(1 + 1 / np.sqrt(2), abs=1e-15)
    for c in (0.0, 1.0, -2.0, 3.0):
        for sign in (1.0, -1.0, 1j):
            err1, err2 = [], []
            for eps in (1e-2, 5e-3):
                z = sign * eps
                y1, yhat = _linear_step(rk, z, c * z)
                err1.append(abs(y1 - np.exp(z)))
                err2.append(abs(yhat - np.exp(z)))
            assert np.log2(err1[0] / err1[1]) == pytest.approx(3.0, abs=0.1)
            assert np.log2(err2[0] / err2[1]) == pytest.approx(2.0, abs=0.1)
    for z in (-1e4, -1e8):
        assert abs(_linear_step(rk, z, z)[0]) < 10 / abs(z)
    for z in (-1.0, 1j * 3.0, -0.5 + 2j):  # A-stable
        assert abs(_linear_step(rk, z, z)[0]) <= 1.0
    for theta in (0.3, 0.7):
        errs = [abs(_linear_step(rk, e, e, theta)[0] - np.exp(theta * e)) for e in (1e-2, 5e-3)]
        assert np.log2(errs[0] / errs[1]) == pytest.approx(3.0, abs=0.1)


def _prothero_robinson(lam, delayed=False):
    """x' = -lam (x - sin t) + cos t [+ x(t - 1) - sin(t - 1)]: exact x = sin t (history
    sin t), stiff for large lam; the delayed term is left out of the Jacobian."""
    x = fn.states("x")
    rhs = -lam * (x(t) - sympy.sin(t)) + sympy.cos(t)
    if delayed:
        rhs += x(t - 1) - sympy.sin(t - 1)
    return fn.Model(rhs={x: rhs}, params={})


@pytest.mark.parametrize("delayed", [False, True])
def test_ros2_takes_far_fewer_steps_than_dp5_on_a_stiff_problem(delayed):
    """Prothero-Robinson with lambda = 1e4 on [0, 10]: at rtol = atol = 1e-4 both methods
    are within 5e-4 of sin t; DP5 is held to its stability limit (about 3 / lambda), ROS2 is
    not (measured: 351 steps against 30198 for the ODE)."""
    m = _prothero_robinson(1e4, delayed)
    hist = {"x": np.sin} if delayed else {"x": 0.0}
    tt = np.linspace(0.0, 10.0, 2001)
    steps, errors = {}, {}
    for name in ("ROS2", "DP5"):
        sol = fn.simulate(m, 10.0, history=hist, method=name, rtol=1e-4, atol=1e-4)
        steps[name] = sol.counters.steps
        errors[name] = np.max(np.abs(sol(tt)[0] - np.sin(tt)))
    assert errors["ROS2"] < 5e-4 and errors["DP5"] < 5e-4, errors
    assert steps["DP5"] > 20000 and steps["ROS2"] < steps["DP5"] / 30, steps


def test_generated_jacobian_matches_finite_differences():
    """The compiled Jacobian (and time derivative) of a model with a lag, a parameter and a
    projected state, against central differences of the compiled right-hand side."""
    import ctypes

    from fluidnet.codegen.compiled import compile_model, jacobian_address

    x, q = fn.states("x q")
    a = fn.params("a")
    m = fn.Model(
        rhs={x: a * sympy.sin(t) * x(t) ** 2 - x(t - 1) * q(t), q: sympy.exp(-x(t)) - q(t) * t},
        params={a: 1.5},
        nonnegative=[q],
    )
    cm = compile_model(m)
    proto = ctypes.CFUNCTYPE(None, ctypes.c_double, *[ctypes.POINTER(ctypes.c_double)] * 6)
    rhs, jac = proto(int(cm.addresses[0])), proto(jacobian_address(cm))

    def call(f, tv, xv, out):
        args = [np.ascontiguousarray(v, dtype=np.float64) for v in (xv, [0.7], [1.5], [0.0], [0])]
        ptr = ctypes.POINTER(ctypes.c_double)
        f(tv, *(v.ctypes.data_as(ptr) for v in args), out.ctypes.data_as(ptr))
        return out

    t0, x0 = 0.8, np.array([0.4, 1.3])
    got = call(jac, t0, x0, np.zeros(2 * 3)).reshape(2, 3)
    eps = 1e-6
    fd = np.zeros((2, 3))
    for j in range(3):
        dx = np.zeros(2)
        dt = 0.0
        if j < 2:
            dx[j] = eps
        else:
            dt = eps
        up = call(rhs, t0 + dt, x0 + dx, np.zeros(2))
        dn = call(rhs, t0 - dt, x0 - dx, np.zeros(2))
        fd[:, j] = (up - dn) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-8, atol=1e-9)


def test_ros2_needs_a_differentiable_right_hand_side():
    """floor has no derivative in sympy: ROS2 refuses the model, naming the state."""
    x = fn.states("x")
    m = fn.Model(rhs={x: sympy.floor(x(t)) - x(t)}, params={})
    with pytest.raises(fn.ModelError, match=r"state 'x' cannot be differentiated in 'x'"):
        fn.simulate(m, 1.0, history={"x": 0.5}, method="ROS2")
    assert fn.simulate(m, 1.0, history={"x": 0.5}).y.shape[0] == 1  # explicit methods run
