"""fluidnet.linear.stacked.DenseKernel: Newton's method on ``det Delta`` of one system, compiled
(``dense_newton`` of ``fluidnet/linear/src/samples.c``), against the NumPy iterations it
replaces (:func:`fluidnet.linear.newton.newton_roots` with the LAPACK logarithmic derivative
of :mod:`fluidnet.linear.roots`; the loop of :func:`fluidnet.stability.crossing.newton_roots`)
and against Lambert W's roots of uncoupled scalar equations (an independent source)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear import roots as lroots
from fluidnet.linear import samples
from fluidnet.linear.newton import newton_roots as numpy_refinement
from fluidnet.linear.stacked import KERNEL_MAX_ROWS, dense_kernel
from fluidnet.stability import crossing

pytestmark = pytest.mark.skipif(
    samples.compiled_samples() is None, reason="the compiled kernel is not built"
)

#: x_i' = -a_i x_i(t - tau): the roots of each are W_k(-a_i tau) / tau
GAINS, TAU = np.array([0.3, 0.9, 1.7]), 0.8


def _uncoupled() -> tuple[fn.LinearDDE, np.ndarray]:
    lin = fn.LinearDDE(np.zeros((3, 3)), [(TAU, -np.diag(GAINS))])
    exact = np.array([lambertw(-a * TAU, k) / TAU for a in GAINS for k in (0, 1, 2)])
    return lin, exact


def _random_system(rng, n: int, complex_entries: bool = False) -> fn.LinearDDE:
    A0 = rng.normal(size=(n, n)) - 2.0 * np.eye(n)
    delayed = []
    for tau, density in ((0.3, 0.5), (1.1, 0.3)):
        A = rng.normal(size=(n, n)) * (rng.random((n, n)) < density)
        if complex_entries:
            A = A + 1j * rng.normal(size=(n, n)) * (A != 0)
        delayed.append((tau, A))
    return fn.LinearDDE(A0, delayed)


def _numpy_refinement(lin, lam, real, maxiter=40):
    parts = lroots._delayed_parts(lin)
    return numpy_refinement(lambda z: lroots._log_derivative(lin, z, parts), lam, real, maxiter)


def test_refinement_reaches_lambert_w_roots():
    lin, exact = _uncoupled()
    kernel = dense_kernel(lin)
    assert kernel is not None
    start = exact * (1 + 0.01) + 0.003j * np.abs(exact)
    lam, last = kernel.refine(start, real=True, maxiter=40)
    np.testing.assert_allclose(lam, exact, rtol=1e-12)
    assert np.all(last <= 1e-8 * (1 + np.abs(lam)))
    # real starts stay real (their steps are real), as NumPy's iteration keeps them
    lam, _ = kernel.refine(np.array([-0.5 + 0j, -4.0 + 0j]), real=True, maxiter=40)
    assert np.all(np.imag(lam) == 0.0)


@pytest.mark.parametrize("n", [3, 6, 12, 30])
@pytest.mark.parametrize("complex_entries", [False, True])
def test_refinement_equals_numpys(n, complex_entries):
    rng = np.random.default_rng(10 * n + complex_entries)
    lin = _random_system(rng, n, complex_entries)
    real = not complex_entries
    ev = np.linalg.eigvals(lroots.generator_matrix(lin, 12))
    start = ev[np.argsort(-ev.real)][:40]  # converged roots, spurious ones that wander
    start = np.concatenate([start, [np.nan + 0j, 1e308 + 1e308j]])
    kernel = dense_kernel(lin)
    assert kernel is not None
    lam, last = kernel.refine(start, real, 40)
    with np.errstate(all="ignore"):
        ref, ref_last = _numpy_refinement(lin, start, real)
    done, ref_done = last <= 1e-8 * (1 + np.abs(lam)), ref_last <= 1e-8 * (1 + np.abs(ref))
    np.testing.assert_array_equal(done, ref_done)
    np.testing.assert_array_equal(np.isfinite(lam), np.isfinite(ref))
    assert done.sum() >= 10
    np.testing.assert_allclose(lam[done], ref[done], rtol=1e-12, atol=1e-12)


def _numpy_follow(lin, lam, unit, maxiter, give_up):
    with np.errstate(all="ignore"):
        return crossing._newton_loop(lin, np.array(lam, dtype=complex), unit, maxiter, give_up)


def _follow(kernel, lam, unit, maxiter=40, give_up=None):
    return kernel.follow(
        lam,
        unit,
        maxiter,
        give_up,
        crossing.MULTIPLICITY_TOL,
        crossing.MAX_MULTIPLICITY,
        crossing.WANDER_STEP,
    )


def test_the_paths_corrector_finds_four_fold_roots():
    """Four uncoupled copies of x' = -0.3 x(t - 1): every root four-fold, where the plain
    Newton step shrinks by 3/4 an iteration; the longer steps converge within 40."""
    lin = fn.LinearDDE(np.zeros((4, 4)), [(1.0, -0.3 * np.eye(4))])
    exact = np.array([lambertw(-0.3, k) for k in (0, -1, 1, 2)])
    kernel = dense_kernel(lin)
    assert kernel is not None
    lam, active = _follow(kernel, exact * 1.01 + 0.004j * np.abs(exact), 1.0)
    assert not active.any()
    np.testing.assert_allclose(lam, exact, rtol=1e-10)
    ref, ref_active = _numpy_follow(lin, exact * 1.01 + 0.004j * np.abs(exact), 1.0, 40, None)
    np.testing.assert_array_equal(active, ref_active)
    np.testing.assert_allclose(lam, ref, rtol=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-7])
def test_the_paths_corrector_near_two_close_simple_roots(eps):
    """x1' = -a x1(t - 1), x2' = -(a + eps) x2(t - 1): two simple roots eps apart look double to
    Newton's method from afar (its steps shrink by about 1/2, so the longer steps are taken)
    until the pair is resolved and a longer step jumps across a root (back to plain steps):
    each start ends at one of the two Lambert W roots, as NumPy's iteration ends."""
    a = 0.3
    lin = fn.LinearDDE(np.zeros((2, 2)), [(1.0, -np.diag([a, a + eps]))])
    pair = np.array([lambertw(-a, 1), lambertw(-(a + eps), 1)])
    start = pair.mean() + np.array([0.05, 0.02 + 0.03j, -0.04j, 0.1 + 0.1j, 0.01])
    kernel = dense_kernel(lin)
    assert kernel is not None
    lam, active = _follow(kernel, start, 1.0)
    ref, ref_active = _numpy_follow(lin, start, 1.0, 40, None)
    assert not active.any() and not ref_active.any()
    np.testing.assert_allclose(lam, ref, rtol=1e-12)
    nearest = np.min(np.abs(lam[:, None] - pair[None, :]), axis=1)
    assert np.all(nearest <= 1e-9 * np.abs(pair[0]))


@pytest.mark.parametrize("n", [2, 5, 12])
@pytest.mark.parametrize("give_up", [None, 3])
def test_the_paths_corrector_equals_numpys(n, give_up):
    rng = np.random.default_rng(n)
    lin = _random_system(rng, n)
    ev = np.linalg.eigvals(lroots.generator_matrix(lin, 10))
    right = ev[np.argsort(-ev.real)][:30]
    # near the roots (converge), far from them (wander: given up after give_up iterations)
    start = np.concatenate([right * (1 + 1e-3), right + 3.0 + 2.0j, [np.nan + 0j]])
    kernel = dense_kernel(lin)
    assert kernel is not None
    unit = crossing.size_unit(lin)
    lam, active = _follow(kernel, start, unit, give_up=give_up)
    ref, ref_active = _numpy_follow(lin, start, unit, 40, give_up)
    np.testing.assert_array_equal(active, ref_active)
    np.testing.assert_array_equal(np.isfinite(lam), np.isfinite(ref))
    done = ~active & np.isfinite(lam)
    assert done.sum() >= 4
    np.testing.assert_allclose(lam[done], ref[done], rtol=1e-12, atol=1e-12)
    if give_up is not None:
        assert active.sum() >= 1  # some far starts were left


def test_critical_values_with_and_without_the_kernel(monkeypatch):
    """The critical delay of [MGT]'s TCP/RED fluid model (three states) and the critical gain
    of the three-route Kelly law: the compiled iterations and NumPy's agree to 1e-11."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import user_laws

    cases = [(fn.models.mgt_red, "Tp", (0.05, 1.0))]
    law = user_laws.LAWS["kelly_three_routes"]
    cases.append((law.build, *law.sweep))
    for build, name, (lo, hi) in cases:
        with_kernel = fn.critical_value(build(), name, lo, hi)
        with monkeypatch.context() as mp:
            mp.setattr(crossing, "dense_kernel", lambda lin: None)
            mp.setattr(lroots, "dense_kernel", lambda lin: None)
            crossing._STACKED.clear()
            without = fn.critical_value(build(), name, lo, hi)
        crossing._STACKED.clear()
        assert with_kernel.count_after == without.count_after
        np.testing.assert_allclose(with_kernel.value, without.value, rtol=1e-11)
        np.testing.assert_allclose(with_kernel.omega, without.omega, rtol=1e-10)


def test_sizes_and_bad_input():
    assert dense_kernel(fn.LinearDDE(-1.0, [(1.0, -0.5)])) is None  # closed forms for 1 state
    big = fn.LinearDDE(-np.eye(KERNEL_MAX_ROWS + 1), [(1.0, 0.1 * np.eye(KERNEL_MAX_ROWS + 1))])
    assert dense_kernel(big) is None  # LAPACK's blocked LU wins
    lin, _ = _uncoupled()
    kernel = dense_kernel(lin)
    assert kernel is not None
    compiled = samples.compiled_samples()
    assert compiled is not None
    s = np.array([0.1 + 1j])
    f, g = np.empty(1, complex), np.empty(1, complex)
    args = kernel._newton_args
    with pytest.raises(ValueError, match="sizes"):  # a path's corrector needs six options
        compiled.dense_newton(s, *args, 1, np.zeros(2), f, g)
    bad = (*args[:3], np.array([4], dtype=np.int64), *args[4:])  # a delay that is not there
    with pytest.raises(ValueError, match="outside"):
        compiled.dense_newton(s, *bad, 0, np.zeros(2), f, g)
