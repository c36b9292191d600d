"""Roots of one-delay scalar systems in closed form, by the Lambert W function.

The characteristic function of ``x' = a x(t) + b x(t - tau)`` (real ``a``, ``b``; ``tau > 0``)
is ``f(s) = s - a - b exp(-s tau)``. With ``z = (s - a) tau``, ``f(s) = 0`` reads
``z exp(z) = x``, ``x = b tau exp(-a tau)``, whose solutions are exactly the values of the
branches of the Lambert W function (Corless, Gonnet, Hare, Jeffrey & Knuth, "On the Lambert W
function", Adv. Comput. Math. 5 (1996), Sec. 4; the scalar case of Asl & Ulsoy, J. Dyn. Sys.
Meas. Control 125 (2003))::

    s_k = a + W_k(x) / tau,      k = 0, +-1, +-2, ...

each root once (all simple) when ``x`` is neither 0 nor the branch point ``-1/e``. For real
``a`` and ``b`` the rightmost root is ``s_0`` (Shinozaki & Mori, Automatica 42 (2006)); here
every branch is enumerated instead, with a bound that says where to stop: the branch ``k``
takes values with ``(2|k| - 2) pi <= |Im W_k| <= (2|k| + 1) pi`` (Corless et al., the images
of the branch cuts), and ``|z| exp(Re z) = |x|``, so a root of a branch ``|k| >= 2`` has
``Re z <= log(|x| / ((2|k| - 2) pi))``. Every root right of a line ``Re s = sigma`` therefore
comes from a branch with ``|k| <= 1 + |x| exp((a - sigma) tau) / (2 pi)``: that finite list,
evaluated, is the complete set of roots right of the line -- a count of right-half-plane roots
with no discretization and no argument principle.

:func:`lambert_roots` applies this to a *diagonal* system whose every state has at most one
delayed term (the scalar factors of alike flows, :mod:`fluidnet.linear.aggregate`); anything
else (complex or coupled matrices, two delays on one state, ``x`` at or near ``-1/e`` where two
roots merge, an overflow, a root that does not verify) gives ``None``, for the caller's general
path. Each value from :func:`scipy.special.lambertw` is polished by Newton's method on
``f`` and kept only when it moved by a rounding amount, its residual is at rounding level, it
lies in its branch's band of imaginary parts, and the roots of one state are distinct.
"""

from __future__ import annotations

import math

import numpy as np

from .lineardde import LinearDDE
from .rootset import CharacteristicRoot, Roots

__all__ = ["lambert_roots", "one_delay_factors"]

#: Most branches evaluated for one state (beyond, the closed form is left to the general path).
MAX_BRANCHES = 4000
#: ``x`` within this (relative) of ``-1/e``: two roots nearly merge, left to the general path.
BRANCH_POINT_GAP = 1e-6


def one_delay_factors(lin: LinearDDE) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(a, b, tau)`` per state when ``lin`` is a real diagonal system whose every state has
    at most one delayed term: ``det Delta(s) = prod_i (s - a_i - b_i exp(-s tau_i))`` (a state
    without a delayed term has ``b_i = 0``, ``tau_i = 0``); ``None`` otherwise."""
    if np.iscomplexobj(lin.A0) or any(np.iscomplexobj(m) for m in lin.A):
        return None
    n = lin.n
    off = ~np.eye(n, dtype=bool)
    if np.any(lin.A0[off]) or any(np.any(m[off]) for m in lin.A):
        return None
    a = np.diagonal(lin.A0).astype(float)
    b = np.zeros(n)
    tau = np.zeros(n)
    if lin.A:
        D = np.array([np.diagonal(m) for m in lin.A], dtype=float)  # (delays, n)
        if np.any(np.count_nonzero(D, axis=0) > 1):
            return None
        j = np.argmax(D != 0, axis=0)
        has = np.any(D != 0, axis=0)
        taus = np.asarray(lin.delays, dtype=float)
        b = np.where(has, D[j, np.arange(n)], 0.0)
        tau = np.where(has, taus[j], 0.0)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(tau >= 0)):
        return None
    return a, b, tau


def _branch_bound(b: float, tau: float, sigma: float) -> int | None:
    """The largest ``|k|`` whose branch can give a root right of ``Re s = sigma`` (plus one):
    ``1 + |x| exp((a - sigma) tau) / (2 pi)``, where ``|x| exp(a tau) = |b| tau``."""
    with np.errstate(over="ignore"):
        reach = abs(b) * tau * math.exp(min(-sigma * tau, 700.0)) / (2.0 * math.pi)
    if not math.isfinite(reach) or reach > MAX_BRANCHES:
        return None
    return 1 + int(math.floor(reach)) + 1


def _state_roots(a: float, b: float, tau: float, sigma: float) -> np.ndarray | None:
    """Every root of ``s - a - b exp(-s tau)`` right of ``sigma`` (``None``: not certain)."""
    from scipy.special import lambertw

    if b == 0.0 or tau == 0.0:
        s = a + b  # no delayed term (or a zero delay): one root
        return np.array([s], dtype=complex) if s > sigma else np.zeros(0, dtype=complex)
    with np.errstate(over="ignore"):
        x = b * tau * math.exp(min(-a * tau, 700.0))
    if not (math.isfinite(x) and x != 0.0) or abs(x * math.e + 1.0) <= BRANCH_POINT_GAP:
        return None
    K = _branch_bound(b, tau, sigma)
    if K is None:
        return None
    k = np.arange(-K, K + 1)
    w = np.asarray(lambertw(x, k, tol=1e-15), dtype=complex)
    if not np.all(np.isfinite(w)):
        return None
    # the band of imaginary parts of each branch (Corless et al., Sec. 4), with rounding room
    ak = np.abs(k)
    room = 1e-9 * (1.0 + np.abs(w))
    lo_im = np.where(ak >= 1, (2 * ak - 2) * math.pi, 0.0) - room
    hi_im = (2 * ak + 1) * math.pi + room
    if not np.all((np.abs(w.imag) >= lo_im) & (np.abs(w.imag) <= hi_im)):
        return None
    s = a + w / tau
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(3):  # Newton on f(s) = s - a - b exp(-s tau): simple roots
            e = b * np.exp(-s * tau)
            s = s - (s - a - e) / (1.0 + tau * e)
        e = b * np.exp(-s * tau)
        size = np.abs(s) + abs(a) + np.abs(e)
        res = np.abs(s - a - e) / np.maximum(size, np.finfo(float).tiny)
    moved = np.abs(s - (a + w / tau)) <= 1e-8 * (np.abs(s) + abs(a) + 1.0 / tau)
    if not (np.all(np.isfinite(s)) and np.all(res <= 1e-12) and np.all(moved)):
        return None
    gap = np.abs(s[:, None] - s[None, :]) + np.eye(s.size)
    if np.any(gap <= 1e-8 * (np.abs(s)[:, None] + 1.0 / tau)):
        return None  # two branches gave one root: not the distinct roots of the theorem
    return s[s.real > sigma]


def lambert_roots(lin: LinearDDE, sigma: float, k: int = 0) -> Roots | None:
    """Every characteristic root of ``lin`` right of ``Re s = sigma``, certified by the closed
    form of the module notes; ``None`` when ``lin`` is not a real diagonal system with at most
    one delayed term per state or a root cannot be made certain (the caller then computes the
    roots in general).

    Parameters
    ----------
    lin : LinearDDE
    sigma : float
        The line: every root right of it is returned (none is missing), sorted by real part,
        descending; the result's :attr:`~fluidnet.linear.rootset.Roots.certificate`.
    k : int, default 0
        At least this many roots: the line moves left (by ``1 / tau_max`` at a time) until so
        many lie right of it.

    Returns
    -------
    Roots or None
        Certified (``certified`` True, ``certificate`` the line used), ``n_nodes`` 0; each root
        simple, its residual relative to the size of the terms of its state's factor.

    Examples
    --------
    >>> import math
    >>> from fluidnet.linear import LinearDDE
    >>> from fluidnet.linear.lambertw import lambert_roots
    >>> r = lambert_roots(LinearDDE(0.0, [(1.0, -math.pi / 2)]), sigma=-1.0)
    >>> [round(abs(v.value), 12) for v in r][:2]  # the pair on the axis at +-j pi/2
    [1.570796326795, 1.570796326795]
    """
    parts = one_delay_factors(lin)
    if parts is None or not math.isfinite(sigma):
        return None
    a, b, tau = parts
    step = 1.0 / lin.max_delay if lin.delays else 1.0
    for _ in range(64):
        found = []
        for ai, bi, ti in zip(a, b, tau, strict=True):
            got = _state_roots(float(ai), float(bi), float(ti), sigma)
            if got is None:
                return None
            found.append(got)
        vals = np.concatenate(found) if found else np.zeros(0, dtype=complex)
        if vals.size >= k:
            break
        sigma -= step
    else:
        return None
    order = np.argsort(-vals.real, kind="stable")
    vals = vals[order]
    # residuals as characteristic_roots gives them: |f_i| over the size of the system's terms
    norm0 = float(np.max(np.abs(a))) if a.size else 0.0
    norms = [float(np.max(np.abs(np.diagonal(m)))) for m in lin.A]
    with np.errstate(over="ignore", invalid="ignore"):
        D = np.array(lin.characteristic_matrix(vals)) if vals.size else np.zeros((0, 1, 1))
        small = np.min(np.abs(np.diagonal(D, axis1=-2, axis2=-1)), axis=-1) if vals.size else []
        scale = np.abs(vals) + norm0
        for t, nm in zip(lin.delays, norms, strict=True):
            scale = scale + nm * np.abs(np.exp(-vals * t))
    roots = [
        CharacteristicRoot(value=complex(v), residual=float(r / max(sc, np.finfo(float).tiny)))
        for v, r, sc in zip(vals, small, scale, strict=True)
    ]
    return Roots(roots, 0, certified=True, certificate=float(sigma))
