"""periodic_orbit and Floquet multipliers against long simulations, normal forms and closed forms.

The simulations (``fn.simulate``, the compiled Runge-Kutta integrator with its own dense
output and delay interpolation) are independent of the collocation code.
"""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.signal import argrelmax

import fluidnet as fn
from fluidnet.bifurcation import NonSmoothError


def wright():
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 2.0}, name="wright")


def two_delay_model():
    """u' = -a u(t-1)(1 + v), v' = -v - e v(t-2) - u^2 (supercritical, see the Hopf tests)."""
    u, v = fn.states("u v")
    a, e = fn.params("a e")
    t = fn.t
    return fn.Model(
        {u: -a * u(t - 1) * (1 + v(t)), v: -v(t) - e * v(t - 2) - u(t) ** 2},
        {a: 1.0, e: 0.3},
        name="two_delay",
    )


def _compare_with_simulation(orb, sol, state, t_from):
    """Period, peak-to-peak and the profile (aligned at a maximum) against the run's tail."""
    osc = fn.oscillation(sol, state, after=t_from)
    assert osc.sustained
    T = orb.period
    tt = np.linspace(t_from, sol.t_end, int(400 * (sol.t_end - t_from) / T))
    v = sol(tt, state)
    peaks = argrelmax(v)[0]
    assert len(peaks) > 3
    # period from the last maxima (parabolic refinement), peak-to-peak from the last cycle
    tp = []
    for k in peaks[-4:]:
        y0, y1, y2 = v[k - 1], v[k], v[k + 1]
        tp.append(tt[k] + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2) * (tt[1] - tt[0]))
    T_sim = float(np.mean(np.diff(tp)))
    ptp_sim = float(np.ptp(sol(np.linspace(sol.t_end - T, sol.t_end, 20_000), state)))
    # profile: shift the orbit so that its maximum sits at the last simulated maximum
    ts, vals = orb.sample(4001)
    i = orb.state_names.index(state)
    t_max = ts[np.argmax(vals[:, i])]
    window = np.linspace(tp[-1] - T, tp[-1], 500)
    sim = sol(window, state)

    def rms(shift):
        return float(np.sqrt(np.mean((sim - orb(window - tp[-1] + shift, state)) ** 2)))

    best = minimize_scalar(
        rms, bounds=(t_max - T / 50, t_max + T / 50), method="bounded", options={"xatol": 1e-12}
    )
    prof_err = np.max(np.abs(sim - orb(window - tp[-1] + best.x, state)))
    return T_sim, ptp_sim, prof_err / orb.amplitude[state]


def test_wright_orbit_against_simulation_and_floquet_relaxation():
    m = wright()
    sol = fn.simulate(m, 200.0, history={"x": 0.5}, rtol=1e-10, atol=1e-12)
    orb = fn.periodic_orbit(sol, intervals=60)
    T_sim, ptp_sim, prof = _compare_with_simulation(orb, sol, "x", 120.0)
    assert orb.period == pytest.approx(T_sim, rel=1e-6)
    assert orb.amplitude["x"] == pytest.approx(ptp_sim, rel=1e-5)
    assert prof < 1e-4
    assert orb.defect < 1e-5 and orb.stable
    assert abs(orb.trivial_multiplier - 1) < 1e-8
    # the next multiplier is real: the deviation of successive maxima from the orbit's
    # maximum shrinks by it per period after a perturbation (measured on a second run)
    mu2 = orb.nontrivial_multipliers[0]
    assert abs(mu2.imag) < 1e-12
    hist_t = np.linspace(-1.2 * orb.period, 0.0, 3000)
    run = fn.simulate(
        m, 8 * orb.period, history={"x": (hist_t, 1.2 * orb(hist_t, "x"))}, rtol=1e-11, atol=1e-13
    )
    tt = np.linspace(0.0, run.t_end, 200_001)
    v = run(tt, "x")
    dev = v[argrelmax(v)[0]] - orb.maximum["x"]
    ratios = dev[2:5] / dev[1:4]
    assert np.allclose(ratios, mu2.real, rtol=0.03)


def test_wright_orbit_near_onset_matches_normal_form_and_mesh_convergence():
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0)
    for da in (1e-4, 1e-3):
        orb = fn.periodic_orbit(hp, math.pi / 2 + da)
        pred = hp.predict(math.pi / 2 + da)
        assert orb.amplitude["x"] == pytest.approx(pred["amplitude"]["x"], rel=2 * da)
        assert orb.period == pytest.approx(pred["period"], rel=da)
        # the multiplier closest to 1 besides the trivial one: exp(-2 Re lambda' da T)
        mu2 = orb.nontrivial_multipliers[0]
        assert mu2.real == pytest.approx(
            math.exp(-2 * hp.root_speed.real * da * orb.period), rel=3 * da
        )
    coarse = fn.periodic_orbit(hp, 1.9, intervals=30)
    fine = fn.periodic_orbit(coarse, intervals=80, floquet=False)
    assert fine.period == pytest.approx(coarse.period, rel=1e-7)
    assert fine.amplitude["x"] == pytest.approx(coarse.amplitude["x"], rel=1e-6)
    # re-solved at another parameter value, given in params= (issue 24) or as a keyword: the
    # orbit found from the Hopf point at that value
    ref = fn.periodic_orbit(hp, 1.95, intervals=30)
    moved = fn.periodic_orbit(coarse, params={"a": 1.95})
    assert moved.period == pytest.approx(ref.period, rel=1e-7)
    assert fn.periodic_orbit(coarse, a=1.95).period == moved.period
    with pytest.raises(fn.OptionError, match="'a'"):
        fn.periodic_orbit(coarse, params={"a": 1.95}, a=1.9)


def test_two_delay_orbit_normal_form_and_simulation():
    m = two_delay_model()
    hp = fn.hopf_point(m, "a", 1.0, 2.0)
    a = hp.value + 0.02
    orb = fn.periodic_orbit(hp, a)
    pred = hp.predict(a)
    assert orb.amplitude["u"] == pytest.approx(pred["amplitude"]["u"], rel=0.03)
    assert orb.period == pytest.approx(pred["period"], rel=0.01)
    # further out (faster relaxation, multiplier ~0.7), against a run started at 0.9 x orbit
    far = fn.periodic_orbit(hp, hp.value + 0.1)
    hist_t = np.linspace(-2.5, 0.0, 500)
    sol = fn.simulate(
        m,
        150.0,
        params={"a": hp.value + 0.1},
        history={s: (hist_t, 0.9 * far(hist_t, s)) for s in ("u", "v")},
        rtol=1e-10,
        atol=1e-12,
    )
    T_sim, ptp_sim, prof = _compare_with_simulation(far, sol, "u", 100.0)
    assert far.period == pytest.approx(T_sim, rel=1e-6)
    assert far.amplitude["u"] == pytest.approx(ptp_sim, rel=1e-5)
    assert prof < 1e-4 and far.stable


def test_kelly_primal_orbit_against_simulation():
    m = fn.models.kelly_primal([[1]], T=1.0, B=4.0)
    sol = fn.simulate(m, 250.0, params={"kappa_1": 0.45}, history={"x_1": 0.9}, rtol=1e-10)
    orb = fn.periodic_orbit(sol)
    T_sim, ptp_sim, prof = _compare_with_simulation(orb, sol, "x_1", 150.0)
    assert orb.period == pytest.approx(T_sim, rel=1e-6)
    assert orb.amplitude["x_1"] == pytest.approx(ptp_sim, rel=1e-5)
    assert prof < 1e-4 and orb.stable and orb.params["kappa_1"] == 0.45


def test_sbrm_orbit_with_state_dependent_delays_is_a_solution():
    """Just past the critical delay the smooth orbit exists; the integrator, started on it with
    the orbit as history, stays on it (the delays depend on the queue)."""
    m = fn.models.sbrm()
    hp = fn.hopf_point(m, "d", 0.05, 0.12)
    d = hp.value * (1 + 1e-4)
    orb = fn.periodic_orbit(hp, d)
    pred = hp.predict(d)
    assert orb.amplitude["b"] == pytest.approx(pred["amplitude"]["b"], rel=0.01)
    hist_t = np.linspace(-3 * orb.period, 0.0, 3000)
    hist = {s: (hist_t, orb(hist_t, s)) for s in ("W", "b")}
    run = fn.simulate(m, 10 * orb.period, params={"d": d}, history=hist, rtol=1e-10, atol=1e-10)
    tt = np.linspace(9 * orb.period, 10 * orb.period, 300)
    err = np.max(np.abs(run(tt, "b") - orb(tt, "b"))) / orb.amplitude["b"]
    assert err < 1e-3


def test_floquet_multiplier_of_the_normal_form_ode():
    """x' = mu x - y - x r^2, y' = x + mu y - y r^2: r^2 = mu, multiplier exp(-4 pi mu)."""
    X, Y = fn.states("X Y")
    mu = fn.params("mu")
    t = fn.t
    r2 = X(t) ** 2 + Y(t) ** 2
    m = fn.Model({X: mu * X(t) - Y(t) - X(t) * r2, Y: X(t) + mu * Y(t) - Y(t) * r2}, {mu: 0.1})
    hp = fn.hopf_point(m, "mu", -0.5, 0.5)
    orb = fn.periodic_orbit(hp, 0.1, intervals=20)
    assert orb.period == pytest.approx(2 * math.pi, rel=1e-9)
    assert orb.amplitude["X"] == pytest.approx(2 * math.sqrt(0.1), rel=1e-9)
    mu2 = orb.nontrivial_multipliers[0]
    assert mu2.real == pytest.approx(math.exp(-4 * math.pi * 0.1), rel=1e-8)


def test_non_smooth_orbits_are_refused():
    # SBRM 2 % past the critical delay: the queue crosses the marking threshold b0
    m = fn.models.sbrm()
    hp = fn.hopf_point(m, "d", 0.05, 0.12)
    with pytest.raises(NonSmoothError, match="switching surface") as info:
        fn.periodic_orbit(hp, hp.value * 1.02)
    assert "b0" in info.value.surface
    # the smooth right-hand side's orbit is still available, and crosses b0
    smooth = fn.periodic_orbit(hp, hp.value * 1.02, check_smooth=False, floquet=False)
    assert smooth.minimum["b"] < 50.0 < smooth.maximum["b"]
    # RCP's simulated limit cycle at (1.4, 0.8) keeps returning to q = 0 (Fig 43)
    rcp = fn.models.rcp(alpha=1.4, beta=0.8)
    v = rcp.resolve_params()
    sol = fn.simulate(rcp, 80 * v["d0"], history={"R": 0.01 * v["C"], "q": 2 * v["C"] * v["d0"]})
    with pytest.raises(NonSmoothError, match="projected state q"):
        fn.periodic_orbit(sol, state="R")


def test_bad_input():
    m = wright()
    hp = fn.hopf_point(m, "a", 1.0, 2.0)
    with pytest.raises(fn.OptionError, match="intervals"):
        fn.periodic_orbit(hp, 1.6, intervals=1)
    with pytest.raises(fn.OptionError, match="degree"):
        fn.periodic_orbit(hp, 1.6, degree=0)
    with pytest.raises(fn.OptionError, match="value of 'a'"):
        fn.periodic_orbit(hp)
    with pytest.raises(fn.OptionError, match="HopfPoint, a Solution or a PeriodicOrbit"):
        fn.periodic_orbit(m)
    with pytest.raises(fn.AnalysisError, match="no small periodic orbit"):
        fn.periodic_orbit(hp, 1.5)
    orb = fn.periodic_orbit(hp, 1.6, floquet=False)
    with pytest.raises(fn.AnalysisError, match="not computed"):
        orb.stable  # noqa: B018
    with pytest.raises(fn.OptionError, match="not a state"):
        orb(0.0, "y")
    settled = fn.simulate(m, 60.0, params={"a": 1.0}, history={"x": 0.3})
    with pytest.raises(fn.AnalysisError, match="does not oscillate"):
        fn.periodic_orbit(settled)
    with pytest.raises(fn.OptionError, match="overrides"):
        fn.periodic_orbit(settled, a=2.0)
    x = fn.states("x")
    k = fn.params("k")
    timed = fn.Model({x: -k * x(fn.t - 1) + fn.sympy.sin(fn.t)}, {k: 1.0})
    with pytest.raises(fn.ModelError, match="explicitly on t"):
        fn.bifurcation.orbit.orbit_system(timed)
