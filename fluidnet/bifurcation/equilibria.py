"""Branches of equilibria through their folds, and curves of folds in two parameters.

An equilibrium ``x`` of a delay equation solves ``g(x, p) = f(x, x, ..., x, p) = 0``. Followed
in one parameter, a branch of equilibria can turn back at a **fold** (saddle-node, limit
point): ``g_x`` is singular there, a real characteristic root crosses 0, and two equilibria
meet and vanish. Continuation in the parameter itself stops at a fold;
:func:`continue_equilibria` follows the branch by pseudo-arclength continuation in ``(x, p)``
with the engine of :mod:`fluidnet.continuation`, counts the characteristic roots in the right
half-plane at every point, and locates on the branch

* its folds, where ``det g_x`` vanishes and the parameter turns back
  (:class:`EquilibriumFold`, with the coefficient ``a`` of the normal form
  ``xi' = beta + a xi^2`` on the center manifold);
* its Hopf points, where a root pair crosses the imaginary axis (:class:`HopfPoint`, ready for
  :func:`fluidnet.continue_orbits` and :func:`fluidnet.continue_hopf`);
* branch points, where a real root crosses 0 and the parameter does not turn (another branch
  of equilibria crosses this one): noted, not followed.

:func:`continue_equilibrium_folds` continues a fold in a second parameter with the extended
system (as DDE-BIFTOOL's ``fold`` continuation and AUTO's limit-point continuation)

``g(x, p) = 0``,   ``g_x(x, p) v = 0``,   ``v_ref . v = 1``

(``2n + 1`` equations in ``x``, ``v`` and the two parameters; ``v_ref`` the null vector of the
last point), and locates on the fold curve

* **cusps**, where ``a = 0`` (two fold curves meet; three equilibria merge):
  :class:`~fluidnet.bifurcation.codim2.CuspPoint` with the cubic coefficient;
* **Bogdanov-Takens** points, where the zero root becomes double (``p . Delta'(0) q = 0`` for
  the left and right null vectors of ``Delta(0)``): a Hopf curve ends there;
* **zero-Hopf** points, where a root pair crosses the axis while the zero root persists: a
  Hopf curve crosses the fold curve there.

The second derivatives the corrector needs (``d/dx (g_x v)`` and ``d/dp (g_x v)``) are central
differences of the exact, compiled ``g_x`` (:mod:`fluidnet.bifurcation.steady`) along ``v`` and
``p``: two evaluations each, not one per unknown. They affect only Newton's rate of
convergence; the points solve the defining system to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..continuation import IterationController, Stop, follow, run
from ..continuation.arclength import (
    ArclengthStepper,
    CorrectionFailed,
    CurvePoint,
    newton,
    null_tangent,
)
from ..continuation.scalar import illinois_steps
from ..errors import AnalysisError, FluidnetError, OptionError, ParameterError
from ..overrides import merge_params
from . import codim2
from .normalform import Mode, normal_form
from .steady import steady_state

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from ..symbolic.model import Model
    from .codim2 import BogdanovTakensPoint, ZeroHopfPoint

__all__ = [
    "EquilibriumCurve",
    "EquilibriumFold",
    "EquilibriumFoldCurve",
    "continue_equilibria",
    "continue_equilibrium_folds",
]

#: A root with ``|Re| <= AXIS_TOL (1 + |lambda|)`` counts as on the imaginary axis.
AXIS_TOL = 1e-9
#: Characteristic roots computed at each point (rightmost first).
N_ROOTS = 8


# ------------------------------------------------------------------------------- results
@dataclass(frozen=True, kw_only=True)
class EquilibriumFold:
    """A fold (saddle-node, limit point) of equilibria in one parameter.

    Attributes
    ----------
    x_name : str
        The parameter.
    x : float
        Its value at the fold.
    params : dict
        Every parameter value there.
    equilibrium : dict
        The equilibrium there.
    a : float
        The coefficient of the normal form ``xi' = beta + a xi^2`` on the center manifold,
        with the null vector ``q`` of ``Delta(0)`` of unit length (largest entry positive) and
        the left one scaled to ``p Delta'(0) q = 1``: the fold is non-degenerate when
        ``a != 0``.
    null_vector : ndarray
        ``q`` (state order).
    roots : ndarray of complex
        The rightmost characteristic roots there (upper half-plane), 0 among them.
    index : int
        Index of the branch point just before it (on its :class:`EquilibriumCurve`).
    """

    x_name: str
    x: float
    params: dict = field(repr=False)
    equilibrium: dict = field(repr=False)
    a: float
    null_vector: np.ndarray = field(repr=False)
    roots: np.ndarray = field(repr=False)
    index: int = field(default=-1, repr=False)
    model: Any = field(default=None, repr=False)

    kind = "fold"
    marker = "s"

    def to_xarray(self) -> xr.Dataset:
        """The point as an :class:`xarray.Dataset` of scalars."""
        import xarray as xr

        data = {self.x_name: self.x, "a": self.a, **self.equilibrium}
        return xr.Dataset({k: ((), float(v)) for k, v in data.items()}, attrs={"kind": "fold"})

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The rightmost characteristic roots at the fold; the zero root in red."""
        return _plot_roots(self.roots, [0.0], f"fold at {self.x_name}={self.x:.10g}", ax, kwargs)

    def __repr__(self) -> str:
        return f"EquilibriumFold({self.x_name}={self.x:.10g}, a={self.a:.6g})"


@dataclass(frozen=True, kw_only=True)
class EquilibriumCurve:
    """A branch of equilibria in one parameter, through its folds.

    Attributes
    ----------
    x_name : str
        The parameter.
    x : ndarray
        Its values along the branch (not monotone past a fold).
    states : dict of ndarray
        The equilibrium along the branch, per state (also ``curve[state]``).
    unstable : ndarray of int or None
        Number of characteristic roots in the open right half-plane at each point (``None``
        when not computed).
    special : list
        The :class:`EquilibriumFold` and :class:`HopfPoint` objects found, in branch order.
    notes : list of str
        What was seen but not followed (branch points), or could not be located.
    stop_reason : str
    params : dict of str to float
        The values of the other parameters along the branch.
    model : fluidnet.Model or None
    """

    x_name: str
    x: np.ndarray = field(repr=False)
    states: dict = field(repr=False)
    unstable: np.ndarray | None = field(repr=False)
    special: list = field(default_factory=list, repr=False)
    notes: list = field(default_factory=list, repr=False)
    stop_reason: str = ""
    params: dict = field(default_factory=dict, repr=False)
    model: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, state: str) -> np.ndarray:
        try:
            return self.states[state]
        except KeyError:
            raise ParameterError(
                f"unknown state {state!r} (states: {', '.join(self.states)})"
            ) from None

    @property
    def stable(self) -> np.ndarray | None:
        """True where every characteristic root is in the open left half-plane (a point on
        the axis, at a fold or Hopf point, counts as not stable only by its other roots)."""
        return None if self.unstable is None else self.unstable == 0

    @property
    def folds(self) -> list:
        """The :class:`EquilibriumFold` points."""
        return [p for p in self.special if isinstance(p, EquilibriumFold)]

    @property
    def hopf_points(self) -> list:
        """The :class:`HopfPoint` objects."""
        return [p for p in self.special if not isinstance(p, EquilibriumFold)]

    def __repr__(self) -> str:
        kinds = ", ".join(f"{_kind(p)} at {_value(p):.6g}" for p in self.special)
        return (
            f"EquilibriumCurve({self.x_name}: {len(self)} points in [{self.x.min():.6g}, "
            f"{self.x.max():.6g}], special points: {kinds or 'none'}; stopped: "
            f"{self.stop_reason})"
        )

    def to_xarray(self) -> xr.Dataset:
        """The branch as an :class:`xarray.Dataset` along ``point``."""
        import xarray as xr

        data = {self.x_name: ("point", self.x)}
        data.update({s: ("point", v) for s, v in self.states.items()})
        if self.unstable is not None:
            data["unstable"] = ("point", self.unstable)
        return xr.Dataset(
            data,
            coords={"point": np.arange(len(self))},
            attrs={"stop_reason": self.stop_reason, "special": repr(self.special)},
        )

    def plot(self, ax: Axes | None = None, *, state: str | None = None, **kwargs: Any) -> Axes:
        """One state against the parameter: stable parts solid, unstable dashed; folds
        (squares) and Hopf points (circles) marked.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.
        state : str, optional
            The state drawn; default the first.
        **kwargs
            Passed to ``ax.plot`` for the branch (``color`` defaults to ``"C0"``).

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ParameterError
            For an unknown ``state``.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        state = state or next(iter(self.states))
        y = self[state]
        color = kwargs.pop("color", "C0")
        stable = self.stable if self.stable is not None else np.ones(len(self), bool)
        labelled = set()
        for i in range(len(self) - 1):
            ok = bool(stable[i] and stable[i + 1])
            label = "stable" if ok else "unstable"
            ax.plot(
                self.x[i : i + 2], y[i : i + 2], ls="-" if ok else "--", color=color,
                label=None if label in labelled else label, **kwargs,
            )  # fmt: skip
            labelled.add(label)
        for p in self.special:
            kind = _kind(p)
            ax.plot(
                _value(p), p.equilibrium[state], "s" if kind == "fold" else "o", color="k",
                ms=6, label=None if kind in labelled else kind,
            )  # fmt: skip
            labelled.add(kind)
        ax.legend(fontsize=8)
        ax.set(xlabel=self.x_name, ylabel=state, title="branch of equilibria")
        return ax


@dataclass(frozen=True, kw_only=True)
class EquilibriumFoldCurve:
    """A curve of folds of equilibria in the plane of two parameters.

    Attributes
    ----------
    x_name, y_name : str
    x, y : ndarray
        The curve's points.
    states : dict of ndarray
        The equilibrium at the fold, per state.
    a : ndarray
        The fold's normal-form coefficient along the curve (``nan`` near a Bogdanov-Takens
        point, where it is unbounded).
    unstable : ndarray of int
        Number of characteristic roots in the open right half-plane at each point (the zero
        root not counted).
    special : list of Codim2Point
        Cusp, Bogdanov-Takens and zero-Hopf points found, in curve order.
    stop_reason : str
    start : EquilibriumFold or None
        The fold the curve started from.
    """

    x_name: str
    y_name: str
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    states: dict = field(repr=False)
    a: np.ndarray = field(repr=False)
    unstable: np.ndarray = field(repr=False)
    special: list = field(default_factory=list, repr=False)
    stop_reason: str = ""
    start: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.x)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{p.kind} at ({p.x:.6g}, {p.y:.6g})" for p in self.special)
        return (
            f"EquilibriumFoldCurve({self.x_name}-{self.y_name}: {len(self)} points, "
            f"{self.x_name} in [{self.x.min():.6g}, {self.x.max():.6g}], {self.y_name} in "
            f"[{self.y.min():.6g}, {self.y.max():.6g}], special points: {kinds or 'none'}; "
            f"stopped: {self.stop_reason})"
        )

    def to_xarray(self) -> xr.Dataset:
        """The curve as an :class:`xarray.Dataset` along ``point``."""
        import xarray as xr

        data = {
            self.x_name: ("point", self.x),
            self.y_name: ("point", self.y),
            "a": ("point", self.a),
            "unstable": ("point", self.unstable),
        }
        data.update({f"equilibrium_{s}": ("point", v) for s, v in self.states.items()})
        return xr.Dataset(
            data,
            coords={"point": np.arange(len(self))},
            attrs={"stop_reason": self.stop_reason, "special": repr(self.special)},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The curve in the ``(x, y)`` plane (dotted), its codimension-two points marked.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.
        **kwargs
            Passed to ``ax.plot`` for the curve (defaults ``ls=":"``, ``color="C4"``,
            ``label="fold of equilibria"``).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        kwargs.setdefault("ls", ":")
        kwargs.setdefault("color", "C4")
        ax.plot(self.x, self.y, label=kwargs.pop("label", "fold of equilibria"), **kwargs)
        seen = {h.get_label() for h in ax.get_lines()}
        for p in self.special:
            ax.plot(p.x, p.y, p.marker, color="k", ms=7, label=None if p.kind in seen else p.kind)
            seen.add(p.kind)
        ax.legend(fontsize=8)
        ax.set(xlabel=self.x_name, ylabel=self.y_name)
        return ax


def _kind(p) -> str:
    return "fold" if isinstance(p, EquilibriumFold) else "Hopf"


def _value(p) -> float:
    return p.x if isinstance(p, EquilibriumFold) else p.value


def _plot_roots(roots, critical, title, ax, kwargs):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    r = np.asarray(roots, dtype=complex)
    allr = np.concatenate([r, r.conj()])
    ax.plot(
        np.real(allr), np.imag(allr), "o", mfc="none", color=kwargs.pop("color", "C0"), **kwargs
    )
    crit = np.asarray(critical, dtype=complex)
    ax.plot(np.real(crit), np.imag(crit), "o", color="C3", label="critical roots")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set(xlabel="Re lambda", ylabel="Im lambda", title=title)
    ax.legend(fontsize=8)
    return ax


# ------------------------------------------------------------------------ shared helpers
def _roots(lin) -> tuple[np.ndarray, int]:
    """The rightmost roots in the upper half-plane and how many roots (pairs counted twice)
    lie in the open right half-plane."""
    roots = lin.linear_dde().roots(k=N_ROOTS).values
    upper = roots[roots.imag >= -1e-12 * (1.0 + np.abs(roots))]
    return upper, _count_unstable(upper)


def _count_unstable(upper: np.ndarray) -> int:
    right = upper[np.real(upper) > AXIS_TOL * (1.0 + np.abs(upper))]
    return int(np.sum(np.where(np.abs(np.imag(right)) > 1e-9 * (1.0 + np.abs(right)), 2, 1)))


def _real_null_vectors(lin) -> tuple[np.ndarray, np.ndarray, float]:
    """Right and left null vectors of ``Delta(0)`` (real, unit length) and the ratio of its
    smallest to largest singular value."""
    U, sv, Vh = np.linalg.svd(lin.delta(0.0).real)
    return Vh[-1], U[:, -1], float(sv[-1] / max(sv[0], 1e-300))


def _zero_mode(lin) -> Mode:
    """The zero root's :class:`Mode`: ``q`` real, unit length, largest entry positive;
    ``p Delta'(0) q = 1``."""
    q, p, _ = _real_null_vectors(lin)
    q = q if q[int(np.argmax(np.abs(q)))] > 0 else -q
    d = float(p @ lin.ddelta(0.0).real @ q)
    if d == 0.0:
        raise AnalysisError("the zero root is double (p Delta'(0) q = 0): a Bogdanov-Takens point")
    return Mode(0.0, q.astype(complex), (p / d).astype(complex))


def _fold_coefficient(model, x, P, lin, order: int = 2) -> float:
    """The normal-form coefficient of ``xi^order`` on the center manifold of the zero root."""
    nf = normal_form(model, x, P, lin, [_zero_mode(lin)], order)
    return float(nf.g(0, (order,)).real)


def _param_scale(v: float) -> float:
    """The unit of a parameter's steps: its size, or 1 at 0 (to rounding: a point located
    at a parameter value 0, such as a Bogdanov-Takens point at the origin, has no size)."""
    return abs(v) if abs(v) > 1e-8 else 1.0


def _state_scales(x0: np.ndarray) -> np.ndarray:
    big = float(np.max(np.abs(x0), initial=0.0))
    return np.maximum(np.abs(x0), 1e-3 * big) if big > 0 else np.ones(x0.size)


def _locate(stepper: ArclengthStepper, point: CurvePoint, h: float, g):
    """The curve point between ``point`` and the next (at step ``h``) where ``g(u, s)``
    changes sign, by the Illinois method on the chord parameter ``s``."""
    t = point.tangent
    memo: dict[float, np.ndarray] = {0.0: point.u}

    def at(s: float) -> np.ndarray:
        if s not in memo:
            guess = point.u + s * t
            memo[s] = stepper.correct(guess, point, t, float(t @ guess))[0]
        return memo[s]

    g0, g1 = g(at(0.0), 0.0), g(at(h), h)
    if not g0 * g1 < 0:
        return at(h), h
    s = run(illinois_steps(0.0, h, g0, g1, 1e-13), lambda s: g(at(s), s))
    return at(s), s


def _crossings(prev: np.ndarray, new: np.ndarray, skip_zero: bool = False):
    """Pairs ``(old, new)`` of matched roots whose real part changed sign."""
    out = []
    for lam_new in new:
        if prev.size == 0:
            break
        if skip_zero and abs(lam_new) <= 1e-6:
            continue
        lam_old = prev[int(np.argmin(np.abs(prev - lam_new)))]
        if skip_zero and abs(lam_old) <= 1e-6:
            continue
        if (lam_old.real > 0) != (lam_new.real > 0):
            out.append((lam_old, lam_new))
    return out


def _is_real(lam: complex) -> bool:
    return abs(lam.imag) <= 1e-9 * (1.0 + abs(lam))


def _check_range(r, name: str):
    if r is None:
        return None
    try:
        lo, hi = (float(v) for v in r)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{name} = {r!r} must be a pair (low, high)") from exc
    if not lo < hi:
        raise OptionError(f"{name} = {r!r}: need low < high")
    return lo, hi


def _check_steps(n_points, step, max_step, direction) -> None:
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 2:
        raise OptionError(f"n_points = {n_points!r} must be an integer >= 2")
    if not (0 < step <= max_step):
        raise OptionError(f"need 0 < step <= max_step, got {step!r}, {max_step!r}")
    if direction not in (1, -1):
        raise OptionError(f"direction = {direction!r} must be 1 or -1")


# ------------------------------------------------------------------- branch of equilibria
class _BranchSystem:
    """``g(x, p) = 0`` in scaled unknowns ``(x, p)``."""

    def __init__(self, model, ix: int, x0: np.ndarray, P0: np.ndarray):
        self.model = model
        self.st = steady_state(model)
        self.n = x0.size
        self.ix = ix
        self.P0 = P0.copy()
        self.scales = np.concatenate([_state_scales(x0), [_param_scale(P0[ix])]])

    def decode(self, u: np.ndarray):
        w = u * self.scales
        P = self.P0.copy()
        P[self.ix] = w[-1]
        return w[:-1], P

    def residual(self, u: np.ndarray) -> np.ndarray:
        return self.st.residual(*self.decode(u))

    def jacobian(self, u: np.ndarray) -> np.ndarray:
        x, P = self.decode(u)
        _, lin = self.st.linearization(x, P)
        J = np.empty((self.n, self.n + 1))
        J[:, :-1] = lin.steady_jacobian
        J[:, -1] = self.st.param_jacobian(x, P)[:, self.ix]
        return J * self.scales


@dataclass
class _BranchData:
    x: np.ndarray
    P: np.ndarray
    lin: Any
    det: float
    roots: np.ndarray
    unstable: int


class _BranchTracer(ArclengthStepper):
    def __init__(self, system: _BranchSystem, name: str, opts: dict):
        super().__init__(system, chord=False, tol=1e-12, loose_tol=None, maxiter=12)
        self.sys = system
        self.name = name
        self.opts = opts
        self.records: list[_BranchData] = []
        self.special: list = []
        self.notes: list[str] = []

    def data(self, u: np.ndarray) -> _BranchData:
        x, P = self.sys.decode(u)
        _, lin = self.sys.st.linearization(x, P)
        det = float(np.linalg.det(lin.steady_jacobian))
        if self.opts["stability"]:
            roots, unstable = _roots(lin)
        else:
            roots, unstable = np.zeros(0, complex), -1
        return _BranchData(x, P, lin, det, roots, unstable)

    def start(self, sign: float) -> CurvePoint:
        u0 = np.concatenate([self.opts["x0"], [self.sys.P0[self.sys.ix]]]) / self.sys.scales
        J = self.sys.jacobian(u0)
        pt = CurvePoint(u=u0, tangent=null_tangent(J, None, sign), J=J, data=self.data(u0))
        self.records.append(pt.data)
        return pt

    def accepted(self, point: CurvePoint, attempt, h_next: float):
        u = attempt.point
        new = self.data(u)
        i = len(self.records) - 1
        J = self.sys.jacobian(u)
        t = null_tangent(J, point.tangent)
        lo, hi = self.opts["bounds"]
        val = new.P[self.sys.ix]
        if not lo <= val <= hi:
            edge = lo if val < lo else hi
            k = self.sys.n
            try:
                u_edge, _ = _locate(self, point, attempt.h,
                                    lambda u, s: u[k] * self.sys.scales[k] - edge)  # fmt: skip
                self._events(point, attempt.h, point.data, self.data(u_edge), t, i)
                self.records.append(self.data(u_edge))
            except (CorrectionFailed, FluidnetError):
                pass
            self.stop_reason = f"{self.name} left [{lo:g}, {hi:g}]"
            return Stop(None)
        self._events(point, attempt.h, point.data, new, t, i)
        self.records.append(new)
        if len(self.records) >= self.opts["n_points"]:
            self.stop_reason = f"{self.opts['n_points']} points computed"
            return Stop(None)
        return CurvePoint(u=u, tangent=t, J=J, data=new)

    def _events(self, point, h, prev: _BranchData, new: _BranchData, t_new, i: int) -> None:
        sys = self.sys
        turned = point.tangent[-1] * t_new[-1] < 0
        if prev.det * new.det < 0 or turned:
            try:
                u, _ = _locate(self, point, h, lambda u, s: self._det(u))
                x, P = sys.decode(u)
                if turned:
                    self.special.append(_fold_point(sys.model, sys.ix, x, P, i))
                else:
                    self.notes.append(
                        f"a real root crosses 0 at {self.name} = {P[sys.ix]:.10g} without a fold "
                        "(a branch point: another branch of equilibria crosses this one; not "
                        "followed)"
                    )
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError) as exc:
                self.notes.append(
                    f"a real root crosses 0 near {self.name} = {new.P[sys.ix]:.6g}, not located "
                    f"({exc})"
                )
        if not self.opts["stability"]:
            return
        for lam_old, lam_new in _crossings(prev.roots, new.roots):
            if _is_real(lam_new) or _is_real(lam_old):
                continue
            try:
                self.special.append(self._hopf(point, h, lam_old, lam_new))
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError) as exc:
                self.notes.append(
                    f"a root pair crosses the axis near {self.name} = {new.P[sys.ix]:.6g}, not "
                    f"located ({exc})"
                )

    def _det(self, u) -> float:
        x, P = self.sys.decode(u)
        return float(np.linalg.det(self.sys.st.linearization(x, P)[1].steady_jacobian))

    def _hopf(self, point, h, lam_old, lam_new):
        from .hopf import hopf_at

        sys = self.sys

        def re_root(u, s):
            lin = sys.st.linearization(*sys.decode(u))[1]
            r, ok = lin.newton_root(lam_old + (lam_new - lam_old) * (s / h))
            if not ok:
                raise CorrectionFailed("the crossing root is lost")
            return r.real

        u, s = _locate(self, point, h, re_root)
        x, P = sys.decode(u)
        lin = sys.st.linearization(x, P)[1]
        r, _ = lin.newton_root(lam_old + (lam_new - lam_old) * (s / h))
        model = sys.model
        names = list(model.param_names)
        others = {k: float(v) for k, v in zip(names, P, strict=True) if k != self.name}
        eq = dict(zip(model.state_names, (float(v) for v in x), strict=True))
        return hopf_at(
            model, self.name, float(P[sys.ix]), abs(r.imag), equilibrium=eq, params=others
        )

    def failed(self, point, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        self.stop_reason = f"the step failed at its smallest length ({why})"
        return None

    def finish(self, point):
        self.stop_reason = self.stop_reason or f"{len(self.records)} points computed"
        return None


def _fold_point(model, ix: int, x, P, index: int) -> EquilibriumFold:
    """The fold near ``(x, P)`` solved from its defining system in ``(x, p, v)``, with its
    normal-form coefficient."""
    fs = _FoldSystem(model, ix, None, x, P)
    u = fs.pack(x, P, fs.vref)
    try:
        u, _ = newton(fs.residual, fs.jacobian, u, np.zeros(u.size), 0.0, tol=1e-13,
                      loose_tol=1e-10, maxiter=20, cond_limit=None, solve=_square)  # fmt: skip
    except CorrectionFailed as exc:
        raise AnalysisError(f"the fold does not solve its defining system: {exc}") from exc
    x, P, _ = fs.decode(u)
    _, lin = fs.st.linearization(x, P)
    roots, _ = _roots(lin)
    a = _fold_coefficient(model, x, P, lin)
    names = list(model.param_names)
    return EquilibriumFold(
        x_name=names[ix],
        x=float(P[ix]),
        params=dict(zip(names, (float(v) for v in P), strict=True)),
        equilibrium=dict(zip(model.state_names, (float(v) for v in x), strict=True)),
        a=a,
        null_vector=np.real(_zero_mode(lin).q),
        roots=roots,
        index=index,
        model=model,
    )


def _square(J, row, rhs):
    """Newton's step for a square system (the bordering row unused)."""
    return np.linalg.solve(J, rhs[:-1])


def continue_equilibria(
    model: Model,
    name: str,
    lo: float,
    hi: float,
    *,
    start: float | None = None,
    params: dict | None = None,
    equilibrium: dict | None = None,
    n_points: int = 200,
    step: float = 0.02,
    max_step: float = 0.2,
    direction: int = 1,
    stability: bool = True,
    **fixed: float,
) -> EquilibriumCurve:
    """Follow a branch of equilibria in ``name`` over ``[lo, hi]``, through its folds.

    Parameters
    ----------
    model : fluidnet.Model
    name : str
        The parameter.
    lo, hi : float
        The range: the branch stops where it leaves it.
    start : float, optional
        Where to start (default ``lo`` with ``direction=1``, ``hi`` with ``direction=-1``).
    params : dict, optional
        Values of the other parameters.
    equilibrium : dict, optional
        ``{state: value}``: a guess of the starting equilibrium (default: the model's own
        equilibrium there).
    n_points : int
        Most points to compute.
    step, max_step : float
        Initial and largest arclength step in scaled units (states and the parameter relative
        to their size at the start).
    direction : {1, -1}
        Start towards increasing (1) or decreasing (-1) ``name``.
    stability : bool
        Count the right-half-plane roots at each point and locate Hopf points.
    **fixed
        Values of the other parameters as keywords (the same as ``params``; a name given both
        ways is an error).

    Returns
    -------
    EquilibriumCurve
        With ``.special``: the folds (:class:`EquilibriumFold`) and Hopf points
        (:class:`HopfPoint`), located on the branch; branch points in ``.notes``.

    Raises
    ------
    ParameterError, OptionError
        For unknown names or bad options.
    AnalysisError
        When no equilibrium is found at the start.

    See Also
    --------
    continue_equilibrium_folds : the folds followed in a second parameter

    Examples
    --------
    >>> import fluidnet as fn
    >>> x = fn.states("x")
    >>> p, q = fn.params("p q")
    >>> m = fn.Model({x: p + q * x(fn.t - 1) - x(fn.t) ** 2}, {p: 1.0, q: 1.0})
    >>> curve = fn.continue_equilibria(m, "p", -1.0, 1.0, direction=-1, equilibrium={"x": 1.6})
    >>> fold, = curve.folds
    >>> round(fold.x, 12), round(fold.equilibrium["x"], 12)   # p = -q^2/4 at x = q/2
    (-0.25, 0.5)
    """
    if name not in model.param_names:
        raise ParameterError(
            f"unknown parameter {name!r} (parameters: {', '.join(model.param_names)})"
        )
    checked = _check_range((lo, hi), "(lo, hi)")
    assert checked is not None  # (a pair was given)
    lo, hi = checked
    _check_steps(n_points, step, max_step, direction)
    fixed = merge_params(params, fixed, "continue_equilibria")
    if name in fixed:
        raise OptionError(f"{name!r} is the continued parameter; give its range, not a value")
    value = float(start) if start is not None else (lo if direction == 1 else hi)
    if not lo <= value <= hi:
        raise OptionError(f"start = {value!r} is outside [{lo:g}, {hi:g}]")
    values = model.resolve_params({**fixed, name: value})
    names = list(model.param_names)
    P0 = np.array([values[k] for k in names], dtype=float)
    st = steady_state(model)
    if equilibrium is not None:
        missing = [s for s in model.state_names if s not in equilibrium]
        if missing:
            raise OptionError(f"the equilibrium guess misses the states {missing}")
        guess = np.array([float(equilibrium[s]) for s in model.state_names])
    else:
        eq = model.equilibrium(params=values)
        guess = np.array([float(eq[s]) for s in model.state_names])
    try:
        x0, _ = st.solve(guess, P0)
    except AnalysisError as exc:
        raise AnalysisError(f"no equilibrium at {name} = {value:g} near {guess}: {exc}") from exc
    system = _BranchSystem(model, names.index(name), x0, P0)
    opts = dict(n_points=int(n_points), bounds=(lo, hi), stability=stability, x0=x0)
    tracer = _BranchTracer(system, name, opts)
    first = tracer.start(float(direction))
    control = IterationController(step / 256, max_step, fast=3, slow=6, grow=1.5)
    run(follow(tracer, first, control, step, max_steps=10 * n_points))
    recs = tracer.records
    return EquilibriumCurve(
        x_name=name,
        x=np.array([r.P[system.ix] for r in recs]),
        states={s: np.array([r.x[j] for r in recs]) for j, s in enumerate(model.state_names)},
        unstable=np.array([r.unstable for r in recs]) if stability else None,
        special=tracer.special,
        notes=tracer.notes,
        stop_reason=tracer.stop_reason,
        params={k: v for k, v in values.items() if k != name},
        model=model,
    )


# ------------------------------------------------------------------------- fold curves
class _FoldSystem:
    """``[g; g_x v; v_ref . v - 1]`` in scaled unknowns ``(x, p_x[, p_y], v)``."""

    def __init__(self, model, ix: int, iy: int | None, x0: np.ndarray, P0: np.ndarray):
        self.model = model
        self.st = steady_state(model)
        self.n = n = x0.size
        self.ix, self.iy = ix, iy
        self.free = [ix] if iy is None else [ix, iy]
        self.P0 = P0.copy()
        _, lin = self.st.linearization(x0, P0)
        v, _, _ = _real_null_vectors(lin)
        self.vref = v if v[int(np.argmax(np.abs(v)))] > 0 else -v
        self.scales = np.concatenate(
            [_state_scales(x0), [_param_scale(P0[k]) for k in self.free], np.ones(n)]
        )

    def pack(self, x, P, v) -> np.ndarray:
        return np.concatenate([x, [P[k] for k in self.free], v]) / self.scales

    def decode(self, u: np.ndarray):
        w = u * self.scales
        n, m = self.n, len(self.free)
        P = self.P0.copy()
        for j, k in enumerate(self.free):
            P[k] = w[n + j]
        return w[:n], P, w[n + m :]

    def _gx(self, x, P) -> np.ndarray:
        return self.st.linearization(x, P)[1].steady_jacobian

    def residual(self, u: np.ndarray) -> np.ndarray:
        x, P, v = self.decode(u)
        g, lin = self.st.linearization(x, P)
        return np.concatenate([g, lin.steady_jacobian @ v, [self.vref @ v - 1.0]])

    def jacobian(self, u: np.ndarray) -> np.ndarray:
        x, P, v = self.decode(u)
        n, m = self.n, len(self.free)
        gx = self._gx(x, P)
        gp = self.st.param_jacobian(x, P)
        J = np.zeros((2 * n + 1, 2 * n + m))
        J[:n, :n] = gx
        J[n : 2 * n, n + m :] = gx
        J[-1, n + m :] = self.vref
        # d/dx (g_x v) = d/de g_x(x + e v) (symmetry of second derivatives)
        h = 1e-6 * max(float(np.max(np.abs(x))), 1e-3) / max(float(np.max(np.abs(v))), 1e-300)
        J[n : 2 * n, :n] = (self._gx(x + h * v, P) - self._gx(x - h * v, P)) / (2 * h)
        for j, k in enumerate(self.free):
            J[:n, n + j] = gp[:, k]
            hk = 1e-6 * _param_scale(P[k])
            Pp, Pm = P.copy(), P.copy()
            Pp[k] += hk
            Pm[k] -= hk
            J[n : 2 * n, n + j] = (self._gx(x, Pp) - self._gx(x, Pm)) @ v / (2 * hk)
        return J * self.scales

    def tangent(self, J, u, prev, sign: float = 1.0) -> np.ndarray:
        t = null_tangent(J, prev)
        if prev is None:
            return t if t[self.n + 1] * sign >= 0 else -t
        return t


@dataclass
class _FoldData:
    x: np.ndarray
    P: np.ndarray
    v: np.ndarray
    lin: Any
    q: np.ndarray  # right null vector of Delta(0), oriented along the last one
    p: np.ndarray  # left null vector, oriented along the last one
    cusp: float  # p . B(q, q) / 2 (a times p Delta'(0) q)
    bt: float  # p . Delta'(0) q
    roots: np.ndarray
    unstable: int


class _FoldTracer(ArclengthStepper):
    def __init__(self, fs: _FoldSystem, names: tuple[str, str], opts: dict):
        super().__init__(fs, chord=False, tol=1e-12, loose_tol=None, maxiter=12, cond_limit=None)
        self.fs = fs
        self.names = names
        self.opts = opts
        self.records: list[_FoldData] = []
        self.special: list = []

    def data(self, u: np.ndarray, prev: _FoldData | None = None, roots: bool = True) -> _FoldData:
        """The point's null vectors and test functions, and (``roots=True``) its rightmost
        characteristic roots: locating a zero of a test function needs only the former."""
        fs = self.fs
        x, P, v = fs.decode(u)
        _, lin = fs.st.linearization(x, P)
        q, p, _ = _real_null_vectors(lin)
        ref_q = prev.q if prev is not None else v
        ref_p = prev.p if prev is not None else None
        q = q if q @ ref_q >= 0 else -q
        if ref_p is None:
            p = p if p @ np.real(lin.ddelta(0.0)) @ q >= 0 else -p
        else:
            p = p if p @ ref_p >= 0 else -p
        h = 1e-5 * max(float(np.max(np.abs(x))), 1e-3)
        Bqq = (fs._gx(x + h * q, P) - fs._gx(x - h * q, P)) @ q / (2 * h)
        if roots:
            upper, _ = _roots(lin)
            scale = 1.0 + np.max(np.abs(upper), initial=0.0)
            unstable = _count_unstable(upper[np.abs(upper) > 1e-6 * scale])
        else:
            upper, unstable = np.zeros(0, complex), -1
        return _FoldData(
            x, P, v, lin, q, p, 0.5 * float(p @ Bqq), float(p @ np.real(lin.ddelta(0.0)) @ q),
            upper, unstable,
        )  # fmt: skip

    def start(self, u0: np.ndarray, sign: float) -> CurvePoint:
        J = self.fs.jacobian(u0)
        t = self.fs.tangent(J, u0, None, sign)
        pt = CurvePoint(u=u0, tangent=t, J=J, data=self.data(u0))
        self.records.append(pt.data)
        return pt

    def accepted(self, point: CurvePoint, attempt, h_next: float):
        fs = self.fs
        u = attempt.point
        new = self.data(u, point.data)
        i = len(self.records) - 1
        n = fs.n
        for j, rng in enumerate(self.opts["ranges"]):
            val = new.P[fs.free[j]]
            if rng is None or rng[0] <= val <= rng[1]:
                continue
            edge = rng[0] if val < rng[0] else rng[1]
            k = n + j
            try:
                u_edge, _ = _locate(self, point, attempt.h,
                                    lambda u, s, k=k, e=edge: u[k] * fs.scales[k] - e)  # fmt: skip
                end = self.data(u_edge, point.data)
                self._events(point, attempt.h, point.data, end, i)
                self.records.append(end)
            except (CorrectionFailed, FluidnetError):
                pass
            self.stop_reason = f"{self.names[j]} left [{rng[0]:g}, {rng[1]:g}]"
            return Stop(None)
        self._events(point, attempt.h, point.data, new, i)
        self.records.append(new)
        fs.vref = new.v / np.linalg.norm(new.v)
        J = fs.jacobian(u)
        t = fs.tangent(J, u, point.tangent)
        if len(self.records) >= self.opts["n_points"]:
            self.stop_reason = f"{self.opts['n_points']} points computed"
            return Stop(None)
        return CurvePoint(u=u, tangent=t, J=J, data=new)

    def _common(self, d: _FoldData, i: int, kind: str) -> dict:
        model = self.fs.model
        return dict(
            kind=kind,
            x_name=self.names[0],
            y_name=self.names[1],
            x=float(d.P[self.fs.ix]),
            y=float(d.P[self.fs.iy]),
            params=dict(zip(model.param_names, (float(v) for v in d.P), strict=True)),
            equilibrium=dict(zip(model.state_names, (float(v) for v in d.x), strict=True)),
            roots=d.roots,
            index=i,
            model=model,
        )

    def _events(self, point, h, prev: _FoldData, new: _FoldData, i: int) -> None:
        model = self.fs.model
        # a curve started at a codimension-two point does not find it again on its first step
        own = self.opts["start_kind"] if i == 0 else None
        for test, kind in ((lambda d: d.bt, "bogdanov-takens"), (lambda d: d.cusp, "cusp")):
            if kind == own or not test(prev) * test(new) < 0:
                continue
            try:
                u, _ = _locate(
                    self, point, h,
                    lambda u, s, test=test: test(self.data(u, prev, roots=False)),
                )  # fmt: skip
                d = self.data(u, prev)
                common = self._common(d, i, kind)
                if kind == "cusp":
                    c = _fold_coefficient(model, d.x, d.P, d.lin, order=3)
                    self.special.append(codim2.CuspPoint(**common, c=c))
                else:
                    self.special.append(codim2.bogdanov_takens(d.lin, common))
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError):
                continue
        for lam_old, lam_new in _crossings(prev.roots, new.roots, skip_zero=True):
            if own == "zero-hopf" or _is_real(lam_new) or _is_real(lam_old):
                continue

            def re_root(u, s, lo=lam_old, hi=lam_new):
                x, P, _ = self.fs.decode(u)
                lin = self.fs.st.linearization(x, P)[1]
                r, ok = lin.newton_root(lo + (hi - lo) * (s / h))
                if not ok:
                    raise CorrectionFailed("the crossing root is lost")
                return r.real

            try:
                u, s = _locate(self, point, h, re_root)
                d = self.data(u, prev)
                r, _ = d.lin.newton_root(lam_old + (lam_new - lam_old) * (s / h))
                common = self._common(d, i, "zero-hopf")
                self.special.append(codim2.zero_hopf(model, d.x, d.P, d.lin, abs(r.imag), common))
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError):
                continue

    def failed(self, point, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        self.stop_reason = f"the step failed at its smallest length ({why})"
        return None

    def finish(self, point):
        self.stop_reason = self.stop_reason or f"{len(self.records)} points computed"
        return None


def continue_equilibrium_folds(
    start: EquilibriumFold | BogdanovTakensPoint | ZeroHopfPoint,
    y: str | None = None,
    *,
    n_points: int = 40,
    step: float = 0.02,
    max_step: float = 0.2,
    direction: int = 1,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
) -> EquilibriumFoldCurve:
    """Continue a fold of equilibria in the plane of its parameter and a second one ``y``.

    Parameters
    ----------
    start : EquilibriumFold, BogdanovTakensPoint or ZeroHopfPoint
        A fold on a branch of equilibria (:func:`continue_equilibria`), or a point of a Hopf
        curve with a root at 0 (:func:`fluidnet.continue_hopf`'s ``.special``): the fold curve
        passes through it.
    y : str
        The second parameter (default: the codimension-two point's second parameter).
    n_points : int
        Most points to compute.
    step, max_step : float
        Initial and largest arclength step in scaled units.
    direction : {1, -1}
        Start towards increasing (1) or decreasing (-1) ``y``.
    x_range, y_range : (float, float), optional
        Stop where the curve leaves them.

    Returns
    -------
    EquilibriumFoldCurve
        With ``.special``: the cusp, Bogdanov-Takens and zero-Hopf points located on it.

    Raises
    ------
    OptionError, ParameterError
        For bad options or names.
    AnalysisError
        When the start does not solve the fold's defining system.

    See Also
    --------
    continue_equilibria : the curve of equilibria in one parameter
    """
    if isinstance(start, EquilibriumFold):
        xn = start.x_name
        if y is None:
            raise OptionError("give the second parameter y")
    elif isinstance(start, (codim2.BogdanovTakensPoint, codim2.ZeroHopfPoint)):
        xn = start.x_name
        y = start.y_name if y is None else y
    else:
        raise OptionError(
            "start must be an EquilibriumFold, a BogdanovTakensPoint or a ZeroHopfPoint, got "
            f"{type(start).__name__}"
        )
    model = start.model
    if y == xn:
        raise OptionError(f"the second parameter must differ from {xn!r}")
    if y not in model.param_names:
        raise ParameterError(
            f"unknown parameter {y!r} (parameters: {', '.join(model.param_names)})"
        )
    _check_steps(n_points, step, max_step, direction)
    ranges = (_check_range(x_range, "x_range"), _check_range(y_range, "y_range"))
    names = list(model.param_names)
    ix, iy = names.index(xn), names.index(y)
    P0 = np.array([start.params[k] for k in names], dtype=float)
    x0 = np.array([start.equilibrium[s] for s in model.state_names], dtype=float)
    fs = _FoldSystem(model, ix, iy, x0, P0)
    start_kind = None if isinstance(start, EquilibriumFold) else start.kind
    opts = dict(n_points=int(n_points), ranges=ranges, start_kind=start_kind)
    tracer = _FoldTracer(fs, (xn, y), opts)
    u0 = fs.pack(x0, P0, fs.vref)
    try:
        e = np.zeros(u0.size)
        e[fs.n + 1] = 1.0  # y held at its value
        u0, _ = tracer.correct(u0, CurvePoint(u0, e), e, u0[fs.n + 1])
    except CorrectionFailed as exc:
        raise AnalysisError(f"the start does not solve the fold's defining system: {exc}") from exc
    fs.vref = fs.decode(u0)[2] / np.linalg.norm(fs.decode(u0)[2])
    first = tracer.start(u0, float(direction))
    control = IterationController(step / 256, max_step, fast=3, slow=6, grow=1.5)
    run(follow(tracer, first, control, step, max_steps=10 * n_points))
    recs = tracer.records
    a = []
    for r in recs:
        # q oriented with its largest entry positive, as in EquilibriumFold.a
        sign = 1.0 if r.q[int(np.argmax(np.abs(r.q)))] > 0 else -1.0
        a.append(sign * r.cusp / r.bt if abs(r.bt) > 1e-8 else math.nan)
    return EquilibriumFoldCurve(
        x_name=xn,
        y_name=y,
        x=np.array([r.P[ix] for r in recs]),
        y=np.array([r.P[iy] for r in recs]),
        states={s: np.array([r.x[j] for r in recs]) for j, s in enumerate(model.state_names)},
        a=np.array(a),
        unstable=np.array([r.unstable for r in recs]),
        special=tracer.special,
        stop_reason=tracer.stop_reason,
        start=start,
    )
