"""The characteristic roots near the imaginary axis, proved: a bound, an exclusion, a count.

For the retarded linearization ``x'(t) = A_0 x(t) + sum_m A_m x(t - tau_m)`` with every
``tau_m >= 0``, a root ``lambda`` with ``Re lambda >= 0`` is an eigenvalue of
``B(lambda) = A_0 + sum_m A_m e^{-lambda tau_m}``, whose entries satisfy
``|B_ij| <= M_ij = sum_m |A_m,ij|`` since ``|e^{-lambda tau}| <= 1``. Hence (Wielandt)
``|lambda| <= rho(B) <= rho(M)``, and for any positive vector ``v`` (Collatz-Wielandt)
``rho(M) <= max_i (M v)_i / v_i``: :func:`spectral_bound`, with ``v`` an approximate Perron vector
and every entry of ``M`` an upper bound over the box.

:func:`exclude_axis` proves ``Delta(j omega) != 0`` for ``omega`` in ``[0, omega_max]`` (and so,
by ``Delta(conj s) = conj Delta(s)``, on the whole segment ``|omega| <= omega_max``) for every
parameter of the box, by bisecting ``[0, omega_max]`` until the ball enclosing ``Delta`` over each
piece excludes 0: either ``Delta`` evaluated on the ball of the piece, or the mean-value form
``Delta(j c) + j [-h, h] Delta'(j [omega])`` around the piece's centre ``c``. The pieces are
recorded as a bisection tree (:func:`tree_pieces`), which is what a checker evaluates again.

:func:`count_roots` counts the roots in the open right half-plane at one parameter point by the
argument principle on the boundary of the half-disc of radius ``R``: with ``n`` states,
``Delta(lambda) = lambda^n f(lambda)`` where ``f = det(I - B(lambda)/lambda)``; on the arc, the
eigenvalues ``mu`` of ``B/lambda`` have ``|mu| <= q = rho(M)/R``, so ``arg f`` stays within
``n arcsin q < pi`` of 0 when ``R > rho(M) / sin(pi/n)`` (``n >= 2``; ``R > rho(M)`` for
``n = 1``), and the arc adds ``n pi + 2 Arg f(jR)``. Along the axis, ``2 (phi(R) - phi(0))``
is subtracted, ``phi`` the continuous argument of ``Delta(j omega)``: each piece's enclosure is
a disc that excludes 0, so the argument changes along it by the principal argument of the ratio
of its end values. The number of roots is ``(n pi + 2 Arg f(jR) - 2 (phi(R) - phi(0))) / 2 pi``,
which must enclose exactly one integer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .arbcode import NotProved
from .exact import as_arb, decimal_string, read_number
from .problem import Problem

__all__ = [
    "Characteristic",
    "count_roots",
    "exclude_axis",
    "spectral_bound",
    "tree_pieces",
]

#: Largest number of pieces of one bisection tree on the frequency axis.
MAX_PIECES = 20_000


def _flint():
    import flint

    return flint


def spectral_bound(problem: Problem, entries: Sequence[Any]) -> Any:
    """An upper bound (an exact arb) on ``|lambda|`` of every root with ``Re lambda >= 0``
    for every linearization whose entries lie in the balls ``entries``."""
    flint = _flint()
    n = problem.n
    M = [[flint.arb(0) for _ in range(n)] for _ in range(n)]
    for (_, i, j, _), a in zip(problem.entries, entries, strict=True):
        M[i][j] += flint.arb(a).abs_upper()
    Mf = np.array([[float(M[i][j].upper()) for j in range(n)] for i in range(n)])
    if not np.all(np.isfinite(Mf)):
        raise NotProved("a linearization entry is not finite over the box")
    try:
        w, V = np.linalg.eig(Mf + 1e-12 * max(Mf.max(initial=0.0), 1e-300))
        v = np.abs(np.real(V[:, int(np.argmax(np.real(w)))]))
    except np.linalg.LinAlgError:
        v = np.ones(n)
    v = np.maximum(v, 1e-6 * max(v.max(initial=0.0), 1e-300))
    if not np.all(np.isfinite(v)) or v.max() <= 0:
        v = np.ones(n)
    best = flint.arb(0)
    for i in range(n):
        s = sum((M[i][j] * flint.arb(float(v[j])) for j in range(n)), flint.arb(0))
        best = best.max((s / flint.arb(float(v[i]))).upper())
    return best.upper()


def rounded_up(x: Any, digits: int = 4) -> Fraction:
    """A short decimal ``>= x`` (an arb), with a margin of one part in a thousand."""
    value = Fraction(*[int(t) for t in _ratio(x.upper())]) * Fraction(1001, 1000)
    if value <= 0:
        return Fraction(1, 10**6)
    e = math.floor(math.log10(float(value))) - digits + 1
    unit = Fraction(10) ** e
    return math.ceil(value / unit) * unit


def _ratio(x) -> tuple[int, int]:
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return (man * 2**exp, 1) if exp >= 0 else (man, 2**-exp)


# ---------------------------------------------------------------------- Delta on the axis
class Characteristic:
    """``Delta(j omega)`` of a linearization whose entries and delays lie in given balls.

    Parameters
    ----------
    problem : Problem
    entries, delays : sequence of arb
        Balls of the nonzero entries (``problem.entries`` order) and of the delays.
    """

    def __init__(self, problem: Problem, entries: Sequence[Any], delays: Sequence[Any]):
        self.f = problem.characteristic()
        self.entries = [_flint().arb(a) for a in entries]
        self.delays = [_flint().arb(t) for t in delays]
        self.evaluations = 0

    def at(self, omega) -> tuple[Any, Any]:
        """Balls of ``Delta`` and ``dDelta/dlambda`` at ``lambda = j omega`` (``omega`` a ball)."""
        flint = _flint()
        lam = flint.acb(0, omega)
        E = [(-lam * t).exp() for t in self.delays]
        self.evaluations += 1
        d, dd = self.f([lam, *E, *self.delays, *self.entries])
        return flint.acb(d), flint.acb(dd)

    def piece(self, a: Fraction, b: Fraction) -> tuple[bool, Any]:
        """Whether the enclosure of ``Delta(j omega)`` over ``[a, b]`` excludes 0, and the ball
        of ``Delta`` at the piece's centre (for the failure test and the count)."""
        flint = _flint()
        W = as_arb(a).union(as_arb(b))
        c, h = W.mid(), W.rad()
        whole, dwhole = self.at(W)
        if whole.is_finite() and whole.abs_lower() > 0:
            return True, None
        centre, _ = self.at(c)
        if not dwhole.is_finite() or not centre.is_finite():
            return False, centre
        mv = centre + dwhole * flint.acb(0, flint.arb(0, h))
        return bool(mv.abs_lower() > 0), centre

    def enclosure(self, a: Fraction, b: Fraction) -> Any:
        """A disc containing ``Delta(j omega)`` for every ``omega`` in ``[a, b]`` (the tighter
        of the two forms of :meth:`piece`)."""
        flint = _flint()
        W = as_arb(a).union(as_arb(b))
        c, h = W.mid(), W.rad()
        whole, dwhole = self.at(W)
        centre, _ = self.at(c)
        mv = centre + dwhole * flint.acb(0, flint.arb(0, h))
        if whole.is_finite() and (not mv.is_finite() or whole.abs_lower() > mv.abs_lower()):
            return whole
        return mv


def tree_pieces(tree: str, lo: Fraction, hi: Fraction) -> list[tuple[Fraction, Fraction]]:
    """The pieces of ``[lo, hi]`` that a bisection tree spells, in order.

    The tree is a preorder string of ``"1"`` (this interval is bisected: its left half's tree
    follows, then its right half's) and ``"0"`` (this interval is a piece).

    Raises
    ------
    ValueError
        When the string is not a complete tree.
    """
    out: list[tuple[Fraction, Fraction]] = []
    stack = [(lo, hi)]
    pos = 0
    while stack:
        if pos >= len(tree):
            raise ValueError("the bisection tree ends early")
        a, b = stack.pop()
        ch = tree[pos]
        pos += 1
        if ch == "0":
            out.append((a, b))
        elif ch == "1":
            m = (a + b) / 2
            stack.append((m, b))
            stack.append((a, m))
        else:
            raise ValueError(f"the bisection tree has a {ch!r}")
        if len(out) > MAX_PIECES:
            raise ValueError(f"the bisection tree has more than {MAX_PIECES} pieces")
    if pos != len(tree):
        raise ValueError("the bisection tree has characters after its end")
    return out


#: Narrowest piece, relative to the interval searched: below it a piece that still fails is
#: taken for a root on the axis.
MIN_WIDTH = Fraction(1, 2**40)


def _search(
    test: Callable[[Fraction, Fraction], bool], lo: Fraction, hi: Fraction, depth0: int
) -> str:
    """The bisection tree whose pieces all pass ``test`` (bisecting failures), the first
    ``depth0`` levels bisected outright.

    Raises
    ------
    NotProved
        When a piece narrower than ``MIN_WIDTH (hi - lo)`` fails, or more than
        :data:`MAX_PIECES` are tried.
    """
    parts: list[str] = []
    count = 0
    floor = MIN_WIDTH * (hi - lo)
    stack = [(lo, hi, 0)]
    while stack:
        a, b, level = stack.pop()
        if level >= depth0:
            count += 1
            if count > MAX_PIECES:
                raise NotProved(f"more than {MAX_PIECES} frequency pieces needed")
            if test(a, b):
                parts.append("0")
                continue
            if b - a < floor:
                raise NotProved(
                    f"Delta(j omega) is not proved nonzero near omega = {float(a):.6g}: a root "
                    "may lie on the imaginary axis there"
                )
        parts.append("1")
        m = (a + b) / 2
        stack.append((m, b, level + 1))
        stack.append((a, m, level + 1))
    return "".join(parts)


def _first_depth(omega_max: Fraction, delays: Sequence[Any]) -> int:
    """Levels bisected outright: pieces of about half a radian of ``omega tau_max``."""
    tmax = max((float(t.upper()) for t in delays), default=0.0)
    turns = float(omega_max) * max(tmax, 1e-300) / 0.5
    return int(min(10, max(2, math.ceil(math.log2(max(turns, 1.0))))))


def exclude_axis(char: Characteristic, omega_max: Fraction, depth0: int | None = None) -> str:
    """The bisection tree of ``[0, omega_max]`` on whose every piece ``Delta(j omega) != 0``
    is proved.

    Raises
    ------
    NotProved
        When the ball of ``Delta`` at a piece's centre contains 0 (a root may cross the axis
        there for some parameter of the box), or too many pieces are needed.
    """
    if depth0 is None:
        depth0 = _first_depth(omega_max, char.delays)

    def test(a: Fraction, b: Fraction) -> bool:
        ok, centre = char.piece(a, b)
        if ok:
            return True
        if a == 0:
            zero, _ = char.at(as_arb(Fraction(0)))
            if not zero.abs_lower() > 0:
                raise NotProved(
                    "Delta(0) may vanish: a root at lambda = 0 for some parameter of the box (a "
                    "real root crossing the axis, or a zero eigenvalue that every point has, as "
                    "for a steady state that is not isolated)"
                )
        if centre is not None and not centre.abs_lower() > 0:
            at = float((a + b) / 2)
            raise NotProved(
                f"Delta(j omega) may vanish near omega = {at:.6g} for some parameter of the box "
                "(a root may cross the imaginary axis there)"
            )
        return False

    return _search(test, Fraction(0), omega_max, depth0)


def check_axis(char: Characteristic, omega_max: Fraction, tree: str) -> None:
    """Re-check a tree of :func:`exclude_axis`.

    Raises
    ------
    NotProved
        When a piece's enclosure contains 0.
    """
    try:
        pieces = tree_pieces(tree, Fraction(0), omega_max)
    except ValueError as exc:
        raise NotProved(f"the frequency tree is malformed: {exc}") from None
    for a, b in pieces:
        ok, _ = char.piece(a, b)
        if not ok:
            raise NotProved(
                f"Delta(j omega) is not proved nonzero on [{float(a):.6g}, {float(b):.6g}]"
            )


# ---------------------------------------------------------------------- counting
def count_radius(n: int, rho: Any) -> Fraction:
    """A short decimal ``R`` with ``n arcsin(rho / R) < pi`` (see the module notes)."""
    flint = _flint()
    s = flint.arb(1) if n <= 2 else (flint.arb.pi() / n).sin()
    return rounded_up((flint.arb(rho) * 1.25 / s).upper() + flint.arb(1) / 10**9, 3)


def radius_holds(n: int, rho: Any, R: Fraction) -> None:
    """Raise :class:`NotProved` unless ``n arcsin(rho/R) < pi`` and ``rho < R``."""
    flint = _flint()
    q = flint.arb(rho) / as_arb(R)
    if not (q < 1):
        raise NotProved(f"the counting radius {float(R):.6g} does not exceed the root bound")
    if not (q.asin() * n < flint.arb.pi()):
        raise NotProved(f"the counting radius {float(R):.6g} is too small for {n} states")


def _arg_change(char: Characteristic, a: Fraction, b: Fraction, va, vb) -> Any:
    """The argument change of ``Delta`` along ``[a, b]`` (a ball), or None when the piece
    must be split."""
    disc = char.enclosure(a, b)
    if not (disc.is_finite() and disc.abs_lower() > 0):
        return None
    ratio = vb / va
    change = ratio.arg()
    if not change.is_finite() or change.rad() > 0.5:
        return None
    return change


def count_roots(char: Characteristic, n: int, R: Fraction, tree: str | None = None):
    """The number of roots with ``Re lambda > 0`` at one parameter point, proved, and the
    bisection tree of ``[0, R]`` used (searched when ``tree`` is None, checked otherwise).

    Raises
    ------
    NotProved
        When a piece of the axis cannot be followed, or the total does not enclose exactly one
        integer.
    """
    flint = _flint()
    values: dict[Fraction, Any] = {}

    def value(w: Fraction):
        if w not in values:
            values[w] = char.at(as_arb(w))[0]
        return values[w]

    changes: list[Any] = []

    def test(a: Fraction, b: Fraction) -> bool:
        c = _arg_change(char, a, b, value(a), value(b))
        if c is None:
            if not value((a + b) / 2).abs_lower() > 0 and b - a < R * Fraction(1, 2**40):
                raise NotProved(f"Delta(j omega) may vanish near omega = {float(a):.6g}")
            return False
        changes.append(c)
        return True

    if tree is None:
        tree = _search(test, Fraction(0), R, 3)
    else:
        try:
            pieces = tree_pieces(tree, Fraction(0), R)
        except ValueError as exc:
            raise NotProved(f"the counting tree is malformed: {exc}") from None
        for a, b in pieces:
            if not test(a, b):
                raise NotProved(f"the argument of Delta is not followed on [{a}, {b}]")
    axis = sum(changes, flint.arb(0))
    lamR = flint.acb(0, as_arb(R))
    f = value(R) / lamR**n
    arc = f.arg()
    total = (flint.arb.pi() * n + 2 * arc - 2 * axis) / (2 * flint.arb.pi())
    k = total.unique_fmpz()
    if k is None:
        raise NotProved(f"the argument principle gives {total}, not one integer")
    if int(k) < 0:
        raise NotProved(f"the argument principle gives {int(k)} < 0 roots")
    return int(k), tree


def decimal(q: Fraction) -> str:
    """``q`` as an exact decimal string (dyadic fractions of decimals are finite)."""
    text = decimal_string(q, "down")
    if read_number(text) != q:
        raise ValueError(f"{q} has no short decimal expansion")
    return text
