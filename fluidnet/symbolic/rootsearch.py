"""The numeric search for the equilibria of a small model, and a record of what it tried.

:func:`search` runs damped Newton (:mod:`fluidnet.symbolic.densenewton`) from a fixed set of
starts in every boundary configuration at once (each projected state free or held at 0), then
again with the roots found *deflated*, so that starts which fell on a known root reach further
ones. Where nothing is found, :func:`homotopy` follows paths to the parameter point: in the
parameters from points where the equilibrium is known (the model's default values, earlier
solutions in this process), and the global Newton homotopy ``f(x) - (1 - s) f(x0)`` from
starts. Each stage says what it tried (:class:`Attempts`), so that "no equilibrium found" lists
the starts, the methods and the smallest residual reached.

Every start and parameter point is a row of one vectorized Newton iteration: a search costs a
few evaluations of the generated steady-state code, not one root-finder call per start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .densenewton import FLOOR, newton, track

__all__ = ["Attempts", "InOrder", "homotopy", "search", "starts"]

#: Magnitudes of the constant starts (in this order).
MAGNITUDES = (1.0, 10.0, 0.1, 100.0, 1e3, 1e4, 0.01, 1e5)
#: Spread starts ``10^(-2 .. 4)`` per state, and spread starts of mixed signs.
RANDOM_STARTS = 8
SIGNED_STARTS = 4
#: Constant starts at the magnitudes of parameter values outside :data:`MAGNITUDES`.
PARAMETER_STARTS = 4
#: A pass of the search ends when no row has halved its residual for this many rounds (see
#: :func:`~fluidnet.symbolic.densenewton.newton`).
QUIET_ROUNDS = 8
#: Rounds of deflation after the first pass.
DEFLATION_ROUNDS = 2
#: Starts of the global Newton homotopy (the first constant and random ones).
HOMOTOPY_STARTS = 6


@dataclass
class Attempts:
    """What a search tried, for the message when it finds nothing.

    Attributes
    ----------
    candidates : list of numpy.ndarray
        Points where a row converged (to be checked and polished by the caller).
    methods : list of str
        One line per method tried.
    best : float
        The smallest scaled residual reached (``inf`` when nothing was finite).
    best_x : numpy.ndarray or None
        Where.
    """

    candidates: list[np.ndarray] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    best: float = np.inf
    best_x: np.ndarray | None = None
    #: True when a ``first`` judge of :func:`search` settled the search after its first pass's
    #: leading rows: ``candidates`` are then theirs only (see :func:`search`)
    settled: bool = False

    def note(self, rows, method: str) -> None:
        """Record ``method`` and the best row of ``rows`` (a NewtonRows)."""
        self.methods.append(method)
        if rows.residual.size:
            k = int(np.argmin(rows.residual))
            if rows.residual[k] < self.best:
                self.best, self.best_x = float(rows.residual[k]), rows.x[k].copy()

    def add(self, points: np.ndarray) -> int:
        """Add new points (not within 1e-9 of one already there); how many were new."""
        new = 0
        for x in points:
            if not any(_same(x, y) for y in self.candidates):
                self.candidates.append(np.array(x))
                new += 1
        return new


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(np.abs(x - y) <= 1e-12 + 1e-9 * np.abs(y)))


def _halton(count: int, dims: int, skip: int = 1) -> np.ndarray:
    """``(count, dims)`` points of the Halton sequence in ``[0, 1)`` (a deterministic spread,
    without loading numpy's random generators: 30 ms of a first search)."""
    primes: list[int] = []
    k = 2
    while len(primes) < dims:
        if all(k % q for q in primes):
            primes.append(k)
        k += 1
    out = np.zeros((count, dims))
    for d, base in enumerate(primes):
        for i in range(count):
            f, r, j = 1.0, 0.0, i + skip
            while j > 0:
                f /= base
                r += f * (j % base)
                j //= base
            out[i, d] = r
    return out


def starts(n: int, guess: np.ndarray | None = None, p: np.ndarray | None = None) -> np.ndarray:
    """The starts ``(S, n)``: the guess, constant vectors of :data:`MAGNITUDES` and of the
    magnitudes of the parameter values ``p`` outside them (at most :data:`PARAMETER_STARTS`,
    the largest first: an equilibrium often scales with a capacity or a price), vectors of
    magnitudes spread over ``10^-2 .. 10^4`` per state (a Halton sequence), the constants
    ``-1, -10, -0.1`` and spread vectors of mixed signs (equilibria with negative states exist:
    they are found, and ranked after the others)."""
    rows = [] if guess is None else [np.asarray(guess, dtype=float)]
    rows += [np.full(n, m) for m in MAGNITUDES]
    if p is not None:
        mags = np.abs(np.asarray(p, dtype=float))
        outside = (mags < 0.5 * MAGNITUDES[6]) | (mags > 2 * MAGNITUDES[-1])
        mags = mags[np.isfinite(mags) & (mags > 0) & outside]
        decades = sorted({float(10.0 ** np.round(np.log10(v))) for v in mags}, reverse=True)
        rows += [np.full(n, m) for m in decades[:PARAMETER_STARTS]]
    u = _halton(RANDOM_STARTS + SIGNED_STARTS, 2 * n)
    rows += list(10.0 ** (-2.0 + 6.0 * u[:RANDOM_STARTS, :n]))
    rows += [np.full(n, -m) for m in (1.0, 10.0, 0.1)]
    signs = np.where(u[RANDOM_STARTS:, n:] < 0.5, -1.0, 1.0)
    rows += list(signs * 10.0 ** (-2.0 + 5.0 * u[RANDOM_STARTS:, :n]))
    return np.array(rows)


def _held_masks(n: int, subsets) -> np.ndarray:
    masks = np.zeros((len(subsets), n), dtype=bool)
    for j, sub in enumerate(subsets):
        masks[j, list(sub)] = True
    return masks


def _describe_subsets(states, subsets) -> str:
    if len(subsets) == 1:
        return ""
    return (
        f" in each of {len(subsets)} boundary configurations (projected states free or held at 0)"
    )


def search(
    code,
    p: np.ndarray,
    subsets,
    states,
    guess: np.ndarray | None = None,
    active: np.ndarray | None = None,
    first: Callable[[np.ndarray], bool] | None = None,
) -> Attempts:
    """Damped Newton from :func:`starts` in every boundary configuration, then deflated.

    Parameters
    ----------
    code : SteadyCode
    p : numpy.ndarray
        ``(m,)`` parameter values.
    subsets : list of tuple of int
        The boundary configurations (projected states held at 0).
    states : tuple of str
        State names (for the record).
    guess : numpy.ndarray, optional
        ``(n,)``, tried first.
    active : numpy.ndarray of int, optional
        Projected states held by an active set (too many for every configuration: ``subsets``
        is then only the empty one): every start is also tried with them at 0.
    first : callable, optional
        ``first(point)``, called with each candidate of the first pass in the order of the
        full search's list (the order of the rows, duplicates left out) as soon as the rows
        before it have finished; when it returns True the search stops there, without the
        rest of the first pass and without deflation, and returns the candidates so far with
        ``settled`` set. (For a caller that needs only the equilibrium ranked first and can
        tell from a candidate that no later one can be ranked before it.) When it never does,
        the search is the full one.

    Returns
    -------
    Attempts
    """
    n = code.n
    S = starts(n, guess, p)
    if active is not None and len(active):
        low = S.copy()
        low[:, active] = 0.0
        S = np.concatenate([S, low])
    masks = _held_masks(n, subsets)
    X0 = np.repeat(S[None], len(subsets), axis=0).reshape(-1, n)
    held = np.repeat(masks, len(S), axis=0)
    X0 = np.where(held, 0.0, X0)
    group = np.repeat(np.arange(len(subsets)), len(S))
    out = Attempts()
    judge = None if first is None else InOrder(first)
    rows = newton(code, X0, p, held, active=active, quiet=QUIET_ROUNDS, until=judge)
    what = "the guess, " if guess is not None else ""
    out.note(
        rows,
        f"damped Newton from {len(S)} starts ({what}constant vectors of 1e-2 to 1e5, of the "
        f"parameters' magnitudes and of -0.1 to -10, {RANDOM_STARTS + SIGNED_STARTS} spread over "
        "1e-2 to 1e4 in each state)"
        f"{_describe_subsets(states, subsets)}",
    )
    if judge is not None and judge.settled:
        out.candidates, out.settled = judge.seen.candidates, True
        return out
    roots: list[list[np.ndarray]] = [[] for _ in subsets]
    for k in np.flatnonzero(rows.converged):
        x = rows.x[k]
        if not any(_same(x, y) for y in roots[group[k]]):
            roots[group[k]].append(x)
    out.add(rows.x[rows.converged])
    converged = rows.converged.copy()
    for _round in range(DEFLATION_ROUNDS):
        if not any(roots):
            break
        deepest = max(len(r) for r in roots)
        known = []
        for j in range(deepest):
            R = np.full((len(subsets), n), np.nan)
            for g, rs in enumerate(roots):
                if j < len(rs):
                    R[g] = rs[j]
            known.append(R[group])
        # the rows that converged (to a root now deflated) in a configuration with roots
        again = np.array([bool(roots[g]) for g in group]) & converged
        ks = np.flatnonzero(again)
        if not ks.size:
            break
        rows = newton(
            code,
            X0[ks],
            p,
            held[ks],
            roots=[R[ks] for R in known],
            active=active,
            quiet=QUIET_ROUNDS,
        )
        new = 0
        for i in np.flatnonzero(rows.converged):
            g, x = group[ks[i]], rows.x[i]
            if not any(_same(x, y) for y in roots[g]):
                roots[g].append(x)
                new += 1
        out.add(rows.x[rows.converged])
        if _round == 0:
            out.methods.append("deflation of the roots found, from the starts that reached them")
        if not new:
            break
    return out


class InOrder:
    """An ``until`` (:class:`~.densenewton.LeadingRows`) for a ``first`` judge: the finished
    leading rows' candidates, in order and without duplicates (as :meth:`Attempts.add` of the
    whole pass lists them), given to ``first`` one by one. A row is a candidate where its value
    says it converged: a scaled residual at most ``FLOOR`` (:func:`~.densenewton.newton`), or
    ``converged`` of the values (the sparse search's flags)."""

    def __init__(self, first: Callable[[np.ndarray], bool], converged=None):
        self.first = first
        self.converged = converged or (lambda residual: residual <= FLOOR)
        self.seen = Attempts()
        self.settled = False

    def __call__(self, x: np.ndarray, values: np.ndarray, a: int, b: int) -> bool:
        for k in range(a, b):
            if not self.converged(values[k]):
                continue
            if self.seen.add(x[k : k + 1]) and self.first(self.seen.candidates[-1]):
                self.settled = True
                return True
        return False


def homotopy(
    code,
    p: np.ndarray,
    subsets,
    known: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    attempts: Attempts,
    guess: np.ndarray | None = None,
    active: np.ndarray | None = None,
) -> Attempts:
    """Paths to ``p``: in the parameters from every ``(p0, x0, held)`` of ``known``, and the
    global Newton homotopy from starts in every boundary configuration; the end points that
    converge are added to ``attempts`` (its record extended).

    Parameters
    ----------
    code : SteadyCode
    p : numpy.ndarray
        ``(m,)`` target parameter values.
    subsets : list of tuple of int
    known : list of (p0, x0, held)
        Parameter points ``(m,)`` with an equilibrium ``(n,)`` there and its held states.
    attempts : Attempts
        Extended in place and returned.
    guess : numpy.ndarray, optional
        A start for the Newton homotopy.
    active : numpy.ndarray of int, optional
        Projected states held by an active set in the final Newton steps (see :func:`search`).
    """
    n = code.n
    if known:
        P0 = np.array([k[0] for k in known])
        X0 = np.array([k[1] for k in known])
        H = np.array([k[2] for k in known])
        P1 = np.broadcast_to(p, P0.shape).copy()
        rows = track(code, X0, P0, P1, H)
        ends = rows.x[rows.converged]
        if ends.size:
            polished = newton(code, ends, p, H[rows.converged], active=active)
            attempts.add(polished.x[polished.converged])
        attempts.note(
            rows,
            f"continuation in the parameters from {len(known)} point(s) where the equilibrium "
            f"is known ({int(rows.converged.sum())} reached the end)",
        )
    S = starts(n, guess)[: HOMOTOPY_STARTS + (guess is not None)]
    masks = _held_masks(n, subsets)
    X0 = np.repeat(S[None], len(subsets), axis=0).reshape(-1, n)
    held = np.repeat(masks, len(S), axis=0)
    X0 = np.where(held, 0.0, X0)
    F0 = np.empty_like(X0)
    for j, sub in enumerate(subsets):
        rows = slice(j * len(S), (j + 1) * len(S))
        F0[rows] = code.f(X0[rows].T, p[:, None], tuple(sub)).T
    F0 = np.where(held, 0.0, F0)
    ok = np.all(np.isfinite(F0), axis=1)
    if ok.any():
        P = np.broadcast_to(p, (int(ok.sum()), p.size)).copy()
        rows = track(code, X0[ok], P, P, held[ok], f0=F0[ok])
        ends = rows.x[rows.converged]
        if ends.size:
            polished = newton(code, ends, p, held[ok][rows.converged], active=active)
            attempts.add(polished.x[polished.converged])
        attempts.note(
            rows,
            f"the global Newton homotopy f(x) - (1 - s) f(x0) from {int(ok.sum())} starts "
            f"({int(rows.converged.sum())} reached s = 1)",
        )
    return attempts
