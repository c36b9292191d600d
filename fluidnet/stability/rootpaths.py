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
which lets two crossings cancel) makes the step fail, and the step is halved. Each crossing is
then located by Brent's method on the real part of its root.

The full computation at every checkpoint certifies the result: the number of right-half-plane
roots there must equal the number at the previous checkpoint plus the changes of the crossings
found in between. When it does not (a root from further left than the followed ones crossed),
the stretch is redone with twice as many followed roots. Checkpoints are at the start, after
every crossing, every ``CHECK_EVERY`` steps and at the end.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import AnalysisError
from .crossing import (
    Count,
    Crossing,
    Sweep,
    count_change,
    is_real,
    local_scale,
    newton_roots,
    on_axis,
    size_unit,
)

__all__ = ["follow_roots"]

#: A checkpoint (full root computation) every this many accepted steps.
CHECK_EVERY = 12
#: Followed roots: at least the ``k`` rightmost, ``k`` doubled on a failed certificate.
MAX_RESTARTS = 3
#: Roots are followed when their real part is above ``-WINDOW / tau_max``.
WINDOW = 4.0
#: Relative agreement of two successive estimates of a crossing that ends its search.
RTOL = 1e-13
#: Consecutive rejected steps before the continuation gives up at a point.
MAX_REJECTS = 60


def _upper(roots, real_system: bool, lin) -> np.ndarray:
    """The roots to follow: upper half-plane (real systems), within the window."""
    vals = np.array([r.value for r in roots], dtype=complex)
    if real_system:
        vals = vals[vals.imag >= 0]
    return vals[_in_window(vals, lin)]


def _in_window(vals: np.ndarray, lin) -> np.ndarray:
    """Roots right of ``-WINDOW / tau_max`` (every root of a system without delays), and the
    two rightmost: roots further left reach the axis only through a checkpoint's window."""
    keep = np.ones(vals.size, dtype=bool)
    if lin.delays and vals.size:
        keep = vals.real >= -WINDOW / lin.max_delay
        keep[np.argsort(-vals.real)[:2]] = True
    return keep


class _Path:
    """The followed roots at one parameter value, with their secant velocities."""

    def __init__(self, p: float, lam: np.ndarray, v: np.ndarray):
        self.p, self.lam, self.v = p, lam, v


def _velocity(sweep: Sweep, p: float, lam: np.ndarray, span: float, sign: float) -> np.ndarray:
    """``d lambda / d p`` by a one-sided difference (one extra system)."""
    if lam.size == 0:
        return lam.copy()
    dp = sign * 1e-6 * local_scale(p, span)
    new, ok = newton_roots(sweep.lin(p + dp), lam)
    v = (new - lam) / dp
    v[~ok] = 0.0
    return v


def follow_roots(
    sweep: Sweep, lo: float, hi: float, *, first_switch: bool
) -> tuple[list[Crossing], list[Count]]:
    """Crossings in ``(lo, hi]`` in increasing order, and the checkpoint counts.

    With ``first_switch`` the continuation stops at the first crossing that changes stability
    (after certifying it at the next checkpoint).

    Raises
    ------
    AnalysisError
        When a root cannot be followed (it stays on the imaginary axis, collides with another on
        it, or the system jumps) or the counts cannot be reconciled.
    """
    k = None
    a = lo
    start = sweep.count_edge(lo, hi - lo)
    done: list[Crossing] = []
    done_checks: list[Count] = []
    for _ in range(MAX_RESTARTS + 1):
        res = _follow(sweep, a, hi, start, k, first_switch)
        if res[0] == "ok":
            return done + res[1], done_checks + res[2]
        # the count at a checkpoint does not match: a root followed by nobody crossed; redo
        # from the last good checkpoint with twice as many followed roots
        _, confirmed, checks, last = res
        done += confirmed
        done_checks += checks[:-1]
        a = last.value
        k = 2 * max(len(last.roots), k or 6)
        start = sweep.count_edge(a, hi - a, k=k)
    raise AnalysisError(
        f"the crossings of {sweep.name} in [{lo:g}, {hi:g}] could not be certified: the number of "
        "right-half-plane roots at a checkpoint does not match the crossings found, even "
        f"following {k} roots; pass root_options={{'max_points': ...}} or split the interval"
    )


def _follow(sweep: Sweep, lo: float, hi: float, start: Count, k, first_switch: bool):
    """One continuation from the checkpoint ``start``: ``("ok", crossings, checks)``, or on a
    failed certificate ``("failed", crossings up to the last good checkpoint, checks, it)``."""
    real_system = is_real(sweep.lin(lo))
    span = hi - lo
    checks = [start]
    crossings: list[Crossing] = []
    confirmed: list[Crossing] = []  # crossings before the last checkpoint
    last = start
    count = start.count  # the count implied by the last checkpoint and the crossings since
    lam = _upper(start.roots, real_system, sweep.lin(lo))
    v = _velocity(sweep, lo, lam, span, +1.0)
    path = _Path(lo, lam, v)
    h = _first_step(path, span)
    steps = rejects = 0
    while path.p < hi:
        q = path.p + h
        if q >= hi - 1e-9 * span:
            q = hi
        h = q - path.p
        new, ok = newton_roots(sweep.lin(q), path.lam + path.v * h)
        unit = size_unit(sweep.lin(q))
        verdict = _judge(path, new, ok, h, unit)
        if verdict is not None and verdict[0] == "axis" and q == hi:
            new, verdict = _axis_at_end(path, new, ok, h, unit, local_scale(hi, span))
        if verdict is not None and verdict[0] in ("newton", "collide") and rejects >= 1:
            # a root that Newton loses (two roots meeting off the axis, a root leaving for
            # -infinity): start afresh from a full computation, if the count allows it
            lost = ~ok | _collided(new, unit)
            far = np.abs(path.lam.real) > 10 * h * np.abs(path.v) + 1e-6 * np.abs(path.lam)
            same_side = (path.lam.real > 0) == (new.real > 0)
            check = sweep.count(q, k) if np.all(far[lost]) and np.all(same_side[~lost]) else None
            if check is not None and check.count == count:
                checks.append(check)
                confirmed = list(crossings)
                last = check
                lam = _upper(check.roots, real_system, sweep.lin(q))
                path = _Path(q, lam, _velocity(sweep, q, lam, span, 1.0 if q < hi else -1.0))
                rejects = 0
                continue
        if verdict is not None:
            rejects += 1
            if rejects > MAX_REJECTS or h <= 1e-13 * max(abs(path.p), local_scale(path.p, span)):
                raise AnalysisError(_stuck_message(sweep, path, verdict))
            h *= 0.5 if verdict[0] != "axis" else 0.7
            continue
        rejects = 0
        found = _locate(sweep, path, new, q, real_system)
        for c in found:
            before = count
            count += c.change
            crossings.append(
                Crossing(
                    value=c.value,
                    omega=c.omega,
                    change=c.change,
                    count_before=before,
                    count_after=count,
                    root=c.root,
                )
            )
        err = np.abs(new.real - (path.lam.real + path.v.real * h))
        h_next = _next_step(h, err, new, span, unit)
        keep = _in_window(new, sweep.lin(q))
        path = _Path(q, new[keep], ((new - path.lam) / h)[keep])
        steps += 1
        switch = any(c.is_switch for c in crossings[len(confirmed) :])
        if found or steps % CHECK_EVERY == 0 or q == hi:
            if q == hi:  # a root may lie within AXIS_TOL of the axis there
                check = sweep.count_edge(q, span, end=True, k=k)
            else:
                check = sweep.count(q, k, rhp_only=first_switch and switch)
            if check.count != count:
                return "failed", confirmed, checks, last
            checks.append(check)
            confirmed = list(crossings)
            last = check
            if (first_switch and switch) or q == hi:
                return "ok", crossings, checks
            lam = _upper(check.roots, real_system, sweep.lin(q))
            path = _Path(q, lam, _velocity(sweep, q, lam, span, 1.0))
        h = h_next
    return "ok", crossings, checks


def _axis_at_end(path: _Path, new: np.ndarray, ok: np.ndarray, h: float, unit: float, local):
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
    return new, _judge(path, new, ok, h, unit, axis=False)


def _first_step(path: _Path, span: float) -> float:
    h = span / 8
    for lam, v in zip(path.lam, path.v, strict=True):
        speed = abs(v.real)
        if speed > 0:
            h = min(h, 0.5 * max(abs(lam.real), 1e-6 * abs(lam)) / speed)
    return max(h, 1e-6 * local_scale(path.p, span))


def _next_step(h: float, err: np.ndarray, lam: np.ndarray, span: float, unit: float) -> float:
    tol = 0.25 * np.maximum(np.abs(lam.real), 1e-12 * unit)
    with np.errstate(divide="ignore"):
        ratio = np.min(tol / np.maximum(err, 1e-300)) if err.size else np.inf
    return min(2.0 * h, h * max(0.5, 0.8 * math.sqrt(ratio)), span / 4)


def _collided(new: np.ndarray, unit: float = 1.0) -> np.ndarray:
    out = np.zeros(new.size, dtype=bool)
    for i in range(new.size):
        for j in range(i):
            if abs(new[i] - new[j]) <= 1e-7 * (unit + abs(new[i])):
                out[i] = out[j] = True
    return out


def _judge(
    path: _Path, new: np.ndarray, ok: np.ndarray, h: float, unit: float = 1.0, axis: bool = True
):
    """``None`` when the step is accepted, else ``(reason, index)`` (``unit``: the system's
    :func:`~.crossing.size_unit`; ``axis=False`` accepts roots on the imaginary axis)."""
    if not np.all(ok):
        return ("newton", int(np.flatnonzero(~ok)[0]))
    hit = np.flatnonzero(_collided(new, unit))
    if hit.size:
        return ("collide", int(hit[0]))
    for i, lam in enumerate(new):
        if axis and on_axis(lam, unit):
            return ("axis", i)
    re0, re1 = path.lam.real, new.real
    err = np.abs(re1 - (re0 + path.v.real * h))
    cross = (re0 > 0) != (re1 > 0)
    tol = np.where(cross, 0.25 * np.abs(re1 - re0), 0.25 * np.minimum(np.abs(re0), np.abs(re1)))
    bad = np.flatnonzero(err > tol)
    if bad.size:
        return ("curved", int(bad[0]))
    return None


def _locate(sweep: Sweep, path: _Path, new: np.ndarray, q: float, real_system: bool):
    """The crossings of the accepted step ``[path.p, q]``, in increasing order."""
    out = []
    for i in np.flatnonzero((path.lam.real > 0) != (new.real > 0)):
        a, b = path.p, q
        la, lb = path.lam[i], new[i]

        memo: dict[float, complex] = {a: complex(la), b: complex(lb)}

        def root_at(t, memo=memo):
            # Newton from the nearest root computed so far (linear in t between neighbours)
            ts = sorted(memo)
            j = int(np.searchsorted(ts, t))
            t0, t1 = ts[max(j - 1, 0)], ts[min(j, len(ts) - 1)]
            guess = (
                memo[t0] if t1 == t0 else memo[t0] + (memo[t1] - memo[t0]) * (t - t0) / (t1 - t0)
            )
            r, ok = newton_roots(sweep.lin(t), [guess])
            if not ok[0]:
                raise AnalysisError(
                    f"the root near {guess:.6g} could not be followed at {sweep.name}={t:.12g}"
                )
            memo[t] = complex(r[0])
            return memo[t]

        p_star = _illinois(lambda t: root_at(t).real, a, b, la.real, lb.real)
        root = memo[p_star] if p_star in memo else root_at(p_star)
        change = count_change(root, lb.real - la.real, real_system, size_unit(sweep.lin(p_star)))
        out.append(
            Crossing(
                value=float(p_star),
                omega=abs(root.imag),
                change=change,
                count_before=0,
                count_after=0,
                root=root,
            )
        )
    out.sort(key=lambda c: c.value)
    return out


def _illinois(f, a: float, b: float, fa: float, fb: float) -> float:
    """A zero of ``f`` in ``[a, b]`` (``fa fb < 0``) by the Illinois variant of regula falsi,
    until two iterates agree to ``RTOL`` (the convergence is superlinear: the last one is then
    accurate to rounding); the sign change is kept at every step, so the zero is never lost."""
    side = 0
    eps = RTOL
    previous = math.nan
    for _ in range(100):
        c = b - fb * (b - a) / (fb - fa)
        if not (min(a, b) < c < max(a, b)):
            c = 0.5 * (a + b)
        if abs(b - a) <= eps * max(abs(a), abs(b), 1e-300):
            break
        if abs(c - previous) <= eps * max(abs(c), 1e-300):
            return c  # the secant iterates agree to a few ulps
        previous = c
        fc = f(c)
        if fc == 0.0:
            return c
        if (fc > 0) == (fb > 0):
            b, fb = c, fc
            if side == -1:
                fa *= 0.5
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb *= 0.5
            side = 1
    return a if abs(fa) < abs(fb) else b


def _stuck_message(sweep: Sweep, path: _Path, verdict) -> str:
    reason, i = verdict
    lam = path.lam[i] if i < path.lam.size else complex("nan")
    what = {
        "newton": "Newton's method does not converge to it (the system changes abruptly?)",
        "collide": "it collides with another root (a multiple root)",
        "axis": "it stays on the imaginary axis (a root at 0 or j omega for a whole interval?)",
        "curved": "its path bends too fast to follow",
    }[reason]
    unit = size_unit(sweep.lin(path.p))
    if reason == "axis" and abs(lam.imag) <= 1e-9 * (unit + abs(lam)):
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
