"""fluidnet.stability.bode: magnitude and unwrapped phase of k e^{-sT}/(s + a) and of a delayed
double integrator in closed form, and bode's errors."""

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import AnalysisError, OptionError
from fluidnet.stability.bode import BodeResponse, bode

s = fn.s
K, A, T = 3.0, 0.5, 0.8


def _first_order():
    return fn.DelayTF.from_expr(K * sympy.exp(-s * T) / (s + A))


def test_closed_form_on_given_frequencies():
    w = np.array([0.0, 0.01, 0.3, 1.0, 7.0, 40.0])
    b = bode(_first_order(), w)
    assert isinstance(b, BodeResponse)
    np.testing.assert_allclose(b.magnitude, K / np.sqrt(w**2 + A**2), rtol=1e-13)
    np.testing.assert_allclose(b.magnitude_db, 20 * np.log10(K / np.sqrt(w**2 + A**2)), rtol=1e-12)
    # the phase keeps unwinding with the delay: -w T - atan(w / a), far past -pi
    np.testing.assert_allclose(b.phase, -w * T - np.arctan(w / A), atol=1e-12)
    np.testing.assert_allclose(b.phase_deg, np.degrees(b.phase))


def test_adaptive_grid_is_dense_enough_to_unwrap():
    """On the default grid the unwrapped phase equals the closed form everywhere (a grid too
    coarse for the delay's rotation would lose multiples of 2 pi)."""
    b = bode(_first_order())
    assert np.all(np.diff(b.omega) > 0)
    assert b.omega[-1] >= 100 * max(A, 1 / T) * (1 - 1e-12)  # two decades past 1/T
    np.testing.assert_allclose(b.phase, -b.omega * T - np.arctan(b.omega / A), atol=1e-9)
    frd = b.to_frd()
    np.testing.assert_allclose(np.squeeze(frd.frdata), b.response)


def test_double_integrator_starts_at_minus_pi():
    """L = e^{-s} / s^2: magnitude 1/w^2, phase -pi - w (the asymptote's branch)."""
    w = np.geomspace(0.01, 20.0, 50)
    b = bode(fn.DelayTF.from_expr(sympy.exp(-s) / s**2), w)
    np.testing.assert_allclose(b.magnitude, 1 / w**2, rtol=1e-12)
    np.testing.assert_allclose(b.phase, -math.pi - w, atol=1e-10)


def test_range_option():
    b = bode(_first_order(), w_range=(0.1, 10.0))
    assert b.omega[0] == pytest.approx(0.1) and b.omega[-1] >= 10.0 * (1 - 1e-12)


@pytest.mark.parametrize(
    ("w", "message"), [([-1.0, 1.0], "non-negative"), ([], "non-negative"), ([1.0, np.nan], "w")]
)
def test_bad_frequencies(w, message):
    with pytest.raises(OptionError, match=message):
        bode(_first_order(), w)


def test_bad_loop():
    with pytest.raises(AnalysisError, match="cannot use"):
        bode("not a loop at all")
    with pytest.raises(OptionError, match="w_range"):
        bode(_first_order(), w_range=(10.0, 1.0))


@pytest.mark.parametrize("start", [7.0, 40.0, 1e3])
def test_phase_does_not_depend_on_where_the_grid_starts(start):
    """Issue 33: bode(L, [7, 40]) gave -0.816 and -27.275 rad for 3 e^{-0.8 s}/(s + 0.5), the
    phase unwrapped from the first frequency given; exact -0.8 w - atan(2 w)."""
    w = start * np.array([1.0, 40.0 / 7.0])
    b = bode(_first_order(), w)
    np.testing.assert_allclose(b.phase, -w * T - np.arctan(w / A), atol=1e-10)
    ranged = bode(_first_order(), w_range=(w[0], w[1]))
    exact = -ranged.omega * T - np.arctan(ranged.omega / A)
    np.testing.assert_allclose(ranged.phase, exact, atol=1e-9)


def test_issue_values_and_a_non_minimum_phase_loop():
    b = bode(_first_order(), [7.0, 40.0])
    np.testing.assert_allclose(b.phase, [-7.0995, -33.558], atol=5e-4)  # the issue's numbers
    # (1 - s) e^{-0.5 s} / (s + 1)^2: phase -atan w - 0.5 w - 2 atan w from 0 (a zero at +1)
    L = fn.DelayTF.from_expr((1 - s) * sympy.exp(-s / 2) / (s + 1) ** 2)
    w = np.array([0.0, 3.0, 9.0, 25.0])
    np.testing.assert_allclose(bode(L, w).phase, -3 * np.arctan(w) - 0.5 * w, atol=1e-10)
    # a double integrator from w = 5: the -pi branch of its asymptote, then -w
    L2 = fn.DelayTF.from_expr(sympy.exp(-s) / s**2)
    w2 = np.array([5.0, 20.0])
    np.testing.assert_allclose(bode(L2, w2).phase, -math.pi - w2, atol=1e-10)


def test_plot_into_one_panel_of_a_grid_splits_it():
    """Issue 36: the own-law tutorial's right panel stayed empty (``plot()`` opened its own
    figure); one axes of a grid now becomes the magnitude and phase axes in its place."""
    import matplotlib.pyplot as plt

    L = fn.models.rcp().loop_gain("R")
    fig, axes = plt.subplots(1, 2)
    before = plt.get_fignums()
    mag, phase = fn.bode(L).plot(ax=axes[1])
    assert plt.get_fignums() == before  # no new figure
    assert mag.figure is fig and phase.figure is fig
    assert axes[1] not in fig.axes and len(fig.axes) == 3
    # the two new axes share the right half of the figure, magnitude above phase
    left = axes[0].get_position()
    top, bottom = mag.get_position(), phase.get_position()
    assert top.x0 > left.x1 and abs(top.x0 - bottom.x0) < 1e-9 and top.y0 > bottom.y1
    assert len(mag.get_lines()) >= 1 and len(phase.get_lines()) >= 1
    mag2, phase2 = fn.bode(L).plot(ax=plt.figure())
    assert mag2.figure is phase2.figure
    with pytest.raises(fn.OptionError, match="ax must be"):
        fn.bode(L).plot(ax=3)
    plt.close("all")
