"""A certificate that no characteristic root was missed: the argument principle on a line.

For a retarded system with ``n`` states, ``f(s) = det Delta(s)`` behaves like ``s^n`` far
out in any right half-plane, so the number ``Z`` of roots (with multiplicity) right of the line
``Re s = sigma`` follows from the change of ``arg f`` along the line (Mikhailov's criterion for
quasi-polynomials):

    ``Z = n / 2 - (1 / 2 pi) [arg f(sigma + j omega)]_{omega = -infinity}^{infinity}``

(for a real system the lower half of the line mirrors the upper one, and only ``omega >= 0``
is sampled). The argument is tracked on ``|omega| <= Omega`` by sampling, with
``Omega = 2 rho(sigma)`` and ``rho(sigma) = ||A0|| + sum_k ||A_k|| exp(-sigma tau_k)``: beyond
``Omega``, ``Delta(s) = s (I - E)`` with ``||E|| <= 1/2``, every eigenvalue of ``I - E`` stays
within ``pi/6`` of the positive real axis, and the remaining change is that of ``n arg s`` minus
the arguments of those eigenvalues at ``s = sigma +- j Omega``, computed exactly.

The samples are refined until, on every interval of length ``h``, the principal increment of
``arg f`` is below ``pi/4`` and ``h |f'/f| <= 1`` at both ends (``|f'/f|`` is about the inverse
distance to the nearest root, so a root close to the line forces a fine sampling around it).
This is a numerical certificate (floating-point samples with step control), not interval
arithmetic; a system whose samples do not settle within the budget, or whose count is not
close to an integer, is reported as not certified.

Comparing ``Z`` with the roots a method found right of ``sigma`` proves (to that standard) that
none is missing there, in particular that the rightmost root found is the rightmost root.
"""

from __future__ import annotations

import math

import numpy as np

from .aggregate import grouped
from .stacked import Stack, balance_scales

__all__ = ["count_right_of", "certificate_line"]

#: Largest number of samples of one line.
MAX_SAMPLES = 20000
#: Largest principal increment of arg f between neighbouring samples.
MAX_ARG_STEP = math.pi / 4


#: Trial offsets of the certificate line left of the rightmost root, in units of 0.1 / tau_max.
LINE_OFFSETS = (1.0, 0.5, 0.25, 0.1, 0.05)


def certificate_line(re_parts: np.ndarray, tau_max: float, start: float | None = None) -> float:
    """A line ``Re s = sigma`` just left of ``start`` (default: the rightmost known root),
    clear of the known roots.

    The offsets ``LINE_OFFSETS`` (times ``0.1 / tau_max``) are tried in turn, and the first
    line whose distance to every known real part is at least a quarter of its offset is used:
    the line then neither grazes a known root nor passes beyond a close neighbour of the
    rightmost one (whose own neighbours may not be known). Failing that, the line moves left
    past the close roots.
    """
    gap = 0.1 / tau_max
    re = np.asarray(re_parts, dtype=float)
    top = float(np.max(re)) if start is None else float(start)
    for t in LINE_OFFSETS:
        sigma = top - gap * t
        if np.all(np.abs(re - sigma) >= 0.25 * gap * t):
            return sigma
    sigma = top - gap
    for a in np.sort(re)[::-1]:
        if a > sigma + 0.25 * gap:
            continue
        if a > sigma - 0.25 * gap:
            sigma = a - gap
        else:
            break
    return float(sigma)


def count_right_of(stack: Stack, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number of roots right of ``Re s = sigma`` of each system of the stack.

    Parameters
    ----------
    stack : Stack or SparseSystem
        ``K`` systems (a :class:`~fluidnet.linear.sparse.SparseSystem` is one large one). They
        are balanced here (an exact similarity by powers of two, which
        leaves ``det Delta`` unchanged): the sampled range grows with their norms, and an
        imbalance that does not hurt a discretization (a factor 1000 between states) can
        still put the range beyond the sample budget. A network whose flows of one route have
        unequal delays, or whose routes cross several links, is counted on the similar systems
        of :func:`~fluidnet.linear.aggregate.grouped` (the same roots; the samples through a
        small Schur complement), every bound below taken of those.
    sigma : numpy.ndarray
        ``(K,)`` abscissae of the lines.

    Returns
    -------
    count : numpy.ndarray of int
        ``(K,)`` roots with ``Re > sigma`` counted with multiplicity; ``-1`` where the count
        could not be certified.
    samples : numpy.ndarray of int
        Samples used per system.
    """
    if isinstance(stack, Stack):
        stack = grouped(stack) or stack
    K, n = stack.K, stack.n
    if K and n > 1:
        # a stack's scales once for all its parts (Stack.full_scales), a sparse system's here
        d = (
            stack.full_scales
            if isinstance(stack, Stack)
            else balance_scales(stack.magnitude(), mild=1.0)
        )
        if np.any(d != 1.0):
            stack = stack.scaled(d)
    sigma = np.asarray(sigma, dtype=float).reshape(K)
    count = np.full(K, -1, dtype=int)
    used = np.zeros(K, dtype=int)
    if K == 0:
        return count, used
    tau_max = stack.max_delay()
    rho = stack.norm_bound(sigma)
    omega = np.where(rho > 0, 2.0 * rho, 1.0) * (1.0 + 1e-12)
    # initial spacing: half a radian of the fastest delay term's rotation
    with np.errstate(invalid="ignore", over="ignore"):
        p0 = np.ceil(omega * tau_max / 0.5)
    p0 = np.clip(np.nan_to_num(p0, nan=np.inf, posinf=np.inf), 8, np.inf)
    live = np.isfinite(sigma) & np.isfinite(omega) & (p0 <= MAX_SAMPLES // 4)
    sys_ids = np.flatnonzero(live)
    if sys_ids.size == 0:
        return count, used
    # a real system's line is symmetric: its upper half suffices; a complex one needs both
    whole = stack.is_complex()
    lo = -omega if whole else np.zeros(K)
    reps = (2 if whole else 1) * p0[sys_ids].astype(int) + 1
    idx = np.repeat(sys_ids, reps)
    first = np.repeat(np.cumsum(reps) - reps, reps)
    frac = (np.arange(idx.size) - first) / np.repeat(reps - 1, reps)
    w = lo[idx] + frac * (omega - lo)[idx]
    f, g = stack.det_logderiv(sigma[idx] + 1j * w, idx)
    failed = np.zeros(K, dtype=bool)
    failed[idx[~np.isfinite(f) | (f == 0)]] = True
    used[:] = np.bincount(idx, minlength=K)
    # the intervals between neighbouring samples of one system, refined until each is resolved
    same = idx[1:] == idx[:-1]
    j = np.flatnonzero(same)
    sys_i, wa, wb = idx[j], w[j], w[j + 1]
    fa, fb, ga, gb = f[j], f[j + 1], g[j], g[j + 1]
    change = np.zeros(K)
    while sys_i.size:
        with np.errstate(all="ignore"):
            step = np.angle(fb / fa)
            rate = np.maximum(np.abs(ga), np.abs(gb))
        done = (np.abs(step) <= MAX_ARG_STEP) & ((wb - wa) * rate <= 1.0)
        change += np.bincount(sys_i[done], weights=step[done], minlength=K)
        keep = ~done & ~failed[sys_i]
        if not keep.any():
            break
        sys_i, wa, wb = sys_i[keep], wa[keep], wb[keep]
        fa, fb, ga, gb = fa[keep], fb[keep], ga[keep], gb[keep]
        used += np.bincount(sys_i, minlength=K)
        over = used > MAX_SAMPLES
        failed |= over
        keep = ~over[sys_i]
        sys_i, wa, wb = sys_i[keep], wa[keep], wb[keep]
        fa, fb, ga, gb = fa[keep], fb[keep], ga[keep], gb[keep]
        wm = 0.5 * (wa + wb)
        fm, gm = stack.det_logderiv(sigma[sys_i] + 1j * wm, sys_i)
        failed[sys_i[~np.isfinite(fm) | (fm == 0)]] = True
        sys_i = np.concatenate([sys_i, sys_i])
        wa, wb = np.concatenate([wa, wm]), np.concatenate([wm, wb])
        fa, fb = np.concatenate([fa, fm]), np.concatenate([fm, fb])
        ga, gb = np.concatenate([ga, gm]), np.concatenate([gm, gb])
    # the tails beyond +-Omega: the change of n arg s, and of the arguments of the eigenvalues
    # of Delta(s) / s, which tend to 0 (each stays within pi/6 of the real axis out there)
    last = np.r_[np.flatnonzero(~same), idx.size - 1]
    s_end = sigma[idx[last]] + 1j * w[last]
    change[idx[last]] += n * (0.5 * np.pi - np.angle(s_end)) - _eig_arg(stack, f, last, idx, s_end)
    if whole:
        begin = np.r_[0, np.flatnonzero(~same) + 1]
        s_beg = sigma[idx[begin]] + 1j * w[begin]
        change[idx[begin]] += n * (np.angle(s_beg) + 0.5 * np.pi) + _eig_arg(
            stack, f, begin, idx, s_beg
        )
        change = 0.5 * change  # the formula below is for half the line
    Z = 0.5 * n - change / np.pi
    near = np.abs(Z - np.rint(Z)) < 0.1
    ok = live & ~failed & np.isfinite(Z) & near & (np.rint(Z) >= 0)
    count[ok] = np.rint(Z[ok]).astype(int)
    return count, used


def _eig_arg(stack: Stack, f, at, idx, s) -> np.ndarray:
    """Sum of the arguments of the eigenvalues of ``Delta(s) / s`` (far out on the line).

    With :meth:`~.stacked.Stack.split`'s states ``S`` (``Delta_SS`` diagonal), the sum of the
    arguments of ``Delta_ii(s) / s`` on ``S`` and of the eigenvalues of ``M(s) / s``, ``M`` the
    Schur complement on the others (a 10 x 10 eigenvalue problem instead of 40 x 40 for the
    100-state network). The two sums are the same branch of ``arg det(Delta(s) / s)``: beyond
    ``Omega``, ``Delta / s = I - E`` with ``||E|| < 1/2``, so every ``Delta_ii / s`` lies within
    ``pi/6`` of 1, and ``(M / s)^{-1}``, the ``T`` block of ``(I - E)^{-1} = I + E (I - E)^{-1}``,
    is ``I`` plus a contraction: the eigenvalues of ``M / s`` lie in the open right half-plane.
    Each sum of principal arguments is then continuous along the rest of the line and tends
    to 0 with ``E``.
    """
    n = stack.n
    if n <= 5:  # each within pi/6 of the real axis: the principal argument of the product
        with np.errstate(all="ignore"):
            return np.angle(f[at] / s**n)
    D = stack.delta(s, idx[at]) / s[:, None, None]
    S, T = stack.split
    if not S.size:
        return np.sum(np.angle(np.linalg.eigvals(D)), axis=1)
    d = D[:, S, S]  # (Q, |S|)
    out = np.sum(np.angle(d), axis=1)
    if T.size:
        M = D[:, T[:, None], T] - (D[:, T[:, None], S] / d[:, None, :]) @ D[:, S[:, None], T]
        out += np.sum(np.angle(np.linalg.eigvals(M)), axis=1)
    return out
