"""fluidnet.linear.samples: the compiled samples of det Delta through the Schur complement,
against the NumPy evaluation of the same formulas (``Stack._schur_part``) and the dense LU
determinant; and ``Stack.residual_within`` against the singular value decomposition."""

import warnings

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.linear import samples
from fluidnet.linear.stacked import _NO_SOLVE, Stack
from fluidnet.sourcedigest import source_digest


def _star(rng, leaves=24, hubs=6, m=3, K=3, complex_entries=False):
    """Leaves that act on each other only through hubs (a network's flows and links)."""
    n = leaves + hubs
    dtype = complex if complex_entries else float
    A0 = np.zeros((K, n, n), dtype=dtype)
    A = np.zeros((K, m, n, n), dtype=dtype)
    for k in range(K):
        for i in range(leaves):
            j = i % m
            A[k, j, i, i] = -rng.uniform(0.5, 2.0)
            for h in rng.choice(hubs, 2, replace=False):
                imag = 1j * rng.normal() if complex_entries else 0.0
                A[k, j, i, leaves + h] = rng.normal() + imag
        for h in range(hubs):
            A0[k, leaves + h, leaves + h] = -rng.uniform(1, 3)
            A0[k, leaves + h, :leaves] = rng.normal(size=leaves) / leaves
    tau = np.tile(np.array([0.1, 0.2, 0.35])[:m], (K, 1)) * rng.uniform(0.5, 2.0, size=(K, 1))
    return Stack(A0, A, tau)


def test_the_kernel_is_built_from_these_sources():
    kernel = samples.compiled_samples()
    assert kernel is not None
    src = samples.Path(samples.__file__).parent / "src"
    assert kernel.SOURCE_DIGEST == source_digest(src)


@pytest.mark.parametrize("complex_entries", [False, True])
@pytest.mark.parametrize("phase", [False, True])
def test_kernel_equals_numpy_and_the_dense_determinant(complex_entries, phase):
    rng = np.random.default_rng(5)
    st = _star(rng, complex_entries=complex_entries)
    assert st.split[0].size == 24
    Q = 600
    s = rng.normal(size=Q) * 2 + 1j * rng.normal(size=Q) * 20
    idx = rng.integers(0, st.K, size=Q)
    f, g = st._det_logderiv_schur(s, idx, phase)  # the kernel
    f_np, g_np = st._schur_part(s, idx, phase)  # NumPy, the same formulas
    np.testing.assert_allclose(f, f_np, rtol=1e-12)
    np.testing.assert_allclose(g, g_np, rtol=1e-12, atol=1e-12)
    # second method: dense LU of the whole 30 x 30 characteristic matrix
    D, dD = st.delta(s, idx, derivative=True)
    det = np.linalg.det(D)
    np.testing.assert_allclose(f, det / np.abs(det) if phase else det, rtol=1e-10)
    np.testing.assert_allclose(g, np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1), rtol=1e-9)


def test_kernel_far_left_and_at_a_pole():
    rng = np.random.default_rng(9)
    st = _star(rng, K=1)
    # far left exp(-s tau) overflows: Delta is no finite matrix, the log-derivative is inf
    f, g = st._det_logderiv_schur(np.array([-1e4 + 0j, -3000 + 5j]), np.zeros(2, dtype=int))
    assert np.all(np.isinf(g))
    with np.errstate(all="ignore"):
        f_np, g_np = st._schur_part(np.array([-1e4 + 0j, -3000 + 5j]), np.zeros(2, dtype=int))
    assert np.all(~np.isfinite(g_np))
    # a root of a leaf's diagonal d_i (a pole of the complement): not a number, as in NumPy
    a = st.A[0, 0, 0, 0]  # leaf 0: s - a e^{-s tau}; s real root of s = a e^{-s tau}
    from scipy.optimize import brentq

    tau = st.tau[0, 0]
    r = float(brentq(lambda x: x - a * np.exp(-x * tau), a - 1, 0))  # type: ignore[arg-type]
    f, g = st._det_logderiv_schur(np.array([r + 0j]), np.zeros(1, dtype=int))
    f_np, g_np = st._schur_part(np.array([r + 0j]), np.zeros(1, dtype=int))
    assert np.isfinite(f) == np.isfinite(f_np) and np.isinf(g[0]) == (not np.isfinite(g_np[0]))


def test_kernel_refuses_indices_outside_their_arrays():
    rng = np.random.default_rng(2)
    st = _star(rng, K=2)
    kernel = samples.compiled_samples()
    assert kernel is not None
    s = np.array([0.5 + 1j])
    f, g = np.empty(1, complex), np.empty(1, complex)
    args = st._schur_compiled
    with pytest.raises(ValueError, match="outside"):
        kernel.schur_samples(s, np.array([2], dtype=np.int64), *args, 0, *_NO_SOLVE, f, g)
    with pytest.raises(ValueError, match="sizes"):
        kernel.schur_samples(s, np.array([0, 1], dtype=np.int64), *args, 0, *_NO_SOLVE, f, g)
    with pytest.raises(ValueError, match="sizes"):  # a mode that does not exist
        kernel.schur_samples(s, np.array([0], dtype=np.int64), *args, 3, *_NO_SOLVE, f, g)


def test_stale_kernel_falls_back_to_numpy_with_a_warning(monkeypatch):
    rng = np.random.default_rng(4)
    st = _star(rng, K=1)
    s = np.array([0.3 + 2j, -0.4 + 7j])
    idx = np.zeros(2, dtype=int)
    fast = st._det_logderiv_schur(s, idx)
    samples.compiled_samples.cache_clear()
    monkeypatch.setattr(samples, "source_digest", lambda directory: "edited")
    try:
        with pytest.warns(RuntimeWarning, match="other sources"):
            assert samples.compiled_samples() is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            slow = st._det_logderiv_schur(s, idx)  # NumPy's (the warning came once)
    finally:
        samples.compiled_samples.cache_clear()
    np.testing.assert_allclose(slow[0], fast[0], rtol=1e-12)
    np.testing.assert_allclose(slow[1], fast[1], rtol=1e-12)


def test_residual_within_decides_as_the_singular_values_do():
    rng = np.random.default_rng(12)
    st = _star(rng, K=2, leaves=12, hubs=4)
    # points near roots (Newton from random starts) and far from them
    s0 = rng.normal(size=200) + 1j * rng.normal(size=200) * 5
    idx = rng.integers(0, 2, size=200)
    near, active = st.newton(s0.copy(), idx, tol=1e-13, stall_tol=1e-10, maxiter=40)
    s = np.concatenate([near[~active], s0, near[~active] + 1e-7])
    k = np.concatenate([idx[~active], idx, idx[~active]])
    res = st.residual(s, k)
    assert np.sum(res <= 1e-8) >= 50  # roots are among them
    for tol in (1e-12, 1e-8, 1e-4, float(np.median(res))):
        np.testing.assert_array_equal(st.residual_within(s, k, tol), res <= tol)


def test_residual_within_with_an_exactly_singular_matrix():
    # x1 does not move: Delta(0) has a zero row, s = 0 is a root (numpy's solve refuses it)
    lin = fn.LinearDDE(
        [[0.0, 0.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, -2.0]],
        [(0.5, [[0.0, 0.0, 0.0], [0.0, 0.0, -0.5], [0.0, 0.0, 0.0]])],
    )
    st = Stack.from_systems([lin])
    s = np.array([0.0, 1e-3, 0.5 + 1j, -1.0])
    k = np.zeros(4, dtype=int)
    res = st.residual(s, k)
    assert res[0] == 0.0
    for tol in (1e-8, 1e-3, 1.0):
        np.testing.assert_array_equal(st.residual_within(s, k, tol), res <= tol)


def test_solve_norms_through_the_complement_equal_dense_solves():
    rng = np.random.default_rng(21)
    st = _star(rng, K=2, complex_entries=True)
    s = rng.normal(size=50) + 1j * rng.normal(size=50) * 6
    idx = rng.integers(0, 2, size=50)
    b = rng.normal(size=st.n) + 1j * rng.normal(size=st.n)
    norms = st._solve_norms(s, idx, b)
    assert norms is not None
    D = st.delta(s, idx)
    ref = np.linalg.norm(np.linalg.solve(D, np.broadcast_to(b[:, None], (50, st.n, 1))), axis=1)
    np.testing.assert_allclose(norms, ref[:, 0], rtol=1e-10)


def _dense_stack(rng, n, K=4, m=3, density=0.4, complex_entries=False):
    A0 = rng.normal(size=(K, n, n))
    A = rng.normal(size=(K, m, n, n)) * (rng.random((K, m, n, n)) < density)
    if complex_entries:
        A = A + 1j * rng.normal(size=A.shape) * (A != 0)
    A[:, 1] = 0.0  # a delay no system uses
    return Stack(A0, A, rng.uniform(0.1, 1.5, size=(K, m)))


@pytest.mark.parametrize("n", [5, 9, 15])
@pytest.mark.parametrize("complex_entries", [False, True])
def test_dense_kernel_equals_lapack(n, complex_entries):
    rng = np.random.default_rng(n)
    st = _dense_stack(rng, n, complex_entries=complex_entries)
    kernel = samples.compiled_samples()
    assert kernel is not None
    s = rng.normal(size=400) + 1j * rng.normal(size=400) * 10
    idx = rng.integers(0, st.K, size=400)
    f, g = st.det_logderiv(s, idx)  # the kernel (n >= DENSE_KERNEL_STATES)
    with np.errstate(all="ignore"):
        f_ref, g_ref = st._det_logderiv_lapack(s, idx)  # NumPy's det and solve
    np.testing.assert_allclose(f, f_ref, rtol=1e-11)
    np.testing.assert_allclose(g, g_ref, rtol=1e-11, atol=1e-12)
    # the solve's norm against NumPy's solve
    b = rng.normal(size=n) + 1j * rng.normal(size=n)
    norms = st._solve_norms(s, idx, b)
    assert norms is not None
    x = np.linalg.solve(st.delta(s, idx), np.broadcast_to(b[:, None], (400, n, 1)))
    np.testing.assert_allclose(norms, np.linalg.norm(x[..., 0], axis=1), rtol=1e-10)


def test_dense_kernel_singular_and_far_left():
    # x1 does not move and x0..x4 are a chain: Delta(0) has a zero row (det 0, no log-derivative)
    n = 6
    A0 = np.diag(-np.ones(n)) + np.diag(np.ones(n - 1), -1)
    A0[0, 0] = 0.0
    A = np.zeros((1, 1, n, n))
    A[0, 0, 2, 3] = -0.5
    st = Stack(A0[None], A, np.array([[0.5]]))
    f, g = st.det_logderiv(np.array([0.0 + 0j, 1.0 + 1j, -5000.0 + 0j]), np.zeros(3, dtype=int))
    assert f[0] == 0 and np.isinf(g[0])
    with np.errstate(all="ignore"):
        f_ref, g_ref = st._det_logderiv_lapack(np.array([1.0 + 1j]), np.zeros(1, dtype=int))
    np.testing.assert_allclose(f[1], f_ref[0], rtol=1e-13)
    np.testing.assert_allclose(g[1], g_ref[0], rtol=1e-13)
    assert np.isinf(g[2])  # exp(5000 * 0.5) overflows: no finite matrix


def test_dense_kernel_refuses_bad_input():
    rng = np.random.default_rng(3)
    st = _dense_stack(rng, 6, K=2)
    kernel = samples.compiled_samples()
    assert kernel is not None
    f, g = np.empty(1, complex), np.empty(1, complex)
    s, empty = np.array([0.5 + 1j]), np.zeros(0, dtype=complex)
    with pytest.raises(ValueError, match="outside"):
        kernel.dense_samples(s, np.array([5], dtype=np.int64), *st._dense_compiled, 0, empty, f, g)
    with pytest.raises(ValueError, match="sizes"):  # the solve without its right-hand side
        kernel.dense_samples(s, np.array([0], dtype=np.int64), *st._dense_compiled, 2, empty, f, g)


def test_the_kernel_takes_the_sizes_where_it_pays():
    # its unblocked LU costs n^3; LAPACK's blocked one wins from about 60 rows
    rng = np.random.default_rng(8)
    assert _dense_stack(rng, 15, K=1)._dense_kernel_pays
    assert not _dense_stack(rng, 4, K=1)._dense_kernel_pays  # cofactor expansion below 5
    assert not _dense_stack(rng, 60, K=1)._dense_kernel_pays
    big = _star(rng, leaves=120, hubs=60, K=1)  # a complement of 60 rows: LAPACK's
    assert big.split[1].size == 60
    assert big._solve_norms(np.array([0.3 + 1j]), np.zeros(1, dtype=int), np.ones(180)) is None
