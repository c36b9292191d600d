"""TCP Reno + RED comparison model (seed 002 Ch. 6, after LPW02) against closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import fluidnet as fn
from fluidnet.models.reno import (
    red_marking,
    reno_red,
    reno_red_printed_loop_gain,
    reno_red_steady_state,
)

TH_MIN, TH_MAX, P_MAX, ALPHA = 50.0, 550.0, 0.1, 1e-4
RHO = P_MAX / (TH_MAX - TH_MIN)


def fixed_point(N, c, d):
    """Table 5.5.1 for Reno+RED: p = 2/(2 + W^2), W = c RTT/N, b = th_min + p/rho (by hand)."""

    def g(b):
        W = c * (d + b / c) / N
        return RHO * (b - TH_MIN) - 2 / (2 + W**2)

    b = optimize.brentq(g, TH_MIN, TH_MAX, xtol=1e-13)
    R = d + b / c
    return RHO * (b - TH_MIN), b, R, c * R / N


def note_red_loop_gain(s, N, c, d):
    """Note 002 §10 reference sketch of (6.5.22) with the full-RTT delay, in numpy."""
    p, b, R, cw = fixed_point(N, c, d)
    tf = R / 2
    return (
        N / (R * p * (R * s + p * cw)) * ALPHA * c * RHO / (s + ALPHA * c)
        / (s + (N / c) * cw / R**2 * np.exp(-tf * s)) * np.exp(-R * s)
    )  # fmt: skip


@pytest.mark.parametrize("N, c, d", [(30, 10_000.0, 0.062), (60, 8_000.0, 0.05), (20, 15e3, 0.1)])
def test_equilibrium_is_the_table_5_5_1_fixed_point(N, c, d):
    p, b, R, W = fixed_point(N, c, d)
    eq = reno_red(N=N, c=c, d=d).equilibrium()
    assert eq["b"] == pytest.approx(b, rel=1e-8)
    assert eq["r"] == pytest.approx(b, rel=1e-8)
    assert eq["W"] == pytest.approx(W, rel=1e-8)
    assert 2 / (2 + eq["W"] ** 2) == pytest.approx(p, rel=1e-7)
    ss = reno_red_steady_state(N, c, d)
    assert ss["b"] == pytest.approx(b, rel=1e-10)


def test_note_numbers():
    ss = reno_red_steady_state(30, 10_000.0, 0.062)
    assert round(ss["p"], 5) == 0.00378
    assert round(ss["b"], 1) == 68.9
    assert round(ss["W"], 2) == 22.96


def test_loop_gain_cut_at_p_is_6_5_22_with_rtt_delay():
    s = 1j * np.logspace(-1, 2, 25)
    for N, c, d in ((30, 10_000.0, 0.062), (50, 12_000.0, 0.09)):
        ref = note_red_loop_gain(s, N, c, d)
        np.testing.assert_allclose(reno_red(N=N, c=c, d=d).loop_gain("p")(s), ref, rtol=1e-7)
        np.testing.assert_allclose(reno_red_printed_loop_gain(N, c, d)(s), ref, rtol=1e-9)


def test_printed_delay_variant_differs_by_the_missing_delay():
    s = 1j * np.array([0.5, 3.0])
    R = reno_red_steady_state(30, 1e4, 0.062)["rtt"]
    full = reno_red_printed_loop_gain(30, 1e4, 0.062)(s)
    printed = reno_red_printed_loop_gain(30, 1e4, 0.062, delay="printed")(s)
    np.testing.assert_allclose(printed * np.exp(-s * R / 2), full, rtol=1e-12)


def test_critical_delay_matches_note():
    cv = fn.critical_value(reno_red(N=30, c=10_000.0), "d", 0.055, 0.07)
    assert 1e3 * cv.value == pytest.approx(61.6, abs=0.05)
    assert cv.frequency == pytest.approx(0.74, abs=0.005)


def test_red_marking_regions():
    for r, gentle, expected in (
        (40.0, True, 0.0),
        (300.0, True, RHO * 250.0),
        (800.0, True, P_MAX + (1 - P_MAX) * 250.0 / 550.0),
        (1200.0, True, 1.0),
        (600.0, False, 1.0),
        (300.0, False, RHO * 250.0),
    ):
        assert float(red_marking(r, TH_MIN, TH_MAX, P_MAX, gentle)) == pytest.approx(expected)


def test_errors():
    with pytest.raises(fn.ParameterError, match="th_max"):
        reno_red(th_min=600.0)
    with pytest.raises(fn.ParameterError, match="th_max"):
        reno_red_steady_state(30, 1e4, 0.05, th_max=40.0)
    with pytest.raises(fn.AnalysisError, match="p_max"):
        reno_red_steady_state(500, 1000.0, 0.01)
    with pytest.raises(fn.ParameterError, match="delay"):
        reno_red_printed_loop_gain(30, 1e4, 0.05, delay="half")
    with pytest.raises(fn.ParameterError, match="alpha"):
        reno_red_printed_loop_gain(30, 1e4, 0.05, alpha=2.0)


def test_library_function_survives_importing_its_module():
    import importlib

    importlib.import_module("fluidnet.models.reno")
    assert fn.models.reno_red(N=12).values["N"] == 12.0
    assert fn.models.reno_red(gentle=False).name == "reno_red_plain"
