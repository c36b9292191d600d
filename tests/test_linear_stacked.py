"""fluidnet.linear.stacked: characteristic functions of many systems at once, against direct
evaluation (numpy's det, svd), Lambert-W roots and exact similarity."""

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.samples import compiled_samples
from fluidnet.linear.stacked import (
    Stack,
    balance_scales,
    schur_segment,
    singular_values,
)


def _direct_delta(A0, delays, s):
    """``s I - A0 - sum A_j exp(-s tau_j)`` written out."""
    D = s * np.eye(len(A0)) - np.asarray(A0, dtype=complex)
    for tau, A in delays:
        D -= np.asarray(A) * np.exp(-s * tau)
    return D


def _systems(rng, n, K):
    out = []
    for _ in range(K):
        A0 = rng.normal(size=(n, n))
        delays = [(0.7, rng.normal(size=(n, n))), (1.9, rng.normal(size=(n, n)))]
        out.append((A0, delays))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_det_and_logderiv_match_direct_evaluation(n):
    """One, two (closed forms) and more states (LAPACK) against det of the matrix written out,
    and the logarithmic derivative against a central difference of that det."""
    rng = np.random.default_rng(n)
    cases = _systems(rng, n, 3)
    stack = Stack.from_systems([fn.LinearDDE(A0, delays) for A0, delays in cases])
    s = np.array([0.3 + 1.1j, -0.2 + 4.0j, 1.5 - 0.5j, 0.1 + 0.0j])
    idx = np.array([0, 1, 2, 1])
    f, g = stack.det_logderiv(s, idx)
    h = 1e-6
    for q in range(s.size):
        A0, delays = cases[idx[q]]
        det = np.linalg.det(_direct_delta(A0, delays, s[q]))
        assert f[q] == pytest.approx(det, rel=1e-12, abs=1e-12)
        dplus = np.linalg.det(_direct_delta(A0, delays, s[q] + h))
        dminus = np.linalg.det(_direct_delta(A0, delays, s[q] - h))
        assert g[q] == pytest.approx((dplus - dminus) / (2 * h) / det, rel=1e-6)


def test_block_diagonal_system_factors_into_its_blocks():
    """det Delta of diag(S1, S2) is det Delta_1 * det Delta_2, so its roots are the union of the
    blocks' roots: the scalar block's Lambert-W roots are roots of the stacked 3-state system."""
    a, b, tau = -1.0, -2.0, 1.0
    B0 = np.array([[0.0, 1.0], [-2.0, -0.5]])
    B1 = np.array([[0.0, 0.0], [0.3, 0.0]])
    A0 = np.zeros((3, 3))
    A0[0, 0], A0[1:, 1:] = a, B0
    A1 = np.zeros((3, 3))
    A1[0, 0], A1[1:, 1:] = b, B1
    whole = Stack.from_systems([fn.LinearDDE(A0, [(tau, A1)])])
    scalar = Stack.from_systems([fn.LinearDDE([[a]], [(tau, [[b]])])])
    block = Stack.from_systems([fn.LinearDDE(B0, [(tau, B1)])])
    s = np.array([0.2 + 0.7j, -0.4 + 3.0j, 2.0 + 0.0j])
    zero = np.zeros(s.size, dtype=int)
    f3 = whole.det_logderiv(s, zero)[0]
    f1 = scalar.det_logderiv(s, zero)[0]
    f2 = block.det_logderiv(s, zero)[0]
    np.testing.assert_allclose(f3, f1 * f2, rtol=1e-12)
    # s = a + W_k(b tau e^{-a tau}) / tau solve s - a - b e^{-s tau} = 0
    roots = np.array([a + lambertw(b * tau * np.exp(-a * tau), k) / tau for k in range(-3, 4)])
    residual = np.abs(whole.det_logderiv(roots, np.zeros(roots.size, dtype=int))[0])
    assert np.all(residual < 1e-10 * (1 + np.abs(roots)) ** 3)
    # and Newton started near them converges onto them
    lam, active = whole.newton(
        roots + 0.05, np.zeros(roots.size, dtype=int), tol=1e-14, stall_tol=1e-10
    )
    assert not active.any()
    np.testing.assert_allclose(lam, roots, rtol=1e-10)


def test_scaled_is_a_similarity():
    rng = np.random.default_rng(7)
    stack = Stack.from_systems([fn.LinearDDE(A0, d) for A0, d in _systems(rng, 3, 2)])
    d = np.array([[1.0, 8.0, 0.25], [4.0, 1.0, 2.0]])
    scaled = stack.scaled(d)
    s = np.array([0.5 + 2j, -1 + 0.1j])
    idx = np.array([0, 1])
    np.testing.assert_allclose(
        scaled.det_logderiv(s, idx)[0], stack.det_logderiv(s, idx)[0], rtol=1e-12
    )
    D = np.diag(d[0])
    np.testing.assert_allclose(scaled.A0[0], np.linalg.inv(D) @ stack.A0[0] @ D, rtol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_singular_values_match_svd(n):
    rng = np.random.default_rng(n)
    M = rng.normal(size=(5, n, n)) + 1j * rng.normal(size=(5, n, n))
    smax, smin = singular_values(M)
    sv = np.linalg.svd(M, compute_uv=False)
    np.testing.assert_allclose(smax, sv[:, 0], rtol=1e-12)
    np.testing.assert_allclose(smin, sv[:, -1], rtol=1e-10)


def test_residual_vanishes_at_a_root_only():
    a, b, tau = 0.5, -2.0, 1.0
    stack = Stack.from_systems([fn.LinearDDE([[a]], [(tau, [[b]])])])
    root = a + lambertw(b * tau * np.exp(-a * tau), 0) / tau
    res = stack.residual(np.array([root, root + 0.1]), np.array([0, 0]))
    assert res[0] < 1e-14
    # |s - a - b e^{-s tau}| / (|s| + |a| + |b| |e^{-s tau}|) at the moved point
    s = root + 0.1
    expected = abs(s - a - b * np.exp(-s * tau)) / (
        abs(s) + abs(a) + abs(b) * abs(np.exp(-s * tau))
    )
    assert res[1] == pytest.approx(expected, rel=1e-12)


def test_balance_scales_equilibrates_with_powers_of_two():
    """A similarity with d = (1, 2^10) hides a balanced matrix; Osborne's iteration undoes it."""
    balanced = np.array([[0.0, 3.0], [3.0, 0.0]])
    d_true = np.array([1.0, 2.0**10])
    M = balanced * (d_true[None, :] / d_true[:, None])  # D^-1 B D
    d = balance_scales(np.abs(M)[None], mild=1.0)[0]
    assert np.all(np.log2(d) == np.round(np.log2(d)))
    B = M * (d[None, :] / d[:, None])
    assert B[0, 1] == pytest.approx(B[1, 0])
    # a mild imbalance is left alone by default
    assert np.all(balance_scales(np.abs(balanced * np.array([[1, 4.0], [0.25, 1]]))[None]) == 1.0)


def test_max_delay_ignores_zero_matrices_and_norm_bound_is_the_least_norm_sum():
    stack = Stack.from_systems(
        [
            fn.LinearDDE(
                [[1.0, 0.0], [0.0, 2.0]], [(0.5, [[1.0, 0.0], [0.0, 0.0]]), (3.0, np.zeros((2, 2)))]
            ),
            fn.LinearDDE([[1.0, 1.0], [0.0, 0.0]], [(0.5, [[0.0, 0.0], [3.0, 0.0]])]),
        ]
    )
    assert stack.max_delay()[0] == 0.5
    bound = stack.norm_bound(np.array([1.0, 1.0]))
    # diagonal: ||A0|| + ||A1|| e^{-sigma 0.5} in the 2-norm, 2 + e^{-0.5} (Frobenius: sqrt 5)
    assert bound[0] == pytest.approx(2.0 + np.exp(-0.5), rel=1e-15)
    # [[1, 1], [0, 0]] and [[0, 0], [3, 0]]: 1-norms 1 and 3, infinity-norms 2 and 3, 2-norms
    # sqrt 2 and 3 (bounded by sqrt(1 2) and 3): the 1-norm sum is the least
    assert bound[1] == pytest.approx(1.0 + 3.0 * np.exp(-0.5), rel=1e-15)


def _star_system(rng, leaves=24, hubs=6, m=3, K=2):
    """A network-like stack: leaves act on each other only through the hubs (each leaf on
    its own and on two hubs, with delays), the hubs on every leaf without delay."""
    n = leaves + hubs
    A0 = np.zeros((K, n, n))
    A = np.zeros((K, m, n, n))
    for k in range(K):
        for i in range(leaves):
            j = i % m
            A[k, j, i, i] = -rng.uniform(0.5, 2.0)
            for h in rng.choice(hubs, 2, replace=False):
                A[k, j, i, leaves + h] = rng.normal()
        for h in range(hubs):
            A0[k, leaves + h, leaves + h] = -rng.uniform(1, 3)
            A0[k, leaves + h, :leaves] = rng.normal(size=leaves) / leaves
    tau = np.tile(np.array([0.1, 0.2, 0.35])[:m], (K, 1))
    return Stack(A0, A, tau)


def test_schur_complement_det_equals_the_dense_determinant():
    # second method: the dense LU determinant of the whole characteristic matrix, and the
    # log-derivative trace(Delta^-1 Delta') from dense solves
    rng = np.random.default_rng(7)
    st = _star_system(rng)
    S, T = st.split
    assert S.tolist() == list(range(24)) and T.tolist() == list(range(24, 30))
    s = rng.normal(size=40) * 3 + 1j * rng.normal(size=40) * 10
    idx = rng.integers(0, st.K, size=40)
    f, g = st.det_logderiv(s, idx)
    D, dD = st.delta(s, idx, derivative=True)
    f_ref = np.linalg.det(D)
    g_ref = np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1)
    np.testing.assert_allclose(f, f_ref, rtol=1e-10)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10)
    # the split is handed on to parts and rescaled copies, where it still holds
    part = st.take(np.array([1]))
    assert part.given_split is not None and part.split[0].size == 24
    fp, _ = part.det_logderiv(s[:3], np.zeros(3, dtype=int))
    ref = np.linalg.det(st.delta(s[:3], np.ones(3, dtype=int)))
    np.testing.assert_allclose(fp, ref, rtol=1e-10)


def test_schur_segment_samples_the_interpolated_systems():
    # second method: the systems (1 - t) a + t b formed as matrices, sampled by the stack
    rng = np.random.default_rng(11)
    a = _star_system(rng)
    # other values on the same pattern of entries, and other delays
    b = Stack(
        a.A0 * rng.uniform(0.5, 1.5, size=a.A0.shape),
        a.A * rng.uniform(0.5, 1.5, size=a.A.shape),
        a.tau * 1.3,
        a.split,
    )
    at = schur_segment(a, b)
    if compiled_samples() is None:
        assert at is None  # NumPy's samples: the caller forms the systems
        return
    assert at is not None
    s = rng.normal(size=30) + 1j * rng.normal(size=30) * 8
    idx = rng.integers(0, 2, size=30)
    for t in (0.1, 0.5, 0.9):
        mid = Stack(
            (1 - t) * a.A0 + t * b.A0, (1 - t) * a.A + t * b.A, (1 - t) * a.tau + t * b.tau, a.split
        )
        logderiv = at(t)
        assert logderiv is not None
        assert np.array_equal(logderiv(s, idx), mid.det_logderiv(s, idx)[1])
    # an entry that cancels halfway changes the pattern there: no samples from the ends
    S, T = a.split
    i, j = T[0], S[0]
    assert a.A0[0, i, j] != 0
    flipped = b.A0.copy()
    flipped[:, i, j] = -a.A0[:, i, j]
    assert at(0.5) is not None
    other = Stack(flipped, b.A, b.tau, a.split)
    assert schur_segment(a, other)(0.5) is None
    assert schur_segment(a, other)(0.3) is not None
    # no Schur complement, or another pattern: None
    small = _star_system(rng, K=2, leaves=8, hubs=2)
    assert schur_segment(small, small) is None


def test_schur_complement_is_not_used_where_it_does_not_pay():
    rng = np.random.default_rng(3)
    n = 20
    A0 = rng.normal(size=(1, n, n))  # every state acts on every other one
    st = Stack(A0, rng.normal(size=(1, 1, n, n)), np.array([[0.5]]))
    assert st.split[0].size == 0
    small = _star_system(rng, leaves=8, hubs=2)  # 10 states: below SCHUR_MIN_STATES
    assert small.split[0].size == 0


def test_sparse_system_phase_through_the_schur_complement():
    from fluidnet.linear.sparse import SparseSystem

    rng = np.random.default_rng(11)
    st = _star_system(rng, K=1)
    lin = fn.LinearDDE(st.A0[0], [(t, a) for t, a in zip(st.tau[0], st.A[0], strict=True)])
    sp = SparseSystem.from_lineardde(lin)
    assert sp.schur is not None
    s = rng.normal(size=25) + 1j * rng.normal(size=25) * 8
    f, g = sp.det_logderiv(s)
    D, dD = st.delta(s, np.zeros(25, dtype=int), derivative=True)
    det = np.linalg.det(D)
    np.testing.assert_allclose(f, det / np.abs(det), rtol=1e-10)
    np.testing.assert_allclose(np.abs(f), 1.0, rtol=1e-12)
    np.testing.assert_allclose(g, np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1), rtol=1e-10)


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("complex_entries", [False, True])
def test_expanded_det_matches_lapack_with_zero_entries_and_in_blocks(n, complex_entries):
    """Three and four states (cofactor expansion, entries zero in every system skipped, more
    points than one block of ``EVAL_CHUNK``) against LAPACK: ``det`` of ``Delta`` and
    ``trace(solve(Delta, Delta'))``, point by point; a singular ``Delta`` has ``f'/f = inf``."""
    from fluidnet.linear import stacked

    rng = np.random.default_rng(10 * n + complex_entries)
    K, Q = 40, stacked.EVAL_CHUNK + 1000
    A0 = rng.normal(size=(K, n, n))
    A = rng.normal(size=(K, 2, n, n))
    if complex_entries:
        A0 = A0 + 1j * rng.normal(size=(K, n, n))
    A0[:, 0, n - 1] = 0.0  # zero in A0 and in every A_k: skipped
    A[:, :, 0, n - 1] = 0.0
    A[:, 0, 1, :] = 0.0  # a row of A_1 that vanishes
    A[:, 1, :, 2] = 0.0  # a column of A_2
    tau = rng.uniform(0.2, 2.0, size=(K, 2))
    stack = Stack(A0, A, tau)
    idx = np.sort(rng.integers(0, K, Q))
    s = rng.uniform(-1.0, 1.0, Q) + 1j * rng.uniform(-20.0, 20.0, Q)
    f, g = stack.det_logderiv(s, idx)
    E = np.exp(-s[:, None] * tau[idx])
    D = s[:, None, None] * np.eye(n) - A0[idx] - np.einsum("qk,qkij->qij", E, A[idx])
    dD = np.eye(n) + np.einsum("qk,qkij->qij", E * tau[idx], A[idx])
    det = np.linalg.det(D)
    trace = np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1)
    np.testing.assert_allclose(f, det, rtol=1e-11, atol=1e-13 * np.max(np.abs(det)))
    np.testing.assert_allclose(g, trace, rtol=1e-9)
    # Delta(0) = -(A0 + A_1 + A_2) made singular: a root at s = 0
    A0[0] = -A[0, 0] - A[0, 1]
    A0[0, 0, n - 1] = 0.0
    f0, g0 = Stack(A0, A, tau).det_logderiv(np.zeros(1, dtype=complex), np.zeros(1, dtype=int))
    assert abs(f0[0]) <= 1e-12 and np.isinf(g0[0])


def _lambert_cluster(a: np.ndarray) -> Stack:
    """``x_i' = -a_i x_i(t - 1)``: ``det Delta = prod (s + a_i e^{-s})``, roots
    ``W_k(-a_i)`` (Lambert W, every branch ``k``)."""
    n = a.size
    return Stack(np.zeros((1, n, n)), np.diag(-a)[None, None], np.ones((1, 1)))


def test_aberth_keeps_a_cluster_of_roots_apart():
    """16 real roots within 0.13 of each other (``W_0(-a_i)``, a_i = 0.2 ... 0.275): from
    perturbed starts the Ehrlich-Aberth iteration converges to all 16 (Lambert W), where
    Newton's method sends several starts to one root; from 16 starts crowded into 0.015 it
    still finds 16 distinct roots, each a root of the system (of branch 0 or -1)."""
    a = 0.2 + 0.005 * np.arange(16)
    st = _lambert_cluster(a)
    exact = np.sort(np.real(lambertw(-a, 0)))
    idx = np.zeros(16, dtype=int)
    start = (exact + 0.3 * (exact - exact.mean())).astype(complex)
    lam, active = st.aberth(start, idx, tol=1e-12, stall_tol=1e-9, maxiter=60)
    assert not active.any() and np.all(lam.imag == 0)
    np.testing.assert_allclose(np.sort(lam.real), exact, rtol=0, atol=1e-12)
    newton, _ = st.newton(start, idx, tol=1e-12, stall_tol=1e-9, keep_real=True, maxiter=60)
    assert np.unique(np.round(newton.real, 8)).size < 16
    crowded = (exact.mean() + 1e-3 * np.arange(16)).astype(complex)
    lam, active = st.aberth(crowded, idx, tol=1e-12, stall_tol=1e-9, maxiter=60)
    every = np.concatenate([np.real(lambertw(-a, 0)), np.real(lambertw(-a, -1))])
    assert not active.any()
    assert np.max(np.min(np.abs(lam.real[:, None] - every[None]), axis=1)) < 1e-12
    assert np.unique(np.round(lam.real, 9)).size == 16


def test_aberth_deflates_by_the_mirror_images_of_complex_roots():
    """Complex pairs ``W_0(-a_i)`` (a_i = 1 ... 1.15, above 1/e), one upper representative
    each, of several systems at once: each converges to its own pair."""
    a = 1.0 + 0.01 * np.arange(16)
    one = _lambert_cluster(a)
    st = Stack(np.repeat(one.A0, 2, 0), np.repeat(one.A, 2, 0), np.repeat(one.tau, 2, 0))
    exact = lambertw(-a, 0)
    exact = exact[np.argsort(exact.imag)]
    start = np.concatenate([exact * (1 + 0.005j), exact * (1 - 0.01)])
    idx = np.repeat([0, 1], 16)
    lam, active = st.aberth(start, idx, tol=1e-12, stall_tol=1e-9, maxiter=60)
    assert not active.any()
    for k in (0, 1):
        got = lam[idx == k]
        got = got[np.argsort(got.imag)]
        np.testing.assert_allclose(got, exact, rtol=0, atol=1e-11)


def test_full_scales_of_a_part_are_its_own():
    # second method: the scales computed on the part alone; badly scaled systems that take
    # different numbers of Osborne sweeps, so that a batch goes on after some have settled
    rng = np.random.default_rng(5)
    K, n = 6, 7
    A0 = rng.normal(size=(K, n, n)) * np.exp(rng.uniform(-12, 12, size=(K, 1, n)))
    A = rng.normal(size=(K, 2, n, n)) * np.exp(rng.uniform(-6, 6, size=(K, 1, n, 1)))
    st = Stack(A0, A, np.tile([0.3, 0.8], (K, 1)))
    whole = st.full_scales
    assert np.any(whole != 1.0) and np.all(np.log2(whole) == np.round(np.log2(whole)))
    idx = np.array([4, 1, 1, 3])
    part = st.take(idx)
    assert "full_scales" in part.__dict__  # handed on, not computed again
    alone = Stack(A0[idx], A[idx], st.tau[idx]).full_scales
    assert np.array_equal(part.full_scales, alone)
    assert np.array_equal(alone, whole[idx])
    # a stack whose scales were never computed hands on nothing
    assert "full_scales" not in Stack(A0, A, st.tau).take(idx).__dict__
