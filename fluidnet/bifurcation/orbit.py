"""Periodic orbits of a model by collocation: the result object and the one-orbit solver."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError
from ..options import count_option, number_option
from ._system import orbit_system
from .collocation import Mesh, assemble, profile_extrema, profile_values
from .floquet import multipliers as floquet_multipliers
from .newton import OrbitState, correct
from .smoothness import _switches, check_orbit_smooth, nearest_surface

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.axes import Axes

__all__ = ["PeriodicOrbit", "collocated_orbit", "direct_orbit", "finish"]

#: Samples per mesh interval for amplitudes and plots.
_SAMPLES = 24


@dataclass(frozen=True, kw_only=True)
class PeriodicOrbit:
    """A periodic solution of a model, computed by collocation.

    Attributes
    ----------
    model : fluidnet.Model
    params : dict of str to float
        Parameter values of the orbit.
    period : float
        Period ``T`` (s).
    mesh : Mesh
        Collocation mesh (``intervals`` x ``degree``).
    nodes : ndarray, shape (intervals * degree, n_states)
        Profile values at the mesh nodes ``s = i / (intervals degree)`` of the scaled time
        ``s = t / T`` (the node at ``s = 1`` is the first one).
    multipliers : ndarray of complex or None
        Leading Floquet multipliers, by decreasing modulus (``None`` when not computed). One of
        them approximates the trivial multiplier 1.
    defect : float
        Largest ``|x' - f|`` between the collocation points relative to ``max |x'|``: an a
        posteriori measure of the discretization error.
    iterations : int
        Newton iterations of the last correction.
    """

    model: Any = field(repr=False)
    params: dict = field(repr=False)
    period: float
    mesh: Mesh = field(repr=False)
    nodes: np.ndarray = field(repr=False)
    multipliers: np.ndarray | None = field(default=None, repr=False)
    defect: float = float("nan")
    iterations: int = 0

    # ------------------------------------------------------------------ values
    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.model.state_names)

    def __call__(self, t, state: str | None = None) -> np.ndarray:
        """Values at times ``t`` (periodic); one state, or all as ``(len(t), n)``."""
        vals = profile_values(self.mesh, self.nodes, np.asarray(t, dtype=float) / self.period)
        if state is None:
            return vals
        return vals[:, self._index(state)]

    def _index(self, state: str) -> int:
        try:
            return self.state_names.index(state)
        except ValueError:
            raise OptionError(
                f"{state!r} is not a state (states: {', '.join(self.state_names)})"
            ) from None

    def sample(self, n_points: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(t, values)`` over one closed period: ``n_points`` samples from ``t = 0`` to
        ``t = period`` (the last repeats the first).

        Parameters
        ----------
        n_points : int, optional
            Number of output samples (at least 2); default 24 per mesh interval, plus one.

        Returns
        -------
        t : numpy.ndarray
            Times, shape ``(n_points,)``.
        values : numpy.ndarray
            The orbit's states at ``t``, shape ``(n_points, n_states)`` in
            :attr:`state_names` order.

        Raises
        ------
        OptionError
            For ``n_points`` not a whole number of at least 2.
        """
        if n_points is None:
            n_points = _SAMPLES * self.mesh.intervals + 1
        n_points = count_option("n_points", n_points, minimum=2, where="PeriodicOrbit.sample")
        s = np.linspace(0.0, 1.0, n_points)
        return s * self.period, profile_values(self.mesh, self.nodes, s)

    @functools.cached_property
    def _extrema(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return profile_extrema(self.mesh, self.nodes)

    @property
    def maximum(self) -> dict[str, float]:
        """Largest value of each state over the period: the maximum of the orbit's polynomial
        pieces (at a root of their derivative or a mesh point), exact for the computed orbit."""
        return {k: float(self._extrema[0][i]) for i, k in enumerate(self.state_names)}

    @property
    def minimum(self) -> dict[str, float]:
        """Smallest value of each state over the period (see :attr:`maximum`)."""
        return {k: float(self._extrema[1][i]) for i, k in enumerate(self.state_names)}

    @property
    def peak_times(self) -> dict[str, tuple[float, float]]:
        """``(time of the maximum, time of the minimum)`` of each state in ``[0, period)``."""
        hi, lo = self._extrema[2], self._extrema[3]
        T = self.period
        return {k: (float(hi[i] * T), float(lo[i] * T)) for i, k in enumerate(self.state_names)}

    @property
    def amplitude(self) -> dict[str, float]:
        """Peak-to-peak amplitude of each state (as :func:`fluidnet.oscillation` reports)."""
        hi, lo = self.maximum, self.minimum
        return {k: hi[k] - lo[k] for k in self.state_names}

    @property
    def mean(self) -> dict[str, float]:
        """Time average of each state over the period (Gauss quadrature)."""
        s, _, w = self.mesh.collocation_points()
        v = profile_values(self.mesh, self.nodes, s)
        return {k: float(w @ v[:, i]) for i, k in enumerate(self.state_names)}

    # ------------------------------------------------------------------ stability
    @property
    def trivial_multiplier(self) -> complex:
        """The multiplier closest to 1 (exactly 1 for the exact orbit)."""
        mu = self._need_multipliers()
        return complex(mu[np.argmin(np.abs(mu - 1.0))])

    @property
    def multiplier_error(self) -> float:
        """How far the computed trivial multiplier is from 1: the accuracy of the multipliers.

        At a fold of cycles a second multiplier is 1 as well, and the discretization splits
        the double multiplier into ``1 +- d`` with ``d`` of the order of the square root of the
        error; there the mean of the two nearest 1 (accurate to the error itself) is used.
        """
        mu = self._need_multipliers()
        d = np.abs(mu - 1.0)
        one = float(np.min(d))
        if mu.size >= 2:
            a, b = mu[np.argsort(d)[:2]]
            one = min(one, abs(0.5 * (a + b) - 1.0))
        return one

    @property
    def certified(self) -> bool:
        """The multipliers are certified: :attr:`multiplier_error` at most ``1e-8``."""
        return self.multiplier_error <= 1e-8

    @property
    def nontrivial_multipliers(self) -> np.ndarray:
        """The multipliers without the trivial one, by decreasing modulus."""
        mu = self._need_multipliers()
        k = int(np.argmin(np.abs(mu - 1.0)))
        return np.delete(mu, k)

    @property
    def stable(self) -> bool:
        """True when every nontrivial multiplier lies inside the unit circle (a verdict only
        as good as the multipliers: see :attr:`certified`)."""
        return bool(np.all(np.abs(self.nontrivial_multipliers) < 1.0))

    @property
    def unstable_count(self) -> int:
        """Number of nontrivial multipliers outside the unit circle."""
        return int(np.sum(np.abs(self.nontrivial_multipliers) > 1.0))

    def _need_multipliers(self) -> np.ndarray:
        """The multipliers, or an AnalysisError when they were not computed."""
        if self.multipliers is None:
            raise AnalysisError("the Floquet multipliers were not computed (floquet=False)")
        return self.multipliers

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        amp = ", ".join(f"{k}: {v:.6g}" for k, v in self.amplitude.items())
        stab = ""
        if self.multipliers is not None and self.certified:
            stab = ", stable" if self.stable else f", unstable ({self.unstable_count})"
        elif self.multipliers is not None:  # no verdict the multipliers cannot back
            off = self.multiplier_error
            stab = f", stability not certified (trivial multiplier off by {off:.2g})"
        return f"PeriodicOrbit(period={self.period:.10g}, peak-to-peak {{{amp}}}{stab})"

    def to_xarray(self, n_points: int | None = None) -> Any:
        """One period of the orbit as an :class:`xarray.Dataset`.

        Parameters
        ----------
        n_points : int, optional
            Output samples over the period (default: as :meth:`sample`).

        Returns
        -------
        xarray.Dataset
            ``x`` along ``t`` (one period, both ends included) and ``state``; ``maximum``,
            ``minimum``, ``amplitude`` and ``mean`` along ``state``; the Floquet
            ``multipliers`` along ``multiplier`` when computed; attributes ``period`` and
            ``defect``.
        """
        import xarray as xr

        t, values = self.sample(n_points)
        states = list(self.state_names)
        data: dict[str, Any] = {
            "x": (("t", "state"), values),
            **{
                k: ("state", [getattr(self, k)[s] for s in states])
                for k in ("maximum", "minimum", "amplitude", "mean")
            },
        }
        if self.multipliers is not None:
            data["multipliers"] = ("multiplier", np.asarray(self.multipliers, dtype=complex))
        return xr.Dataset(
            data,
            coords={"t": t, "state": states},
            attrs={"period": self.period, "defect": self.defect},
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        states: Sequence[str] | None = None,
        periods: float = 1.0,
        **kwargs: Any,
    ) -> Axes:
        """Plot the profile over ``periods`` periods.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        states : sequence of str, optional
            Default: all states.
        periods : float
            How many periods to draw.
        **kwargs
            Passed to ``ax.plot``.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        t = np.linspace(0.0, periods * self.period, int(_SAMPLES * self.mesh.intervals * periods))
        vals = self(t)
        for name in states or self.state_names:
            ax.plot(t, vals[:, self._index(name)], label=name, **kwargs)
        ax.set(xlabel="t", title=f"periodic orbit, T = {self.period:.6g}")
        ax.legend()
        return ax


# ---------------------------------------------------------------------------------- build
def _state_scales(Y: np.ndarray) -> np.ndarray:
    """A positive scale per state for scaled norms: its size, at least 1e-3 of the largest
    state's (a state that is 0 in the initial guess, e.g. one driven only at second order,
    would otherwise have a zero scale)."""
    sc = np.maximum(np.max(np.abs(Y), axis=0), np.ptp(Y, axis=0))
    return np.maximum(sc, max(1e-3 * float(np.max(sc)), 1e-300))


def unknown_scales(Y: np.ndarray, T: float, p: float | None = None) -> np.ndarray:
    st = _state_scales(Y)
    parts = [np.tile(st, Y.shape[0]), [abs(T)]]
    if p is not None:
        parts.append([max(abs(p), 1e-12)])
    return np.concatenate(parts)


def _check_samples(system, mesh: Mesh, st: OrbitState, s_chk: np.ndarray):
    """Current and delayed values ``(X, Z)`` of the orbit ``st`` at the scaled times ``s_chk``."""
    X = profile_values(mesh, st.Y, s_chk)

    def prof(k, tau):
        return profile_values(mesh, st.Y, s_chk - tau / st.T)[:, system.lag_state[k]]

    _, Z = system.lags_at(X, st.P, prof)
    return X, Z


def surface_distance(orbit: PeriodicOrbit) -> tuple[float, str] | None:
    """How close ``orbit`` comes to a surface where its model is not smooth (a projected
    state's 0, a switching surface): ``(relative distance, surface)``, ``None`` for a smooth
    model (:func:`~.smoothness.nearest_surface`)."""
    model = orbit.model
    if not model.nonnegative and _switches(model) is None:
        return None
    system = orbit_system(model)
    P = np.array([orbit.params[n] for n in model.param_names], dtype=float)
    st = OrbitState(orbit.nodes, orbit.period, P)
    mesh = orbit.mesh
    X, Z = _check_samples(system, mesh, st, mesh.check_points())
    asm = assemble(system, mesh, st.Y, st.T, st.P, jac=False)
    return nearest_surface(model, np.vstack([X, asm.X]), np.vstack([Z, asm.Z]), P)


def finish(model, mesh: Mesh, st: OrbitState, iterations: int, *, floquet: bool, smooth: bool):
    """Checks and derived quantities of a corrected orbit state."""
    system = orbit_system(model)
    if st.T <= 0 or not math.isfinite(st.T):
        raise AnalysisError(f"the collocation converged to a non-positive period T = {st.T:g}")
    ptp = np.ptp(st.Y, axis=0)
    scale = np.maximum(np.max(np.abs(st.Y), axis=0), 1e-300)
    if np.all(ptp <= 1e-8 * scale):
        raise AnalysisError(
            "the collocation converged to the equilibrium (a constant profile), not to an "
            "oscillation"
        )
    # sample points between and at collocation points: smoothness and defect
    s_chk = mesh.check_points()
    X, Z = _check_samples(system, mesh, st, s_chk)
    Xd = profile_values(mesh, st.Y, s_chk, derivative=True)
    F = system.f(X.T, Z.T, system.params_columns(st.P, len(s_chk)))
    defect = float(np.max(np.abs(Xd - st.T * F)) / max(np.max(np.abs(Xd)), 1e-300))
    if smooth and (model.nonnegative or _switches(model) is not None):
        asm = assemble(system, mesh, st.Y, st.T, st.P, jac=False)
        times = np.concatenate([s_chk, mesh.collocation_points()[0]]) * st.T
        check_orbit_smooth(model, np.vstack([X, asm.X]), np.vstack([Z, asm.Z]), st.P, times)
    mu = floquet_multipliers(system, mesh, st.Y, st.T, st.P) if floquet else None
    params = dict(zip(model.param_names, (float(v) for v in st.P), strict=True))
    return PeriodicOrbit(
        model=model,
        params=params,
        period=float(st.T),
        mesh=mesh,
        nodes=st.Y.copy(),
        multipliers=mu,
        defect=defect,
        iterations=iterations,
    )


def _from_solution(sol, mesh: Mesh, state: str | None, after: float | None):
    from ..dde import oscillation

    names = list(sol.state_names)
    t_end = float(sol.t_end)
    after = 0.5 * (sol.t0 + t_end) if after is None else float(after)
    if state is None:
        tt = np.linspace(after, t_end, 4000)
        v = np.asarray(sol(tt)).T  # (len(tt), n)
        rel = np.ptp(v, axis=0) / np.maximum(np.max(np.abs(v), axis=0), 1e-300)
        state = str(names[int(np.argmax(rel))])
    osc = oscillation(sol, state, after=after)
    if not osc.sustained:
        raise AnalysisError(
            f"the simulated {state} does not oscillate for good after t = {after:g} "
            f"(status {osc.status!r}): no periodic orbit to start from"
        )
    T = float(osc.period)
    t_start = float(osc.peak_times[-1]) - T
    s = mesh.nodes[:-1]
    Y = np.asarray(sol(t_start + s * T), dtype=float).T  # (nodes, n)
    _check_simulated_cycle(sol, t_start, T, mesh)
    return Y, T


def _check_simulated_cycle(sol, t_start: float, T: float, mesh: Mesh) -> None:
    """The simulated cycle itself must avoid the non-smooth surfaces (it is the model's)."""
    model = sol.model
    system = orbit_system(model)
    values = model.resolve_params(sol.params)
    P = np.array([values[k] for k in model.param_names], dtype=float)
    tt = t_start + np.linspace(0.0, T, 8 * mesh.n_nodes, endpoint=False)
    X = np.asarray(sol(tt), dtype=float).T
    lo = float(sol.history_start)

    def prof(k, tau):
        return np.asarray(sol(np.maximum(tt - tau, lo), model.state_names[system.lag_state[k]]))

    _, Z = system.lags_at(X, P, prof)
    check_orbit_smooth(model, X, Z, P, tt - t_start)


def direct_orbit(hp, value: float, params: dict, **kw) -> PeriodicOrbit:
    """The orbit at ``value`` by Newton's method from the normal form's prediction."""
    model = hp.model
    mesh = Mesh(kw["intervals"], kw["degree"])
    values = model.resolve_params({**hp.params, **params, hp.name: value})
    Y, T = hp.guess(value, mesh.nodes[:-1])
    system = orbit_system(model)
    P = np.array([values[k] for k in model.param_names], dtype=float)
    guess = OrbitState(np.asarray(Y, dtype=float), float(T), P)
    scales = unknown_scales(guess.Y, guess.T)
    st, it = correct(system, mesh, guess, guess, scales=scales, tol=kw["tol"])
    return finish(model, mesh, st, it, floquet=kw["floquet"], smooth=kw["check_smooth"])


def collocated_orbit(
    start,
    value: float | None = None,
    *,
    intervals: int = 40,
    degree: int = 4,
    state: str | None = None,
    after: float | None = None,
    floquet: bool = True,
    check_smooth: bool = True,
    tol: float = 1e-10,
    **params: float,
) -> PeriodicOrbit:
    """The orbit by collocation from a simulated cycle or another orbit (the options of
    :func:`fluidnet.periodic_orbit`, which also starts from a Hopf point).

    Raises
    ------
    OptionError
        For a Hopf point (see :func:`fluidnet.periodic_orbit`), or misplaced overrides.
    AnalysisError
        When Newton fails, or converges to the equilibrium.
    NonSmoothError
        When the orbit touches a non-smooth surface of the model.
    """
    from ..dde.solution import Solution

    mesh = Mesh(intervals, degree)
    tol = number_option("tol", tol, positive=True, where="periodic_orbit")
    if after is not None:
        after = number_option("after", after, where="periodic_orbit")
    if isinstance(start, Solution):
        if params or value is not None:
            raise OptionError(
                "a simulated cycle is continued at its own parameters: do not give overrides"
            )
        model = start.model
        values = model.resolve_params(start.params)
        Y, T = _from_solution(start, mesh, state, after)
    elif isinstance(start, PeriodicOrbit):
        if value is not None:
            raise OptionError("with a PeriodicOrbit, give parameter overrides in params={...}")
        model = start.model
        values = model.resolve_params({**start.params, **params})
        Y = profile_values(start.mesh, start.nodes, mesh.nodes[:-1])
        T = start.period
    else:
        raise OptionError(
            f"start must be a HopfPoint, a Solution or a PeriodicOrbit, got {type(start).__name__}"
        )
    system = orbit_system(model)
    P = np.array([values[k] for k in model.param_names], dtype=float)
    guess = OrbitState(np.asarray(Y, dtype=float), float(T), P)
    st, it = correct(system, mesh, guess, guess, scales=unknown_scales(guess.Y, guess.T), tol=tol)
    return finish(model, mesh, st, it, floquet=floquet, smooth=check_smooth)
