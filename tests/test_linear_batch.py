"""Batched rightmost roots: against RCP's closed-form region, against the per-point method, and
the certificate that comes with every point."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.linear.batch import grid_levels, rightmost_roots
from fluidnet.linear.certificate import count_right_of
from fluidnet.linear.stacked import Stack, balance_scales

D0 = 0.2  # RCP's default propagation delay


def rcp_boundary(w):
    """RCP's exact stability boundary, derived here.

    With lambda = s d0 the characteristic equation of the linearization (Dukkipati & McKeown,
    eq (8)) is lambda^2 + (alpha lambda + beta) e^{-lambda} = 0. A root lambda = j w on the
    axis makes the real and imaginary parts vanish:
    -w^2 + alpha w sin w + beta cos w = 0 and alpha w cos w - beta sin w = 0, whose solution is
    alpha = w sin w, beta = w^2 cos w (0 < w < pi/2 for beta > 0). The other boundary is
    beta = 0, where lambda = 0 is a root.
    """
    return w * np.sin(w), w**2 * np.cos(w)


W_PEAK = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)
BETA_MAX = W_PEAK**2 * math.cos(W_PEAK)


def rcp_stable(alpha, beta):
    """Inside the curve (between its two branches at this beta) and beta > 0: stable (the
    region Dukkipati & McKeown find; at alpha = 0.4, beta = 0.2 the paper's default is
    stable)."""
    if not 0 < beta < BETA_MAX:
        return False
    w1 = brentq(lambda x: x**2 * math.cos(x) - beta, 1e-12, W_PEAK)
    w2 = brentq(lambda x: x**2 * math.cos(x) - beta, W_PEAK, math.pi / 2)
    return rcp_boundary(w1)[0] < alpha < rcp_boundary(w2)[0]


def distance_to_boundary(alpha, beta):
    """Distance of each point to the boundary (an upper bound within 1e-4: a dense sampling of
    the curve), vectorized."""
    ca, cb = rcp_boundary(np.linspace(0.0, math.pi / 2, 20001))
    a, b = np.ravel(alpha), np.ravel(beta)
    out = np.abs(b)
    for i in range(0, a.size, 256):
        d = np.hypot(a[i : i + 256, None] - ca, b[i : i + 256, None] - cb).min(axis=1)
        out[i : i + 256] = np.minimum(out[i : i + 256], d)
    return out.reshape(np.shape(alpha))


def test_rcp_chart_equals_the_closed_form_region_away_from_the_boundary():
    alphas = np.linspace(0.005, 1.9, 61)
    betas = np.linspace(0.0, 0.7, 57)
    ds = fn.stability_chart(fn.models.rcp(), {"alpha": alphas, "beta": betas}, method="batch")
    A, B = np.meshgrid(alphas, betas, indexing="ij")
    far = distance_to_boundary(A, B) > 1e-3
    expected = np.array([[rcp_stable(a, b) for b in betas] for a in alphas])
    np.testing.assert_array_equal(ds["stable"].values[far], expected[far])
    assert far.mean() > 0.95 and expected[far].mean() > 0.2  # both verdicts, few left out
    assert np.all(np.isfinite(ds["certificate"].values))
    assert np.all(ds["certificate"].values < ds["abscissa"].values)


def test_batch_and_pointwise_charts_agree_and_carry_certificates():
    grids = {"alpha": np.linspace(0.05, 1.8, 9), "beta": np.linspace(0.0, 0.6, 7)}
    m = fn.models.rcp()
    batch = fn.stability_chart(m, grids, method="batch")
    point = fn.stability_chart(m, grids, method="pointwise")
    np.testing.assert_allclose(
        batch["abscissa"].values, point["abscissa"].values, rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(batch["omega"].values, point["omega"].values, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(batch["stable"].values, point["stable"].values)
    # beta = 0: the root at 0, exactly (rightmost while s + alpha e^{-s} is stable, alpha < pi/2)
    low = grids["alpha"] < math.pi / 2
    assert np.all(batch["abscissa"].values[low, 0] == 0.0)
    assert np.all(batch["abscissa"].values[~low, 0] > 0.0)


def three_state(g, h):
    A0 = np.array([[-1.0, 0.5, 0.0], [0.0, -0.3, 1.0], [0.2, 0.0, -0.8]])
    A1 = np.array([[0.0, 0.0, -1.2], [0.4, 0.0, 0.0], [0.0, -0.6, 0.0]])
    A2 = np.array([[0.3, 0.0, 0.0], [0.0, -0.9, 0.0], [0.0, 0.0, 0.5]])
    return fn.LinearDDE(A0, [(0.8, g * A1), (2.1, h * A2)])


def test_multi_delay_factory_batch_equals_pointwise():
    grids = {"g": np.linspace(0.2, 3.0, 12), "h": np.linspace(-2.0, 2.0, 10)}
    batch = fn.stability_chart(three_state, grids, method="batch")
    point = fn.stability_chart(three_state, grids, method="pointwise")
    np.testing.assert_allclose(
        batch["abscissa"].values, point["abscissa"].values, rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(batch["omega"].values, point["omega"].values, rtol=1e-9, atol=1e-12)
    # the chart crosses the boundary: both verdicts present
    assert batch["stable"].any() and not batch["stable"].all()


def test_badly_scaled_rcp_is_the_same_system():
    """Issue: with N = 1e7 flows a root at 0 was reported although det Delta(0) = 5."""
    lin = fn.models.rcp().linearize(N=1e7)
    assert abs(lin.characteristic(0.0) - 5.0) < 1e-9  # beta / d0^2: 0 is not a root
    roots = lin.roots(k=4)
    assert roots.certified
    for r in roots:  # every reported root solves d0^2 s^2 + (alpha d0 s + beta) e^{-s d0} = 0
        lam = r.value * D0
        assert abs(lam**2 + (0.4 * lam + 0.2) * np.exp(-lam)) < 1e-10 * (1 + abs(lam) ** 2)
    reference = fn.models.rcp().linearize(N=10).roots(k=4)
    np.testing.assert_allclose(roots.values, reference.values, rtol=1e-10)
    assert lin.is_stable()  # the RCP region does not depend on N
    ds = fn.stability_chart(fn.models.rcp(), {"N": [10.0, 1e3, 1e5, 1e7]}, method="batch")
    np.testing.assert_allclose(ds["abscissa"].values, reference[0].real, rtol=1e-10)


def fast_oscillator(damping=0.9):
    """A lightly damped oscillator at 50 rad/s with delayed feedback: its rightmost roots are
    near +-46j, which a coarse discretization (n_points << 0.6 * 50 * tau) does not resolve."""
    A0 = [[-1.0, 50.0], [-50.0, -1.0]]
    return fn.LinearDDE(A0, [(1.0, np.diag([damping, damping])), (0.5, [[0, 0], [0, -3.0]])])


def test_a_missed_rightmost_root_is_flagged_not_reported():
    lin = fast_oscillator()
    coarse = lin.roots(k=2, n_nodes=6)  # finds the pair near 50j, misses the one near 46j
    full = lin.roots(k=2)
    assert full.certified and coarse.certified is False
    assert coarse[0].real < full[0].real - 0.1
    # the residual of the full method's root, against the characteristic function itself
    s0 = full[0].value
    assert abs(lin.characteristic(s0)) < 1e-10 * abs(s0) ** 2
    with pytest.raises(fn.AnalysisError, match="not certified"):
        lin.spectral_abscissa(n_nodes=6)
    ds = fn.stability_chart(
        fast_oscillator,
        {"damping": [0.9]},
        method="pointwise",
        on_error="nan",
        root_options={"n_nodes": 6},
    )
    assert np.isnan(ds["abscissa"].values[0]) and "not certified" in ds["error"].values[0]


def test_argument_principle_count_matches_lambert_w():
    # lambda = a + b e^{-lambda tau}: roots a + W_k(b tau e^{-a tau}) / tau
    from scipy.special import lambertw

    real = [(0.0, -1.0, 1.0), (0.3, -4.0, 0.25), (-0.5, 2.0, 0.7), (0.0, -20.0, 1.0)]
    cplx = [(0.3 + 2.0j, -1.5, 1.0), (-0.2j, 3.0 - 1.0j, 0.5)]  # no conjugate symmetry
    for cases in (real, cplx):
        stack = Stack.from_systems([fn.LinearDDE(a, [(tau, b)]) for a, b, tau in cases])
        for sigma in (-3.0, -0.7, 0.4):
            count, _ = count_right_of(stack, np.full(len(cases), sigma))
            for (a, b, tau), c in zip(cases, count, strict=True):
                z = b * tau * np.exp(-a * tau)
                r = a + lambertw(z, np.arange(-300, 301)) / tau  # every root right of -3
                assert c == int(np.sum(r.real > sigma)), (a, b, tau, sigma)


def test_balancing_is_an_exact_similarity():
    M = np.abs(np.array([[[0.0, 5e-7], [1e7, -2.0]]]))
    d = balance_scales(M)
    assert np.all(np.log2(d) == np.round(np.log2(d)))  # powers of two: no rounding
    B = M[0] * d[0][None, :] / d[0][:, None]
    assert 0.25 < B[0, 1] / B[1, 0] < 4.0


def test_grid_levels_cover_every_point_once_with_near_parents():
    shape = (13, 7)
    seen = []
    for i, (points, parents) in enumerate(grid_levels(shape, 1)):
        if i == 0:
            assert points.tolist() == [0]
        else:
            done = np.array(seen)
            assert np.all(np.isin(parents, done))
        seen.extend(points.tolist())
    assert sorted(seen) == list(range(13 * 7))


def test_rightmost_roots_of_a_stack_equal_the_per_point_roots():
    b = np.linspace(-3.0, 1.5, 40)
    systems = [fn.LinearDDE(-0.2, [(1.0, v)]) for v in b]
    found = rightmost_roots(Stack.from_systems(systems))
    assert found.certified.all()
    for lin, r in zip(systems, found.root, strict=True):
        top = lin.roots(k=1)[0].value
        assert abs(r - complex(top.real, abs(top.imag))) <= 1e-12 * (1 + abs(top))


def test_batch_chart_with_a_store_equals_the_chart_without(tmp_path):
    grids = {"alpha": np.linspace(0.1, 1.5, 8), "beta": np.linspace(0.05, 0.5, 8)}  # 64: batch
    plain = fn.stability_chart(fn.models.rcp(), grids)
    stored = fn.stability_chart(fn.models.rcp(), grids, store=tmp_path / "chart")
    resumed = fn.stability_chart(fn.models.rcp(), grids, store=tmp_path / "chart")
    assert stored.identical(plain) and resumed.identical(plain)
    # a block is stored as a few columns, not one Zarr array per point (a 20 000-point chart
    # wrote ~16 000 arrays per block and took minutes instead of 3 s)
    parts = [p for p in (tmp_path / "chart" / "parts").iterdir() if p.is_dir()]
    assert len(parts) == 1
    assert len(list(parts[0].rglob("zarr.json"))) < 12


def _kelly_pair() -> list[fn.LinearDDE]:
    """Two linearizations of the three-route Kelly law of ``tests/user_laws.py`` (exponential
    marking) at distant parameter points (kappa 1.9 and 17, B 19 and 9.5, other delays): from
    the first point's roots, Newton's method on the second runs a real candidate out to
    Re s = -1784, where exp(-s tau) overflows."""
    z = [0.0, 0.0, 0.0]
    first = fn.LinearDDE(
        np.zeros((3, 3)),
        [
            (0.152718016592437, [[-3.01052723665133, -1.27761520794666, -1.27761520794667], z, z]),
            (0.318713137490381, [z, z, [-3.6372836504184, 0.0, -3.8649320607974]]),
            (0.949162952665872, [z, [-3.63728365041837, -3.86493206079737, 0.0], z]),
        ],
    )
    second = fn.LinearDDE(
        np.zeros((3, 3)),
        [
            (0.0296601854276657, [z, [-16.1830602337338, -19.8044849886676, 0.0], z]),
            (0.272262982325539, [[-66.1962716332423, -29.4767110616874, -29.4767110616874], z, z]),
            (0.295866734984544, [z, z, [-16.1830602337338, 0.0, -19.8044849886676]]),
        ],
    )
    return [first, second]


def test_a_candidate_run_far_left_falls_back_instead_of_raising():
    """Issue 34: the batch path died with numpy's raw ``LinAlgError: SVD did not converge``
    (Delta(s) with inf entries sent to LAPACK) where the per-point method works. Now such a
    candidate is no root (residual inf), and the batch's roots equal the per-point method's."""
    systems = _kelly_pair()
    found = rightmost_roots(Stack.from_systems(systems))
    assert found.certified.all()
    for k, lin in enumerate(systems):
        ref = lin.roots(k=2)
        assert found.root[k] == pytest.approx(complex(ref[0].real, abs(ref[0].imag)), rel=1e-9)
    far = np.array([-1784.4 + 0j, -3.0 + 1.0j])
    res = Stack.from_systems(systems[:1]).residual(far, np.zeros(2, dtype=int))
    assert res[0] == np.inf and np.isfinite(res[1])
