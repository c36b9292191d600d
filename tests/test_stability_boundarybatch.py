"""The batched stability boundary (continuation method) on laws written from scratch: against a
closed form, and every point against the per-point linearization and root finder."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from user_laws import LAWS, sigmoid_rate, tcp_red_rtt

import fluidnet as fn
from fluidnet.stability import boundary


def _sigmoid_slope() -> float:
    """f'(x*) for the equilibrium the sigmoidal law's equilibrium() returns (the smallest root
    of f(x) = U'(x) - g x, U'(x) = a s (1 - s), s = 1/(1 + exp(-a (x - b)))), by Brent's
    method and the derivative written out: f' = a^2 s (1 - s)(1 - 2 s) - g."""
    a, b, g = 2.0, 5.0, 0.05

    def s(x):
        return 1.0 / (1.0 + math.exp(-a * (x - b)))

    x = brentq(lambda x: a * s(x) * (1 - s(x)) - g * x, 1e-9, 1.0, xtol=1e-15)
    return a * a * s(x) * (1 - s(x)) * (1 - 2 * s(x)) - g


@pytest.fixture
def no_point_by_point(monkeypatch):
    """Fail if the point-by-point trace (the fallback) runs."""

    def fail(*args, **kwargs):
        raise AssertionError("the batched boundary fell back to the point-by-point trace")

    monkeypatch.setattr(boundary, "_continuation", fail)


def test_sigmoid_boundary_is_the_closed_form(no_point_by_point):
    """Linearized at x*, the law is s = kappa f'(x*) e^{-s T} with f' < 0: a root j omega
    needs omega = kappa |f'| and omega T = pi/2 (the first crossing), so the boundary is
    kappa T = pi / (2 |f'(x*)|)."""
    c = abs(_sigmoid_slope())
    b = fn.stability_boundary(
        sigmoid_rate(), "kappa", "T", x_range=(1.0, 20.0), y_range=(0.5, 5.0), progress=False
    )
    assert b.method == "continuation"
    segs = b.segments()
    assert len(segs) == 1 and segs[0].kind == "hopf" and len(segs[0]) > 100
    seg = segs[0]
    np.testing.assert_allclose(seg.x * seg.y, math.pi / (2 * c), rtol=1e-9)
    np.testing.assert_allclose(seg.omega, seg.x * c, rtol=1e-9)
    # it spans the box: from T = 5 (kappa = 7.36) to kappa = 20
    assert seg.x.min() == pytest.approx(math.pi / (2 * c) / 5.0, rel=1e-9)
    assert seg.x.max() == pytest.approx(20.0, rel=1e-12)
    gaps = np.hypot(np.diff(seg.x) / 19.0, np.diff(seg.y) / 4.5)
    assert gaps.max() <= 0.005


def test_window_queue_boundary_points_are_crossings_of_the_per_point_system(no_point_by_point):
    """Issue 34's law: at every boundary point the per-point linearization (its own
    equilibrium search) has a root on the imaginary axis at the reported frequency
    (characteristic-matrix residual) and no root right of it (the per-point root finder)."""
    law = LAWS["tcp_red_rtt"]
    m = tcp_red_rtt()
    (xn, xr), (yn, yr) = law.plane.items()
    b = fn.stability_boundary(m, xn, yn, x_range=xr, y_range=yr, progress=False)
    segs = b.segments()
    assert segs and sum(len(s) for s in segs) > 100
    seg = segs[0]
    for i in np.linspace(0, len(seg) - 1, 12).round().astype(int):
        lin = m.linearize(params={xn: seg.x[i], yn: seg.y[i]})
        s = 1j * seg.omega[i]
        D = lin.characteristic_matrix(np.array([s]))[0]
        scale = abs(s) + np.linalg.norm(lin.A0, 2) + sum(np.linalg.norm(a, 2) for a in lin.A)
        assert np.linalg.svd(D, compute_uv=False)[-1] <= 1e-9 * scale
        top = lin.roots(k=2)[0]
        assert abs(top.real) <= 1e-7 * (1 + abs(top.value))
        assert abs(abs(top.imag) - seg.omega[i]) <= 1e-7 * seg.omega[i]


def test_two_curves_meeting_at_a_corner(no_point_by_point):
    """The tandem law's boundary in (d1, K2) is two Hopf curves (omega about 8 and 1) that
    meet at a corner: located where both pairs are on the axis at once, each curve ends there.
    Checked with the per-point linearization: two root pairs on the axis at the corner, one at
    the sampled points."""
    law = LAWS["tandem_two_class"]
    m = law.build()
    (xn, xr), (yn, yr) = law.plane.items()
    b = fn.stability_boundary(m, xn, yn, x_range=xr, y_range=yr, progress=False)
    segs = b.segments()
    assert len(segs) == 2 and all(s.kind == "hopf" for s in segs)
    ends = [(s.x[k], s.y[k], s.omega[k]) for s in segs for k in (0, -1)]
    shared = [(p, q) for i, p in enumerate(ends) for q in ends[i + 1 :] if p[:2] == q[:2]]
    assert len(shared) == 1  # the corner, with both frequencies
    (x, y, w1), (_, _, w2) = shared[0]
    assert abs(w1 - w2) > 0.5 * max(w1, w2)
    roots = m.linearize(params={xn: x, yn: y}).roots(k=6)
    on_axis = [r for r in roots if abs(r.real) <= 1e-8 * abs(r.value) and r.imag > 0]
    np.testing.assert_allclose(sorted(r.imag for r in on_axis), sorted([w1, w2]), rtol=1e-7)
    assert roots[0].real <= 1e-8 * abs(roots[0].value)  # nothing right of the axis
    for seg in segs:
        for i in np.linspace(0, len(seg) - 1, 4).round().astype(int):
            roots = m.linearize(params={xn: seg.x[i], yn: seg.y[i]}).roots(k=4)
            assert roots[0].real <= 1e-8 * abs(roots[0].value)
            assert any(
                abs(r.real) <= 1e-8 * abs(r.value) and abs(r.imag - seg.omega[i]) <= 1e-7 * r.imag
                for r in roots
            )


def test_a_crossing_off_the_boundary_is_not_taken():
    """x' = -a x(t - tau): roots cross the axis at j a where a tau = pi/2 + 2 pi k, one more
    pair to the right at each k (closed form); only k = 0 bounds the stable region. Newton's
    method on an edge from a = 1 to a = 10 (tau = 1) started near the second crossing
    (a = 5 pi / 2) finds it, and that crossing is refused (in a network, such crossings of other
    D-curves made the batched curve zigzag between them); started near the first, it gives
    a = omega = pi / 2."""
    from fluidnet.stability import boundarybatch as bb
    from fluidnet.stability.system import SystemFactory

    def scalar(a, tau):
        return fn.LinearDDE(np.zeros((1, 1)), [(tau, np.array([[-a]]))])

    points = bb._Points(SystemFactory(scalar, {}), "a", "tau", (1.0, 10.0), (0.5, 2.0))
    base, direction = np.array([[0.0, 1.0 / 3.0]]), np.array([[1.0, 0.0]])
    bounds = (np.array([-1e-9]), np.array([1.0 + 1e-9]))
    hopf = np.array([True])
    t, w, _, conv = bb._solve(
        points, base, direction, np.array([0.75]), np.array([7.8]), hopf, None, bounds
    )
    assert not conv[0]
    t, w, _, conv = bb._solve(
        points, base, direction, np.array([0.07]), np.array([1.6]), hopf, None, bounds
    )
    assert conv[0]
    assert 1.0 + 9.0 * t[0] == pytest.approx(math.pi / 2, rel=1e-10)
    assert w[0] == pytest.approx(math.pi / 2, rel=1e-10)


def test_coarse_chart_verdicts_are_the_closed_form():
    """The coarse chart decides stability by the argument principle's count and computes
    rightmost roots only at the ends of the edges that change stability: on the sigmoidal law
    (stable iff kappa T |f'(x*)| < pi / 2, the closed form above) its edges are exactly the
    grid edges across that curve, and the root at every end is the rightmost root of
    s = -kappa |f'| e^{-s T}: real part of the end's sign, |s| = kappa |f'| on the axis
    crossing's side (checked through the characteristic equation's residual)."""
    from fluidnet.stability import boundarybatch as bb
    from fluidnet.stability.system import SystemFactory

    c = abs(_sigmoid_slope())
    xr, yr = (1.0, 20.0), (0.5, 5.0)
    points = bb._Points(SystemFactory(sigmoid_rate(), {}), "kappa", "T", xr, yr)
    n = 16
    uv, edges, root, _ = bb._coarse(points, n)
    g = np.linspace(0.0, 1.0, n)
    kappa = xr[0] + (xr[1] - xr[0]) * np.repeat(g, n)
    T = yr[0] + (yr[1] - yr[0]) * np.tile(g, n)
    stable = kappa * T * c < math.pi / 2
    expected = [
        (k, k2)
        for k in range(n * n)
        for k2 in (k + n, k + 1)
        if k2 < n * n and (k2 != k + 1 or k % n != n - 1) and stable[k] != stable[k2]
    ]
    assert sorted(edges) == sorted(expected) and len(expected) > 10
    ends = sorted({k for e in edges for k in e})
    r = root[ends]
    assert np.all(np.isfinite(r))
    assert np.array_equal(np.real(r) < 0, stable[ends])
    residual = r + kappa[ends] * c * np.exp(-r * T[ends])
    assert np.max(np.abs(residual) / np.abs(r)) < 1e-9
    others = np.setdiff1d(np.arange(n * n), ends)
    assert np.all(np.isnan(root[others]))  # no root computed off the edges


@pytest.mark.parametrize(("a", "expected"), [(1.0, 0), (2.0, 16), (8.0, 32)])
def test_counts_through_the_factorization_are_the_closed_form(a, expected):
    """Nine alike states coupled all to all, x_i' = -a x_i(t - 1) - b sum_j x_j(t - 1): the
    modes are s + mu e^{-s} = 0 with mu = a (multiplicity 8) and mu = a + 9 b, and
    s + mu e^{-s} has 2 (k + 1) roots right of the axis for pi/2 + 2 pi k < mu < pi/2 + 2 pi
    (k + 1), none for 0 < mu < pi/2 (closed form). The count through the alike-flow
    factorization (the factors' counts times their multiplicity) gives the whole count, as the
    unfactored argument principle does."""
    from fluidnet.linear.aggregate import aggregation
    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.stacked import Stack
    from fluidnet.stability import boundarybatch as bb

    b = -a / 9.0 + 0.1  # a + 9 b = 0.9 < pi / 2: the symmetric mode is stable
    A1 = -(a * np.eye(9) + b * np.ones((9, 9)))
    st = Stack.from_systems([fn.LinearDDE(np.zeros((9, 9)), [(1.0, A1)])])
    assert aggregation(st) is not None  # the factored count is the one tested
    assert bb._counts(st, np.array([0.0]))[0] == expected
    assert count_right_of(st, np.array([0.0]))[0][0] == expected
