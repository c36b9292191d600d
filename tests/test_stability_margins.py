"""Margins of undamped loops (fluidnet.stability.margins), against their closed forms.

For ``L(jw)`` real at every frequency the Nyquist curve runs along the real axis: phase
crossovers fill intervals instead of being isolated points, and the closed loop
``D(s) + k N(s)`` is even in ``s``. The closed forms below follow from ``L(jw)`` by hand.
"""

from __future__ import annotations

import math

import control
import numpy as np
import pytest

import fluidnet as fn
from fluidnet.linear.roots import count_rhp_roots


def test_undamped_unit_loop():
    # L = 1/(s^2 + 1): L(jw) = 1/(1 - w^2) < 0 for every w > 1, and = -1 at w = sqrt(2)
    m = fn.margins(control.tf([1.0], [1.0, 0.0, 1.0]))
    r2 = math.sqrt(2.0)
    np.testing.assert_allclose(m.phase_crossovers, [r2], rtol=1e-12)  # one, not one per grid point
    np.testing.assert_allclose(m.gain_crossovers, [r2], rtol=1e-12)
    np.testing.assert_allclose(m.phase_crossover_intervals, [[1.0, np.inf]], rtol=1e-12)
    assert m.gain_margin == pytest.approx(1.0, rel=1e-12)
    assert m.phase_margin == pytest.approx(0.0, abs=1e-9)
    assert m.delay_margin == pytest.approx(0.0, abs=1e-9)
    assert m.stability_margin == 0.0 and m.stability_margin_frequency == pytest.approx(r2)
    assert "undamped" in m.note
    # the closed loop s^2 + 2 has its poles at +-j sqrt(2), the crossover
    np.testing.assert_allclose(sorted(np.roots([1.0, 0.0, 2.0]).imag), [-r2, r2], rtol=1e-12)


def test_undamped_loop_with_two_gain_crossovers():
    # L = 0.1/(s^2 + 1): |L| = 1 at w^2 = 0.9 (L = +1) and w^2 = 1.1 (L = -1)
    m = fn.margins(control.tf([0.1], [1.0, 0.0, 1.0]))
    w1, w2 = math.sqrt(0.9), math.sqrt(1.1)
    np.testing.assert_allclose(m.gain_crossovers, [w1, w2], rtol=1e-12)
    # at L = +1 a half turn is needed: +180 degrees, a delay pi/w1 (not -180 and -3.31 s)
    np.testing.assert_allclose(m.phase_margins, [180.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(m.delay_margins, [math.pi / w1, 0.0], rtol=1e-12, atol=1e-9)
    assert m.delay_margin == pytest.approx(0.0, abs=1e-9)
    assert m.phase_margin == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(m.phase_crossovers, [w2], rtol=1e-12)
    assert m.gain_margin == pytest.approx(1.0, rel=1e-12)


def test_undamped_loop_with_two_negative_intervals():
    # L = -(s^2 + 1)/(2 (s^2 + 4)): L(jw) = -(1 - w^2)/(2 (4 - w^2)) is negative on [0, 1]
    # (|L| largest at w = 0: 1/8) and on (2, inf) (from -inf to -1/2, through -1 at w^2 = 7)
    m = fn.margins(control.tf([-0.5, 0.0, -0.5], [1.0, 0.0, 4.0]))
    np.testing.assert_allclose(m.phase_crossover_intervals, [[0.0, 1.0], [2.0, np.inf]], atol=1e-12)
    np.testing.assert_allclose(m.phase_crossovers, [0.0, math.sqrt(7.0)], atol=1e-12)
    np.testing.assert_allclose(m.gain_margins, [8.0, 1.0], rtol=1e-12)
    assert m.gain_margin == pytest.approx(1.0, rel=1e-12)
    # |L| = 1 also at w^2 = 3, where L = +1
    np.testing.assert_allclose(m.gain_crossovers, [math.sqrt(3.0), math.sqrt(7.0)], rtol=1e-12)
    np.testing.assert_allclose(m.phase_margins, [180.0, 0.0], atol=1e-9)


def test_constant_negative_loop():
    # L = -1/2 at every frequency: the gain can double before 1 + kL vanishes
    m = fn.margins(fn.DelayTF(-0.5))
    assert m.gain_margin == pytest.approx(2.0, rel=1e-15)
    assert m.phase_crossovers.size == 1
    assert math.isinf(m.phase_margin)


def test_damped_loop_is_not_flagged():
    m = fn.margins(control.tf([2.0], [1.0, 1.0, 0.0]))
    assert m.note == "" and m.phase_crossover_intervals.shape == (0, 2)


# ------------------------------------------------------------- the closed loop's stability
def test_margins_of_an_unstable_loop_say_it_is_unstable():
    """Issue 23, item 6: L = K e^{-sT} / (s (s + a)), K = 30, T = 2, a = 0.3, by hand.

    |L(jw)| = K / (w sqrt(w^2 + a^2)) falls strictly, so there is one gain crossover, w^2 =
    (-a^2 + sqrt(a^4 + 4 K^2)) / 2. The delay-free loop (closed loop s^2 + a s + K, stable)
    has phase margin pm0 = pi/2 - atan(w/a); a delay T puts a pair of closed-loop roots on the
    axis at T_j = (pm0 + 2 pi j) / w, and since |L| falls there each pair crosses into the
    right half-plane as T grows. T_0 = 0.0100 s and T_1 = 1.158 s are below T = 2: 4 roots are
    unstable. The margins keep their definitions: the phase margin is pm0 - w T modulo 2 pi
    (96 deg) and the delay margin T_2 - T = 0.306 s, the delay that brings the next pair."""
    K, T, a = 30.0, 2.0, 0.3
    w = math.sqrt((-(a**2) + math.sqrt(a**4 + 4 * K**2)) / 2)
    pm0 = math.pi / 2 - math.atan(w / a)
    crossings = [(pm0 + 2 * math.pi * j) / w for j in range(4)]
    assert crossings[1] < T < crossings[2]
    L = fn.DelayTF({T: [K]}, [1.0, a, 0.0])
    m = fn.margins(L)
    assert m.gain_crossover == pytest.approx(w, rel=1e-12)
    pm = math.degrees(math.remainder(pm0 - w * T, 2 * math.pi))
    assert m.phase_margin == pytest.approx(pm, abs=1e-9) and 95.9 < pm < 96.0
    assert m.delay_margin == pytest.approx(crossings[2] - T, rel=1e-10)
    assert m.closed_loop_stable is False
    assert m.closed_loop_rhp_roots == 4 and m.open_loop_rhp_poles == 0
    assert "UNSTABLE: 4 roots in the right half-plane" in repr(m)
    # a second method: the roots of s^2 + a s + K e^{-sT}
    char = fn.QuasiPolynomial({0.0: [1.0, a, 0.0], T: [K]}).companion()
    assert count_rhp_roots(char) == 4
    # below T_0 the same loop is stable, and its margins are robustness margins
    stable = fn.margins(fn.DelayTF({0.005: [K]}, [1.0, a, 0.0]))
    assert stable.closed_loop_stable is True and stable.closed_loop_rhp_roots == 0
    assert stable.delay_margin == pytest.approx(crossings[0] - 0.005, rel=1e-9)
    assert repr(stable).startswith("Margins(closed loop stable, ")


def test_margins_of_a_loop_stabilizing_an_unstable_plant():
    # RCP's G1 (Dukkipati & McKeown, Sec IV-D) with beta = 0.3, d0 = 1: two open-loop poles in
    # the right half-plane (s^2 + 0.3 e^{-s}: 0.1267 +- 0.4982j), encircled twice
    # counterclockwise at alpha = 0.8, so the closed loop is stable
    s, e = fn.s, fn.sympy.exp
    G1 = fn.DelayTF.from_expr(s * e(-s) / (s**2 + 0.3 * e(-s)))
    m = fn.margins(0.8 * G1)
    assert m.open_loop_rhp_poles == 2 and m.closed_loop_rhp_roots == 0
    assert m.closed_loop_stable is True


def test_margins_say_when_the_closed_loop_is_not_analysed():
    # |L| = 1/2 at every frequency: Nyquist's count needs |L| < 1/2 far out; the margins stand
    m = fn.margins(fn.DelayTF(-0.5))
    assert m.closed_loop_stable is None and m.closed_loop_rhp_roots is None
    assert "not determined" in m.closed_loop_note and "not determined" in repr(m)
    assert m.gain_margin == pytest.approx(2.0, rel=1e-15)
