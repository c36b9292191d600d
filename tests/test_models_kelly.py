"""Kelly primal (3.2.16) and dual (3.2.20) laws on routing matrices (seed 002 Sec 3.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models.kelly import kelly_dual, kelly_primal, proportional_fair

DOUBLE = [[1, 0, 1], [0, 1, 1]]
PARKING = [
    [1, 0, 0, 0, 1, 0, 0, 1],
    [0, 1, 0, 0, 1, 1, 0, 1],
    [0, 0, 1, 0, 0, 1, 1, 1],
    [0, 0, 0, 1, 0, 0, 1, 1],
]
SHARES = [5 / 8, 5 / 12, 5 / 12, 5 / 8, 1 / 4, 5 / 24, 1 / 4, 1 / 8]


def test_dual_equilibrium_double_bottleneck():
    # 1/lam + 1/(2 lam) = c = 1  ->  lam = 3/2
    eq = kelly_dual(DOUBLE).equilibrium()
    assert eq["lam_1"] == pytest.approx(1.5, rel=1e-9)
    assert eq["lam_2"] == pytest.approx(1.5, rel=1e-9)


def test_dual_equilibrium_parking_lot_prices():
    eq = kelly_dual(PARKING).equilibrium()
    got = [eq[f"lam_{i}"] for i in range(1, 5)]
    np.testing.assert_allclose(got, [1.6, 2.4, 2.4, 1.6], rtol=1e-8)


@pytest.mark.parametrize("B", [5.0, 30.0])
def test_primal_double_bottleneck_closed_form(B):
    # lam = y^B on each link, x_A = 1/lam, x_C = 1/(2 lam), y = 1.5/lam  ->  y^(B+1) = 1.5
    eq = kelly_primal(DOUBLE, B=B).equilibrium(guess={"x_1": 0.6, "x_2": 0.6, "x_3": 0.3})
    y = 1.5 ** (1 / (B + 1))
    assert eq["x_1"] + eq["x_3"] == pytest.approx(y, rel=1e-9)
    assert eq["x_1"] / (eq["x_1"] + eq["x_3"]) == pytest.approx(2 / 3, rel=1e-9)


def test_delayed_primal_critical_delay_is_exact():
    # one link: x' = k (w - x(t-T) (x(t-T)/c)^B); linearized d' = -k (B+1) p d(t-T) with p = w/x
    k, B, w, c = 2.0, 4.0, 1.0, 1.0
    m = kelly_primal([[1]], w=w, kappa=k, c=c, B=B, T=0.1)
    x = (w * c**B) ** (1 / (B + 1))
    gain = k * (B + 1) * w / x
    cv = fn.critical_value(m, "T_1", 0.01, 1.0)
    assert cv.value == pytest.approx(math.pi / (2 * gain), rel=1e-9)
    assert cv.omega == pytest.approx(gain, rel=1e-9)
    # (3.2.17) is sufficient: kappa T (p + lambda' y) < 1 lies inside the exact region
    assert 1.0 / gain < cv.value


def test_proportional_fair_reference():
    x = proportional_fair(DOUBLE, 1.0, 1.0)
    np.testing.assert_allclose(x, [2 / 3, 2 / 3, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(proportional_fair(PARKING, 1.0, 1.0), SHARES, rtol=1e-6)
    with pytest.raises(fn.ParameterError):
        proportional_fair(DOUBLE, [1.0, 0.0, 1.0], 1.0)


def test_dual_converges_from_zero_prices():
    sol = fn.simulate(kelly_dual(DOUBLE), 60.0, history={"lam_1": 0.0, "lam_2": 0.0}, rtol=1e-9)
    assert sol["lam_1"][-1] == pytest.approx(1.5, rel=1e-5)
    assert np.min(sol["lam_1"]) >= 0.0


def test_errors():
    with pytest.raises(fn.ParameterError, match="w must be"):
        kelly_primal(DOUBLE, w=[1.0, 2.0])
    with pytest.raises(fn.ModelError, match="price"):
        kelly_primal(DOUBLE, price=lambda y, c: "not an expression")
    with pytest.raises(fn.ModelError, match="routing"):
        kelly_dual([[[1]]])
    m = kelly_primal(DOUBLE, price=lambda y, c: y / c)
    assert "B" not in m.param_names
