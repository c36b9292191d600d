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
