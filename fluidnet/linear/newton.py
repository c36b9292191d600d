"""Newton's method on ``det Delta(lambda)``, vectorized over candidate roots.

The step of each candidate is ``1 / (d/dlambda log det Delta)``, from a logarithmic
derivative given by the caller: the dense one of :mod:`fluidnet.linear.roots` or the sparse one
of :mod:`fluidnet.linear.large`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["newton_roots"]


def newton_roots(
    logderiv: Callable[[np.ndarray], np.ndarray], lam, real: bool, maxiter: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    """Newton iterates from the candidates ``lam`` and the size of each one's last step.

    A candidate stops when its step falls below ``1e-11 |lambda|`` (quadratic convergence
    makes the error then negligible; a multiple root, where Newton is linear, ends about that
    accurate), when its steps stop shrinking near the rounding floor, or after ``maxiter``
    (its last step then shows how far it still was from converging: a spurious eigenvalue of
    the discretization can wander for many steps before it nears a root). With ``real`` (a
    real system) real candidates stay real: their steps are real up to rounding.
    """
    lam = np.array(lam, dtype=complex)
    last = np.full(lam.shape, np.inf)
    active = np.ones(lam.shape, dtype=bool)
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        with np.errstate(all="ignore"):
            step = 1.0 / logderiv(lam[idx])
        step[~np.isfinite(step)] = 0.0  # exactly singular: already at a root
        if real:
            on_axis = np.imag(lam[idx]) == 0.0
            step[on_axis] = step[on_axis].real
        lam[idx] -= step
        size = np.abs(step)
        scale = 1.0 + np.abs(lam[idx])
        done = size <= 1e-11 * scale
        done |= (size >= 0.9 * last[idx]) & (size <= 1e-8 * scale)
        done |= ~np.isfinite(lam[idx])
        last[idx] = size
        active[idx[done]] = False
    return lam, last
