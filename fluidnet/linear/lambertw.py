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
path. The branches' values come from :func:`_lambert_w` (Halley's iteration from the
asymptotic and branch-point series of Corless et al., Sec. 4; NumPy only: SciPy's
``scipy.special.lambertw``, which gives the same values to 1e-13, cost its 0.3 s import on a
network's first critical value). Each is polished by Newton's method on ``f`` and kept only
when it moved by less than ``1e-6`` relative, its residual is at rounding level, it lies in
its branch's band of imaginary parts, and the roots of one state are distinct.

:func:`rightmost_one_delay` gives, for thousands of scalar factors at once (a chart's), only
the rightmost root and a line right of which it is the only one: the branches 0 and +-1 and the
bound on every other branch, checked as above.

:func:`stability_margins` gives, by Hayes' theorem, three smooth functions of ``(a tau, b tau)``
per state, all positive exactly when the factor is stable: what a parameter continuation
watches to show that no root of a factor crosses the imaginary axis.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .rootset import CharacteristicRoot, Roots

if TYPE_CHECKING:
    from .lineardde import LinearDDE

__all__ = [
    "lambert_roots",
    "one_delay_factors",
    "rightmost_one_delay",
    "snapped_to_zero",
    "stability_margins",
]

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


def _lambert_w(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``W_k(x)`` for real ``x != 0`` and integer ``k`` (broadcast, flattened), complex; NaN
    where the iteration did not converge.

    The branches are SciPy's (``scipy.special.lambertw``: ``x < 0`` on a branch cut belongs to
    the side of positive imaginary part, so ``W_0`` and ``W_-1`` are real on ``(-1/e, 0)``).
    Halley's iteration on ``h(w) = w - x exp(-w)`` (no overflow where ``w exp(w)`` would),
    from: ``L1 - L2 + L2 / L1`` with ``L1 = log x + 2 pi i k``, ``L2 = log L1`` (Corless et al.,
    eq. 4.20); Winitzki's approximation on the real part of ``W_0``; the branch-point series
    ``-1 +- p - p^2 / 3 +- 11 p^3 / 72``, ``p = sqrt(2 (e x + 1))`` (their eq. 4.22) for the
    branches 0 and -1 near ``-1/e``. Stops when a step is below ``1e-10`` relative (the
    iteration is cubic: the value is then good to rounding).
    """
    x, k = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(k, dtype=np.int64))
    x, k = x.ravel(), k.ravel()
    e1 = math.e * x + 1.0  # 0 at the branch point
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        L1 = np.log(np.abs(x)) + 1j * (np.where(x < 0, math.pi, 0.0) + 2 * math.pi * k)
        L2 = np.log(L1)
        w = L1 - L2 + L2 / L1
        real0 = (k == 0) & (x > -1.0 / math.e)
        lx = np.log1p(np.where(real0, x, 0.0))
        w = np.where(real0, lx * (1.0 - np.log1p(lx) / (2.0 + lx)), w)
        low = (k == -1) & (x < 0) & ~real0 & (x > -1.0 / math.e)
        la = np.log(np.where(low, -x, 0.5))
        w = np.where(low, la - np.log(-la) + np.log(-la) / la, w)
        near = ((k == 0) | (k == -1)) & (np.abs(e1) <= 0.6)
        p = np.sqrt(2.0 * e1.astype(complex)) * np.where(k == 0, 1.0, -1.0)
        w = np.where(near, -1.0 + p - p * p / 3.0 + (11.0 / 72.0) * p**3, w).astype(complex)
    sign, logx = np.sign(x), np.log(np.abs(x))
    done = np.zeros(x.size, dtype=bool)
    for _ in range(60):
        live = np.flatnonzero(~done)
        if not live.size:
            break
        wl = w[live]
        with np.errstate(over="ignore", invalid="ignore"):
            # x exp(-w); through log |x| only where exp(-w) would overflow (log |x|'s
            # rounding, up to 700 eps, would cost digits of W_0 near 0)
            t = np.where(
                np.abs(np.real(wl)) < 700.0,
                x[live] * np.exp(-wl),
                sign[live] * np.exp(logx[live] - wl),
            )
            h, dh = wl - t, 1.0 + t
            step = 2.0 * h * dh / (2.0 * dh * dh + h * t)  # h'' = -t
        w[live] = wl - step
        done[live] = np.abs(step) <= 1e-10 * (1.0 + np.abs(wl))
    return np.where(done & np.isfinite(w), w, complex("nan"))


def _branch_bounds(b: np.ndarray, tau: np.ndarray, sigma: float) -> np.ndarray | None:
    """The largest ``|k|`` whose branch can give a root right of ``Re s = sigma``, plus one,
    per state: ``1 + |x| exp((a - sigma) tau) / (2 pi)``, where ``|x| exp(a tau) = |b| tau``."""
    with np.errstate(over="ignore"):
        reach = np.abs(b) * tau * np.exp(np.minimum(-sigma * tau, 700.0)) / (2.0 * math.pi)
    if not np.all(np.isfinite(reach)) or np.any(reach > MAX_BRANCHES):
        return None
    return 2 + np.floor(reach).astype(int)


def _branch_roots(a, b, tau, x, k) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The root ``a + W_k(x) / tau`` of each factor ``s - a - b exp(-s tau)`` (flat arrays,
    one branch ``k`` each), polished by Newton's method; its relative residual in its factor;
    and whether it is certain (module notes): the branch's value finite and inside its band
    of imaginary parts (Corless et al., Sec. 4, with rounding room), the root moved by less
    than ``1e-6`` (a start that Newton carried to another root moves more), finite, and its
    residual at rounding level. Distinctness is the caller's."""
    w = _lambert_w(x, k)
    ak = np.abs(k)
    room = 1e-9 * (1.0 + np.abs(w))
    im = np.abs(np.imag(w))
    band = (im >= np.where(ak >= 1, (2 * ak - 2) * math.pi, 0.0) - room) & (
        im <= (2 * ak + 1) * math.pi + room
    )
    s0 = a + w / tau
    s = s0
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(3):  # Newton on f(s) = s - a - b exp(-s tau): simple roots
            e = b * np.exp(-s * tau)
            s = s - (s - a - e) / (1.0 + tau * e)
        e = b * np.exp(-s * tau)
        r = np.abs(s - a - e) / np.maximum(np.abs(s) + np.abs(a) + np.abs(e), 1e-300)
        moved = np.abs(s - s0) <= 1e-6 * (np.abs(s) + np.abs(a) + 1.0 / tau)
    good = np.isfinite(w) & band & np.isfinite(s) & (r <= 1e-12) & moved
    return s, r, good


def _roots(a, b, tau, sigma: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Every root of the factors ``s - a_i - b_i exp(-s tau_i)`` right of ``sigma``, and the
    relative residual of each in its own factor (``None``: not certain; see the module
    notes)."""
    plain = (b == 0.0) | (tau == 0.0)  # no delayed term (or a zero delay): one root, a + b
    vals = [(a + b)[plain].astype(complex)]
    res = [np.zeros(int(plain.sum()))]
    a, b, tau = a[~plain], b[~plain], tau[~plain]
    if a.size:
        with np.errstate(over="ignore"):
            x = b * tau * np.exp(np.minimum(-a * tau, 700.0))
        if not np.all(np.isfinite(x) & (x != 0.0)) or np.any(
            np.abs(x * math.e + 1.0) <= BRANCH_POINT_GAP
        ):
            return None
        K = _branch_bounds(b, tau, sigma)
        if K is None:
            return None
        # every branch -K_i..K_i of every state, flattened
        state = np.repeat(np.arange(a.size), 2 * K + 1)
        first = np.repeat(np.cumsum(2 * K + 1) - (2 * K + 1), 2 * K + 1)
        k = np.arange(state.size) - first - K[state]
        ti = tau[state]
        s, r, good = _branch_roots(a[state], b[state], ti, x[state], k)
        if not np.all(good):
            return None
        if not _distinct(s, state, ti):
            return None  # two branches gave one root: not the distinct roots of the theorem
        # the roots right of the line (and a rounding's width left of it), made symmetric
        scale = np.abs(s) + 1.0 / ti
        near = np.real(s) > sigma - 1e-9 * scale
        s, r, state, ti = s[near], r[near], state[near], ti[near]
        paired = _conjugate_pairs(s, state, ti, sigma)
        if paired is None:
            return None
        s = paired[0]
        right = paired[1] & (np.real(s) > sigma)
        vals.append(s[right])
        res.append(r[right])
    keep = np.concatenate(vals)
    residual = np.concatenate(res)
    inside = np.real(keep) > sigma
    return keep[inside], residual[inside]


def _conjugate_pairs(
    s: np.ndarray, state: np.ndarray, tau: np.ndarray, sigma: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The roots of real factors made exactly symmetric: a root within ``1e-12`` (relative)
    of the real axis put on it, each root below the axis replaced by the conjugate of its
    partner above (computed on another branch, it may differ in the last bits). A root
    without a partner is left out when it lies within rounding of the line ``sigma`` (its
    partner just beyond it), else the result is ``None``. Returns ``(roots, kept)``."""
    s = s.copy()
    scale = np.abs(s) + 1.0 / tau
    real = np.abs(np.imag(s)) <= 1e-12 * scale
    s[real] = np.real(s[real])
    edge = np.real(s) <= sigma + 1e-9 * scale
    up = np.flatnonzero(np.imag(s) > 0)
    down = np.flatnonzero(np.imag(s) < 0)
    pairs_up, pairs_down = [], []
    used = np.zeros(s.size, dtype=bool)
    for i in up:
        cand = down[(state[down] == state[i]) & ~used[down]]
        if cand.size:
            j = cand[np.argmin(np.abs(s[cand] - np.conj(s[i])))]
            if abs(s[j] - np.conj(s[i])) <= 1e-10 * scale[i]:
                used[i] = used[j] = True
                pairs_up.append(i)
                pairs_down.append(j)
    single = ~used & ~real
    if np.any(single & ~edge):
        return None
    s[np.array(pairs_down, dtype=int)] = np.conj(s[np.array(pairs_up, dtype=int)])
    return s, ~single


def _distinct(s: np.ndarray, state: np.ndarray, tau: np.ndarray) -> bool:
    """No two roots of one state within ``1e-8 (|s| + 1 / tau)`` of each other (the larger of
    the two tolerances).

    The roots are sorted by state and real part, and each is compared with the next, the one
    after, and so on while some pair of one state has real parts within the largest
    tolerance: a few passes over the roots (their branches lie apart), not every pair.
    """
    tol = 1e-8 * (np.abs(s) + 1.0 / tau)
    order = np.lexsort((np.real(s), state))
    s, state, tol = s[order], state[order], tol[order]
    reach = float(np.max(tol)) if tol.size else 0.0
    for shift in range(1, s.size):
        same = state[shift:] == state[:-shift]
        close = same & (np.real(s[shift:]) - np.real(s[:-shift]) <= reach)
        if not np.any(close):
            return True
        gap = np.abs(s[shift:] - s[:-shift])
        if np.any(close & (gap <= np.maximum(tol[shift:], tol[:-shift]))):
            return False
    return True


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
        simple, its residual ``|f_i(lambda)|`` relative to the size of the terms of its own
        state's factor ``f_i``.

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
        got = _roots(a, b, tau, sigma)
        if got is None:
            return None
        vals, res = got
        if vals.size >= k:
            break
        sigma -= step
    else:
        return None
    order = np.argsort(-np.real(vals), kind="stable")
    roots = [
        CharacteristicRoot(value=complex(v), residual=float(r))
        for v, r in zip(vals[order], res[order], strict=True)
    ]
    return Roots(roots, 0, certified=True, certificate=float(sigma))


def snapped_to_zero(s: np.ndarray, a: np.ndarray, b: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Roots ``s`` of the factors ``s - a - b exp(-s tau)`` (one each, broadcast) within
    rounding of 0 made exactly 0 where the factor is singular at 0 (``a + b = 0`` to
    ``1e-12`` of ``|a| + |b|``): its root there is 0 itself, which the branch's value gives only
    to rounding (``a + W(x) / tau``, as often ``+3e-15`` as ``-3e-15``). As
    :func:`~fluidnet.linear.roots.characteristic_roots` does, so that a marginal factor reads
    as not stable; the same tolerances (``1e-6`` of ``max(1 / tau, |a| + |b|)`` for the root)."""
    size = np.abs(a) + np.abs(b)
    with np.errstate(divide="ignore"):
        ref = np.maximum(np.where(tau > 0, 1.0 / tau, 0.0), size)
    singular = np.abs(a + b) <= 1e-12 * size
    near = np.abs(s) <= 1e-6 * np.maximum(ref, np.finfo(float).tiny)
    return np.where(singular & near, 0.0 + 0j, s)


def rightmost_one_delay(
    a: np.ndarray, b: np.ndarray, tau: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rightmost root of each scalar factor ``s - a_i - b_i exp(-s tau_i)`` (real ``a``,
    ``b``; ``tau >= 0``), with a line right of which it is the only root (with its conjugate),
    by the closed form of the module notes: a chart's factors of alike flows, thousands at
    once, without a search.

    The branches 0, 1 and -1 are evaluated and verified as in :func:`lambert_roots` (polished
    by Newton's method, moved by less than ``1e-6``, residual at rounding level, inside their
    bands of imaginary parts, distinct). The root of the branch 0 is the rightmost where it
    lies right of the other two and of the bound ``a + log(|x| / (2 pi)) / tau`` on every root
    of a branch ``|k| >= 2`` (module notes); the line is halfway between it and the next of
    those. (The root of the branch -1 is the conjugate of that of the branch 0 where
    ``x < -1/e``.) A factor without a delayed term has the one root ``a + b`` and the line
    ``-inf``.

    Parameters
    ----------
    a, b, tau : numpy.ndarray
        ``(K,)`` each.

    Returns
    -------
    root : numpy.ndarray
        ``(K,)`` complex: the rightmost root (``Im >= 0``); NaN where ``ok`` is False.
    line : numpy.ndarray
        ``(K,)``: every other root lies left of ``Re s = line``; NaN where ``ok`` is False.
    ok : numpy.ndarray of bool
        Where the closed form settled the factor (elsewhere: ``x`` at the branch point, an
        overflow, a root that does not verify, or two real parts that do not separate; the
        caller's general path then).
    """
    a, b, tau = (np.asarray(v, dtype=float) for v in (a, b, tau))
    K = a.size
    root = np.full(K, complex("nan"))
    line = np.full(K, np.nan)
    ok = np.zeros(K, dtype=bool)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(tau) & (tau >= 0)
    plain = finite & ((b == 0.0) | (tau == 0.0))
    root[plain] = a[plain] + b[plain]
    line[plain] = -np.inf
    ok[plain] = True
    d = np.flatnonzero(finite & ~plain)
    if not d.size:
        return root, line, ok
    a, b, tau = a[d], b[d], tau[d]
    with np.errstate(over="ignore", invalid="ignore"):
        x = b * tau * np.exp(np.minimum(-a * tau, 700.0))
    # the branches 0, 1 and -1 of every factor (rows), each verified
    rep = np.repeat(np.arange(d.size), 3)
    k = np.tile(np.array([0, 1, -1]), d.size)
    sv, _, ok3 = _branch_roots(a[rep], b[rep], tau[rep], x[rep], k)
    sv, ok3 = sv.reshape(d.size, 3), ok3.reshape(d.size, 3)
    T = tau[:, None]
    scale = np.abs(sv) + np.abs(a)[:, None] + 1.0 / T
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        good = np.isfinite(x) & (x != 0.0) & (np.abs(x * math.e + 1.0) > BRANCH_POINT_GAP)
        good &= np.all(ok3, axis=1)
        # distinct roots (the theorem's), each branch's own
        sep = 1e-8 * (np.abs(sv) + 1.0 / T)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            good &= np.abs(sv[:, i] - sv[:, j]) > np.minimum(sep[:, i], sep[:, j])
        top = sv[:, 0]
        # real parts of the other roots: branch 1, and branch -1 unless it is the conjugate of
        # the root of branch 0 (x < -1/e); every branch |k| >= 2 at most at the bound
        partner = np.abs(sv[:, 2] - np.conj(top)) <= 1e-10 * scale[:, 0]
        others = np.maximum(np.real(sv[:, 1]), np.where(partner, -np.inf, np.real(sv[:, 2])))
        bound = a + np.log(np.abs(x) / (2.0 * math.pi)) / tau
        nxt = np.maximum(others, bound)
        gap = np.real(top) - nxt
        good &= np.isfinite(gap) & (gap > 1e-9 * scale[:, 0])
    real = np.abs(np.imag(top)) <= 1e-12 * scale[:, 0]
    top = np.where(real, np.real(top) + 0j, np.real(top) + 1j * np.abs(np.imag(top)))
    top = snapped_to_zero(top, a, b, tau)
    g = d[good]
    root[g] = top[good]
    line[g] = (np.real(top) - 0.5 * gap)[good]
    ok[g] = True
    return root, line, ok


def _hayes_zeta(c: np.ndarray) -> np.ndarray:
    """The root ``zeta`` in ``(0, pi)`` of ``zeta cot zeta = c`` (``c < 1``): Newton's method on
    ``g = zeta cos zeta - c sin zeta`` (positive below the root, negative above), kept in a
    bracket that bisection shrinks where Newton leaves it; to a few ulps of ``pi``."""
    lo = np.zeros_like(c)
    hi = np.full_like(c, math.pi)
    z = np.full_like(c, 0.5 * math.pi)
    for _ in range(200):
        g = z * np.cos(z) - c * np.sin(z)
        lo = np.where(g > 0, z, lo)
        hi = np.where(g < 0, z, hi)
        dg = (1.0 - c) * np.cos(z) - z * np.sin(z)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = z - g / dg
        bad = ~((new >= lo) & (new <= hi))  # NaN included
        new = np.where(bad, 0.5 * (lo + hi), new)
        done = (g == 0) | (~bad & (np.abs(new - z) <= 2e-15))
        z = new
        if np.all(done):
            break
    return z


def stability_margins(lin: LinearDDE) -> np.ndarray | None:
    """Margins of each state's factor ``s - a - b exp(-s tau)`` of a system
    :func:`one_delay_factors` accepts, by Hayes' theorem; ``None`` when it does not accept it.

    Hayes' theorem (N. D. Hayes, J. London Math. Soc. 25 (1950); Hale & Verduyn Lunel,
    "Introduction to functional differential equations", Springer 1993, Theorem A.5): every
    root of ``s - a - b exp(-s tau)`` (real ``a``, ``b``; ``tau > 0``) has a negative real
    part if and only if ``a tau < 1`` and ``-zeta / sin zeta < b tau < -a tau``, with
    ``zeta`` the root in ``(0, pi)`` of ``zeta cot zeta = a tau`` (``pi/2`` for ``a = 0``).
    The margins are, per state (columns)::

        1 - a tau,    -(a + b) tau,    b tau + zeta / sin zeta

    (computed as ``b tau + sqrt((a tau)^2 + zeta^2)``, the same number, well conditioned near
    ``zeta = pi``; the last 1 where ``a tau >= 1``, the first margin deciding), all positive
    exactly when the factor is stable; ``-a tau``, 1, 1 for a state without a delayed term
    (its one root is ``a``; ``tau`` is then the system's largest delay, or 1). Each is a
    smooth function of ``(a tau, b tau)``: a root that reaches the imaginary axis makes one
    vanish (the second at ``s = 0``, the third at ``s = +-j zeta / tau``), which a parameter
    continuation can watch without the kinks of the rightmost root's real part where two real
    roots meet.

    Returns
    -------
    numpy.ndarray or None
        ``(n, 3)``.

    Examples
    --------
    >>> from fluidnet.linear import LinearDDE
    >>> from fluidnet.linear.lambertw import stability_margins
    >>> m = stability_margins(LinearDDE(0.0, [(1.0, -1.0)]))  # x' = -x(t - 1): 1 < pi/2
    >>> [round(float(v), 6) for v in m[0]]
    [1.0, 1.0, 0.570796]
    """
    parts = one_delay_factors(lin)
    if parts is None:
        return None
    a, b, tau = parts
    plain = (b == 0.0) | (tau == 0.0)
    unit = np.where(plain, lin.max_delay or 1.0, tau)
    at, bt = a * unit, b * unit
    out = np.ones((a.size, 3))
    out[:, 0] = np.where(plain, -at - bt, 1.0 - at)
    d = ~plain
    out[d, 1] = -(at[d] + bt[d])
    ok = d & (at < 1.0)
    if ok.any():
        z = _hayes_zeta(at[ok])
        out[ok, 2] = bt[ok] + np.hypot(at[ok], z)  # = zeta / sin zeta, well conditioned
    return out
