"""Roots of one-delay scalar systems by the Lambert W function (:mod:`fluidnet.linear.lambertw`).

Independent sources: the stability of ``x' = -k x(t - tau)`` (stable iff ``0 < k tau < pi/2``;
its pairs cross the axis at ``omega = k`` where ``k tau = pi/2 + 2 j pi``, one more pair in the
right half-plane past each), Hayes' stability region of ``x' = a x(t) + b x(t - tau)``
(Hayes, J. London Math. Soc. 25 (1950); the boundary ``b = -a`` and the curve
``a = zeta / (tau tan zeta)``, ``b = -zeta / (tau sin zeta)``), and the discretization-based
roots of :func:`fluidnet.linear.roots.certified_roots`; Hayes' margins against the Lambert W count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fluidnet.linear import LinearDDE
from fluidnet.linear.lambertw import (
    lambert_roots,
    one_delay_factors,
    rightmost_one_delay,
    stability_margins,
)
from fluidnet.linear.roots import certified_roots


def scalar(a: float, b: float, tau: float) -> LinearDDE:
    return LinearDDE(a, [(tau, b)])


def rhp(roots) -> int:
    return sum(1 for r in roots if r.real > 0)


@pytest.mark.parametrize("k_tau", [0.3, 1.5, 1.6, 7.0, 8.0, 20.0])
def test_pure_delay_count_by_the_crossing_frequencies(k_tau):
    # x' = -k x(t - tau): a pair enters at each k tau = pi/2 + 2 j pi
    tau = 0.4
    roots = lambert_roots(scalar(0.0, -k_tau / tau, tau), sigma=-1.0)
    pairs = sum(1 for j in range(10) if math.pi / 2 + 2 * j * math.pi < k_tau)
    assert roots is not None and roots.certified is True
    assert rhp(roots) == 2 * pairs


def test_pure_delay_on_the_boundary_has_the_pair_at_omega_k():
    tau = 0.25
    k = math.pi / (2 * tau)
    roots = lambert_roots(scalar(0.0, -k, tau), sigma=-5.0)
    top = sorted(roots.values[:2], key=lambda v: v.imag)
    assert top[0] == pytest.approx(-1j * k, abs=1e-12 * k)
    assert top[1] == pytest.approx(1j * k, abs=1e-12 * k)
    for v in (0.999, 1.001):  # either side of it: 0 and 2 roots in the right half-plane
        assert rhp(lambert_roots(scalar(0.0, -k * v, tau), sigma=-5.0)) == (0 if v < 1 else 2)


@pytest.mark.parametrize("zeta", [0.4, 1.2, 2.0, 2.8])
def test_hayes_boundary(zeta):
    # on Hayes' curve a = zeta/(tau tan zeta), b = -zeta/(tau sin zeta) a pair sits at +-j
    # zeta/tau; past it (b more negative) the system is unstable, before it stable
    tau = 0.5
    a = zeta / (tau * math.tan(zeta))
    b = -zeta / (tau * math.sin(zeta))
    on = lambert_roots(scalar(a, b, tau), sigma=-3.0)
    assert max(abs(v.imag) for v in on.values[:2]) == pytest.approx(zeta / tau, rel=1e-12)
    assert rhp(lambert_roots(scalar(a, b * 0.99, tau), sigma=-3.0)) == 0
    assert rhp(lambert_roots(scalar(a, b * 1.01, tau), sigma=-3.0)) == 2
    # across b = -a (a real root at 0): one real root enters
    if a < 1 / tau:
        assert rhp(lambert_roots(scalar(a, -a - 0.05, tau), sigma=-3.0)) == 0
        assert rhp(lambert_roots(scalar(a, -a + 0.05, tau), sigma=-3.0)) == 1


@pytest.mark.parametrize(
    ("a", "b", "tau"), [(0.0, -3.0, 1.0), (0.7, -2.5, 0.8), (-1.0, 0.4, 2.0), (0.2, 0.1, 1.5)]
)
def test_roots_right_of_the_line_equal_the_discretization(a, b, tau):
    sigma = -4.0 / tau
    ours = lambert_roots(scalar(a, b, tau), sigma=sigma)
    ref = certified_roots(scalar(a, b, tau), region=sigma)  # every root right of sigma
    assert ref.certified and ref.certificate <= sigma
    theirs = np.array([r.value for r in ref if r.real > sigma])
    assert len(ours) == theirs.size
    for v in ours.values:
        assert np.min(np.abs(theirs - v)) <= 1e-8 * (1 + abs(v))
    assert np.all(ours.values.real > sigma)
    assert all(r.residual < 1e-12 for r in ours)
    # a real system's roots in exact conjugate pairs (a line never splits a pair)
    v = ours.values
    assert np.array_equal(np.sort_complex(v), np.sort_complex(np.conj(v)))


def test_a_diagonal_system_holds_the_roots_of_each_state():
    lin = LinearDDE(
        np.diag([0.0, -0.5, 0.3]),
        [(0.2, np.diag([-9.0, 0.0, 0.0])), (0.5, np.diag([0.0, -1.0, -0.9]))],
    )
    a, b, tau = one_delay_factors(lin)
    assert np.allclose(b, [-9.0, -1.0, -0.9]) and np.allclose(tau, [0.2, 0.5, 0.5])
    roots = lambert_roots(lin, sigma=-2.0, k=3)
    ref = certified_roots(lin, region=roots.certificate)
    assert ref.certified and ref.certificate <= roots.certificate
    theirs = np.array([r.value for r in ref if r.real > roots.certificate])
    assert len(roots) == theirs.size >= 3
    for v in roots.values:
        assert np.min(np.abs(theirs - v)) <= 1e-8 * (1 + abs(v))
    assert rhp(roots) == rhp(ref)


def test_the_closed_form_declines_what_its_theorem_does_not_cover():
    coupled = LinearDDE(np.array([[0.0, 1.0], [0.0, -1.0]]), [(0.3, -np.eye(2))])
    assert lambert_roots(coupled, sigma=-1.0) is None
    two_delays = LinearDDE(0.0, [(0.3, -1.0), (0.7, -0.5)])
    assert lambert_roots(two_delays, sigma=-1.0) is None
    # at the branch point x = b tau e^{-a tau} = -1/e a double real root: declined
    assert lambert_roots(scalar(0.0, -1.0 / math.e, 1.0), sigma=-5.0) is None
    complex_system = LinearDDE(1j, [(1.0, -1.0)])
    assert lambert_roots(complex_system, sigma=-1.0) is None


def test_hayes_margins_agree_with_the_lambert_count():
    # two closed forms, one theorem each: Hayes' stability region and the roots of every
    # Lambert W branch right of a line
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for a, b, tau in zip(
        rng.uniform(-4, 2.5, 400), rng.uniform(-6, 6, 400), rng.uniform(0.1, 2, 400), strict=True
    ):
        lin = scalar(a, b, tau)
        roots = lambert_roots(lin, sigma=-1.0)
        if roots is None:  # near the branch point only
            continue
        stable = rhp(roots) == 0 and all(r.real < 0 for r in roots)
        assert bool(np.all(stability_margins(lin) > 0)) == stable, (a, b, tau)
        seen[stable] += 1
    assert min(seen.values()) > 50  # both verdicts checked many times


def test_hayes_margins_vanish_on_the_boundaries():
    tau = 0.5
    # x' = -k x(t - tau): the third margin is pi/2 - k tau
    for k in (0.5, 2.0, 3.0):
        m = stability_margins(scalar(0.0, -k, tau))[0]
        assert m == pytest.approx([1.0, k * tau, math.pi / 2 - k * tau], abs=1e-14)
    # on Hayes' curve (a pair on the axis at zeta / tau) and on b = -a (a root at 0)
    for zeta in (0.3, 1.0, 2.5):
        a, b = zeta / (tau * math.tan(zeta)), -zeta / (tau * math.sin(zeta))
        assert stability_margins(scalar(a, b, tau))[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert stability_margins(scalar(0.7, -0.7, tau))[0, 1] == 0.0


def test_a_factor_with_thousands_of_roots_right_of_the_line():
    """x' = -3600 x(t - 1): 3116 roots right of Re s = -1 (the old check of distinct roots
    recursed without end beyond 3000 roots of one state); counted independently by mpmath's
    Lambert W, branch by branch."""
    import mpmath

    b = 3600.0
    got = lambert_roots(LinearDDE(0.0, [(1.0, -b)]), sigma=-1.0)
    assert got is not None
    K = 2 + int(b * math.e / (2 * math.pi))  # no branch beyond reaches Re s > -1
    want = sum(float(mpmath.re(mpmath.lambertw(-b, k))) > -1.0 for k in range(-K, K + 1))
    assert want > 3000
    assert len(got) == want
    vals = np.array(got.values)
    assert np.all(np.abs(vals + b * np.exp(-vals)) <= 1e-9 * b)


def test_distinct_roots_by_sorted_passes_equal_every_pair():
    """The check that no two roots of one state coincide (within 1e-8 of their size) sorts
    them and compares neighbours; against the definition, every pair, on random roots of a
    few states with planted near-coincidences (half of the draws) just inside and outside
    the tolerance."""
    from fluidnet.linear.lambertw import _distinct

    rng = np.random.default_rng(7)
    outcomes = set()
    for trial in range(400):
        m = int(rng.integers(2, 60))
        s = rng.normal(size=m) * 10 ** rng.uniform(-2, 3) + 1j * rng.normal(size=m) * 50
        state = rng.integers(0, 3, size=m)
        tau = rng.uniform(0.01, 1.0, size=3)[state]
        if trial % 2:
            i, j = rng.choice(m, 2, replace=False)
            tol = 1e-8 * (abs(s[i]) + 1.0 / tau[i])
            s[j] = s[i] + tol * rng.choice([0.5, 0.99, 1.01, 3.0]) * np.exp(
                2j * np.pi * rng.random()
            )
            state[j], tau[j] = state[i], tau[i]
        tol = 1e-8 * (np.abs(s) + 1.0 / tau)
        gap = np.abs(s[:, None] - s[None, :])
        pair = (state[:, None] == state[None, :]) & (gap <= np.maximum(tol[:, None], tol[None, :]))
        np.fill_diagonal(pair, False)
        want = not pair.any()
        assert _distinct(s, state, tau) == want
        outcomes.add(want)
    assert outcomes == {True, False}


def test_lambert_w_closed_forms():
    # W_0(e) = 1, W_0(-1/e * 0) ..., W_-1(-2 exp(-2)) = -2, W_0(1) = omega; W_0(x log x) = log x
    from fluidnet.linear.lambertw import _lambert_w

    omega = 0.5671432904097838729999686622  # the omega constant, W_0(1)
    got = _lambert_w(
        np.array([math.e, -2 * math.exp(-2), 1.0, 3 * math.log(3), -0.5 * math.exp(-0.5)]),
        np.array([0, -1, 0, 0, 0]),
    )
    want = [1.0, -2.0, omega, math.log(3), -0.5]
    assert np.allclose(got, want, rtol=2e-15, atol=0)
    assert np.all(got.imag == 0) or np.max(np.abs(got.imag)) <= 1e-15


@pytest.mark.parametrize("k", [-3999, -61, -7, -2, -1, 0, 1, 2, 8, 60, 3999])
def test_lambert_w_every_branch_equals_scipys(k):
    """The NumPy Lambert W (fluidnet's closed-form roots do not import scipy.special: 0.3 s of
    a network's first critical value) against SciPy's on the same branch, over 600 decades of
    both signs and around the branch point -1/e; and each value solves w exp(w) = x."""
    from scipy.special import lambertw

    from fluidnet.linear.lambertw import _lambert_w

    rng = np.random.default_rng(abs(k))
    x = np.concatenate(
        [
            np.logspace(-300, 300, 301),
            -np.logspace(-300, 300, 301),
            -(1 + np.logspace(-6, 1, 60)) / math.e,
            -(1 - np.logspace(-6, -0.001, 60)) / math.e,
            rng.normal(size=200) * 10,
        ]
    )
    mine = _lambert_w(x, np.full(x.size, k))
    ref = np.asarray(lambertw(x, k), dtype=complex)
    assert np.all(np.isfinite(mine))
    both = np.isfinite(ref)  # (SciPy's iteration returns NaN at a few points)
    assert both.sum() >= 0.95 * x.size
    assert np.max(np.abs(mine - ref)[both] / (1 + np.abs(ref[both]))) <= 1e-12
    # the equation itself, to its rounding (relative error about |1 + w| times w's own)
    w = mine
    with np.errstate(over="ignore", invalid="ignore"):
        lhs = w * np.exp(w)
    shown = np.isfinite(lhs)
    rel = np.abs(lhs - x)[shown] / np.abs(x[shown])
    assert np.all(rel <= 16 * np.finfo(float).eps * (1 + np.abs(w[shown])))


def test_rightmost_one_delay_against_the_discretization_and_the_argument_principle():
    # second methods: the spectral discretization's certified rightmost root of each factor,
    # and the argument principle's count right of the line returned (the root alone, or the
    # pair): x = b tau e^{-a tau} positive, in (-1/e, 0), and below -1/e (a complex pair)
    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.stacked import Stack

    rng = np.random.default_rng(3)
    a = rng.uniform(-2.0, 1.0, size=40)
    tau = rng.uniform(0.05, 2.0, size=40)
    x = np.concatenate([rng.uniform(0.01, 5, 12), rng.uniform(-0.36, -0.01, 12)])
    x = np.concatenate([x, rng.uniform(-30.0, -0.4, 16)])
    b = x * np.exp(a * tau) / tau
    root, line, ok = rightmost_one_delay(a, b, tau)
    assert ok.all()
    assert np.sum(np.imag(root) > 0) >= 16  # the pairs of x < -1/e
    for i in range(a.size):
        ref = certified_roots(scalar(a[i], b[i], tau[i]), k=2)
        assert ref.certified
        top = ref[0].value
        assert abs(root[i] - complex(top.real, abs(top.imag))) <= 1e-10 * (1 + abs(top))
        assert line[i] < root[i].real
    stack = Stack(a[:, None, None], b[:, None, None, None], tau[:, None])
    counted, _ = count_right_of(stack, line)
    assert counted.tolist() == np.where(np.imag(root) > 0, 2, 1).tolist()


def test_rightmost_one_delay_declines_the_branch_point_and_takes_delay_free_factors():
    root, line, ok = rightmost_one_delay(
        np.array([0.0, -0.5, 0.3, 0.0]),
        np.array([-1.0 / math.e, 0.0, -0.2, -1.0]),
        np.array([1.0, 0.7, 0.0, np.inf]),
    )
    # a double real root at the branch point: left to the general path
    assert not ok[0] and np.isnan(root[0]) and np.isnan(line[0])
    # no delayed term (b = 0, or a zero delay): the one root a + b, no line needed
    assert ok[1] and root[1] == -0.5 and line[1] == -np.inf
    assert ok[2] and root[2] == pytest.approx(0.1) and line[2] == -np.inf
    assert not ok[3]  # an infinite delay


def test_batch_factors_in_closed_form_equal_the_continuation():
    # second method: the batch's own continuation and certificates (_rightmost_plain) on the
    # same scalar systems; a system with two delayed terms goes that way in any case
    from fluidnet.linear.batch import _rightmost_plain, _system_from, rightmost_roots
    from fluidnet.linear.stacked import Stack

    ka, kt = np.meshgrid(np.linspace(0.2, 3.0, 12), np.linspace(0.1, 1.2, 10), indexing="ij")
    K = ka.size
    A0 = np.full((K, 1, 1), -0.3)
    A = np.zeros((K, 2, 1, 1))
    A[:, 0, 0, 0] = -ka.ravel()
    A[5, 1, 0, 0] = -0.2  # two delayed terms: not in closed form
    tau = np.stack([kt.ravel(), 1.5 * kt.ravel()], axis=1)
    stack = Stack(A0, A, tau)
    got = rightmost_roots(stack, ka.shape)
    ref = _rightmost_plain(stack, ka.shape, _system_from(stack), {}, None)
    assert got.certified.all() and ref.certified.all()
    assert got.stats["closed_form"] == K - 1
    np.testing.assert_allclose(got.root, ref.root, rtol=1e-11, atol=1e-13)
    assert np.array_equal(got.root.real < 0, ref.root.real < 0)
    # the one point left to the general path: the first of its grid, by the full method
    assert got.full.tolist() == [k == 5 for k in range(K)]
    assert np.all(got.certificate < got.root.real)


def test_rightmost_one_delay_is_zero_exactly_where_the_factor_is_singular_at_zero():
    # s - a + a exp(-s tau) has the root 0 (its rightmost where a tau < 1): the branch's value
    # a + W(x) / tau gives it only to rounding, as often above 0 as below, and a marginal
    # factor read as stable. Second method: the batch's continuation, which snaps a root at 0
    # as characteristic_roots does; a nearly singular factor keeps its own small root.
    from fluidnet.linear.batch import _rightmost_plain, _system_from
    from fluidnet.linear.stacked import Stack

    rng = np.random.default_rng(1)
    tau = rng.uniform(0.01, 1.0, 200)
    a = rng.uniform(-3.0, 0.99, 200) / np.maximum(tau, 1.0)
    root, line, ok = rightmost_one_delay(a, -a, tau)
    assert ok.all() and np.all(root == 0.0) and np.all(line < 0)
    stack = Stack(a[:, None, None], -a[:, None, None, None], tau[:, None])
    ref = _rightmost_plain(stack, (200,), _system_from(stack), {}, None)
    assert ref.certified.all() and np.all(ref.root == 0.0)
    near, _, ok = rightmost_one_delay(np.array([0.3]), np.array([-0.3 * (1 - 1e-9)]), np.ones(1))
    # not singular: its own root, (a + b) / (1 + b tau) = 3e-10 / 0.7 right of 0, not snapped
    assert ok[0] and near[0].real == pytest.approx(0.3e-9 / 0.7, rel=1e-5)


def test_factored_roots_of_alike_flows_equal_the_whole_systems():
    # four classes of two alike flows on one link (9 states): det Delta is the reduced
    # system's times each class's factor s - a - b exp(-s tau); the first class's factor is
    # singular at 0 (b = -a), so 0 is a root, exactly. Second method: the whole system's
    # roots by the dense discretization (characteristic_roots, which snaps a root at 0).
    from fluidnet.linear.roots import _factored_roots, characteristic_roots

    classes = [(-0.8, 0.8, 0.9), (-1.0, -0.5, 0.5), (-1.0, -1.0, 1.0), (-1.0, -1.5, 1.5)]
    n = 9
    A0 = np.zeros((n, n))
    delayed: dict[float, np.ndarray] = {}
    for c, (a, b, tau) in enumerate(classes):
        for i in (2 * c, 2 * c + 1):
            A0[i, i], A0[i, 8], A0[8, i] = a, -0.5, 1.0
            delayed.setdefault(tau, np.zeros((n, n)))[i, i] = b
    A0[8, 8] = -2.0
    lin = LinearDDE(A0, sorted(delayed.items()))
    ours = _factored_roots(lin, 6, None, 400)
    ref = characteristic_roots(lin, 6)
    assert ours is not None and ours.certified and ref.certified
    assert ours[0].value == 0.0 and ref[0].value == 0.0
    np.testing.assert_allclose(ours.values, ref.values, rtol=1e-12, atol=1e-14)
    assert [r.multiplicity for r in ours] == [r.multiplicity for r in ref]
