"""Branch switching at a period doubling: the doubled orbit and the direction of its branch.

At a period-doubling point a Floquet multiplier is ``-1``: the variational equation has a
solution ``w`` with ``w(t + T) = -w(t)``. On the doubled period ``2T`` the orbit traversed twice
is a solution, and the branch of genuinely doubled orbits leaves it in the direction of ``w``
(``w`` on ``[0, T]``, ``-w`` on ``[T, 2T]``), with period and parameter changing only at second
order. The eigenfunction comes from the discretized monodromy operator
(:mod:`fluidnet.bifurcation.floquet`): its eigenvector for the multiplier nearest ``-1`` gives
the history nodes the delays read, and one more period (``S u``) the values on ``(0, T]``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import AnalysisError
from ._system import orbit_system
from .collocation import Mesh
from .floquet import _operator, monodromy

__all__ = ["doubled_start"]


def doubled_start(pd):
    """The orbit of ``pd`` on twice its period (mesh of twice as many intervals) and the
    direction of the doubled branch there: ``(orbit, direction)`` with ``direction`` the node
    values of the perturbation, shape ``(2 L m, n)``."""
    orbit = pd.orbit
    model = orbit.model
    system = orbit_system(model)
    mesh = orbit.mesh
    N, n = mesh.n_nodes, system.n
    P = np.array([orbit.params[k] for k in model.param_names], dtype=float)
    M, _ = monodromy(system, mesh, orbit.nodes, orbit.period, P)
    mu, vecs = np.linalg.eig(M)
    j = int(np.argmin(np.abs(mu + 1.0)))
    if abs(mu[j] + 1.0) > 1e-3:
        raise AnalysisError(
            f"no Floquet multiplier near -1 at the period doubling (closest {mu[j]:.6g})"
        )
    uC = np.real(vecs[:, j] * np.exp(-1j * np.angle(vecs[np.argmax(np.abs(vecs[:, j])), j])))
    S, H, nodes2, _ = _operator(system, mesh, orbit.nodes, orbit.period, P)
    w_new = (S @ uC).reshape(N, n)  # nodes 1..N of the next period
    last = int(np.flatnonzero(nodes2 == H * N)[0])
    w0 = uC[last * n : (last + 1) * n]  # the history's last node = node 0
    w = np.vstack([w0, w_new[:-1]])  # nodes 0..N-1 on [0, T)
    w /= np.max(np.abs(w))
    doubled_mesh = Mesh(2 * mesh.intervals, mesh.degree)
    nodes_2 = np.vstack([orbit.nodes, orbit.nodes])
    mu = None
    if orbit.multipliers is not None:
        from .floquet import multipliers

        mu = multipliers(system, doubled_mesh, nodes_2, 2 * orbit.period, P)
    start = dataclasses.replace(
        orbit, period=2 * orbit.period, mesh=doubled_mesh, nodes=nodes_2, multipliers=mu
    )
    direction = np.vstack([w, -w])
    return start, direction
