"""fluidnet.linear.certificate: the argument-principle count right of a line, against the
Lambert-W roots of scalar DDEs and the roots of block-diagonal systems."""

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.certificate import LINE_OFFSETS, certificate_line, count_right_of
from fluidnet.linear.stacked import Stack


def _lambert_roots(a, b, tau, branches=200):
    """The roots a + W_k(b tau e^{-a tau}) / tau of s - a - b e^{-s tau}, |k| <= branches."""
    z = b * tau * np.exp(-a * tau)
    return np.array([a + lambertw(z, k) / tau for k in range(-branches, branches + 1)])


CASES = [  # (a, b, tau): stable, one real unstable root, an unstable complex pair, several pairs
    (-1.0, -0.5, 1.0),
    (0.5, 0.2, 1.0),
    (0.0, -2.0, 1.0),
    (-0.1, -20.0, 1.0),
]


@pytest.mark.parametrize("sigma", [-1.3, -0.35, 0.05, 0.4, 1.7])
def test_count_matches_lambert_w_roots(sigma):
    systems = [fn.LinearDDE([[a]], [(tau, [[b]])]) for a, b, tau in CASES]
    count, samples = count_right_of(Stack.from_systems(systems), np.full(len(CASES), sigma))
    expected = [int(np.sum(_lambert_roots(a, b, tau).real > sigma)) for a, b, tau in CASES]
    assert list(count) == expected
    assert np.all(samples > 0)


def test_several_pairs_are_counted():
    """b = -20: s + 0.1 + 20 e^{-s} has three unstable pairs (Lambert branches 0, +-1, +-2)."""
    a, b, tau = CASES[3]
    roots = _lambert_roots(a, b, tau)
    assert int(np.sum(roots.real > 0)) == 6  # the independent count itself, for the record
    count, _ = count_right_of(
        Stack.from_systems([fn.LinearDDE([[a]], [(tau, [[b]])])]), np.array([0.0])
    )
    assert count[0] == 6


def test_block_diagonal_count_is_the_sum_of_the_blocks():
    (a1, b1, t1), (a2, b2, t2) = CASES[2], CASES[3]
    A0 = np.diag([a1, a2])
    whole = fn.LinearDDE(A0, [(t1, np.diag([b1, 0.0])), (t2 * 0.5, np.diag([0.0, b2]))])
    sigma = -0.2
    count, _ = count_right_of(Stack.from_systems([whole]), np.array([sigma]))
    expected = np.sum(_lambert_roots(a1, b1, t1).real > sigma) + np.sum(
        _lambert_roots(a2, b2, t2 * 0.5).real > sigma
    )
    assert count[0] == expected


def test_ill_scaled_system_is_balanced_not_refused():
    """The same 2-state system in units 2^20 apart: the similarity leaves the count unchanged."""
    A0 = np.array([[-1.0, 0.5], [0.5, -1.0]])
    A1 = np.array([[0.0, -1.5], [-1.5, 0.0]])
    D = np.diag([1.0, 2.0**20])
    plain = fn.LinearDDE(A0, [(1.0, A1)])
    scaled = fn.LinearDDE(np.linalg.inv(D) @ A0 @ D, [(1.0, np.linalg.inv(D) @ A1 @ D)])
    # eigenvectors (1, 1) and (1, -1): s + 0.5 + 1.5 e^{-s} and s + 1.5 - 1.5 e^{-s}
    expected = np.sum(_lambert_roots(-0.5, -1.5, 1.0).real > -0.1) + np.sum(
        _lambert_roots(-1.5, 1.5, 1.0).real > -0.1
    )
    count, _ = count_right_of(Stack.from_systems([plain, scaled]), np.array([-0.1, -0.1]))
    assert list(count) == [expected, expected]


def test_root_on_the_line_or_nan_is_not_certified():
    """x' = -x(t - pi/2) has roots +-i: a line through them gives -1, as does a NaN abscissa."""
    stack = Stack.from_systems([fn.LinearDDE([[0.0]], [(np.pi / 2, [[-1.0]])])] * 2)
    count, _ = count_right_of(stack, np.array([0.0, np.nan]))
    assert list(count) == [-1, -1]


def test_empty_stack():
    stack = Stack(np.zeros((0, 1, 1)), np.zeros((0, 1, 1, 1)), np.zeros((0, 1)))
    count, used = count_right_of(stack, np.zeros(0))
    assert count.size == 0 and used.size == 0


def test_certificate_line_keeps_clear_of_known_roots():
    tau = 1.0
    gap = 0.1 / tau
    # a lone rightmost root: the first offset
    assert certificate_line(np.array([0.3, -2.0]), tau) == pytest.approx(
        0.3 - gap * LINE_OFFSETS[0]
    )
    # a neighbour where the first line would fall: a smaller offset that clears both
    re = np.array([0.3, 0.3 - gap])
    sigma = certificate_line(re, tau)
    assert np.all(np.abs(re - sigma) >= 0.25 * gap * 0.05)
    assert 0.3 - gap < sigma < 0.3
    # explicit start
    assert certificate_line(np.array([-5.0]), tau, start=1.0) == pytest.approx(1.0 - gap)


def _network_stack(K=3, flows=18, links=4, seed=3):
    """Systems of a network's shape: flows that act on each other only through the links (a
    split with ``S`` the flows, ``Delta_SS`` diagonal) and links that read the flows."""
    rng = np.random.default_rng(seed)
    n = flows + links
    A0 = np.zeros((K, n, n))
    A = np.zeros((K, 2, n, n))
    for k in range(K):
        for r in range(flows):
            A0[k, r, r] = -rng.uniform(0.5, 2.0)
            on = rng.choice(links, size=2, replace=False)
            A[k, r % 2, r, flows + on] = -rng.uniform(0.5, 3.0, size=2)
            A0[k, flows + on, r] = rng.uniform(0.1, 1.0, size=2)
        A0[k, flows:, flows:] = -np.diag(rng.uniform(1.0, 4.0, size=links))
    return Stack(A0, A, np.tile([0.3, 0.7], (K, 1)))


def test_far_arguments_through_the_schur_complement():
    """The arguments of ``Delta(s)/s`` beyond the sampled range, from the diagonal entries on
    the flows and the eigenvalues of the Schur complement on the links, equal those of the
    whole matrix's eigenvalues; the counts equal those without the split."""
    from fluidnet.linear.certificate import _eig_arg

    stack = _network_stack()
    S, T = stack.split
    assert S.size >= 10 and T.size  # the factored path is the one tested
    K = stack.K
    idx = np.arange(K)
    sigma = np.array([-0.5, 0.0, 0.2])
    for factor in (1.0, 4.0):
        s = sigma + 2j * factor * stack.norm_bound(sigma) * (1 + 1e-12)
        D = stack.delta(s, idx) / s[:, None, None]
        whole = np.sum(np.angle(np.linalg.eigvals(D)), axis=1)
        assert np.allclose(_eig_arg(stack, None, idx, idx, s), whole, rtol=0, atol=1e-12)
    plain = Stack(stack.A0, stack.A, stack.tau, (np.zeros(0, dtype=int), np.arange(stack.n)))
    for line in (-1.0, -0.3, 0.0):
        sig = np.full(K, line)
        assert list(count_right_of(stack, sig)[0]) == list(count_right_of(plain, sig)[0])


def test_uncoupled_states_count_through_their_diagonal():
    """Sixteen uncoupled scalar DDEs: every state in ``S``, no Schur complement left; the count
    is the sum of the Lambert-W counts."""
    cases = (CASES * 4)[:16]
    A0 = np.diag([a for a, _, _ in cases])[None]
    A = np.diag([b for _, b, _ in cases])[None, None]
    stack = Stack(A0, A, np.array([[1.0]]))
    S, T = stack.split
    assert S.size == 16 and T.size == 0
    for sigma in (-0.35, 0.05):
        count, _ = count_right_of(stack, np.array([sigma]))
        expected = sum(int(np.sum(_lambert_roots(a, b, 1.0).real > sigma)) for a, b, _ in cases)
        assert count[0] == expected
