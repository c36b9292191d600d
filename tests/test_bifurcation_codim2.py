"""Codimension-two points on Hopf curves against closed forms, harmonic balance and DDE-BIFTOOL.

Independent references, derived here:

* a scalar DDE ``x' = -a z + k z^2 + b z^3 + c z^5``, ``z = x(t - 1)``: its first Lyapunov
  coefficient by hand (below), hence the Bautin point ``b*``; its second Lyapunov coefficient by
  Poincare-Lindstedt harmonic balance to fifth order (:func:`lindstedt`, no center manifold);
  for ``k = 0`` the fifth-order normal form by hand, ``l2 = -10 c / (1 + pi^2 / 4)``;
* two oscillators coupled only through cubic terms: the characteristic matrix is diagonal, the
  Hopf-Hopf point is where both factors have their Hopf points, and the third-order normal
  form coefficients are single cubic derivatives (formulas below);
* a real mode and an oscillator coupled by quadratic terms: a zero-Hopf point where the real
  root crosses 0, second-order coefficients by hand;
* Bogdanov's normal form with a delay, ``x' = y``, ``y' = b1 + b2 x(t - 1) + x^2 + x y``: its Hopf
  curve in closed form (parametrized by the frequency) ends at the Bogdanov-Takens point
  ``(b1, b2) = (0, 0)``;
* DDE-BIFTOOL's printed values for the neuron of Shayer & Campbell (demos/neuron: Hopf point
  a21 = 0.80712, omega = 0.78197, L1 = -0.39616; Hopf-Hopf at (a21, taus) = (0.2072962661,
  8.6340742204) [and 0.2072962626, 8.6340742187 from the other curve], omega1 = 0.3287154066,
  omega2 = 0.9157115877, g2100 = -0.030007 - 0.0094837i, g1011 = -0.060013 - 0.018967i,
  g1110 = -0.11318 + 0.037831i, g0021 = -0.056592 + 0.018915i, theta = 1.0605,
  delta = 3.7719).
"""

import cmath
import math

import numpy as np
import pytest
from bifurcation_models import neuron
from scipy.optimize import brentq

import fluidnet as fn

W = math.pi / 2  # the Hopf frequency (and gain) of x' = -a x(t - 1)


def scalar(k=1.0, b=0.0, c=0.5):
    x = fn.states("x")
    a, kk, bb, cc = fn.params("a k b c")
    z = x(fn.t - 1)
    return fn.Model(
        {x: -a * z + kk * z**2 + bb * z**3 + cc * z**5},
        {a: 1.0, kk: k, bb: b, cc: c},
        name="bautin_scalar",
    )


def bautin_b(k):
    """The Bautin point b* of the scalar model, by hand.

    At a = pi/2, omega = pi/2, q = 1: phi(-1) = -i, Delta(lam) = lam + a e^{-lam},
    p = 1 / Delta'(i omega) = 1 / (1 + i pi/2). B(u, v) = 2k u(-1) v(-1), C = 6b u v w (-1).
    h20(-1) = -h20(0) = 2k / (i pi - pi/2) (Delta(2 i omega) = i pi - pi/2), h11 = 2k / a = 4k/pi.
    c1 = [-6ib + 2k i h20(-1) - 2 * 2k i h11] / (2 (1 + i pi/2)); Re c1 = 0 is linear in b.
    """
    D = 2 * (1 + 1j * W)
    S = 2j * 2 / (1j * math.pi - math.pi / 2) - 4j * 4 / math.pi
    return k * k * (S / D).real / (6j / D).real


def lindstedt(k, b, c, order=5):
    """Harmonic balance of the scalar model: ``a = pi/2 + a2 r^2 + a4 r^4 + ...`` for the
    periodic solution of first-harmonic amplitude ``r`` (``x = r cos(Omega t) + ...``).

    The solution is a double series ``sum_j r^j sum_m C[j, m] exp(i m theta)``; at each order
    the harmonics ``m != +-1`` are solved from ``(i m w0 + a0 e^{-i m w0}) C[j, m] = -rest``
    and, at odd orders, the first harmonic fixes the corrections of ``Omega`` and ``a``.
    """
    M, H = order, 2 * order + 1
    w = np.zeros(order + 1)
    a = np.zeros(order + 1)
    w[0] = a[0] = W
    C = np.zeros((order + 1, H), dtype=complex)
    C[1, M - 1] = C[1, M + 1] = 0.5
    ms = np.arange(-M, M + 1)

    def mul(A, B):
        out = np.zeros_like(A)
        for j1 in range(order + 1):
            for j2 in range(order + 1 - j1):
                out[j1 + j2] += np.convolve(A[j1], B[j2])[M : M + H]
        return out

    def scalar_series(s):
        out = np.zeros((order + 1, H), dtype=complex)
        out[:, M] = s
        return out

    def residual(C, w, a):
        lhs = mul(scalar_series(w), C * (1j * ms))
        D = np.zeros_like(C)
        delta = w.copy()
        delta[0] = 0.0
        for mi, m in enumerate(ms):
            s = np.zeros(order + 1, dtype=complex)  # exp(-i m (Omega - w0)) in r
            s[0] = 1.0
            term = s.copy()
            for p in range(1, order + 1):
                term = np.convolve(term, -1j * m * delta)[: order + 1] / p
                s += term
            for j in range(order + 1):
                D[j, mi] = np.dot(C[: j + 1, mi], s[j::-1]) * np.exp(-1j * m * W)
        D2 = mul(D, D)
        D3 = mul(D2, D)
        return lhs + mul(scalar_series(a), D) - k * D2 - b * D3 - c * mul(D3, D2)

    for j in range(2, order + 1):
        if j % 2:
            R = residual(C, w, a)[j, M + 1]
            w1, a1 = w.copy(), a.copy()
            w1[j - 1] = a1[j - 1] = 1.0
            dw = residual(C, w1, a)[j, M + 1] - R
            da = residual(C, w, a1)[j, M + 1] - R
            sol = np.linalg.solve([[dw.real, da.real], [dw.imag, da.imag]], [-R.real, -R.imag])
            w[j - 1], a[j - 1] = sol
        R = residual(C, w, a)[j]
        for mi, m in enumerate(ms):
            if abs(m) != 1 and abs(m) <= j:
                C[j, mi] = -R[mi] / (1j * m * W + W * np.exp(-1j * m * W))
        assert np.max(np.abs(residual(C, w, a)[j])) < 1e-12
    return a


def test_lindstedt_reproduces_the_cubic_coefficient():
    # x' = -a z + b z^3: the first harmonic of z^3 is (3/4) r^2 z, so a2 = 3 b / 4
    assert lindstedt(0.0, 1.0, 0.0)[2] == pytest.approx(0.75, rel=1e-14)


def test_bautin_point_and_second_lyapunov_coefficient():
    """Located on the Hopf curve a = pi/2 in (a, b); l2 against harmonic balance: at the Bautin
    point a - pi/2 = a4 r^4 with a4 = -omega l2 / (16 Re lambda'(a)) (r = 2 rho |q|, |q| = 1)."""
    k, c = 1.0, 0.5
    m = scalar(k=k, b=-1.0, c=c)
    hp = fn.hopf_point(m, "a", 1.0, 2.0, equilibrium={"x": 0.0})
    curve = fn.continue_hopf(hp, "b", n_points=20, step=0.05, max_step=0.5)
    bautin = [p for p in curve.special if p.kind == "bautin"]
    assert len(bautin) == 1 and isinstance(bautin[0], fn.bifurcation.BautinPoint)
    bp = bautin[0]
    b_star = bautin_b(k)
    assert abs(bp.y - b_star) < 1e-8 and abs(bp.x - W) < 1e-12
    a = lindstedt(k, b_star, c)
    assert abs(a[2]) < 1e-12  # harmonic balance agrees that b* is the Bautin point
    re_speed = W / (1 + W * W)  # d Re lambda / da of lambda + a e^{-lambda} = 0 at i pi/2
    l2_ref = -16 * re_speed * a[4] / W
    assert bp.l2 == pytest.approx(l2_ref, rel=1e-8)
    assert abs(bp.c1.real) < 1e-10 * abs(bp.c1)
    # the curve itself: l1 changes sign there (Re c1 = -3 pi b / (2 (1 + pi^2/4)) + k^2 (...):
    # subcritical for b < b*)
    assert curve.lyapunov[0] > 0 > curve.lyapunov[-1]
    assert "subcritical" in bp.unfolding or "supercritical" in bp.unfolding
    ds = bp.to_xarray()
    assert float(ds["l2"]) == bp.l2


def test_bautin_pure_quintic_by_hand():
    """k = 0: the Bautin point is b = 0, where only the quintic term acts at fifth order:
    c2 = p E(phi, phi, phi, conj phi, conj phi) / 12 = 120 c e^{-i pi/2} / (12 (1 + i pi/2)),
    l2 = Re c2 / omega = -10 c / (1 + pi^2 / 4)."""
    c = 0.5
    m = scalar(k=0.0, b=-0.5, c=c)
    hp = fn.hopf_point(m, "a", 1.0, 2.0, equilibrium={"x": 0.0})
    curve = fn.continue_hopf(hp, "b", n_points=10, step=0.05, max_step=0.5)
    (bp,) = curve.special
    assert abs(bp.y) < 1e-10
    assert bp.l2 == pytest.approx(-10 * c / (1 + math.pi**2 / 4), rel=1e-9)


def oscillators(beta1=-1.0, beta2=-0.5, gamma1=0.7, gamma2=-0.4):
    """x' = -a x(t-1) + beta1 x(t-1)^3 + gamma1 x y^2, y' = -b y(t-1.5) + beta2 y(t-1.5)^3
    + gamma2 y x^2: Delta = diag(lam + a e^{-lam}, lam + b e^{-1.5 lam})."""
    x, y = fn.states("x y")
    a, b = fn.params("a b")
    t = fn.t
    return fn.Model(
        {
            x: -a * x(t - 1) + beta1 * x(t - 1) ** 3 + gamma1 * x(t) * y(t) ** 2,
            y: -b * y(t - 1.5) + beta2 * y(t - 1.5) ** 3 + gamma2 * y(t) * x(t) ** 2,
        },
        {a: 1.0, b: 0.5},
        name="two_oscillators",
    )


def test_hopf_hopf_point_of_a_factored_characteristic_equation():
    """The x-Hopf curve a = pi/2 meets the y-pair at b tau2 = pi/2 (b = pi/3, omega2 = pi/3).

    With eigenvectors e_x, e_y and p_j = e_j / Delta_j'(i omega_j), no quadratic terms:
    g2100 = p1 C(phi1, phi1, conj phi1) / 2 = 3 beta1 e^{-i w1} / D1', g1011 = 2 gamma1 / D1',
    g1110 = 2 gamma2 / D2', g0021 = 3 beta2 e^{-i w2 tau2} / D2' with
    D1' = 1 + a e^{-i w1}... = 1 - a e^{-i w1}(-1) written out below."""
    beta1, beta2, gamma1, gamma2 = -1.0, -0.5, 0.7, -0.4
    m = oscillators(beta1, beta2, gamma1, gamma2)
    hp = fn.hopf_point(m, "a", 1.0, 2.0, b=0.5, equilibrium={"x": 0.0, "y": 0.0})
    assert hp.value == pytest.approx(W, rel=1e-12)
    curve = fn.continue_hopf(hp, "b", n_points=15, step=0.1, max_step=0.5)
    hh = [p for p in curve.special if p.kind == "hopf-hopf"]
    assert len(hh) == 1
    p = hh[0]
    w1, w2, tau2 = W, math.pi / 3, 1.5
    assert abs(p.x - W) < 1e-12 and abs(p.y - math.pi / 3) < 1e-8
    assert p.omega1 == pytest.approx(w1, rel=1e-10) and p.omega2 == pytest.approx(w2, rel=1e-8)
    d1 = 1 - W * cmath.exp(-1j * w1)  # Delta_1'(i w1) = 1 - a e^{-i w1}
    d2 = 1 - (math.pi / 3) * tau2 * cmath.exp(-1j * w2 * tau2)
    ref = {
        "g2100": 3 * beta1 * cmath.exp(-1j * w1) / d1,
        "g1011": 2 * gamma1 / d1,
        "g1110": 2 * gamma2 / d2,
        "g0021": 3 * beta2 * cmath.exp(-1j * w2 * tau2) / d2,
    }
    for name, value in ref.items():
        assert abs(getattr(p, name) - value) < 1e-7 * abs(value), name
    theta = ref["g1011"].real / ref["g0021"].real
    delta = ref["g1110"].real / ref["g2100"].real
    assert p.theta == pytest.approx(theta, rel=1e-7) and p.delta == pytest.approx(delta, rel=1e-7)
    assert p.unfolding.startswith("simple" if ref["g2100"].real * ref["g0021"].real > 0 else "d")


def test_zero_hopf_point_second_order_coefficients():
    """u' = -e u + k1 u^2 + k2 y^2, y' = -a y(t-1) + k3 u y: the y-Hopf curve a = pi/2 in (a, e)
    crosses the real root -e at e = 0. With q0 = e_u, p0 = e_u (Delta_u = lam + e, Delta_u' = 1),
    q1 = e_y, p1 = e_y / (1 + i pi/2): g200 = k1, g011 = 2 k2, g110 = k3 / (1 + i pi/2)."""
    u, y = fn.states("u y")
    a, e = fn.params("a e")
    t = fn.t
    k1, k2, k3 = 0.8, -0.6, 1.3
    m = fn.Model(
        {u: -e * u(t) + k1 * u(t) ** 2 + k2 * y(t) ** 2, y: -a * y(t - 1) + k3 * u(t) * y(t)},
        {a: 1.0, e: 0.5},
        name="zero_hopf",
    )
    hp = fn.hopf_point(m, "a", 1.0, 2.0, equilibrium={"u": 0.0, "y": 0.0})
    curve = fn.continue_hopf(hp, "e", n_points=15, step=0.1, max_step=0.5, direction=-1)
    zh = [p for p in curve.special if p.kind == "zero-hopf"]
    assert len(zh) == 1
    p = zh[0]
    assert abs(p.y) < 1e-8 and abs(p.x - W) < 1e-12 and p.omega == pytest.approx(W, rel=1e-10)
    assert p.g200 == pytest.approx(k1, rel=1e-8)
    assert p.g011 == pytest.approx(2 * k2, rel=1e-8)
    assert p.g110 == pytest.approx(k3 / (1 + 1j * W), rel=1e-8)
    assert p.s == pytest.approx(2 * k1 * k2, rel=1e-8)


def test_bogdanov_takens_point_ends_the_hopf_curve():
    """Hopf curve of x' = y, y' = b1 + b2 x(t-1) + x^2 + x y, parametrized by omega:
    x* = -w^2 / (2 + w cot w), b2 = x* w / sin w, b1 = -b2 x* - x*^2; it ends at (0, 0)."""
    x, y = fn.states("x y")
    b1, b2 = fn.params("b1 b2")
    t = fn.t
    m = fn.Model({x: y(t), y: b1 + b2 * x(t - 1) + x(t) ** 2 + x(t) * y(t)}, {b1: 0.0, b2: 0.0})
    w = 0.8
    xs = -(w**2) / (2 + w / math.tan(w))
    B2 = xs * w / math.sin(w)
    B1 = -B2 * xs - xs**2
    hp = fn.hopf_at(m, "b1", B1, w, b2=B2, equilibrium={"x": xs, "y": 0.0})
    curve = fn.continue_hopf(hp, "b2", n_points=40, direction=1, lyapunov=False)
    om = curve.omega[curve.omega > 1e-3]
    X = -(om**2) / (2 + om / np.tan(om))
    np.testing.assert_allclose(curve.y[: om.size], X * om / np.sin(om), atol=1e-10)
    np.testing.assert_allclose(curve.x[: om.size], -(X * om / np.sin(om)) * X - X**2, atol=1e-10)
    (bt,) = [p for p in curve.special if p.kind == "bogdanov-takens"]
    assert abs(bt.x) < 1e-10 and abs(bt.y) < 1e-10 and bt.jordan
    assert "Bogdanov-Takens" in curve.stop_reason


def test_neuron_hopf_point_as_ddebiftool_prints():
    hp = fn.hopf_point(neuron(), "a21", 0.3, 1.2, equilibrium={"x1": 0.0, "x2": 0.0})
    assert hp.value == pytest.approx(0.80712, abs=5e-6)
    assert hp.omega == pytest.approx(0.78197, abs=5e-6)
    assert hp.lyapunov == pytest.approx(-0.39616, abs=5e-6)


def neuron_hopf(ts):
    """A Hopf point of the neuron at ``taus = ts`` from its factored characteristic equation:
    at x = 0, (lam + k - b e^{-lam ts})^2 = a12 a21 e^{-0.4 lam}, so on the branch
    lam + k - b e^{-lam ts} = -sqrt(a21) e^{-0.2 lam}: the phase fixes omega, the modulus a21."""

    def phase(w):
        return cmath.phase(-(1j * w + 0.5 + cmath.exp(-1j * w * ts)) / cmath.exp(-0.2j * w))

    w = brentq(phase, 0.3, 0.36, xtol=1e-15)
    return abs(1j * w + 0.5 + cmath.exp(-1j * w * ts)) ** 2, w


def test_neuron_hopf_hopf_point_as_ddebiftool_prints():
    a21, w = neuron_hopf(8.6)
    hp = fn.hopf_at(neuron(taus=8.6), "a21", a21, w, equilibrium={"x1": 0.0, "x2": 0.0})
    curve = fn.continue_hopf(hp, "taus", n_points=12, step=0.002, max_step=0.01)
    hh = [p for p in curve.special if p.kind == "hopf-hopf"]
    assert len(hh) == 1
    p = hh[0]
    # DDE-BIFTOOL's two estimates (from the two curves) differ by 3.5e-9 in a21
    assert p.x == pytest.approx(0.2072962661, abs=1e-8)
    assert p.y == pytest.approx(8.6340742204, abs=1e-8)
    assert sorted([p.omega1, p.omega2]) == pytest.approx([0.3287154066, 0.9157115877], abs=1e-9)
    # its normal form: DDE-BIFTOOL's g's (unit eigenvectors), theta and delta (5 digits)
    first = p.omega1 < p.omega2
    g = {"g2100": -0.030007 - 0.0094837j, "g1011": -0.060013 - 0.018967j,
         "g1110": -0.11318 + 0.037831j, "g0021": -0.056592 + 0.018915j}  # fmt: skip
    if not first:  # the same point seen from the other curve: the modes swap
        g = {"g2100": g["g0021"], "g1011": g["g1110"], "g1110": g["g1011"], "g0021": g["g2100"]}
    for name, value in g.items():
        assert abs(getattr(p, name) - value) < 6e-6, name
    assert p.theta == pytest.approx(1.0605 if first else 3.7719, abs=6e-5)
    assert p.delta == pytest.approx(3.7719 if first else 1.0605, abs=6e-5)
    assert p.unfolding == "simple, type I"
    ax = curve.plot()
    assert ax.get_xlabel() == "a21" and ax.get_legend() is not None
    ax = p.plot()
    assert "hopf-hopf" in ax.get_title()


def test_onset_map_fold_of_cycles_leaves_the_bautin_point():
    """With l2 < 0 (c = 2: the quintic term outweighs the quadratic one) a curve of folds of
    cycles leaves the Bautin point into the subcritical side b < b*: between it and the Hopf
    line a stable large cycle coexists with the stable equilibrium."""
    m = scalar(k=1.0, b=-1.0, c=2.0)
    hp = fn.hopf_point(m, "a", 1.0, 2.0, equilibrium={"x": 0.0})
    om = fn.onset_map(hp, "b", x_range=(1.0, 1.6), y_range=(-1.5, 0.0), n_points=20,
                      fold_points=8, n_orbits=12)  # fmt: skip
    (bp,) = [p for p in om.hopf.special if p.kind == "bautin"]
    assert bp.l2 < 0
    near = [f for f in om.folds if np.min(np.hypot(f.x - bp.x, f.y - bp.y)) < 2e-3]
    assert near, [repr(f) for f in om.folds]
    for f in near:
        assert np.all(f.y <= bp.y + 1e-9)  # the subcritical side
        assert np.all(f.x <= W + 1e-9)  # cycles before the Hopf line: bistability
    ax = om.plot()
    assert ax.get_legend() is not None


def test_criticality_table_of_wright_delays():
    """x' = -a x(t - tau)(1 + x): the Hopf point is a tau = pi/2; time scaling leaves l1 / a
    ... supercritical at every tau (Chow & Mallet-Paret)."""
    x = fn.states("x")
    a, tau = fn.params("a tau")
    m = fn.Model({x: -a * x(fn.t - tau) * (1 + x(fn.t))}, {a: 1.0, tau: 1.0})
    taus = [0.5, 1.0, 2.0]
    table = fn.criticality_table(m, "a", [1.2 / t for t in taus], [2.0 / t for t in taus],
                                 [{"tau": t} for t in taus], equilibrium={"x": 0.0})  # fmt: skip
    assert table.counts() == {"supercritical": 3}
    for row, t in zip(table.rows, taus, strict=True):
        assert row["value"] * t == pytest.approx(W, rel=1e-10)
    ds = table.to_xarray()
    assert list(ds["criticality"].values) == ["supercritical"] * 3
    assert table.plot(x="tau").get_xlabel() == "tau"
