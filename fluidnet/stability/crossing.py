"""Imaginary-axis crossings of characteristic roots as one parameter varies: shared numerics.

A *crossing* is a parameter value where a characteristic root of a linear delay system lies on
the imaginary axis and the number ``N`` of roots in the open right half-plane changes.
:mod:`fluidnet.stability.delaysweep` (exact, for delays) and :mod:`fluidnet.stability.rootpaths`
(root continuation, for any parameter) find them; this module holds what both use: the sampled
system, its certified right-half-plane count, Newton's method on ``det Delta`` and the
:class:`Crossing` record.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AnalysisError, ParameterError
from ..linear.lineardde import LinearDDE
from ..linear.roots import Roots, characteristic_roots

__all__ = ["Crossing", "Sweep", "newton_roots", "on_axis"]

#: A root with ``|Re| <= AXIS_TOL * max(1, |lambda|)`` is on the imaginary axis (not counted).
AXIS_TOL = 1e-9
#: A root with ``|Im| <= REAL_TOL * (1 + |lambda|)`` is real.
REAL_TOL = 1e-9


def on_axis(lam: complex) -> bool:
    return abs(lam.real) <= AXIS_TOL * max(1.0, abs(lam))


@dataclass(frozen=True, kw_only=True)
class Crossing:
    """One crossing of the imaginary axis by characteristic roots.

    Attributes
    ----------
    value : float
        The parameter value.
    omega : float
        Crossing frequency ``|Im lambda|`` (rad/s); 0 for a real root crossing at the origin.
    change : int
        Change of the number of right-half-plane roots (counted with multiplicity) as the
        parameter increases through ``value``: ``+2`` for a complex pair of a real system
        entering the right half-plane, ``-1`` for a real root leaving it, ...
    count_before, count_after : int
        The number of right-half-plane roots just below and just above ``value``.
    root : complex
        The root on the axis (``Im >= 0`` for a real system).
    """

    value: float
    omega: float
    change: int
    count_before: int
    count_after: int
    root: complex

    @property
    def direction(self) -> str:
        """``"destabilizing"`` when roots enter the right half-plane, else ``"stabilizing"``."""
        return "destabilizing" if self.change > 0 else "stabilizing"

    @property
    def is_switch(self) -> bool:
        """True when stability changes here (the count goes from 0 or to 0)."""
        return (self.count_before == 0) != (self.count_after == 0)

    @property
    def frequency(self) -> float:
        """Crossing frequency in Hz."""
        return self.omega / (2.0 * math.pi)


@dataclass(frozen=True)
class Count:
    """The certified number of right-half-plane roots at one parameter value."""

    value: float
    count: int
    roots: Roots

    @property
    def abscissa(self) -> float:
        return self.roots.abscissa


class Sweep:
    """The linear system along one parameter, with cached systems and counts.

    Parameters
    ----------
    factory : SystemFactory
    name : str
        The swept parameter.
    root_options : dict
        Keyword arguments for :func:`~fluidnet.linear.roots.characteristic_roots`.
    """

    def __init__(self, factory, name: str, root_options: dict[str, Any]):
        self.factory = factory
        self.name = name
        self.root_options = dict(root_options)
        self._lins: dict[float, LinearDDE] = {}
        self.n_systems = 0
        self.n_counts = 0

    def lin(self, p: float) -> LinearDDE:
        p = float(p)
        lin = self._lins.get(p)
        if lin is None:
            try:
                lin = self.factory(**{self.name: p})
            except (AnalysisError, ParameterError) as exc:
                raise type(exc)(f"at {self.name}={p:.12g}: {exc}") from exc
            self.n_systems += 1
            if len(self._lins) > 256:
                self._lins.clear()
            self._lins[p] = lin
        return lin

    @property
    def real(self) -> bool:
        return is_real(next(iter(self._lins.values())))

    def count(self, p: float, k: int | None = None, rhp_only: bool = False) -> Count:
        """Right-half-plane roots at ``p`` (with multiplicity), from the rightmost roots.

        At least ``k`` rightmost roots are computed, and more until the leftmost of them lies in
        the open left half-plane: every right-half-plane root is then among them
        (:func:`~fluidnet.linear.roots.characteristic_roots` resolves every root right of the
        ones it returns). With ``rhp_only``, only the roots in the closed right half-plane
        (``region=0``).
        """
        lin = self.lin(p)
        if rhp_only:
            self.n_counts += 1
            roots = characteristic_roots(lin, region=0.0, multiplicity=True, **self.root_options)
            n = sum(r.multiplicity for r in roots if r.real > 0 and not on_axis(r.value))
            return Count(float(p), int(n), roots)
        k = max(k or 0, 6, 2 * lin.n)
        while True:
            self.n_counts += 1
            roots = characteristic_roots(lin, k=k, multiplicity=True, **self.root_options)
            if len(roots) < k or roots[-1].real < 0 or k >= 512:
                break
            k *= 2
        n = sum(r.multiplicity for r in roots if r.real > 0 and not on_axis(r.value))
        return Count(float(p), int(n), roots)


def is_real(lin: LinearDDE) -> bool:
    return not (np.iscomplexobj(lin.A0) or any(np.iscomplexobj(a) for a in lin.A))


# 2-norms of a system's matrices, computed once per system (Newton's method checks residuals
# on the same system many times)
_NORMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _norms(lin: LinearDDE) -> tuple[float, np.ndarray]:
    got = _NORMS.get(lin)
    if got is None:
        mats = np.stack((lin.A0, *lin.A))
        got = _NORMS[lin] = (
            float(np.linalg.norm(lin.A0, 2)),
            np.linalg.svd(mats[1:], compute_uv=False)[:, 0] if lin.A else np.zeros(0),
        )
    return got


def relative_residual(lin: LinearDDE, lam: np.ndarray) -> np.ndarray:
    """Smallest singular value of ``Delta(lambda)`` relative to the size of its terms."""
    lam = np.atleast_1d(np.asarray(lam, dtype=complex))
    out = np.full(lam.shape, np.inf)
    with np.errstate(all="ignore"):
        D = lin.characteristic_matrix(lam)
        finite = np.all(np.isfinite(D), axis=(-2, -1))
        if not finite.any():
            return out
        sv = np.linalg.svd(D[finite], compute_uv=False)[..., -1]
        x = lam[finite]
        norm0, norms = _norms(lin)
        scale = np.abs(x) + norm0
        if lin.delays:
            taus = np.asarray(lin.delays)
            scale = scale + np.abs(np.exp(-np.multiply.outer(x, taus))) @ norms
    out[finite] = sv / np.maximum(scale, np.finfo(float).tiny)
    return out


def newton_roots(
    lin: LinearDDE, lam, *, maxiter: int = 40, residual_tol: float = 1e-8
) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on ``det Delta`` from each start; ``(roots, converged)``.

    The step is ``1 / trace(Delta^{-1} Delta')``. A start converges when its step falls below
    ``1e-13 (1 + |lambda|)`` (or stalls at the rounding floor) and its relative residual is
    below ``residual_tol``. For a real system, a root within ``1e-9`` of the real axis is
    snapped onto it.
    """
    lam = np.array(lam, dtype=complex, ndmin=1)
    n = lin.n
    eye = np.eye(n)
    active = np.ones(lam.shape, dtype=bool)
    prev = np.full(lam.shape, np.inf)
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        x = lam[idx]
        with np.errstate(all="ignore"):
            D = lin.characteristic_matrix(x)
            dD = np.broadcast_to(eye, x.shape + (n, n)).astype(complex)
            for tau, Ak in zip(lin.delays, lin.A, strict=True):
                dD = dD + (tau * np.exp(-x * tau))[:, None, None] * Ak
            try:
                g = np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1)
            except np.linalg.LinAlgError:
                g = np.array([_trace_solve(Di, dDi) for Di, dDi in zip(D, dD, strict=True)])
            step = 1.0 / g
        step[~np.isfinite(step)] = 0.0
        lam[idx] = x - step
        size = np.abs(step)
        scale = 1.0 + np.abs(lam[idx])
        done = (size <= 1e-13 * scale) | ((size >= 0.9 * prev[idx]) & (size <= 1e-9 * scale))
        done |= ~np.isfinite(lam[idx])
        prev[idx] = size
        active[idx[done]] = False
    ok = np.isfinite(lam)
    if is_real(lin):
        near = ok & (np.abs(lam.imag) <= REAL_TOL * (1.0 + np.abs(lam)))
        lam[near] = lam[near].real
    res = np.full(lam.shape, np.inf)
    res[ok] = relative_residual(lin, lam[ok])
    return lam, ok & (res <= residual_tol) & ~active


def _trace_solve(D: np.ndarray, dD: np.ndarray) -> complex:
    try:
        return complex(np.trace(np.linalg.solve(D, dD)))
    except np.linalg.LinAlgError:
        return complex(np.inf)


def null_vectors(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Left and right singular vectors of the smallest singular value of ``M``."""
    U, _, Vh = np.linalg.svd(M)
    return U[:, -1], Vh[-1].conj()


def count_change(root: complex, sign: float, real_system: bool) -> int:
    """Change of the right-half-plane count when ``root`` crosses in direction ``sign``."""
    real_root = abs(root.imag) <= REAL_TOL * (1.0 + abs(root))
    weight = 1 if (real_root or not real_system) else 2
    return int(math.copysign(weight, sign))
