"""Pseudo-arclength continuation of periodic-orbit branches in one parameter.

From a Hopf point (the first two orbits from the normal form's prediction) or from a computed
orbit, each step predicts along the branch tangent ``t`` (the null vector of the collocation
Jacobian augmented by the phase condition, in scaled variables) and corrects with Newton under
``<u - u_prev, t> = ds``, so the branch is followed through folds of cycles. The step adapts
to Newton's convergence. A fold is flagged where the parameter component of the tangent
changes sign; a stability change where the count of Floquet multipliers outside the unit
circle changes, with the kind of crossing (+1: fold of cycles, -1: period doubling, complex:
torus).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError, OptionError
from ..options import count_option, number_option
from ._system import orbit_system
from .collocation import Mesh, assemble
from .hopf import HopfPoint
from .newton import OrbitState, correct, phase_row
from .orbit import PeriodicOrbit, _state_scales, finish, periodic_orbit
from .smoothness import NonSmoothError

__all__ = ["OrbitBranch", "continue_orbits"]


@dataclass(frozen=True, kw_only=True)
class OrbitBranch:
    """A branch of periodic orbits in one parameter.

    Attributes
    ----------
    name : str
        The continuation parameter.
    orbits : list of PeriodicOrbit
        The orbits, in continuation order.
    values : ndarray
        Parameter value of each orbit.
    periods : ndarray
    amplitude : dict of str to ndarray
        Peak-to-peak amplitude of each state along the branch.
    stable : ndarray of bool or None
        Orbital stability from the Floquet multipliers (``None`` without them).
    folds : list of (int, float)
        ``(index, value)`` of the orbit at each fold of cycles (turning point in the parameter).
    stability_changes : list of (int, str)
        ``(index, kind)``: between orbits ``index - 1`` and ``index`` a multiplier leaves or
        enters the unit circle through ``"+1"`` (fold), ``"-1"`` (period doubling) or
        ``"complex"`` (torus).
    stop_reason : str
        Why the continuation stopped (count reached, bound reached, a non-smooth surface
        touched, Newton failed at the smallest step).
    hopf : HopfPoint or None
        The Hopf point the branch started from.
    """

    name: str
    orbits: list = field(repr=False)
    values: np.ndarray = field(repr=False)
    periods: np.ndarray = field(repr=False)
    amplitude: dict = field(repr=False)
    stable: np.ndarray | None = field(repr=False)
    folds: list
    stability_changes: list
    stop_reason: str
    hopf: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.orbits)

    def __repr__(self) -> str:
        return (
            f"OrbitBranch({self.name}: {len(self)} orbits, {self.name} in "
            f"[{self.values.min():.6g}, {self.values.max():.6g}], period "
            f"[{self.periods.min():.6g}, {self.periods.max():.6g}], folds {len(self.folds)}; "
            f"stopped: {self.stop_reason})"
        )

    def plot(self, ax=None, *, state: str | None = None, y: str = "amplitude", **kwargs):
        """Bifurcation diagram: amplitude (or period) against the parameter.

        Stable orbits are drawn solid, unstable dashed; folds are marked with ``x`` and the
        Hopf point (zero amplitude) with a dot.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        state : str, optional
            Whose peak-to-peak amplitude (default: the state with the largest relative one).
        y : {"amplitude", "period"}
        **kwargs
            Passed to ``ax.plot``.
        """
        import matplotlib.pyplot as plt

        if y not in ("amplitude", "period"):
            raise OptionError(f"y = {y!r} must be 'amplitude' or 'period'")
        if ax is None:
            _, ax = plt.subplots()
        if state is None:
            state = max(self.amplitude, key=lambda k: self.amplitude[k].max())
        if state not in self.amplitude:
            raise OptionError(f"{state!r} is not a state (states: {', '.join(self.amplitude)})")
        yy = self.amplitude[state] if y == "amplitude" else self.periods
        xs = self.values
        stable = self.stable if self.stable is not None else np.ones(len(xs), bool)
        color = kwargs.pop("color", "C0")
        for i in range(len(xs) - 1):
            ls = "-" if stable[i] and stable[i + 1] else "--"
            ax.plot(xs[i : i + 2], yy[i : i + 2], ls=ls, color=color, **kwargs)
        for i, _ in self.folds:
            ax.plot(xs[i], yy[i], "x", color="k")
        if self.hopf is not None and y == "amplitude":
            ax.plot([self.hopf.value], [0.0], "o", color="k")
        label = f"{state} peak-to-peak" if y == "amplitude" else "period"
        ax.set(xlabel=self.name, ylabel=label)
        return ax


def _tangent(system, mesh, st: OrbitState, free: int, ref: OrbitState, scales, prev=None):
    """Unit tangent (scaled variables) of the branch at ``st``, oriented along ``prev``."""
    n = system.n
    asm = assemble(system, mesh, st.Y, st.T, st.P)
    from .newton import _param_column

    nr, size = asm.R.size, st.Y.size + 2
    A = np.zeros((nr + 2, size))
    A[:nr, : st.Y.size] = asm.J
    A[:nr, st.Y.size] = asm.JT
    A[:nr, -1] = _param_column(system, mesh, st, free)
    row, _ = phase_row(mesh, ref, n)
    A[nr, : row.size] = row
    A = A * scales  # derivatives w.r.t. scaled variables
    if prev is None:
        A[nr + 1, -1] = 1.0  # a tangent with increasing parameter
    else:
        A[nr + 1] = prev
    rhs = np.zeros(nr + 2)
    rhs[-1] = 1.0
    t = np.linalg.solve(A, rhs)
    t /= np.linalg.norm(t)
    if prev is not None and t @ prev < 0:
        t = -t
    return t


def _multiplier_kind(before: np.ndarray, after: np.ndarray) -> str:
    """Where a multiplier crossed the unit circle between two orbits."""
    out = np.concatenate([after[np.abs(after) > 1.0], before[np.abs(before) > 1.0]])
    if out.size == 0:
        return "?"
    m = out[np.argmin(np.abs(np.abs(out) - 1.0))]
    if abs(m.imag) > 1e-6 * abs(m):
        return "complex"
    return "+1" if m.real > 0 else "-1"


def _first_orbits(hopf, first_offset, step, intervals, degree, floquet, check_smooth):
    """Two orbits near the Hopf point from the normal form; closer when they are not smooth."""
    off = (first_offset or step / 10.0 * max(abs(hopf.value), 1e-3)) * hopf.orbit_side
    kw = dict(intervals=intervals, degree=degree, floquet=floquet, check_smooth=check_smooth)
    for attempt in range(5):
        try:
            return [
                periodic_orbit(hopf, hopf.value + off, **kw),
                periodic_orbit(hopf, hopf.value + 2 * off, **kw),
            ]
        except NonSmoothError:
            if attempt == 4 or first_offset is not None:
                raise
            off /= 10.0
    raise AssertionError  # pragma: no cover


def continue_orbits(
    start,
    name: str | None = None,
    *,
    n_orbits: int = 50,
    step: float = 0.02,
    max_step: float = 0.2,
    min_step: float = 1e-5,
    bounds: tuple[float, float] | None = None,
    direction: int = 1,
    first_offset: float | None = None,
    intervals: int = 40,
    degree: int = 4,
    floquet: bool = True,
    check_smooth: bool = True,
) -> OrbitBranch:
    """Continue a branch of periodic orbits in one parameter (pseudo-arclength).

    Parameters
    ----------
    start : HopfPoint or PeriodicOrbit
        A Hopf point (the branch born there, in its parameter) or an orbit to continue.
    name : str, optional
        The continuation parameter (default: the Hopf point's).
    n_orbits : int
        Number of orbits to compute (the branch stops earlier at a bound or a non-smooth
        surface).
    step, max_step, min_step : float
        Initial, largest and smallest arclength step, in scaled units (the parameter relative
        to its size at the start, each state relative to its largest value, the period
        relative to itself).
    bounds : (float, float), optional
        Stop when the parameter leaves this interval.
    direction : {1, -1}
        For an orbit start: increasing or decreasing parameter first.
    first_offset : float, optional
        For a Hopf start: parameter distance of the first orbit from the Hopf point (default
        ``step / 10`` relative to the parameter).
    intervals, degree : int
        Collocation mesh.
    floquet : bool
        Compute the Floquet multipliers of every orbit (stability along the branch).
    check_smooth : bool
        Stop the branch at the first orbit touching a non-smooth surface (see
        :func:`periodic_orbit`).

    Returns
    -------
    OrbitBranch

    Raises
    ------
    AnalysisError
        When not even the first orbits can be computed.
    NonSmoothError
        When the first orbit already touches a non-smooth surface.

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> a, = (fn.params("a"),)
    >>> wright = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0})
    >>> br = fn.continue_orbits(fn.hopf_point(wright, "a", 1.0, 2.0), n_orbits=10)
    >>> len(br), bool(br.stable.all()), bool(br.values.max() > math.pi / 2)
    (10, True, True)
    """
    n_orbits = count_option("n_orbits", n_orbits, minimum=2, where="continue_orbits")
    step, max_step, min_step = (
        number_option(k, v, positive=True, where="continue_orbits")
        for k, v in (("step", step), ("max_step", max_step), ("min_step", min_step))
    )
    if first_offset is not None:
        first_offset = number_option("first_offset", first_offset, where="continue_orbits")
    if not (0 < min_step <= step <= max_step):
        raise OptionError(
            f"need 0 < min_step <= step <= max_step, got {min_step!r}, {step!r}, {max_step!r}"
        )
    if direction not in (1, -1):
        raise OptionError(f"direction = {direction!r} must be 1 or -1")
    mesh = Mesh(intervals, degree)
    hopf = start if isinstance(start, HopfPoint) else None
    if hopf is not None:
        name = name or hopf.name
        if name != hopf.name:
            raise OptionError(
                f"a branch from the Hopf point in {hopf.name!r} is continued in {hopf.name!r}, "
                f"not {name!r}"
            )
        first = _first_orbits(hopf, first_offset, step, intervals, degree, floquet, check_smooth)
    elif isinstance(start, PeriodicOrbit):
        if name is None:
            raise OptionError("give the continuation parameter name")
        first = [
            periodic_orbit(
                start,
                intervals=intervals,
                degree=degree,
                floquet=floquet,
                check_smooth=check_smooth,
            )
        ]
    else:
        raise OptionError(
            f"start must be a HopfPoint or a PeriodicOrbit, got {type(start).__name__}"
        )
    model = first[0].model
    if name not in model.param_names:
        raise OptionError(
            f"unknown parameter {name!r} (parameters: {', '.join(model.param_names)})"
        )
    free = model.param_names.index(name)
    system = orbit_system(model)
    N = mesh.n_nodes

    def state_of(orb: PeriodicOrbit) -> OrbitState:
        P = np.array([orb.params[k] for k in model.param_names], dtype=float)
        return OrbitState(orb.nodes.copy(), orb.period, P)

    st0 = state_of(first[0])
    eq_scale = np.zeros(system.n)
    if hopf is not None:
        eq_scale = np.abs([hopf.equilibrium[s] for s in model.state_names])
    sscale = np.maximum(_state_scales(st0.Y), eq_scale) * math.sqrt(N)
    scales = np.concatenate([np.tile(sscale, N), [abs(st0.T)], [max(abs(st0.P[free]), 1e-12)]])

    orbits: list[PeriodicOrbit] = list(first)
    states = [state_of(o) for o in orbits]
    if len(states) == 2:
        prev_t = (states[1].vector(free) - states[0].vector(free)) / scales
        prev_t /= np.linalg.norm(prev_t)
    else:
        prev_t = None
    tangents = []
    for st in states:
        t = _tangent(system, mesh, st, free, st, scales, prev_t)
        if prev_t is None and direction < 0:
            t = -t
        tangents.append(t)
        prev_t = t
    ds = step
    stop = f"{n_orbits} orbits computed"
    while len(orbits) < n_orbits:
        cur, t = states[-1], tangents[-1]
        u_prev = cur.vector(free) / scales
        try:
            guess = OrbitState.from_vector((u_prev + ds * t) * scales, cur.Y.shape, cur.P, free)
            new, it = correct(
                system, mesh, guess, cur, free=free, arclength=(u_prev, t, ds), scales=scales
            )
            orb = finish(model, mesh, new, it, floquet=floquet, smooth=check_smooth)
        except NonSmoothError as exc:
            if ds > step / 64:  # approach the surface with smaller steps first
                ds /= 2
                continue
            stop = f"non-smooth: {exc}"
            break
        except AnalysisError as exc:
            if ds / 2 >= min_step:
                ds /= 2
                continue
            stop = f"Newton failed at the smallest step: {exc}"
            break
        p_new = new.P[free]
        if bounds is not None and not (bounds[0] <= p_new <= bounds[1]):
            stop = f"{name} left [{bounds[0]:g}, {bounds[1]:g}]"
            break
        t_new = _tangent(system, mesh, new, free, cur, scales, t)
        orbits.append(orb)
        states.append(new)
        tangents.append(t_new)
        if it <= 3:
            ds = min(ds * 1.5, max_step)
        elif it >= 6:
            ds = max(ds / 1.5, min_step)
    values = np.array([o.params[name] for o in orbits])
    periods = np.array([o.period for o in orbits])
    amp = {s: np.array([o.amplitude[s] for o in orbits]) for s in model.state_names}
    folds = []
    for i in range(1, len(tangents)):
        if np.sign(tangents[i][-1]) != np.sign(tangents[i - 1][-1]):
            pair = values[i - 1 : i + 1]
            j = i - 1 + int(np.argmax(pair) if tangents[i - 1][-1] > 0 else np.argmin(pair))
            folds.append((j, float(values[j])))
    stable = None
    changes = []
    if floquet:
        stable = np.array([o.stable for o in orbits])
        counts = [o.unstable_count for o in orbits]
        for i in range(1, len(orbits)):
            if counts[i] != counts[i - 1]:
                changes.append(
                    (
                        i,
                        _multiplier_kind(
                            orbits[i - 1].nontrivial_multipliers, orbits[i].nontrivial_multipliers
                        ),
                    )
                )
    return OrbitBranch(
        name=name,
        orbits=orbits,
        values=values,
        periods=periods,
        amplitude=amp,
        stable=stable,
        folds=folds,
        stability_changes=changes,
        stop_reason=stop,
        hopf=hopf,
    )
