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


#: Systems of at most this many states have their blocks found by a transitive closure in numpy
#: (no scipy import); larger ones by scipy's strongly connected components.
CLOSURE_MAX_STATES = 128


def diagonal_blocks(lin: LinearDDE) -> list[np.ndarray]:
    """The states of each diagonal block: the strongly connected components of the coupling
    graph (some order of them makes the system block upper triangular)."""
    n = lin.n
    if n == 1:
        return [np.arange(1)]
    pattern = lin.A0 != 0
    for a in lin.A:
        pattern = pattern | (a != 0)
    if n <= CLOSURE_MAX_STATES:
        return _closure_blocks(pattern)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    count, label = connected_components(csr_matrix(pattern), directed=True, connection="strong")
    if count == 1:
        return [np.arange(n)]
    return [np.flatnonzero(label == b) for b in range(count)]


def _closure_blocks(pattern: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components of a small graph (``pattern[i, j]``: an edge between
    ``i`` and ``j``): states that reach each other, from the transitive closure by repeated
    squaring; blocks in the order of their first state."""
    n = pattern.shape[0]
    reach = (pattern | np.eye(n, dtype=bool)).astype(np.int64)
    for _ in range(max(1, int(n - 1).bit_length())):
        reach = np.minimum(reach @ reach, 1)
    mutual = (reach > 0) & (reach > 0).T
    first = np.argmax(mutual, axis=1)  # each state's block, named by its first state
    # a block's first state names itself (np.unique would import numpy.ma: 14 ms, once)
    heads = np.flatnonzero(first == np.arange(n))
    if heads.size == 1:
        return [np.arange(n)]
    return [np.flatnonzero(first == h) for h in heads]


def subsystem(lin: LinearDDE, states: np.ndarray) -> LinearDDE:
    """The system of the given states alone (the delays whose matrices act within them)."""
    ix = np.ix_(states, states)
    return type(lin)(  # a LinearDDE, built without importing its module (which imports this one)
        lin.A0[ix],
        [(tau, a[ix]) for tau, a in zip(lin.delays, lin.A, strict=True)],
        state_names=[lin.state_names[i] for i in states],
    )
