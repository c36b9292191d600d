"""Branches of periodic orbits in one parameter, and the bifurcations of cycles on them.

From a Hopf point (the first two orbits from the normal form's prediction), from a computed
orbit, or from a period-doubling point (branch switching to the doubled orbit), the branch is
followed by the pseudo-arclength stepper of the continuation engine
(:mod:`fluidnet.continuation`): each step predicts along the branch tangent (in scaled
unknowns: the profile's node values, the period, the parameter) and corrects by Newton's
method on the collocation system, its phase condition and the arclength condition; an
:class:`~fluidnet.continuation.IterationController` sets the step from Newton's convergence.
The tangent comes from the same bordered matrix as the last Newton step, so it costs one
solve.

Between two orbits the branch is searched for

* a **fold of cycles** (the parameter turns back: the tangent's parameter component changes
  sign), located by the Illinois method on that component;
* a **period doubling** (a real Floquet multiplier crosses -1) and a **Neimark-Sacker**
  (torus) bifurcation (a complex pair crosses the unit circle), detected from the change of the
  number of multipliers outside the unit circle and located on the crossing multiplier's
  modulus;

each returned as an object (:class:`CycleBifurcation`) with the orbit there, its multipliers
and whether they are *certified*: the trivial multiplier (exactly 1 for the exact orbit)
computed within ``1e-8`` of 1, the measure of the discretization's accuracy for the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..continuation import IterationController, Stop, follow, run
from ..continuation.arclength import ArclengthStepper, CorrectionFailed, CurvePoint
from ..continuation.scalar import illinois_steps
from ..errors import AnalysisError, OptionError
from ..options import count_option, number_option
from ..threads import blas_bound
from ._system import orbit_system
from .collocation import Mesh
from .floquet import MonodromyError
from .hopf import HopfPoint
from .newton import OrbitState, correct_full
from .orbit import (
    PeriodicOrbit,
    _state_scales,
    collocated_orbit,
    direct_orbit,
    finish,
    surface_distance,
)
from .smoothness import NonSmoothError

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from .hopf import HopfPoint

__all__ = [
    "OrbitBranch",
    "continue_orbits",
    "CycleBifurcation",
    "FoldOfCycles",
    "PeriodDoubling",
    "NeimarkSacker",
]

#: Multipliers are certified when the trivial one is computed within this of 1.
CERTIFIED = 1e-8
#: A branch whose Newton iteration fails this close (relative) to a non-smooth surface says so.
NEAR_SURFACE = 1e-2
#: A branch stops at an orbit whose collocation defect (:attr:`PeriodicOrbit.defect`, relative
#: to ``max |x'|``) exceeds this: its mesh no longer resolves the orbit.
MAX_DEFECT = 1e-2


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True, kw_only=True)
class CycleBifurcation:
    """A bifurcation of cycles on a branch.

    Attributes
    ----------
    kind : str
        ``"fold"``, ``"period-doubling"`` or ``"neimark-sacker"``.
    x_name : str
        The branch's parameter.
    x : float
        Its value at the bifurcation.
    orbit : PeriodicOrbit
        The orbit there (with its multipliers).
    multiplier : complex
        The critical multiplier (``1``, ``-1``, or ``exp(+- i angle)``).
    index : int
        Index of the branch's orbit just before the point.
    certified : bool
        The trivial multiplier is within ``1e-8`` of 1 (the multipliers are accurate).
    """

    kind: str
    x_name: str
    x: float
    orbit: Any = field(repr=False)
    multiplier: complex
    index: int = field(default=-1, repr=False)
    certified: bool = True

    @property
    def period(self) -> float:
        return self.orbit.period

    def to_xarray(self) -> xr.Dataset:
        """The point as an :class:`xarray.Dataset` of scalars."""
        import xarray as xr

        return xr.Dataset(
            {
                self.x_name: ((), self.x),
                "period": ((), self.period),
                "multiplier": ((), complex(self.multiplier)),
                "certified": ((), self.certified),
            },
            attrs={"kind": self.kind},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The Floquet multipliers in the complex plane, the critical one in red."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        th = np.linspace(0, 2 * np.pi, 200)
        ax.plot(np.cos(th), np.sin(th), "k-", lw=0.6)
        mu = np.asarray(self.orbit.multipliers)
        ax.plot(
            np.real(mu), np.imag(mu), "o", mfc="none", color=kwargs.pop("color", "C0"), **kwargs
        )
        c = complex(self.multiplier)
        ax.plot([c.real, c.real], [c.imag, -c.imag], "o", color="C3", label="critical")
        ax.set_aspect("equal")
        ax.set(
            xlabel="Re mu",
            ylabel="Im mu",
            title=f"{self.kind} at {self.x_name}={self.x:.8g}, T={self.period:.6g}",
        )
        ax.legend(fontsize=8)
        return ax

    def __repr__(self) -> str:
        cert = "" if self.certified else ", multipliers not certified"
        return (
            f"{type(self).__name__}({self.x_name}={self.x:.10g}, period={self.period:.8g}, "
            f"multiplier={complex(self.multiplier):.6g}{cert})"
        )


class FoldOfCycles(CycleBifurcation):
    """A fold (saddle-node) of cycles: two cycles meet and disappear."""

    marker = "x"


class PeriodDoubling(CycleBifurcation):
    """A period doubling (flip): a multiplier crosses -1; a branch of doubled orbits starts
    here (:func:`continue_orbits` from this point follows it)."""

    marker = "d"


class NeimarkSacker(CycleBifurcation):
    """A Neimark-Sacker (torus) bifurcation: a complex pair of multipliers crosses the unit
    circle at ``exp(+- i angle)``."""

    marker = "*"

    @property
    def angle(self) -> float:
        return abs(float(np.angle(self.multiplier)))


@dataclass(frozen=True, kw_only=True)
class OrbitBranch:
    """A branch of periodic orbits in one parameter.

    Attributes
    ----------
    x_name : str
        The continuation parameter.
    orbits : list of PeriodicOrbit
        The orbits, in continuation order.
    x : ndarray
        Its value at each orbit.
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
    special : list of CycleBifurcation
        The folds, period doublings and Neimark-Sacker points, located on the branch.
    notes : list of str
        Changes of stability the multipliers were not accurate enough to certify.
    stop_reason : str
        Why the continuation stopped (count reached, bound reached, a non-smooth surface
        touched, Newton failed at the smallest step, the mesh no longer resolves the orbits,
        their Floquet multipliers cannot be computed), and how to go on where it can.
    hopf : HopfPoint or None
        The Hopf point the branch started from.
    """

    x_name: str
    orbits: list = field(repr=False)
    x: np.ndarray = field(repr=False)
    periods: np.ndarray = field(repr=False)
    amplitude: dict = field(repr=False)
    stable: np.ndarray | None = field(repr=False)
    folds: list
    stability_changes: list
    stop_reason: str
    hopf: Any = field(default=None, repr=False)
    special: list = field(default_factory=list, repr=False)
    notes: list = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.orbits)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{p.kind} at {p.x:.6g}" for p in self.special)
        if self.notes:
            kinds += f" ({len(self.notes)} uncertified stability changes, see .notes)"
        return (
            f"OrbitBranch({self.x_name}: {len(self)} orbits, {self.x_name} in "
            f"[{self.x.min():.6g}, {self.x.max():.6g}], period "
            f"[{self.periods.min():.6g}, {self.periods.max():.6g}], folds {len(self.folds)}; "
            f"bifurcations: {kinds or 'none'}; stopped: {self.stop_reason})"
        )

    def to_xarray(self) -> xr.Dataset:
        """The branch as an :class:`xarray.Dataset` along ``orbit``.

        Returns
        -------
        xarray.Dataset
            The parameter, ``period`` and ``amplitude_<state>`` (peak-to-peak) of each orbit,
            and ``stable`` when the multipliers were computed.
        """
        import xarray as xr

        data: dict[str, Any] = {self.x_name: ("orbit", self.x), "period": ("orbit", self.periods)}
        for s, a in self.amplitude.items():
            data[f"amplitude_{s}"] = ("orbit", a, {"long_name": f"peak-to-peak amplitude of {s}"})
        if self.stable is not None:
            data["stable"] = ("orbit", self.stable)
        return xr.Dataset(
            data, coords={"orbit": np.arange(len(self))}, attrs={"stop_reason": self.stop_reason}
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        state: str | None = None,
        y: str = "amplitude",
        **kwargs: Any,
    ) -> Axes:
        """Bifurcation diagram: amplitude (or period) against the parameter.

        Stable orbits are drawn solid, unstable dashed; folds of cycles are marked ``x``,
        period doublings with a thin diamond, Neimark-Sacker points with a star, and the Hopf
        point (zero amplitude) with a dot.

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
        xs = self.x
        stable = self.stable if self.stable is not None else np.ones(len(xs), bool)
        color = kwargs.pop("color", "C0")
        for i in range(len(xs) - 1):
            ls = "-" if stable[i] and stable[i + 1] else "--"
            ax.plot(xs[i : i + 2], yy[i : i + 2], ls=ls, color=color, **kwargs)
        for p in self.special:
            val = p.orbit.amplitude[state] if y == "amplitude" else p.period
            ax.plot(p.x, val, p.marker, color="k", ms=8, label=p.kind)
        if not self.special:
            for i, _ in self.folds:
                ax.plot(xs[i], yy[i], "x", color="k")
        if self.hopf is not None and y == "amplitude":
            ax.plot([self.hopf.value], [0.0], "o", color="k")
        if self.special:
            handles, labels = ax.get_legend_handles_labels()
            uniq = dict(zip(labels, handles, strict=True))
            ax.legend(uniq.values(), uniq.keys(), fontsize=8)
        label = f"{state} peak-to-peak" if y == "amplitude" else "period"
        ax.set(xlabel=self.x_name, ylabel=label)
        return ax


# ------------------------------------------------------------------------ the branch curve
class _Branch:
    """The collocation system of a branch in scaled unknowns ``u = (Y, T, p) / scales``."""

    def __init__(self, model, mesh: Mesh, free: int, scales: np.ndarray, ref: OrbitState, opts):
        self.model = model
        self.system = orbit_system(model)
        self.mesh = mesh
        self.free = free
        self.scales = scales
        self.ref = ref
        self.shape = ref.Y.shape
        self.P = ref.P.copy()
        self.opts = opts
        self.last = None  # the last correction
        self.last_row = None  # its constraint row
        self.orbit = None  # the last admissible orbit

    def state(self, u: np.ndarray) -> OrbitState:
        return OrbitState.from_vector(u * self.scales, self.shape, self.P, self.free)

    def vector(self, st: OrbitState) -> np.ndarray:
        return st.vector(self.free) / self.scales

    def correct(self, guess: np.ndarray, point, row: np.ndarray, target: float):
        try:
            out = correct_full(
                self.system, self.mesh, self.state(guess), self.ref, free=self.free,
                constraint=(row, float(target)), scales=self.scales, tol=self.opts["tol"],
            )  # fmt: skip
        except AnalysisError as exc:
            raise CorrectionFailed(str(exc)) from exc
        self.last = out
        self.last_row = row
        return self.vector(out.state), out.iterations

    def admissible(self, point, u: np.ndarray) -> str:
        assert self.last is not None  # called after a correction
        st = self.last.state
        try:
            self.orbit = finish(
                self.model, self.mesh, st, self.last.iterations,
                floquet=self.opts["floquet"], smooth=self.opts["check_smooth"],
            )  # fmt: skip
        except NonSmoothError as exc:
            return f"non-smooth: {exc}"
        except MonodromyError as exc:
            return f"floquet: {exc}"
        except AnalysisError as exc:
            return str(exc)
        if self.orbit.defect > MAX_DEFECT:
            return (
                f"mesh: the collocation mesh of {self.mesh.intervals} intervals no longer "
                f"resolves the orbit of period T = {self.orbit.period:.6g} (defect "
                f"{self.orbit.defect:.2g} of max |x'|, above {MAX_DEFECT:g})"
            )
        return ""

    def _same_row(self, prev: np.ndarray) -> bool:
        row = self.last_row
        return row is not None and row.shape == prev.shape and np.array_equal(row, prev)

    def tangent(self, prev: np.ndarray | None, sign: float = 1.0) -> np.ndarray:
        """The unit tangent at the last correction (the null vector of its bordered matrix),
        oriented along ``prev`` (or with ``sign`` on the parameter component)."""
        import scipy.linalg

        assert self.last is not None  # called after a correction
        A = self.last.matrix * self.scales
        rhs = np.zeros(A.shape[0] + 1)
        rhs[-1] = 1.0
        if prev is not None and self.last.lu is not None and self._same_row(prev):
            # the last Newton step's factors: its constraint row is this tangent's border
            t = scipy.linalg.lu_solve(self.last.lu, rhs, check_finite=False) / self.scales
        else:
            row = prev if prev is not None else np.eye(A.shape[1])[-1]
            t = np.linalg.solve(np.vstack([A, row]), rhs)
        t /= np.linalg.norm(t)
        if prev is not None:
            return t if t @ prev >= 0 else -t
        return t if t[-1] * sign >= 0 else -t


class _Tracer(ArclengthStepper):
    """The stepper of a branch: orbits, tangents, and the cycle bifurcations between them."""

    def __init__(self, branch: _Branch, name: str, opts: dict):
        super().__init__(branch)
        self.branch = branch
        self.name = name
        self.opts = opts
        self.orbits: list[PeriodicOrbit] = []
        self.tangents: list[np.ndarray] = []
        self.special: list[CycleBifurcation] = []
        self.notes: list[str] = []
        self.stop_reason = ""

    def add(self, orbit: PeriodicOrbit, tangent: np.ndarray) -> None:
        self.orbits.append(orbit)
        self.tangents.append(tangent)

    def attempt(self, point, h, rejects):
        att = super().attempt(point, h, rejects)
        why = att.data.get("why", "")
        if not att.ok and why.startswith("non-smooth") and h <= self.opts["step"] / 64:
            self.stop_reason = why
            return Stop(None)
        if not att.ok and why.startswith(("floquet", "mesh")):
            # a shorter step does not help: the next orbit is as long or as sharp
            last = self.orbits[-1] if self.orbits else None
            where = (
                f" after {len(self.orbits)} orbits (the last at {self.name}="
                f"{last.params[self.name]:.8g}, T = {last.period:.6g})"
                if last is not None
                else ""
            )
            if why.startswith("floquet"):
                remedy = "continue_orbits(branch, floquet=False) goes on without multipliers"
            else:
                intervals = 4 * self.branch.mesh.intervals
                remedy = f"continue_orbits(branch, intervals={intervals}) goes on on a finer mesh"
            self.stop_reason = f"{why.split(': ', 1)[1]}; stopped{where}: {remedy}"
            return Stop(None)
        return att

    def accepted(self, point: CurvePoint, attempt, h_next: float):
        b = self.branch
        u = attempt.point
        orbit = b.orbit
        assert orbit is not None and b.last is not None  # the attempt was corrected and admitted
        st = b.last.state
        t = b.tangent(point.tangent)
        end = self._bounds(point, attempt.h, st)
        if end is not None:
            return end
        self._events(point, attempt.h, orbit, t)
        self.add(orbit, t)
        b.ref = st
        if len(self.orbits) >= self.opts["n_orbits"]:
            self.stop_reason = f"{self.opts['n_orbits']} orbits computed"
            return Stop(None)
        return CurvePoint(u=u, tangent=t, data=orbit)

    # ---------------------------------------------------------------- ends and events
    def _bounds(self, point, h, st: OrbitState):
        p = st.P[self.branch.free]
        lo, hi = self.opts["bounds"] or (-math.inf, math.inf)
        target = self.opts["target"]
        edge = None
        if not lo <= p <= hi:
            edge, why = (lo if p < lo else hi), f"{self.name} left [{lo:g}, {hi:g}]"
        elif target is not None:
            p0 = point.data.params[self.name] if point.data is not None else None
            if p0 is not None and (p0 - target) * (p - target) <= 0 and p != p0:
                edge, why = target, f"{self.name} reached {target:g}"
        if edge is None:
            return None
        k = -1

        def g(u, s):
            return u[k] * self.branch.scales[k] - edge

        try:
            u, s, _ = self._locate(point, h, g)
            orbit = self.branch.orbit
            if orbit is not None and abs(orbit.params[self.name] - edge) <= 1e-9 * max(
                1.0, abs(edge)
            ):
                self.add(orbit, self.branch.tangent(point.tangent))
        except (CorrectionFailed, AnalysisError):
            pass
        self.stop_reason = why
        return Stop(None)

    def _locate(self, point, h, g):
        """The branch point between ``point`` and the next one (step ``h``) where ``g(u, s)``
        vanishes: the Illinois method in ``s``, each trial corrected onto the branch."""
        t = point.tangent
        b = self.branch
        memo: dict[float, tuple] = {}

        def at(s: float):
            if s not in memo:
                guess = point.u + s * t
                u, _ = b.correct(guess, point, t, t @ guess)
                memo[s] = (u, b.last)
            b.last = memo[s][1]
            return memo[s][0]

        g0, g1 = g(at(0.0), 0.0), g(at(h), h)
        if not g0 * g1 < 0:
            s = h if abs(g1) < abs(g0) else 0.0
        else:
            s = run(illinois_steps(0.0, h, g0, g1, 1e-12), lambda s: g(at(s), s))
        u = at(s)
        why = b.admissible(point, u)
        if why:
            raise AnalysisError(why)
        assert b.orbit is not None  # set by an admissible correction
        return u, s, b.orbit

    def _events(self, point, h, orbit: PeriodicOrbit, t: np.ndarray) -> None:
        prev = point.data
        if prev is None:
            return
        i = len(self.orbits) - 1
        b = self.branch
        # fold of cycles: the parameter component of the tangent changes sign
        fold = point.tangent[-1] * t[-1] < 0
        if fold:
            try:
                _, _, at_fold = self._locate(point, h, lambda u, s: b.tangent(point.tangent)[-1])
                # (at the fold itself the fixed-parameter problem is singular: the accuracy of
                # the multipliers is that of the two orbits around it)
                self.special.append(
                    self._make(FoldOfCycles, at_fold, 1.0 + 0j, i, around=(prev, orbit))
                )
            except (CorrectionFailed, AnalysisError, np.linalg.LinAlgError):
                pass
        if not self.opts["floquet"] or prev.multipliers is None or orbit.multipliers is None:
            return
        ends = [prev, orbit]
        counts = [o.unstable_count for o in ends]
        if counts[0] == counts[1]:
            return
        if not all(o.certified for o in ends):
            # refine the two orbits' meshes until their multipliers are certified
            ends = [_certified(o) or o for o in ends]
            if not all(o.certified for o in ends):
                err = max(o.multiplier_error for o in ends)
                self.notes.append(
                    f"between orbits {i} and {i + 1} the count of unstable multipliers "
                    f"changes, but the multipliers are not certified (trivial multiplier off by "
                    f"{err:.2g} even on {ends[0].mesh.intervals} intervals)"
                )
                return
            counts = [o.unstable_count for o in ends]
            if counts[0] == counts[1]:
                return
        mu0, mu1 = _crossing_pair(ends[0].nontrivial_multipliers, ends[1].nontrivial_multipliers)
        if mu0 is None or mu1 is None:  # (both or neither)
            return
        kind = _kind(mu0, mu1)
        if kind == "+1":
            if not fold:
                self.notes.append(
                    f"between orbits {i} and {i + 1} a multiplier crosses +1 away from a fold "
                    "(a branch point of cycles): not located"
                )
            return
        cls = PeriodDoubling if kind == "-1" else NeimarkSacker

        def g(u, s, mu0=mu0, mu1=mu1):
            orbit = b.orbit
            assert orbit is not None  # _with_orbit built it
            mu = orbit.nontrivial_multipliers
            guess = mu0 + (mu1 - mu0) * (s / h)
            return abs(mu[np.argmin(np.abs(mu - guess))]) - 1.0

        try:
            _, _, at_point = self._locate(point, h, _with_orbit(b, g))
            mu = at_point.nontrivial_multipliers
            crit = mu[np.argmin(np.abs(np.abs(mu) - 1.0))]
            if kind == "-1":
                crit = complex(crit.real, 0.0)
            self.special.append(self._make(cls, at_point, crit, i))
        except (CorrectionFailed, AnalysisError, np.linalg.LinAlgError):
            self.notes.append(f"a {kind} crossing between orbits {i} and {i + 1} not located")

    def _make(self, cls, orbit: PeriodicOrbit, mu: complex, i: int, around=None):
        names = {FoldOfCycles: "fold", PeriodDoubling: "period-doubling"}
        names[NeimarkSacker] = "neimark-sacker"
        certified = False
        if orbit.multipliers is not None:
            check = around if around is not None else (orbit,)
            certified = all(o.certified or _certified(o) is not None for o in check)
        return cls(
            kind=names[cls], x_name=self.name, x=float(orbit.params[self.name]), orbit=orbit,
            multiplier=complex(mu), index=i, certified=bool(certified),
        )  # fmt: skip

    def failed(self, point, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        if why.startswith("non-smooth"):
            self.stop_reason = why
            return None
        self.stop_reason = f"Newton failed at the smallest step: {why}"
        near = surface_distance(self.orbits[-1]) if self.orbits else None
        if near is not None and near[0] < NEAR_SURFACE:
            # a branch that ends at a kink of the model fails there without touching it first
            self.stop_reason += (
                f"; the last orbit comes within {near[0]:.2g} (relative) of {near[1]}, where the "
                "model is not smooth: the branch of smooth orbits most likely ends on it"
            )
        return None

    def finish(self, point):
        self.stop_reason = self.stop_reason or f"{len(self.orbits)} orbits computed"
        return None


def _certified(orbit: PeriodicOrbit) -> PeriodicOrbit | None:
    """The orbit re-solved on twice and four times as many intervals until its multipliers
    are certified; ``None`` if they are not even then (remembered per orbit)."""
    done = orbit.__dict__.get("_refined", False)
    if done is not False:
        return done
    found = None
    for factor in (2, 4):
        try:
            fine = collocated_orbit(
                orbit, intervals=factor * orbit.mesh.intervals, degree=orbit.mesh.degree,
                check_smooth=False,
            )  # fmt: skip
        except AnalysisError:
            break
        if fine.certified:
            found = fine
            break
    orbit.__dict__["_refined"] = found
    return found


def _with_orbit(branch: _Branch, g):
    """``g`` evaluated after the orbit at ``u`` is built (multipliers needed)."""

    def wrapped(u, s):
        why = branch.admissible(None, u)
        if why:
            raise AnalysisError(why)
        return g(u, s)

    return wrapped


def _crossing_pair(before: np.ndarray, after: np.ndarray):
    """The multiplier that crossed the unit circle, before and after (matched by distance)."""
    out_a = after[np.abs(after) > 1.0]
    out_b = before[np.abs(before) > 1.0]
    if out_a.size > out_b.size:
        cand = out_a
        other = before
    else:
        cand = out_b
        other = after
    best = None
    for m in cand:
        j = int(np.argmin(np.abs(other - m)))
        d = abs(other[j] - m)
        if best is None or d < best[0]:
            best = (d, m, other[j])
    if best is None:
        return None, None
    m, o = best[1], best[2]
    return (o, m) if cand is out_a else (m, o)


def _kind(mu0: complex, mu1: complex) -> str:
    m = mu1 if abs(abs(mu1) - 1) < abs(abs(mu0) - 1) else mu0
    if abs(m.imag) > 1e-6 * abs(m) and abs(mu0.imag) > 1e-9 and abs(mu1.imag) > 1e-9:
        return "complex"
    return "+1" if m.real > 0 else "-1"


def _multiplier_kind(before: np.ndarray, after: np.ndarray) -> str:
    """Where a multiplier crossed the unit circle between two orbits."""
    mu0, mu1 = _crossing_pair(before, after)
    if mu0 is None or mu1 is None:  # (both or neither)
        return "?"
    return _kind(mu0, mu1)


def _first_orbits(hopf, first_offset, step, intervals, degree, floquet, check_smooth, tol):
    """Two orbits near the Hopf point from the normal form; closer when they are not smooth."""
    off = (first_offset or step / 10.0 * max(abs(hopf.value), 1e-3)) * hopf.orbit_side
    kw = dict(
        intervals=intervals, degree=degree, floquet=floquet, check_smooth=check_smooth, tol=tol
    )
    for attempt in range(5):
        try:
            return [
                direct_orbit(hopf, hopf.value + off, {}, **kw),
                direct_orbit(hopf, hopf.value + 2 * off, {}, **kw),
            ]
        except AnalysisError:  # not smooth (or not converged) that far: closer to onset
            if attempt == 4 or first_offset is not None:
                raise
            off /= 10.0
    raise AssertionError  # pragma: no cover


def _remeshed(orbit: PeriodicOrbit, name: str, mesh: Mesh, floquet: bool, check_smooth: bool,
              tol: float) -> PeriodicOrbit:  # fmt: skip
    """``orbit`` solved again on ``mesh`` at its own period, ``name`` free: near a homoclinic
    orbit the period is a steep function of the parameter, the parameter a flat one of the
    period, so the period is the quantity to hold."""
    from .collocation import profile_values

    model = orbit.model
    system = orbit_system(model)
    free = model.param_names.index(name)
    P = np.array([orbit.params[k] for k in model.param_names], dtype=float)
    Y = profile_values(orbit.mesh, orbit.nodes, mesh.nodes[:-1])
    guess = OrbitState(np.asarray(Y, dtype=float), float(orbit.period), P)
    ends = np.array([abs(orbit.period), max(abs(float(P[free])), 1e-12)])
    scales = np.concatenate([np.tile(_state_scales(guess.Y), guess.Y.shape[0]), ends])
    row = np.zeros(scales.size)
    row[-2] = 1.0
    try:
        out = correct_full(
            system, mesh, guess, guess, free=free, constraint=(row, 1.0), scales=scales, tol=tol
        )
    except AnalysisError as exc:
        raise AnalysisError(
            f"the orbit of period T = {orbit.period:.6g} at {name}={orbit.params[name]:.8g} "
            f"cannot be solved again on {mesh.intervals} intervals of degree {mesh.degree}: {exc}"
        ) from exc
    return finish(model, mesh, out.state, out.iterations, floquet=floquet, smooth=check_smooth)


@blas_bound
def continue_orbits(
    start: HopfPoint | PeriodicOrbit | PeriodDoubling | OrbitBranch,
    name: str | None = None,
    lo: float | None = None,
    hi: float | None = None,
    *,
    n_orbits: int = 50,
    step: float = 0.02,
    max_step: float = 0.2,
    min_step: float = 1e-5,
    direction: int = 1,
    first_offset: float | None = None,
    intervals: int = 40,
    degree: int = 4,
    floquet: bool = True,
    check_smooth: bool = True,
    target: float | None = None,
    tol: float = 1e-10,
) -> OrbitBranch:
    """Continue a branch of periodic orbits in one parameter (pseudo-arclength).

    Parameters
    ----------
    start : HopfPoint, PeriodicOrbit, PeriodDoubling or OrbitBranch
        A Hopf point (the branch born there, in its parameter), an orbit to continue, a
        period-doubling point of another branch (the branch of doubled orbits born there), or
        a branch to go on with, the way it went (its last two orbits solved again on the mesh
        given, each at its own period; the options may differ from the branch's, e.g. more
        ``intervals`` or ``floquet=False`` where it stopped).
    name : str, optional
        The continuation parameter (default: the Hopf point's or the bifurcation's).
    lo, hi : float, optional
        Stop when the parameter leaves ``[lo, hi]`` (the last orbit on the edge); either end
        may be left open.
    n_orbits : int
        Number of orbits to compute (the branch stops earlier at a bound or a non-smooth
        surface).
    step, max_step, min_step : float
        Initial, largest and smallest arclength step, in scaled units (the parameter relative
        to its size at the start, each state relative to its largest value, the period
        relative to itself).
    direction : {1, -1}
        For an orbit start: increasing or decreasing parameter first.
    first_offset : float, optional
        For a Hopf start: parameter distance of the first orbit from the Hopf point (default
        ``step / 10`` relative to the parameter).
    intervals, degree : int
        Collocation mesh (for a period-doubling start: of each half of the doubled orbit).
    floquet : bool
        Compute the Floquet multipliers of every orbit (stability along the branch, period
        doublings and Neimark-Sacker points).
    check_smooth : bool
        Stop the branch at the first orbit touching a non-smooth surface (see
        :func:`periodic_orbit`).
    target : float, optional
        Stop at the first orbit with the parameter at this value (located exactly).
    tol : float
        Newton tolerance (scaled correction).

    Returns
    -------
    OrbitBranch

    Raises
    ------
    AnalysisError
        When not even the first orbits can be computed.
    NonSmoothError
        When the first orbit already touches a non-smooth surface.

    See Also
    --------
    periodic_orbit : one cycle
    continue_cycle_folds : the folds of cycles followed in a second parameter

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> a, = (fn.params("a"),)
    >>> wright = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0})
    >>> br = fn.continue_orbits(fn.hopf_point(wright, "a", 1.0, 2.0), n_orbits=10)
    >>> len(br), bool(br.stable.all()), bool(br.x.max() > math.pi / 2)
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
            f"need 0 < min_step <= step <= max_step, got {min_step!r}, {max_step!r}, {step!r}"
        )
    if direction not in (1, -1):
        raise OptionError(f"direction = {direction!r} must be 1 or -1")
    mesh = Mesh(intervals, degree)
    hopf = start if isinstance(start, HopfPoint) else None
    doubling = start if isinstance(start, PeriodDoubling) else None
    if hopf is not None:
        name = name or hopf.name
        if name != hopf.name:
            raise OptionError(
                f"a branch from the Hopf point in {hopf.name!r} is continued in {hopf.name!r}, "
                f"not {name!r}"
            )
        first = _first_orbits(
            hopf, first_offset, step, intervals, degree, floquet, check_smooth, tol
        )
    elif doubling is not None:
        name = name or doubling.x_name
        if name != doubling.x_name:
            raise OptionError(f"the doubled branch is continued in {doubling.x_name!r}")
        from .doubling import doubled_start

        doubled, direction_nodes = doubled_start(doubling)
        first = [doubled]
        mesh = doubled.mesh
    elif isinstance(start, OrbitBranch):
        name = name or start.x_name
        if name != start.x_name:
            raise OptionError(f"the branch is continued in {start.x_name!r}, not {name!r}")
        if len(start) < 2:
            raise OptionError("a branch with fewer than two orbits has no direction to go on in")
        first = [_remeshed(o, name, mesh, floquet, check_smooth, tol) for o in start.orbits[-2:]]
    elif isinstance(start, PeriodicOrbit):
        if name is None:
            raise OptionError("give the continuation parameter name")
        first = [
            collocated_orbit(
                start,
                intervals=intervals,
                degree=degree,
                floquet=floquet,
                check_smooth=check_smooth,
            )
        ]
    else:
        raise OptionError(
            "start must be a HopfPoint, a PeriodicOrbit, a PeriodDoubling or an OrbitBranch, got "
            f"{type(start).__name__}"
        )
    model = first[0].model
    if name not in model.param_names:
        raise OptionError(
            f"unknown parameter {name!r} (parameters: {', '.join(model.param_names)})"
        )
    bounds = None
    if lo is not None or hi is not None:
        bounds = (
            -math.inf if lo is None else number_option("lo", lo, where="continue_orbits"),
            math.inf if hi is None else number_option("hi", hi, where="continue_orbits"),
        )
        if not bounds[0] < bounds[1]:
            raise OptionError(f"need lo < hi, got lo={lo!r}, hi={hi!r}")
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
    end_scales = np.array([abs(st0.T), max(abs(st0.P[free]), 1e-12)], dtype=float)
    scales = np.concatenate([np.tile(sscale, N), end_scales])
    opts = dict(
        tol=tol, floquet=floquet, check_smooth=check_smooth, n_orbits=int(n_orbits),
        bounds=bounds, target=None if target is None else float(target), step=step,
    )  # fmt: skip
    states = [state_of(o) for o in first]
    branch = _Branch(model, mesh, free, scales, states[-1], opts)
    tracer = _Tracer(branch, name, opts)
    # the start: tangents from the bordered Jacobian at each first orbit
    prev_t = None
    if len(states) == 2:
        prev_t = branch.vector(states[1]) - branch.vector(states[0])
        prev_t /= np.linalg.norm(prev_t)
    elif doubling is not None:
        d = np.concatenate([direction_nodes.reshape(-1), [0.0, 0.0]]) / scales
        prev_t = d / np.linalg.norm(d)
    for orb, st in zip(first, states, strict=True):
        if doubling is not None:
            assert prev_t is not None  # set above for a doubled start
            tracer.add(orb, prev_t)  # (the doubled problem is singular here: no tangent solve)
            break
        branch.ref = st
        u = branch.vector(st)
        try:
            branch.correct(u, None, np.eye(u.size)[-1], u[-1])  # the Jacobian there
        except CorrectionFailed as exc:
            raise AnalysisError(f"the starting orbit does not solve the branch: {exc}") from exc
        t = branch.tangent(prev_t, sign=float(direction))  # (oriented by direction)
        tracer.add(orb, t)
        prev_t = t
    branch.ref = states[-1]
    assert prev_t is not None  # the loop above ran at least once
    start_pt = CurvePoint(u=branch.vector(states[-1]), tangent=prev_t, data=first[-1])
    control = IterationController(min_step, max_step, fast=3, slow=6, grow=1.5)
    if len(tracer.orbits) < n_orbits:
        run(follow(tracer, start_pt, control, step, max_steps=20 * n_orbits))
    else:
        tracer.stop_reason = f"{n_orbits} orbits computed"
    return _result(tracer, name, model, hopf, floquet)


def _result(tracer: _Tracer, name: str, model, hopf, floquet: bool) -> OrbitBranch:
    orbits = tracer.orbits
    values = np.array([o.params[name] for o in orbits])
    periods = np.array([o.period for o in orbits])
    amp = {s: np.array([o.amplitude[s] for o in orbits]) for s in model.state_names}
    tangents = tracer.tangents
    folds = []
    for i in range(1, len(tangents)):
        if tangents[i][-1] * tangents[i - 1][-1] < 0:
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
        x_name=name,
        orbits=orbits,
        x=values,
        periods=periods,
        amplitude=amp,
        stable=stable,
        folds=folds,
        stability_changes=changes,
        stop_reason=tracer.stop_reason,
        hopf=hopf,
        special=list(tracer.special),
        notes=list(tracer.notes),
    )
