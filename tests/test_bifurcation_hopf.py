"""hopf_point: crossing, transversality and first Lyapunov coefficient against closed forms.

References derived here, independently of the code under test:

* Wright's equation ``x' = -a x(t-1) (1 + x)``: Hopf at ``a = pi/2``, ``omega = pi/2``; the
  bifurcating slowly oscillating orbit is ``x ~ r cos(omega t)`` with
  ``a - pi/2 = (3 pi - 2) r^2 / 40`` and ``omega = pi/2 - r^2 / 20`` (Chow & Mallet-Paret 1977,
  "Integral averaging and bifurcation", J. Differential Equations 26; also Hassard, Kazarinoff
  & Wan 1981, *Theory and Applications of Hopf Bifurcation*). Re-derived by Poincare-Lindstedt
  in :func:`wright_lindstedt` below (harmonic balance to third order), which gives the two
  coefficients (3 pi - 2)/40 and -1/20 used by the tests.
* the Hopf normal form ODE ``x' = mu x - y + s x r^2``, ``y' = x + mu y + s y r^2``: circles
  ``r^2 = -s mu`` with period ``2 pi``.
* scalar and two-delay linear parts whose roots are Lambert-W values
  (``scipy.special.lambertw``).
"""

import cmath
import math

import numpy as np
import pytest
import sympy
from scipy.optimize import brentq
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.bifurcation import NonSmoothError


def wright(**kw):
    x = fn.states("x")
    a, tau = fn.params("a tau")
    return fn.Model({x: -a * x(fn.t - tau) * (1 + x(fn.t))}, {a: 1.0, tau: 1.0}, **kw)


def wright_lindstedt():
    """Third-order harmonic balance of Wright's equation, in sympy.

    ``x = e (A E + c.c.) + e^2 (B0 + B2 E^2 + c.c.) + ...`` with ``E = exp(i w t)``,
    ``w = pi/2 + e^2 w2``, ``a = pi/2 + e^2 a2``. Order e^2 fixes ``B0``, ``B2``; the solvability
    condition at order e^3 (coefficient of ``E``) gives ``w2`` and ``a2`` per ``|A|^2``.
    """
    A, w2, a2 = sympy.symbols("A w2 a2", real=True)
    w0 = a0 = sympy.pi / 2
    E1 = sympy.exp(-sympy.I * w0)  # delay factor of the first harmonic
    E2 = sympy.exp(-2 * sympy.I * w0)
    # order e^2: x2' + a0 x2(t-1) + a0 x1(t-1) x1(t) = 0, harmonic by harmonic
    B0 = -a0 * A * A * (E1 + sympy.conjugate(E1)) / a0
    B2 = -a0 * A * A * E1 / (2 * sympy.I * w0 + a0 * E2)
    # order e^3, coefficient of E: d/dw (i w + a e^{-i w}) w2 A + e^{-i w} a2 A + a0 (x1(t-1) x2
    # + x2(t-1) x1) resonant part
    lin = (sympy.I - sympy.I * a0 * E1) * w2 * A + E1 * a2 * A
    nonlin = a0 * (A * E1 * B0 + A * sympy.conjugate(E1) * B2 + B2 * E2 * A + B0 * A)
    eq = sympy.expand(sympy.simplify((lin + nonlin) / A))
    sol = sympy.solve([sympy.re(eq), sympy.im(eq)], [w2, a2], dict=True)[0]
    # amplitude r = 2 |A| e: a - pi/2 = a2 e^2 = (a2/A^2) r^2 / 4
    return sympy.nsimplify(sol[a2] / A**2 / 4), sympy.nsimplify(sol[w2] / A**2 / 4)


def test_lindstedt_reference_matches_literature():
    ka, kw = wright_lindstedt()
    assert sympy.simplify(ka - (3 * sympy.pi - 2) / 40) == 0
    assert sympy.simplify(kw + sympy.Rational(1, 20)) == 0


def test_wright_hopf_point_and_criticality():
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0)
    assert hp.value == pytest.approx(math.pi / 2, rel=1e-11)
    assert hp.omega == pytest.approx(math.pi / 2, rel=1e-11)
    assert hp.period == pytest.approx(4.0, rel=1e-11)
    # d lambda/da from lambda + a e^{-lambda} = 0 at lambda = i pi/2: (pi/2 + i)/(1 + pi^2/4)
    speed = (math.pi / 2 + 1j) / (1 + math.pi**2 / 4)
    assert abs(hp.root_speed - speed) < 1e-7
    assert hp.direction == "destabilizing" and hp.applies
    assert hp.criticality == "supercritical" and hp.lyapunov < 0
    assert hp.orbit_side == 1
    # r = sqrt(40 (a - pi/2) / (3 pi - 2)): peak-to-peak 2 r
    K = 2 * math.sqrt(40 / (3 * math.pi - 2))
    assert hp.amplitude_coefficient["x"] == pytest.approx(K, rel=1e-9)
    da = 1e-4
    pred = hp.predict(math.pi / 2 + da)
    r = math.sqrt(40 * da / (3 * math.pi - 2))
    assert pred["amplitude"]["x"] == pytest.approx(2 * r, rel=1e-9)
    assert pred["period"] == pytest.approx(2 * math.pi / (math.pi / 2 - r * r / 20), rel=1e-10)
    with pytest.raises(fn.AnalysisError, match="no small periodic orbit"):
        hp.predict(math.pi / 2 - da)


def test_wright_with_delay_parameter_hopf_curve_is_a_tau_equal_pi_over_2():
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0)
    curve = fn.continue_hopf(hp, "tau", n_points=8, lyapunov=True)
    assert len(curve) == 8
    assert np.max(np.abs(curve.x * curve.y - math.pi / 2)) < 1e-10
    assert np.max(np.abs(curve.omega * curve.y - math.pi / 2)) < 1e-10
    # time rescaling leaves l1 = Re c1 / omega unchanged along a tau = pi/2
    assert np.allclose(curve.lyapunov, hp.lyapunov, rtol=1e-6) and curve.bautin == []


@pytest.mark.parametrize("s", [-1.0, 1.0])
def test_normal_form_ode(s):
    X, Y = fn.states("X Y")
    mu = fn.params("mu")
    t = fn.t
    r2 = X(t) ** 2 + Y(t) ** 2
    m = fn.Model(
        {X: mu * X(t) - Y(t) + s * X(t) * r2, Y: X(t) + mu * Y(t) + s * Y(t) * r2}, {mu: -0.3}
    )
    hp = fn.hopf_point(m, "mu", -0.5, 0.5)
    assert abs(hp.value) < 1e-12 and hp.omega == pytest.approx(1.0, rel=1e-12)
    assert hp.root_speed == pytest.approx(1.0, abs=1e-8)
    assert hp.criticality == ("supercritical" if s < 0 else "subcritical")
    assert hp.orbit_side == -int(s)
    # circle r^2 = -s mu: X peak-to-peak 2 sqrt(|mu|), period 2 pi
    pred = hp.predict(-s * 0.04)
    assert pred["amplitude"]["X"] == pytest.approx(0.4, rel=1e-10)
    assert pred["period"] == pytest.approx(2 * math.pi, rel=1e-10)


def test_scalar_lambert_w_root_and_cubic_coefficient():
    """x' = -b x - a x(t-1) - g x(t-1)^3: roots lambda = -b + W_k(-a e^b)."""
    x = fn.states("x")
    a, b, g = fn.params("a b g")
    bv, gv = 0.5, 2.0
    m = fn.Model({x: -b * x(fn.t) - a * x(fn.t - 1) - g * x(fn.t - 1) ** 3}, {a: 1.0, b: bv, g: gv})
    hp = fn.hopf_point(m, "a", 0.6, 3.0, b=bv, g=gv)
    lam = -bv + lambertw(-hp.value * math.exp(bv), 0)
    assert abs(lam.real) < 1e-9 and lam.imag == pytest.approx(hp.omega, rel=1e-9)
    # no other root to the right: the other branches of W lie further left
    for k in range(1, 4):
        assert (-bv + lambertw(-hp.value * math.exp(bv), k)).real < -0.5
    # cubic only: c1 = C/2 / Delta'(i w) with C = -6 g e^{-i w} (unit eigenvector), so
    # Re c1 / |q|^2 fixes the amplitude; compare the amplitude coefficient
    w = hp.omega
    d1 = 1 - hp.value * cmath.exp(-1j * w)  # Delta'(i w) of Delta = s + b + a e^{-s}
    c1 = 0.5 * (-6 * gv * cmath.exp(-1j * w)) / d1
    dlam = -cmath.exp(-1j * w) / d1  # d lambda / d a
    K = 4 * math.sqrt(abs(dlam.real / c1.real))
    assert hp.amplitude_coefficient["x"] == pytest.approx(K, rel=1e-8)
    # the cubic term raises the loop gain with the amplitude (describing function
    # a + 3 g r^2 / 4): the small orbit is unstable and lies on the stable side
    assert c1.real > 0 and hp.criticality == "subcritical" and hp.orbit_side == -1


def two_delay_model(sign: float = -1.0):
    """u' = -a u(t-1)(1 + v),  v' = -v - e v(t-2) + sign u^2: two delays, each block Lambert-W."""
    u, v = fn.states("u v")
    a, e = fn.params("a e")
    t = fn.t
    return fn.Model(
        {u: -a * u(t - 1) * (1 + v(t)), v: -v(t) - e * v(t - 2) + sign * u(t) ** 2},
        {a: 1.0, e: 0.3},
    )


@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_two_delay_linear_part_lambert_w(sign):
    m = two_delay_model(sign)
    hp = fn.hopf_point(m, "a", 1.0, 2.0)
    # u block: lambda = W_k(-a): the principal branch reaches i pi/2 at a = pi/2
    assert hp.value == pytest.approx(math.pi / 2, rel=1e-11)
    assert hp.omega == pytest.approx(math.pi / 2, rel=1e-11)
    assert abs(lambertw(-hp.value, 0) - 1j * math.pi / 2) < 1e-10
    # v block: lambda + 1 + e e^{-2 lambda} = 0 -> lambda = -1 + W_k(-2 e e^2)/2, all stable
    ev = 0.3
    for k in range(-3, 4):
        lv = -1 + lambertw(-2 * ev * math.exp(2), k) / 2
        assert abs(lv + 1 + ev * cmath.exp(-2 * lv)) < 1e-12 and lv.real < -0.1
    # the oscillation drives v's mean to sign * mean(u^2) / (1 + e), which scales the loop
    # gain a (1 + v): raised (sign +1) it makes the Hopf subcritical, lowered supercritical
    # (the amplitude itself is checked against collocation and simulation in
    # test_bifurcation_orbit.py)
    assert hp.criticality == ("subcritical" if sign > 0 else "supercritical")
    w_only = fn.hopf_point(wright(), "a", 1.0, 2.0)
    assert abs(hp.lyapunov - w_only.lyapunov) > 0.01


def test_degenerate_linear_law_and_real_crossing():
    x = fn.states("x")
    a, c = fn.params("a c")
    lin = fn.Model({x: -a * x(fn.t - 1) + c}, {a: 1.0, c: 1.0})
    hp = fn.hopf_point(lin, "a", 1.0, 2.0)
    assert hp.criticality == "degenerate"
    with pytest.raises(fn.AnalysisError, match="degenerate"):
        hp.predict(1.6)
    grow = fn.Model({x: a * x(fn.t) - x(fn.t) ** 3}, {a: -1.0})
    with pytest.raises(fn.AnalysisError, match="real"):
        fn.hopf_point(grow, "a", -1.0, 1.0)
    with pytest.raises(fn.OptionError, match="bifurcation parameter"):
        fn.hopf_point(wright(), "a", 1.0, 2.0, a=1.0)
    with pytest.raises(fn.AnalysisError, match="no crossing"):
        fn.hopf_point(wright(), "a", 0.1, 1.0)


def test_projected_equilibrium_on_its_boundary_is_flagged():
    """RCP: the queue sits at 0 at the equilibrium, so the smooth theory does not apply.

    The crossing itself is the linear one: on the D-subdivision boundary alpha = w sin w,
    beta = w^2 cos w (w = omega d0) of Dukkipati & McKeown's linearization.
    """
    m = fn.models.rcp()
    hp = fn.hopf_point(m, "beta", 0.1, 0.8, alpha=1.4)
    w = brentq(lambda w: w * math.sin(w) - 1.4, 1.0, 1.6)
    assert hp.value == pytest.approx(w * w * math.cos(w), rel=1e-9)
    assert hp.omega * 0.2 == pytest.approx(w, rel=1e-9)
    assert not hp.applies and "projected state q" in hp.nonsmooth
    for attr in ("c1", "lyapunov", "criticality"):
        with pytest.raises(NonSmoothError, match="q = 0"):
            getattr(hp, attr)
    with pytest.raises(NonSmoothError):
        fn.periodic_orbit(hp, 0.35)


def test_hopf_point_takes_params_like_every_entry_point():
    # issue 24: hopf_point(m, "a", 1, 2, params={"b": 0}) was "unknown parameter 'params'".
    # Wright's equation scaled by b: x' = -a b x(t-1)(1 + x(t)) has its Hopf point at
    # a b = pi/2 (closed form), so a* = pi/4 for b = 2.
    x = fn.states("x")
    a, b = fn.params("a b")
    m = fn.Model({x: -a * b * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0, b: 1.0})
    hp = fn.hopf_point(m, "a", 0.5, 1.0, params={"b": 2.0})
    assert abs(hp.value - math.pi / 4) < 1e-10
    assert fn.hopf_point(m, "a", 0.5, 1.0, b=2.0).value == hp.value
    assert (
        abs(fn.hopf_at(m, "a", hp.value, hp.omega, params={"b": 2.0}).lyapunov - hp.lyapunov)
        < 1e-12
    )
    with pytest.raises(fn.OptionError, match="'b' given both"):
        fn.hopf_point(m, "a", 0.5, 1.0, params={"b": 2.0}, b=2.0)
    with pytest.raises(fn.ParameterError, match="'b'"):
        fn.hopf_point(m, "a", 0.5, 1.0, params={"b": "2"})


def test_a_prediction_past_the_projection_says_so():
    """Issue 33: the PI AQM over TCP (hollot_pi) with a reference queue of 40 packets, Hopf in
    the propagation delay. At Tp = 0.57 the normal form predicts a queue of 882 packets
    peak-to-peak around 40 (it would reach -401), silently on main. The simulation (a second
    method) shows the model's cycle held at q = 0, about 135 packets peak-to-peak."""
    import warnings

    from fluidnet.bifurcation.smoothness import NonSmoothWarning

    m = fn.models.hollot_pi(q_ref=40.0)
    hp = fn.hopf_point(m, "Tp", 0.2, 0.6)
    with pytest.warns(NonSmoothWarning, match="crosses q = 0"):
        pr = hp.predict(0.57)
    q0 = hp.equilibrium["q"]
    assert q0 == pytest.approx(40.0)
    assert pr["amplitude"]["q"] > 2 * q0  # peak-to-peak: the lower peak q0 - amp/2 < 0
    assert pr["smooth"] is False and "q = 0" in pr["crosses"]
    eq = m.equilibrium(Tp=0.57)
    hist = {"W": 1.1 * eq["W"], "q": eq["q"], "p": eq["p"]}
    sol = fn.simulate(m, 600.0, params={"Tp": 0.57}, history=hist)
    osc = fn.oscillation(sol, "q", after=400.0)
    assert osc.sustained and float(np.min(sol["q"][sol.t > 400.0])) == 0.0
    assert osc.amplitude < 0.2 * pr["amplitude"]["q"]
    # close enough to onset the predicted orbit stays clear of q = 0: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonSmoothWarning)
        near = hp.predict(hp.value + 1e-6)
    assert near["smooth"] is True and near["crosses"] == []
    assert near["amplitude"]["q"] < q0
