"""One box of parameters proved, and boxes joined: the steps every certificate is made of.

A *leaf* is a box of the swept parameters (the others fixed, each an interval). It is proved when

1. a state box ``X`` passes Krawczyk's test over the leaf (:mod:`fluidnet.proof.krawczyk`):
   for every parameter of the leaf, exactly one equilibrium lies in ``X``;
2. the linearization's entries and delays, enclosed over ``X`` and the leaf (switching terms
   decided: no switching surface meets the box), have every delay ``>= 0``;
3. ``omega_max`` bounds ``|lambda|`` of every root with ``Re lambda >= 0`` (Perron bound);
4. a bisection tree of ``[0, omega_max]`` has ``Delta(j omega) != 0`` on every piece.

Then no root lies on the imaginary axis anywhere on the leaf, and the number of roots in the
open right half-plane is the same at every point of it: roots of a retarded equation move
continuously with the parameters, stay within ``omega_max``, and can change sides only across
the axis (D-subdivision).

Leaves that touch are *joined* when their equilibria are the same branch where they meet: one
box of states contains the other, or Krawczyk's test passes on the hull of the two over the
boxes' intersection (then the equilibrium in each is the unique one in the hull). A connected
set of joined leaves has one root count, proved at one point of it (:func:`prove_count`).

Every step here is a function a checker calls on the stored numbers; the search calls the same
functions on the numbers it is about to store, so a certificate checks exactly as it was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .arbcode import NotProved
from .exact import Interval, ball
from .krawczyk import enclose_equilibrium, krawczyk_holds
from .problem import Problem
from .spectrum import (
    Characteristic,
    check_axis,
    count_radius,
    count_roots,
    exclude_axis,
    radius_holds,
    rounded_up,
    spectral_bound,
)

__all__ = [
    "LeafProof",
    "check_count",
    "check_join",
    "check_leaf",
    "enclosed_linearization",
    "prove_count",
    "prove_leaf",
]


@dataclass
class LeafProof:
    """What a proved leaf stores.

    Attributes
    ----------
    X : list of (Fraction, Fraction)
        The equilibrium's box.
    omega_max : Fraction
        The root bound.
    tree : str
        The bisection tree of ``[0, omega_max]``.
    notes : list of str
        Caveats found on the way (a projected state at 0, state-dependent delays).
    """

    X: list[Interval]
    omega_max: Fraction
    tree: str
    notes: list[str]


def enclosed_linearization(
    problem: Problem, X: Sequence[Interval], P: Sequence[Any]
) -> tuple[list, list, list[str]]:
    """Krawczyk's test on ``X``, then the balls of the entries and delays over ``X x P`` and
    the caveats.

    Raises
    ------
    NotProved
        When a step fails (the message says which).
    """
    Xb = krawczyk_holds(problem, X, P)
    notes = []
    rec = problem.record
    for i in rec.nonnegative:
        lo, hi = X[i]
        if hi < 0:
            raise NotProved(
                f"the equilibrium has {rec.states[i]} < 0 (in [{float(lo):.3g}, {float(hi):.3g}]),"
                " which the projection forbids: no admissible smooth equilibrium here"
            )
        if lo <= 0:
            notes.append(
                f"the projected state {rec.states[i]} is 0 at the equilibrium (its enclosure "
                "contains 0): the linearization ignores the projection max(f, 0) there, as the "
                "papers do; the nonlinear model is not differentiable at that point"
            )
    entries, delays = problem.linearization(Xb + list(P))
    flint = _flint()
    entries = [flint.arb(a) for a in entries]
    delays = [flint.arb(t) for t in delays]
    for (m, i, j, _), a in zip(problem.entries, entries, strict=True):
        if not a.is_finite():
            raise NotProved(f"the linearization entry ({m}, {i}, {j}) is not finite on the box")
    for m, t in enumerate(delays):
        if not t.is_finite() or not t >= 0:
            raise NotProved(f"the delay {problem.delays[m]} is not proved >= 0 on the box")
    if any(problem.state_delays):
        notes.append(
            "delays that depend on the state are frozen at the enclosed equilibrium (the "
            "linearization's convention: their variation multiplies x'(t - tau) = 0)"
        )
    return entries, delays, notes


def _flint():
    import flint

    return flint


def prove_leaf(problem: Problem, P: Sequence[Any], x0: Sequence[float]) -> tuple[LeafProof, int]:
    """Prove a leaf (parameter balls ``P``) from an approximate equilibrium ``x0``; return the
    proof and the number of evaluations of ``Delta``.

    Raises
    ------
    NotProved
        With the step that failed.
    """
    X = enclose_equilibrium(problem, P, x0)
    entries, delays, notes = enclosed_linearization(problem, X, P)
    omega_max = rounded_up(spectral_bound(problem, entries))
    char = Characteristic(problem, entries, delays)
    try:
        tree = exclude_axis(char, omega_max)
    finally:
        evaluations = char.evaluations
    return LeafProof(X, omega_max, tree, notes), evaluations


def check_leaf(problem: Problem, P: Sequence[Any], proof: LeafProof) -> int:
    """Re-check a leaf's proof over the parameter balls ``P``; return the evaluations used.

    Raises
    ------
    NotProved
        With the step that fails.
    """
    entries, delays, _ = enclosed_linearization(problem, proof.X, P)
    bound = spectral_bound(problem, entries)
    if not bound <= _ball(proof.omega_max):
        raise NotProved(
            f"omega_max = {float(proof.omega_max):.6g} is below the root bound "
            f"{float(bound.upper()):.6g} on the box"
        )
    char = Characteristic(problem, entries, delays)
    check_axis(char, proof.omega_max, proof.tree)
    return char.evaluations


def _ball(q: Fraction):
    return ball((q, q))


def _contains(outer: Sequence[Interval], inner: Sequence[Interval]) -> bool:
    return all(o[0] <= i[0] and i[1] <= o[1] for o, i in zip(outer, inner, strict=True))


def check_join(
    problem: Problem, Xa: Sequence[Interval], Xb: Sequence[Interval], S: Sequence[Any]
) -> None:
    """Prove that the equilibria of two touching leaves are one branch on their common
    parameters ``S`` (balls).

    Raises
    ------
    NotProved
        When neither box contains the other and Krawczyk's test fails on their hull over ``S``.
    """
    if _contains(Xa, Xb) or _contains(Xb, Xa):
        return
    hull = [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(Xa, Xb, strict=True)]
    try:
        krawczyk_holds(problem, hull, S)
    except NotProved as exc:
        raise NotProved(
            f"the equilibria of two touching boxes are not proved the same: {exc}"
        ) from None


@dataclass
class CountProof:
    """The root count at one point of a set of joined leaves.

    Attributes
    ----------
    X : list of (Fraction, Fraction)
        The equilibrium's box at the point (inside the anchor leaf's box).
    radius : Fraction
        The radius of the half-disc.
    tree : str
        The bisection tree of ``[0, radius]``.
    count : int
        Roots in the open right half-plane.
    """

    X: list[Interval]
    radius: Fraction
    tree: str
    count: int


def prove_count(problem: Problem, P: Sequence[Any], X_anchor: Sequence[Interval]) -> CountProof:
    """Count the roots in the right half-plane at the point ``P`` (thin balls) of a leaf whose
    equilibrium box is ``X_anchor``.

    Raises
    ------
    NotProved
        When the equilibrium at the point is not enclosed inside ``X_anchor`` or the count fails.
    """
    x0 = [float((lo + hi) / 2) for lo, hi in X_anchor]
    X = enclose_equilibrium(problem, P, x0)
    if not _contains(X_anchor, X):
        X = [(max(a[0], b[0]), min(a[1], b[1])) for a, b in zip(X, X_anchor, strict=True)]
        if any(lo >= hi for lo, hi in X):
            raise NotProved("the equilibrium at the counting point is not the leaf's")
        krawczyk_holds(problem, X, P)
    entries, delays, _ = enclosed_linearization(problem, X, P)
    rho = spectral_bound(problem, entries)
    R = count_radius(problem.n, rho)
    radius_holds(problem.n, rho, R)
    char = Characteristic(problem, entries, delays)
    count, tree = count_roots(char, problem.n, R)
    return CountProof(X, R, tree, count)


def check_count(
    problem: Problem, P: Sequence[Any], X_anchor: Sequence[Interval], proof: CountProof
) -> None:
    """Re-check a count.

    Raises
    ------
    NotProved
        When a step fails or the count differs.
    """
    if not _contains(X_anchor, proof.X):
        raise NotProved("the equilibrium box of the counting point is not inside its leaf's")
    entries, delays, _ = enclosed_linearization(problem, proof.X, P)
    radius_holds(problem.n, spectral_bound(problem, entries), proof.radius)
    char = Characteristic(problem, entries, delays)
    count, _ = count_roots(char, problem.n, proof.radius, proof.tree)
    if count != proof.count:
        raise NotProved(f"the root count is {count}, not {proof.count}")
