"""Characteristic roots of linear multi-delay systems.

The roots of ``det Delta(lambda) = 0`` with
``Delta(lambda) = lambda I - A0 - sum_k A_k exp(-lambda tau_k)`` are computed in two stages:

1. **Candidates** from a spectral discretization of the infinitesimal generator of the
   solution semigroup (Chebyshev collocation on ``[-tau_max, 0]``, the method of Breda, Maset
   and Vermiglio used by TRACE-DDE and DDE-BIFTOOL). The generator acts on the history
   ``phi`` as ``phi'``; its domain condition ``phi'(0) = A0 phi(0) + sum_k A_k phi(-tau_k)``
   becomes the first block row. The eigenvalues of the ``n (N + 1)`` square matrix converge
   spectrally to the rightmost characteristic roots.
2. **Refinement** of each candidate by Newton's method on ``det Delta``, using
   ``(det Delta)'/det Delta = trace(Delta^{-1} Delta')``.

The discretization size ``N`` is grown (by 1.5x) until the refined rightmost roots agree between
two successive sizes (or the discretization's own eigenvalues already reproduce them to
``1e-6``: spectral convergence), and until ``N`` resolves every frequency a root right of the
current rightmost one could have (the bounds
``|lambda| <= ||A0|| + sum_k ||A_k|| exp(-Re(lambda) tau_k)`` and Bauer-Fike's, see
:func:`_n_required`; both hold for any similar system, and are taken on the fully balanced one,
so that a coupling of states in bytes and in packets does not inflate them).
The agreement is checked for the roots within ``2 / tau_max`` of the rightmost one (all roots
of a ``region``), and ``N`` grows until ``k`` roots are found (up to ``N = 96``); roots further
left than that window are returned refined (their residuals are exact) but one of them may be
missing from the list, and fewer than ``k`` roots are returned when the others lie in chains
far to the left that this size does not resolve.

Balancing and the certificate
-----------------------------
The system is first balanced (a diagonal similarity by powers of two that makes the rows and
columns of ``|A0| + sum_k |A_k|`` comparable; the characteristic function is unchanged), so
that a model mixing rates of 1e7 with gains of 1e-7 gets sound norms, residuals and
discretization sizes. The result carries a certificate (:attr:`Roots.certified`, computed on
first use): the argument principle on a line just left of the rightmost root found
(:mod:`fluidnet.linear.certificate`) must count exactly the roots found right of it.
:func:`spectral_abscissa`, :meth:`LinearDDE.is_stable` and :func:`count_rhp_roots` raise
:class:`~fluidnet.errors.AnalysisError` instead of giving an uncertified verdict.

Roots at or near zero
---------------------
When ``Delta(0) = -(A0 + sum_k A_k)`` is singular to working precision (an integrator, a
conserved quantity) the system has a root at exactly 0. The refined root closest to 0 is then
snapped to ``0`` (when ``0`` itself passes the residual test) so that the spectral abscissa
is exactly ``0.0`` and :meth:`LinearDDE.is_stable`
reports a marginal system as not stable, instead of flipping on rounding noise.

Verified roots and multiplicities
---------------------------------
A refined candidate passes a cheap residual test first, but is accepted only when the root
itself is verified (:mod:`fluidnet.linear.inclusion`): the smallest resolved circle around it
along which ``det Delta`` winds ``m >= 1`` times encloses ``m`` roots; ``m`` is the
multiplicity (a double root, split by rounding, is enclosed whole), the radius is
:attr:`CharacteristicRoot.error`, and the value of a multiple root is the mean of the roots
enclosed. Of candidates that refined to the same root, the best converged is kept with its own
residual (a spurious eigenvalue of the discretization that Newton carried to within 1e-6 of a
root passes the residual test, and must not stand for the root).

Structure and size
------------------
A system whose matrices are block triangular (after a permutation: a cascade, states that only
feed others) has ``det Delta`` the product of its diagonal blocks' (:mod:`.blocks`); each
block is solved alone and the roots are joined, multiplicities added, certified when every
block is. A block too large for the dense discretization (more than ``DENSE_LIMIT`` rows at
its first size, 12 states or more) is solved without discretization, by the argument
principle on rectangles and Newton's method on its sparse characteristic matrix
(:mod:`.large`); one whose alike flows factor ``det Delta`` (:mod:`.aggregate`) is solved as
its reduced system and its scalar factors instead, joined as blocks are (the rectangles saw
the factors' roots, many and close, as clusters). Where the rectangles give up (tens of
unstable roots spend their budget of evaluations, or a box's count and its halves' disagree),
the dense discretization is tried after all, up to ``DENSE_FALLBACK`` rows (seconds, where
the failure would end an analysis).
"""

from __future__ import annotations

import math
import threading
import warnings
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import AnalysisError, OptionError
from ..options import ROOT_OPTIONS, count_option, option_dict
from ..threads import blas_bound, single_threaded_blas
from .blocks import diagonal_blocks, subsystem
from .certificate import certificate_line, count_right_of
from .large import DENSE_LIMIT, LARGE_STATES, large_roots
from .newton import newton_roots
from .rootcheck import (
    RESIDUAL_TOL,
    imag_bound,
    is_real_system,
    root_residuals,
    system_norms,
    verified_roots,
    zero_root_exists,
)
from .rootset import CharacteristicRoot, Roots, select_roots
from .sparse import SparseSystem
from .stacked import MILD_IMBALANCE, Stack, balance_scales, dense_kernel

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike

    from .lineardde import LinearDDE

__all__ = [
    "CharacteristicRoot",
    "Roots",
    "characteristic_roots",
    "certified_roots",
    "spectral_abscissa",
    "count_rhp_roots",
    "generator_matrix",
    "balanced",
]

#: Relative distance below which refined roots are merged (and counted by multiplicity).
MERGE_RTOL = 1e-6
#: Relative distance below which refined candidates are one root (Newton stops at steps of
#: 1e-11); closer distinct roots stay apart, and a root split by rounding is enclosed whole
#: by its inclusion disc (see the module notes).
SAME_ROOT_RTOL = 1e-9
#: Smallest Chebyshev discretization size tried first.
MIN_NODES = 12
#: Without a region, N grows until k roots are found, but not beyond this size (the missing
#: roots are then far left, in chains that need a much finer discretization).
ENOUGH_POINTS = 96
#: Without a region, convergence is checked for the roots within ``WINDOW / tau_max`` of the
#: rightmost one.
WINDOW = 2.0


# ---------------------------------------------------------------------- discretization
@lru_cache(maxsize=64)
def _chebyshev(N: int) -> tuple[np.ndarray, np.ndarray]:
    """Chebyshev extremal points ``cos(pi j / N)`` and the differentiation matrix on [-1, 1]."""
    j = np.arange(N + 1)
    x = np.cos(np.pi * j / N)
    c = np.where((j == 0) | (j == N), 2.0, 1.0) * (-1.0) ** j
    dx = x[:, None] - x[None, :]
    D = np.outer(c, 1.0 / c) / (dx + np.eye(N + 1))
    D -= np.diag(D.sum(axis=1))
    x.flags.writeable = False
    D.flags.writeable = False
    return x, D


def _interpolation_row(x: np.ndarray, point: float) -> np.ndarray:
    """Barycentric Lagrange weights ``l_j(point)`` on Chebyshev extremal points ``x``."""
    N = len(x) - 1
    hit = np.flatnonzero(np.abs(x - point) <= 1e-15)
    if hit.size:
        row = np.zeros(N + 1)
        row[hit[0]] = 1.0
        return row
    w = (-1.0) ** np.arange(N + 1)
    w[0] *= 0.5
    w[-1] *= 0.5
    terms = w / (point - x)
    return terms / terms.sum()


def generator_matrix(lin: LinearDDE, N: int) -> np.ndarray:
    """The ``n (N + 1)`` square Chebyshev collocation matrix of the infinitesimal generator.

    Parameters
    ----------
    lin : LinearDDE
        A system with at least one delay.
    N : int
        Polynomial degree (``N + 1`` collocation points on ``[-tau_max, 0]``).

    Returns
    -------
    numpy.ndarray
        Its eigenvalues approximate the characteristic roots.
    """
    n = lin.n
    tau_max = lin.max_delay
    x, D = _chebyshev(N)
    big = np.zeros((n * (N + 1), n * (N + 1)), dtype=np.result_type(lin.A0, *lin.A))
    # rows 1..N: d/dtheta on [-tau_max, 0] (theta = tau_max (x - 1) / 2)
    big[n:, :] = np.kron((2.0 / tau_max) * D[1:, :], np.eye(n))
    top = np.zeros((n, n * (N + 1)), dtype=big.dtype)
    top[:, :n] += lin.A0
    for tau, Ak in zip(lin.delays, lin.A, strict=True):
        row = _interpolation_row(x, 1.0 - 2.0 * tau / tau_max)
        top += np.kron(row[None, :], Ak)
    big[:n, :] = top
    return big


# ---------------------------------------------------------------------- helpers


def _delayed_parts(lin: LinearDDE) -> tuple[np.ndarray, np.ndarray] | None:
    """``(taus, A_k as rows (m, n n))`` of a system with delays, for :func:`_log_derivative`
    (made once per Newton run); ``None`` without delays."""
    if not lin.delays:
        return None
    n = lin.n
    return np.asarray(lin.delays), np.stack(lin.A).reshape(len(lin.A), n * n)


def _log_derivative(
    lin: LinearDDE, lam: np.ndarray, parts: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """``(det Delta)'/det Delta = trace(Delta^{-1} Delta')``; ``inf`` where Delta is singular.

    ``parts``: :func:`_delayed_parts` of ``lin`` when the caller keeps them. The delayed terms
    are ``E @ A`` with ``A`` the matrices as rows: the product ``numpy.tensordot`` forms
    (the same ``numpy.dot`` of the same operands), without its reshaping on every call."""
    lam = np.asarray(lam, dtype=complex)
    n = lin.n
    eye = np.eye(n)
    D = lam[..., None, None] * eye - lin.A0
    dD = np.broadcast_to(eye, lam.shape + (n, n)).astype(complex)
    if lin.delays:
        made = parts if parts is not None else _delayed_parts(lin)
        assert made is not None  # lin has delays
        taus, flat = made
        E = np.exp(-lam[..., None] * taus)  # (..., m)
        shape = lam.shape + (n, n)
        D = D - np.dot(E.reshape(-1, taus.size), flat).reshape(shape)
        dD = dD + np.dot((E * taus).reshape(-1, taus.size), flat).reshape(shape)
    out = np.empty(lam.shape, dtype=complex)
    if n <= 2:  # closed forms: trace(adj(D) dD) / det(D)
        with np.errstate(all="ignore"):
            if n == 1:
                out[...] = dD[..., 0, 0] / D[..., 0, 0]
            else:
                a, b, c, d = D[..., 0, 0], D[..., 0, 1], D[..., 1, 0], D[..., 1, 1]
                num = d * dD[..., 0, 0] - b * dD[..., 1, 0] - c * dD[..., 0, 1] + a * dD[..., 1, 1]
                out[...] = num / (a * d - b * c)
        out[~np.isfinite(out)] = np.inf
        return out
    try:
        out[...] = np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1)
    except np.linalg.LinAlgError:
        for i in np.ndindex(lam.shape):
            try:
                out[i] = np.trace(np.linalg.solve(D[i], dD[i]))
            except np.linalg.LinAlgError:
                out[i] = np.inf
    return out


def _newton(lin: LinearDDE, lam: np.ndarray, maxiter: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Newton on ``det Delta`` of ``lin`` (:func:`~fluidnet.linear.newton.newton_roots`)."""
    real = not (np.iscomplexobj(lin.A0) or any(np.iscomplexobj(a) for a in lin.A))
    # the same iteration compiled from 3 states (a few points an iteration: NumPy's work per
    # call dominated); closed forms of the logarithmic derivative below
    kernel = dense_kernel(lin) if lin.n > 2 else None
    if kernel is not None:
        return kernel.refine(lam, real, maxiter)
    parts = _delayed_parts(lin)
    return newton_roots(lambda z: _log_derivative(lin, z, parts), lam, real, maxiter)


def _n_required(lin: LinearDDE, sigma: float, im_extent: float, norms) -> int:
    """Discretization size resolving every root with ``Re >= sigma`` (and ``|Im| <= im_extent``):
    ``0.6 tau_max`` points per unit of the bound :func:`imag_bound`, plus 12."""
    tau_max = lin.max_delay
    sigma = max(sigma, -5.0 / tau_max)
    extent = max(min(imag_bound(lin, sigma, norms), 1e12), im_extent)
    return int(math.ceil(0.6 * extent * tau_max)) + 12


# ---------------------------------------------------------------------- the driver


def _candidates(lin: LinearDDE, ev: np.ndarray) -> np.ndarray:
    """Finite eigenvalues; for a real system only those with Im >= 0 (the others mirror)."""
    cand = ev[np.isfinite(ev)]
    if is_real_system(lin):
        cand = cand[np.imag(cand) >= 0]
        cand = np.where(
            np.abs(np.imag(cand)) <= 1e-12 * (1 + np.abs(cand)), np.real(cand) + 0j, cand
        )
    return cand[np.argsort(-np.real(cand), kind="stable")]


def _refine(lin: LinearDDE, cand: np.ndarray, norms) -> tuple[np.ndarray, ...]:
    """Newton-refined candidates that pass the residual test: values, residuals and the size of
    each one's last Newton step."""
    lam, last = _newton(lin, cand)
    fin = np.isfinite(lam)
    lam, last = lam[fin], last[fin]
    res = root_residuals(lin, lam, norms)
    good = res <= RESIDUAL_TOL
    return lam[good], res[good], last[good]


Found = list[tuple[complex, float, float]]


def _merged(lin: LinearDDE, lam: np.ndarray, res: np.ndarray, last: np.ndarray) -> Found:
    """Mirror (real systems), sort by real part descending, merge duplicates.

    Of candidates that refined to the same root, the one whose last Newton step was smallest
    (the best converged) is kept, with its own residual: a spurious eigenvalue that Newton
    carried to within 1e-6 of a root passes the residual test, and must not stand for it.
    """
    if is_real_system(lin):
        near = np.abs(np.imag(lam)) <= 1e-10 * (1 + np.abs(lam))
        lam = np.where(near, np.real(lam) + 0j, lam)
        upper = np.imag(lam) > 0
        res = np.concatenate([res, res[upper]])
        last = np.concatenate([last, last[upper]])
        lam = np.concatenate([lam, lam[upper].conj()])
    order = np.lexsort((-np.imag(lam), -np.real(lam)))
    merged: list[list] = []
    for i in order:
        v = lam[i]
        for grp in merged:
            if abs(grp[0] - v) <= SAME_ROOT_RTOL * (1 + abs(v)):
                if (last[i], res[i]) < (grp[2], grp[1]):
                    grp[1], grp[2], grp[3] = res[i], last[i], v
                break
        else:
            merged.append([v, res[i], last[i], v])
    out = []
    for key, r, st, v in merged:
        if is_real_system(lin) and abs(key.imag) <= MERGE_RTOL * (1 + abs(key)):
            # a root merged with its own mirror image is real (a double real root splits into
            # a pair 1e-8 apart in floating point): report it on the real axis, not as half a
            # pair
            v = complex(v.real, 0.0)
        out.append((complex(v), float(r), float(st)))
    return out


def _finalize(lin, found: Found, norms, n_nodes, verify: bool = True, system=None) -> Roots:
    """Snap a root to 0 when Delta(0) is singular, verify each root (its inclusion disc and
    multiplicity, :mod:`.inclusion`), wrap up. ``system`` evaluates a large system (see
    :func:`verified_roots`)."""
    vals = np.array([f[0] for f in found], dtype=complex)
    res = np.array([f[1] for f in found], dtype=float)
    if vals.size and zero_root_exists(lin, norms):
        i = int(np.argmin(np.abs(vals)))
        ref = 1.0 / lin.max_delay if lin.delays else 1.0
        if abs(vals[i]) <= 1e-6 * max(ref, norms[0] + float(np.sum(norms[1])), 1e-300):
            # snap only when 0 itself passes the residual test (a badly scaled system can look
            # singular at 0 without being so)
            zero = np.zeros(1, dtype=complex)
            res0 = (
                root_residuals(lin, zero, norms) if system is None else system.residual(zero, norms)
            )[0]
            if res0 <= RESIDUAL_TOL:
                vals[i] = 0.0
                res[i] = res0
    if verify and vals.size:
        vals, res, mult, err = verified_roots(lin, vals, res, norms, system)
    else:
        mult = np.ones(vals.size, dtype=int)
        err = np.full(vals.size, math.nan)
    order = np.lexsort((-np.imag(vals), -np.real(vals)))
    roots = [
        CharacteristicRoot(
            value=complex(vals[i]),
            residual=float(res[i]),
            multiplicity=int(mult[i]),
            error=float(err[i]),
        )
        for i in order
    ]
    return Roots(roots, n_nodes)


def _ode_roots(lin: LinearDDE, norms) -> Roots:
    """The eigenvalues of ``A0`` (no delays), verified like the roots of a delayed system."""
    ev = np.linalg.eigvals(lin.A0)
    found: Found = []
    for v in ev[np.lexsort((-ev.imag, -ev.real))]:
        if is_real_system(lin) and abs(v.imag) <= MERGE_RTOL * (1 + abs(v)):
            v = complex(v.real, 0.0)  # see _merged: a root merged with its mirror is real
        if not any(abs(v - f[0]) <= SAME_ROOT_RTOL * (1 + abs(v)) for f in found):
            found.append((complex(v), 0.0, 0.0))
    vals = np.array([f[0] for f in found], dtype=complex)
    found = [
        (v, float(r), 0.0) for v, r in zip(vals, root_residuals(lin, vals, norms), strict=True)
    ]
    return _finalize(lin, found, norms, 0)


def balanced(lin: LinearDDE, mild: float = MILD_IMBALANCE) -> LinearDDE:
    """The similar system ``D^{-1} A_k D`` (``D`` diagonal, powers of two) with balanced
    matrices (see :func:`fluidnet.linear.stacked.balance_scales`; an imbalance within ``mild``
    is left alone); ``lin`` itself when it is already balanced. The characteristic function is
    unchanged."""
    if lin.n == 1:
        return lin
    M = np.abs(lin.A0) + sum((np.abs(a) for a in lin.A), np.zeros(lin.A0.shape))
    d = balance_scales(M[None], mild=mild)[0]
    if np.all(d == 1.0):
        return lin
    ratio = d[None, :] / d[:, None]
    return type(lin)(  # a LinearDDE, built without importing its module (which imports this one)
        lin.A0 * ratio,
        [(tau, a * ratio) for tau, a in zip(lin.delays, lin.A, strict=True)],
        state_names=lin.state_names,
    )


def _certify(lin: LinearDDE, roots: Roots, box) -> Roots:
    """``roots`` (every root found) with the certificate of :mod:`.certificate` attached (it is
    computed when first asked for)."""
    return Roots(roots, roots.n_nodes, check=lambda: _certificate(lin, roots, box))


def _certificate(lin: LinearDDE, roots: Roots, box, counter=None) -> tuple[bool | None, float]:
    """``(certified, sigma)``: the argument principle on ``Re s = sigma`` against the roots
    found right of it (counted on ``counter``, by default the stacked fully balanced system;
    a large system passes its :class:`~.sparse.SparseSystem`)."""
    if not lin.delays:
        return True, -math.inf
    if box is not None and (
        math.isfinite(box[1]) or math.isfinite(box[2]) or math.isfinite(box[3])
    ):
        return None, math.nan
    vals = roots.values
    tau_max = lin.max_delay
    start = None if box is None else box[0]
    if vals.size == 0 and start is None:
        return False, math.nan
    sigma = certificate_line(np.real(vals), tau_max, start)
    right = np.real(vals) > sigma
    mult = np.array([r.multiplicity for r in roots], dtype=int)
    known = int(mult[right].sum())
    # the count is the same for every similar system; its contour is sized by the norms:
    # count on the fully balanced system (see `characteristic_roots`)
    if counter is None:
        counter = Stack.from_systems([balanced(lin, mild=1.0)])
    count, _ = count_right_of(counter, np.array([sigma]))
    return bool(count[0] == known), sigma


def _parse_region(region: Any) -> tuple[float, float, float, float] | None:
    if region is None:
        return None
    if isinstance(region, (int, float, np.integer, np.floating)) and not isinstance(region, bool):
        r = float(region)
        if not math.isfinite(r):
            raise OptionError(f"region = {region!r}: a half-plane Re(lambda) >= r needs a finite r")
        return (r, math.inf, -math.inf, math.inf)
    try:
        lo_re, hi_re, lo_im, hi_im = (float(v) for v in cast("Iterable[Any]", region))
    except (TypeError, ValueError) as exc:
        raise OptionError(
            f"region = {region!r}: give a number r (the half-plane Re >= r) or a rectangle "
            "(re_min, re_max, im_min, im_max)"
        ) from exc
    if not (lo_re < hi_re and lo_im < hi_im) or not math.isfinite(lo_re):
        raise OptionError(
            f"region = {region!r}: need re_min < re_max, im_min < im_max and a finite re_min"
        )
    return (lo_re, hi_re, lo_im, hi_im)


@blas_bound
def characteristic_roots(
    lin: LinearDDE,
    k: int = 6,
    region: ArrayLike | None = None,
    *,
    max_nodes: int = 400,
    n_nodes: int | None = None,
) -> Roots:
    """Rightmost characteristic roots of a linear multi-delay system.

    Parameters
    ----------
    lin : LinearDDE
        ``x'(t) = A0 x(t) + sum_k A_k x(t - tau_k)``.
    k : int, default 6
        How many distinct rightmost roots to return (a complex pair counts as two) when no
        ``region`` is given.
    region : float or (re_min, re_max, im_min, im_max), optional
        Return every root with ``Re(lambda) >= region`` (a half-plane), or every root in the
        rectangle, instead of the ``k`` rightmost. A retarded system has finitely many roots
        in any right half-plane.
    max_nodes : int, default 400
        Largest Chebyshev discretization size ``N`` tried (``N + 1`` collocation nodes on
        the delay interval: a discretization size, not a number of output samples, hence
        not ``n_points``). A system too large for the dense discretization is solved
        without one, see :mod:`fluidnet.linear.large`.
    n_nodes : int, optional
        Use exactly this discretization size ``N`` (no growth, no convergence check) -- for
        speed in sweeps where the caller knows the scales.

    Returns
    -------
    Roots
        A tuple of :class:`CharacteristicRoot` sorted by real part, descending (then by
        imaginary part, descending).

    Raises
    ------
    OptionError
        For ``k``, ``max_nodes`` or ``n_nodes`` that is not a whole number at least 1, 2 and
        2, or an invalid ``region``.

    Warns
    -----
    RuntimeWarning
        When the roots had not converged at ``max_nodes``.

    Examples
    --------
    >>> import fluidnet as fn
    >>> lin = fn.LinearDDE(0.0, [(1.0, -1.0)])          # x' = -x(t - 1)
    >>> r = lin.roots(k=2)
    >>> round(r[0].real, 6), round(abs(r[0].imag), 6)
    (-0.318132, 1.337236)
    """
    k = count_option("k", k, minimum=1, where="characteristic_roots")
    max_nodes = count_option(
        "max_nodes", max_nodes, minimum=ROOT_OPTIONS["max_nodes"], where="characteristic_roots"
    )
    if n_nodes is not None:
        n_nodes = count_option(
            "n_nodes", n_nodes, minimum=ROOT_OPTIONS["n_nodes"], where="characteristic_roots"
        )
    box = _parse_region(region)
    if n_nodes is not None and int(n_nodes) < 2:
        raise OptionError(f"n_nodes = {n_nodes!r}: need at least 2 collocation intervals")
    blocks = diagonal_blocks(lin)
    if len(blocks) == 1:
        return _block_roots(lin, k, box, max_nodes, n_nodes)
    # block triangular: det Delta is the product of the blocks' (see .blocks)
    parts = [_block_roots(subsystem(lin, b), k, box, max_nodes, n_nodes) for b in blocks]
    return _union(lin, parts, k, box)


def _union(lin: LinearDDE, parts: list[Roots], k: int, box) -> Roots:
    """The roots of a block-triangular system from those of its blocks: equal roots (whose
    inclusion discs overlap) merged with their multiplicities added, the ``k``
    rightmost (or those in ``box``) kept, certified when every block is."""
    items = sorted((r for part in parts for r in part), key=lambda r: (-r.real, -r.imag, r.error))
    merged: list[list] = []  # [value, residual, multiplicity, error]
    for r in items:
        for grp in merged:
            if abs(grp[0] - r.value) <= grp[3] + r.error:
                m = grp[2] + r.multiplicity
                mean = (grp[0] * grp[2] + r.value * r.multiplicity) / m
                grp[3] = max(grp[3] + abs(mean - grp[0]), r.error + abs(mean - r.value))
                grp[0], grp[1], grp[2] = mean, max(grp[1], r.residual), m
                break
        else:
            merged.append([r.value, r.residual, r.multiplicity, r.error])
    merged.sort(key=lambda g: (-g[0].real, -g[0].imag))
    if box is None:
        merged = merged[:k]
    # the residual of the whole system at each root (a block's own may be smaller)
    whole = balanced(lin)
    res = root_residuals(
        whole, np.array([g[0] for g in merged], dtype=complex), system_norms(whole)
    )
    roots = [
        CharacteristicRoot(value=complex(g[0]), residual=float(r), multiplicity=g[2], error=g[3])
        for g, r in zip(merged, res, strict=True)
    ]
    n_nodes = max(p.n_nodes for p in parts)

    def check() -> tuple[bool | None, float]:
        # each block is complete right of its own line, so all are right of the rightmost line
        certs = [p._certificate() for p in parts]
        if any(c is None for c, _ in certs):
            return None, math.nan
        lines = [line for _, line in certs]
        return all(c for c, _ in certs), max(lines)

    return select_roots(Roots(roots, n_nodes, check=check), k, box)


def _factored_roots(lin: LinearDDE, k: int, box, max_nodes: int) -> Roots | None:
    """The roots of a large system whose alike (or row-coupled) states factor ``det Delta``
    (:mod:`.aggregate`): those of the reduced system and of each scalar factor, the factor's
    with its multiplicity, joined as a block-triangular system's are (:func:`_union`);
    ``None`` where no states are alike, or where a part is not certified.

    The rectangles of :mod:`.large` see a network's factors as clusters of roots: the
    100-state network (30 classes of three flows) has some 30 double roots within 4 % of each
    other, which a box resolves only as one entry at their mean (-0.046950 reported for the
    rightmost root -0.0465362 at ``kappa = 0.0396``, ``T = 0.310``). Factored, each root is
    one factor's, in closed form (:func:`~fluidnet.linear.lambertw.lambert_roots`, the
    factors being one-delay scalar systems) or by the general method, and the reduced system's
    own roots are apart. Each part is certified on its own, its discretization grown until it
    is (a fixed ``n_nodes``, which sized the whole system's, does not apply to the parts, as
    it does not to the rectangles); a part that is not gives the system back to the
    rectangles.
    """
    from .aggregate import aggregation
    from .lambertw import lambert_roots, rightmost_one_delay, snapped_to_zero

    if not lin.delays or not is_real_system(lin):
        return None
    agg = aggregation(Stack.from_systems([lin]))
    if agg is None:
        return None

    def system(st: Stack, i: int) -> LinearDDE:
        live = [j for j in range(st.m) if np.any(st.A[i, j] != 0)]
        return type(lin)(st.A0[i], [(float(st.tau[i, j]), st.A[i, j]) for j in live])

    reduced = certified_roots(system(agg.reduced, 0), k, box, max_nodes=max_nodes)
    if not reduced.certified:
        return None
    parts = [reduced]
    # equal factors (classes of equal dynamics) once, their multiplicities added
    factors: dict[bytes, list] = {}
    for g in range(agg.G):
        key = np.concatenate(
            [agg.factors.A0[g].ravel(), agg.factors.A[g].ravel(), agg.factors.tau[g]]
        ).tobytes()
        factors.setdefault(key, [g, 0])[1] += int(agg.multiplicity[g])
    for g, mult in factors.values():
        f = system(agg.factors, g)
        got = None
        if box is None and f.delays:
            a, b, tau = (np.array([v]) for v in (f.A0[0, 0], f.A[0][0, 0], f.delays[0]))
            top = rightmost_one_delay(a, b, tau)[0][0]
            if np.isfinite(top):
                got = lambert_roots(f, sigma=float(top.real) - 2.0 / tau[0], k=k)
            if got is not None:  # a root at 0 exactly where the factor is singular there
                zero = snapped_to_zero(got.values, a, b, tau)
                got = got._with(
                    [replace(r, value=complex(v)) for r, v in zip(got, zero, strict=True)]
                )
        if got is None:
            got = certified_roots(f, k, box, max_nodes=max_nodes)
            if not got.certified:
                return None
        parts.append(got._with([replace(r, multiplicity=r.multiplicity * mult) for r in got]))
    return _union(lin, parts, k, box)


def _block_roots(lin: LinearDDE, k: int, box, max_nodes: int, n_nodes: int | None) -> Roots:
    """:func:`characteristic_roots` of a system that is not block triangular."""
    lin = balanced(lin)
    if lin.delays and lin.n >= LARGE_STATES:
        # a large system whose dense discretization would be too big: rectangles (.large);
        # the size is estimated from Frobenius norms (2-norms of many matrices cost more)
        sparse = SparseSystem.from_lineardde(lin)
        sigma0 = max(0.0 if box is None else box[0], -5.0 / lin.max_delay)
        reach = float(sparse.norm_bound(np.array(sigma0)))
        N0 = n_nodes or int(math.ceil(0.6 * min(reach, 1e12) * lin.max_delay)) + 12
        if lin.n * (min(N0, max_nodes) + 1) > DENSE_LIMIT:
            factored = _factored_roots(lin, k, box, max_nodes)
            if factored is not None:
                return factored
            got = large_roots(lin, k, box, system=sparse)
            fallback = DENSE_FALLBACK // lin.n - 1
            if got.certified is not False or n_nodes is not None or fallback < MIN_NODES:
                return got
            # the rectangles gave up (tens of unstable roots spent their budget, or the counts
            # of a box and its halves disagree): the dense discretization, up to
            # DENSE_FALLBACK rows, reports the same roots or says why not
            top = min(max_nodes, fallback)
            dense = _dense_roots(lin, k, box, top, None, warn=False)
            if dense.certified is False:
                # n_nodes 0: no larger discretization is tried after this one
                return Roots(
                    dense,
                    0,
                    False,
                    math.nan,
                    reason=(
                        f"{got.reason}; nor are the roots of a dense discretization of up to "
                        f"{top} nodes ({lin.n * (top + 1)} rows) certified"
                    ),
                )
            return dense
    return _dense_roots(lin, k, box, max_nodes, n_nodes)


#: Most rows of the dense discretization tried for a large system when the rectangles of
#: :mod:`.large` give up (its eigenvalue problem costs about 4 s at 2 000 rows).
DENSE_FALLBACK = 2000


def _dense_roots(
    lin: LinearDDE, k: int, box, max_nodes: int, n_nodes: int | None, *, warn: bool = True
) -> Roots:
    """The roots from the dense discretization (see :func:`characteristic_roots`); without
    ``warn``, a size not converged at ``max_nodes`` is not warned about (the caller reports
    the result as not certified instead)."""
    norms = system_norms(lin)
    if not lin.delays:
        return select_roots(_certify(lin, _ode_roots(lin, norms), box), k, box)
    if n_nodes is not None:
        found, _ = _solve_at(lin, int(n_nodes), norms, k, box)
        full = _finalize(lin, found, norms, int(n_nodes))
        return select_roots(_certify(lin, full, box), k, box)

    im_extent = 0.0
    if box is not None:
        im_extent = max(abs(box[2]), abs(box[3]))
        im_extent = im_extent if math.isfinite(im_extent) else 0.0
    sigma0 = 0.0 if box is None else box[0]
    # the size bound holds for any similar system: take the fully balanced one, whose norms
    # are not inflated by an imbalance that `balanced` leaves alone as mild (up to 1024x)
    bound_lin = balanced(lin, mild=1.0)
    bound_norms = system_norms(bound_lin)
    N = min(max(MIN_NODES, _n_required(bound_lin, sigma0, im_extent, bound_norms)), max_nodes)
    previous = None
    while True:
        found, ev = _solve_at(lin, N, norms, k, box)
        current = select_roots(_finalize(lin, found, norms, N, verify=False), k, box)
        if box is None:
            sigma = current[0].real if current else sigma0
        else:
            sigma = box[0]
        needed = _n_required(bound_lin, sigma, im_extent, bound_norms)
        if box is None:
            # the k rightmost roots, compared within a window left of the rightmost one:
            # roots further left (the chains of a retarded system) are reported as refined
            # but their completeness is not checked
            window = sigma - WINDOW / lin.max_delay
            same = previous is not None and _same_roots(
                _above(previous, window), _above(current, window), 1.0 / lin.max_delay
            )
        else:
            same = previous is not None and _same_roots(previous, current, 1.0 / lin.max_delay)
        if box is None:
            checked = _above(current, window)
        else:
            checked = current
        # converged: two sizes agree, or this size's eigenvalues already reproduce the refined
        # roots to 1e-6 (the spectral discretization has converged there)
        same = same or _reproduced(checked, ev, 1.0 / lin.max_delay)
        enough = box is None and len(current) >= k or box is not None or N >= ENOUGH_POINTS
        if same and N >= needed and enough:
            break
        if N >= max_nodes and same and N >= needed:
            break  # fewer than k roots found: the others are far left (see the module notes)
        if N >= max_nodes and not warn:
            # not converged within the caller's limit: not certified (the certificate's line
            # holds the rightmost root only)
            full = _finalize(lin, found, norms, N)
            return Roots(select_roots(full, k, box), N, False, math.nan)
        if N >= max_nodes:
            warnings.warn(
                f"characteristic roots of {lin!r} not converged at the discretization limit "
                f"max_nodes={max_nodes} (needed about {needed}); the result may miss roots",
                RuntimeWarning,
                stacklevel=2,
            )
            break
        previous = current
        N = min(max(int(math.ceil(1.5 * N)), needed), max_nodes)
    full = _finalize(lin, found, norms, N)
    return select_roots(_certify(lin, full, box), k, box)


#: Discretizations whose eigenvalues are kept (:func:`_generator_eigenvalues`), and the fewest
#: rows for which they are (smaller eigenvalue problems cost less than their keys).
EIGENVALUES_KEPT = 8
EIGENVALUES_KEPT_FROM_ROWS = 200
_EIGENVALUES: OrderedDict[tuple, np.ndarray] = OrderedDict()
_EIGENVALUES_LOCK = threading.Lock()


def _generator_eigenvalues(lin: LinearDDE, N: int) -> np.ndarray:
    """The eigenvalues of :func:`generator_matrix` ``(lin, N)`` (read-only).

    The last :data:`EIGENVALUES_KEPT` problems of :data:`EIGENVALUES_KEPT_FROM_ROWS` rows or
    more are kept, keyed by ``N`` and the system's entries and delays themselves (not by the
    object, which a caller may change in place): a root path that counts the roots at one
    value again with more roots asked for (a 30-flow network's critical gain: four of its ten
    discretizations, 80 to 180 ms each, were the same eigenvalue problem solved again) gets the
    same eigenvalues, bit for bit, without solving it again."""
    rows = lin.n * (N + 1)
    key = None
    if rows >= EIGENVALUES_KEPT_FROM_ROWS:
        key = (
            N,
            lin.n,
            str(lin.A0.dtype),
            lin.A0.tobytes(),
            tuple(float(t) for t in lin.delays),
            tuple((str(a.dtype), a.tobytes()) for a in lin.A),
        )
        with _EIGENVALUES_LOCK:
            ev = _EIGENVALUES.get(key)
            if ev is not None:
                _EIGENVALUES.move_to_end(key)
                return ev
    with single_threaded_blas():
        ev = np.linalg.eigvals(generator_matrix(lin, N))
    ev.setflags(write=False)
    if key is not None:
        with _EIGENVALUES_LOCK:
            _EIGENVALUES[key] = ev
            while len(_EIGENVALUES) > EIGENVALUES_KEPT:
                _EIGENVALUES.popitem(last=False)
    return ev


def _solve_at(lin: LinearDDE, N: int, norms, k: int, box):
    """Refined roots from the size-N discretization (the relevant candidates only), and the
    discretization's eigenvalues.

    With a region, every candidate in it (plus a margin) is refined. Otherwise the rightmost
    candidates standing for ``k + 2`` roots are refined first; then every candidate right of
    the ``k``-th refined root is refined too, so that spurious eigenvalues of an unresolved
    frequency band (which may lie right of true roots and refine to far-away ones) cannot hide
    a root.
    """
    ev = _generator_eigenvalues(lin, N)
    cand = _candidates(lin, ev)
    if box is not None:
        slack = 1.0 / lin.max_delay
        inside = (
            (np.real(cand) >= box[0] - slack)
            & (np.real(cand) <= box[1] + slack)
            & (np.imag(cand) >= min(box[2], -box[3]) - slack)
            & (np.imag(cand) <= box[3] + slack)
        )
        return _merged(lin, *_refine(lin, cand[inside], norms)), ev
    weight = (
        np.where(np.imag(cand) > 0, 2, 1) if is_real_system(lin) else np.ones(cand.size, dtype=int)
    )
    done = np.zeros(cand.size, dtype=bool)
    lams, ress, lasts = [np.zeros(0, dtype=complex)], [np.zeros(0)], [np.zeros(0)]
    batch = np.zeros(cand.size, dtype=bool)
    batch[: int(np.searchsorted(np.cumsum(weight), k + 2)) + 1] = True
    found: Found = []
    for _ in range(8):
        lam, res, last = _refine(lin, cand[batch], norms)
        done |= batch
        lams.append(lam)
        ress.append(res)
        lasts.append(last)
        found = _merged(lin, np.concatenate(lams), np.concatenate(ress), np.concatenate(lasts))
        if len(found) >= k:
            # every candidate right of the k-th root, and within the widest certificate gap
            # of the rightmost (a cluster of roots there must be found for the count of the
            # certificate line, which may fall left of the k-th root, to match)
            sigma_k = min(found[k - 1][0].real, found[0][0].real - 0.1 / lin.max_delay)
            batch = ~done & (np.real(cand) >= sigma_k - 1e-9 * (1 + abs(sigma_k)))
        else:
            rest = np.flatnonzero(~done)
            batch = np.zeros(cand.size, dtype=bool)
            batch[rest[: int(np.searchsorted(np.cumsum(weight[rest]), k + 2)) + 1]] = True
        if not batch.any():
            break
    return found, ev


def _reproduced(roots: Roots, ev: np.ndarray, scale: float) -> bool:
    """True when every root has a discretization eigenvalue within 1e-6 of it (relative)."""
    ev = ev[np.isfinite(ev)]
    if ev.size == 0:
        return not len(roots)
    for r in roots:
        if np.min(np.abs(ev - r.value)) > 1e-6 * (scale + abs(r.value)):
            return False
    return True


def _above(roots: Roots, sigma: float) -> Roots:
    return roots._with([r for r in roots if r.real >= sigma])


def _same_roots(a: Roots, b: Roots, scale: float = 1.0) -> bool:
    """Same roots to 1e-7 relative, with ``scale`` (1/tau_max) as the floor of the size."""
    if len(a) != len(b):
        return False
    va, vb = a.values, b.values
    return bool(np.all(np.abs(va - vb) <= 1e-7 * (scale + np.abs(va))))


def certified_roots(
    lin: LinearDDE,
    k: int = 6,
    region: ArrayLike | None = None,
    *,
    max_nodes: int = 400,
    n_nodes: int | None = None,
    solve: Any = None,
) -> Roots:
    """:func:`characteristic_roots`, computed again on finer discretizations while the
    certificate fails.

    The size ``N`` that :func:`characteristic_roots` settles on is the first at which the
    rightmost roots stop changing; a root it missed right of the certificate line (or a
    spurious one it kept) makes the certificate fail although ``N`` is below ``max_nodes``,
    where a larger ``max_nodes`` changes nothing. Here ``N`` then grows by 1.5x, each size
    solved outright (``n_nodes``), until the certificate holds or ``N`` reaches
    ``max_nodes``. A fixed ``n_nodes`` is kept as given. ``solve`` replaces
    :func:`characteristic_roots` (same signature; e.g. one that rescales time).

    Parameters
    ----------
    lin : LinearDDE
    k, region, max_nodes, n_nodes
        As :func:`characteristic_roots`.
    solve : callable, optional
        ``solve(lin, k, region, max_nodes=..., n_nodes=...)`` in place of
        :func:`characteristic_roots`.

    Returns
    -------
    Roots
        Certified, or the last computed (at ``max_nodes``, or at the fixed ``n_nodes``) with
        ``certified`` False.
    """
    solve = characteristic_roots if solve is None else solve
    roots = solve(lin, k, region, max_nodes=max_nodes, n_nodes=n_nodes)
    if n_nodes is not None:
        return roots
    N = roots.n_nodes
    with np.errstate(over="ignore", invalid="ignore"):
        while roots.certified is False and 0 < N < max_nodes:
            N = min(max(int(math.ceil(1.5 * N)), N + 1), max_nodes)
            roots = solve(lin, k, region, max_nodes=max_nodes, n_nodes=N)
    return roots


@blas_bound
def spectral_abscissa(lin: LinearDDE, **kwargs: Any) -> float:
    """The largest real part of the characteristic roots of ``lin``.

    Keyword arguments go to :func:`characteristic_roots`. A system with a root at exactly 0
    (see the module notes) has abscissa ``0.0``.

    Raises
    ------
    AnalysisError
        When the rightmost root found is not certified (:attr:`Roots.certified` is False): a
        root may have been missed, so no abscissa (and no stability verdict) is given.

    Examples
    --------
    >>> import fluidnet as fn
    >>> round(fn.LinearDDE(0.0, [(1.0, -1.0)]).spectral_abscissa(), 6)
    -0.318132
    """
    kwargs = option_dict("options", kwargs, ROOT_OPTIONS, where="spectral_abscissa")
    roots = certified_roots(lin, k=2, **kwargs)
    roots.require_certified(f"the spectral abscissa of {lin!r}")
    if not roots:
        raise AnalysisError(f"the spectral abscissa of {lin!r}: no characteristic root found")
    return roots[0].real


def count_rhp_roots(lin: LinearDDE, *, axis_tol: float = 1e-9, **kwargs) -> int:
    """Number of roots with positive real part, counted with multiplicity.

    Roots with ``|Re(lambda)| <= axis_tol * max(1, |lambda|)`` are on the imaginary axis and
    not counted.

    Raises
    ------
    AnalysisError
        When the roots found right of the imaginary axis are not certified complete.
    """
    kwargs = option_dict("options", kwargs, ROOT_OPTIONS, where="count_rhp_roots")
    roots = certified_roots(lin, region=0.0, **kwargs)
    roots.require_certified(f"the count of unstable roots of {lin!r}")
    return int(sum(r.multiplicity for r in roots if r.real > axis_tol * max(1.0, abs(r.value))))
