"""fluidnet.stability.nyquist: encirclement counts against closed-loop roots known
independently (quadratic formula, Lambert W), axis poles, marginal loops and errors."""

import math

import numpy as np
import pytest
import sympy
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.errors import AnalysisError, OptionError
from fluidnet.stability.nyquist import NyquistResponse, nyquist

s = fn.s


@pytest.mark.parametrize("k", [1.0, 1.5, 3.0, 10.0])
def test_rational_loop_with_one_unstable_pole(k):
    """L = k / ((s - 1)(s + 2)): P = 1, closed loop s^2 + s - 2 + k, stable iff k > 2."""
    r = nyquist(fn.DelayTF.from_expr(k / ((s - 1) * (s + 2))))
    closed = np.roots([1.0, 1.0, k - 2.0])
    Z = int(np.sum(closed.real > 0))
    assert isinstance(r, NyquistResponse)
    assert r.open_loop_rhp_poles == 1
    assert r.closed_loop_rhp_roots == Z
    assert r.encirclements == Z - 1 == r.count
    assert r.stable is (k > 2)


def _rhp_roots_lambert(a, k, T):
    """Roots right of the axis of s - a + k e^{-sT}: s = a + W_j(-k T e^{-aT}) / T."""
    z = -k * T * math.exp(-a * T)
    roots = [a + lambertw(z, j) / T for j in range(-60, 61)]
    return sum(1 for r in roots if r.real > 0)


@pytest.mark.parametrize("T", [0.2, 0.5, 0.7, 2.0, 5.0])
def test_delayed_loop_with_an_unstable_pole(T):
    """L = 2 e^{-sT} / (s - 1): stable iff T < arccos(1/2) / sqrt(3) = 0.6046 (k > a, the
    classical bound for s - a + k e^{-sT}); Z counted independently by Lambert W."""
    r = nyquist(fn.DelayTF.from_expr(2 * sympy.exp(-s * T) / (s - 1)))
    assert r.open_loop_rhp_poles == 1
    assert r.closed_loop_rhp_roots == _rhp_roots_lambert(1.0, 2.0, T)
    assert r.stable is (T < math.acos(0.5) / math.sqrt(3.0))


def test_integrator_is_indented_around():
    """L = k e^{-s} / s: a pole at 0 on the axis; stable iff k < pi/2 (Hayes)."""
    for k, stable in [(1.0, True), (2.0, False)]:
        r = nyquist(fn.DelayTF.from_expr(k * sympy.exp(-s) / s))
        np.testing.assert_allclose(r.axis_poles, [0.0], atol=1e-12)
        assert r.open_loop_rhp_poles == 0
        assert r.stable is stable
        assert r.closed_loop_rhp_roots == (0 if stable else 2)


def test_root_on_the_axis_is_marginal():
    """1 + (pi/2) e^{-s} / s vanishes at s = +-i pi/2: counts undefined, reported as -1."""
    r = nyquist(fn.DelayTF.from_expr(sympy.pi / 2 * sympy.exp(-s) / s))
    assert r.marginal and not r.stable
    assert r.encirclements == r.closed_loop_rhp_roots == -1
    assert r.min_distance < 1e-6


def test_drawn_curve_uses_the_given_frequencies():
    w = np.array([0.1, 1.0, 10.0])
    r = nyquist(fn.DelayTF.from_expr(1 / (s + 1)), w)
    np.testing.assert_array_equal(r.omega, w)
    np.testing.assert_allclose(r.response, 1 / (1j * w + 1), rtol=1e-14)
    # on the contour the stored values are L itself
    np.testing.assert_allclose(r.contour_response, 1 / (r.contour + 1), rtol=1e-10)


def test_errors():
    with pytest.raises(AnalysisError):
        nyquist(fn.DelayTF.from_expr(2 * sympy.exp(-s)))  # |L| does not decay
    with pytest.raises(OptionError, match="axis_tol"):
        nyquist(fn.DelayTF.from_expr(1 / (s + 1)), axis_tol=-1.0)
    with pytest.raises(OptionError, match="w"):
        nyquist(fn.DelayTF.from_expr(1 / (s + 1)), w="fast")
