"""Switching right-hand sides: crossings, Filippov sliding on one and two surfaces, relays."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from scipy.optimize import brentq

import fluidnet as fn

t = fn.t
H = sympy.Heaviside


def test_relay_slides_on_its_surface():
    """x' = -sign(x) + 1/2: reaches 0 at t = 2 and slides there (Filippov weight 3/4)."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.Rational(1, 2)}, params={})
    sol = fn.simulate(m, 5.0, history={"x": 1.0})
    tt = np.linspace(0, 5, 501)
    np.testing.assert_allclose(sol(tt)[0], np.maximum(1 - 0.5 * tt, 0.0), atol=1e-12)
    assert sol.counters.sliding_entries == 1
    assert sol.counters.steps < 20  # sliding is one smooth motion, not chattering


def test_sliding_ends_where_the_fields_stop_pointing_at_the_surface():
    """x' = -sign(x) + 2 sin t from 0: slides until 2 sin t = 1, then x > 0 until x = 0 again."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -sympy.sign(x(t)) + 2 * sympy.sin(t)}, params={})
    t1 = np.pi / 6
    free = lambda s: -(s - t1) + 2 * (np.cos(t1) - np.cos(s))  # noqa: E731
    t2 = brentq(free, 1.0, 6.0)
    sol = fn.simulate(m, t2 - 0.01, history={"x": 0.0}, rtol=1e-10, atol=1e-12)
    tt = np.linspace(0, t2 - 0.01, 1001)
    exact = np.where(tt <= t1, 0.0, free(tt))
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-8)
    assert np.min(np.abs(sol.mesh - t1)) < 1e-8  # the exit is located


def test_crossing_a_continuous_switch():
    """x' = Max(1 - x, 1/4): exponential approach until x = 3/4 at t = ln 4, then slope 1/4."""
    x = fn.states("x")
    m = fn.Model(rhs={x: sympy.Max(1 - x(t), sympy.Rational(1, 4))}, params={})
    sol = fn.simulate(m, 4.0, history={"x": 0.0}, rtol=1e-10, atol=1e-12)
    tt = np.linspace(0, 4, 801)
    exact = np.where(tt < np.log(4), 1 - np.exp(-tt), 0.75 + 0.25 * (tt - np.log(4)))
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-9)
    assert np.min(np.abs(sol.mesh - np.log(4))) < 1e-9
    assert sol.counters.sliding_entries == 0


def test_delayed_relay_is_a_triangle_wave():
    """x' = 1/2 - H(x(t-1)): switches when the delayed state changes sign; period 4."""
    x = fn.states("x")
    m = fn.Model(rhs={x: sympy.Rational(1, 2) - H(x(t - 1))}, params={})
    sol = fn.simulate(m, 15.0, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
    tt = np.linspace(0, 15, 1501)
    # x = 1 - t/2 up to t = 3, then a triangle wave of amplitude 1/2 and period 4
    phase = np.mod(tt - 3.0, 4.0)
    tri = np.where(phase < 2.0, -0.5 + 0.5 * phase, 0.5 - 0.5 * (phase - 2.0))
    exact = np.where(tt <= 3.0, 1 - 0.5 * tt, tri)
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-9)
    assert sol.counters.sliding_entries == 0


def test_two_surfaces_slide_with_multilinear_weights():
    """Two links, two one-link flows and a two-link flow, binary congestion per link:

    x1' = 1/2 - cgA, x2' = 1/2 - cgB, x3' = 3/10 - (1 - (1 - cgA)(1 - cgB)).
    On both surfaces x1 + x3 = 1 and x2 + x3 = 1, the Filippov weights lam_A = lam_B = lam solve
    lam^2 - 3 lam + 4/5 = 0, and the two-link flow then drifts at 3/10 - 1 + (1 - lam)^2.
    """
    x1, x2, x3 = fn.states("x1 x2 x3")
    cgA = H(x1(t) + x3(t) - 1)
    cgB = H(x2(t) + x3(t) - 1)
    half, f3 = sympy.Rational(1, 2), sympy.Rational(3, 10)
    m = fn.Model(
        rhs={x1: half - cgA, x2: half - cgB, x3: f3 - (1 - (1 - cgA) * (1 - cgB))},
        params={},
        nonnegative=[x1, x2, x3],
    )
    sol = fn.simulate(m, 8.0, history={"x1": 0.2, "x2": 0.3, "x3": 0.4})
    lam = (3 - np.sqrt(9 - 4 * 0.8)) / 2
    drift = 0.3 - 1 + (1 - lam) ** 2
    v = sol(np.array([1.5, 2.5]))
    assert v[2, 1] - v[2, 0] == pytest.approx(drift, rel=1e-9)
    np.testing.assert_allclose(v[0] + v[2], 1.0, atol=1e-9)
    np.testing.assert_allclose(v[1] + v[2], 1.0, atol=1e-9)
    assert sol.counters.sliding_entries == 2
    # Closed-form schedule: link B saturates at t = 3/8 (x2 + x3 = 0.7 + 0.8 t); sliding on B
    # alone has lam_B = 0.4, so x1 + x3 grows at 0.4 and link A saturates at t = 5/8 with
    # x3 = 0.4875; x3 then drifts to 0 and is held there, the one-link flows at exactly 1.
    t_empty = 0.625 + 0.4875 / -drift
    assert np.min(np.abs(sol.mesh - 0.375)) < 1e-12
    assert np.min(np.abs(sol.mesh - 0.625)) < 1e-12
    assert sol.counters.time_on_boundary["x3"] == pytest.approx(8.0 - t_empty, abs=1e-9)
    late = sol(np.linspace(t_empty + 0.01, 8.0, 50))
    np.testing.assert_allclose(late[:2], 1.0, atol=1e-9)
    assert np.all(late[2] == 0.0)


def test_sliding_on_a_surface_with_a_delayed_state():
    """x' = -sign(x + x(t-1)/2), history 1: s = 0 at t = 4/3, then sliding keeps
    x = -x(t-1)/2 (equivalent control from the history's slope): piecewise linear exactly."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -sympy.sign(x(t) + x(t - 1) / 2)}, params={})
    sol = fn.simulate(m, 10 / 3, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
    tt = np.linspace(0, 10 / 3, 1001)
    exact = np.where(tt <= 4 / 3, 1 - tt, np.where(tt <= 7 / 3, -1 + tt / 2, 0.75 - tt / 4))
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-8)
    assert sol.counters.sliding_entries == 1


def test_two_surfaces_reached_at_the_same_time_both_slide():
    """The two-link network above from a symmetric start: both links saturate at t = 3/8
    together. The second surface must be decided where the first one is, not a step later
    (it used to be crossed in the wrong mode and then "slid" on at an offset s = 0.0056)."""
    x1, x2, x3 = fn.states("x1 x2 x3")
    cgA = H(x1(t) + x3(t) - 1)
    cgB = H(x2(t) + x3(t) - 1)
    half, f3 = sympy.Rational(1, 2), sympy.Rational(3, 10)
    m = fn.Model(
        rhs={x1: half - cgA, x2: half - cgB, x3: f3 - (1 - (1 - cgA) * (1 - cgB))},
        params={},
        nonnegative=[x1, x2, x3],
    )
    sol = fn.simulate(m, 1.5, history={"x1": 0.3, "x2": 0.3, "x3": 0.4})
    lam = (3 - np.sqrt(9 - 4 * 0.8)) / 2
    drift = 0.3 - 1 + (1 - lam) ** 2
    tt = np.linspace(0.375, 1.5, 50)
    v = sol(tt)
    np.testing.assert_allclose(v[2], 0.5125 + drift * (tt - 0.375), atol=1e-12)
    np.testing.assert_allclose(v[0] + v[2], 1.0, atol=1e-12)
    np.testing.assert_allclose(v[1] + v[2], 1.0, atol=1e-12)
    assert sol.counters.sliding_entries == 2


def test_time_sliding_and_mean_weight_are_reported():
    """x' = -sign(x) + 1/2 from x = 1: slides on x = 0 from t = 2 with weight 3/4 (side x > 0,
    where sign = 1, acts three quarters of the time)."""
    x = fn.states("x")
    m = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.Rational(1, 2)}, params={})
    sol = fn.simulate(m, 5.0, history={"x": 1.0})
    assert sol.counters.time_sliding == {"x": pytest.approx(3.0, abs=1e-12)}
    assert sol.counters.mean_sliding_weight == {"x": pytest.approx(0.75, abs=1e-12)}
    # a crossing only: no time on the surface, no weight
    m2 = fn.Model(rhs={x: sympy.Max(1 - x(t), sympy.Rational(1, 4))}, params={})
    c = fn.simulate(m2, 4.0, history={"x": 0.0}).counters
    assert c.time_sliding == {"x - 3/4": 0.0}
    assert all(np.isnan(v) for v in c.mean_sliding_weight.values())


def test_sliding_weights_on_two_surfaces_are_link_marking_fractions():
    """The symmetric two-link network: both links slide from t = 3/8 with the multilinear
    weights lam_A = lam_B = (3 - sqrt(5.8)) / 2."""
    x1, x2, x3 = fn.states("x1 x2 x3")
    cgA = H(x1(t) + x3(t) - 1)
    cgB = H(x2(t) + x3(t) - 1)
    half, f3 = sympy.Rational(1, 2), sympy.Rational(3, 10)
    m = fn.Model(
        rhs={x1: half - cgA, x2: half - cgB, x3: f3 - (1 - (1 - cgA) * (1 - cgB))},
        params={},
        nonnegative=[x1, x2, x3],
    )
    c = fn.simulate(m, 1.5, history={"x1": 0.3, "x2": 0.3, "x3": 0.4}).counters
    lam = (3 - np.sqrt(9 - 4 * 0.8)) / 2
    assert sorted(c.time_sliding.values()) == pytest.approx([1.125, 1.125], abs=1e-12)
    assert list(c.mean_sliding_weight.values()) == pytest.approx([lam, lam], abs=1e-12)


def test_sliding_ends_where_both_fields_have_the_same_normal_component():
    """c' = f + H(c - 1)(-|f| - f), f = cos t, c(0) = 1/2.

    Below the surface c' = cos t, above it c' = -|cos t|. The solution c = 1/2 + sin t reaches
    c = 1 at t = pi/6 and slides there (cos t > 0: the fields push toward each other, weight
    1/2) until t = pi/2, where cos t changes sign: from then on both one-sided fields are
    cos t (the Filippov weight is 0/0), so the solution leaves the surface with c' = cos t,
    c = 1 + (sin t - 1) = sin t, which touches c = 1 again only tangentially (t = 5 pi/2, ...).
    """
    c = fn.states("c")
    f = sympy.cos(t)
    m = fn.Model(rhs={c: f + H(c(t) - 1) * (-sympy.Abs(f) - f)}, params={})
    sol = fn.simulate(m, 20.0, history={"c": 0.5}, rtol=1e-9, atol=1e-12)
    tt = np.linspace(0.0, 20.0, 2001)
    exact = np.where(tt < np.pi / 6, 0.5 + np.sin(tt), np.where(tt < np.pi / 2, 1.0, np.sin(tt)))
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-7)
    assert sol.counters.time_sliding["c - 1"] == pytest.approx(np.pi / 3, abs=1e-8)
    assert np.min(np.abs(sol.mesh - np.pi / 2)) < 1e-8  # the exit is located


def test_two_surfaces_through_one_point_of_a_line_slide_and_leave_together():
    """x' = g - H(x) - H(2x), g = 1/2 + t, x(0) = -1/4: two surfaces through x = 0.

    x = -1/4 + t/2 + t^2/2 reaches 0 at t1 = (sqrt 3 - 1)/2. There the weights must satisfy
    g - lam1 - lam2 = 0 (more surfaces than dimensions: the weights are not unique, their sum
    is), possible in [0, 1]^2 while g <= 2, i.e. until t2 = 3/2; then both fields push up and
    x = (t - 3/2)^2 / 2.
    """
    x = fn.states("x")
    m = fn.Model(rhs={x: sympy.Rational(1, 2) + t - H(x(t)) - H(2 * x(t))}, params={})
    sol = fn.simulate(m, 3.0, history={"x": -0.25}, rtol=1e-10, atol=1e-12)
    t1, t2 = (np.sqrt(3.0) - 1) / 2, 1.5
    tt = np.linspace(0.0, 3.0, 601)
    exact = np.where(
        tt < t1, -0.25 + tt / 2 + tt**2 / 2, np.where(tt < t2, 0.0, (tt - t2) ** 2 / 2)
    )
    np.testing.assert_allclose(sol(tt)[0], exact, atol=1e-8)
    slid = sol.counters.time_sliding
    assert slid["x"] == pytest.approx(t2 - t1, abs=1e-8)
    assert slid["2*x"] == pytest.approx(t2 - t1, abs=1e-8)
    # lam1 + lam2 = g on average: (g(t1) + g(t2)) / 2. The counter averages each step's
    # stage weights, and the step cut at the exit has stages beyond it (weights clamped at 1):
    # exact up to that one step's share
    wsum = sum(sol.counters.mean_sliding_weight.values())
    assert wsum == pytest.approx((0.5 + t1 + 0.5 + t2) / 2, rel=1e-4)


def test_six_surfaces_through_one_point_topology_one_fixed_threshold():
    """Ye et al., topology I (three links of B = 100 Mb/s, flow 4 crossing all three) with a
    fixed slow-start threshold x_s = 60 > B/2, from slow start.

    The solution reaches the point x1 = x2 = x3 = x_s, x4 = B - x_s, where six switching
    surfaces meet in four dimensions (three link loads at B, flows 1-3 at x_s) and the Newton
    system for the sliding weights is singular. It stays there: that point is a Filippov
    equilibrium, since with the path factor P = (1 - l1)(1 - l2)(1 - l3) = 1/3 flow 4's
    decrease beta x4 (1 - P) = 40/3 equals its increase alpha x4 P, and each flow l = 1-3
    balances (1 - l_l) g = beta x_s l_l with a slow-start/AIMD mix g in [mu, alpha x_s]
    (below: a solution with l_l = 1 - 3^(-1/3)).
    """
    from fluidnet.models.sliding_mode import topology_one_network

    B, xs = 100.0, 60.0
    net = topology_one_network("I", x_s=xs)
    sol = fn.simulate(net.model(), 500.0, history={"x_1": 1.0, "x_2": 2.0, "x_3": 3.0, "x_4": 1.0})
    np.testing.assert_allclose(sol(500.0), [xs, xs, xs, B - xs], rtol=1e-9)
    assert np.max(sol.y) <= B + 1e-9  # never beyond a link's capacity
    # the weights exist: flow 4 with P = 1/3, each flow with 1 - l = 3^(-1/3)
    lam = 1 - 3 ** (-1 / 3)
    g = 0.5 * xs * lam / (1 - lam)
    mu = 8000e-6 / 0.030
    assert mu <= g <= xs and 0.5 * 40 * (1 - (1 - lam) ** 3) == pytest.approx(40 * (1 - lam) ** 3)


@pytest.mark.parametrize("case", ["II", "III"])
@pytest.mark.parametrize("xs", [50.0, 65.0, 80.0])
def test_topology_one_reaches_the_threshold_corner(case, xs):
    """x_s >= B/2: flows 1-3 at x_s, flow 4 at B - x_s (Ye et al., Sec IV), for other delays."""
    from fluidnet.models.sliding_mode import topology_one_network

    sol = fn.simulate(
        topology_one_network(case, x_s=xs).model(),
        300.0,
        history={"x_1": 1.0, "x_2": 2.0, "x_3": 3.0, "x_4": 1.0},
    )
    np.testing.assert_allclose(sol(300.0), [xs, xs, xs, 100.0 - xs], rtol=1e-9)


def test_no_sliding_weights_is_a_named_error():
    """The message of a run that found no Filippov weights names the surfaces and the time."""
    from fluidnet.codegen.compiled import compile_model
    from fluidnet.dde import _codes
    from fluidnet.dde.simulation import KernelResult, failure_message

    x, y = fn.states("x y")
    m = fn.Model(rhs={x: 1 - 2 * H(x(t)), y: 1 - 2 * H(y(t) - x(t))}, params={})
    cm = compile_model(m)
    res = KernelResult(
        status=_codes.ST_NO_SLIDING,
        index=0b11,
        info=(2.5, 1e-3, 0.25, 2.5),
        y=np.zeros(2),
        mesh_t=np.zeros(1),
        mesh_c=np.zeros((0, 2, 5)),
        n_hist_pieces=0,
        y_eval=np.zeros((0, 2)),
        counters={},
        btime=np.zeros(2),
        slide_time=np.zeros(2),
        slide_weight=np.zeros(2),
    )
    msg = failure_message(cm, res)
    assert "x = 0" in msg and "-x + y = 0" in msg and "t = 2.5" in msg
