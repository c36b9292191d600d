"""Bode, Nyquist and margins with exact delays, against closed forms and python-control."""

import math

import control
import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn

s, exp = fn.s, fn.sympy.exp


def _delayed_integrator(k, tau):
    return fn.DelayTF.from_expr(k * exp(-tau * s) / s)


# ---------------------------------------------------------------------- rational: python-control
RATIONAL = [
    control.tf([2.0, 1.0], [1, 3, 3, 1, 0.0]) * control.tf([1], [1, 0.5]),
    control.tf([4.0], [1, 2, 1]) * control.tf([1, 0.2], [1, 0.01]),
    control.tf([0.5, 3.0, 1.0], [1, 1.2, 2.5, 1.1]),
]


@pytest.mark.parametrize("sys", RATIONAL)
def test_rational_margins_equal_python_control(sys):
    ours = fn.margins(sys).as_control()
    theirs = control.stability_margins(sys)
    for a, b in zip(ours, theirs, strict=True):
        if math.isinf(b) or math.isnan(b):
            assert (math.isinf(a) and math.isinf(b)) or (math.isnan(a) and math.isnan(b))
        else:
            assert a == pytest.approx(float(b), rel=1e-6, abs=1e-9)
    # all crossovers too
    gm, pm, _, wpc, wgc, _ = control.stability_margins(sys, returnall=True)
    m = fn.margins(sys)
    np.testing.assert_allclose(np.sort(m.gain_crossovers), np.sort(wgc), rtol=1e-6)
    np.testing.assert_allclose(np.sort(m.phase_crossovers), np.sort(wpc), rtol=1e-6)


@pytest.mark.parametrize("sys", RATIONAL)
def test_rational_nyquist_count_matches_closed_loop_roots(sys):
    num, den = sys.num[0][0], sys.den[0][0]
    closed = np.roots(np.polyadd(den, num))
    r = fn.nyquist(sys)
    assert r.closed_loop_rhp_roots == int(np.sum(closed.real > 0))
    assert r.stable == bool(np.all(closed.real < 0))


def test_unstable_open_loop_needs_counter_clockwise_encirclements():
    # L = 3 / (s - 1): P = 1, closed loop s + 2 is stable, so N = -1
    r = fn.nyquist(control.tf([3.0], [1.0, -1.0]))
    assert (r.open_loop_rhp_poles, r.encirclements, r.closed_loop_rhp_roots) == (1, -1, 0)
    assert r.stable


# ---------------------------------------------------------------------- e^{-s tau} k / s
@pytest.mark.parametrize("k, tau", [(1.0, 0.5), (2.0, 0.1), (0.3, 2.0), (1.0, 2.0)])
def test_delayed_integrator_closed_form_margins(k, tau):
    m = fn.margins(_delayed_integrator(k, tau))
    assert m.gain_crossover == pytest.approx(k, rel=1e-12)
    assert m.phase_margin == pytest.approx(math.degrees(math.pi / 2 - k * tau), rel=1e-9, abs=1e-9)
    assert m.delay_margin == pytest.approx(math.pi / (2 * k) - tau, rel=1e-9, abs=1e-12)
    # first phase crossover at w tau = pi/2 with |L| = 2 k tau / pi
    assert m.phase_crossovers[0] == pytest.approx(math.pi / (2 * tau), rel=1e-12)
    assert m.gain_margin == pytest.approx(math.pi / (2 * k * tau), rel=1e-9)
    stable = k * tau < math.pi / 2
    r = fn.nyquist(_delayed_integrator(k, tau))
    assert r.stable == stable
    # the characteristic roots of s + k e^{-s tau} agree (a negative margin has a RHP root)
    assert fn.LinearDDE(0.0, [(tau, -k)]).is_stable() == stable
    assert r.closed_loop_rhp_roots == (0 if stable else 2)


def test_exactly_marginal_loop_is_flagged():
    r = fn.nyquist(_delayed_integrator(1.0, math.pi / 2))
    assert r.marginal and not r.stable and r.encirclements == -1


# ---------------------------------------------------------------------- RCP (seed 004)
def _exact_alpha_interval(beta):
    """Stable alpha interval at beta from the boundary alpha = w sin w, beta = w^2 cos w.

    beta(w) = w^2 cos w rises to its maximum and falls back to 0 on (0, pi/2): the two
    solutions w1 < w2 give the two ends alpha = w sin w (note 004 §2.8).
    """
    w_max = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)
    w1 = brentq(lambda x: x**2 * math.cos(x) - beta, 1e-9, w_max)
    w2 = brentq(lambda x: x**2 * math.cos(x) - beta, w_max, math.pi / 2)
    return w1 * math.sin(w1), w2 * math.sin(w2)


def test_rcp_g1_has_two_rhp_poles_and_the_exact_alpha_interval():
    beta, d0 = 0.3, 0.2
    G1 = fn.DelayTF.from_expr(d0 * s * exp(-s * d0) / (d0**2 * s**2 + beta * exp(-s * d0)))
    a_lo, a_hi = _exact_alpha_interval(beta)
    assert (round(a_lo, 4), round(a_hi, 4)) == (0.3427, 1.4061)  # note 004 §2.8
    # the negative-real-axis crossings of G1 are -1/alpha at the interval ends
    m = fn.margins(G1)
    crossings = np.sort(G1(1j * m.phase_crossovers).real)
    assert crossings[0] == pytest.approx(-1 / a_lo, rel=1e-9)
    assert crossings[1] == pytest.approx(-1 / a_hi, rel=1e-9)
    for alpha, stable in [
        (a_lo * 0.99, False),
        (a_lo * 1.01, True),
        (1.0, True),
        (a_hi * 0.99, True),
        (a_hi * 1.01, False),
    ]:
        r = fn.nyquist(alpha * G1)
        assert r.open_loop_rhp_poles == 2  # seed 004 Sec IV-D: P = 2 at beta = 0.3
        assert r.stable == stable, alpha
        if stable:
            assert r.encirclements == -2


def test_rcp_bode_is_eq_10():
    alpha, beta, d0 = 0.4, 0.2, 0.2
    L = fn.models.rcp().loop_gain("R", alpha=alpha, beta=beta, d0=d0)
    b = fn.bode(L)
    w = b.omega
    mag = np.sqrt(beta**2 + (w * d0 * alpha) ** 2) / (w * d0) ** 2
    phase = -w * d0 + np.arctan(w * alpha * d0 / beta) - np.pi
    np.testing.assert_allclose(b.magnitude, mag, rtol=1e-12)
    np.testing.assert_allclose(b.phase, phase, rtol=0, atol=1e-9)
    assert np.max(np.diff(b.phase)) < 0.2 and np.max(-np.diff(b.phase)) < 0.2
    # eq (12): the gain crossover
    m = fn.margins(L)
    wz = math.sqrt((alpha**2 + math.sqrt(alpha**4 + 4 * beta**2)) / 2) / d0
    assert m.gain_crossover == pytest.approx(wz, rel=1e-12)


@pytest.mark.parametrize(
    "alpha, beta", [(0.4, 0.2), (1.2, 0.3), (1.5, 0.3), (0.2, 0.4), (0.9, 0.5)]
)
def test_rcp_margins_agree_with_characteristic_roots(alpha, beta):
    m = fn.models.rcp()
    L = m.loop_gain("R", alpha=alpha, beta=beta)
    stable = m.linearize(alpha=alpha, beta=beta).is_stable()
    assert (fn.margins(L).phase_margin > 0) == stable
    r = fn.nyquist(L)
    assert r.open_loop_rhp_poles == 0 and list(r.axis_poles) == [0.0]
    assert r.stable == stable


# ---------------------------------------------------------------------- inputs and errors
def test_accepts_sympy_and_control_inputs():
    expr = 2 / (s * (s + 1))
    m1 = fn.margins(expr)
    m2 = fn.margins(control.tf([2.0], [1.0, 1.0, 0.0]))
    assert m1.phase_margin == pytest.approx(m2.phase_margin, rel=1e-12)
    r = fn.nyquist(expr)
    assert r.stable and list(r.axis_poles) == [0.0] and r.count == 0


def test_bad_inputs():
    with pytest.raises(fn.AnalysisError, match="high frequency"):
        fn.nyquist(fn.DelayTF.from_expr(2 * exp(-s)))
    with pytest.raises(fn.AnalysisError, match="retarded"):
        fn.nyquist(fn.DelayTF([1.0], {0.0: [1.0, 1.0], 1.0: [1.0, 0.0]}))
    with pytest.raises(fn.AnalysisError, match="loop transfer function"):
        fn.margins("not a system at all ((")
    with pytest.raises(fn.OptionError, match="w must"):
        fn.bode(control.tf([1.0], [1.0, 1.0]), w=[-1.0, 1.0])
    with pytest.raises(fn.OptionError, match="w_range"):
        fn.margins(control.tf([1.0], [1.0, 1.0]), w_range=(2.0, 1.0))


def test_no_crossover_gives_infinite_margins():
    m = fn.margins(control.tf([0.5], [1.0, 1.0]))
    assert math.isinf(m.gain_margin) and math.isinf(m.phase_margin) and math.isinf(m.delay_margin)


def test_plots_draw():
    L = fn.models.rcp().loop_gain("R")
    axes = fn.bode(L).plot()
    assert len(axes[0].lines) >= 1
    ax = fn.nyquist(L).plot()
    assert "N = 0" in ax.get_title()
    frd = fn.bode(L).to_frd()
    assert isinstance(frd, control.FrequencyResponseData)


@pytest.mark.parametrize("num", [[1.0, 0.5], [1.0]])
def test_poles_on_the_imaginary_axis_are_indented(num):
    # L = num / ((s^2 + 1)(s + 2)): open-loop poles at +-j; Routh: num = s + 0.5 is stable,
    # num = 1 gives s^3 + 2 s^2 + s + 3 with two right-half-plane roots
    den = [1.0, 2.0, 1.0, 2.0]
    r = fn.nyquist(control.tf(num, den))
    assert sorted(r.axis_poles) == [-1.0, 1.0] and r.open_loop_rhp_poles == 0
    closed = np.roots(np.polyadd(den, num))
    assert r.closed_loop_rhp_roots == int(np.sum(closed.real > 0))


def test_pade_round_trip_through_python_control():
    # a high-order Pade approximation of the delay reproduces the exact-delay margins
    L = _delayed_integrator(1.0, 0.3)
    exact = fn.margins(L)
    approx = control.stability_margins(L.to_control(pade=10))
    assert approx[1] == pytest.approx(exact.phase_margin, rel=1e-9)  # (PM, as control orders)
    assert approx[4] == pytest.approx(exact.gain_crossover, rel=1e-9)
    assert approx[0] == pytest.approx(exact.gain_margin, rel=1e-6)
