"""Team problems (3)/(5)/(6)-(8)/(42) of Kunniyur & Srikant (2003) and the UserNetwork container."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import fluidnet as fn
from fluidnet.models import (
    UserNetwork,
    capacity_optimum,
    log_utility,
    penalty_optimum,
    power_utility,
    team_gradient,
    team_objective,
    team_weights,
)

EXP1 = dict(
    A=[[1, 1, 0], [1, 0, 1]],
    utilities=[power_utility(0.5), log_utility(), power_utility(1)],
    C=[156.25, 78.125],
)


def test_sec4_example_closed_form():
    # 50 log + 50 -1/x users on C = 300: 1/x = lam = 1/s^2, x + s = 6 -> s^2 + s - 6 = 0
    opt = capacity_optimum(UserNetwork([[1, 1]], [log_utility(), power_utility(1)], C=300, N=50))
    assert opt.x == pytest.approx([4.0, 2.0], rel=1e-12)
    assert opt.multipliers == pytest.approx([0.25], rel=1e-12)
    # -1/x^2 and -1/x: (2/lam)^(1/3) + lam^(-1/2) = 6
    lam = optimize.brentq(lambda v: (2 / v) ** (1 / 3) + v**-0.5 - 6, 0.01, 1, xtol=1e-16)
    opt = capacity_optimum(UserNetwork([[1, 1]], [power_utility(2), power_utility(1)], C=300, N=50))
    assert opt.x == pytest.approx([(2 / lam) ** (1 / 3), lam**-0.5], rel=1e-11)


def _exp1_kkt():
    """(6)-(8) on Experiment 1 from its KKT system with both links saturated (plain scipy)."""
    A = np.array(EXP1["A"])
    C = np.array(EXP1["C"])

    def rates(lam):
        q = A.T @ lam
        return np.array([(0.5 / q[0]) ** (2 / 3), 1 / q[1], q[2] ** -0.5])

    lam = optimize.fsolve(lambda v: A @ rates(np.exp(v)) / C - 1, np.log([7e-3, 3e-4]), xtol=1e-14)
    return rates(np.exp(lam)), np.exp(lam)


def test_capacity_optimum_matches_kkt_and_multipliers():
    x_ref, lam_ref = _exp1_kkt()
    opt = capacity_optimum(UserNetwork(**EXP1))
    assert opt.x == pytest.approx(x_ref, rel=1e-10)
    assert opt.multipliers == pytest.approx(lam_ref, rel=1e-8)
    assert opt.loads == pytest.approx(EXP1["C"], rel=1e-12)


def test_penalty_optimum_first_order_conditions_and_limit():
    net = UserNetwork(**EXP1)
    x_star = capacity_optimum(net).x
    gaps = []
    for beta in (0.5, 5.0, 50.0, 500.0):
        x = penalty_optimum(net, beta)
        # (4) by hand: (w/beta_r) U'(x) = beta sum p on every route
        y = net.loads(x)
        p = np.maximum(y - net.C, 0) / y
        marg = np.array([0.5 * x[0] ** -1.5, 1 / x[1], x[2] ** -2])
        assert marg == pytest.approx(beta * (net.A.T @ p), rel=1e-9)
        gaps.append(np.max(np.abs(x - x_star)))
    # Corollary 1: the beta -> oo limit is (6)-(8), at rate O(1/beta)
    gaps = np.array(gaps)
    assert np.all(np.diff(gaps) < 0)
    assert gaps[1:] * np.array([5.0, 50.0, 500.0]) == pytest.approx(
        gaps[:-1] * np.array([0.5, 5.0, 50.0]), rel=0.02
    )


def test_random_loss_objective_gradient_and_objective_maximum():
    net = UserNetwork(**EXP1, alpha=[0.99, 0.95, 1.0], w=[1.0, 2.0, 0.5])
    x = penalty_optimum(net, 0.5)
    assert np.all(np.abs(team_gradient(net, x, 0.5)) < 1e-10)
    v0 = team_objective(net, x, 0.5)
    rng = np.random.default_rng(1)
    for _ in range(20):  # a maximum: every nearby point is lower
        assert team_objective(net, x * (1 + 0.01 * rng.standard_normal(3)), 0.5) < v0
    # gradient against finite differences
    g = team_gradient(net, x * 1.1, 0.5)
    h = 1e-6
    for r in range(3):
        e = np.zeros(3)
        e[r] = h * x[r]
        fd = (team_objective(net, x * 1.1 + e, 0.5) - team_objective(net, x * 1.1 - e, 0.5)) / (
            2 * e[r]
        )
        assert fd == pytest.approx(g[r], rel=1e-6)


def test_single_link_square_root_law():
    # one TCP-like user (nu = 1, w/beta_r = 1/d^2) with random loss, capacity not reached: (18)
    beta, d, loss = 0.5, 1.0, 0.05
    net = UserNetwork([[1]], power_utility(1), C=100.0, alpha=1 - loss, w=1 / d**2)
    x = penalty_optimum(net, beta)
    assert x[0] == pytest.approx(1 / (np.sqrt(beta) * d * np.sqrt(loss)), rel=1e-12)


def test_rtt_weights_and_bad_inputs():
    net = UserNetwork(**EXP1, d=[2.0, 1.0, 3.0])
    assert team_weights(net, rtt_weighted=True) == pytest.approx([2**-1.5, 1.0, 1 / 9])
    with pytest.raises(fn.OptionError, match="feedback"):
        team_objective(net, [1, 1, 1], 0.5, feedback="delay")
    with pytest.raises(fn.ParameterError, match="beta"):
        penalty_optimum(net, -1.0)
    with pytest.raises(fn.ParameterError, match=r"levels\[1\]"):
        team_objective(net, [1, 1, 1], 0.5, levels=[1.0, float("nan")])
