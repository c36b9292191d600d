"""Candidate characteristic roots checked: residuals, inclusion discs, bounds on where roots lie.

Shared by the dense solver (:mod:`fluidnet.linear.roots`) and the large-system solver
(:mod:`fluidnet.linear.large`): a candidate is a root when its relative residual is below
:data:`RESIDUAL_TOL` and an inclusion disc (:mod:`fluidnet.linear.inclusion`) encloses it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .inclusion import enclose
from .sparse import SparseSystem
from .stacked import Stack, singular_values

if TYPE_CHECKING:
    from .lineardde import LinearDDE

__all__ = [
    "RESIDUAL_TOL",
    "a0_spectrum",
    "det_logderiv",
    "imag_bound",
    "is_real_system",
    "root_residuals",
    "system_norms",
    "verified_roots",
    "zero_root_exists",
]

#: Relative residual below which a refined candidate is accepted as a root.
RESIDUAL_TOL = 1e-8


def system_norms(lin: LinearDDE) -> tuple[float, np.ndarray]:
    return float(np.linalg.norm(lin.A0, 2)), np.array([np.linalg.norm(a, 2) for a in lin.A])


def _scale(lin: LinearDDE, lam: np.ndarray, norms) -> np.ndarray:
    n0, nk = norms
    out = np.abs(lam) + n0
    for tau, nrm in zip(lin.delays, nk, strict=True):
        out = out + nrm * np.abs(np.exp(-lam * tau))
    return out


def root_residuals(lin: LinearDDE, lam: np.ndarray, norms) -> np.ndarray:
    if lam.size == 0:
        return np.zeros(0)
    smin = singular_values(lin.characteristic_matrix(lam))[1]
    with np.errstate(invalid="ignore", over="ignore"):
        return smin / np.maximum(_scale(lin, lam, norms), np.finfo(float).tiny)


def a0_spectrum(lin: LinearDDE) -> tuple[np.ndarray, float]:
    """Eigenvalues of A0 and the condition number of its eigenvector matrix (inf if defective)."""
    mu, V = np.linalg.eig(lin.A0)
    with np.errstate(all="ignore"):
        kappa = float(np.linalg.cond(V))
    return mu, kappa if np.isfinite(kappa) else math.inf


def imag_bound(lin: LinearDDE, sigma: float, norms, spectrum=None) -> float:
    """A bound on ``|Im lambda|`` of the roots with ``Re lambda >= sigma``.

    A root ``lambda`` is an eigenvalue of ``A0 + E`` with ``||E|| <= S = sum_k ||A_k||
    exp(-Re(lambda) tau_k)``, so ``|lambda| <= ||A0|| + S`` and, by Bauer-Fike, ``lambda`` lies
    within ``kappa(V) S`` of an eigenvalue of ``A0``. The smaller of the two bounds on
    ``|Im lambda|`` (over the eigenvalues of ``A0`` whose disc reaches ``Re >= sigma``) is
    returned: a fast, stiff undelayed mode far to the left does not inflate it. ``norms`` may
    be any upper bounds of the 2-norms; ``spectrum`` is :func:`a0_spectrum` when known.
    """
    n0, nk = norms
    with np.errstate(over="ignore"):
        S = float(np.sum(nk * np.exp(-sigma * np.asarray(lin.delays))))
    bound = n0 + S
    mu, kappa = a0_spectrum(lin) if spectrum is None else spectrum
    if kappa < 1e8:
        r = kappa * S
        reach = np.real(mu) + r >= sigma
        bound = min(bound, float(np.max(np.abs(np.imag(mu)[reach]) + r, initial=0.0)))
    return bound


def is_real_system(lin: LinearDDE) -> bool:
    return not (np.iscomplexobj(lin.A0) or any(np.iscomplexobj(a) for a in lin.A))


def zero_root_exists(lin: LinearDDE, norms) -> bool:
    M0 = lin.A0 + sum(lin.A, np.zeros_like(lin.A0))
    sv = np.linalg.svd(M0, compute_uv=False)
    size = norms[0] + float(np.sum(norms[1]))
    return bool(sv[-1] <= 1e-12 * max(size, np.finfo(float).tiny)) if size > 0 else True


def det_logderiv(lin: LinearDDE):
    """``s -> (det Delta(s), (det Delta)'(s) / det Delta(s))`` on 1-D arrays (a system with
    many delayed matrices through its sparse terms, :class:`~.sparse.SparseSystem`)."""
    if lin.n >= 4 and lin.n * lin.n * len(lin.delays) > 20000:
        return SparseSystem.from_lineardde(lin).det_logderiv
    stack = Stack.from_systems([lin])

    def evaluate(s: np.ndarray):
        s = np.asarray(s, dtype=complex).ravel()
        return stack.det_logderiv(s, np.zeros(s.size, dtype=int))

    return evaluate


def _root_scale(lin: LinearDDE, vals: np.ndarray) -> np.ndarray:
    """The size of a root's neighbourhood: its modulus, at least ``1 / max(tau_max, 1)``."""
    return np.maximum(np.abs(vals), 1.0 / max(lin.max_delay, 1.0))


def verified_roots(lin: LinearDDE, vals: np.ndarray, res: np.ndarray, norms, system=None):
    """Inclusion discs of the candidates (:mod:`.inclusion`); the unverified are dropped and
    the members of one cluster reported once. Returns ``(values, residuals, multiplicities,
    errors)``. ``system`` (a :class:`~.sparse.SparseSystem`) evaluates a large system."""
    if system is None:
        evaluate, residuals = det_logderiv(lin), lambda v: root_residuals(lin, v, norms)
    else:
        evaluate, residuals = system.det_logderiv, lambda v: system.residual(v, norms)
    inc = enclose(evaluate, vals, _root_scale(lin, vals), real_system=is_real_system(lin))
    # a root snapped to 0 (Delta(0) singular) stays exactly 0: the mean of its cluster is 0
    # up to rounding, which would make a marginal system look stable or not by chance
    zero = (vals == 0) & inc.verified
    inc.radius[zero] += np.abs(inc.value[zero])
    inc.value[zero] = 0.0
    if is_real_system(lin):
        # a root of a real system whose disc holds its own mirror image is real: its zeros
        # are counted by its multiplicity, never twice as a conjugate pair (a real root left
        # with an imaginary part of 2e-30 by Newton's method counted as a pair, and stood in
        # for a second real root that was never found, under a passing certificate)
        im = np.abs(np.imag(inc.value))
        straddle = inc.verified & (im > 0) & (im <= inc.radius)
        inc.radius[straddle] += im[straddle]
        inc.value[straddle] = np.real(inc.value[straddle])
    keep = np.flatnonzero(inc.verified)
    # candidates enclosed by the disc of a root already kept are that root; so is a candidate
    # whose own disc (as many zeros, or fewer) holds a kept disc whole: its zeros are the kept
    # one's (a candidate Newton left 1e-9 from a root, whose wider disc still winds once
    # around it, listed the root twice and failed the certificate)
    order = keep[np.lexsort((inc.radius[keep], -inc.multiplicity[keep], ~zero[keep]))]
    chosen: list[int] = []
    for i in order:
        if any(
            abs(vals[i] - inc.value[j]) <= inc.radius[j]
            or (
                inc.multiplicity[i] <= inc.multiplicity[j]
                and abs(inc.value[i] - inc.value[j]) + inc.radius[j] <= inc.radius[i]
            )
            for j in chosen
        ):
            continue
        chosen.append(int(i))
    idx = np.array(sorted(chosen), dtype=int)
    values = inc.value[idx]
    moved = values != vals[idx]
    res = res[idx].copy()
    if moved.any():
        res[moved] = residuals(values[moved])
    return values, res, inc.multiplicity[idx], inc.radius[idx]
