"""Floquet multipliers of a collocated periodic orbit from the discretized monodromy operator.

The variational equation along the orbit is collocated on one period exactly as the orbit
itself (same mesh, same Gauss points), but with every delayed argument pointing into a
history of ``H`` previous periods instead of wrapping. Writing the Jacobian as
``J_new u_new + J_old u_old = 0`` (``u_old`` the node values on ``[-H, 0]``, ``u_new`` those on
``(0, 1]``), one period maps the history to ``(shifted u_old, -J_new^-1 J_old u_old)``: a
finite-dimensional approximation of the monodromy operator whose eigenvalues converge to the
Floquet multipliers (Engelborghs, Luzyanina, in 't Hout & Roose 2000). One multiplier is 1
(the orbit's time shift); its computed distance from 1 measures the discretization error.
Only the history nodes the delays read matter (the other columns of the operator vanish), so
the eigenvalue problem is solved on those: for delays short against the period, a small
fraction of the full operator.
"""

from __future__ import annotations

import numpy as np

from ..errors import AnalysisError
from .collocation import Mesh, assemble, history_periods

__all__ = ["MonodromyError", "monodromy", "multipliers"]

#: Reduced operators larger than this are reduced to their leading eigenvalues by Arnoldi.
DENSE_LIMIT = 900
#: The period map is singular to working precision below this reciprocal condition number.
RCOND_LIMIT = 1e-15


class MonodromyError(AnalysisError):
    """The discretized period map of an orbit cannot be inverted to working precision: its
    Floquet multipliers cannot be computed (the orbit itself may be fine)."""


def _operator(system, mesh: Mesh, Y: np.ndarray, T: float, P: np.ndarray, taus=None):
    """``(S, H, referenced)``: the new period's node values ``S u_old`` as a function of the
    history's, and which history nodes the delays read (the other columns of the monodromy
    matrix are zero)."""
    import scipy.linalg  # scipy: imported where used

    n, N = system.n, mesh.n_nodes
    if taus is None:
        taus = assemble(system, mesh, Y, T, P, jac=False).taus
    H = history_periods(taus, T)
    asm = assemble(system, mesh, Y, T, P, history=H)
    old = (H * N + 1) * n
    assert asm.J is not None  # assembled with jac=True (the default)
    J_old, J_new = asm.J[:, :old], asm.J[:, old:]
    used = np.flatnonzero(np.any(J_old != 0, axis=0))
    nodes = np.union1d(used // n, [H * N])  # the history's last node continues the profile
    cols = (nodes[:, None] * n + np.arange(n)).reshape(-1)
    lu = scipy.linalg.lu_factor(J_new, check_finite=False)
    anorm = float(np.linalg.norm(J_new, 1))
    (gecon,) = scipy.linalg.get_lapack_funcs(("gecon",), (lu[0],))
    rcond, _ = gecon(lu[0], anorm, norm="1")
    if not np.all(np.isfinite(lu[0])) or not rcond >= RCOND_LIMIT:
        raise MonodromyError(
            f"the Floquet multipliers of the orbit of period T = {T:.6g} cannot be computed: its "
            f"collocated period map ({mesh.intervals} intervals of degree {mesh.degree}) is "
            f"singular to working precision (reciprocal condition {rcond:.2g}); the solutions "
            "of the variational equation grow or decay by more than the floating-point range "
            "over one period, as near a homoclinic orbit, whose period grows without bound and "
            "whose multipliers are like exp(lambda T). floquet=False computes the orbit "
            "without them"
        )
    S = -scipy.linalg.lu_solve(lu, J_old[:, cols], check_finite=False)
    return S, H, nodes, cols


def monodromy(system, mesh: Mesh, Y: np.ndarray, T: float, P: np.ndarray, taus=None):
    """The discretized monodromy matrix restricted to the history nodes the delays read.

    The full matrix acts on the node values over ``[-H, 0]`` and maps them to those one period
    later; its columns of nodes no delay reads are zero, so its nonzero eigenvalues are those
    of the square block on the nodes that are read (``M u = mu u`` with ``mu != 0`` implies
    ``mu u_C = M_CC u_C``, and conversely). For delays short against the period this block is
    a fraction of the full matrix (about ``tau / T`` of it).

    Returns
    -------
    M : ndarray
        The block ``M_CC``.
    nodes : ndarray of int
        Its history nodes (absolute index ``g - H N`` relative to the end of the history).
    """
    n, N = system.n, mesh.n_nodes
    S, H, nodes, cols = _operator(system, mesh, Y, T, P, taus)
    size = nodes.size * n
    M = np.zeros((size, size))
    pos_of = {int(g): i for i, g in enumerate(nodes)}
    for i, pos in enumerate(nodes):
        g = int(pos) - H * N + N  # absolute node index after one period
        rows = slice(i * n, (i + 1) * n)
        if g <= 0:
            src = g + H * N
            if src in pos_of:
                j = pos_of[src]
                M[rows, j * n : (j + 1) * n] = np.eye(n)
        else:
            M[rows] = S[(g - 1) * n : g * n]
    return M, nodes


def multipliers(system, mesh: Mesh, Y, T, P, k: int = 12, taus=None) -> np.ndarray:
    """The ``k`` Floquet multipliers of largest modulus, sorted by decreasing modulus."""
    M, _ = monodromy(system, mesh, Y, T, P, taus)
    if M.shape[0] <= DENSE_LIMIT:
        mu = np.linalg.eigvals(M)
    else:
        import scipy.sparse.linalg

        kk = min(k, M.shape[0] - 2)
        mu = scipy.sparse.linalg.eigs(M, k=kk, which="LM", return_eigenvectors=False)
    mu = mu[np.argsort(-np.abs(mu))]
    return mu[:k]
