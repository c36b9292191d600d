"""Window laws (12)/(13) and (22)/(23) of Kunniyur & Srikant (2003) reduced to rates by sympy."""

from __future__ import annotations

import pytest
import sympy

import fluidnet as fn
from fluidnet.models import (
    UserNetwork,
    capacity_optimum,
    log_utility,
    penalty_optimum,
    power_utility,
    utility_window,
)
from fluidnet.models.utility import Utility

NU = 2


def _rate_form(m, r: str):
    """``x_r' = W_r'/d_r`` with ``W_r = d_r x_r`` substituted (x_r, q_r as plain symbols)."""
    d = sympy.Symbol(f"d_{r}", real=True)
    x, q = sympy.symbols(f"X_{r} Q_{r}")
    W = sympy.Function(f"W_{r}", real=True)(fn.t)
    sub = {
        W: d * x,
        sympy.Function(f"x_{r}", real=True)(fn.t): x,
        sympy.Function(f"q_{r}", real=True)(fn.t): q,
    }
    return sympy.simplify(m.rhs[f"W_{r}"].xreplace(sub) / d), x, q, d


def _paper_symbols(r: str):
    return sympy.symbols(f"kappa_{r} w_{r} betar_{r} alpha_{r} beta", real=True)


@pytest.fixture(scope="module")
def net():
    return UserNetwork([[1, 1]], [log_utility(), power_utility(NU)], C=10.0, d=[2.0, 3.0])


def test_rtt_ignoring_window_reduces_to_24_25(net):
    m = utility_window(net, rtt_compensated=False)
    # (24): x' = kappa/d (w/(beta_r d) - beta (x - z)), x - z = x f
    xdot, x, q, d = _rate_form(m, "1")
    k, w, br, a, beta = _paper_symbols("1")
    lost = x * ((1 - a) + a * q)
    assert sympy.simplify(xdot - k / d * (w / (br * d) - beta * lost)) == 0
    # (25): x' = kappa d^(nu-1) (nu w/(beta_j d^(nu+1)) - (x - z) beta x^nu)
    xdot, x, q, d = _rate_form(m, "2")
    k, w, br, a, beta = _paper_symbols("2")
    lost = x * ((1 - a) + a * q)
    expected = k * d ** (NU - 1) * (NU * w / (br * d ** (NU + 1)) - lost * beta * x**NU)
    assert sympy.simplify(xdot - expected) == 0


def test_rtt_compensated_window_reduces_to_9_10(net):
    m = utility_window(net, rtt_compensated=True)
    xdot, x, q, d = _rate_form(m, "1")
    k, w, br, a, beta = _paper_symbols("1")
    assert sympy.simplify(xdot - k * (w / br - beta * x * ((1 - a) + a * q))) == 0  # (9)
    xdot, x, q, d = _rate_form(m, "2")
    k, w, br, a, beta = _paper_symbols("2")
    expected = k * (NU * w / br - beta * x**NU * x * ((1 - a) + a * q))  # (10)
    assert sympy.simplify(xdot - expected) == 0


def test_equilibria_follow_remark3_weights():
    net = UserNetwork(
        [[1, 1, 0], [1, 0, 1]],
        [power_utility(0.5), log_utility(), power_utility(1)],
        C=[156.25, 78.125],
        d=[2.0, 1.0, 1.0],
    )
    ignoring = utility_window(net, rtt_compensated=False).equilibrium()
    x = [ignoring[f"W_{r}"] / d for r, d in zip("123", net.d, strict=True)]
    assert x == pytest.approx(penalty_optimum(net, 0.5, rtt_weighted=True), rel=1e-9)
    # the beta -> oo limit with the weights of (26): note 001 T2 (derived)
    assert capacity_optimum(net, rtt_weighted=True).x == pytest.approx(
        [8.623, 147.627, 69.502], abs=6e-4
    )
    compensated = utility_window(net, rtt_compensated=True).equilibrium()
    x = [compensated[f"W_{r}"] / d for r, d in zip("123", net.d, strict=True)]
    assert x == pytest.approx(penalty_optimum(net, 0.5), rel=1e-9)  # independent of d


def test_general_utility_only_compensated():
    z = sympy.Symbol("z", positive=True)
    net = UserNetwork([[1]], Utility.from_expr(sympy.log(z / (1 + z))), C=10.0)
    assert "W_1" in utility_window(net).state_names
    with pytest.raises(fn.ModelError, match="RTT-ignoring"):
        utility_window(net, rtt_compensated=False)
