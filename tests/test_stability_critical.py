"""critical_value and stability_switches: closed-form critical delays and gains, every switch of
a delayed oscillator, the Hayes equation, certificates and clear errors.

Every reference value is derived here from a closed form, not from fluidnet."""

import math
import warnings

import numpy as np
import pytest
from delay_oscillator import oscillator, oscillator_crossings
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
    assert cv.direction == "destabilizing" and cv.bracket[0] < cv.value < cv.bracket[1]
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


def cooke_grossman(zeta=0.1, K=0.25):
    """x'' + 2 zeta x' + x = -K x(t - tau) (Cooke and Grossman 1982) as a first-order model."""
    x1, x2 = fn.states("x1 x2")
    z, k, tau = fn.params("zeta K tau")
    return fn.Model(
        {x1: x2(fn.t), x2: -x1(fn.t) - 2 * z * x2(fn.t) - k * x1(fn.t - tau)},
        {z: zeta, k: K, tau: 1.0},
    )


def cooke_grossman_crossings(zeta, K, hi):
    """Every crossing in (0, hi] from the closed form, with the change of the RHP count.

    At s = j w: |1 - w^2 + 2j zeta w| = K, i.e. u = w^2 solves u^2 + (4 zeta^2 - 2) u + 1 - K^2 = 0;
    the phase gives exp(-j w tau) = -(1 - w^2 + 2j zeta w) / K, tau_k = (theta + 2 pi k) / w. The
    direction is the sign of F'(u), F(u) = (1 - u)^2 + 4 zeta^2 u - K^2 (Cooke and van den
    Driessche 1986): +2 roots at the larger frequency, -2 at the smaller.
    """
    disc = (4 * zeta**2 - 2) ** 2 - 4 * (1 - K**2)
    out = []
    for sign in (+1, -1):
        u = ((2 - 4 * zeta**2) + sign * math.sqrt(disc)) / 2
        w = math.sqrt(u)
        change = 2 if 2 * (u - 1) + 4 * zeta**2 > 0 else -2
        theta = (-np.angle(-(1 - u + 2j * zeta * w) / K)) % (2 * math.pi)
        k = 0
        while (theta + 2 * math.pi * k) / w <= hi:
            out.append(((theta + 2 * math.pi * k) / w, w, change))
            k += 1
    return sorted(out)


def test_cooke_grossman_first_switch_by_default():
    # the example of issue 13: two crossings 1.6 apart, 12.77 was reported by a coarse scan
    cv = fn.critical_value(cooke_grossman(), "tau", 0.0, 80.0)
    ref = cooke_grossman_crossings(0.1, 0.25, 80.0)[0]
    assert cv.value == pytest.approx(0.956825894623, abs=5e-13)
    assert cv.value == pytest.approx(ref[0], rel=1e-12)
    assert cv.omega == pytest.approx(ref[1], rel=1e-12)
    assert (cv.direction, cv.count_before, cv.count_after) == ("destabilizing", 0, 2)
    assert cv.method == "delay"
    # certificate: counts computed in full on both sides of the crossing
    assert cv.bracket[0] < cv.value < cv.bracket[1]
    assert (cv.bracket[0], 0) in cv.checks and (cv.bracket[1], 2) in cv.checks
    assert fn.models is not None and cooke_grossman().linearize(tau=0.95).is_stable()
    assert not cooke_grossman().linearize(tau=0.96).is_stable()


def test_cooke_grossman_every_switch_on_0_80():
    sw = fn.stability_switches(cooke_grossman(), "tau", 0.0, 80.0)
    ref = cooke_grossman_crossings(0.1, 0.25, 80.0)
    assert len(sw.crossings) == len(ref) == 26
    for c, (tau, w, change) in zip(sw.crossings, ref, strict=True):
        assert c.value == pytest.approx(tau, rel=1e-12)
        assert c.omega == pytest.approx(w, rel=1e-12)
        assert c.change == change
    # the count as a step function, and the switches where it leaves or reaches 0
    counts = np.cumsum([0] + [r[2] for r in ref])
    assert [c.count_after for c in sw.crossings] == list(counts[1:])
    switch_ref = [
        r[0] for r, a, b in zip(ref, counts[:-1], counts[1:], strict=True) if (a == 0) != (b == 0)
    ]
    assert len(sw.switches) == len(switch_ref) == 11
    assert sw.values == pytest.approx(switch_ref, rel=1e-12)
    assert sw.count(1.0) == 2 and sw.count(5.0) == 0 and sw.count(79.0) == 4
    assert len(sw.stable_intervals()) == 6 and sw.stable_intervals()[0] == (0.0, sw.values[0])
    # certified: the full count between every pair of consecutive crossings
    assert len(sw.checks) == len(sw.crossings) + 1
    for value, n in sw.checks:
        assert n == sw.count(value)
    ds = sw.to_xarray()
    assert ds.sizes["crossing"] == 26 and int(ds["is_switch"].sum()) == 11


def test_cooke_grossman_by_continuation_agrees_with_the_closed_form():
    # the same switches when the roots are followed instead of computed from the delay
    sw = fn.stability_switches(cooke_grossman(), "tau", 0.0, 20.0, method="continuation")
    ref = cooke_grossman_crossings(0.1, 0.25, 20.0)
    assert sw.method == "continuation"
    assert [c.value for c in sw.crossings] == pytest.approx([r[0] for r in ref], rel=1e-10)
    assert [c.change for c in sw.crossings] == [r[2] for r in ref]


def hayes(a=0.9):
    x = fn.states("x")
    A, B = fn.params("a b")
    return fn.Model({x: A * x(fn.t) + B * x(fn.t - 1)}, {A: a, B: -1.0})


def test_hayes_boundary_in_b():
    # x' = a x + b x(t-1), a = 0.9 < 1: stable iff -w/sin(w) < b < -a, with w in (0, pi) solving
    # w cot(w) = a (roots j w: a + b cos w = 0, w + b sin w = 0); b = -a is a real root at 0
    a = 0.9
    w = brentq(lambda v: v / math.tan(v) - a, 1e-6, math.pi - 1e-6)
    b_low = -w / math.sin(w)
    assert b_low == pytest.approx(-a / math.cos(w), rel=1e-14)
    h = hayes(a)
    cv = fn.critical_value(h, "b", -4.0, 0.6)  # raised "not stable at all 17 points" before
    assert cv.value == pytest.approx(b_low, rel=1e-12)
    assert cv.omega == pytest.approx(w, rel=1e-10)
    assert (cv.direction, cv.count_before, cv.count_after) == ("stabilizing", 2, 0)
    assert cv.method == "continuation"
    sw = fn.stability_switches(h, "b", -4.0, 0.6)
    assert [c.value for c in sw.switches] == pytest.approx([b_low, -a], rel=1e-12)
    assert [c.change for c in sw.crossings] == [-2, 1]
    assert sw.crossings[1].omega == pytest.approx(0.0, abs=1e-12)
    assert sw.stable_intervals() == [(pytest.approx(b_low), pytest.approx(-a))]


def test_a_gain_that_vanishes_crosses_at_zero():
    """x' = b x(t - 1) (Hayes with a = 0; issue 33): lambda = W_k(b), Lambert W. Stable for
    -pi/2 < b < 0; the real root W_0(b) ~ b crosses 0 transversally at b = 0 while the second
    real root W_-1(b) leaves for -infinity. From b = -1.5 the first switch is b = 0 (omega 0,
    0 -> 1 roots); main failed there with 'a real root reaches 0 and stays there'."""
    from scipy.special import lambertw

    x = fn.states("x")
    b = fn.params("b")
    m = fn.Model({x: b * x(fn.t - 1)}, {b: -0.5}, name="scalar")
    with warnings.catch_warnings():  # b = 0 itself: every x is an equilibrium (true, warned)
        warnings.simplefilter("ignore", fn.EquilibriumWarning)
        cv = fn.critical_value(m, "b", -1.5, 1.5)
        sw = fn.stability_switches(m, "b", -3.0, 1.5)
        at_end = fn.stability_switches(m, "b", -1.5, 0.0)
    assert cv.value == pytest.approx(0.0, abs=1e-12) and cv.omega == pytest.approx(0.0, abs=1e-12)
    assert (cv.direction, cv.count_before, cv.count_after) == ("destabilizing", 0, 1)
    # W_k(b) is on the imaginary axis at b = -pi/2 (lambda = +- j pi/2) and at b = 0 (lambda = 0)
    assert lambertw(-math.pi / 2, 0) == pytest.approx(1j * math.pi / 2, abs=1e-14)
    assert [c.value for c in sw.crossings] == pytest.approx([-math.pi / 2, 0.0], abs=1e-12)
    assert [c.change for c in sw.crossings] == [-2, 1]
    ((lo, hi),) = sw.stable_intervals()
    assert sw.count_lo == 2 and (lo, hi) == (
        pytest.approx(-math.pi / 2),
        pytest.approx(0, abs=1e-12),
    )
    assert [c.value for c in at_end.crossings] == [0.0]  # a range ending on the crossing
    # the unstable root past the switch is W_0(b) > 0
    r = m.linearize(params={"b": 0.5}).roots(k=1)
    assert r[0].value == pytest.approx(complex(lambertw(0.5, 0)), abs=1e-12)


def test_two_delays_scaled_by_one_parameter():
    # x' = -x(t - tau) - 0.5 x(t - 2 tau): z = exp(-j w tau) on the unit circle solves
    # 0.5 z^2 + z + j w = 0; |z(w)| = 1 at the crossing frequency (found here by bisection)
    def unit_root(w):
        z = np.roots([0.5, 1.0, 1j * w])
        return z[np.argmin(np.abs(np.abs(z) - 1))]

    w0 = brentq(lambda w: abs(unit_root(w)) - 1, 0.1, 3.0)
    tau0 = ((-np.angle(unit_root(w0))) % (2 * math.pi)) / w0
    x = fn.states("x")
    tau = fn.params("tau")
    m = fn.Model({x: -x(fn.t - tau) - 0.5 * x(fn.t - 2 * tau)}, {tau: 0.1})
    exact = fn.critical_value(m, "tau", 0.01, 3.0)
    follow = fn.critical_value(m, "tau", 0.01, 3.0, method="continuation")
    assert exact.method == "delay" and follow.method == "continuation"
    assert exact.value == pytest.approx(tau0, rel=1e-10)
    assert follow.value == pytest.approx(tau0, rel=1e-10)
    assert exact.omega == pytest.approx(w0, rel=1e-10)


def test_critical_values_over_parameter_arrays():
    Ks = [0.2, 0.25, 0.3]
    ds = fn.critical_value(cooke_grossman(), "tau", 0.0, 10.0, grid={"K": Ks}, params={"zeta": 0.1})
    assert ds["value"].dims == ("K",)
    for K, v, w in zip(Ks, ds["value"].values, ds["omega"].values, strict=True):
        tau, omega, _ = cooke_grossman_crossings(0.1, K, 10.0)[0]
        assert v == pytest.approx(tau, rel=1e-12) and w == pytest.approx(omega, rel=1e-12)
    assert ds["destabilizing"].values.all() and (ds["error"] == "").all()


def test_no_switch_is_a_clear_error():
    m = kelly_primal()
    with pytest.raises(fn.AnalysisError, match=r"no stability switch of T in \[0.1, 0.5\].*stable"):
        fn.critical_value(m, "T", 0.1, 0.5)
    # unstable throughout: the message says so, and what was checked
    with pytest.raises(fn.AnalysisError, match=r"unstable on the whole interval.*counted in full"):
        fn.critical_value(cooke_grossman(), "tau", 31.0, 35.0)


def test_root_at_zero_for_every_delay_is_an_error():
    x = fn.states("x")
    tau = fn.params("tau")
    m = fn.Model({x: -x(fn.t) + x(fn.t - tau)}, {tau: 1.0})  # det(A0 + A1) = 0
    with pytest.raises(fn.AnalysisError, match="root at 0 for every value"):
        fn.critical_value(m, "tau", 0.1, 5.0)


def test_method_delay_refuses_a_gain():
    with pytest.raises(fn.AnalysisError, match="method='delay' needs b"):
        fn.critical_value(hayes(), "b", -4.0, 0.6, method="delay")


def test_plot_is_the_count_as_a_step_function():
    import matplotlib

    matplotlib.use("Agg")
    sw = fn.stability_switches(cooke_grossman(), "tau", 0.0, 10.0)
    ax = sw.plot()
    assert ax.get_xlabel() == "tau" and "switches" in ax.get_title()


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (("T", 1.0, 0.5), {}, fn.OptionError, "lo < hi"),
        (("T", 0.1, math.inf), {}, fn.OptionError, "lo < hi"),
        (("T", 0.1, 1.0), {"n_scan": 8}, fn.ParameterError, "n_scan"),
        (("T", 0.1, 1.0), {"T": 0.3}, fn.OptionError, "swept"),
        (("T", 0.1, 1.0), {"params": {"T": 0.3}}, fn.OptionError, "swept"),
        (("T", 0.1, 1.0), {"params": {"w": 1.0}, "w": 2.0}, fn.OptionError, "both"),
        (("T", 0.1, 1.0), {"method": "scan"}, fn.OptionError, "method"),
        (("speed", 0.1, 1.0), {}, fn.ParameterError, "speed"),
    ],
)
def test_bad_arguments(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn.critical_value(kelly_primal(), *args, **kwargs)


# ----------------------------------------------------------------- ranges starting at a switch
# issue 23: started 1e-7 past the switch at 18.6786, critical_value said "could not be
# certified" and leaked numpy overflow warnings (the root that had just crossed, at Re 7.6e-10,
# was taken for one on the axis and left out of the count at lo)


def _next_switches(lo, hi):
    """The closed-form crossings in (lo, hi] and the closed-form count at lo."""
    ref = cooke_grossman_crossings(0.1, 0.25, 80.0)
    count_lo = sum(change for tau, _, change in ref if tau <= lo)
    return [r for r in ref if lo < r[0] <= hi], count_lo


@pytest.mark.parametrize("method", ["delay", "continuation"])
def test_a_range_starting_just_past_a_switch(method):
    import warnings

    switch = cooke_grossman_crossings(0.1, 0.25, 80.0)[6]  # 0 -> 2 at tau = 18.6785903064
    assert switch[0] == pytest.approx(18.6785903064, abs=1e-10) and switch[2] == 2
    lo = 18.6785904  # 9.4e-8 past it: unstable at lo (two roots at Re = +7.6e-10)
    ahead, count_lo = _next_switches(lo, 80.0)
    assert count_lo == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warnings either
        cv = fn.critical_value(cooke_grossman(), "tau", lo, 80.0, method=method)
    # the first switch in the range is the stabilizing one at the smaller frequency
    assert cv.value == pytest.approx(ahead[0][0], rel=1e-12)
    assert cv.omega == pytest.approx(ahead[0][1], rel=1e-12)
    assert (cv.direction, cv.count_before, cv.count_after, cv.method) == (
        "stabilizing",
        2,
        0,
        method,
    )
    # 1e-7 before the switch the range holds it, and the system is stable at lo
    before = fn.critical_value(cooke_grossman(), "tau", 18.6785902, 80.0, method=method)
    assert before.value == pytest.approx(switch[0], rel=1e-12)
    assert (before.direction, before.count_before) == ("destabilizing", 0)


def test_unstable_throughout_by_the_followed_roots_agrees_with_the_closed_form():
    # inside an unstable window of Cooke and Grossman's oscillator (a pair crossed in at
    # 18.679 and crosses out at the next switch): continuation follows the rightmost roots
    # from lo, right of the axis to hi, and counts nothing more; the exact delay method and
    # the closed form agree that no switch is there
    ahead, count_lo = _next_switches(19.0, 80.0)
    assert count_lo == 2
    hi = ahead[0][0] - 0.1
    assert ahead[0][2] == -2 and hi > 19.5
    m = cooke_grossman()
    with pytest.raises(fn.AnalysisError, match="unstable on the whole interval") as err:
        fn.critical_value(m, "tau", 19.0, hi, method="continuation")
    assert "2 right-half-plane roots at 19, counted in full; followed from 19 to" in str(err.value)
    with pytest.raises(fn.AnalysisError, match="unstable on the whole interval"):
        fn.critical_value(m, "tau", 19.0, hi, method="delay")
    # a range past the switch: the followed pair leaves, and the full path finds the switch
    cv = fn.critical_value(m, "tau", 19.0, ahead[0][0] + 0.1, method="continuation")
    assert cv.value == pytest.approx(ahead[0][0], rel=1e-12)
    assert (cv.direction, cv.count_before, cv.count_after) == ("stabilizing", 2, 0)


@pytest.mark.parametrize("method", ["delay", "continuation"])
def test_ranges_that_start_or_end_on_a_switch(method):
    tau_s = cooke_grossman_crossings(0.1, 0.25, 80.0)[6][0]
    m = cooke_grossman()
    # a range starting on the switch (to rounding) holds it
    cv = fn.critical_value(m, "tau", tau_s, 80.0, method=method)
    assert cv.value == pytest.approx(tau_s, rel=1e-12) and cv.direction == "destabilizing"
    # ranges ending on it, 1e-7 after it and 1e-7 before it
    for hi in (tau_s, 18.6785904):
        cv = fn.critical_value(m, "tau", 16.5, hi, method=method)
        assert cv.value == pytest.approx(tau_s, rel=1e-12)
        assert (cv.count_before, cv.count_after) == (0, 2)
    with pytest.raises(fn.AnalysisError, match="stable on the whole interval"):
        fn.critical_value(m, "tau", 16.5, 18.6785902, method=method)
    # every switch of a range starting 1e-7 past one, with the count at lo
    sw = fn.stability_switches(m, "tau", 18.6785904, 40.0, method=method)
    ahead, count_lo = _next_switches(18.6785904, 40.0)
    assert sw.count_lo == count_lo == 2
    assert [c.value for c in sw.crossings] == pytest.approx([r[0] for r in ahead], rel=1e-10)
    assert [c.change for c in sw.crossings] == [r[2] for r in ahead]


def test_counts_of_many_roots_leak_no_numpy_warnings():
    import warnings

    from fluidnet.stability.crossing import Sweep
    from fluidnet.stability.system import SystemFactory

    sweep = Sweep(SystemFactory(cooke_grossman()), "tau", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = [sweep.count(tau, k=96).count for tau in (20.0, 79.0)]
    # closed form: two roots right at tau = 20, four at 79
    assert counts == [_next_switches(tau, 80.0)[1] for tau in (20.0, 79.0)] == [2, 4]


# ------------------------------------------------------------------ scales far from one
def test_rcp_delay_over_thirteen_decades():
    # issue 23: over d0 in [0.1, 1e12], "a root at 0 for every value of d0 ... never
    # asymptotically stable" (and later "a real root reaches 0 and stays there"). RCP's
    # linearization, in z = s d0, is z^2 + alpha z e^-z + beta e^-z = 0 (eq (9) of Dukkipati &
    # McKeown): its stability does not depend on d0. The boundary of the (alpha, beta) region is
    # alpha = w sin w, beta = w^2 cos w; the defaults alpha = 0.4, beta = 0.2 lie inside it.
    w = brentq(lambda v: v**2 * math.cos(v) - 0.2, 1e-9, 1.0)
    assert 0.4 > w * math.sin(w)  # alpha above the boundary at beta = 0.2: stable
    m = fn.models.rcp()
    assert (m.values["alpha"], m.values["beta"]) == (0.4, 0.2)
    with pytest.raises(fn.AnalysisError) as err:
        fn.critical_value(m, "d0", 0.1, 1e12)
    msg = str(err.value)
    assert "stable on the whole interval" in msg and "0 crossings" in msg
    assert "root at 0" not in msg and "reaches 0" not in msg


def test_a_badly_scaled_delay_family_is_not_called_singular():
    # the delayed oscillator with its velocity in units 1e15 times smaller: the same
    # characteristic equation, the same switches; det(A0 + A1) = 1.25 is not 0 (it looked 1e-15
    # beside the entries of 1e15, and was called "a root at 0 for every value of tau")
    big = 1e15

    def scaled(tau):
        A0 = [[0.0, 1.0 / big], [-big, -0.2]]
        A1 = [[0.0, 0.0], [-0.25 * big, 0.0]]
        return fn.LinearDDE(A0, [(tau, A1)])

    ref = cooke_grossman_crossings(0.1, 0.25, 10.0)
    cv = fn.critical_value(scaled, "tau", 0.1, 10.0)
    assert cv.method == "delay" and cv.value == pytest.approx(ref[0][0], rel=1e-12)
    assert cv.omega == pytest.approx(ref[0][1], rel=1e-12)


PI_TCP = {
    "N": 300.3389312633782,
    "Tp": 0.47661413691627375,
    "q_ref": 8.261160380386503,
    "K_pi": 1.071014629338844e-09,
    "z": 0.049543634017343796,
}


def test_pi_over_tcp_critical_capacity_agrees_with_nyquist():
    """Issue 33: main failed 'not certified ... pass max_nodes larger than 13' at C = 106261 (a
    root listed twice) and max_nodes=60 did not help. The critical capacity against a second
    method: the Nyquist count of the loop broken at p, stable just below, 2 roots just above."""
    m = fn.models.hollot_pi()
    cv = fn.critical_value(m, "C", 42131.969460442684, 421319.69460442686, params=PI_TCP)
    assert (cv.direction, cv.count_before, cv.count_after) == ("destabilizing", 0, 2)
    for factor, stable, rhp in ((1 - 1e-6, True, 0), (1 + 1e-6, False, 2)):
        ny = fn.nyquist(m.loop_gain("p", params={**PI_TCP, "C": cv.value * factor}))
        assert (ny.stable, ny.closed_loop_rhp_roots) == (stable, rhp)
    again = fn.critical_value(
        m, "C", 42131.969460442684, 421319.69460442686, params=PI_TCP,
        root_options={"max_nodes": 60},
    )  # fmt: skip
    assert again.value == pytest.approx(cv.value, rel=1e-10)


def test_uncertified_counts_advise_what_works(monkeypatch):
    """A count that fails its certificate below 26 nodes (a duplicated root, put back by a
    flawed root finder) is refined automatically; a fixed n_nodes or a low max_nodes that
    stops it gets an error whose advice, followed, gives the answer."""
    import fluidnet.stability.crossing as crossing
    from fluidnet.linear.roots import _certify
    from fluidnet.linear.rootset import CharacteristicRoot, Roots

    real = crossing.unit_time_roots

    def flawed(lin, k=6, region=None, **options):
        got = real(lin, k, region, **options)
        if got.n_nodes >= 26 or not len(got):
            return got
        twin = [CharacteristicRoot(value=got[0].value * (1 + 1e-9), residual=0.0)]
        listed = sorted([*got, *twin], key=lambda r: (-r.real, -r.imag))
        return _certify(lin, Roots(listed, got.n_nodes), None)

    monkeypatch.setattr(crossing, "unit_time_roots", flawed)
    a = 0.9
    w = brentq(lambda v: v / math.tan(v) - a, 1e-6, math.pi - 1e-6)
    b_low = -w / math.sin(w)
    assert fn.critical_value(hayes(a), "b", -4.0, 0.6).value == pytest.approx(b_low, rel=1e-12)
    for given, fix in (({"n_nodes": 13}, {"n_nodes": 26}), ({"max_nodes": 14}, {"max_nodes": 28})):
        with pytest.raises(fn.AnalysisError, match="not certified") as err:
            fn.critical_value(hayes(a), "b", -4.0, 0.6, root_options=given)
        assert repr(fix) in str(err.value)
        cv = fn.critical_value(hayes(a), "b", -4.0, 0.6, root_options=fix)
        assert cv.value == pytest.approx(b_low, rel=1e-12)


@pytest.mark.parametrize("K", [0.1989976, 0.199, 0.25])
def test_one_path_does_not_step_over_a_narrow_unstable_window(K):
    # the serial root path (its step controller looks one step ahead): the unstable window
    # (tau+, tau-) is 2.5e-3 wide at K = 0.1989976; both crossings against the closed form
    (t_up, w_up), (t_down, w_down) = oscillator_crossings(K)
    sw = fn.stability_switches(oscillator, "tau", 0.5, 3.0, K=K, method="continuation")
    assert sw.method == "continuation"
    first, second = sw.crossings[:2]
    assert first.value == pytest.approx(t_up, rel=1e-12)
    assert first.omega == pytest.approx(w_up, rel=1e-9)
    assert (first.count_before, first.count_after) == (0, 2)
    assert second.value == pytest.approx(t_down, rel=1e-12)
    assert second.omega == pytest.approx(w_down, rel=1e-9)
    assert (second.count_before, second.count_after) == (2, 0)
    cv = fn.critical_value(oscillator, "tau", 0.5, 3.0, K=K, method="continuation")
    assert cv.value == pytest.approx(t_up, rel=1e-12) and cv.bracket[1] < t_down


def test_newton_roots_are_the_lambert_roots_and_size_unit_follows_rate_scale():
    # x' = -a x - b x(t - tau): roots -a + W_k(-b tau e^{a tau}) / tau (Lambert W branches)
    from scipy.special import lambertw

    from fluidnet.stability.crossing import SLOW_RATES, newton_roots, rate_scale, size_unit

    for scale in (1.0, 1e-6, 1e-12):
        a, b, tau = 0.5 * scale, 2.0 * scale, 1.0 / scale
        lin = fn.LinearDDE(-a, [(tau, -b)])
        exact = -a + lambertw(-b * tau * np.exp(a * tau), np.arange(0, 4)) / tau
        got, ok = newton_roots(lin, exact * (1 + 1e-4))
        assert ok.all()
        np.testing.assert_allclose(got, exact, rtol=1e-12)
        # the size floor: the system's rate scale when it is slow, else 1
        r = rate_scale(lin)
        assert size_unit(lin) == (r if r < SLOW_RATES else 1.0)
    # two states (a matrix Newton step) against the discretized roots
    lin = oscillator(0.25, 1.3)
    ref = lin.roots(k=4).values
    got, ok = newton_roots(lin, ref * (1 + 1e-5))
    assert ok.all()
    np.testing.assert_allclose(got, ref, rtol=1e-11)


def test_counts_from_followed_roots_match_the_closed_form_counts(monkeypatch):
    # checkpoints whose count comes from the followed roots (confirmed by the argument
    # principle) carry the closed-form count of Cooke and Grossman's oscillator
    import fluidnet.stability.rootpaths as rootpaths

    used = []
    original = rootpaths._followed_count

    def spy(*args, **kwargs):
        got = original(*args, **kwargs)
        used.append(got is not None)
        return got

    monkeypatch.setattr(rootpaths, "_followed_count", spy)
    ref = cooke_grossman_crossings(0.1, 0.25, 20.0)
    sw = fn.stability_switches(cooke_grossman(), "tau", 0.0, 20.0, method="continuation")
    # (as the delay grows, roots from further left enter the window: those checkpoints are
    # computed in full)
    assert sum(used) >= 2 and not all(used)
    assert len(sw.checks) >= 8
    for value, n in sw.checks:
        assert n == sum(change for tau, _, change in ref if tau < value)


def test_a_followed_count_needs_every_root_right_of_its_line():
    import functools

    from fluidnet.stability.crossing import Sweep
    from fluidnet.stability.rootpaths import _followed_count, _upper

    sweep = Sweep(functools.partial(oscillator, 0.25), "tau", {})
    lin = sweep.lin(2.0)
    full = fn.linear.characteristic_roots(lin, 24)
    lam = _upper(full, True, lin)  # the roots right of -4 / tau_max, upper half-plane
    # the closed form: at tau = 2 the first pair has crossed (0.957) and not come back (2.56)
    n_ref = sum(change for tau, _, change in cooke_grossman_crossings(0.1, 0.25, 2.0))
    assert n_ref == 2
    got = _followed_count(sweep, 2.0, lam, True)
    assert got is not None and got.count == n_ref
    assert got.roots.certified and got.roots.certificate < -4.0 / 2.0
    np.testing.assert_allclose(
        np.sort_complex(_upper(got.roots, True, lin)), np.sort_complex(lam), rtol=1e-12
    )
    # a root of the window left out (a root from further left not followed): no count
    assert _followed_count(sweep, 2.0, np.delete(lam, 1), True) is None
    # the right-half-plane count alone: the rightmost pair suffices
    top = lam[np.argsort(-lam.real)][:1]
    last = _followed_count(sweep, 2.0, top, True, rhp_only=True)
    assert last is not None and last.count == n_ref
    assert _followed_count(sweep, 2.0, lam[np.argsort(-lam.real)][1:], True, rhp_only=True) is None


def test_a_followed_count_on_a_line_just_left_of_the_followed_roots():
    # followed roots that were a full count's k rightmost (a large system's, whose line lies
    # right of the window) are counted on a line just left of them (near=True): they must be
    # every root right of it, and the line must be left of the imaginary axis
    import functools

    from fluidnet.stability.crossing import Sweep
    from fluidnet.stability.rootpaths import _followed_count

    sweep = Sweep(functools.partial(oscillator, 0.25), "tau", {})
    lin = sweep.lin(2.0)
    full = fn.linear.characteristic_roots(lin, 24)
    lam = np.array([r.value for r in full if r.imag > 0][:3])  # the three rightmost pairs
    n_ref = sum(change for tau, _, change in cooke_grossman_crossings(0.1, 0.25, 2.0))
    got = _followed_count(sweep, 2.0, lam, True, near=True)
    assert got is not None and got.count == n_ref == 2
    assert got.roots.certified
    # the line lies between the third pair and the fourth (all roots are complex here)
    re = full.values.real[::2]
    assert np.all(full.values.imag[::2] > 0)
    assert re[3] < got.roots.certificate < re[2]
    np.testing.assert_allclose(
        np.sort_complex([r.value for r in got.roots if r.imag > 0]),
        np.sort_complex(lam),
        rtol=1e-12,
    )
    # one of them left out (a root from further left overtook the followed ones): no count
    assert _followed_count(sweep, 2.0, np.delete(lam, 1), True, near=True) is None
    # the rightmost pair alone is unstable: a line just left of it lies right of the axis,
    # where it would not count every unstable root: no count
    assert lam[0].real > 0
    assert _followed_count(sweep, 2.0, lam[:1], True, near=True) is None


def test_a_root_taken_to_the_lower_half_plane_fails_the_step():
    # a real system's followed roots are upper half-plane representatives: Newton's method
    # from a long step took the third (-4.639 + 0.963j) to the mirror image of the second
    # (the 3-route network at B = 25.8 in test_stability_user_laws); its real part alone
    # passes the predictor test, so the step was accepted
    from fluidnet.stability.rootpaths import _judge, _lost, _Path

    lam = np.array([-0.1212 + 0j, -3.4339 + 3.8652j, -4.639 + 0.9634j])
    v = np.array([-0.2, 1.0 + 5.0j, 20.8 + 1.0j])
    path = _Path(0.583, lam, v)
    new = np.array([-0.1268 + 0j, -3.3813 + 4.1508j, -3.3813 - 4.1508j])
    ok = np.ones(3, dtype=bool)
    assert _judge(path, new, ok, 0.05) is None  # (the test of the real parts alone)
    assert _judge(path, new, ok, 0.05, real_system=True) == ("mirror", 2)
    assert _lost(path, new, ok, 0.05, 1.0, real_system=True).tolist() == [False, False, True]
    # a pair that met on the real axis, resolved by Newton's method to about 1e-8: accepted
    near = np.array([-0.1268 + 0j, -3.3813 + 4.1508j, -3.58 - 2e-8j])
    assert _judge(path, near, ok, 0.05, real_system=True) is None


def test_a_pair_that_parts_on_the_real_axis_is_a_split():
    from fluidnet.stability.rootpaths import _Path, _split

    path = _Path(0.363, np.array([-0.514 + 0j, -0.9156 + 0.1996j]), np.zeros(2, dtype=complex))
    assert _split(path, np.array([-0.6 + 0j, -0.8731 + 1e-9j])).tolist() == [False, True]
    assert not _split(path, np.array([-0.6 + 0j, -0.90 + 0.1j])).any()


def test_the_residual_of_the_root_of_a_vanishing_system():
    # x' = b x(t - 1) at b = 0: every matrix vanishes, the one root is 0, and Newton's method
    # lands within rounding of it; relative to |lambda| alone its residual was 1
    from fluidnet.stability.crossing import newton_roots, relative_residual

    lin = fn.LinearDDE(np.zeros((1, 1)))
    assert relative_residual(lin, np.array([1.5e-33 + 0j]))[0] <= 1e-8
    assert relative_residual(lin, np.array([1e-3 + 0j]))[0] == pytest.approx(1.0)
    root, ok = newton_roots(lin, np.array([1.3e-17 + 0j]))
    assert ok[0] and abs(root[0]) <= 1e-30


def test_mgt_red_checkpoint_counts_are_the_full_counts():
    # every checkpoint of the root path (several counted from the followed roots) against the
    # roots computed in full by the spectral discretization at that value
    m = fn.models.mgt_red()
    cv = fn.critical_value(m, "Tp", 0.05, 1.0)
    assert len(cv.checks) >= 4
    for value, n in cv.checks:
        roots = m.linearize(Tp=value).roots(k=12)
        assert roots.certified
        assert n == sum(r.multiplicity for r in roots if r.real > 1e-9)


def test_newton_gives_up_a_real_start_that_has_no_real_root_to_find(monkeypatch):
    # x' = -x(t - 1): lambda = -e^{-lambda} has no real root (lambda e^lambda >= -1/e > -1);
    # its roots are W_k(-1) (Lambert W branches), pairs off the real axis. A real start of a
    # real system stays real, so Newton's method wanders on the real axis.
    from scipy.special import lambertw

    import fluidnet.stability.crossing as crossing

    lin = fn.LinearDDE(np.zeros((1, 1)), [(1.0, -1.0)])
    calls = []
    steps = crossing._newton_steps
    monkeypatch.setattr(crossing, "_newton_steps", lambda lin, x: calls.append(1) or steps(lin, x))
    _, ok = crossing.newton_roots(lin, [-0.5], give_up=12)
    assert not ok[0] and len(calls) == 12
    calls.clear()
    _, ok = crossing.newton_roots(lin, [-0.5])  # without give_up: every iteration, in vain
    assert not ok[0] and len(calls) == 40
    # a start near a root converges as before, give_up or not
    exact = complex(lambertw(-1.0, 0))
    for give_up in (None, 12):
        got, ok = crossing.newton_roots(lin, [exact * (1 + 0.05j)], give_up=give_up)
        assert ok[0] and abs(got[0] - exact) <= 1e-12 * abs(exact)


def test_a_continued_sweep_searches_first_at_the_models_own_value():
    # Kelly's primal law in kappa: d' = -kappa beta d(t - T), critical kappa = pi / (2 beta T)
    m = kelly_primal()
    beta, T = 2 * math.sqrt(2.0 * 8.0) / 8.0, 0.1
    from fluidnet.stability.crossing import Sweep, anchor_value
    from fluidnet.stability.system import SystemFactory

    factory = SystemFactory(m, {})
    assert anchor_value(factory, "kappa", 0.1, 20.0) == 0.5  # the model's kappa, in the range
    assert anchor_value(factory, "kappa", 1.0, 20.0) is None  # outside it
    sweep = Sweep(factory, "kappa", {}, anchor=0.5)
    lin = sweep.lin(3.0)
    assert sweep._systems.stats == {"continued": 1, "full": 1}  # searched at 0.5, continued
    assert lin.A[0][0, 0] == pytest.approx(-3.0 * beta, rel=1e-13)
    cv = fn.critical_value(m, "kappa", 0.1, 20.0)
    assert cv.value == pytest.approx(math.pi / (2 * beta * T), rel=1e-10)
    assert cv.omega == pytest.approx(math.pi / (2 * T), rel=1e-10)


def _gain_between_samples(default: float):
    """``x' = -k(T) x(t - T)`` with ``k(T) = 1 + c (T - p1) (T - p2)``, ``p1``, ``p2`` the two
    values where the exact delay method samples ``[0.1, 2]``: the gain is 1 at both, so the
    samples alone look like a pure delay sweep (critical ``T = pi / 2``), but it is not."""
    (x,) = (fn.states("x"),)
    T, c = fn.params("T c")
    p1, p2 = 0.1 + 0.381966 * 1.9, 0.1 + 0.723607 * 1.9
    k = 1 + c * (T - p1) * (T - p2)
    return fn.Model({x: -k * x(fn.t - T)}, {T: default, c: 1.07}), p1, p2


@pytest.mark.parametrize("default", [1.0, 3.0])
def test_gain_equal_at_the_delay_samples_is_not_a_delay_sweep(default):
    # closed form: a root j omega of s + k e^{-s T} = 0 (k > 0) has omega = k and k T = pi / 2,
    # so the first switch is the root of k(T) T = pi / 2 (the delay method's samples both have
    # k = 1 and gave pi / 2); the model's own T inside the range (1.0) and outside it (3.0)
    m, p1, p2 = _gain_between_samples(default)
    k = lambda t: 1 + 1.07 * (t - p1) * (t - p2)  # noqa: E731
    exact = brentq(lambda t: k(t) * t - math.pi / 2, 1.0, 1.6)
    cv = fn.critical_value(m, "T", 0.1, 2.0)
    assert cv.value == pytest.approx(exact, rel=1e-10)
    assert cv.omega == pytest.approx(k(exact), rel=1e-9)
    assert cv.method == "continuation"


def test_the_delay_pencils_eigenvalues_by_shift_and_invert():
    """The delay sweep's unimodular eigenvalues come from a standard eigenvalue problem of a
    shifted and inverted pencil (NumPy), not SciPy's QZ algorithm (whose import cost 0.25 s of
    a first critical delay). An infinite eigenvalue (a singular B) comes back non-finite or
    huge."""
    from fluidnet.stability.delaysweep import _pencil_eigenvalues

    a = np.diag([1.0, np.exp(0.3j), 2.0, 3.0 - 1.0j])
    b = np.diag([1.0, 1.0, 0.0, 1.0]).astype(complex)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))  # not diagonal
    z = _pencil_eigenvalues(q @ a @ q.T, q @ b @ q.T)
    finite = np.sort_complex(z[np.abs(z) < 1e10])  # (nan compares False: dropped too)
    assert finite.size == 3
    want = np.sort_complex(np.array([1.0, np.exp(0.3j), 3.0 - 1.0j]))
    assert np.allclose(finite, want, rtol=0, atol=1e-13)


def test_the_delay_pencil_falls_back_to_qz_when_no_shift_is_well_conditioned(monkeypatch):
    from fluidnet.stability import delaysweep

    a = np.array([[0.0, 1.0], [-1.0, 0.0]], dtype=complex)  # z = +-i
    b = np.eye(2, dtype=complex)
    monkeypatch.setattr(delaysweep, "MAX_SHIFT_CONDITION", 0.0)
    z = delaysweep._pencil_eigenvalues(a, b)
    assert np.allclose(np.sort_complex(z), [-1j, 1j], rtol=0, atol=1e-14)


def test_a_critical_delay_against_its_closed_form_without_scipy():
    """x' = a (1 - x q(t - T)), q' = x - c: at x = c, q = 1/c the characteristic equation is
    s^2 + (a/c) s + a c e^{-sT} = 0; on s = jw, |w^2 - j (a/c) w| = a c, i.e.
    w^4 + (a/c)^2 w^2 - (a c)^2 = 0, and e^{-jwT} = (w^2 - j (a/c) w) / (a c). Computed in a
    fresh interpreter, which must import no SciPy module (a first critical delay cost 0.15 s,
    mostly scipy.linalg's import)."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    a, c = 0.5, 1.0
    w2 = (-((a / c) ** 2) + math.sqrt((a / c) ** 4 + 4 * (a * c) ** 2)) / 2
    w = math.sqrt(w2)
    T = math.atan2((a / c) * w / (a * c), w2 / (a * c)) / w  # angle of e^{+jwT}
    script = textwrap.dedent(
        """
        import json, sys
        import fluidnet as fn
        x, q = fn.states("x q")
        a, c, T = fn.params("a c T")
        m = fn.Model(rhs={x: a * (1 - x(fn.t) * q(fn.t - T)), q: x(fn.t) - c},
                     params={a: 0.5, c: 1.0, T: 1.0})
        cv = fn.critical_value(m, "T", 0.1, 10.0)
        print(json.dumps([cv.value, sorted(n for n in sys.modules if n.startswith("scipy"))]))
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(fn.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    value, scipy_modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert value == pytest.approx(T, rel=1e-12)
    assert scipy_modules == []
