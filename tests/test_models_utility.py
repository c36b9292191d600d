"""Utility objects (Kunniyur & Srikant 2003, Assumption 4) and the fluid penalty (Sec II)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.models import (
    fluid_penalty,
    log_utility,
    mm1b_loss,
    penalty_integral,
    power_utility,
    utility_family,
)
from fluidnet.models.utility import Utility, X


def test_log_and_power_derivatives_and_law_terms():
    u = log_utility()
    assert sympy.simplify(u.dU() - 1 / X) == 0
    assert sympy.simplify(u.d2U() + 1 / X**2) == 0
    assert sympy.simplify(u.decrease() - X) == 0  # (9): beta x f
    assert u.law_scale == 1.0 and u.nu == 0
    for nu in (0.5, 1, 2, 3):
        v = power_utility(nu)
        n = sympy.nsimplify(nu)
        assert sympy.simplify(v.dU() - n * X ** (-n - 1)) == 0
        assert sympy.simplify(v.d2U() + n * (n + 1) * X ** (-n - 2)) == 0
        assert sympy.simplify(v.decrease() - X ** (n + 1)) == 0  # (10): beta x^(nu+1) f
        assert v.law_scale == nu


def test_marginal_inverse_closed_forms_and_generic():
    assert log_utility().marginal_inverse(0.25) == pytest.approx(4.0, rel=1e-15)
    assert power_utility(1).marginal_inverse(0.25) == pytest.approx(2.0, rel=1e-15)
    assert power_utility(2).marginal_inverse(2 / 27) == pytest.approx(3.0, rel=1e-14)
    z = sympy.Symbol("z", positive=True)
    tcp = Utility.from_expr(sympy.log(z / (1 + z)))  # U' = 1/(x(1+x))
    x = tcp.marginal_inverse(1 / 12)
    assert x == pytest.approx(3.0, rel=1e-12)
    assert tcp.law_scale == 1.0 and tcp.nu is None
    assert sympy.simplify(tcp.decrease() - X * (1 + X)) == 0  # (38): 1/U'


def test_utility_family_and_bad_inputs():
    assert utility_family(0).name == "log x"
    assert utility_family(1).name == "-1/x"
    assert utility_family(0.5).name == "-1/x^(1/2)"
    for bad in (0, -1, float("nan"), "a"):
        with pytest.raises(fn.ParameterError, match="nu"):
            power_utility(bad)
    with pytest.raises(fn.ParameterError, match="nu"):
        utility_family(-2)
    with pytest.raises(fn.ParameterError, match="U'"):
        log_utility().marginal_inverse(0.0)
    z = sympy.Symbol("z", positive=True)
    with pytest.raises(fn.ModelError, match="not strictly concave"):
        Utility.from_expr(z)  # linear
    with pytest.raises(fn.ModelError, match="not increasing"):
        Utility.from_expr(-(z**2))
    with pytest.raises(fn.ModelError, match="free symbol"):
        Utility.from_expr(sympy.log(z) * sympy.Symbol("a"))


def test_fluid_penalty_identities():
    u, C = sympy.symbols("u C", positive=True)
    p = 1 - C / u  # the branch u > C of (u - C)^+/u
    assert sympy.simplify(p + u * sympy.diff(p, u) - 1) == 0  # p + u p' = 1
    assert float(fluid_penalty(120.0, 100.0)) == pytest.approx(1 / 6, rel=1e-15)
    assert float(fluid_penalty(80.0, 100.0)) == 0.0
    assert isinstance(fluid_penalty(u, C), sympy.Expr)
    # int_0^y p = y - C - C log(y/C) above C, checked by quadrature
    from scipy.integrate import quad

    val, _ = quad(lambda v: max(v - 100.0, 0) / v, 0, 150.0, points=[100.0])
    assert float(penalty_integral(150.0, 100.0)) == pytest.approx(val, rel=1e-10)
    assert float(penalty_integral(90.0, 100.0)) == 0.0


def test_mm1b_tends_to_fluid_penalty():
    # the K -> oo limit of the scaled M/M/1/B loss (T12): (rho - 1)/rho above 1, 0 below
    rho, K, r = sympy.symbols("rho K r", positive=True)
    e = mm1b_loss(rho, 1, 3 * K)
    assert sympy.simplify(sympy.limit(e.subs(rho, 1 + r), K, sympy.oo) - r / (1 + r)) == 0
    assert sympy.limit(e.subs(rho, sympy.Rational(1, 2)), K, sympy.oo) == 0
    for B in (10, 100, 1000):
        assert float(mm1b_loss(200.0, 100.0, B)) == pytest.approx(0.5, abs=2.0**-B)
    assert float(mm1b_loss(100.0, 100.0, 4)) == pytest.approx(0.2)  # 1/(B + 1) at rho = 1
    assert math.isclose(float(mm1b_loss(50.0, 100.0, 2)), 0.5 * 0.25 / (1 - 0.125))


def test_utility_values_are_numeric_arrays():
    u = power_utility(0.5)
    xs = np.array([1.0, 4.0])
    assert np.allclose(u.value(xs), [-1.0, -0.5])
    assert np.allclose(u.marginal(xs), [0.5, 0.5 / 8])
    assert np.allclose(u.curvature(xs), [-0.75, -0.75 / 32])
