"""Branches of equilibria through folds, and fold curves, against closed forms.

References derived here by hand:

* ``x' = p + q x(t - 1) - x^2``: equilibria ``x^2 - q x - p = 0`` fold at ``p = -q^2 / 4``,
  ``x = q / 2``. There ``Delta(lam) = lam + 2 x - q e^{-lam}``, ``Delta'(0) = 1 + q`` and
  ``f_xx = -2``, so the fold's normal form ``xi' = beta + a xi^2`` has ``a = -1 / (1 + q)`` (the
  delay enters through ``Delta'(0)``); at ``q = -1`` the zero root is double: a
  Bogdanov-Takens point at ``(p, q) = (-1/4, -1)``. At ``q = 1`` the roots of
  ``lam + 2 x - e^{-lam}`` are all stable for ``x > 1/2`` (``|1| < 2 x``: stable for every
  delay); for ``x < 1/2`` exactly one is unstable (the real root, positive at ``lam = 0`` and
  ``|1| < |2 x|`` away from ``|2 x| <= 1``, where no complex pair can cross).
* ``x' = p + q x(t - 1) - x^3``: folds at ``q = 3 x^2``, ``p = -2 q x / 3``, meeting at the
  cusp ``(0, 0)``, where ``Delta'(0) = 1 + q = 1`` and ``f_xxx = -6``: ``w' = -w^3``.
* Bogdanov's normal form with a delay (as in test_bifurcation_codim2): ``x' = y``,
  ``y' = b1 + b2 x(t - 1) + x^2 + x y`` folds on ``b1 = b2^2 / 4`` (``x = -b2 / 2``), through
  the Bogdanov-Takens point ``(0, 0)`` where its Hopf curve ends.
* ``u' = -e + u^2 + k2 y^2``, ``y' = -a y(t - 1) + k3 u y``: the equilibria ``u = +-sqrt(e)``,
  ``y = 0`` fold on ``e = 0``; along it the ``y`` pair crosses at ``a = pi / 2``: a zero-Hopf
  point with ``g200 = 1``, ``g011 = 2 k2``, ``g110 = k3 / (1 + i pi / 2)``.
* Wright's equation ``x' = -a x(t - 1)(1 + x)``: the equilibrium 0 has its Hopf point at
  ``a = pi / 2``.
"""

import math

import numpy as np
import pytest

import fluidnet as fn

W = math.pi / 2


def quadratic():
    x = fn.states("x")
    p, q = fn.params("p q")
    return fn.Model({x: p + q * x(fn.t - 1) - x(fn.t) ** 2}, {p: 1.0, q: 1.0}, name="fold")


def cubic():
    x = fn.states("x")
    p, q = fn.params("p q")
    return fn.Model({x: p + q * x(fn.t - 1) - x(fn.t) ** 3}, {p: 0.0, q: 1.0}, name="cusp")


def test_branch_through_a_fold():
    curve = fn.continue_equilibria(quadratic(), "p", -1.0, 1.0, direction=-1,
                                   equilibrium={"x": 1.6})  # fmt: skip
    (fold,) = curve.folds
    assert fold.x == pytest.approx(-0.25, abs=1e-12)
    assert fold.equilibrium["x"] == pytest.approx(0.5, abs=1e-9)
    assert fold.a == pytest.approx(-0.5, rel=1e-8)
    assert np.min(np.abs(fold.roots)) < 1e-8
    # every point an equilibrium: x^2 - q x - p = 0, both roots of the quadratic visited
    x, p = curve["x"], curve.x
    np.testing.assert_allclose(x**2 - x - p, 0.0, atol=1e-12)
    assert x.max() > 1.5 and x.min() < -0.5
    # the upper equilibria stable, the lower ones with one real root > 0
    np.testing.assert_array_equal(curve.unstable, np.where(x > 0.5, 0, 1))
    assert "p left [-1, 1]" in curve.stop_reason
    ds = curve.to_xarray()
    assert set(ds.data_vars) == {"p", "x", "unstable"}
    ax = curve.plot()
    assert ax.get_xlabel() == "p" and ax.get_legend() is not None
    assert "fold" in fold.plot().get_title()


def test_fold_curve_and_bogdanov_takens_point():
    curve = fn.continue_equilibria(quadratic(), "p", -1.0, 1.0, direction=-1,
                                   equilibrium={"x": 1.6})  # fmt: skip
    (fold,) = curve.folds
    up = fn.continue_equilibrium_folds(fold, "q", n_points=20, y_range=(0.0, 3.0))
    q = up.y
    assert q.max() > 1.5
    np.testing.assert_allclose(up.x, -(q**2) / 4, atol=1e-13)
    np.testing.assert_allclose(up.states["x"], q / 2, atol=1e-12)
    np.testing.assert_allclose(up.a, -1 / (1 + q), rtol=1e-7)
    down = fn.continue_equilibrium_folds(fold, "q", n_points=40, direction=-1,
                                         y_range=(-2.0, 3.0))  # fmt: skip
    (bt,) = down.special
    assert bt.kind == "bogdanov-takens" and bt.jordan
    assert abs(bt.y + 1) < 1e-10 and abs(bt.x + 0.25) < 1e-10
    assert repr(bt).startswith("BogdanovTakensPoint(p=-0.25, q=-1")
    ax = down.plot()
    assert ax.get_legend() is not None


def test_cusp_point():
    m = cubic()
    curve = fn.continue_equilibria(m, "p", -1.0, 1.0, equilibrium={"x": -1.2})
    assert [round(f.x, 10) for f in curve.folds] == [round(2 / 3**1.5, 10), -round(2 / 3**1.5, 10)]
    # three equilibria between the folds: the middle one unstable
    assert sorted(set(curve.unstable)) == [0, 1]
    fc = fn.continue_equilibrium_folds(curve.folds[0], "q", n_points=40, direction=-1,
                                       y_range=(-1.0, 2.0))  # fmt: skip
    q, x = fc.y, fc.states["x"]
    np.testing.assert_allclose(q, 3 * x**2, atol=1e-12)
    np.testing.assert_allclose(fc.x, -2 * q * x / 3, atol=1e-12)
    (cusp,) = fc.special
    assert cusp.kind == "cusp"
    assert abs(cusp.x) < 1e-10 and abs(cusp.y) < 1e-10
    assert cusp.c == pytest.approx(-1.0, rel=1e-6)
    # both fold curves of the wedge are followed through the cusp
    assert np.any(x > 0.1) and np.any(x < -0.1)


def test_fold_curve_from_the_bogdanov_takens_end_of_a_hopf_curve():
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
    (bt,) = [p for p in curve.special if p.kind == "bogdanov-takens"]
    for direction in (1, -1):
        fc = fn.continue_equilibrium_folds(bt, n_points=10, direction=direction)
        assert fc.x_name == "b1" and fc.y_name == "b2"
        np.testing.assert_allclose(fc.x, fc.y**2 / 4, atol=1e-12)
        np.testing.assert_allclose(fc.states["x"], -fc.y / 2, atol=1e-12)
        assert np.all(fc.y * direction >= -1e-12) and np.max(np.abs(fc.y)) > 0.1
        assert fc.special == []  # the start is not found again


def test_zero_hopf_point_on_a_fold_curve():
    u, y = fn.states("u y")
    a, e = fn.params("a e")
    t = fn.t
    k2, k3 = -0.6, 1.3
    m = fn.Model(
        {u: -e + u(t) ** 2 + k2 * y(t) ** 2, y: -a * y(t - 1) + k3 * u(t) * y(t)},
        {a: 1.0, e: 0.5},
        name="fold_hopf",
    )
    curve = fn.continue_equilibria(m, "e", -0.5, 0.5, direction=-1,
                                   equilibrium={"u": -0.7, "y": 0.0})  # fmt: skip
    (fold,) = curve.folds
    assert abs(fold.x) < 1e-12 and abs(fold.equilibrium["u"]) < 1e-8
    fc = fn.continue_equilibrium_folds(fold, "a", n_points=20, y_range=(0.5, 2.5))
    np.testing.assert_allclose(fc.x, 0.0, atol=1e-12)
    (zh,) = fc.special
    assert zh.kind == "zero-hopf"
    assert zh.y == pytest.approx(W, abs=1e-10) and zh.omega == pytest.approx(W, rel=1e-10)
    assert zh.g200 == pytest.approx(1.0, rel=1e-8)
    assert zh.g011 == pytest.approx(2 * k2, rel=1e-8)
    assert zh.g110 == pytest.approx(k3 / (1 + 1j * W), rel=1e-8)
    # the y pair is unstable past a = pi/2
    assert fc.unstable[0] == 0 and fc.unstable[-1] == 2


def test_hopf_point_on_a_branch_of_equilibria():
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0})
    curve = fn.continue_equilibria(m, "a", 1.0, 2.0, equilibrium={"x": 0.0})
    assert curve.folds == []
    (hp,) = curve.hopf_points
    assert hp.value == pytest.approx(W, rel=1e-12) and hp.omega == pytest.approx(W, rel=1e-12)
    assert hp.criticality == "supercritical"
    np.testing.assert_array_equal(curve.unstable, np.where(curve.x > W, 2, 0))


def test_bad_input_is_named():
    m = quadratic()
    with pytest.raises(fn.ParameterError, match="'r'"):
        fn.continue_equilibria(m, "r", 0.0, 1.0)
    with pytest.raises(fn.OptionError, match="low < high"):
        fn.continue_equilibria(m, "p", 1.0, 0.0)
    with pytest.raises(fn.AnalysisError, match="no equilibrium at p = -1"):
        fn.continue_equilibria(m, "p", -1.0, 1.0, equilibrium={"x": 1.6})
    with pytest.raises(fn.OptionError, match="EquilibriumFold"):
        fn.continue_equilibrium_folds("fold", "q")
