"""Primal rate laws (9)/(10)/(38)/(40)/(41) of Kunniyur & Srikant (2003) and their delayed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from scipy import optimize

import fluidnet as fn
from fluidnet.models import (
    UserNetwork,
    log_utility,
    penalty_optimum,
    power_utility,
    team_objective,
    utility_primal,
)


def _sym(m, name):
    return sympy.Symbol(name, real=True)


def test_equations_are_9_and_10_with_random_loss():
    net = UserNetwork([[1, 1]], [log_utility(), power_utility(2)], C=10.0)
    m = utility_primal(net)
    k1, k2, w1, w2, b1, b2, a1, a2, beta = sympy.symbols(
        "kappa_1 kappa_2 w_1 w_2 betar_1 betar_2 alpha_1 alpha_2 beta", real=True
    )
    x1, x2, q1, q2 = (sympy.Function(n, real=True)(fn.t) for n in ("x_1", "x_2", "q_1", "q_2"))
    # x - z = x [(1 - alpha) + alpha sum p]  (z = alpha y, y = x (1 - sum p))
    lost1 = x1 * ((1 - a1) + a1 * q1)
    lost2 = x2 * ((1 - a2) + a2 * q2)
    assert sympy.simplify(m.rhs["x_1"] - k1 * (w1 / b1 - beta * lost1)) == 0  # (9)
    assert sympy.simplify(m.rhs["x_2"] - k2 * (2 * w2 / b2 - beta * x2**2 * lost2)) == 0  # (10)


def test_exp1_equilibrium_matches_independent_solve():
    net = UserNetwork(
        [[1, 1, 0], [1, 0, 1]],
        [power_utility(0.5), log_utility(), power_utility(1)],
        C=[156.25, 78.125],
    )
    eq = utility_primal(net, beta=0.5).equilibrium()
    A, C = net.A, net.C

    def foc(x):  # (w/beta_r) U'(x) = beta sum p, typed from the paper
        y = A @ x
        p = np.maximum(y - C, 0) / y
        marg = np.array([0.5 * x[0] ** -1.5, 1 / x[1], x[2] ** -2])
        return 1 - 0.5 * (A.T @ p) / marg

    ref = optimize.fsolve(foc, [16.7, 141.7, 61.5], xtol=1e-13)  # both links overloaded
    assert [eq["x_1"], eq["x_2"], eq["x_3"]] == pytest.approx(ref, rel=1e-10)
    assert ref == pytest.approx([16.712, 141.773, 61.454], abs=6e-4)  # note 001 T2 (derived)


def test_loss_versus_ecn_single_link_closed_forms():
    # three -1/x users, C = 78.125, alpha = 0.95, beta = 0.5, marking level 0.99 C
    net = UserNetwork([[1]], power_utility(1), C=78.125, N=3, alpha=0.95)
    x_loss = utility_primal(net, beta=0.5).equilibrium()["x_1"]
    assert x_loss == pytest.approx(1 / math.sqrt(0.5 * 0.05), rel=1e-10)  # random-loss limited
    Ct = 0.99 * 78.125
    x_ecn = utility_primal(net, beta=0.5, feedback="ecn", levels=Ct).equilibrium()["x_1"]
    ref = optimize.brentq(lambda x: 1 / x**2 - 0.5 * 0.95 * (3 * x - Ct) / (3 * x), 25.0, 26.5)
    assert x_ecn == pytest.approx(ref, rel=1e-10)
    assert x_ecn / x_loss == pytest.approx(4.09, abs=0.01)
    # Prop 6: the ECN equilibrium maximises (42), weights w/(beta_r alpha)
    x42 = penalty_optimum(net, 0.5, levels=Ct, feedback="ecn")
    assert x42[0] == pytest.approx(x_ecn, rel=1e-10)


def test_lyapunov_identity():
    # (9)/(10): x_r' = kappa_r alpha_r c_r / U_r'(x_r) * dV/dx_r with V the objective (3)
    net = UserNetwork([[1, 1]], [log_utility(), power_utility(3)], C=5.0, alpha=[0.9, 0.8])
    m = utility_primal(net, beta=0.7, kappa=[2.0, 0.5])
    vals = m.resolve_params({})
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = rng.uniform(1.0, 6.0, 2)
        h = 1e-6
        grad = [
            (team_objective(net, x + h * e, 0.7) - team_objective(net, x - h * e, 0.7)) / (2 * h)
            for e in np.eye(2)
        ]
        y = x.sum()
        p = max(y - 5.0, 0) / y
        sub = {sympy.Function("q_1", real=True)(fn.t): p, sympy.Function("q_2", real=True)(fn.t): p}
        sub.update({sympy.Function(f"x_{i + 1}", real=True)(fn.t): x[i] for i in range(2)})
        sub.update({sympy.Symbol(k, real=True): v for k, v in vals.items()})
        xdot = [float(m.rhs[f"x_{i + 1}"].xreplace(sub)) for i in range(2)]
        scale = [2.0 * 0.9 * 1 * x[0], 0.5 * 0.8 * 3 * x[1] ** 4 / 3]  # kappa alpha c / U'
        assert xdot == pytest.approx(np.multiply(scale, grad), rel=1e-6)


def test_full_delay_linearization_and_critical_value():
    # single link, N log users: delta' = -kappa beta delta(t - T), stable iff kappa beta T < pi/2
    net = UserNetwork([[1]], log_utility(), C=100.0, N=10)
    m = utility_primal(net, beta=0.5, delay="full", T=1.0)
    lin = m.linearize()
    assert lin.delays == (1.0,)
    assert lin.A[0] == pytest.approx(np.array([[-0.5]]), rel=1e-12)
    assert lin.A0 == pytest.approx(np.zeros((1, 1)), abs=1e-14)
    cv = fn.critical_value(m, "kappa_1", 0.5, 5.0)
    assert cv.value * 0.5 * 1.0 == pytest.approx(math.pi / 2, rel=1e-11)
    assert cv.omega == pytest.approx(cv.value * 0.5, rel=1e-10)


def test_price_only_delay_critical_value():
    # s + a + b e^{-sT}: a = kappa beta p*, b = kappa beta C/y*; p* = 1/6 at x* = 12
    net = UserNetwork([[1]], log_utility(), C=100.0, N=10)
    m = utility_primal(net, beta=0.5, delay="price", T=1.0)
    lin = m.linearize()
    assert lin.A0 == pytest.approx(np.array([[-0.5 / 6]]), rel=1e-12)
    assert lin.A[0] == pytest.approx(np.array([[-0.5 * 5 / 6]]), rel=1e-12)
    a, b = 1 / 6, 5 / 6
    closed = math.acos(-a / b) / math.sqrt(b * b - a * a)
    cv = fn.critical_value(m, "kappa_1", 1.0, 8.0)
    assert 0.5 * cv.value == pytest.approx(closed, rel=1e-11)
    assert closed == pytest.approx(2.170, abs=5e-4)


def test_disturbance_parameter_and_expression():
    net = UserNetwork([[1]], log_utility(), C=100.0, N=1, w=10.0)
    m = utility_primal(net, beta=1.0, disturbance=10.0)
    # 10 = x (x + 10 - 100)/(x + 10)
    x = m.equilibrium()["x_1"]
    assert 10 * (x + 10) == pytest.approx(x * (x - 90), rel=1e-12)
    m2 = utility_primal(net, beta=1.0, disturbance=5 + 5 * fn.sympy.sin(fn.t))
    assert "xi_1" not in m2.param_names
    with pytest.raises(fn.ModelError, match="depend on t only"):
        utility_primal(net, disturbance=sympy.Symbol("k") * fn.t)


def test_bad_options_are_named():
    net = UserNetwork([[1]], log_utility(), C=100.0)
    with pytest.raises(fn.OptionError, match="feedback"):
        utility_primal(net, feedback="delay")
    with pytest.raises(fn.OptionError, match="delay"):
        utility_primal(net, delay="forward")
    with pytest.raises(fn.OptionError, match="T is given"):
        utility_primal(net, T=1.0)
    with pytest.raises(fn.OptionError, match="levels"):
        utility_primal(net, levels=90.0)
    with pytest.raises(fn.ParameterError, match="exceeds the capacity"):
        utility_primal(net, feedback="ecn", levels=120.0)
    with pytest.raises(fn.ParameterError, match="kappa"):
        utility_primal(net, kappa=[1.0, 2.0])
    with pytest.raises(fn.ParameterError, match="beta"):
        utility_primal(net, beta=0.0)
    m = utility_primal(net)
    assert m.params["w_1"].unit == "pkts/s"
    m2 = utility_primal(UserNetwork([[1]], power_utility(1), C=1.0, rate_unit="pkts/RTT"))
    assert m2.params["w_1"].unit == "(pkts/RTT)^2"
    assert m2.params["kappa_1"].unit == "(pkts/RTT)^-1/s"
