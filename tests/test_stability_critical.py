"""critical_value: closed-form critical delays and gains, and clear errors."""

import math

import pytest
from scipy.optimize import brentq

import fluidnet as fn


def kelly_primal():
    """Kelly's primal law on one link, x' = kappa (w - x(t-T) p(x(t-T))), price p(y) = y / C.

    At the equilibrium x* = sqrt(w C) the linearization is d' = -kappa beta d(t - T) with
    beta = p(x*) + x* p'(x*) = 2 x* / C, stable iff kappa beta T < pi / 2.
    """
    x = fn.states("x")
    kappa, w, C, T = fn.params("kappa w C T")
    y = x(fn.t - T)
    return fn.Model(
        {x: kappa * (w - y * y / C)}, {kappa: 0.5, w: 2.0, C: 8.0, T: 0.1}, name="kelly_primal"
    )


def test_kelly_primal_linearization_and_critical_delay():
    m = kelly_primal()
    kappa, w, C = 0.5, 2.0, 8.0
    beta = 2 * math.sqrt(w * C) / C
    lin = m.linearize()
    assert lin.delays == (0.1,) and lin.A[0][0, 0] == pytest.approx(-kappa * beta, rel=1e-14)
    cv = fn.critical_value(m, "T", 0.1, 10.0)
    assert cv.value == pytest.approx(math.pi / (2 * kappa * beta), rel=1e-10)
    assert cv.omega == pytest.approx(kappa * beta, rel=1e-10)
    assert cv.direction == "destabilizing" and cv.bracket[0] < cv.value <= cv.bracket[1]
    # and over the gain at fixed delay: kappa* = pi / (2 beta T)
    ck = fn.critical_value(m, "kappa", 0.1, 5.0, T=1.0)
    assert ck.value == pytest.approx(math.pi / (2 * beta * 1.0), rel=1e-10)
    assert ck.frequency == pytest.approx(ck.value * beta / (2 * math.pi), rel=1e-10)


def test_rcp_critical_alphas_at_beta_03():
    w_peak = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)
    w1 = brentq(lambda x: x**2 * math.cos(x) - 0.3, 1e-9, w_peak)
    w2 = brentq(lambda x: x**2 * math.cos(x) - 0.3, w_peak, math.pi / 2)
    m = fn.models.rcp()
    d0 = 0.2
    lo = fn.critical_value(m, "alpha", 0.01, 1.0, beta=0.3, d0=d0)
    hi = fn.critical_value(m, "alpha", 1.0, 2.0, beta=0.3, d0=d0)
    assert lo.value == pytest.approx(w1 * math.sin(w1), rel=1e-10)  # 0.3427 (note 004 §2.8)
    assert hi.value == pytest.approx(w2 * math.sin(w2), rel=1e-10)  # 1.4061
    assert lo.omega * d0 == pytest.approx(w1, rel=1e-10)
    assert hi.omega * d0 == pytest.approx(w2, rel=1e-10)
    assert (lo.direction, hi.direction) == ("stabilizing", "destabilizing")


def test_sbrm_printed_loop_critical_delay_is_in_the_papers_grid_cell():
    from fluidnet.models.single_bit import sbrm_printed_linear

    # seed 002 Table 6.6.2, N = 30, c = 10 pkts/ms: d_crit = 86 ms, f_crit = 1.78 Hz on the
    # paper's 4 ms grid (the grid delay whose Nyquist curve comes closest to -1)
    cv = fn.critical_value(sbrm_printed_linear(), "d", 0.05, 0.102)
    assert abs(cv.value - 0.086) < 0.002
    assert abs(cv.frequency - 1.78) < 0.04


def test_no_crossing_is_a_clear_error():
    m = kelly_primal()
    with pytest.raises(fn.AnalysisError, match=r"no crossing .* T in \[0.1, 0.5\].*stable"):
        fn.critical_value(m, "T", 0.1, 0.5)


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (("T", 1.0, 0.5), {}, fn.OptionError, "lo < hi"),
        (("T", 0.1, math.inf), {}, fn.OptionError, "lo < hi"),
        (("T", 0.1, 1.0), {"n_scan": 0}, fn.OptionError, "n_scan"),
        (("T", 0.1, 1.0), {"T": 0.3}, fn.OptionError, "swept"),
        (("speed", 0.1, 1.0), {}, fn.ParameterError, "speed"),
    ],
)
def test_bad_arguments(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn.critical_value(kelly_primal(), *args, **kwargs)
