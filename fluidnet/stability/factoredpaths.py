"""The first stability switch of a network whose alike flows factor its determinant.

Flows with identical dynamics (same route, delay and gain) factor the characteristic
determinant exactly (:mod:`fluidnet.linear.aggregate`)::

    det Delta(s) = prod_g f_g(s)^(c_g - 1) * det Delta_red(s),

with ``f_g = d_g - b_g`` a one-state delay system per class ``g`` of ``c_g`` alike flows and
``Delta_red`` the system with one state per class. The roots of the whole system are those of
the parts, a root of ``f_g`` counted ``c_g - 1`` times. Followed as one system, the roots of the
parts come close or coincide (a 100-state ring: 30 factors with double roots), which makes the
root paths of :mod:`.rootpaths` lose roots and restart, and every count is one of the whole
system (a 100-state root search instead of a 40-state one).

Here each part is followed on its own by the root continuation of :mod:`.rootpaths`, with its
own checkpoints and certified counts (:class:`PartSweep`): the reduced system, and for each
multiplicity ``m`` the diagonal system of the factors that occur ``m`` times (factors equal in
every matrix merged first, their multiplicities added), whose determinant is the product of
those factors, each once. A count of that part stands for ``m`` times as many roots of the
whole system, a crossing of it for ``m`` times the change.

:func:`first_switch_factored` applies when every part is stable at ``lo`` (the usual question
of a critical value: where is stability lost). The first switch of the whole system is then the
first crossing of any part: the reduced system is followed up to its first switch and the
checkpoint after it (``q``, or ``hi``), then every factor part from ``lo`` to ``q`` (all its
crossings there); the crossings of all parts are merged in order, with the counts of the whole
system. The classes must be the same at every value the paths visit (the same states alike, in
the same orientation, the same factors equal): where they are not, or where a part cannot be
followed or certified, the answer is left to the path of the whole system (``None``), which is
what the caller then follows.

A factor part whose factors each have one delayed term, ``s - a - b exp(-s tau)`` (the usual
case: a flow's own delayed feedback), has closed forms (:mod:`fluidnet.linear.lambertw`): its
counts list every root right of a line from the branches of Lambert W, with no discretization
(:meth:`PartSweep.closed_count`), and when it has no crossing up to ``q`` that is shown from
the Hayes margins of its factors at the reduced path's steps, with no path of its own
(:func:`_quiet_part`). Elsewhere it is followed and counted as any system.
"""

from __future__ import annotations

import numpy as np

from ..errors import FluidnetError
from ..linear.aggregate import Aggregation, aggregation, aggregation_by
from ..linear.lambertw import lambert_roots, stability_margins
from ..linear.large import LARGE_STATES
from ..linear.lineardde import LinearDDE
from ..linear.rootset import Roots
from ..linear.stacked import Stack
from .crossing import FIRST_ROOTS, Count, Crossing, Sweep, local_scale, rhp_count, size_unit
from .rootpaths import (
    VELOCITY_STEP,
    WINDOW,
    StaysUnstable,
    follow_roots,
    raise_if_stays_unstable,
)

__all__ = ["PartSweep", "first_switch_factored", "switches_factored"]


class _Unfactored(FluidnetError):
    """The factorization found at the start does not hold the same way at a value."""


def _aggregate(lin: LinearDDE) -> Aggregation | None:
    return aggregation(Stack.from_systems([lin]))


def _factor_groups(agg: Aggregation) -> tuple[tuple[int, ...], ...]:
    """The classes grouped by equal factors (equal in every matrix and delay), in order."""
    f = agg.factors
    keys: dict[bytes, list[int]] = {}
    for g in range(agg.G):
        key = (f.A0[g] + 0.0).tobytes() + (f.A[g] + 0.0).tobytes() + f.tau[g].tobytes()
        keys.setdefault(key, []).append(g)
    return tuple(tuple(v) for v in keys.values())


class _Parts:
    """The parts of the factored system along the parameter (one tuple of systems per value).

    Part 0 is the reduced system (multiplicity 1); part ``i >= 1`` the diagonal system of the
    factors whose merged multiplicity is :attr:`mult` ``[i]``.
    """

    def __init__(self, sweep: Sweep, agg: Aggregation):
        self.sweep = sweep
        self.signature = self._signature(agg)
        groups = self.signature[2]
        mult_of = [int(sum(agg.multiplicity[g] for g in grp)) for grp in groups]
        self.mult = [1] + sorted(set(mult_of))
        #: for each factor part, the first class of each of its groups
        self.members = [
            [grp[0] for grp, m in zip(groups, mult_of, strict=True) if m == mm]
            for mm in self.mult[1:]
        ]
        self._systems: dict[float, tuple[LinearDDE, ...]] = {}
        self._classes = [np.array(c) for c in self.signature[0]]
        #: the classes merged into a group, and the first class of their group
        self._merged = np.array([g for grp in groups for g in grp[1:]], dtype=int)
        self._first = np.array([grp[0] for grp in groups for _ in grp[1:]], dtype=int)
        self._members = [np.array(members) for members in self.members]

    @staticmethod
    def _signature(agg: Aggregation):
        classes = tuple(tuple(int(i) for i in c) for c in agg.classes)
        return classes, agg.transposed, _factor_groups(agg)

    @classmethod
    def of(cls, sweep: Sweep, p: float) -> _Parts | None:
        agg = _aggregate(sweep.lin(p))
        return None if agg is None else cls(sweep, agg)

    def at(self, p: float) -> tuple[LinearDDE, ...]:
        p = float(p)
        got = self._systems.get(p)
        if got is not None:
            return got
        _, transposed, _ = self.signature
        agg = aggregation_by(Stack.from_systems([self.sweep.lin(p)]), self._classes, transposed)
        if agg is None:
            raise _Unfactored(f"the flows alike at the start differ at {self.sweep.name}={p:.12g}")
        red, fac = agg.reduced, agg.factors
        g, g0 = self._merged, self._first  # the factors merged at the start must be equal here
        if g.size and not (
            np.all(fac.A0[g] == fac.A0[g0])
            and np.all(fac.A[g] == fac.A[g0])
            and np.all(fac.tau[g] == fac.tau[g0])
        ):
            raise _Unfactored(f"the factors merged at the start differ at {p:.12g}")
        systems = [_system(red.A0[0], red.A[0], red.tau[0])]
        for idx in self._members:
            systems.append(
                _system(
                    np.diag(fac.A0[idx, 0, 0]),
                    np.stack([np.diag(fac.A[idx, j, 0, 0]) for j in range(fac.m)]),
                    fac.tau[idx[0]],
                )
            )
        if len(self._systems) > 256:
            self._systems.clear()
        got = self._systems[p] = tuple(systems)
        return got


def _system(A0: np.ndarray, A: np.ndarray, tau: np.ndarray) -> LinearDDE:
    return LinearDDE(A0, [(float(t), a) for t, a in zip(tau, A, strict=True)])


class PartSweep(Sweep):
    """One part of a factored system along the swept parameter (see the module notes): a
    :class:`~.crossing.Sweep` whose system at ``p`` is that part of the whole system's."""

    whole_system = False

    def __init__(self, sweep: Sweep, parts: _Parts, index: int):
        super().__init__(sweep.factory, sweep.name, sweep.root_options, continued=False)
        self.parts, self.index = parts, index

    def lin(self, p: float) -> LinearDDE:
        return self.parts.at(p)[self.index]

    def closed_count(self, p: float, k: int | None = None) -> Count | None:
        """A factor part's count from the Lambert W closed form of its scalar factors
        (:func:`~fluidnet.linear.lambertw.lambert_roots`), where each factor has at most one
        delayed term; ``None`` otherwise (the reduced part, or a factor the closed form does
        not cover: the count is then computed in general).

        The roots given are as many as :meth:`~.crossing.Sweep.count` computes (at least
        ``k``, 6, and ``2 n`` for a system of fewer than
        :data:`~fluidnet.linear.large.LARGE_STATES` states), the rightmost, and every root in
        the closed right half-plane: the closed form gives every root right of
        ``-(WINDOW + 1) / tau_max``, and the certificate is a line between the last root kept
        and the next one (left of the imaginary axis), right of which the roots kept are all.
        """
        if self.index == 0:
            return None
        lin = self.lin(p)
        if not lin.delays:
            return None
        want = max(k or 0, FIRST_ROOTS, 2 * lin.n if lin.n < LARGE_STATES else 0)
        roots = lambert_roots(lin, -(WINDOW + 1.0) / lin.max_delay, want)
        if roots is None:
            return None
        vals = roots.values
        keep = max(want, int(np.count_nonzero(np.real(vals) >= 0.0)))
        if keep < len(roots):
            # between the last root kept and the next, and left of the axis (a pair of a real
            # system kept together: lambert_roots gives it exactly conjugate, and roots of
            # equal real parts are cut alike)
            while keep < len(roots) and vals[keep].real == vals[keep - 1].real:
                keep += 1
        if keep < len(roots):
            line = 0.5 * (min(vals[keep - 1].real, 0.0) + vals[keep].real)  # < 0
            roots = Roots(list(roots[:keep]), 0, certified=True, certificate=line)
        self.n_counts += 1
        return Count(float(p), rhp_count(roots, size_unit(lin)), roots)


def first_switch_factored(
    sweep: Sweep, lo: float, hi: float
) -> tuple[list[Crossing], list[Count]] | None:
    """The crossings of the whole system in ``(lo, q]`` (``q``: the checkpoint after its first
    stability switch, or ``hi``) and the checkpoint counts of the whole system, from the parts
    followed one by one (see the module notes); ``None`` when the system does not factor, a
    part is unstable at ``lo``, or a part cannot be followed or certified."""
    try:
        parts = _Parts.of(sweep, lo)
        if parts is None:
            return None
        sweeps = [PartSweep(sweep, parts, i) for i in range(len(parts.mult))]
        starts = [sw.count_edge(lo, hi - lo) for sw in sweeps[1:]]
        for sw, start in zip(sweeps[1:], starts, strict=True):
            if start.count:  # an unstable factor's roots are the system's too
                raise_if_stays_unstable(sw, lo, hi, start)
        if any(c.count for c in starts):
            return None
        visited: list[float] = []
        reduced = follow_roots(sweeps[0], lo, hi, first_switch=True, visited=visited)
        if reduced[1][0].count:
            return None
        q = reduced[1][-1].value
        found = [reduced]
        for sw, start in zip(sweeps[1:], starts, strict=True):
            quiet = _quiet_part(sw, lo, q, hi - lo, visited, reduced[1], start)
            found.append(
                quiet
                if quiet is not None
                else follow_roots(sw, lo, q, first_switch=False, start=start)
            )
    except StaysUnstable:
        # the reduced system unstable on the whole range: its roots are the whole system's
        if sweep.same_branch(hi):
            raise
        return None
    except FluidnetError:
        return None
    return _merged(found, parts.mult, q)


def switches_factored(
    sweep: Sweep, lo: float, hi: float
) -> tuple[list[Crossing], list[Count]] | None:
    """Every crossing of the whole system in ``(lo, hi]`` and the checkpoint counts of the
    whole system, from each part followed on its own over the whole interval (see the module
    notes; the parts may be unstable at ``lo``); ``None`` when the system does not factor or a
    part cannot be followed or certified.

    A 30-flow ring of 4 alike flows per route has 4-fold roots, and crossings that change the
    count by 8 at once: followed as one system, its roots could not be told apart, and its
    switches were not certified "even following 96 roots"."""
    try:
        parts = _Parts.of(sweep, lo)
        if parts is None or len(parts.mult) < 2:
            return None
        found = [
            follow_roots(PartSweep(sweep, parts, i), lo, hi, first_switch=False)
            for i in range(len(parts.mult))
        ]
    except FluidnetError:
        return None
    base = sum(m * f[1][0].count for m, f in zip(parts.mult, found, strict=True))
    return _merged(found, parts.mult, hi, base)


def _quiet_part(
    sw: PartSweep,
    lo: float,
    q: float,
    span: float,
    visited: list[float],
    checks: list[Count],
    start: Count,
) -> tuple[list[Crossing], list[Count]] | None:
    """A factor part with no crossing in ``(lo, q]``, shown in closed form along the steps of
    the reduced system's path: ``([], its counts at lo, the reduced checkpoints and q)``, or
    ``None`` (the part is then followed as any system).

    Each factor ``s - a - b exp(-s tau)`` is stable exactly while its three Hayes margins are
    positive (:func:`~fluidnet.linear.lambertw.stability_margins`), smooth functions of the
    parameter that vanish where a root reaches the imaginary axis. They are computed at
    ``lo``, at ``lo`` plus the reduced path's difference step (their velocity there) and at
    the end of each step the reduced path accepted up to ``q``, and each step is held to the
    test the root path holds the real parts of its roots to (:mod:`.rootpaths`): the secant
    prediction misses by less than a quarter of the smaller margin at the step's ends -- the
    margin is then, to the predictor's order, monotone or of one sign on the step. A margin
    not positive at a step's end, a step that fails the test or a factor the closed form does
    not cover gives ``None``. The part's right-half-plane count is computed in closed form
    (every Lambert W branch, :meth:`PartSweep.closed_count`) at the reduced path's
    checkpoints and at ``q``, and must be 0 there.
    """
    if start.count or start.roots.n_nodes or not start.roots.certified:
        return None  # not a closed-form start (the general path counted it)
    dp = VELOCITY_STEP * local_scale(lo, span)  # the reduced path's velocity step at lo
    m0 = stability_margins(sw.lin(lo))
    m1 = stability_margins(sw.lin(lo + dp))
    if m0 is None or m1 is None or not np.all(m0 > 0):
        return None
    v = (m1 - m0) / dp
    a = lo
    for b in sorted({p for p in visited if lo < p <= q} | {q}):
        m = stability_margins(sw.lin(b))
        if m is None or not np.all(m > 0):
            return None
        h = b - a
        if np.any(np.abs(m - (m0 + v * h)) > 0.25 * np.minimum(m0, m)):
            return None
        v, m0, a = (m - m0) / h, m, b
    counts = [start]
    for value in sorted({c.value for c in checks if lo < c.value < q}):
        got = sw.closed_count(value)
        if got is None or got.count:
            return None
        counts.append(got)
    if q > lo:
        end = sw.count_edge(q, q - lo, end=True)
        if end.count or end.roots.n_nodes:
            return None
        counts.append(end)
    return [], counts


def _merged(found, mult: list[int], q: float, base: int = 0) -> tuple[list[Crossing], list[Count]]:
    """The crossings of all parts in order, with the whole system's counts (``base`` at
    ``lo``: the parts' counts there, each times its multiplicity), and the checkpoints of all
    parts up to ``q``."""
    events = sorted(
        ((c.value, i, j) for i, (cr, _) in enumerate(found) for j, c in enumerate(cr)),
    )
    crossings: list[Crossing] = []
    total = base
    for value, i, j in events:
        c = found[i][0][j]
        change = mult[i] * c.change
        crossings.append(
            Crossing(
                value=value,
                omega=c.omega,
                change=change,
                count_before=total,
                count_after=total + change,
                root=c.root,
            )
        )
        total += change

    def count_at(v: float) -> int:
        return base + sum(c.change for c in crossings if c.value < v)

    checks: dict[float, Count] = {}
    for _, part_checks in found:
        for ch in part_checks:
            if ch.value <= q and ch.value not in checks:
                checks[ch.value] = Count(ch.value, count_at(ch.value), ch.roots)
    return crossings, [checks[v] for v in sorted(checks)]
