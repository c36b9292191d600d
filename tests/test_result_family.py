"""Every analysis result has ``.to_xarray()`` and ``.plot()`` (issue 24, "one family"); the
data they give are checked against closed forms, not against the objects' own attributes only.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.models import UserNetwork, capacity_optimum, log_utility

matplotlib.use("Agg")
s = sympy.Symbol("s")


def test_bode_to_xarray_is_the_closed_form():
    # L = 2 e^{-0.1 s} / (s + 1): |L| = 2 / sqrt(w^2 + 1), phase = -atan(w) - 0.1 w
    ds = fn.bode(2 * sympy.exp(-0.1 * s) / (s + 1), w_range=(0.01, 100.0)).to_xarray()
    w = ds["omega"].values
    np.testing.assert_allclose(ds["magnitude"].values, 2 / np.sqrt(w**2 + 1), rtol=1e-12)
    np.testing.assert_allclose(ds["phase"].values, -np.arctan(w) - 0.1 * w, rtol=1e-9, atol=1e-12)
    # (the grid holds the gain crossover, where the decibels are 0 to rounding: an absolute
    # tolerance there, 1e-12 dB being 1e-13 of the magnitude)
    np.testing.assert_allclose(
        ds["magnitude_db"].values, 20 * np.log10(2 / np.sqrt(w**2 + 1)), rtol=1e-7, atol=1e-12
    )


def test_margins_to_xarray_and_plot_against_the_integrator_with_delay():
    # L = K e^{-sT} / s: gain crossover K, phase margin 90 - K T (deg), delay margin pi/(2K) - T
    K, T = 2.0, 0.3
    m = fn.margins(K * sympy.exp(-T * s) / s)
    ds = m.to_xarray()
    assert ds["gain_crossover"].values == pytest.approx([K], rel=1e-10)
    assert ds["phase_margins"].values[0] == pytest.approx(90 - math.degrees(K * T), rel=1e-9)
    assert ds["delay_margins"].values[0] == pytest.approx(math.pi / (2 * K) - T, rel=1e-9)
    assert float(ds["phase_margin"]) == m.phase_margin
    assert ds.attrs["closed_loop"] == "closed loop stable"
    # the phase crossovers: K T w... L real negative where w T = pi/2 mod 2 pi: w = pi/(2T)
    assert ds["phase_crossover"].values[0] == pytest.approx(math.pi / (2 * T), rel=1e-9)
    ax = m.plot()
    gain_pts = [ln for ln in ax.lines if ln.get_label() == "gain crossover"][0]
    x, y = gain_pts.get_xdata()[0], gain_pts.get_ydata()[0]
    assert math.hypot(x, y) == pytest.approx(1.0, rel=1e-9)  # on the unit circle


def test_nyquist_to_xarray_counts_and_contour():
    # L = 2 / (s - 1): one open-loop RHP pole, encircled once counterclockwise: stable
    ds = fn.nyquist(2 / (s - 1)).to_xarray()
    assert ds.attrs["open_loop_rhp_poles"] == 1 and ds.attrs["closed_loop_rhp_roots"] == 0
    assert ds.attrs["stable"] == 1
    w = ds["omega"].values
    np.testing.assert_allclose(ds["response"].values, 2 / (1j * w - 1), rtol=1e-12)
    assert ds["contour"].size == ds["contour_response"].size > 0


def test_oscillation_to_xarray_and_plot_on_the_critical_loop():
    # x' = -(pi/2) x(t - 1): a root pair at +-i pi/2, a sustained cycle of period 4
    x = fn.states("x")
    m = fn.Model({x: -(math.pi / 2) * x(fn.t - 1)}, {})
    sol = fn.simulate(m, 60.0, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
    osc = fn.oscillation(sol, "x", after=30.0)
    ds = osc.to_xarray()
    assert float(ds["period"]) == pytest.approx(4.0, rel=1e-4)
    assert np.diff(ds["peak_times"].values) == pytest.approx(4.0, rel=1e-4)
    assert ds.attrs["state"] == "x" and ds.attrs["window_start"] == 30.0
    ax = osc.plot()
    assert ax.get_xlim() == pytest.approx((30.0, 60.0))


def test_hopf_point_and_orbit_of_the_normal_form():
    """z' = (mu + i) z - z |z|^2: Hopf at mu = 0, omega = 1, l1 = -1; at mu the cycle is the
    circle of radius sqrt(mu), period 2 pi, nontrivial multiplier exp(-2 mu 2 pi)."""
    X, Y = fn.states("X Y")
    mu = fn.params("mu")
    t = fn.t
    r2 = X(t) ** 2 + Y(t) ** 2
    m = fn.Model({X: mu * X(t) - Y(t) - X(t) * r2, Y: X(t) + mu * Y(t) - Y(t) * r2}, {mu: 0.1})
    hp = fn.hopf_point(m, "mu", -0.5, 0.5)
    ds = hp.to_xarray()
    assert abs(float(ds["value"])) < 1e-10 and float(ds["omega"]) == pytest.approx(1.0)
    # with x = x* + 2 Re(z q), |q| = 1 (the module's convention), q = (1, -i)/sqrt(2) and
    # X + i Y = sqrt(2) z: z' = (mu + i) z - 2 z |z|^2, so c1 = -2 and l1 = -2 / omega = -2
    assert float(ds["lyapunov"]) == pytest.approx(-2.0, rel=1e-8)
    np.testing.assert_allclose(ds["equilibrium"].values, [0.0, 0.0], atol=1e-12)
    assert list(ds["state"].values) == ["X", "Y"] and ds.attrs["parameter"] == "mu"
    orb = fn.periodic_orbit(hp, 0.09, intervals=20, degree=4)
    od = orb.to_xarray(n_points=200)
    assert od.attrs["period"] == pytest.approx(2 * math.pi, rel=1e-8)
    r = np.hypot(od["x"].sel(state="X").values, od["x"].sel(state="Y").values)
    np.testing.assert_allclose(r, 0.3, rtol=1e-6)
    np.testing.assert_allclose(od["amplitude"].values, [0.6, 0.6], rtol=1e-8)
    mult = np.sort(np.abs(od["multipliers"].values))
    assert mult[-1] == pytest.approx(1.0, abs=1e-8)
    assert mult[0] == pytest.approx(math.exp(-2 * 0.09 * 2 * math.pi), rel=1e-6)
    assert orb.plot() is not None and hp.plot() is not None


def test_stability_boundary_to_xarray_holds_every_curve():
    # x' = -a x - k x(t - 1): Hopf curve k = sqrt(a^2 + w^2) with w = -a tan(w) ... checked by
    # the characteristic equation at each point: -a - k e^{-i w} = i w
    x = fn.states("x")
    a, k = fn.params("a k")
    m = fn.Model({x: -a * x(fn.t) - k * x(fn.t - 1)}, {a: 0.5, k: 1.0})
    b = fn.stability_boundary(m, "a", "k", x_range=(0.1, 1.0), y_range=(0.1, 3.0))
    ds = b.to_xarray()
    assert ds.sizes["point"] == sum(len(c) for c in b.curves) > 10
    hopf = ds.where(ds["kind"] == "hopf", drop=True)
    av, kv, wv = hopf["a"].values, hopf["k"].values, hopf["omega"].values
    np.testing.assert_allclose(-av - kv * np.exp(-1j * wv), 1j * wv, atol=1e-7)
    assert ds.attrs["x_name"] == "a" and ds.attrs["y_name"] == "k"


def test_window_distribution_and_capacity_optimum():
    d = fn.constant_mark_distribution(alpha=-1.0, c1=1.0, c2=0.5, p=0.01)
    ds = d.to_xarray()
    assert np.trapezoid(ds["pdf"].values, ds["w"].values) == pytest.approx(1.0, rel=1e-12)
    assert ds["cdf"].values[-1] == pytest.approx(1.0, abs=1e-6)
    assert ds.attrs["mean"] == pytest.approx(d.mean)
    # two log-utility users on one link of capacity 300 (weights 1, N = 50 each): equal rates
    opt = capacity_optimum(UserNetwork([[1, 1]], [log_utility(), log_utility()], C=300, N=50))
    od = opt.to_xarray()
    np.testing.assert_allclose(od["x"].values, [3.0, 3.0], rtol=1e-8)  # 300 / (2 * 50)
    assert od["loads"].values == pytest.approx([300.0], rel=1e-8)
    assert opt.plot().patches


def test_queue_oscillation_of_a_sine():
    t = np.linspace(0.0, 20.0, 20001)
    q = 50 + 40 * np.sin(2 * np.pi * t / 0.5)  # swing (q95 - q5) / mean = 1.58
    qo = fn.packet.queue_oscillation(t, q, rtt=0.05, after=5.0)
    ds = qo.to_xarray()
    assert float(ds["period"]) == pytest.approx(0.5, rel=2e-2)
    assert float(ds["mean"]) == pytest.approx(50.0, rel=1e-3)
    assert bool(ds["oscillating"]) and ds.attrs["window_start"] == pytest.approx(5.0)
    assert qo.plot().get_xlim() == pytest.approx(qo.window)


def test_phase_portrait_to_xarray_adds_the_equilibrium():
    x, y = fn.states("x y")
    m = fn.Model({x: -x(fn.t) + y(fn.t), y: -y(fn.t) + 1.0}, {})
    pp = fn.phase_portrait(m, [{"x": 0.0, "y": 0.0}], x="x", y="y", t_end=5.0, n_points=51)
    ds = pp.to_xarray()
    assert ds.attrs["equilibrium_x"] == pytest.approx(1.0) and ds.attrs["x_name"] == "x"
    assert "equilibrium_x" not in pp.data.attrs  # a copy
