"""Step and impulse responses of linear delay systems by the method of steps.

From rest (``X = 0`` before ``t = 0``), the system ``X' = A_0 X + sum_k A_k X(t - tau_k) + b u``
is integrated over consecutive segments no longer than the smallest delay: on each one the
delayed values ``X(t - tau_k)`` lie in segments already solved, so the segment is an ordinary
differential equation with a known forcing, solved by :func:`scipy.integrate.solve_ivp`
(DOP853, an explicit Runge-Kutta method of order 8, with its dense output of order 7) to a
relative tolerance ``rtol`` (default ``1e-12``). The delays are exact: nothing is approximated
but the integration of each segment, whose error the tolerance bounds.

The input's step (or impulse) at ``t = 0`` makes the solution non-smooth at ``0`` and, one
derivative smoother each time, at every sum of delays ``n_1 tau_1 + n_2 tau_2 + ...``: those
points (up to :data:`LEVELS` delays in a sum) are segment ends, so no step of the integrator
straddles one.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable

import numpy as np

from ..errors import AnalysisError, OptionError
from .realization import DelaySystem

__all__ = ["breakpoints", "response_values", "solve_states"]

#: Sums of up to this many delays are segment ends (the solution's derivative of this order
#: and beyond is continuous elsewhere).
LEVELS = 10
#: At most this many breakpoints (fewer levels are kept for systems with many delays).
MAX_BREAKPOINTS = 5000
#: Relative tolerance below which two times are one (a breakpoint, a jump of the input).
TIME_RTOL = 1e-12
#: At most this many segments (each no longer than the smallest delay): about a minute of
#: CPU at 1-2 ms a segment.
MAX_SEGMENTS = 50_000


def _merge(points: np.ndarray) -> np.ndarray:
    """Sorted points, those within ``TIME_RTOL`` (relative) of the previous one dropped."""
    points = np.sort(points)
    if points.size == 0:
        return points
    keep = np.ones(points.size, dtype=bool)
    keep[1:] = np.diff(points) > TIME_RTOL * np.maximum(1.0, np.abs(points[1:]))
    return points[keep]


def breakpoints(delays: tuple[float, ...], t_end: float) -> np.ndarray:
    """The sums of at most :data:`LEVELS` delays in ``[0, t_end)``, sorted (``0`` included).

    Parameters
    ----------
    delays : tuple of float
        The system's delays (positive).
    t_end : float
        Where the integration ends.

    Returns
    -------
    numpy.ndarray
        The breakpoints; fewer levels when more than :data:`MAX_BREAKPOINTS` would be found.
    """
    pts = np.zeros(1)
    frontier = np.zeros(1)
    for _ in range(LEVELS):
        if not delays or frontier.size == 0:
            break
        new = (frontier[:, None] + np.asarray(delays)[None, :]).ravel()
        new = _merge(new[new < t_end])
        merged = _merge(np.concatenate([pts, new]))
        if merged.size > MAX_BREAKPOINTS:
            break
        frontier, pts = new, merged
    return pts


class _History:
    """The solution so far: step intervals and their dense-output interpolants."""

    def __init__(self, n: int, start: np.ndarray) -> None:
        self.n = n
        self.start = start  # X(0), the right limit at the input's step or impulse
        self.ts: list[float] = []
        self.interpolants: list[Callable[[float], np.ndarray]] = []
        self.end = 0.0

    def add(self, sol) -> None:
        ts = list(sol.ts)
        for i, f in enumerate(sol.interpolants):
            self.ts.append(ts[i])
            self.interpolants.append(f)
        self.end = float(ts[-1])

    def at(self, s: float) -> np.ndarray:
        """``X(s)`` for ``0 <= s <= end`` (scalar; clamped into that range)."""
        if not self.ts:
            return self.start
        s = min(max(s, 0.0), self.end)
        i = max(bisect.bisect_right(self.ts, s) - 1, 0)
        return self.interpolants[i](s)

    def values(self, s: np.ndarray) -> np.ndarray:
        """``X(s)`` for an array of times, ``0`` where ``s < 0``; shape ``s.shape + (n,)``."""
        out = np.zeros(s.shape + (self.n,))
        inside = s >= -TIME_RTOL * np.maximum(1.0, np.abs(s))
        if not np.any(inside):
            return out
        si = np.clip(s[inside], 0.0, self.end)
        if not self.ts:
            out[inside] = self.start
            return out
        idx = np.clip(np.searchsorted(np.asarray(self.ts), si, side="right") - 1, 0, None)
        vals = np.empty((si.size, self.n))
        for i in np.unique(idx):
            sel = idx == i
            vals[sel] = np.asarray(self.interpolants[i](si[sel])).T
        out[inside] = vals
        return out


def solve_states(
    system: DelaySystem, t_end: float, *, impulse: bool = False, rtol: float = 1e-12
) -> _History:
    """The state ``X`` on ``[0, t_end]`` after a unit step (or impulse) of the input at 0.

    Parameters
    ----------
    system : DelaySystem
        With states (``system.dynamics`` not None).
    t_end : float
        End of the integration (s).
    impulse : bool, default False
        A unit impulse (``X(0) = b``, no forcing after it) instead of a unit step.
    rtol : float, default 1e-12
        Relative tolerance of each segment's integration.

    Returns
    -------
    _History
        Its :meth:`_History.values` gives ``X`` at any times.

    Raises
    ------
    AnalysisError
        When the state overflows (an unstable system over a long time).
    OptionError
        When ``t_end`` is more than :data:`MAX_SEGMENTS` smallest delays.
    """
    from scipy.integrate import solve_ivp

    lin = system.dynamics
    assert lin is not None
    b = np.asarray(system.b, dtype=float)
    hist = _History(lin.n, b.copy() if impulse else np.zeros(lin.n))
    if t_end <= 0:
        return hist
    delays, mats = lin.delays, lin.A
    tau_min = min(delays) if delays else math.inf
    if delays and t_end / tau_min > MAX_SEGMENTS:
        raise OptionError(
            f"the response up to t = {t_end:g} s needs {t_end / tau_min:.3g} steps of the "
            f"smallest delay {tau_min:g} s (at most {MAX_SEGMENTS} are taken): ask for times up "
            f"to {MAX_SEGMENTS * tau_min:g} s"
        )
    ends = list(breakpoints(delays, t_end)[1:]) + [t_end]
    forcing = np.zeros(lin.n) if impulse else b
    x = hist.start.copy()
    scale = max(float(np.max(np.abs(b))), 1e-300)
    a = 0.0
    first_step = None
    for end in ends:
        # segments no longer than the smallest delay, so delayed values are already known
        pieces = max(1, math.ceil((end - a) / tau_min - 1e-9)) if delays else 1
        cuts = np.linspace(a, end, pieces + 1)
        cuts[-1] = end
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            lo, hi = float(lo), float(hi)
            # each delayed argument lies either in the history before 0 (zero) or in the
            # solution: decided once per segment, so X's jump at 0 (impulse) is seen right
            live = [
                (tau, Ak)
                for tau, Ak in zip(delays, mats, strict=True)
                if lo - tau >= -TIME_RTOL * max(1.0, tau)
            ]

            def rhs(t: float, y: np.ndarray, live=live) -> np.ndarray:
                out = lin.A0 @ y + forcing
                for tau, Ak in live:
                    out = out + Ak @ hist.at(t - tau)
                return out

            sol = solve_ivp(
                rhs,
                (lo, hi),
                x,
                method="DOP853",
                rtol=rtol,
                atol=1e-3 * rtol * scale,
                dense_output=True,
                max_step=hi - lo,
                first_step=min(first_step, hi - lo) if first_step else None,
            )
            if sol.status != 0 or not np.all(np.isfinite(sol.y)):
                raise AnalysisError(
                    f"the response could not be integrated past t = {lo:g} s "
                    f"({sol.message.strip() or 'the state overflowed'}): the system grows "
                    "too fast; ask for a shorter time span"
                )
            hist.add(sol.sol)
            x = sol.y[:, -1]
            scale = max(scale, float(np.max(np.abs(sol.y))))
            if sol.t.size > 1:
                first_step = float(sol.t[-1] - sol.t[-2])
        a = end
    return hist


def response_values(
    system: DelaySystem, t: np.ndarray, *, impulse: bool = False, rtol: float = 1e-12
) -> tuple[np.ndarray, tuple[tuple[float, float], ...]]:
    """The output at times ``t`` after a unit step (or impulse) of the input at 0, from rest.

    Parameters
    ----------
    system : DelaySystem
    t : numpy.ndarray
        Times (s), any order; before 0 the output is 0.
    impulse : bool, default False
        The impulse response instead of the step response.
    rtol : float, default 1e-12
        Relative tolerance of the integration.

    Returns
    -------
    y : numpy.ndarray
        The output, shape of ``t``; right-continuous (at a jump, the value after it). For an
        impulse, the regular part only.
    diracs : tuple of (float, float)
        For an impulse: ``(time, weight)`` of each Dirac impulse of the output (a direct
        feedthrough); empty for a step.

    Raises
    ------
    OptionError
        For an invalid ``rtol`` or non-finite times.
    """
    t = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t)):
        raise OptionError("t must hold finite times (s)")
    if not (isinstance(rtol, (int, float)) and 1e-13 <= rtol <= 1e-3):
        raise OptionError(f"rtol must be a number in [1e-13, 1e-3], got {rtol!r}")
    y = np.zeros(t.shape)
    for rho, d in system.feedthrough:
        if not impulse:
            y += d * (t - rho >= -TIME_RTOL * max(1.0, rho))
    diracs = tuple((rho, d) for rho, d in system.feedthrough if impulse and d != 0)
    if system.dynamics is not None and system.outputs:
        t_end = float(np.max(t)) - min(s for s, _ in system.outputs) if t.size else 0.0
        hist = solve_states(system, t_end, impulse=impulse, rtol=float(rtol))
        for sigma, c in system.outputs:
            y += hist.values(t - sigma) @ c
    return y, diracs
