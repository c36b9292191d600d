"""Folds of cycles continued in two parameters: where a stable and an unstable cycle meet.

Past a subcritical Hopf point (or a Bautin point) a stable large cycle coexists with the
stable equilibrium between the Hopf curve and a curve of folds of cycles: that curve bounds
the region of bistability. A fold of cycles in the parameter ``x`` is a periodic orbit where
the collocation Jacobian in the profile and the period (with the phase condition) is singular.
The defining system (the "standard extended system" of DDE-BIFTOOL's POfold and AUTO) is

``F(Y, T, x, y) = 0``, ``A(Y, T, x, y) v = 0``, ``c . v = 1``,

``F`` the collocation equations and phase condition, ``A = [F_Y F_T]``, ``v`` its null vector:
``2 (L m n + 1) + 1`` equations in ``2 (L m n + 1) + 2`` unknowns. Newton's method needs the
derivative of ``A v`` in every unknown, a second derivative of the collocation equations; by
the symmetry of second derivatives it is ``d/de J(z + e v)`` at ``e = 0``, two extra
assemblies by central differences (not one per unknown). The curve is followed by the
pseudo-arclength stepper of the continuation engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..continuation import IterationController, Stop, follow, run
from ..continuation.arclength import ArclengthStepper, CorrectionFailed, CurvePoint
from ..errors import AnalysisError, OptionError, ParameterError
from ._system import orbit_system
from .collocation import assemble
from .newton import OrbitState, phase_row
from .orbit import PeriodicOrbit, _state_scales, finish

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from .continuation import FoldOfCycles

__all__ = ["CycleFoldCurve", "continue_cycle_folds"]


@dataclass(frozen=True, kw_only=True)
class CycleFoldCurve:
    """A curve of folds of cycles in the plane of two parameters.

    Attributes
    ----------
    x_name, y_name : str
    x, y : ndarray
        The curve's points.
    periods : ndarray
    orbits : list of PeriodicOrbit
        The orbit at the fold, at each point.
    stop_reason : str
    fold : FoldOfCycles or None
        The fold of cycles the curve started from.
    """

    x_name: str
    y_name: str
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    periods: np.ndarray = field(repr=False)
    orbits: list = field(repr=False)
    stop_reason: str
    fold: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.x)

    def __repr__(self) -> str:
        return (
            f"CycleFoldCurve({self.x_name}-{self.y_name}: {len(self)} points, {self.x_name} in "
            f"[{self.x.min():.6g}, {self.x.max():.6g}], {self.y_name} in "
            f"[{self.y.min():.6g}, {self.y.max():.6g}]; stopped: {self.stop_reason})"
        )

    def to_xarray(self) -> xr.Dataset:
        """The curve as an :class:`xarray.Dataset` along ``point``."""
        import xarray as xr

        return xr.Dataset(
            {
                self.x_name: ("point", self.x),
                self.y_name: ("point", self.y),
                "period": ("point", self.periods),
            },
            coords={"point": np.arange(len(self))},
            attrs={"stop_reason": self.stop_reason},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The curve in the ``(x, y)`` plane (dash-dotted: the edge of bistability).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.
        **kwargs
            Passed to ``ax.plot`` (defaults ``ls="-."``, ``color="C2"``, ``label="fold of
            cycles"``).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        kwargs.setdefault("ls", "-.")
        kwargs.setdefault("color", "C2")
        ax.plot(self.x, self.y, label=kwargs.pop("label", "fold of cycles"), **kwargs)
        ax.set(xlabel=self.x_name, ylabel=self.y_name)
        return ax


class _FoldSystem:
    """``[F; A v; c.v - 1]`` in scaled unknowns ``(Y, T, x, y, vY, vT)``."""

    def __init__(self, model, mesh, ix: int, iy: int, st: OrbitState, v: np.ndarray, opts):
        self.model = model
        self.system = orbit_system(model)
        self.mesh = mesh
        self.ix, self.iy = ix, iy
        self.shape = st.Y.shape
        self.ny = st.Y.size
        self.P = st.P.copy()
        self.ref = st
        self.vref = v / np.linalg.norm(v)
        sc_state = np.tile(_state_scales(st.Y), self.shape[0]) * math.sqrt(self.shape[0])
        self.scales = np.concatenate(
            [
                sc_state,
                [abs(st.T), max(abs(st.P[ix]), 1e-12), max(abs(st.P[iy]), 1e-12)],
                np.ones(self.ny + 1),
            ]
        )
        self.opts = opts
        self.last_state = None

    def split(self, u: np.ndarray):
        w = u * self.scales
        ny = self.ny
        Y = w[:ny].reshape(self.shape)
        T = float(w[ny])
        P = self.P.copy()
        P[self.ix], P[self.iy] = w[ny + 1], w[ny + 2]
        v = w[ny + 3 :]
        return Y, T, P, v

    def _blocks(self, Y, T, P, jac: bool = True):
        asm = assemble(
            self.system, self.mesh, Y, T, P, jac=jac, param=(self.ix, self.iy) if jac else None
        )
        row, c = phase_row(self.mesh, self.ref, self.system.n)
        return asm, row, c

    def residual(self, u: np.ndarray) -> np.ndarray:
        Y, T, P, v = self.split(u)
        asm, row, c = self._blocks(Y, T, P)
        ny = self.ny
        assert asm.J is not None and asm.JT is not None  # assembled with jac=True
        Av = np.concatenate([asm.J @ v[:ny] + asm.JT * v[ny], [row @ v[:ny]]])
        return np.concatenate([asm.R, [row @ Y.reshape(-1) - c], Av, [self.vref @ v - 1.0]])

    def jacobian(self, u: np.ndarray) -> np.ndarray:
        Y, T, P, v = self.split(u)
        ny = self.ny
        asm, row, _ = self._blocks(Y, T, P)
        m = asm.R.size  # = ny
        size = 2 * (ny + 1) + 1
        Jm = np.zeros((size, u.size))
        # F rows
        Jm[:m, :ny] = asm.J
        Jm[:m, ny] = asm.JT
        Jm[:m, ny + 1 : ny + 3] = asm.JP
        Jm[m, :ny] = row
        # A v rows: d/dz of (J v) by d/de J(z + e v), and A itself for v
        eps = 1e-7 * max(1.0, float(np.max(np.abs(Y)))) / max(float(np.max(np.abs(v[:ny]))), 1e-300)
        Yp, Ym = Y + eps * v[:ny].reshape(Y.shape), Y - eps * v[:ny].reshape(Y.shape)
        Tp, Tm = T + eps * v[ny], T - eps * v[ny]
        ap = assemble(self.system, self.mesh, Yp, Tp, P, param=(self.ix, self.iy))
        am = assemble(self.system, self.mesh, Ym, Tm, P, param=(self.ix, self.iy))
        r0 = m + 1
        assert ap.J is not None and am.J is not None and ap.JT is not None and am.JT is not None
        assert ap.JP is not None and am.JP is not None  # assembled with jac=True
        Jm[r0 : r0 + m, :ny] = (ap.J - am.J) / (2 * eps)
        Jm[r0 : r0 + m, ny] = (ap.JT - am.JT) / (2 * eps)
        Jm[r0 : r0 + m, ny + 1 : ny + 3] = (ap.JP - am.JP) / (2 * eps)
        Jm[r0 : r0 + m, ny + 3 : ny + 3 + ny] = asm.J
        Jm[r0 : r0 + m, ny + 3 + ny] = asm.JT
        Jm[r0 + m, ny + 3 : ny + 3 + ny] = row
        Jm[-1, ny + 3 :] = self.vref
        return Jm * self.scales

    def tangent(self, J, u, prev, sign: float = 1.0) -> np.ndarray:
        if prev is None:
            t = np.linalg.svd(J)[2][-1]
            return t if t[self.ny + 2] * sign >= 0 else -t
        rhs = np.zeros(J.shape[0] + 1)
        rhs[-1] = 1.0
        t = np.linalg.solve(np.vstack([J, prev]), rhs)
        t /= np.linalg.norm(t)
        return t if t @ prev >= 0 else -t

    def admissible(self, point, u) -> str:
        Y, T, P, _ = self.split(u)
        try:
            self.orbit = finish(
                self.model, self.mesh, OrbitState(Y, T, P), 0, floquet=self.opts["floquet"],
                smooth=self.opts["check_smooth"],
            )  # fmt: skip
        except AnalysisError as exc:
            return str(exc)
        return ""


class _FoldTracer(ArclengthStepper):
    def __init__(self, fs: _FoldSystem, n_points: int, ranges):
        super().__init__(fs, chord=False, tol=1e-9, loose_tol=None, maxiter=12, cond_limit=None)
        self.fs = fs
        self.n_points = n_points
        self.ranges = ranges
        self.orbits: list[PeriodicOrbit] = []

    def accepted(self, point, attempt, h_next):
        fs = self.fs
        u = attempt.point
        orbit = fs.orbit
        Y, T, P, v = fs.split(u)
        for k, rng, name in zip((fs.ix, fs.iy), self.ranges, ("x", "y"), strict=True):
            if rng is not None and not rng[0] <= P[k] <= rng[1]:
                self.stop_reason = f"{name} left [{rng[0]:g}, {rng[1]:g}]"
                return Stop(None)
        self.orbits.append(orbit)
        fs.ref = OrbitState(Y, T, P)
        fs.vref = v / np.linalg.norm(v)
        new = self.make_point(u, point)
        if len(self.orbits) >= self.n_points:
            self.stop_reason = f"{self.n_points} points computed"
            return Stop(None)
        return new

    def failed(self, point, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        self.stop_reason = f"the step failed at its smallest length ({why})"
        return None

    def finish(self, point):
        self.stop_reason = self.stop_reason or f"{len(self.orbits)} points computed"
        return None


def continue_cycle_folds(
    fold: FoldOfCycles,
    y: str,
    *,
    n_points: int = 30,
    step: float = 0.02,
    max_step: float = 0.1,
    direction: int = 1,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    floquet: bool = False,
    check_smooth: bool = True,
) -> CycleFoldCurve:
    """Continue a fold of cycles in the plane of its parameter and a second one ``y``.

    Parameters
    ----------
    fold : FoldOfCycles
        A fold found on a branch (``branch.special``).
    y : str
        The second parameter.
    n_points : int
        Points to compute.
    step, max_step : float
        Initial and largest step, in scaled units (parameters relative to their size).
    direction : {1, -1}
        Start towards increasing or decreasing ``y``.
    x_range, y_range : (float, float), optional
        Stop where the curve leaves them.
    floquet : bool
        Compute the Floquet multipliers of the fold orbits.
    check_smooth : bool
        Stop at an orbit touching a non-smooth surface.

    Returns
    -------
    CycleFoldCurve

    Raises
    ------
    OptionError, ParameterError
        For bad options or names.
    AnalysisError
        When the fold cannot be corrected onto its defining system.

    See Also
    --------
    continue_orbits : the branch of cycles in one parameter
    continue_hopf : the Hopf curve it starts next to
    """
    from .continuation import FoldOfCycles

    if not isinstance(fold, FoldOfCycles):
        raise OptionError(f"fold must be a FoldOfCycles (from branch.special), got {type(fold)}")
    orbit = fold.orbit
    model = orbit.model
    xn = fold.x_name
    if y == xn:
        raise OptionError(f"the second parameter must differ from {xn!r}")
    if y not in model.param_names:
        raise ParameterError(
            f"unknown parameter {y!r} (parameters: {', '.join(model.param_names)})"
        )
    if direction not in (1, -1):
        raise OptionError(f"direction = {direction!r} must be 1 or -1")
    names = list(model.param_names)
    ix, iy = names.index(xn), names.index(y)
    P = np.array([orbit.params[k] for k in names], dtype=float)
    st = OrbitState(orbit.nodes.copy(), orbit.period, P)
    # the null vector of [F_Y F_T; phase] at the fold
    system = orbit_system(model)
    asm = assemble(system, orbit.mesh, st.Y, st.T, P)
    row, _ = phase_row(orbit.mesh, st, system.n)
    A = np.zeros((asm.R.size + 1, st.Y.size + 1))
    A[:-1, :-1], A[:-1, -1], A[-1, :-1] = asm.J, asm.JT, row
    v = np.linalg.svd(A)[2][-1]
    opts = {"floquet": floquet, "check_smooth": check_smooth}
    fs = _FoldSystem(model, orbit.mesh, ix, iy, st, v, opts)
    u0 = np.concatenate([st.Y.reshape(-1), [st.T, P[ix], P[iy]], v]) / fs.scales
    tracer = _FoldTracer(
        fs, int(n_points), (_range(x_range, "x_range"), _range(y_range, "y_range"))
    )
    # correct the start on its defining system (the fold was located on the branch)
    try:
        e = np.zeros(u0.size)
        e[fs.ny + 2] = 1.0  # y fixed
        u0, _ = tracer.correct(u0, CurvePoint(u0, e), e, u0[fs.ny + 2])
    except CorrectionFailed as exc:
        raise AnalysisError(
            f"the fold of cycles does not solve its defining system: {exc}"
        ) from exc
    why = fs.admissible(None, u0)
    if why:
        raise AnalysisError(f"the fold orbit: {why}")
    tracer.orbits.append(fs.orbit)
    Y, T, P0, vv = fs.split(u0)
    fs.ref = OrbitState(Y, T, P0)
    fs.vref = vv / np.linalg.norm(vv)
    start = tracer.make_point(u0)
    if start.tangent[fs.ny + 2] * direction < 0:
        start.tangent = -start.tangent
    control = IterationController(step / 256, max_step, fast=3, slow=6, grow=1.5)
    run(follow(tracer, start, control, step, max_steps=10 * n_points))
    orbits = tracer.orbits
    return CycleFoldCurve(
        x_name=xn,
        y_name=y,
        x=np.array([o.params[xn] for o in orbits]),
        y=np.array([o.params[y] for o in orbits]),
        periods=np.array([o.period for o in orbits]),
        orbits=orbits,
        stop_reason=tracer.stop_reason,
        fold=fold,
    )


def _range(r, name):
    if r is None:
        return None
    lo, hi = (float(v) for v in r)
    if not lo < hi:
        raise OptionError(f"{name} = {r!r}: need low < high")
    return lo, hi
