"""Floquet multipliers of a collocated periodic orbit from the discretized monodromy operator.

The variational equation along the orbit is collocated on one period exactly as the orbit
itself (same mesh, same Gauss points), but with every delayed argument pointing into a
history of ``H`` previous periods instead of wrapping. Writing the Jacobian as
``J_new u_new + J_old u_old = 0`` (``u_old`` the node values on ``[-H, 0]``, ``u_new`` those on
``(0, 1]``), one period maps the history to ``(shifted u_old, -J_new^-1 J_old u_old)``: a
finite-dimensional approximation of the monodromy operator whose eigenvalues converge to the
Floquet multipliers (Engelborghs, Luzyanina, in 't Hout & Roose 2000). One multiplier is 1
(the orbit's time shift); its computed distance from 1 measures the discretization error.
"""

from __future__ import annotations

import numpy as np

from .collocation import Mesh, assemble, history_periods

__all__ = ["monodromy", "multipliers"]

#: Operators larger than this are reduced to their leading eigenvalues by Arnoldi iteration.
DENSE_LIMIT = 900


def monodromy(system, mesh: Mesh, Y: np.ndarray, T: float, P: np.ndarray) -> np.ndarray:
    """The discretized monodromy matrix, acting on node values over ``[-H, 0]``."""
    import scipy.linalg  # scipy: imported where used

    n, N = system.n, mesh.n_nodes
    taus = assemble(system, mesh, Y, T, P, jac=False).taus
    H = history_periods(taus, T)
    asm = assemble(system, mesh, Y, T, P, history=H)
    old = (H * N + 1) * n
    J_old, J_new = asm.J[:, :old], asm.J[:, old:]
    S = -scipy.linalg.solve(J_new, J_old)
    M = np.zeros((old, old))
    for pos in range(H * N + 1):
        g = pos - H * N + N  # absolute node index after one period
        if g <= 0:
            src = g + H * N
            M[pos * n : (pos + 1) * n, src * n : (src + 1) * n] = np.eye(n)
        else:
            M[pos * n : (pos + 1) * n] = S[(g - 1) * n : g * n]
    return M


def multipliers(system, mesh: Mesh, Y, T, P, k: int = 12) -> np.ndarray:
    """The ``k`` Floquet multipliers of largest modulus, sorted by decreasing modulus."""
    M = monodromy(system, mesh, Y, T, P)
    if M.shape[0] <= DENSE_LIMIT:
        mu = np.linalg.eigvals(M)
    else:
        import scipy.sparse.linalg

        kk = min(k, M.shape[0] - 2)
        mu = scipy.sparse.linalg.eigs(M, k=kk, which="LM", return_eigenvectors=False)
    mu = mu[np.argsort(-np.abs(mu))]
    return mu[:k]
