"""Bifurcations of cycles, robust starts and exact extrema, against independent references.

* extrema: a circle of known radius (the Hopf normal form ODE) and much finer collocations of
  Hutchinson's equation (issue 23, item 5);
* robust starts far from onset: long simulations (the compiled integrator, independent of the
  collocation code);
* period doubling in the Mackey-Glass equation: a simulation past it has two alternating
  maxima, and the doubled branch (branch switching) reproduces that simulated cycle;
* Neimark-Sacker points near the neuron's Hopf-Hopf point: by its normal form the cycles of the
  first pair lose stability where ``Re lambda_2 = delta Re lambda_1`` (``delta`` = 3.7719 as
  DDE-BIFTOOL prints) with multipliers ``exp(+- 2 pi i omega2 / omega1)``;
* folds of cycles of Kelly's delayed law continued in ``(kappa, T)``: time scaling
  ``t -> t / T`` makes ``kappa T`` constant along the curve.
"""

import cmath
import math

import numpy as np
import pytest
from bifurcation_models import hutchinson, mackey_glass, neuron
from scipy.optimize import brentq
from scipy.signal import argrelmax

import fluidnet as fn
from fluidnet.bifurcation.collocation import profile_values


def test_extrema_of_a_circle_are_exact():
    """x' = mu x - y - x r^2, y' = x + mu y - y r^2: the orbit is the circle r = sqrt(mu)."""
    X, Y = fn.states("X Y")
    mu = fn.params("mu")
    t = fn.t
    r2 = X(t) ** 2 + Y(t) ** 2
    m = fn.Model({X: mu * X(t) - Y(t) - X(t) * r2, Y: X(t) + mu * Y(t) - Y(t) * r2}, {mu: 0.1})
    hp = fn.hopf_point(m, "mu", -0.5, 0.5)
    orb = fn.periodic_orbit(hp, 0.09, intervals=20, degree=4)
    assert orb.amplitude["X"] == pytest.approx(0.6, rel=1e-8)  # 2 sqrt(0.09)
    assert orb.maximum["Y"] == pytest.approx(0.3, rel=1e-8)
    # where: the maximum of X is a quarter period before that of Y (counterclockwise). The
    # orbit's phase comes from the Hopf eigenvector's, which LAPACK leaves arbitrary: where a
    # peak falls on a mesh point (X's on point 15 of 20 with NumPy 2.4.6 and SciPy 1.17.1) the
    # pieces meet there with unequal slopes and the time is off by 1.2e-6 of the quarter
    # period, 3.6e-8 with 40 intervals
    orb = fn.periodic_orbit(hp, 0.09, intervals=40, degree=4)
    tx, ty = orb.peak_times["X"][0], orb.peak_times["Y"][0]
    assert (ty - tx) % orb.period == pytest.approx(orb.period / 4, rel=1e-6)


@pytest.mark.parametrize("r", [math.pi / 2 + 0.01, 2.0])
def test_amplitude_to_the_orbits_accuracy(r):
    """Issue 23, item 5: 24 samples per interval gave 1e-6 to 2e-5 relative errors."""
    hp = fn.hopf_point(hutchinson(), "r", 1.0, 2.0, equilibrium={"x": 1.0})
    orb = fn.periodic_orbit(hp, r, intervals=40, degree=4)
    ref = fn.periodic_orbit(orb, intervals=400, degree=6, floquet=False)
    assert abs(orb.period / ref.period - 1) < 1e-9
    assert abs(orb.amplitude["x"] / ref.amplitude["x"] - 1) < 2e-7
    assert abs(orb.minimum["x"] / ref.minimum["x"] - 1) < 2e-7
    # (the samples' amplitude is what was reported before: far less accurate)
    s = np.linspace(0.0, 1.0, 24 * 40 + 1)
    v = profile_values(orb.mesh, orb.nodes, s)[:, 0]
    assert abs(np.ptp(v) / ref.amplitude["x"] - 1) > 1e-6


def _simulated(m, params, history, t_end, after):
    sol = fn.simulate(m, t_end, params=params, history=history, rtol=1e-10, atol=1e-12)
    return fn.oscillation(sol, "x", after=after), sol


@pytest.mark.parametrize(
    "model, name, lo, hi, value, eq",
    [
        (hutchinson, "r", 1.0, 2.0, 2.5, 1.0),
        (mackey_glass, "tau", 0.1, 2.0, 1.0, 1.0),
    ],
)
def test_orbit_far_from_onset(model, name, lo, hi, value, eq):
    """Newton from the normal form fails here (Mackey-Glass: "non-positive period"); the orbit
    is found by continuation from the Hopf point and agrees with a long simulation."""
    m = model()
    hp = fn.hopf_point(m, name, lo, hi, equilibrium={"x": eq})
    orb = fn.periodic_orbit(hp, value)
    assert orb.params[name] == pytest.approx(value, rel=1e-12)
    osc, _ = _simulated(m, {name: value}, {"x": 1.1 * eq}, 300.0, 200.0)
    assert osc.sustained
    assert orb.period == pytest.approx(osc.period, rel=1e-6)
    assert orb.amplitude["x"] == pytest.approx(osc.amplitude, rel=1e-5)


def test_no_orbit_says_what_was_tried():
    # supercritical: no cycle below the Hopf point, and the run there decays
    hp = fn.hopf_point(hutchinson(), "r", 1.0, 2.0, equilibrium={"x": 1.0})
    with pytest.raises(fn.AnalysisError) as err:
        fn.periodic_orbit(hp, 1.4, intervals=20)
    msg = str(err.value)
    assert "(1) Newton from the normal form" in msg and "(2) continuation" in msg
    assert "(3) a simulation" in msg


def test_period_doubling_and_branch_switching_in_mackey_glass():
    m = mackey_glass()
    hp = fn.hopf_point(m, "tau", 0.1, 2.0, equilibrium={"x": 1.0})
    br = fn.continue_orbits(hp, lo=0.0, hi=1.45, n_orbits=40, max_step=0.3)
    pds = [p for p in br.special if p.kind == "period-doubling"]
    assert len(pds) == 1
    pd = pds[0]
    assert isinstance(pd, fn.bifurcation.PeriodDoubling) and pd.certified
    assert abs(pd.multiplier + 1) < 1e-9
    assert 1.32 < pd.x < 1.33
    # before it the simulated cycle has one maximum per period, after it two alternating ones
    _, sol = _simulated(m, {"tau": 1.20}, {"x": 1.1}, 400.0, 300.0)
    _, sol2 = _simulated(m, {"tau": 1.40}, {"x": 1.1}, 400.0, 300.0)
    tt = np.linspace(300.0, 400.0, 40000)
    peaks = sol(tt, "x")[argrelmax(sol(tt, "x"))[0]]
    peaks2 = sol2(tt, "x")[argrelmax(sol2(tt, "x"))[0]]
    assert np.ptp(peaks[-6:]) < 1e-6 and np.ptp(peaks2[-6:]) > 1e-2
    # the doubled branch, switched to at the period doubling, holds that simulated cycle
    doubled = fn.continue_orbits(pd, target=1.40, n_orbits=40, max_step=0.3)
    orb = doubled.orbits[-1]
    assert orb.params["tau"] == pytest.approx(1.40, rel=1e-12)
    osc = fn.oscillation(sol2, "x", after=300.0)
    period_sim = 2 * osc.period if orb.period > 1.5 * osc.period else osc.period
    assert orb.period == pytest.approx(period_sim, rel=1e-5)
    assert orb.maximum["x"] == pytest.approx(float(np.max(peaks2[-6:])), rel=1e-5)
    assert orb.stable


def test_neimark_sacker_near_the_neuron_hopf_hopf_point():
    ts = 8.645  # just above the Hopf-Hopf point (taus = 8.63407)

    def phase(w):
        return cmath.phase(-(1j * w + 0.5 + cmath.exp(-1j * w * ts)) / cmath.exp(-0.2j * w))

    w1 = brentq(phase, 0.28, 0.36, xtol=1e-15)
    a21 = abs(1j * w1 + 0.5 + cmath.exp(-1j * w1 * ts)) ** 2
    m = neuron(taus=ts)
    hp = fn.hopf_at(m, "a21", a21, w1, equilibrium={"x1": 0.0, "x2": 0.0})
    br = fn.continue_orbits(hp, n_orbits=30, intervals=30, first_offset=1e-4, max_step=0.3)
    ns = [p for p in br.special if p.kind == "neimark-sacker"]
    assert len(ns) == 1 and ns[0].certified
    p = ns[0]
    lin = m.linearize(a21=p.x, equilibrium={"x1": 0.0, "x2": 0.0})
    r = lin.roots(k=6).values
    lam1 = r[np.argmin(np.abs(r.imag - w1))]
    lam2 = r[np.argmin(np.abs(r.imag - 0.9157))]
    assert lam2.real / lam1.real == pytest.approx(3.7719, abs=2e-3)
    assert abs(p.multiplier) == pytest.approx(1.0, abs=1e-8)
    theta = (2 * math.pi * lam2.imag / lam1.imag) % (2 * math.pi)
    assert abs(np.angle(p.multiplier)) == pytest.approx(min(theta, 2 * math.pi - theta), abs=2e-3)
    assert p.plot().get_title().startswith("neimark-sacker")


def test_fold_of_cycles_curve_keeps_kappa_T_constant():
    """x' = kappa (1 - x(t-T)^5): with s = t / T the law depends on kappa T only."""
    m = fn.models.kelly_primal([[1]], T=1.0, B=4.0)
    hp = fn.hopf_point(m, "kappa_1", 0.05, 5.0)
    br = fn.continue_orbits(hp, n_orbits=26, intervals=20)
    (fold,) = [p for p in br.special if p.kind == "fold"]
    assert 0.59 < fold.x < 0.61
    curve = fn.continue_cycle_folds(fold, "T_1", n_points=8)
    assert len(curve) == 8
    np.testing.assert_allclose(curve.x * curve.y, fold.x * 1.0, rtol=1e-8)
    np.testing.assert_allclose(curve.periods / curve.y, fold.period, rtol=1e-8)
    assert curve.plot().get_xlabel() == "kappa_1"
    ds = curve.to_xarray()
    assert ds.sizes["point"] == 8
