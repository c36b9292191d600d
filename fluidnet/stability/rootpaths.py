"""Crossings for any parameter, by following the rightmost roots (continuation).

The rightmost roots are computed in full (:func:`~fluidnet.linear.roots.characteristic_roots`)
at *checkpoints* and followed in between, one step of the parameter at a time: each root is
predicted from its last two positions (a secant) and corrected by Newton's method on the system
at the new value. A step is accepted only when, for every followed root, the corrector moved the
real part by less than a quarter of

* the smaller distance of the root to the imaginary axis at the two ends of the step, for a root
  that stays on one side; or
* its real displacement over the step, for a root that changes side.

The real part of each root is then, to the order of the predictor, a monotone function of the
parameter on the step, or one that keeps its sign: a root that crosses the axis and comes back
within one step (the failure of a scan that compares only the spectral abscissa at a few points,
which lets two crossings cancel) makes the step fail, and the step is halved. For a real system
the followed roots are upper half-plane representatives, one per conjugate pair: a root that
Newton's method takes to the lower half-plane (the mirror image of another root) fails the step
too, and where a pair parts on the real axis, the roots to follow are taken afresh from the
certified count there (its representative follows only one of the two real roots). Each
crossing is then located by the Illinois method on the real part of its root.

The path is a stepper (:class:`RootPath`) of the continuation engine
(:func:`fluidnet.continuation.follow`) with its :class:`~fluidnet.continuation.ErrorController`;
:mod:`fluidnet.stability.pathbatch` drives the same stepper for many parameter sets at once.

The count at every checkpoint certifies the result: the number of right-half-plane roots there
must equal the number at the previous checkpoint plus the changes of the crossings found in
between. It is the count of the followed roots when the argument principle confirms that they
are every root right of a line left of them and of the window (:func:`_followed_count`; for a
large system whose followed roots were a full count's ``k`` rightmost, a line just left of
them), else that of a full computation, which asks at once for about as many roots as it needs
(:meth:`_SerialPath._wanted`). When it does not match (a root from further left than the
followed ones crossed), the stretch is redone with twice as many followed roots. Checkpoints
are at the start, after every crossing, every ``CHECK_EVERY`` steps and at the end.

A first switch from a start where the system is unstable is looked for only when the system
does not stay unstable: its rightmost roots are followed first, without checkpoints, and when
one of them is right of the axis in every step to the end the range has no switch
(:func:`raise_if_stays_unstable`).
"""

from __future__ import annotations

import math

import numpy as np

from ..continuation import Attempt, ErrorController, Stop, call, follow, run
from ..continuation.controller import StepSizeError
from ..continuation.scalar import illinois_steps
from ..errors import AnalysisError, FluidnetError
from ..linear.certificate import certificate_line, count_right_of
from ..linear.large import LARGE_STATES
from ..linear.roots import certified_roots
from ..linear.rootset import CharacteristicRoot, Roots
from ..linear.stacked import Stack
from .crossing import (
    FIRST_ROOTS,
    Count,
    Crossing,
    Sweep,
    count_change,
    is_real,
    local_scale,
    newton_roots,
    on_axis,
    relative_residual,
    rhp_count,
    size_unit,
    unit_time_roots,
)

__all__ = ["follow_roots", "RootPath"]

#: A checkpoint (full root computation) every this many accepted steps.
CHECK_EVERY = 12
#: Followed roots: at least the ``k`` rightmost, ``k`` doubled on a failed certificate; at
#: most this many restarts from one checkpoint (from a later one, the count starts again).
MAX_RESTARTS = 3
#: Most roots asked for at a restart (followed: those of them in the window).
MAX_FOLLOWED = 512
#: A full count at a checkpoint asks for this many roots more than the right-half-plane roots
#: expected there (:meth:`_SerialPath._wanted`).
MORE_THAN_EXPECTED = 6
#: Roots are followed when their real part is above ``-WINDOW / tau_max``.
WINDOW = 4.0
#: Relative agreement of two successive estimates of a crossing that ends its search.
RTOL = 1e-13
#: Consecutive rejected steps before the continuation gives up at a point.
MAX_REJECTS = 60
#: Newton iterations after which a start of a step's first try that still wanders is given up
#: (:func:`~.crossing.newton_roots` ``give_up``).
GIVE_UP_AFTER = 12


def _upper(roots, real_system: bool, lin) -> np.ndarray:
    """The roots to follow: upper half-plane (real systems), within the window."""
    vals = np.array([r.value for r in roots], dtype=complex)
    if real_system:
        vals = vals[np.imag(vals) >= 0]
    return vals[_in_window(vals, lin)]


def _in_window(vals: np.ndarray, lin) -> np.ndarray:
    """Roots right of ``-WINDOW / tau_max`` (every root of a system without delays), and the
    two rightmost: roots further left reach the axis only through a checkpoint's window."""
    keep = np.ones(vals.size, dtype=bool)
    if lin.delays and vals.size:
        keep = np.real(vals) >= -WINDOW / lin.max_delay
        keep[np.argsort(-np.real(vals))[:2]] = True
    return keep


class _Path:
    """The followed roots at one parameter value, with their secant velocities."""

    def __init__(self, p: float, lam: np.ndarray, v: np.ndarray):
        self.p, self.lam, self.v = p, lam, v


#: The step of the one-sided differences of the roots' velocities, relative to
#: :func:`~.crossing.local_scale`.
VELOCITY_STEP = 1e-6


def _velocity(sweep: Sweep, p: float, lam: np.ndarray, span: float, sign: float) -> np.ndarray:
    """``d lambda / d p`` by a one-sided difference (one extra system)."""
    if lam.size == 0:
        return lam.copy()
    dp = sign * VELOCITY_STEP * local_scale(p, span)
    new, ok = newton_roots(sweep.lin(p + dp), lam)
    v = (new - lam) / dp
    v[~ok] = 0.0
    return v


class RootPath:
    """The rightmost characteristic roots followed from ``lo`` to ``hi``: a stepper of the
    continuation engine (:func:`fluidnet.continuation.follow`).

    A point of the path is a :class:`_Path` (the parameter, the followed roots, their
    velocities). A step predicts every root by its secant velocity, corrects each by Newton's
    method on ``det Delta`` (a ``("newton", p, guesses)`` request, answered with ``(roots,
    converged)``) and is judged by :func:`_judge`; the step length is set by an
    :class:`~fluidnet.continuation.ErrorController` from the predictor's error on the real
    parts. Every root that changes side in an accepted step is located by the Illinois method
    on its real part (requests again).

    What certifies the path -- where the right-half-plane roots are counted, and what is done
    when a count disagrees -- is left to the subclasses: :class:`_SerialPath` (full root
    computations, :func:`follow_roots`) and the batched path of
    :mod:`fluidnet.stability.pathbatch` (argument-principle counts of many paths at once).
    """

    real_system = True
    #: The step-size controller's tolerance is that of the next step, of the same length, when
    #: the roots move on at the same speed (:func:`_ahead`), not that of the step just taken:
    #: a root nearing the axis then shortens the next step before it is rejected.
    look_ahead = False

    def __init__(self, lo: float, hi: float, first_switch: bool):
        self.lo, self.hi, self.span = lo, hi, hi - lo
        self.first_switch = first_switch
        self.crossings: list[Crossing] = []
        self.count = 0
        self.steps = 0
        #: True while the corrector of a step's first try runs (see :meth:`attempt`)
        self.first_try = False
        #: the length of the last step's first try
        self.tried = 0.0
        #: the ends of the accepted steps, in order
        self.visited: list[float] = []

    def controller(self) -> ErrorController:
        """The path's step-size controller: the step times ``0.8 sqrt(tol / err)`` within
        ``[0.5, 2]`` after an accepted step (``tol`` a quarter of each root's distance to the
        axis, or with :attr:`look_ahead` what the next step's test allows), halved after a
        rejected one (times 0.7 for a root on the axis)."""
        return _PathController(self.span)

    # -- what the subclasses decide
    def keep(self, new: np.ndarray, q: float) -> np.ndarray:  # pragma: no cover - abstract
        """Which of the roots ``new`` at ``q`` are followed further."""
        raise NotImplementedError

    def restart_at(self, q: float):  # pragma: no cover - abstract
        """A fresh path at ``q`` (roots certified there) when a root is lost, or ``None``."""
        raise NotImplementedError

    def checkpoint(self, path: _Path, located: list, q: float):  # pragma: no cover - abstract
        """After an accepted step: the path to go on with, or a :class:`Stop`."""
        raise NotImplementedError

    def lost(self, t: float, guess: complex) -> Exception:  # pragma: no cover - abstract
        """The exception for a crossing root Newton's method loses at ``t``."""
        raise NotImplementedError

    def finish(self, path: _Path):  # pragma: no cover - abstract
        """The result when the path reaches ``hi`` without a checkpoint there."""
        raise NotImplementedError

    def unit(self, q: float) -> float:
        """The size floor of the system at ``q`` (:func:`~.crossing.size_unit`); 1 by default."""
        return 1.0

    # -- the stepper
    def attempt(self, path: _Path, h: float, rejects: int):
        if path.p >= self.hi:
            return Stop(self.finish(path))
        q = path.p + h
        if q >= self.hi - 1e-9 * self.span:
            q = self.hi
        h = q - path.p
        # The first try of a step fails alike whether a root's corrector does not converge,
        # converges onto another root or far from its prediction (a shorter step follows): a
        # start that still wanders after GIVE_UP_AFTER iterations may be given up there
        # (after a rejection, which of these it is decides what is done next).
        self.first_try = rejects == 0
        if rejects == 0:
            self.tried = h
        new, ok = yield ("newton", q, path.lam + path.v * h)
        self.first_try = False
        unit = self.unit(q)
        verdict = _judge(path, new, ok, h, unit, real_system=self.real_system)
        if verdict is not None and verdict[0] == "axis" and q == self.hi:
            new, verdict = _axis_at_end(
                path, new, ok, h, unit, local_scale(q, self.span), self.real_system
            )
        if verdict is not None and verdict[0] in ("newton", "collide", "mirror") and rejects >= 1:
            # a root that Newton loses while it moves away from the axis on the left (a chain
            # root leaving for -infinity as a gain vanishes: the second real root of
            # x' = b x(t - 1) as b -> 0-) is no longer followed: it cannot cross in this step,
            # and the next checkpoint's full count catches any root that does. A pair's
            # representative only when Newton's method lost it for good -- no convergence, or
            # a landing further from its prediction than ten of its steps: one lost near its
            # prediction met a real root there (a pair that forms near it, or parts on the
            # axis: a PI controller's pair, dropped so, was the one that crossed next), and
            # the roots are taken afresh from the certified count below. (A real root lost
            # near its prediction may be one of a double root, a ring's symmetric flows.)
            gone = _lost(path, new, ok, h, unit, self.real_system)
            pred = path.lam + path.v * h
            with np.errstate(invalid="ignore"):
                far_off = ~ok | ~(
                    np.abs(new - pred) <= 10 * np.abs(path.v) * h + 1e-6 * np.abs(pred)
                )
            pair = _off_axis(path.lam, unit)
            leaving = (np.real(path.lam) < 0) & (np.real(path.v) < 0) & (far_off | ~pair)
            if gone.any() and not gone.all() and np.all(leaving[gone]):
                keep = ~gone
                return Attempt(ok=False, h=h, restart=_Path(path.p, path.lam[keep], path.v[keep]))
            # a root that Newton loses (two roots meeting off the axis, a root leaving for
            # -infinity): start afresh from the certified roots at q, if the count allows it
            lost = ~ok | _collided(new, unit) | (self.real_system & _mirrored(new, unit))
            far = np.abs(np.real(path.lam)) > 10 * h * np.abs(path.v) + 1e-6 * np.abs(path.lam)
            same_side = (np.real(path.lam) > 0) == (np.real(new) > 0)
            if np.all(far[lost]) and np.all(same_side[~lost]):
                fresh = yield from call(self.restart_at(q))
                if fresh is not None:
                    # the fresh path goes on with the step first tried here, not the halved
                    # one: each restart halving it, the restarts of a 30-flow ring's real
                    # roots meeting in pairs crept up to the first meeting (36 counts, 40 s)
                    return Attempt(ok=False, h=max(h, self.tried), restart=fresh)
        if verdict is not None:
            return Attempt(ok=False, h=h, reason=verdict[0], data={"verdict": verdict, "p": path.p})
        split = np.flatnonzero(_split(path, new, unit) & self.real_system)
        if split.size:
            # a pair met on the real axis and parted as two real roots: its representative
            # follows one of them, and the other, followed by nobody, may meet a third and
            # cross as a new pair (a PI controller's critical delay: every restart from the
            # last checkpoint lost it again, whatever the number of roots followed, and the
            # range was not certified); the roots to follow are taken from the certified
            # roots at q
            fresh = yield from call(self.restart_at(q))
            if fresh is None:  # (a crossing in the same step: the step is halved)
                data = {"verdict": ("split", int(split[0])), "p": path.p}
                return Attempt(ok=False, h=h, reason="split", data=data)
            return Attempt(ok=False, h=h, restart=fresh)
        err = np.abs(np.real(new) - (np.real(path.lam) + np.real(path.v) * h))
        reach = _ahead(np.real(path.lam), np.real(new)) if self.look_ahead else np.real(new)
        tol = 0.25 * np.maximum(np.abs(reach), 1e-12 * unit)
        with np.errstate(divide="ignore"):
            ratio = np.min(tol / np.maximum(err, 1e-300)) if err.size else np.inf
        return Attempt(ok=True, point=(q, new), h=h, error_ratio=float(ratio))

    def accepted(self, path: _Path, attempt: Attempt, h_next: float):
        q, new = attempt.point
        self.visited.append(q)
        # every root that changed side in the step, located and put in order (two crossings
        # however close are two events, each with its own count change)
        located = []
        for i in np.flatnonzero((np.real(path.lam) > 0) != (new.real > 0)):
            located.append((yield from self._locate(path, new, q, int(i))))
        located.sort(key=lambda c: c.value)
        out = []
        for c in located:
            before = self.count
            self.count += c.change
            c = Crossing(
                value=c.value,
                omega=c.omega,
                change=c.change,
                count_before=before,
                count_after=self.count,
                root=c.root,
            )
            self.crossings.append(c)
            out.append(c)
        keep = self.keep(new, q)
        moved = _Path(q, new[keep], ((new - path.lam) / attempt.h)[keep])
        self.steps += 1
        return (yield from call(self.checkpoint(moved, out, q)))

    def _locate(self, path: _Path, new: np.ndarray, q: float, i: int):
        """The crossing of root ``i`` in the accepted step ``[path.p, q]``: the Illinois method
        on its real part, the root at each point by Newton's method from the linear
        interpolation of the nearest ones computed so far."""
        a, b = path.p, q
        la, lb = complex(path.lam[i]), complex(new[i])
        memo: dict[float, complex] = {a: la, b: lb}

        def guess_at(t: float) -> complex:
            ts = sorted(memo)
            j = int(np.searchsorted(ts, t))
            t0, t1 = ts[max(j - 1, 0)], ts[min(j, len(ts) - 1)]
            if t1 == t0:
                return memo[t0]
            return memo[t0] + (memo[t1] - memo[t0]) * (t - t0) / (t1 - t0)

        def root_at(t: float):
            guess = guess_at(t)
            r, ok = yield ("newton", t, np.array([guess]))
            if not ok[0]:
                raise self.lost(t, guess)
            memo[t] = complex(r[0])
            return memo[t]

        if abs(lb.real) == np.finfo(float).tiny:
            # placed by _axis_at_end: the root is on the axis at the end of the range itself
            return Crossing(
                value=float(b),
                omega=abs(lb.imag),
                change=count_change(lb, lb.real - la.real, self.real_system, self.unit(b)),
                count_before=0,
                count_after=0,
                root=complex(0.0, lb.imag),
            )
        # the absolute floor ends the search of a crossing at a parameter value of 0 (a gain
        # that vanishes there) before the estimates underflow
        atol = 1e-15 * local_scale(0.5 * (a + b), self.span)
        search = illinois_steps(a, b, la.real, lb.real, RTOL, atol)
        try:
            t = next(search)
            while True:
                t = search.send((yield from root_at(t)).real)
        except StopIteration as stop:
            p_star = stop.value
        root = memo[p_star] if p_star in memo else (yield from root_at(p_star))
        return Crossing(
            value=float(p_star),
            omega=abs(root.imag),
            change=count_change(root, lb.real - la.real, self.real_system, self.unit(p_star)),
            count_before=0,
            count_after=0,
            root=root,
        )


def _ahead(re0: np.ndarray, re1: np.ndarray) -> np.ndarray:
    """What the next step's test allows each root's predictor to miss by, times 4, if that
    step is as long as the last and the real parts move on at the same speed: the smaller
    distance to the axis at its ends, or its real displacement when the root crosses in it."""
    re2 = 2.0 * re1 - re0
    cross = (re1 > 0) != (re2 > 0)
    return np.where(cross, np.abs(re2 - re1), np.minimum(np.abs(re1), np.abs(re2)))


class _PathController(ErrorController):
    """:class:`~fluidnet.continuation.ErrorController` of a root path, whose smallest step is
    relative to the parameter's local scale (:func:`~.crossing.local_scale`) where the step
    failed: a range of many decades (a delay from 0.1 to 1e12) is followed in steps relative
    to the value reached, not to the range."""

    def __init__(self, span: float):
        super().__init__(0.0, span / 4, cuts={"axis": 0.7}, max_rejects=MAX_REJECTS)
        self.span = span

    def adapt(self, h: float, attempt: Attempt) -> tuple[bool, float]:
        if not attempt.ok and "p" in attempt.data:
            p = attempt.data["p"]
            if h <= 1e-13 * max(abs(p), local_scale(p, self.span)):
                self.rejects += 1
                raise StepSizeError(attempt, h, f"the step failed at its smallest length {h:.3g}")
        return super().adapt(h, attempt)


class _OnSweep(RootPath):
    """A path of one :class:`~.crossing.Sweep` (``self.sweep``): its requests answered by
    Newton's method on the swept system, its size unit the system's."""

    sweep: Sweep

    def answer(self, request):
        """Newton's method on the swept system (the one kind of request of a serial path)."""
        _, p, guesses = request
        give_up = GIVE_UP_AFTER if self.first_try else None
        return newton_roots(self.sweep.lin(p), guesses, give_up=give_up)

    def unit(self, q):
        return size_unit(self.sweep.lin(q))


class _SerialPath(_OnSweep):
    """One path, certified by full root computations at its checkpoints."""

    look_ahead = True

    def __init__(self, sweep: Sweep, lo: float, hi: float, start: Count, k, first_switch: bool):
        super().__init__(lo, hi, first_switch)
        self.sweep, self.k = sweep, k
        self.real_system = is_real(sweep.lin(lo))
        self.checks = [start]
        self.confirmed: list[Crossing] = []  # crossings before the last checkpoint
        self.last = start
        self.count = start.count  # the count implied by the last checkpoint and crossings since

    def start(self) -> _Path:
        lam = _upper(self.last.roots, self.real_system, self.sweep.lin(self.lo))
        return _Path(self.lo, lam, _velocity(self.sweep, self.lo, lam, self.span, +1.0))

    def keep(self, new, q):
        return _in_window(new, self.sweep.lin(q))

    def _reseed(self, check: Count, q: float, sign: float) -> _Path:
        self.checks.append(check)
        self.confirmed = list(self.crossings)
        self.last = check
        lam = _upper(check.roots, self.real_system, self.sweep.lin(q))
        return _Path(q, lam, _velocity(self.sweep, q, lam, self.span, sign))

    def restart_at(self, q):
        check = self.sweep.count(q, self._wanted())
        if check.count != self.count:
            return None
        return self._reseed(check, q, 1.0 if q < self.hi else -1.0)

    def checkpoint(self, path, located, q):
        if not (located or self.steps % CHECK_EVERY == 0 or q == self.hi):
            return path
        switch = any(c.is_switch for c in self.crossings[len(self.confirmed) :])
        last_one = self.first_switch and switch
        if q == self.hi:  # a root may lie within AXIS_TOL of the axis there
            check = self.sweep.count_edge(q, self.span, end=True, k=self._wanted())
        else:
            # a closed form of the roots, where the system has one (a factor part of
            # fluidnet.stability.factoredpaths), else the followed roots' count
            check = self.sweep.closed_count(q, self._wanted())
            if check is None:
                near = not last_one and self._window_unknown()
                check = _followed_count(
                    self.sweep, q, path.lam, self.real_system, last_one, near=near
                )
            if check is None:  # the roots there are not all followed: computed in full
                check = self.sweep.count(q, self._wanted(), rhp_only=last_one)
        if check.count != self.count:
            return Stop(("failed", self.confirmed, self.checks, self.last, check.count))
        if last_one or q == self.hi:
            self.checks.append(check)
            return Stop(("ok", self.crossings, self.checks))
        return self._reseed(check, q, 1.0)

    def _wanted(self) -> int | None:
        """The rightmost roots a full count here asks for first: the restarts' ``k``, and
        where at least :data:`~.crossing.FIRST_ROOTS` right-half-plane roots are expected (the
        last count and the crossings since: the first roots asked for would all be unstable),
        the number that :meth:`~.crossing.Sweep.count` would reach by doubling on the way to
        :data:`MORE_THAN_EXPECTED` more than expected.

        The count doubles the roots asked for until the leftmost is stable, each time a new
        computation: where tens of roots are unstable, asking for 6 first cost four or five
        computations of a 40-state system's rectangles instead of one. Asking for just
        ``MORE_THAN_EXPECTED`` more (20 roots for 14 expected on the 20-flow ring, not 24)
        followed too few, and a root that none of them was crossed: the path restarted.
        (With fewer expected, the count asks for what it always did.)"""
        if self.count < FIRST_ROOTS:
            return self.k
        return max(self.k or 0, _doubled_to(self.count + MORE_THAN_EXPECTED))

    def _window_unknown(self) -> bool:
        """Whether the followed roots of a large system (the rectangles' ``k`` rightmost,
        :data:`~fluidnet.linear.large.LARGE_STATES` states or more) came from a count whose
        certificate line lies right of the window (``-WINDOW / tau_max``): the roots between
        them are not known, and a count from the followed roots on a line left of the window
        would fail (its argument principle cost 10 to 55 ms a checkpoint on a 20-flow ring, to
        find 42 to 156 roots there against 5 to 24 followed). Their count is then made on a
        line just left of them (``near`` in :func:`_followed_count`), as the full count's
        certificate was: 3 to 4 ms where it fails. Smaller systems, whose full computation
        reaches the window more often, count on a line left of the window."""
        lin = self.sweep.lin(self.last.value)
        if lin.n < LARGE_STATES or not lin.delays:
            return False
        return bool(self.last.roots.certificate > -WINDOW / lin.max_delay)

    def finish(self, path):
        return "ok", self.crossings, self.checks

    def failed(self, path, error):
        raise AnalysisError(_stuck_message(self.sweep, path, error.attempt.data["verdict"]))

    def lost(self, t, guess):
        return AnalysisError(
            f"the root near {guess:.6g} could not be followed at {self.sweep.name}={t:.12g}"
        )


def _doubled_to(n: int) -> int:
    """The first of ``FIRST_ROOTS`` (6), 12, 24, ... (the roots :meth:`~.crossing.Sweep.count`
    asks for as it doubles) that is at least ``n``."""
    k = FIRST_ROOTS
    while k < n:
        k *= 2
    return k


def _followed_count(
    sweep: Sweep,
    q: float,
    lam: np.ndarray,
    real_system: bool,
    rhp_only: bool = False,
    *,
    near: bool = False,
) -> Count | None:
    """The count at ``q`` from the followed roots ``lam`` (converged at ``q``), when the
    argument principle confirms that they are every root right of a line ``Re s = sigma``;
    ``None`` otherwise (the count is then computed in full).

    The line is left of all of them and of the window (``-WINDOW / tau_max``): the roots
    right of it are then exactly the followed ones, so the window's roots and the two
    rightmost (when at least two are followed) are among them -- the roots :func:`_upper`
    takes from a full computation there to go on with -- and the right-half-plane count is
    theirs. With ``rhp_only`` (the last checkpoint, where only the count is needed) the line
    is just left of the imaginary axis, and the count that of the followed roots right of it.
    With ``near`` (followed roots that were the ``k`` rightmost of a count whose line lay right
    of the window) the line is just left of the leftmost followed root: the roots right of it
    are then exactly the followed ones, the rightmost as many as followed, as a full count
    asking for that many would give (where a root from further left has overtaken one of them,
    the count fails, and the full computation is made).
    The line is placed, and the count made, as for a full computation's certificate
    (:func:`~fluidnet.linear.certificate.certificate_line`,
    :func:`~fluidnet.linear.certificate.count_right_of`). Systems without delays and slow
    systems (:func:`~.crossing.size_unit` not 1) are left to the full computation.
    """
    lin = sweep.lin(q)
    if not lin.delays or lam.size < (1 if rhp_only else 2) or size_unit(lin) != 1.0:
        return None
    if not np.all(np.isfinite(lam)) or (real_system and np.any(np.imag(lam) < 0)):
        return None
    tau = lin.max_delay
    re = np.real(lam)
    if rhp_only:
        sigma = certificate_line(re, tau, start=0.0)
    elif near:
        sigma = certificate_line(re, tau, start=float(np.min(re)))
        if not np.all(re > sigma):
            return None
    else:
        window = -WINDOW / tau
        sigma = certificate_line(np.r_[re, window], tau, start=min(window, float(np.min(re))))
        if not np.all(re > sigma):
            return None
    if not sigma < 0.0:
        return None
    right = lam[re > sigma]
    weight = np.where(np.imag(right) > 0, 2, 1) if real_system else np.ones(right.size, dtype=int)
    counted, _ = count_right_of(Stack.from_systems([lin]), np.array([sigma]))
    if int(counted[0]) != int(weight.sum()):
        return None
    sweep.n_counts += 1
    vals = right[np.argsort(-np.real(right), kind="stable")]
    if real_system:
        vals = np.concatenate([vals, np.conj(vals[np.imag(vals) > 0])])
        vals = vals[np.argsort(-np.real(vals), kind="stable")]
    res = relative_residual(lin, vals)
    roots = Roots(
        [
            CharacteristicRoot(value=complex(v), residual=float(r))
            for v, r in zip(vals, res, strict=True)
        ],
        certified=True,
        certificate=float(sigma),
    )
    unit = size_unit(lin)
    rhp = int(sum(1 for v in vals if v.real > 0 and not on_axis(complex(v), unit)))
    return Count(float(q), rhp, roots)


def _follow(
    sweep: Sweep,
    lo: float,
    hi: float,
    start: Count,
    k,
    first_switch: bool,
    visited: list[float] | None = None,
):
    """One continuation from the checkpoint ``start``: ``("ok", crossings, checks)``, or on a
    failed certificate ``("failed", crossings up to the last good checkpoint, checks, it,
    the count that did not match)``.
    ``visited`` receives the ends of the accepted steps."""
    stepper = _SerialPath(sweep, lo, hi, start, k, first_switch)
    if visited is not None:
        stepper.visited = visited
    path = stepper.start()
    h = _first_step(path, hi - lo)
    return run(follow(stepper, path, stepper.controller(), h), stepper.answer)


def _first_step(path: _Path, span: float) -> float:
    h = span / 8
    for lam, v in zip(path.lam, path.v, strict=True):
        speed = abs(v.real)
        if speed > 0:
            h = min(h, 0.5 * max(abs(lam.real), 1e-6 * abs(lam)) / speed)
    return max(h, 1e-6 * local_scale(path.p, span))


def follow_roots(
    sweep: Sweep,
    lo: float,
    hi: float,
    *,
    first_switch: bool,
    start: Count | None = None,
    visited: list[float] | None = None,
) -> tuple[list[Crossing], list[Count]]:
    """Crossings in ``(lo, hi]`` in increasing order, and the checkpoint counts.

    With ``first_switch`` the continuation stops at the first crossing that changes stability
    (after certifying it at the next checkpoint). ``start``: the count at ``lo``
    (:meth:`~.crossing.Sweep.count_edge`) when the caller has it already. ``visited``, a list,
    receives the parameter values at the ends of the accepted steps (of every continuation,
    when a failed certificate makes one restart).

    Raises
    ------
    AnalysisError
        When a root cannot be followed (it stays on the imaginary axis, collides with another on
        it, or the system jumps) or the counts cannot be reconciled.
    """
    k = None
    a = lo
    if start is None:
        try:
            start = sweep.count_edge(lo, hi - lo)
        except AnalysisError as exc:
            if not first_switch:
                raise
            uncounted = exc
        else:
            uncounted = None
        if uncounted is not None:
            # tens of unstable roots that cannot all be counted (a 30-flow ring's count at
            # lo gave up after 8 s): the rightmost few may still show the range unstable
            raise_if_stays_unstable(sweep, lo, hi, _rightmost_count(sweep, lo), False)
            raise uncounted
    assert start is not None
    if first_switch and start.count:
        raise_if_stays_unstable(sweep, lo, hi, start)
    done: list[Crossing] = []
    done_checks: list[Count] = []
    stalled = 0
    while True:
        res = _follow(sweep, a, hi, start, k, first_switch, visited)
        if res[0] == "ok":
            return done + res[1], done_checks + res[2]
        # the count at a checkpoint does not match: a root followed by nobody crossed; redo
        # from the last good checkpoint with twice as many followed roots. Restarts from the
        # same checkpoint are limited (MAX_RESTARTS); one further on has made progress (as the
        # gain grows, tens of roots cross one after another: a 30-state part of a network
        # needed 12, 24, 48 and then 96 roots from ever later checkpoints)
        _, confirmed, checks, last, found = res
        done += confirmed
        done_checks += checks[:-1]
        stalled = stalled + 1 if last.value == a else 1
        if stalled > MAX_RESTARTS or (k or 0) >= MAX_FOLLOWED:
            break
        a = last.value
        # twice as many, and enough for the roots found unstable where the count failed (the
        # ring with five delays: 8 there, where 2 were expected; 12 roots followed from the
        # last checkpoint failed again, and only 24 did not), that up to MAX_FOLLOWED
        enough = min(_doubled_to(found + MORE_THAN_EXPECTED), MAX_FOLLOWED)
        k = max(2 * max(len(last.roots), k or FIRST_ROOTS), enough)
        start = sweep.count_edge(a, hi - a, k=k)
    raise AnalysisError(
        f"the crossings of {sweep.name} in [{lo:g}, {hi:g}] could not be certified: the number of "
        f"right-half-plane roots at a checkpoint after {sweep.name}={last.value:.12g} "
        f"({last.count} there) does not match the crossings found, even following {k} roots; "
        f"split the interval at {last.value:.12g} (the crossings below it are certified)"
    )


#: Right-half-plane roots followed to show that a system unstable at the start of a range
#: stays unstable (:func:`raise_if_stays_unstable`).
HELD_ROOTS = 4


class StaysUnstable(AnalysisError):
    """A range without a first stability switch: the system is unstable on all of it
    (:func:`raise_if_stays_unstable`)."""


class _HeldPath(_OnSweep):
    """The right-half-plane roots of a system unstable at ``lo`` followed to ``hi`` while one
    of them stays there (:func:`raise_if_stays_unstable`): no counts, no restarts."""

    look_ahead = True

    def __init__(self, sweep: Sweep, lo: float, hi: float, lam: np.ndarray):
        super().__init__(lo, hi, first_switch=False)
        self.sweep = sweep
        self.real_system = is_real(sweep.lin(lo))
        self.lam0 = lam
        self.previous = lam  # the roots at the start of the step (see accepted)

    def start(self) -> _Path:
        return _Path(self.lo, self.lam0, _velocity(self.sweep, self.lo, self.lam0, self.span, 1.0))

    def keep(self, new, q):
        return np.ones(new.size, dtype=bool)

    def restart_at(self, q):
        return None

    def accepted(self, path, attempt, h_next):
        self.previous = path.lam  # the roots at the start of the step
        return (yield from super().accepted(path, attempt, h_next))

    def checkpoint(self, path, located, q):
        # a root right of the axis at both ends of the step, which it did not cross: the
        # step's test holds its real part away from 0 in between (it misses its secant
        # prediction by less than a quarter of the smaller distance to the axis)
        unit = self.unit(q)
        right0 = np.array([r.real > 0 and not on_axis(r, unit) for r in self.previous])
        right1 = np.array([r.real > 0 and not on_axis(r, unit) for r in path.lam])
        if not np.any(right0 & right1):
            return Stop(None)
        return path

    def finish(self, path):
        return path

    def failed(self, path, error):
        return None

    def lost(self, t, guess):
        return AnalysisError(f"the root near {guess:.6g} was lost at {self.sweep.name}={t:.12g}")


def _rightmost_count(sweep: Sweep, p: float) -> Count | None:
    """The few rightmost roots at ``p``, certified the rightmost (``count``: those of them in
    the right half-plane, not every one there), or ``None``."""
    try:
        roots = certified_roots(sweep.lin(p), 6, solve=unit_time_roots, **sweep.root_options)
    except FluidnetError:
        return None
    if not roots.certified:
        return None
    return Count(float(p), rhp_count(roots, size_unit(sweep.lin(p))), roots)


def raise_if_stays_unstable(
    sweep: Sweep, lo: float, hi: float, start: Count | None, counted: bool = True
) -> None:
    """Raise the :class:`AnalysisError` of a range without a stability switch when the system,
    unstable at ``lo`` (``start``: its count there), is shown unstable on all of ``[lo, hi]``:
    its rightmost roots (up to :data:`HELD_ROOTS` of the right half-plane, from the certified
    count at ``lo``) are followed to ``hi``, and in every step one of them stays right of the
    axis. Nothing is counted on the way: how many roots are unstable does not matter for
    whether there is a first switch, and a count of a large network with tens of unstable
    roots is the costliest there is (a 100-state network's failed after 40 s). Returns
    without a verdict when the followed roots all leave the right half-plane, a step
    fails, or the equilibria continued along the range left the branch ranked first at
    ``hi`` (the caller then follows and counts every root, as without this test). Without
    ``counted``, ``start`` holds only the rightmost roots at ``lo``, not its full count."""
    if start is None:
        return
    lin = sweep.lin(lo)
    real = is_real(lin)
    unit = size_unit(lin)
    vals = np.array([r.value for r in start.roots], dtype=complex)
    if real:
        vals = vals[np.imag(vals) >= 0]
    right = np.array([v.real > 0 and not on_axis(v, unit) for v in vals], dtype=bool)
    lam = vals[right]
    lam = lam[np.argsort(-np.real(lam), kind="stable")][:HELD_ROOTS]
    if not lam.size or not hi > lo:
        return
    stepper = _HeldPath(sweep, lo, hi, lam)
    try:
        path = stepper.start()
        end = run(
            follow(stepper, path, stepper.controller(), _first_step(path, hi - lo)),
            stepper.answer,
        )
    except FluidnetError:  # a root lost, a system not found: left to the full path
        return
    if end is None or end.p != hi or not sweep.same_branch(hi):
        return
    top = end.lam[np.argmax(end.lam.real)]
    # (a part of a factored system: its roots are the system's, its count is not)
    count = (
        f"{start.count} right-half-plane roots at {lo:g}, counted in full; "
        if sweep.whole_system and counted
        else ""
    )
    held = (
        "a root of the right half-plane stays right of the axis all the way"
        if lam.size == 1
        else f"of {lam.size} roots of the right half-plane one stays right of the axis in every "
        "step"
    )
    raise StaysUnstable(
        f"no stability switch of {sweep.name} in [{lo:g}, {hi:g}] (no crossing of the "
        f"imaginary axis changes stability): the system is unstable on the whole interval "
        f"({count}followed from {lo:g} to {hi:g}, {held}; the rightmost {lam[0]:.6g} at "
        f"{lo:g}, {top:.6g} at {hi:g}). To find one, look outside the interval, or change "
        "another parameter"
    )


def _axis_at_end(
    path: _Path,
    new: np.ndarray,
    ok: np.ndarray,
    h: float,
    unit: float,
    local: float,
    real_system: bool = False,
):
    """The last step, onto ``hi``, with a root within ``AXIS_TOL`` of the axis there: the range
    ends within about 1e-7 of a crossing. The root is on the side of its real part or, when
    its crossing is at ``hi`` itself (to ``1e-12`` of the parameter's scale), on the side it
    goes to (the crossing is one of the range), as :meth:`~.crossing.Sweep.count_edge`
    counts it. Returns the roots so placed and the verdict on the step without the axis
    test (``("axis", i)`` for a root that does not leave the axis)."""
    new = new.copy()
    for i in np.flatnonzero([on_axis(lam, unit) for lam in new]):
        speed = (new[i].real - path.lam[i].real) / h
        if not abs(speed) * local > 1e-6 * max(unit, abs(new[i])):
            return new, ("axis", int(i))
        if abs(new[i].real / speed) <= 1e-12 * local:
            new[i] = complex(math.copysign(np.finfo(float).tiny, speed), new[i].imag)
    return new, _judge(path, new, ok, h, unit, axis=False, real_system=real_system)


def _lost(
    path: _Path, new: np.ndarray, ok: np.ndarray, h: float, unit: float, real_system: bool = False
) -> np.ndarray:
    """The followed roots Newton's method lost in a step: those that did not converge, those
    of a real system that landed in the lower half-plane (:func:`_mirrored`), and of roots
    that converged to one root, all but the one that landed nearest its prediction."""
    lost = ~ok | (real_system & _mirrored(new, unit))
    same = _collided(new, unit) & ok
    if same.any():
        pred = path.lam + path.v * h
        miss = np.abs(new - pred) / (unit + np.abs(pred))
        idx = np.flatnonzero(same)
        for i in idx:
            for j in idx:
                if j != i and abs(new[i] - new[j]) <= 1e-7 * (unit + abs(new[i])):
                    if (miss[j], j) < (miss[i], i):
                        lost[i] = True
    return lost


def _collided(new: np.ndarray, unit: float = 1.0) -> np.ndarray:
    out = np.zeros(new.size, dtype=bool)
    for i in range(new.size):
        for j in range(i):
            if abs(new[i] - new[j]) <= 1e-7 * (unit + abs(new[i])):
                out[i] = out[j] = True
    return out


def _axis_tol(lam: np.ndarray, unit: float) -> np.ndarray:
    """How far from the real axis a root still counts as on it: ``1e-6 (unit + |lambda|)``
    (Newton's method resolves a double real root to about 1e-8)."""
    return 1e-6 * (unit + np.abs(lam))


def _off_axis(lam: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """Upper half-plane roots beyond :func:`_axis_tol`: a real system's pair representatives."""
    return np.imag(lam) > _axis_tol(lam, unit)


def _mirrored(new: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """Roots in the lower half-plane beyond rounding (``Im < -1e-6 (unit + |lambda|)``).

    The roots followed for a real system are upper half-plane representatives, one per
    conjugate pair, and a change counts for the pair (:func:`~.crossing.count_change`). A
    root's path reaches the lower half-plane only through the real axis, where it meets its
    own mirror image (a double real root, which Newton's method resolves to about 1e-8): one
    found further down is the mirror image of another root, onto which Newton's method jumped
    from a long step. Followed on, it would stand for a pair already followed (its crossing
    counted twice) or for one that is not, in place of its own root: a 3-route network's
    critical gain came out so at 2.486, a crossing counted twice making up for an unfollowed
    pair that had crossed at 2.21."""
    return np.imag(new) < -_axis_tol(new, unit)


def _split(path: _Path, new: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """A real system's followed roots that were off the real axis and are on it now (to
    ``1e-6 (unit + |lambda|)``, as :func:`_mirrored`): a conjugate pair that met on the axis
    and parted as two real roots, of which the step's representative follows one."""
    return _off_axis(path.lam, unit) & (np.abs(np.imag(new)) <= _axis_tol(new, unit))


def _judge(
    path: _Path,
    new: np.ndarray,
    ok: np.ndarray,
    h: float,
    unit: float = 1.0,
    axis: bool = True,
    real_system: bool = False,
):
    """``None`` when the step is accepted, else ``(reason, index)`` (``unit``: the system's
    :func:`~.crossing.size_unit`; ``axis=False`` accepts roots on the imaginary axis; a
    ``real_system``'s roots must stay in the upper half-plane, :func:`_mirrored`)."""
    if not np.all(ok):
        return ("newton", int(np.flatnonzero(~ok)[0]))
    hit = np.flatnonzero(_collided(new, unit))
    if hit.size:
        return ("collide", int(hit[0]))
    if real_system:
        low = np.flatnonzero(_mirrored(new, unit))
        if low.size:
            return ("mirror", int(low[0]))
    for i, lam in enumerate(new):
        if axis and on_axis(lam, unit):
            return ("axis", i)
    re0, re1 = np.real(path.lam), np.real(new)
    err = np.abs(re1 - (re0 + np.real(path.v) * h))
    cross = (re0 > 0) != (re1 > 0)
    tol = np.where(cross, 0.25 * np.abs(re1 - re0), 0.25 * np.minimum(np.abs(re0), np.abs(re1)))
    bad = np.flatnonzero(err > tol)
    if bad.size:
        return ("curved", int(bad[0]))
    return None


def _stuck_message(sweep: Sweep, path: _Path, verdict) -> str:
    reason, i = verdict
    lam = path.lam[i] if i < path.lam.size else complex("nan")
    what = {
        "newton": "Newton's method does not converge to it (the system changes abruptly?)",
        "collide": "it collides with another root (a multiple root)",
        "mirror": "Newton's method takes it to the mirror image of another root",
        "split": "its pair parts on the real axis in a step where another root crosses",
        "axis": "it stays on the imaginary axis (a root at 0 or j omega for a whole interval?)",
        "curved": "its path bends too fast to follow",
    }[reason]
    unit = size_unit(sweep.lin(path.p))
    if reason == "axis" and abs(np.imag(lam)) <= 1e-9 * (unit + abs(lam)):
        what = (
            "a real root reaches 0 and stays there: the equilibrium is not hyperbolic (a "
            "fold, transcritical or pitchfork point where the equilibrium followed changes "
            "branch, or an integrator: det(A0 + sum A_k) = 0)"
        )
    return (
        f"cannot follow the root {lam:.6g} past {sweep.name}={path.p:.12g}: {what}. The count of "
        "right-half-plane roots is not certified beyond this point; check the system there "
        "(e.g. lin.roots()) or split the interval at this value"
    )
