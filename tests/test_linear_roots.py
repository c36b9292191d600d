"""Characteristic roots: Lambert W closed forms, the argument principle, zero roots, errors."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.roots import characteristic_roots, count_rhp_roots, generator_matrix


def _lambert_roots(a, b, tau, branches=range(-6, 7)):
    """Roots of lambda = a + b exp(-lambda tau): a + W_k(b tau exp(-a tau)) / tau."""
    z = b * tau * np.exp(-a * tau)
    r = np.array([a + lambertw(z, k) / tau for k in branches])
    return r[np.lexsort((-r.imag, -r.real))]


@pytest.mark.parametrize("a, b, tau", [(0.0, -1.0, 1.0), (-0.5, 2.0, 0.7), (0.3, -4.0, 0.25)])
def test_scalar_roots_match_lambert_w(a, b, tau):
    lin = fn.LinearDDE(a, [(tau, b)])
    roots = lin.roots(k=7)
    expected = _lambert_roots(a, b, tau)[:7]
    np.testing.assert_allclose(roots.values, expected, rtol=1e-11, atol=1e-12)
    assert all(r.residual < 1e-13 and r.multiplicity == 1 for r in roots)
    assert lin.spectral_abscissa() == pytest.approx(expected[0].real, abs=1e-12)


def _winding_count(f, re_lo, re_hi, im_lo, im_hi, n=4000):
    """Zeros of f inside the rectangle by the argument principle (dense boundary sampling)."""
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    corners = [
        complex(re_lo, im_lo),
        complex(re_hi, im_lo),
        complex(re_hi, im_hi),
        complex(re_lo, im_hi),
    ]
    path = np.concatenate(
        [a + (b - a) * t for a, b in zip(corners, corners[1:] + corners[:1], strict=True)]
    )
    vals = f(np.append(path, path[0]))
    steps = np.angle(vals[1:] / vals[:-1])
    assert np.max(np.abs(steps)) < np.pi / 4, "boundary sampling too coarse for the test"
    return steps.sum() / (2 * np.pi)


def test_multi_delay_matrix_roots_agree_with_argument_principle():
    A0 = np.array([[-1.0, 0.5, 0.0], [0.0, -0.3, 1.0], [0.2, 0.0, -0.8]])
    A1 = np.array([[0.0, 0.0, -1.2], [0.4, 0.0, 0.0], [0.0, -0.6, 0.0]])
    A2 = np.array([[0.3, 0.0, 0.0], [0.0, -0.9, 0.0], [0.0, 0.0, 0.5]])
    lin = fn.LinearDDE(A0, [(0.8, A1), (2.1, A2)])
    box = (-1.5, 2.0, -12.0, 12.0)
    roots = lin.roots(region=box)
    count = sum(r.multiplicity for r in roots)
    winding = _winding_count(lin.characteristic, *box)
    assert abs(winding - round(winding)) < 1e-6
    assert count == round(winding) and count >= 6
    # every reported root is a root, and the rightmost ones are the same via k
    assert all(r.residual < 1e-12 for r in roots)
    top = lin.roots(k=3)
    np.testing.assert_allclose(top.values, roots.values[:3], rtol=1e-10)
    # the unstable count agrees with the argument principle on the right half of the box
    rhp = _winding_count(lin.characteristic, 0.0, 40.0, -60.0, 60.0, n=20000)
    assert count_rhp_roots(lin) == round(rhp)


def test_zero_delay_terms_give_the_ode_eigenvalues():
    A0 = np.array([[0.0, 1.0], [-2.0, -0.3]])
    A1 = np.array([[0.1, 0.0], [0.5, 0.0]])
    lin = fn.LinearDDE(A0, [(0.0, A1)])
    assert lin.delays == ()
    ev = np.linalg.eigvals(A0 + A1)
    np.testing.assert_allclose(
        np.sort_complex(lin.roots(k=2).values), np.sort_complex(ev), rtol=1e-13
    )


def test_double_root_at_zero_is_exact_and_not_stable():
    # x' = x - x(t - 1): lambda = 1 - exp(-lambda) has a double root at 0
    lin = fn.LinearDDE(1.0, [(1.0, -1.0)])
    roots = lin.roots(k=3)
    assert roots[0].value == 0 and roots[0].multiplicity == 2
    assert lin.spectral_abscissa() == 0.0
    assert not lin.is_stable()
    # the next pair is 1 + W_{1,-2}(-1/e) (W_0 = W_{-1} = -1 give the double root)
    expected = _lambert_roots(1.0, -1.0, 1.0, branches=[1, -2])
    np.testing.assert_allclose(np.sort_complex(roots.values[1:3]), np.sort_complex(expected))


def test_integrator_ode_double_root():
    lin = fn.LinearDDE([[0.0, 1.0], [0.0, 0.0]])
    (root,) = lin.roots()
    assert root.value == 0 and root.multiplicity == 2


def test_simple_root_at_zero_with_delay():
    # RCP at beta = 0: s (s + alpha e^{-s}) has a simple root at 0, others stable
    lin = fn.LinearDDE([[0.0, 0.0], [0.0, 0.0]], [(1.0, [[-0.8, 0.0], [1.0, 0.0]])])
    roots = lin.roots(k=3)
    assert roots[0].value == 0 and roots[0].multiplicity == 1
    assert roots[1].real < -0.1


def test_generator_eigenvalues_converge_spectrally():
    lin = fn.LinearDDE(0.0, [(1.0, -1.0)])
    exact = _lambert_roots(0.0, -1.0, 1.0)[0]
    errs = []
    for N in (6, 10, 14):
        ev = np.linalg.eigvals(generator_matrix(lin, N))
        errs.append(np.min(np.abs(ev - exact)))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-8


def test_dimensional_scales_and_rcp_rightmost():
    # the RCP linearization (seed 004 eq 8) has char. eq. d0^2 s^2 + (alpha d0 s + beta) e^{-s d0}
    lin = fn.models.rcp().linearize(alpha=0.4, beta=0.2)
    for r in lin.roots(k=5):
        lam = r.value * 0.2
        assert abs(lam**2 + (0.4 * lam + 0.2) * np.exp(-lam)) < 1e-12


def test_bad_arguments():
    lin = fn.LinearDDE(0.0, [(1.0, -1.0)])
    with pytest.raises(fn.OptionError, match="k = 0"):
        lin.roots(k=0)
    with pytest.raises(fn.OptionError, match="region"):
        lin.roots(region=(1.0, 0.0, -1.0, 1.0))
    with pytest.raises(fn.OptionError, match="region"):
        lin.roots(region="left")
    with pytest.raises(fn.OptionError, match="n_nodes"):
        characteristic_roots(lin, n_nodes=1)


def test_warns_when_not_converged():
    # a fast rotation (+-300j) coupled through a unit delay needs N ~ 200
    lin = fn.LinearDDE([[0.0, 300.0], [-300.0, 0.0]], [(1.0, [[-0.5, 0.0], [0.0, -0.5]])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        characteristic_roots(lin, k=2, max_nodes=20)
    assert any("not converged" in str(w.message) for w in caught)
    # with room to grow, the rightmost roots are +-300j - 0.5 exp(-lambda), Newton-exact
    r = lin.roots(k=2)[0].value
    assert abs(r - (300j - 0.5 * np.exp(-r))) < 1e-9 and abs(r.imag - 300) < 1


def test_large_gain_delay_has_a_small_rightmost_root():
    # x' = -300 x(t - 1): the rightmost root is W_0(-300), not of size 300
    lin = fn.LinearDDE(0.0, [(1.0, -300.0)])
    roots = lin.roots(k=2)
    np.testing.assert_allclose(roots.values, _lambert_roots(0.0, -300.0, 1.0)[:2], rtol=1e-12)


def test_k_rightmost_are_complete_by_the_argument_principle():
    # s^2 + 0.3 e^{-s} (RCP's G1 denominator, seed 004 Sec IV-D, d0 = 1): every root with
    # Re >= sigma has |s|^2 <= 0.3 e^{-sigma}, so the box below holds all roots right of sigma
    lin = fn.QuasiPolynomial({0.0: [1.0, 0.0, 0.0], 1.0: [0.3]}).companion()
    roots = lin.roots(k=6)
    sigma = roots[-1].real - 0.05
    reach = np.sqrt(0.3 * np.exp(-sigma)) + 1.0
    count = _winding_count(lin.characteristic, sigma, reach, -reach, reach, n=20000)
    assert round(count) == 6 and abs(count - 6) < 1e-6
    assert lin.roots(k=7)[-1].real < sigma
    np.testing.assert_allclose(
        roots.values[:2], [0.12674441 + 0.49822033j, 0.12674441 - 0.49822033j], atol=1e-8
    )


def test_stiff_undelayed_mode_does_not_inflate_the_discretization():
    # a fast decoupled mode at -1e4 next to x' = -x(t - 1): the rightmost roots are Lambert W's
    lin = fn.LinearDDE([[-1e4, 0.0], [0.0, 0.0]], [(1.0, [[0.0, 0.0], [0.0, -1.0]])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        roots = lin.roots(k=4)
    np.testing.assert_allclose(roots.values, _lambert_roots(0.0, -1.0, 1.0)[:4], rtol=1e-11)
    assert roots.n_nodes <= 40


@pytest.mark.parametrize("w", [1.0, 3.0])
def test_mild_imbalance_does_not_inflate_the_discretization(w):
    # A_k = D^-1 B_k D with D = diag(1, 1000): B0 = [[0, w], [-w, 0]], B1 = -I (unit delay), so
    # lambda = +-iw + W_k(-e^{-+iw}) (Lambert W). Balancing leaves a factor ~1000 alone; the
    # size bound of the unbalanced norms (||A0|| = 1000 w) asked for N ~ 600 w > 400 and
    # warned, and (w = 3) the argument-principle contour sized by them was too long to count.
    B0 = np.array([[0.0, w], [-w, 0.0]])
    D = np.diag([1.0, 1000.0])
    lin = fn.LinearDDE(np.linalg.solve(D, B0 @ D), [(1.0, -np.eye(2))])
    exact = [mu + lambertw(-np.exp(-mu), k) for mu in (1j * w, -1j * w) for k in range(-4, 5)]
    exact = sorted(exact, key=lambda z: (-z.real, -z.imag))[:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        roots = lin.roots(k=6)
    np.testing.assert_allclose(roots.values, exact, rtol=1e-12)
    assert all(r.residual <= 1e-12 for r in roots) and roots.certified
    assert roots.n_nodes <= 40


def test_double_real_root_of_a_real_system_is_real():
    # x' = -x(t - 1)/e: lambda + exp(-lambda - 1) = 0 has the double root -1 (f(-1) = f'(-1) = 0);
    # in floating point the pair splits 1e-8 off the axis, and was reported as -1 + 2e-8j alone
    lin = fn.LinearDDE(0.0, [(1.0, -1.0 / math.e)])
    roots = lin.roots(k=4)
    top = roots[0]
    assert top.value == complex(top.real, 0.0) and top.multiplicity == 2
    assert top.real == pytest.approx(-1.0, abs=1e-7)
    # every non-real root of a real system comes with its exact conjugate
    vals = roots.values[:-1]  # the last may be half of a pair cut at k
    for v in vals[vals.imag != 0]:
        assert v.conjugate() in vals


def test_certificate_of_a_system_whose_states_differ_by_a_factor_1000():
    """Three decoupled Hayes factors s - a_i + b_i e^{-s} (Lambert W roots), mixed by a
    rotation and scaled by diag(1, 1, 1000): the same characteristic function, entries from
    1e-3 to 1e4. The discretization does not need balancing at that ratio, but the argument
    principle samples up to twice the matrix norm; it must balance or it runs out of samples
    (the rightmost root was reported uncertified, with the roots themselves right)."""
    a = np.array([-1.0, -2.0, -12.0])
    b = np.array([-0.5, -1.5, -8.0])
    c, s = math.cos(0.7), math.sin(0.7)
    Q = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]) @ np.array(
        [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    )
    T = Q @ np.diag([1.0, 1.0, 1000.0])
    Ti = np.linalg.inv(T)
    lin = fn.LinearDDE(Ti @ np.diag(a) @ T, [(1.0, Ti @ np.diag(b) @ T)])
    assert np.abs(lin.A0).max() > 3e3
    exact = np.concatenate(
        [ai + lambertw(bi * np.exp(-ai), np.arange(-3, 4)) for ai, bi in zip(a, b, strict=True)]
    )
    top = exact[np.argmax(exact.real)]
    roots = characteristic_roots(lin, k=4)
    assert roots.certified is True
    assert abs(roots[0].value.real - top.real) < 1e-10
    assert lin.spectral_abscissa() == pytest.approx(top.real, abs=1e-10)


# --------------------------------------------------------------- roots verified, not assumed
def _primal_dual(k=3.7244898, w=1.0, gamma=0.0016, N=10.0, C=100.0, T=0.2):
    """The primal-dual law x' = k (w - x(t-T) p(t-T)), p' = gamma (N x(t-T/2) - C) linearized
    by hand at x* = C/N, p* = w/x*: det Delta = s^2 + k p* s e^{-sT} + k x* gamma N e^{-3sT/2}."""
    x, p = C / N, w * N / C
    lin = fn.LinearDDE(
        np.zeros((2, 2)), [(T / 2, [[0.0, 0.0], [gamma * N, 0.0]]), (T, [[-k * p, -k * x], [0, 0]])]
    )
    return lin, (k * p, k * x * gamma * N, T)


def _mp_root(a, b, T, start):
    import mpmath as mp

    with mp.workdps(40):
        f = lambda s: s**2 + a * s * mp.exp(-T * s) + b * mp.exp(-1.5 * T * s)  # noqa: E731
        return complex(mp.findroot(f, mp.mpc(start)))


def test_root_next_to_a_spurious_eigenvalue_is_the_root():
    """Issue 23, item 1: a spurious eigenvalue of the discretization, carried by Newton to
    within 9e-7 of the rightmost root in 30 steps, passed the residual test and was merged
    with the root, keeping its own value (-0.1001815065 + 0.7850014823j, det Delta = 1.4e-6
    there) and the root's residual (7.8e-20). The root from mpmath at 40 digits:"""
    lin, (a, b, T) = _primal_dual()
    exact = _mp_root(a, b, T, -0.1001818242 + 0.7850006088j)
    assert abs(exact - (-0.1001818242 + 0.7850006088j)) < 1e-10
    roots = lin.roots(k=6)
    top = roots[0]
    assert abs(top.value - exact) <= 1e-13 * abs(exact)
    assert abs(top.value - exact) <= top.error <= 1e-10  # the inclusion holds the root
    assert top.multiplicity == 1 and roots.certified
    # every reported root is a root to the same standard (mpmath from the reported value)
    for r in roots:
        true = _mp_root(a, b, T, r.value)
        assert abs(r.value - true) <= 1e-12 * abs(true)
        assert abs(r.value - true) <= r.error


def test_inclusion_discs_hold_the_exact_roots():
    # simple roots: Lambert W; the double root -1 of lambda + exp(-lambda - 1) = 0
    lin = fn.LinearDDE(-0.5, [(0.7, 2.0)])
    for r, exact in zip(lin.roots(k=5), _lambert_roots(-0.5, 2.0, 0.7)[:5], strict=True):
        assert r.multiplicity == 1 and abs(r.value - exact) <= r.error <= 1e-11 * abs(exact)
    top = fn.LinearDDE(0.0, [(1.0, -1.0 / math.e)]).roots(k=1)[0]
    assert top.multiplicity == 2 and abs(top.value + 1.0) <= top.error <= 1e-6


#: A PI controller over TCP (fn.models.hollot_pi) where main listed one root twice (issue 33).
PI_TCP = {
    "N": 300.3389312633782,
    "Tp": 0.47661413691627375,
    "q_ref": 8.261160380386503,
    "K_pi": 1.071014629338844e-09,
    "z": 0.049543634017343796,
}


def _pi_over_tcp(C=106260.831072):
    return fn.models.hollot_pi().linearize(params={**PI_TCP, "C": C})


def test_a_root_newton_left_next_to_another_is_listed_once():
    """main's roots(k=8) listed -0.2036217556 and -0.2036217559 (a candidate Newton left 1e-9
    from the root, whose wider inclusion disc still wound once around it), so the certificate
    counted 3 roots right of Re s = -0.27 where there are 2. The real roots against brentq on
    det Delta(lambda) for real lambda (a second method)."""
    from scipy.optimize import brentq

    lin = _pi_over_tcp()
    (tau,) = lin.delays

    def det(x):
        return np.linalg.det(x * np.eye(3) - lin.A0 - lin.A[0] * math.exp(-x * tau))

    grid = np.linspace(-3.0, 0.0, 3001)
    vals = np.array([det(x) for x in grid])
    cross = np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))
    exact = sorted(brentq(det, grid[i], grid[i + 1], xtol=1e-15) for i in cross)[::-1]
    roots = lin.roots(k=8)
    assert roots.certified
    real = [r.real for r in roots if r.imag == 0.0]
    assert real == pytest.approx(exact, rel=1e-9)
    v = roots.values
    assert min(abs(a - b) for i, a in enumerate(v) for b in v[:i]) > 1e-6


def test_certified_roots_grow_the_discretization_until_certified():
    """A first size whose roots fail the certificate (here a duplicate of the rightmost root,
    the defect above, put back) is refined (n_nodes grows 1.5x) until they pass; a fixed
    n_nodes is kept."""
    from fluidnet.linear.roots import _certify, certified_roots
    from fluidnet.linear.rootset import CharacteristicRoot, Roots

    lin = fn.LinearDDE(0.0, [(1.0, -1.0)])  # x' = -x(t - 1): roots W_k(-1)
    sizes = []

    def flawed(lin, k, region, *, max_nodes, n_nodes):
        sizes.append(n_nodes)
        got = characteristic_roots(lin, k, region, max_nodes=max_nodes, n_nodes=n_nodes)
        if n_nodes is None:  # the defect: the rightmost pair listed twice
            extra = [CharacteristicRoot(value=r.value * (1 + 1e-9), residual=0.0) for r in got[:2]]
            listed = sorted([*got, *extra], key=lambda r: (-r.real, -r.imag))
            got = _certify(lin, Roots(listed, got.n_nodes), None)  # the real certificate
        return got

    roots = certified_roots(lin, k=4, solve=flawed)
    assert roots.certified and len(sizes) >= 2 and sizes[1] > 0
    assert roots[0].value == pytest.approx(complex(lambertw(-1.0, 0)), abs=1e-12)
    sizes.clear()
    assert certified_roots(lin, k=4, n_nodes=20, solve=flawed).certified and sizes == [20]


def test_kept_discretization_eigenvalues_are_those_of_the_system_as_it_is():
    """The eigenvalues of a discretization are kept for the same entries and size (a root path
    counting at one value again with more roots gets them without solving again), keyed by
    the entries themselves: a system changed in place gets its own eigenvalues, equal to a
    fresh solve's, not the kept ones."""
    from fluidnet.linear import roots as roots_module
    from fluidnet.threads import single_threaded_blas

    rng = np.random.default_rng(3)
    n, N = 12, 20  # 252 rows: kept
    lin = fn.LinearDDE(
        -2.0 * np.eye(n) + 0.3 * rng.normal(size=(n, n)), [(1.0, rng.normal(size=(n, n)))]
    )

    def solved():
        with single_threaded_blas():
            return np.linalg.eigvals(generator_matrix(lin, N))

    roots_module._EIGENVALUES.clear()
    first = roots_module._generator_eigenvalues(lin, N)
    assert not first.flags.writeable
    np.testing.assert_array_equal(first, solved())
    assert roots_module._generator_eigenvalues(lin, N) is first
    assert roots_module._generator_eigenvalues(lin, N + 1) is not first
    lin.A0[0, 0] += 0.5
    changed = roots_module._generator_eigenvalues(lin, N)
    assert changed is not first
    np.testing.assert_array_equal(changed, solved())
    assert np.max(np.abs(np.sort_complex(changed) - np.sort_complex(first))) > 1e-3
