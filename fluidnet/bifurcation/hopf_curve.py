"""Curves of Hopf points in two parameters, with their codimension-two points.

The defining system (as in DDE-BIFTOOL) has the equilibrium ``x``, the critical eigenvector
``q`` (complex), the frequency ``omega`` and the two parameters as unknowns:

``f(x, x_lagged, p) = 0``,   ``Delta(i omega; x, p) q = 0``,   ``conj(q_ref) . q = 1``

(``3n + 2`` real equations in ``3n + 3`` unknowns), evaluated from the model's compiled
derivatives (:mod:`fluidnet.bifurcation.steady`) and followed by the pseudo-arclength stepper
of the continuation engine (:mod:`fluidnet.continuation`), Newton's method as corrector, the
step set by an :class:`~fluidnet.continuation.IterationController`. ``q_ref`` is the
eigenvector of the last point (so the normalization never degenerates).

At every point the first Lyapunov coefficient is computed (optional) and the rightmost other
characteristic roots in full (so that no root crossing is missed between points: the count of
right-half-plane roots is computed at every point, not inferred). Between two points the curve
is searched for

* a sign change of ``l1``: a **Bautin** point (second Lyapunov coefficient from the fifth-order
  normal form);
* another root pair crossing the axis: a **Hopf-Hopf** point (third-order normal form);
* a real root crossing 0: a **zero-Hopf** point;
* the frequency reaching 0: a **Bogdanov-Takens** point, where the curve ends;

each located on the curve by the Illinois method on its test function (the point between two
curve points corrected onto the curve at each trial), to about ``1e-12`` in the arclength.
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
    null_tangent,
)
from ..continuation.scalar import illinois_steps
from ..errors import AnalysisError, FluidnetError, OptionError, ParameterError
from ..options import count_option, number_option
from . import codim2
from .hopf import DEGENERATE_TOL, HopfPoint, _first_coefficient
from .smoothness import NonSmoothError, check_equilibrium_smooth
from .steady import steady_state

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

__all__ = ["HopfCurve", "continue_hopf"]

#: A root with ``|Re| <= AXIS_TOL (1 + |lambda|)`` counts as on the imaginary axis.
AXIS_TOL = 1e-9


@dataclass(frozen=True, kw_only=True)
class HopfCurve:
    """A curve of Hopf points in a parameter plane.

    Attributes
    ----------
    x_name, y_name : str
        The two parameters (``x_name`` is the starting Hopf point's parameter).
    x, y : ndarray
        Their values at the points of the curve.
    omega : ndarray
        Crossing frequency along the curve.
    lyapunov : ndarray or None
        First Lyapunov coefficient along the curve (``nan`` where the smooth theory does not
        apply); ``None`` when not computed.
    unstable : ndarray of int
        Number of *other* characteristic roots in the open right half-plane at each point
        (0 where the curve is part of the stability boundary).
    special : list of Codim2Point
        The codimension-two points found, in curve order.
    bautin : list of int
        Indices ``i`` where ``lyapunov`` changes sign between points ``i - 1`` and ``i``.
    stop_reason : str
    hopf : HopfPoint or None
        The Hopf point the curve started from.
    """

    x_name: str
    y_name: str
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    omega: np.ndarray = field(repr=False)
    lyapunov: np.ndarray | None = field(repr=False)
    bautin: list
    stop_reason: str
    hopf: Any = field(default=None, repr=False)
    unstable: np.ndarray | None = field(default=None, repr=False)
    special: list = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.x)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{p.kind} at ({p.x:.6g}, {p.y:.6g})" for p in self.special)
        return (
            f"HopfCurve({self.x_name}-{self.y_name}: {len(self)} points, {self.x_name} in "
            f"[{self.x.min():.6g}, {self.x.max():.6g}], {self.y_name} in "
            f"[{self.y.min():.6g}, {self.y.max():.6g}], special points: {kinds or 'none'}; "
            f"stopped: {self.stop_reason})"
        )

    def to_xarray(self) -> xr.Dataset:
        """The curve as an :class:`xarray.Dataset` along ``point``."""
        import xarray as xr

        data = {
            self.x_name: ("point", self.x),
            self.y_name: ("point", self.y),
            "omega": ("point", self.omega),
        }
        if self.lyapunov is not None:
            data["lyapunov"] = ("point", self.lyapunov)
        if self.unstable is not None:
            data["unstable"] = ("point", self.unstable)
        return xr.Dataset(
            data,
            coords={"point": np.arange(len(self))},
            attrs={"stop_reason": self.stop_reason, "special": repr(self.special)},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The curve in the ``(x, y)`` plane.

        Supercritical parts (``l1 < 0``) solid, subcritical dashed; parts where another root
        is unstable (not on the stability boundary) thin; codimension-two points marked
        (Bautin square, Hopf-Hopf diamond, zero-Hopf triangle up, Bogdanov-Takens triangle
        down).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.
        **kwargs
            Passed to ``ax.plot`` for each piece of the curve (``color`` defaults to ``"C0"``,
            ``lw`` to 1.8).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        color = kwargs.pop("color", "C0")
        lw = kwargs.pop("lw", 1.8)
        unstable = self.unstable if self.unstable is not None else np.zeros(len(self), int)
        labelled = set()
        for i in range(len(self.x) - 1):
            sub = self.lyapunov is not None and (self.lyapunov[i] > 0 or self.lyapunov[i + 1] > 0)
            off = unstable[i] > 0 or unstable[i + 1] > 0
            kind = (
                "Hopf"
                if self.lyapunov is None
                else ("Hopf (subcritical)" if sub else "Hopf (supercritical)")
            )
            ax.plot(
                self.x[i : i + 2], self.y[i : i + 2], ls="--" if sub else "-",
                lw=0.7 if off else lw, color=color,
                label=None if kind in labelled else kind, **kwargs,
            )  # fmt: skip
            labelled.add(kind)
        seen = set()
        for p in self.special:
            label = p.kind if p.kind not in seen else None
            seen.add(p.kind)
            ax.plot(p.x, p.y, p.marker, color="k", ms=7, label=label)
        ax.legend(fontsize=8)
        ax.set(xlabel=self.x_name, ylabel=self.y_name, title="Hopf curve")
        return ax


# ------------------------------------------------------------------------ defining system
class _HopfSystem:
    """The Hopf defining system in scaled unknowns ``(x, Re q, Im q, omega, p_x, p_y)``."""

    def __init__(self, model, hopf: HopfPoint, y: str):
        self.model = model
        self.st = steady_state(model)
        self.n = n = self.st.n
        names = list(model.param_names)
        self.ix, self.iy = names.index(hopf.name), names.index(y)
        self.P0 = np.array([hopf.params[k] for k in names], dtype=float)
        x0 = np.array([hopf.equilibrium[s] for s in model.state_names], dtype=float)
        big = float(np.max(np.abs(x0), initial=0.0))
        sx = np.maximum(np.abs(x0), 1e-3 * big) if big > 0 else np.ones(n)
        self.qref = hopf.eigenvector.copy()
        self.scales = np.concatenate(
            [
                sx,
                np.ones(2 * n),
                [hopf.omega, max(abs(hopf.value), 1e-9), max(abs(self.P0[self.iy]), 1e-9)],
            ]
        )
        self.u0 = (
            np.concatenate(
                [x0, np.real(hopf.eigenvector), np.imag(hopf.eigenvector), [hopf.omega]]
                + [[hopf.value, self.P0[self.iy]]]
            )
            / self.scales
        )

    def decode(self, u: np.ndarray):
        v = u * self.scales
        n = self.n
        x = v[:n]
        q = v[n : 2 * n] + 1j * v[2 * n : 3 * n]
        P = self.P0.copy()
        P[self.ix], P[self.iy] = v[3 * n + 1], v[3 * n + 2]
        return x, q, float(v[3 * n]), P

    def _dq(self, x, P, w, q):
        g, lin = self.st.linearization(x, P)
        return g, lin, lin.delta(1j * w) @ q

    def residual(self, u: np.ndarray) -> np.ndarray:
        x, q, w, P = self.decode(u)
        g, _, r = self._dq(x, P, w, q)
        c = np.vdot(self.qref, q) - 1.0
        return np.concatenate([g, r.real, r.imag, [c.real, c.imag]])

    def jacobian(self, u: np.ndarray) -> np.ndarray:
        x, q, w, P = self.decode(u)
        n = self.n
        _, lin, _ = self._dq(x, P, w, q)
        J = np.zeros((3 * n + 2, 3 * n + 3))
        J[:n, :n] = lin.steady_jacobian
        D = lin.delta(1j * w)
        J[n : 2 * n, n : 2 * n], J[n : 2 * n, 2 * n : 3 * n] = np.real(D), -np.imag(D)
        J[2 * n : 3 * n, n : 2 * n], J[2 * n : 3 * n, 2 * n : 3 * n] = np.imag(D), np.real(D)
        Dw = 1j * lin.ddelta(1j * w) @ q
        J[n : 2 * n, 3 * n], J[2 * n : 3 * n, 3 * n] = Dw.real, Dw.imag
        c = self.qref.conj()
        J[3 * n, n : 2 * n], J[3 * n, 2 * n : 3 * n] = np.real(c), -np.imag(c)
        J[3 * n + 1, n : 2 * n], J[3 * n + 1, 2 * n : 3 * n] = np.imag(c), np.real(c)
        # d(Delta q)/dx by central differences (g_x is exact)
        for j in range(n):
            h = 1e-6 * self.scales[j]
            e = np.zeros(n)
            e[j] = h
            rp = self._dq(x + e, P, w, q)[2]
            rm = self._dq(x - e, P, w, q)[2]
            d = (rp - rm) / (2 * h)
            J[n : 2 * n, j], J[2 * n : 3 * n, j] = d.real, d.imag
        gp = self.st.param_jacobian(x, P)
        for col, k in ((3 * n + 1, self.ix), (3 * n + 2, self.iy)):
            h = 1e-6 * max(abs(P[k]), 1e-3)
            Pp, Pm = P.copy(), P.copy()
            Pp[k] += h
            Pm[k] -= h
            d = (self._dq(x, Pp, w, q)[2] - self._dq(x, Pm, w, q)[2]) / (2 * h)
            J[:n, col] = gp[:, k]
            J[n : 2 * n, col], J[2 * n : 3 * n, col] = d.real, d.imag
        return J * self.scales


@dataclass
class _Data:
    """What is known at one curve point."""

    x: np.ndarray
    q: np.ndarray
    omega: float
    P: np.ndarray
    lin: Any
    l1: float
    others: np.ndarray  # other roots, Im >= 0
    unstable: int


class _HopfTracer(ArclengthStepper):
    def __init__(self, system: _HopfSystem, hopf: HopfPoint, y: str, opts: dict):
        super().__init__(system, chord=False, tol=opts["tol"], loose_tol=None, maxiter=12)
        self.sys = system
        self.hopf, self.y = hopf, y
        self.opts = opts
        self.records: list[_Data] = []
        self.special: list = []
        self.stop_reason = ""

    # -- what is computed at each point
    def data(self, u: np.ndarray) -> _Data:
        x, q, w, P = self.sys.decode(u)
        _, lin = self.sys.st.linearization(x, P)
        l1 = math.nan
        if self.opts["lyapunov"]:
            l1 = self._lyapunov(x, P, lin, w)
        roots = lin.linear_dde().roots(k=self.opts["roots"]).values
        lam = 1j * w
        near = 1e-6 * max(1.0, w)
        keep = (np.abs(roots - lam) > near) & (np.abs(roots + lam) > near)
        keep &= np.imag(roots) >= -1e-12 * (1.0 + np.abs(roots))
        others = roots[keep]
        unstable = int(
            np.sum(np.where(np.abs(np.imag(others)) > 1e-9 * (1 + np.abs(others)), 2, 1)[
                np.real(others) > AXIS_TOL * (1.0 + np.abs(others))
            ])
        )  # fmt: skip
        return _Data(x, q, w, P, lin, l1, others, unstable)

    def _lyapunov(self, x, P, lin, w) -> float:
        model = self.sys.model
        eqd = dict(zip(model.state_names, (float(v) for v in x), strict=True))
        try:
            check_equilibrium_smooth(model, eqd, "a point of the Hopf curve")
        except NonSmoothError:
            return math.nan
        md = codim2.mode(lin, 1j * w)
        params = dict(zip(model.param_names, (float(v) for v in P), strict=True))
        try:
            c1, scale = _first_coefficient(
                model, lin, eqd, params, w, md.q, md.p, state_scale=False
            )
        except (FluidnetError, np.linalg.LinAlgError):
            return math.nan
        if abs(c1.real) <= DEGENERATE_TOL * scale:
            return 0.0
        return c1.real / w

    def start(self, sign: float) -> CurvePoint:
        u0 = self.sys.u0
        J = self.sys.jacobian(u0)
        pt = CurvePoint(u=u0, tangent=null_tangent(J, None, sign), J=J, data=self.data(u0))
        self.records.append(pt.data)
        return pt

    # -- the stepper
    def accepted(self, point: CurvePoint, attempt, h_next: float):
        u = attempt.point
        new = self.data(u)
        prev = point.data
        i = len(self.records) - 1
        # the curve's end: a parameter leaving its range, the frequency reaching 0
        end = self._end(point, attempt.h, new, i)
        if end is not None:
            return end
        self._events(point, attempt.h, prev, new, i)
        self.records.append(new)
        # the next point's normalization, Jacobian and tangent
        self.sys.qref = new.q / np.vdot(new.q, new.q).real
        J = self.sys.jacobian(u)
        t = null_tangent(J, point.tangent)
        if len(self.records) >= self.opts["n_points"]:
            self.stop_reason = f"{self.opts['n_points']} points computed"
            return Stop(None)
        return CurvePoint(u=u, tangent=t, J=J, data=new)

    def _end(self, point, h, new: _Data, i: int):
        sys = self.sys
        n = sys.n
        for k, rng, label in ((3 * n + 1, self.opts["x_range"], self.hopf.name),
                              (3 * n + 2, self.opts["y_range"], self.y)):  # fmt: skip
            if rng is None:
                continue
            val = new.P[sys.ix if k == 3 * n + 1 else sys.iy]
            if rng[0] <= val <= rng[1]:
                continue
            edge = rng[0] if val < rng[0] else rng[1]
            try:
                u, _ = self._locate(point, h, lambda u, s, k=k, e=edge: u[k] * sys.scales[k] - e)
                self.records.append(self.data(u))
            except (CorrectionFailed, FluidnetError):
                pass
            self.stop_reason = f"{label} left [{rng[0]:g}, {rng[1]:g}]"
            return Stop(None)
        if new.omega <= 0:
            self._bogdanov_takens(point.data if point.data.omega > 0 else new, i)
            return Stop(None)
        return None

    def _bogdanov_takens(self, near: _Data, i: int) -> None:
        """The point where the frequency reaches 0, solved from its own defining system (the
        frequency vanishes like the square root of the distance along the curve, so a test
        function on the curve would locate it poorly)."""
        sys = self.sys
        try:
            x, P = _refine_bogdanov_takens(sys, near.x, near.P, near.q)
            _, lin = sys.st.linearization(x, P)
            d = _Data(x, near.q, 0.0, P, lin, math.nan, np.zeros(0, complex), near.unstable)
            roots = lin.linear_dde().roots(k=self.opts["roots"]).values
            d.others = roots[roots.imag >= 0]
        except (AnalysisError, np.linalg.LinAlgError, FluidnetError) as exc:
            self.stop_reason = (
                f"the frequency approaches 0 (a Bogdanov-Takens point not solved: {exc})"
            )
            return
        common = self._common(d, i) | {"kind": "bogdanov-takens"}
        self.special.append(codim2.bogdanov_takens(d.lin, common))
        self.records.append(d)
        self.stop_reason = "the frequency reached 0 at a Bogdanov-Takens point"

    def _common(self, d: _Data, i: int) -> dict:
        model = self.sys.model
        return dict(
            kind="",
            x_name=self.hopf.name,
            y_name=self.y,
            x=float(d.P[self.sys.ix]),
            y=float(d.P[self.sys.iy]),
            params=dict(zip(model.param_names, (float(v) for v in d.P), strict=True)),
            equilibrium=dict(zip(model.state_names, (float(v) for v in d.x), strict=True)),
            roots=np.concatenate([[1j * d.omega], d.others]),
            index=i,
            model=model,
        )

    def _locate(self, point: CurvePoint, h: float, g, root=None):
        """The curve point between ``point`` and the next where ``g(u, s)`` vanishes."""
        t = point.tangent
        memo: dict[float, np.ndarray] = {0.0: point.u}

        def at(s: float) -> np.ndarray:
            if s not in memo:
                guess = point.u + s * t
                memo[s] = self.correct(guess, point, t, float(t @ guess))[0]
            return memo[s]

        g0, g1 = g(at(0.0), 0.0), g(at(h), h)
        if not (g0 * g1 < 0):
            return at(h), h
        search = illinois_steps(0.0, h, g0, g1, 1e-13)
        s = run(search, lambda s: g(at(s), s))
        return at(s), s

    def _events(self, point: CurvePoint, h: float, prev: _Data, new: _Data, i: int) -> None:
        model = self.sys.model
        sys = self.sys
        # Bautin: l1 changes sign
        if self.opts["lyapunov"] and prev.l1 * new.l1 < 0:
            try:
                u, _ = self._locate(point, h, lambda u, s: self.data_l1(u))
                d = self.data(u)
                common = self._common(d, i) | {"kind": "bautin"}
                self.special.append(codim2.bautin(model, d.x, d.P, d.lin, d.omega, common))
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError):
                pass
        # another root crossing the axis: Hopf-Hopf (a pair) or zero-Hopf (a real root)
        for lam_new in new.others:
            j = int(np.argmin(np.abs(prev.others - lam_new))) if prev.others.size else -1
            if j < 0:
                continue
            lam_old = prev.others[j]
            if (lam_old.real > 0) == (lam_new.real > 0):
                continue
            real_root = abs(lam_new.imag) <= 1e-9 * (1 + abs(lam_new))

            def re_root(u, s, lo=lam_old, hi=lam_new, real_root=real_root):
                lin = sys.st.linearization(*self._xp(u))[1]
                guess = lo + (hi - lo) * (s / h)
                r, ok = lin.newton_root(guess.real if real_root else guess)
                if not ok:
                    raise CorrectionFailed(f"the crossing root is lost near {guess:.6g}")
                return r.real

            try:
                u, s = self._locate(point, h, re_root)
                d = self.data(u)
                lin = d.lin
                guess = lam_old + (lam_new - lam_old) * (s / h)
                r, _ = lin.newton_root(guess.real if real_root else guess)
                common = self._common(d, i)
                if real_root:
                    common["kind"] = "zero-hopf"
                    pt = codim2.zero_hopf(model, d.x, d.P, lin, d.omega, common)
                else:
                    common["kind"] = "hopf-hopf"
                    pt = codim2.hopf_hopf(model, d.x, d.P, lin, d.omega, abs(r.imag), common)
                self.special.append(pt)
            except (CorrectionFailed, FluidnetError, np.linalg.LinAlgError):
                continue

    def _xp(self, u):
        x, _, _, P = self.sys.decode(u)
        return x, P

    def data_l1(self, u) -> float:
        x, q, w, P = self.sys.decode(u)
        _, lin = self.sys.st.linearization(x, P)
        return self._lyapunov(x, P, lin, w)

    def failed(self, point, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        self.stop_reason = f"Newton failed at the smallest step ({why})"
        if point.data is not None and point.data.omega < 1e-2 * self.hopf.omega:
            self._bogdanov_takens(point.data, len(self.records) - 1)
        return None

    def finish(self, point):
        self.stop_reason = self.stop_reason or f"{len(self.records)} points computed"
        return None


def _refine_bogdanov_takens(sys: _HopfSystem, x0, P0, q):
    """Newton's method on ``g(x, p) = 0``, ``Delta(0) v0 = 0``, ``Delta(0) v1 + Delta'(0) v0 =
    0``, ``c . v0 = 1``, ``c . v1 = 0`` (a Jordan chain at 0) in ``(x, v0, v1, p_x, p_y)``."""
    n = sys.n
    j = int(np.argmax(np.abs(q)))
    v0 = np.real(q * (abs(q[j]) / q[j]))
    v0 /= np.linalg.norm(v0)
    c = v0.copy()
    _, lin = sys.st.linearization(x0, P0)
    D0, D1 = np.real(lin.delta(0.0)), np.real(lin.ddelta(0.0))
    A = np.vstack([D0, c])
    v1 = np.linalg.lstsq(A, np.concatenate([-D1 @ v0, [0.0]]), rcond=None)[0]
    ix, iy = sys.ix, sys.iy
    sc = np.concatenate([sys.scales[:n], np.ones(2 * n), sys.scales[3 * n + 1 :]])
    w = np.concatenate([x0, v0, v1, [P0[ix], P0[iy]]]) / sc

    def F(w):
        v = w * sc
        x, a, b = v[:n], v[n : 2 * n], v[2 * n : 3 * n]
        P = P0.copy()
        P[ix], P[iy] = v[3 * n], v[3 * n + 1]
        g, ln = sys.st.linearization(x, P)
        D0, D1 = np.real(ln.delta(0.0)), np.real(ln.ddelta(0.0))
        return np.concatenate([g, D0 @ a, D0 @ b + D1 @ a, [c @ a - 1.0, c @ b]])

    for _ in range(30):
        r = F(w)
        J = np.empty((r.size, w.size))
        for k in range(w.size):
            e = np.zeros(w.size)
            e[k] = 1e-7 * max(1.0, abs(w[k]))
            J[:, k] = (F(w + e) - F(w - e)) / (2 * e[k])
        dw = np.linalg.solve(J, -r)
        w = w + dw
        if np.max(np.abs(dw)) < 1e-13:
            break
    else:
        raise AnalysisError("Newton's method for the Bogdanov-Takens point did not converge")
    v = w * sc
    P = P0.copy()
    P[ix], P[iy] = v[3 * n], v[3 * n + 1]
    return v[:n], P


def _range(r, name: str):
    if r is None:
        return None
    try:
        lo, hi = (float(v) for v in r)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{name} = {r!r} must be a pair (low, high)") from exc
    if not lo < hi:
        raise OptionError(f"{name} = {r!r}: need low < high")
    return lo, hi


def continue_hopf(
    hopf: HopfPoint,
    y: str,
    *,
    n_points: int = 40,
    step: float = 0.02,
    max_step: float = 0.1,
    direction: int = 1,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    lyapunov: bool = True,
    tol: float = 1e-11,
) -> HopfCurve:
    """Continue a Hopf point in the plane of its parameter and a second one ``y``.

    Parameters
    ----------
    hopf : HopfPoint
        The starting point (its parameter is the curve's ``x``).
    y : str
        The second parameter.
    n_points : int
        Points to compute (in each direction with ``direction=0``).
    step, max_step : float
        Initial and largest arclength step, in scaled units (each parameter relative to its
        size at the start).
    direction : {1, -1, 0}
        Start towards increasing (1) or decreasing (-1) ``y``, or both ways (0).
    x_range, y_range : (float, float), optional
        Stop where the curve leaves them (the last point on the edge).
    lyapunov : bool
        Compute the first Lyapunov coefficient along the curve (and find Bautin points).
    tol : float
        Newton tolerance (on the scaled correction).

    Returns
    -------
    HopfCurve
        With ``.special``: the Bautin, Hopf-Hopf, zero-Hopf and Bogdanov-Takens points
        found on the way (:mod:`fluidnet.bifurcation.codim2`).

    Raises
    ------
    OptionError
        For a bad option or ``y`` equal to the Hopf point's parameter.
    ParameterError
        For an unknown parameter.

    See Also
    --------
    hopf_point : one point of the curve
    continue_cycle_folds : the curve of folds of cycles from a Bautin point
    stability_boundary : the boundary of the linearly stable region

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> a, tau = fn.params("a tau")
    >>> wright = fn.Model({x: -a * x(fn.t - tau) * (1 + x(fn.t))}, {a: 1.0, tau: 1.0})
    >>> curve = fn.continue_hopf(fn.hopf_point(wright, "a", 1.0, 2.0), "tau", n_points=5)
    >>> bool(abs(curve.x * curve.y - math.pi / 2).max() < 1e-10)
    True
    """
    model = hopf.model
    xn = hopf.name
    if y == xn:
        raise OptionError(f"the second parameter must differ from {xn!r}")
    if y not in model.param_names:
        raise ParameterError(
            f"unknown parameter {y!r} (parameters: {', '.join(model.param_names)})"
        )
    if direction not in (1, -1, 0):
        raise OptionError(f"direction = {direction!r} must be 1, -1 or 0 (both)")
    n_points = count_option("n_points", n_points, minimum=2, where="continue_hopf")
    step, max_step, tol = (
        number_option(k, v, positive=True, where="continue_hopf")
        for k, v in (("step", step), ("max_step", max_step), ("tol", tol))
    )
    if not step <= max_step:
        raise OptionError(f"need 0 < step <= max_step, got {step!r}, {max_step!r}")
    opts = dict(
        n_points=int(n_points), tol=tol, lyapunov=lyapunov, roots=8,
        x_range=_range(x_range, "x_range"),
        y_range=_range(y_range, "y_range"),
    )  # fmt: skip
    runs = []
    for sign in (1.0, -1.0) if direction == 0 else (float(direction),):
        system = _HopfSystem(model, hopf, y)
        tracer = _HopfTracer(system, hopf, y, opts)
        start = tracer.start(sign)
        control = IterationController(step / 64, max_step, fast=3, slow=6, grow=1.5)
        run(follow(tracer, start, control, step, max_steps=10 * n_points))
        runs.append(tracer)
    first = runs[0]
    records = list(first.records)
    special = list(first.special)
    stop = first.stop_reason
    if len(runs) == 2:
        back = runs[1]
        offset = len(back.records) - 1
        records = back.records[::-1] + records[1:]
        special = [_reindexed(p, offset - p.index - 1) for p in back.special[::-1]] + [
            _reindexed(p, p.index + offset) for p in special
        ]
        stop = f"one way: {back.stop_reason}; the other: {stop}"
    return _curve(hopf, y, records, special, stop, lyapunov)


def _reindexed(p, index: int):
    import dataclasses

    return dataclasses.replace(p, index=index)


def _curve(hopf, y, records, special, stop, lyapunov) -> HopfCurve:
    sys_ix = list(hopf.model.param_names).index(hopf.name)
    sys_iy = list(hopf.model.param_names).index(y)
    xs = np.array([r.P[sys_ix] for r in records])
    ys = np.array([r.P[sys_iy] for r in records])
    om = np.array([r.omega for r in records])
    lyap = np.array([r.l1 for r in records]) if lyapunov else None
    bautin: list[int] = []
    if lyap is not None:
        sgn = np.sign(lyap)
        bautin = [i for i in range(1, len(sgn)) if sgn[i] * sgn[i - 1] < 0]
    return HopfCurve(
        x_name=hopf.name,
        y_name=y,
        x=xs,
        y=ys,
        omega=om,
        lyapunov=lyap,
        bautin=bautin,
        stop_reason=stop,
        hopf=hopf,
        unstable=np.array([r.unstable for r in records]),
        special=special,
    )
