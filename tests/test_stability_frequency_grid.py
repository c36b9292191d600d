"""fluidnet.stability.frequency_grid: crossovers of k e^{-sT}/(s + a) against their closed form
and a second root finder, the rigorous tail radius, the grid's resolution and the errors."""

import math

import numpy as np
import pytest
import sympy
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.errors import AnalysisError, OptionError
from fluidnet.stability.frequency_grid import (
    as_loop,
    check_supported,
    frequency_grid,
    gain_crossovers,
    max_delay,
    phase_crossovers,
    refine_grid,
    tail_radius,
    unwrapped_phase,
)

s = fn.s
K, A, T = 3.0, 0.5, 0.8


@pytest.fixture(scope="module")
def loop():
    return fn.DelayTF.from_expr(K * sympy.exp(-s * T) / (s + A))


def test_gain_crossover_closed_form(loop):
    w = frequency_grid(loop)
    np.testing.assert_allclose(gain_crossovers(loop, w), [math.sqrt(K**2 - A**2)], rtol=1e-12)


def test_phase_crossovers_solve_the_phase_equation(loop):
    """w T + atan(w / a) = (2 k + 1) pi, solved by brentq on the closed-form phase."""
    w = frequency_grid(loop, (1e-3, 20.0))
    found = phase_crossovers(loop, w)
    phi = lambda x, k: x * T + math.atan(x / A) - (2 * k + 1) * math.pi  # noqa: E731
    expected = [brentq(phi, 1e-9, 1e3, args=(k,), xtol=1e-15) for k in range(10)]
    expected = [x for x in expected if x <= 20.0]
    np.testing.assert_allclose(found, expected, rtol=1e-11)
    # and they are on the grid: frequency_grid inserts every crossover
    assert np.all(np.isin(found, w))


def test_phase_crossover_at_zero_for_a_negative_dc_gain():
    L = fn.DelayTF.from_expr(-2 / (s + 1))
    assert phase_crossovers(L, np.geomspace(0.01, 100.0, 50))[0] == 0.0


def test_tail_radius_is_a_true_bound(loop):
    """|L(jw)| = k / sqrt(w^2 + a^2) < level exactly beyond sqrt((k/level)^2 - a^2); the
    rigorous radius is at least that, and |L| < level beyond it on the right half-plane."""
    level = 0.1
    R = tail_radius(loop, level)
    assert R >= math.sqrt((K / level) ** 2 - A**2)
    angles = np.linspace(-np.pi / 2, np.pi / 2, 181)
    for r in (R, 2 * R, 100 * R):
        z = r * np.exp(1j * angles)
        assert np.all(np.abs(loop(z)) < level)


def test_grid_follows_the_phase(loop):
    w = frequency_grid(loop)
    resp = loop(1j * w)
    steps = np.abs(np.angle(resp[1:] / resp[:-1]))
    assert np.max(steps) <= 0.15 + 1e-12
    # so the unwrapped phase is the closed form
    np.testing.assert_allclose(unwrapped_phase(loop, w, resp), -w * T - np.arctan(w / A), atol=1e-9)
    assert max_delay(loop) == T
    assert max_delay(fn.DelayTF.from_expr(1 / (s + 1))) == 0.0


def test_refine_grid_bisects_where_the_function_turns():
    f = lambda x: np.exp(-1j * 10 * x)  # noqa: E731  turns 10 rad per unit
    w = refine_grid(f, np.array([1.0, 2.0]), max_points=10_000)
    assert np.max(np.diff(w) * 10) <= 0.15
    assert w[0] == 1.0 and w[-1] == 2.0


def test_errors():
    with pytest.raises(AnalysisError, match="cannot use"):
        as_loop(object())
    neutral = fn.DelayTF([1.0], {0.0: [1.0, 1.0], 1.0: [2.0, 0.0]})
    with pytest.raises(AnalysisError, match="not retarded"):
        check_supported(neutral)
    with pytest.raises(AnalysisError, match="does not fall below"):
        tail_radius(fn.DelayTF.from_expr(2 * sympy.exp(-s)), 0.5)
    with pytest.raises(OptionError, match="w_range"):
        frequency_grid(fn.DelayTF.from_expr(1 / (s + 1)), (-1.0, 10.0))
