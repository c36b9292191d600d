"""Block-triangular systems (fluidnet.linear.blocks): roots from the diagonal blocks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.blocks import diagonal_blocks


@pytest.mark.parametrize("n", [6, 20])
def test_cascade_has_one_root_of_multiplicity_n(n):
    """Issue 23, item 10: x_i' = -x_i + 0.5 x_{i-1}(t - 1). Delta(s) = (s + 1) I - 0.5 e^{-s} J
    with J the shift below the diagonal, so det Delta = (s + 1)^n: the only root is -1, of
    multiplicity n. The dense discretization splits it into a ring of radius eps^(1/n) (n = 6
    failed after 17.6 s on main, n = 20 never answered)."""
    lin = fn.LinearDDE(-np.eye(n), [(1.0, 0.5 * np.eye(n, k=-1))])
    assert len(diagonal_blocks(lin)) == n
    roots = lin.roots(k=3)
    assert len(roots) == 1
    (root,) = roots
    assert root.value == -1.0 and root.multiplicity == n
    assert roots.certified is True
    assert lin.spectral_abscissa() == -1.0
    assert lin.is_stable()


def test_block_triangular_roots_are_the_blocks_lambert_roots():
    # two Hayes factors s - a + b e^{-s tau} fed one way (state 2 drives state 1, not back),
    # shuffled by a permutation: the roots are both factors' Lambert W roots
    a = np.array([-0.5, 0.2])
    b = np.array([1.0, -0.9])
    tau = np.array([0.7, 1.3])
    A0 = np.diag(a) + np.array([[0.0, 3.0], [0.0, 0.0]])
    A1 = np.diag([-b[0], 0.0])
    A2 = np.diag([0.0, -b[1]]) + np.array([[0.0, 0.4], [0.0, 0.0]])
    P = np.array([[0.0, 1.0], [1.0, 0.0]])
    lin = fn.LinearDDE(P @ A0 @ P, [(tau[0], P @ A1 @ P), (tau[1], P @ A2 @ P)])
    assert len(diagonal_blocks(lin)) == 2
    exact = np.concatenate(
        [
            ai + lambertw(-bi * ti * np.exp(-ai * ti), np.arange(-4, 5)) / ti
            for ai, bi, ti in zip(a, b, tau, strict=True)
        ]
    )
    exact = exact[np.lexsort((-exact.imag, -exact.real))][:6]
    roots = lin.roots(k=6)
    np.testing.assert_allclose(roots.values, exact, rtol=1e-11)
    assert all(abs(r.value - e) <= r.error for r, e in zip(roots, exact, strict=True))
    assert roots.certified is True


def test_small_systems_blocks_are_scipys_strong_components():
    # the blocks of small systems come from a transitive closure in numpy (no scipy import):
    # the same partition as scipy's strongly connected components on random coupling graphs
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from fluidnet.linear.blocks import CLOSURE_MAX_STATES

    rng = np.random.default_rng(34)
    for n in (2, 3, 7, 40, CLOSURE_MAX_STATES):
        for density in (0.02, 0.1, 0.3):
            A0 = np.where(rng.random((n, n)) < density, rng.normal(size=(n, n)), 0.0)
            A1 = np.where(rng.random((n, n)) < density / 2, 1.0, 0.0)
            lin = fn.LinearDDE(A0, [(1.0, A1)])
            count, label = connected_components(
                csr_matrix((A0 != 0) | (A1 != 0)), directed=True, connection="strong"
            )
            expected = sorted(tuple(np.flatnonzero(label == b)) for b in range(count))
            assert sorted(tuple(b) for b in diagonal_blocks(lin)) == expected
