"""The compiled steps of the equilibrium search's damped Newton iteration (``scaled_steps`` of
``fluidnet/linear/src/samples.c``, called by ``fluidnet.symbolic.densenewton._step_in``)
against independent solutions: the unscaled Newton step ``J^{-1} F`` (the scaling is a
similarity, so the step does not depend on it), the least-norm solution of a singular system by
LAPACK's ``gelsd`` (``numpy.linalg.lstsq``), and NumPy's iteration that the kernel replaces
(the same searches, equilibria and verdicts on the laws of the tests)."""

from __future__ import annotations

import numpy as np
import pytest
from equilibrium_laws import kelly3, tandem, tandem_reference, window_red, window_reference

from fluidnet.linear import samples
from fluidnet.symbolic import densenewton
from fluidnet.symbolic.densenewton import KERNEL_BELOW, _step_in, _step_numpy, newton
from fluidnet.symbolic.equilibrium import _plan
from fluidnet.symbolic.nearby import _point_step, _point_step_numpy
from fluidnet.symbolic.rootsearch import starts

pytestmark = pytest.mark.skipif(
    densenewton._kernel() is None, reason="the compiled kernel is not built"
)


def _stack(rng, K: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """K well-conditioned systems of n states with states and equations of very unequal sizes
    (what the scaling is for): J = D1 (I + 0.3 N / sqrt(n)) D2, cond(N-part) about 2."""
    d1 = 10.0 ** rng.uniform(-4, 4, (K, n))
    d2 = 10.0 ** rng.uniform(-4, 4, (K, n))
    core = np.eye(n) + 0.3 * rng.standard_normal((K, n, n)) / np.sqrt(n)
    J = d1[:, :, None] * core * d2[:, None, :]
    J[1::2] = J[1::2, ::-1]  # rows reversed: zeros near the diagonal, so that LU must pivot
    J[1::4, :, 0] *= 1e-3
    X = rng.standard_normal((K, n)) / d2
    F = rng.standard_normal((K, n)) * d1
    F[1::2] = F[1::2, ::-1]
    return J, F, X


def _allowed(J: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The rounding error a backward-stable solve may make, relative to the step: ``10 n eps``
    times the condition number of each scaled system (of its nonzero singular values)."""
    cols = np.where(X != 0, np.abs(X), 1.0)
    A = J * cols[:, None, :]
    A = A / np.maximum(np.abs(A).sum(axis=2, keepdims=True), 1e-300)
    sv = np.linalg.svd(A, compute_uv=False)
    kept = np.where(sv > J.shape[1] * np.finfo(float).eps * sv[:, :1], sv, np.inf)
    return 10 * J.shape[1] * np.finfo(float).eps * sv[:, 0] / kept.min(axis=1)


def _gap(dX: np.ndarray, want: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The largest difference of each row's steps in the scaled states (``dX_j / |x_j|``, what
    the solve computes), relative to the largest scaled step."""
    cols = np.where(X != 0, np.abs(X), 1.0)
    return np.abs((dX - want) / cols).max(axis=1) / np.abs(want / cols).max(axis=1)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12, KERNEL_BELOW - 1])
def test_steps_of_regular_systems_are_the_newton_steps(n):
    rng = np.random.default_rng(n)
    J, F, X = _stack(rng, 64, n)
    singular = [False]
    dX, r, rows = _step_in(F, J, X, singular)
    assert not singular[0]
    # unscaled: J dX = F, with a step of iterative refinement (J's rows and columns are of very
    # unequal sizes: LAPACK's solve alone is less accurate than the scaled one, refined it is
    # backward stable entry by entry; Skeel 1980)
    x0 = np.linalg.solve(J, F[:, :, None])[..., 0]
    exact = x0 + np.linalg.solve(J, (F - np.einsum("kij,kj->ki", J, x0))[:, :, None])[..., 0]
    allowed = _allowed(J, X)
    assert np.all(allowed < 1e-8)  # a test of well-conditioned systems
    assert np.all(_gap(dX, exact, X) <= allowed)
    # the scaled residuals and the row sizes by their definitions
    size = np.einsum("kij,kj->ki", np.abs(J), np.abs(X))
    assert rows == pytest.approx(size, rel=1e-14)
    assert r == pytest.approx(F / size, rel=1e-14)
    # and the NumPy iteration's steps (LAPACK's LU): the same to rounding
    ref = _step_numpy(F, J, X, [False])
    assert np.all(_gap(dX, ref[0], X) <= allowed)


@pytest.mark.parametrize("n", [2, 3, 5, 9])
def test_singular_systems_take_the_step_of_least_norm(n):
    rng = np.random.default_rng(10 + n)
    J, F, X = _stack(rng, 40, n)
    J[::2, :, 0] = 0.0  # a state no equation depends on (the tandem's W at 0)
    J[1::4, n - 1, :] = 0.0  # an equation of no state, and a state of no equation
    J[1::4, :, n - 2] = 0.0
    singular = [False]
    dX, r, rows = _step_in(F, J, X, singular)
    assert singular[0]
    cols = np.where(X != 0, np.abs(X), 1.0)
    allowed = _allowed(J, X)
    assert np.all(allowed < 1e-8)
    for k in range(len(J)):
        A = J[k] * cols[k][None, :] / rows[k][:, None]
        y = np.linalg.lstsq(A, r[k], rcond=None)[0]  # LAPACK gelsd: the least-norm solution
        assert _gap(dX[k : k + 1], (y * cols[k])[None], X[k : k + 1])[0] <= allowed[k], k
    # the state no equation depends on does not move
    assert np.all(dX[::2, 0] == 0.0)
    # NumPy's iteration (numpy.linalg.pinv): the same steps to rounding
    ref = _step_numpy(F, J, X, [False])[0]
    assert np.all(_gap(dX, ref, X) <= allowed)


def test_a_system_that_is_not_finite_has_a_nan_step_and_leaves_the_others_alone():
    rng = np.random.default_rng(3)
    J, F, X = _stack(rng, 6, 4)
    J[2, 1, 3] = np.nan
    F[4, 0] = np.inf
    dX, _, _ = _step_in(F, J, X, [False])
    assert np.isnan(dX[[2, 4]]).all()
    # one state, an infinite residual: NaN (a solve would give inf), as solve_rows gives it
    dX1, _, _ = _step_in(np.array([[np.inf]]), np.array([[[2.0]]]), np.array([[1.0]]), [False])
    assert np.isnan(dX1).all()
    good = [0, 1, 3, 5]
    exact = np.linalg.solve(J[good], F[good][:, :, None])[..., 0]
    assert dX[good] == pytest.approx(exact, rel=1e-12)


def test_the_kernel_refuses_arrays_of_the_wrong_size():
    module = samples.compiled_samples()
    assert module is not None
    K, n = 3, 4
    out = [np.empty((K, n)) for _ in range(3)] + [np.empty(K)]
    with pytest.raises(ValueError, match="scaled_steps: X has"):
        module.scaled_steps(np.zeros((K, n, n)), np.zeros((K, n)), np.zeros((K, n + 1)), *out, K, n)
    with pytest.raises(ValueError, match="scaled_steps: singular has"):
        module.scaled_steps(
            np.zeros((K, n, n)), np.zeros((K, n)), np.zeros((K, n)), *out[:3], np.empty(K + 1),
            K, n,
        )  # fmt: skip


def test_one_point_step_is_the_stacks():
    rng = np.random.default_rng(5)
    J, F, X = _stack(rng, 3, 4)
    J[1, :, 2] = 0.0
    allowed = _allowed(J, X)
    for k in range(3):
        step, err = _point_step(F[k], J[k], X[k])
        ref, ref_err = _point_step_numpy(F[k], J[k], X[k])
        assert err == pytest.approx(ref_err, rel=1e-14)
        assert _gap(step[None], ref[None], X[k : k + 1])[0] <= allowed[k]
    # at the rounding level no step is taken
    x = np.array([2.0, 3.0])
    step, err = _point_step(np.array([1e-17, 0.0]), np.eye(2), x)
    assert err <= densenewton.TOL and np.all(step == 0.0)


@pytest.mark.parametrize("law", ["tandem", "kelly3", "window"])
def test_the_search_reaches_what_numpys_iteration_reaches(law, monkeypatch):
    # every start of the search's first pass (every boundary configuration), both ways: the same
    # rows converge, to the same points (to rounding); the singular systems of the tandem's rows
    # stuck at W = 0 are among them
    m = {"tandem": tandem, "kelly3": kelly3, "window": window_red}[law]()
    plan = _plan(m)
    p = np.array([m.params[k].value for k in m.param_names], dtype=float)
    X0 = starts(plan.code.n, None, p)
    masks = [np.zeros(plan.code.n, dtype=bool)]
    for i in plan.nonneg:
        masks += [mk | (np.arange(plan.code.n) == i) for mk in masks]
    X0 = np.concatenate([X0] * len(masks))
    held = np.repeat(np.array(masks), len(X0) // len(masks), axis=0)
    nonneg = np.array(plan.nonneg, dtype=int)
    compiled = newton(plan.code, X0, p, held, nonnegative=nonneg, quiet=8)
    monkeypatch.setattr(densenewton, "_kernel", lambda: None)
    reference = newton(plan.code, X0, p, held, nonnegative=nonneg, quiet=8)
    assert compiled.converged.sum() >= 4  # a comparison over something
    assert np.array_equal(compiled.converged, reference.converged)
    # converged rows end within the scaled residual FLOOR of a root, so two iterations that
    # differ by rounding may stop that far apart (relative to the states' size)
    ok = reference.converged
    size = np.abs(reference.x[ok]).max()
    assert np.abs(compiled.x[ok] - reference.x[ok]).max() <= 10 * densenewton.FLOOR * size


def test_equilibria_with_the_kernel_are_the_independent_solutions():
    # the window law's cubic and the tandem's reduction (equilibrium_laws.py), searched anew
    assert window_red().equilibrium(K=2e-4) == pytest.approx(window_reference(K=2e-4), rel=1e-13)
    eq = tandem().equilibrium(C1=2000.0)
    assert eq == pytest.approx(tandem_reference(2000.0), rel=1e-11, abs=1e-12)
    assert eq.boundary == ("q1",)


def _sparse_stack(rng, K: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """K diagonally dominant systems of n states, three nonzeros per row."""
    A = np.zeros((K, n, n))
    i = np.arange(n)
    A[:, i, i] = 4.0 + rng.random((K, n))
    A[:, i[:-1], i[1:]] = rng.normal(size=(K, n - 1))
    A[:, i[1:], i[:-1]] = rng.normal(size=(K, n - 1))
    return A, rng.normal(size=(K, n))


@pytest.mark.parametrize("K, sparse", [(40, False), (800, True)])
def test_a_stack_goes_sparse_only_when_its_dense_work_is_large(monkeypatch, K, sparse):
    """From SPARSE_FROM states a stack of sparse systems is one block-diagonal sparse LU, but
    only when the dense solve would cost more than scipy.sparse's import (K n^3 >= SPARSE_WORK:
    the thirty-flow rings' searches of about 46 systems paid 0.18 s of import for nothing).
    Either way the solutions are LAPACK's dense ones to rounding."""
    rng = np.random.default_rng(K)
    n = densenewton.SPARSE_FROM + 6
    A, b = _sparse_stack(rng, K, n)
    assert (K * n**3 >= densenewton.SPARSE_WORK) == sparse
    calls = []
    real = densenewton._sparse_blocks

    def spy(As, bs):
        calls.append(len(As))
        return real(As, bs)

    monkeypatch.setattr(densenewton, "_sparse_blocks", spy)
    y = densenewton.solve_rows(A, b)
    assert calls == ([K] if sparse else [])
    ref = np.linalg.solve(A, b[:, :, None])[..., 0]
    assert np.max(np.abs(y - ref) / np.abs(ref).max()) <= 1e-13
