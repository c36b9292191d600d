"""Block-triangular structure of a linear delay system: independent parts of its spectrum.

State ``j`` *feeds* state ``i`` when an entry ``(i, j)`` of ``A0`` or of some ``A_k`` is not
zero. Ordered by the strongly connected components of that graph (states that feed each other,
directly or through others), every matrix of the system becomes block upper triangular with
the same blocks, and so does ``Delta(s) = s I - A0 - sum_k A_k exp(-s tau_k)``. Hence

    ``det Delta(s) = prod_b det Delta_b(s)``,

where ``Delta_b`` is the characteristic matrix of the subsystem of block ``b`` (its states
only, the delays that act within it): the characteristic roots of the system are those of its
blocks, with multiplicities added. A cascade ``x_i' = -x_i + 0.5 x_{i-1}(t - 1)`` is ``n``
blocks ``s + 1`` (the delayed coupling runs one way only, so it does not enter ``det Delta``):
its only root is ``-1``, of multiplicity ``n``, which no discretization of the whole resolves
(a Jordan block of size ``n`` splits its eigenvalue by ``eps^(1/n)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .lineardde import LinearDDE

__all__ = ["diagonal_blocks", "subsystem"]


def diagonal_blocks(lin: LinearDDE) -> list[np.ndarray]:
    """The states of each diagonal block: the strongly connected components of the coupling
    graph (some order of them makes the system block upper triangular)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = lin.n
    if n == 1:
        return [np.arange(1)]
    pattern = lin.A0 != 0
    for a in lin.A:
        pattern = pattern | (a != 0)
    count, label = connected_components(csr_matrix(pattern), directed=True, connection="strong")
    if count == 1:
        return [np.arange(n)]
    return [np.flatnonzero(label == b) for b in range(count)]


def subsystem(lin: LinearDDE, states: np.ndarray) -> LinearDDE:
    """The system of the given states alone (the delays whose matrices act within them)."""
    ix = np.ix_(states, states)
    return type(lin)(  # a LinearDDE, built without importing its module (which imports this one)
        lin.A0[ix],
        [(tau, a[ix]) for tau, a in zip(lin.delays, lin.A, strict=True)],
        state_names=[lin.state_names[i] for i in states],
    )
