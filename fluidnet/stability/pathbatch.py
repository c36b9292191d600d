"""The first stability switch of many parameter sets at once: the root continuation, batched.

:func:`first_switches` runs the continuation of :mod:`fluidnet.stability.rootpaths` for ``K``
parameter sets together: the same stepper (:class:`~fluidnet.stability.rootpaths.RootPath`:
predictor, acceptance test, Illinois search for the crossing) and the same step-size
controller, in the same loop (:func:`fluidnet.continuation.follow`), driven for all sets by
:func:`fluidnet.continuation.run_batch`. What is shared is the arithmetic: at every round the
Newton corrections of all sets are one vectorized
computation on stacked systems (:class:`~fluidnet.linear.stacked.Stack`), and the counts that
certify the answers are computed for all sets at once by the argument principle
(:func:`~fluidnet.linear.certificate.count_right_of`) instead of by a full root computation
per set.

The certificate of each set is the one of the continuation:

* at the start, the roots right of a line just left of ``-WINDOW / tau_max`` are found (a
  stacked spectral discretization, refined by Newton) and their number must equal the
  argument-principle count right of that line: every root that can reach the imaginary axis
  without first crossing that line is followed;
* at every checkpoint (after a crossing, every ``CHECK_EVERY`` accepted steps) the number of
  right-half-plane roots counted by the argument principle must equal the count at the start
  plus the changes of the crossings found; when the roots right of the window line are not
  exactly the followed ones (roots from further left came near), the roots there are found
  and certified afresh, as at the start, and followed from there; the answer is the first
  crossing that changes stability, with the count computed on both sides of it.

A set for which any of this fails -- a count that does not match, a root Newton loses or that
collides with another, two roots crossing in one step, systems of another size -- is reported
as not done, and the caller computes it by the per-set path
(:func:`fluidnet.stability.rootpaths.follow_roots`, which recomputes the roots in full where
this one gives up), so the batch never answers with less certainty than one set alone.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..continuation import Stop, follow, run_batch
from ..errors import FluidnetError
from ..linear.batch import generator_matrices
from ..linear.certificate import certificate_line, count_right_of
from ..linear.roots import MERGE_RTOL, RESIDUAL_TOL
from ..linear.stacked import Stack, balance_scales
from .crossing import REAL_TOL, Crossing, on_axis
from .rootpaths import CHECK_EVERY, RootPath, _first_step, _Path

__all__ = ["BatchSwitch", "first_switches"]

#: Sizes of the stacked spectral discretization tried at the start.
START_POINTS = (16, 40)
#: Roots right of ``-WINDOW / tau_max`` are followed. Shallower than the per-set window of
#: :mod:`.rootpaths` (the argument-principle count far left needs many samples, since
#: ``|exp(-s tau)|`` grows there); roots from further left that come near are seen by the
#: window count at the next checkpoint, and one that reaches the axis before it makes the
#: right-half-plane count disagree: the set is then done alone.
WINDOW = 1.0


@dataclass
class BatchSwitch:
    """The first switch of one set: its crossing and the counts that certify it."""

    crossing: Crossing
    checks: list[tuple[float, int]]


class _Fail(Exception):
    """This set leaves the batch (the per-set path computes it)."""


# ----------------------------------------------------------------------------- stacked numerics
def _stack(systems) -> Stack:
    """Stack real systems of one size (fewer delays padded with zero matrices)."""
    return Stack.from_systems(systems)


def _newton(stack: Stack, lam: np.ndarray, idx: np.ndarray, maxiter: int = 40):
    """Newton's method on ``det Delta`` as in :func:`fluidnet.stability.crossing.newton_roots`,
    for candidates ``lam`` of the systems ``idx`` of a stack; ``(roots, converged)``."""
    lam, active = stack.newton(lam, idx, tol=1e-13, stall_tol=1e-9, maxiter=maxiter)
    ok = np.isfinite(lam)
    near = ok & (np.abs(np.imag(lam)) <= REAL_TOL * (1.0 + np.abs(lam)))
    lam[near] = np.real(lam[near])
    res = np.full(lam.shape, np.inf)
    if ok.any():
        res[ok] = stack.residual(lam[ok], idx[ok])
    return lam, ok & (res <= 1e-8) & ~active


def _balanced(stack: Stack) -> Stack:
    d = balance_scales(np.abs(stack.A0) + np.sum(np.abs(stack.A), axis=1))
    return stack.scaled(d)


# ------------------------------------------------------------------------------- one set's path
class _BatchPath(RootPath):
    """One set's path (:class:`~fluidnet.stability.rootpaths.RootPath`), certified by
    argument-principle counts; its requests are answered for all sets at once.

    Requests besides ``("newton", p, guesses)``: ``("start", p)`` -> ``(roots to follow,
    right-half-plane count, tau_max)``; ``("count", p, sigma)`` -> ``(right-half-plane count,
    count right of sigma)`` (``-1`` for ``sigma`` NaN). The path returns a
    :class:`BatchSwitch`; it raises :class:`_Fail` when the batch cannot certify the set.
    """

    def __init__(self, lo: float, hi: float, first_switch: bool = True):
        super().__init__(lo, hi, first_switch)
        self.dp = 1e-6 * max(self.span, 1e-12 * max(1.0, abs(lo)))
        self.tau_max = math.nan
        self.checks: list[tuple[float, int]] = []

    def start(self):
        """The first path, from the roots certified at ``lo`` (a generator of requests)."""
        lam, self.count, self.tau_max = yield ("start", self.lo)
        self.checks.append((self.lo, self.count))
        return (yield from self._path_at(self.lo, lam))

    def _path_at(self, q: float, lam: np.ndarray):
        new, ok = yield ("newton", q + self.dp, lam)
        v = np.where(ok, (new - lam) / self.dp, 0.0) if lam.size else lam.copy()
        return _Path(q, lam, v)

    def keep(self, new, q):
        keep = np.real(new) >= -WINDOW / self.tau_max
        keep[np.argsort(-np.real(new))[:2]] = True
        return keep

    def restart_at(self, q):
        lam, rhp, self.tau_max = yield ("start", q)
        if rhp != self.count:
            return None
        self.checks.append((q, rhp))
        return (yield from self._path_at(q, lam))

    def checkpoint(self, path, located, q):
        found = next((c for c in located if c.is_switch), None)
        if not (located or self.steps % CHECK_EVERY == 0 or q == self.hi):
            return path
        switch = found is not None and self.first_switch
        sigma = math.nan  # the last checkpoint needs the right-half-plane count only
        if not switch:
            sigma = certificate_line(
                np.r_[np.real(path.lam), -WINDOW / self.tau_max],
                self.tau_max,
                start=-WINDOW / self.tau_max,
            )
        rhp, right = yield ("count", q, sigma)
        followed = int(np.sum(np.where(np.imag(path.lam) > 0, 2, 1)[np.real(path.lam) > sigma]))
        if rhp != self.count:
            raise _Fail(f"the count at {q:.12g} does not match the crossings found")
        self.checks.append((q, self.count))
        if switch and found is not None:  # (switch implies found)
            return Stop(BatchSwitch(found, self.checks))
        if right != followed:
            # roots from further left came near: follow them too, from the roots at q
            lam, rhp, self.tau_max = yield ("start", q)
            if rhp != self.count:
                raise _Fail(f"the count at {q:.12g} does not match the crossings found")
            return (yield from self._path_at(q, lam))
        return path

    def finish(self, path):
        raise _Fail("no stability switch in the interval")

    def failed(self, path, error):
        # (the per-set path recomputes the roots in full where this one cannot go on)
        raise _Fail(f"the step cannot be accepted at {path.p:.12g}")

    def lost(self, t, guess):
        return _Fail(f"the crossing root is lost at {t:.12g}")


def _path(lo: float, hi: float, first_switch: bool = True):
    """The continuation of one set as a generator of requests (see :class:`_BatchPath`)."""
    stepper = _BatchPath(lo, hi, first_switch)
    path = yield from stepper.start()
    h = _first_step(path, hi - lo)
    return (yield from follow(stepper, path, stepper.controller(), h))


# -------------------------------------------------------------------------------- the driver
def first_switches(sweeps, lo, hi, stacked=None) -> tuple[list[BatchSwitch | None], list[str]]:
    """The first stability switch of each sweep in ``[lo_k, hi_k]``, batched.

    Parameters
    ----------
    sweeps : list of Sweep
        One per parameter set (:class:`~fluidnet.stability.crossing.Sweep`).
    lo, hi : array_like
        The intervals, one per set.
    stacked : callable, optional
        ``stacked(ks, ps)`` returns the systems of the sets ``ks`` at the values ``ps`` as one
        :class:`~fluidnet.linear.stacked.Stack` (a vectorized factory), used for the Newton
        corrections. It is checked against the sets' own systems at the start of each interval
        and at every checkpoint (to ``1e-12``; the counts that certify are made on the sets'
        own systems); a set where it differs builds its systems one by one from the start on,
        or leaves the batch.

    Returns
    -------
    results : list
        A :class:`BatchSwitch` per set, or ``None`` where the batch could not certify one (the
        caller then uses the per-set path).
    reasons : list of str
        Why a set was left out (``""`` for the sets done).
    """
    K = len(sweeps)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), (K,))
    hi = np.broadcast_to(np.asarray(hi, dtype=float), (K,))
    results: list[BatchSwitch | None] = [None] * K
    reasons = [""] * K
    answer = _Answers(sweeps, stacked, reasons)
    paths: dict[Hashable, Any] = {k: _path(float(lo[k]), float(hi[k])) for k in range(K)}
    done, failed = run_batch(paths, answer, failures=(_Fail,))
    for k, result in done.items():
        results[k] = result
    for k, exc in failed.items():
        reasons[k] = str(exc)
    for k in range(K):
        if results[k] is None and not reasons[k]:
            reasons[k] = "not certified by the batch"
    return results, reasons


class _Answers:
    """The answers to one round of requests of every set: stacked computations, grouped by
    kind and size (the ``answer_round`` of :func:`~fluidnet.continuation.run_batch`)."""

    def __init__(self, sweeps, stacked, reasons: list[str]):
        K = len(sweeps)
        self.sweeps, self.stacked, self.reasons = sweeps, stacked, reasons
        self.size = np.zeros(K, dtype=int)
        self.hooked = np.zeros(K, dtype=bool)
        self.checked = np.zeros(K, dtype=bool)

    def __call__(self, pending: dict[int, tuple]) -> dict[int, object]:
        sweeps, stacked, reasons = self.sweeps, self.stacked, self.reasons
        size, hooked, checked = self.size, self.hooked, self.checked
        replies: dict[int, object] = {}
        groups: dict[tuple, tuple[list[int], Stack]] = {}
        # the start of every set: its own system (and the vectorized factory checked on it)
        starts = [k for k in pending if pending[k][0] == "start"]
        built = {}
        for k in starts:
            try:
                lin = sweeps[k].lin(pending[k][1])
            except FluidnetError as exc:
                reasons[k] = str(exc)
                continue
            if not lin.delays or _complex(lin):
                reasons[k] = "the system is complex or has no delay"
                continue
            built[k] = lin
            size[k] = lin.n
        fresh = {k: lin for k, lin in built.items() if not checked[k]}
        if stacked is not None and fresh:
            # checked once per set, at its start; a set it does not agree with never uses it
            hooked[list(fresh)] = _agrees(stacked, fresh, pending)
            checked[list(fresh)] = True
        for n in sorted({lin.n for lin in built.values()}):
            ks = [k for k, lin in built.items() if lin.n == n]
            groups["start", n, False] = (ks, _stack([built[k] for k in ks]))
        # the other requests: vectorized where the factory allows, else one by one
        for kind in ("newton", "count"):
            for n in sorted({int(size[k]) for k in pending if pending[k][0] == kind}):
                ks = [k for k in pending if pending[k][0] == kind and size[k] == n]
                # the counts that certify are made on the factory's own systems, each compared
                # with the vectorized factory's (a set where they differ leaves the batch)
                fast = [k for k in ks if hooked[k]] if kind == "newton" else []
                if kind == "count" and stacked is not None:
                    ours = [k for k in ks if hooked[k]]
                    if ours:
                        own = {}
                        for k in ours:
                            try:
                                own[k] = sweeps[k].lin(pending[k][1])
                            except FluidnetError as exc:
                                reasons[k] = str(exc)
                        same = _agrees(stacked, own, pending) if own else []
                        for k, ok in zip(own, same, strict=True):
                            if not ok:
                                hooked[k] = False
                                reasons[k] = "the vectorized factory differs from the factory"
                                ks.remove(k)
                if fast:
                    st = _call(stacked, fast, [pending[k][1] for k in fast], n)
                    if st is None:
                        hooked[fast] = False
                    else:
                        groups[kind, n, True] = (fast, st)
                slow, lins = [], []
                for k in ks:
                    if k in fast or reasons[k]:
                        continue
                    try:
                        lin = sweeps[k].lin(pending[k][1])
                    except FluidnetError as exc:
                        reasons[k] = str(exc)
                        continue
                    if lin.n != n or not lin.delays or _complex(lin):
                        reasons[k] = "the system changed size along the interval"
                        continue
                    slow.append(k)
                    lins.append(lin)
                if slow:
                    groups[kind, n, False] = (slow, _stack(lins))
        solvers = {"start": _start, "newton": _newtons, "count": _counts}
        for (kind, _, _), (ks, st) in groups.items():
            replies.update(solvers[kind](ks, [pending[k] for k in ks], st))
        for k in pending:
            if replies.get(k) is None:
                replies.pop(k, None)
                if not reasons[k]:
                    reasons[k] = "not certified by the batch"
        return replies


def _call(stacked, ks, ps, n) -> Stack | None:
    try:
        st = stacked(np.asarray(ks), np.asarray(ps, dtype=float))
    except FluidnetError:
        return None
    if st is None or st.K != len(ks) or st.n != n:
        return None
    return st


def _agrees(stacked, built: dict, pending: dict) -> np.ndarray:
    """Which sets the vectorized factory builds as their own factory does (to 1e-12)."""
    ks = list(built)
    out = np.zeros(len(ks), dtype=bool)
    for n in sorted({lin.n for lin in built.values()}):
        sel = [i for i, k in enumerate(ks) if built[k].n == n]
        st = _call(stacked, [ks[i] for i in sel], [pending[ks[i]][1] for i in sel], n)
        if st is None:
            continue
        ref = _stack([built[ks[i]] for i in sel])
        if ref.m != st.m:
            continue
        for j, i in enumerate(sel):
            scale = max(np.max(np.abs(ref.A0[j])), np.max(np.abs(ref.A[j])), 1e-300)
            out[i] = (
                np.all(np.abs(st.A0[j] - ref.A0[j]) <= 1e-12 * scale)
                and np.all(np.abs(st.A[j] - ref.A[j]) <= 1e-12 * scale)
                and np.all(np.abs(st.tau[j] - ref.tau[j]) <= 1e-12 * np.max(ref.tau[j]))
            )
    return out


def _complex(lin) -> bool:
    return np.iscomplexobj(lin.A0) or any(np.iscomplexobj(a) for a in lin.A)


def _newtons(ks, reqs, stack: Stack) -> dict[int, tuple]:
    guesses = [np.asarray(r[2], dtype=complex) for r in reqs]
    sizes = np.array([g.size for g in guesses])
    idx = np.repeat(np.arange(len(ks)), sizes)
    lam, ok = _newton(stack, np.concatenate(guesses) if idx.size else np.zeros(0, complex), idx)
    cuts = np.cumsum(sizes)[:-1]
    return {k: (r, o) for k, r, o in zip(ks, np.split(lam, cuts), np.split(ok, cuts), strict=True)}


def _counts(ks, reqs, stack: Stack) -> dict[int, tuple]:
    P = len(ks)
    sigma = np.array([r[2] for r in reqs])
    line = np.flatnonzero(np.isfinite(sigma))  # the sets that want a window count as well
    both = stack.take(np.r_[np.arange(P), line])
    count, _ = count_right_of(both, np.r_[np.zeros(P), sigma[line]])
    right = np.full(P, -1)
    right[line] = count[P:]
    out = {}
    for j, k in enumerate(ks):
        if count[j] >= 0 and (right[j] >= 0 or j not in line):
            out[k] = (int(count[j]), int(right[j]))
    return out


def _start(ks, reqs, stack: Stack) -> dict[int, tuple]:
    """The roots right of the window line of each system, certified; and the right-half-plane
    count (``None`` for a set where they cannot be certified)."""
    stack = _balanced(stack)
    out: dict[int, tuple] = {}
    todo = np.arange(len(ks))
    for n_points in START_POINTS:
        if todo.size == 0:
            break
        sub = stack.take(todo)
        tau_max = sub.max_delay()
        ev = np.linalg.eigvals(generator_matrices(sub, n_points))
        keep = np.isfinite(ev) & (ev.imag >= 0) & (ev.real >= -3 * WINDOW / tau_max[:, None])
        idx = np.nonzero(keep)[0]
        lam, ok = _newton(sub, ev[keep], idx)
        lam, idx = lam[ok], idx[ok]
        good = sub.residual(lam, idx) <= RESIDUAL_TOL
        lam, idx = lam[good], idx[good]
        lam = np.where(np.imag(lam) < 0, lam.conj(), lam)
        sigmas = np.full(todo.size, np.nan)
        roots = []
        for j in range(todo.size):
            mine = lam[idx == j]
            mine = mine[np.argsort(-np.real(mine), kind="stable")]
            if mine.size > 1:
                dup = np.zeros(mine.size, dtype=bool)
                for a in range(1, mine.size):
                    dup[a] = np.any(
                        np.abs(mine[:a][~dup[:a]] - mine[a]) <= MERGE_RTOL * (1 + abs(mine[a]))
                    )
                mine = mine[~dup]
            start = -WINDOW / tau_max[j]
            sigmas[j] = certificate_line(np.r_[np.real(mine), start], tau_max[j], start=start)
            roots.append(mine)
        count, _ = count_right_of(sub, sigmas)
        left = []
        for j, k_local in enumerate(todo):
            mine = roots[j]
            right = mine[mine.real > sigmas[j]]
            known = int(np.sum(np.where(right.imag > 0, 2, 1)))
            if count[j] < 0 or count[j] != known or any(on_axis(r) for r in right):
                left.append(k_local)
                continue
            followed = right if right.size >= 2 else mine[:2]
            rhp = int(np.sum(np.where(right.imag > 0, 2, 1)[right.real > 0]))
            out[ks[int(k_local)]] = (followed, rhp, float(tau_max[j]))
        todo = np.array(left, dtype=int)
    return out
