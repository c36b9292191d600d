"""Exact stability boundaries in a two-parameter plane.

A characteristic root crosses the imaginary axis at ``lambda = j omega`` where
``f(omega; x, y) = det Delta(j omega; x, y) = 0``: two real equations (real and imaginary
parts). Their solution curves (the *D-subdivision* curves, one per crossing frequency) split the
plane into regions with a constant number of unstable roots; the stability boundary is the part
of them where every other root is in the open left half-plane. Roots crossing at ``omega = 0``
give a separate curve ``det Delta(0; x, y) = 0``.

Two methods:

``"dsubdivision"``
    When ``f`` is affine in ``(x, y)`` for every ``omega`` (as for gains that enter the
    characteristic function linearly, e.g. RCP's ``alpha`` and ``beta``), the two equations are
    solved exactly for ``(x, y)`` at each ``omega`` of an adaptive grid: every D-curve in the box
    is found, with no seeds and no iteration.
``"continuation"``
    For any dependence: boundary points are bracketed on a coarse stability chart (one batch),
    located on the chart's edges by Newton's method in ``(t, omega)`` for all edges at once,
    chained through the chart's cells into curves and refined on the perpendicular bisectors of
    their chords until the points are ``resolution`` apart, every gap at once
    (:mod:`fluidnet.stability.boundarybatch`; a model's equilibria continued from the chart's,
    not searched again). Where that does not settle the curves (two crossings in one cell,
    a corner between a Hopf and a zero curve), each curve ``f(omega; x, y) = 0`` is followed
    instead from Brent-located seeds in ``(x, y, omega)`` by pseudo-arclength continuation
    (Newton corrector) until it leaves the box. The batched method finds the curves that bound
    the stable region; the traced ones also go on past the corners where they stop bounding
    it. A piece that crosses no edge of the chart's cells (a pocket between two chart points)
    is not seeded so; for systems of up to 12 states (``check_edges``) the certified
    stability switches along the box's four edges seed the pieces that touch the box, traced
    by continuation where no curve found passes.

Both mark a curve point ``on_boundary`` when no characteristic root lies in the open right
half-plane there (checked with :func:`~fluidnet.linear.roots.characteristic_roots`; the
crossing roots themselves sit on the axis): the point then bounds the stable region. The flag is
computed at about 64 points per curve and located by bisection where it changes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..continuation import IterationController, Stop, follow, run
from ..continuation.arclength import ArclengthStepper, CorrectionFailed, CurvePoint, null_tangent
from ..errors import AnalysisError, FluidnetError, OptionError
from ..linear.batch import rightmost_roots
from ..linear.lineardde import LinearDDE
from ..linear.roots import characteristic_roots
from ..options import count_option, number_option
from ..overrides import merge_params, parameter_value
from ..threads import blas_bound
from .boundarybatch import boundary_curves
from .system import ContinuedSystems, SystemFactory

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..sweep.executors import ExecutorSpec
    from ..symbolic.model import Model

__all__ = ["BoundaryCurve", "StabilityBoundary", "stability_boundary"]

#: Largest system whose box edges :func:`stability_boundary` checks by default (four certified
#: sweeps: 0.05-0.2 s up to here; 1-25 s for the networks of 20-100 states of ``make bench``).
EDGE_CHECK_STATES = 12


@dataclass(kw_only=True)
class BoundaryCurve:
    """One D-subdivision curve inside the box.

    Attributes
    ----------
    x, y : numpy.ndarray
        Parameter values along the curve.
    omega : numpy.ndarray
        The crossing frequency (rad/s) at each point (0 on a ``"zero"`` curve).
    on_boundary : numpy.ndarray of bool
        True where no root is in the open right half-plane: the point is on the boundary of
        the stable region (corners where two curves meet included).
    kind : str
        ``"hopf"`` (a complex pair ``+-j omega`` on the axis) or ``"zero"`` (a root at 0).
    """

    x: np.ndarray
    y: np.ndarray
    omega: np.ndarray
    on_boundary: np.ndarray
    kind: str

    def __len__(self) -> int:
        return int(self.x.size)


@dataclass(kw_only=True)
class StabilityBoundary:
    """The result of :func:`stability_boundary`.

    Attributes
    ----------
    x_name, y_name : str
    x_range, y_range : (float, float)
    curves : list of BoundaryCurve
        Every D-subdivision curve found in the box (boundary and non-boundary parts).
    method : str
    n_seed : int or None
        ``"continuation"``: the size of the coarse chart that seeded the curves. A piece of
        the boundary that crosses no edge of its cells is not found (a small unstable pocket
        between two stable chart points) unless it touches the box's edges, which
        ``edges_checked`` covers; a larger ``n_seed`` resolves smaller pieces. ``None`` for
        D-subdivision.
    edges_checked : bool or None
        ``"continuation"``: True when every stability switch along the box's four edges
        (:func:`~fluidnet.stability.critical.stability_switches`, certified) lies on a curve
        found, those the seed chart missed traced from there; False when that check could
        not be made (a warning says why); ``None`` when it was not made (``check_edges``) or
        for D-subdivision, which finds every curve.
    """

    x_name: str
    y_name: str
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    curves: list[BoundaryCurve]
    method: str
    fixed: dict[str, float] = field(default_factory=dict)
    n_seed: int | None = None
    edges_checked: bool | None = None

    def segments(self) -> list[BoundaryCurve]:
        """The contiguous runs of curve points that lie on the stability boundary."""
        out = []
        for c in self.curves:
            mask = c.on_boundary
            edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
            for a, b in zip(edges[::2], edges[1::2], strict=True):
                out.append(
                    BoundaryCurve(
                        x=c.x[a:b],
                        y=c.y[a:b],
                        omega=c.omega[a:b],
                        on_boundary=mask[a:b],
                        kind=c.kind,
                    )
                )
        return out

    def _joined(self, attr: str) -> np.ndarray:
        parts = []
        for seg in self.segments():
            parts.append(getattr(seg, attr))
            parts.append(np.array([np.nan]))
        return np.concatenate(parts[:-1]) if parts else np.zeros(0)

    @property
    def x(self) -> np.ndarray:
        """x along the stability boundary (segments separated by NaN)."""
        return self._joined("x")

    @property
    def y(self) -> np.ndarray:
        """y along the stability boundary (segments separated by NaN)."""
        return self._joined("y")

    @property
    def omega(self) -> np.ndarray:
        """Crossing frequency along the stability boundary (rad/s, NaN-separated)."""
        return self._joined("omega")

    def to_xarray(self) -> Any:
        """Every D-curve's points as an :class:`xarray.Dataset` along ``point``.

        Returns
        -------
        xarray.Dataset
            ``x_name`` and ``y_name`` values (variables named after the parameters),
            ``omega`` (rad/s), ``on_boundary`` (bool), ``curve`` (the curve's index) and
            ``kind`` along ``point``; the ranges, method and fixed values as attributes.
        """
        import xarray as xr

        def joined(attr: str) -> np.ndarray:
            parts = [np.asarray(getattr(c, attr)) for c in self.curves]
            return np.concatenate(parts) if parts else np.zeros(0)

        curve = np.concatenate(
            [np.full(len(c), i) for i, c in enumerate(self.curves)] or [np.zeros(0, int)]
        )
        kind = np.concatenate([np.full(len(c), c.kind) for c in self.curves] or [np.zeros(0, str)])
        dim = "point"
        return xr.Dataset(
            {
                self.x_name: (dim, joined("x")),
                self.y_name: (dim, joined("y")),
                "omega": (dim, joined("omega"), {"units": "rad/s"}),
                "on_boundary": (dim, joined("on_boundary").astype(bool)),
                "curve": (dim, curve.astype(int)),
                "kind": (dim, kind.astype(str)),
            },
            attrs={
                "x_name": self.x_name,
                "y_name": self.y_name,
                "x_range": list(self.x_range),
                "y_range": list(self.y_range),
                "method": self.method,
                **({} if self.n_seed is None else {"n_seed": self.n_seed}),
                **(
                    {} if self.edges_checked is None else {"edges_checked": int(self.edges_checked)}
                ),
                **{f"fixed_{k}": v for k, v in self.fixed.items()},
            },
        )

    def plot(
        self, ax: Axes | None = None, *, all_curves: bool = True, color: str = "C3", **kwargs: Any
    ) -> Axes:
        """Draw the stability boundary (solid) and the other D-curves (thin, dotted).

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        if all_curves:
            for c in self.curves:
                ax.plot(c.x, c.y, ls=":", lw=0.8, color="0.5")
        kwargs.setdefault("lw", 2.0)
        for i, seg in enumerate(self.segments()):
            style = "-" if seg.kind == "hopf" else "--"
            ax.plot(
                seg.x,
                seg.y,
                style,
                color=color,
                label="stability boundary" if i == 0 else None,
                **kwargs,
            )
        ax.set_xlim(*self.x_range)
        ax.set_ylim(*self.y_range)
        ax.set_xlabel(self.x_name)
        ax.set_ylabel(self.y_name)
        return ax

    def __repr__(self) -> str:
        n = sum(len(c) for c in self.curves)
        nb = sum(int(c.on_boundary.sum()) for c in self.curves)
        seeded = ""
        if self.n_seed is not None:
            where = " inside the box" if self.edges_checked else ""
            seeded = (
                f"; pieces{where} crossing no cell edge of the {self.n_seed} x {self.n_seed} "
                "seed chart are not found"
            )
        return (
            f"StabilityBoundary({self.x_name} in {self.x_range}, {self.y_name} in "
            f"{self.y_range}, {len(self.curves)} curves, {n} points ({nb} on the boundary), "
            f"method={self.method!r}{seeded})"
        )


# ---------------------------------------------------------------------- helpers
class _Plane:
    """``det Delta(s)`` at points of the (x, y) plane, with a small cache of linear systems (a
    model's equilibria continued from point to point: :class:`~.system.ContinuedSystems`)."""

    def __init__(self, factory: SystemFactory, x: str, y: str):
        self.factory = factory
        self.systems = ContinuedSystems(factory)
        self.xn, self.yn = x, y
        self._cache: dict[tuple[float, float], LinearDDE] = {}

    def lin(self, x: float, y: float) -> LinearDDE:
        key = (float(x), float(y))
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = self.systems(**{self.xn: key[0], self.yn: key[1]})
        return self._cache[key]

    def det(self, x: float, y: float, s) -> np.ndarray:
        return self.lin(x, y).characteristic(s)


def _norm_bound(plane: _Plane, xr, yr) -> float:
    """Largest ``||A0|| + sum ||A_k||`` over the corners and centre of the box."""
    best = 0.0
    for x in (xr[0], 0.5 * (xr[0] + xr[1]), xr[1]):
        for y in (yr[0], 0.5 * (yr[0] + yr[1]), yr[1]):
            lin = plane.lin(x, y)
            b = np.linalg.norm(lin.A0, 2) + sum(np.linalg.norm(a, 2) for a in lin.A)
            best = max(best, float(b))
    return best


def _affine_coefficients(plane: _Plane, xr, yr, omegas: np.ndarray):
    """``a, b, c`` with ``f = a + b (x - x0) + c (y - y0)`` if f is affine, else None."""
    x0, y0 = 0.5 * (xr[0] + xr[1]), 0.5 * (yr[0] + yr[1])
    hx, hy = 0.5 * (xr[1] - xr[0]), 0.5 * (yr[1] - yr[0])
    s = 1j * omegas
    f0 = plane.det(x0, y0, s)
    b = (plane.det(x0 + hx, y0, s) - f0) / hx
    c = (plane.det(x0, y0 + hy, s) - f0) / hy
    size = np.abs(f0) + np.abs(b) * hx + np.abs(c) * hy
    for fx, fy in ((0.37, -0.61), (-0.83, 0.29), (0.91, 0.88)):
        x, y = x0 + fx * hx, y0 + fy * hy
        pred = f0 + b * (x - x0) + c * (y - y0)
        if np.any(np.abs(plane.det(x, y, s) - pred) > 1e-9 * size):
            return None
    return (x0, y0), f0, b, c


def _solve_affine(a, b, c):
    """Real (dx, dy) with ``a + b dx + c dy = 0`` (complex a, b, c), per entry."""
    det = b.real * c.imag - b.imag * c.real
    scale = np.abs(b) * np.abs(c)
    with np.errstate(all="ignore"):
        dx = (-a.real * c.imag + a.imag * c.real) / det
        dy = (-b.real * a.imag + b.imag * a.real) / det
    bad = np.abs(det) <= 1e-13 * scale
    dx[bad] = np.nan
    dy[bad] = np.nan
    return dx, dy


def _inside(x, y, xr, yr, slack=0.0):
    sx, sy = slack * (xr[1] - xr[0]), slack * (yr[1] - yr[0])
    return (x >= xr[0] - sx) & (x <= xr[1] + sx) & (y >= yr[0] - sy) & (y <= yr[1] + sy)


# ---------------------------------------------------------------------- D-subdivision (affine)
def _dsubdivision(plane: _Plane, xr, yr, omega_max: float, resolution: float):
    probe = np.geomspace(omega_max * 1e-3, omega_max, 7)
    if _affine_coefficients(plane, xr, yr, probe) is None:
        return None
    sx, sy = xr[1] - xr[0], yr[1] - yr[0]
    x0, y0 = 0.5 * (xr[0] + xr[1]), 0.5 * (yr[0] + yr[1])
    hx, hy = 0.5 * sx, 0.5 * sy

    def xy(w):
        """The D-curve point at each omega: the affine equations solved exactly."""
        s = 1j * np.atleast_1d(np.asarray(w, dtype=float))
        f0 = plane.det(x0, y0, s)
        b = (plane.det(x0 + hx, y0, s) - f0) / hx
        c = (plane.det(x0, y0 + hy, s) - f0) / hy
        dx, dy = _solve_affine(f0, b, c)
        return x0 + dx, y0 + dy

    w = np.unique(
        np.concatenate(
            [np.geomspace(omega_max * 1e-7, omega_max, 3000), np.linspace(0, omega_max, 3000)[1:]]
        )
    )
    X, Y = xy(w)
    for _ in range(40):
        inside = _inside(X, Y, xr, yr, 0.05)
        near = inside[1:] | inside[:-1]
        gap = np.hypot(np.diff(X) / sx, np.diff(Y) / sy)
        gap = np.where(np.isfinite(gap), gap, np.inf)
        bad = near & (gap > resolution) & (np.diff(w) > 1e-12 * w[1:])
        if not bad.any():
            break
        i = np.flatnonzero(bad)
        mid = 0.5 * (w[i] + w[i + 1])
        xm, ym = xy(mid)
        w = np.insert(w, i + 1, mid)
        X = np.insert(X, i + 1, xm)
        Y = np.insert(Y, i + 1, ym)
    curves = _split_inside(w, X, Y, xr, yr, xy)
    zero = _zero_line(plane, xr, yr, resolution)
    return curves + ([zero] if zero is not None else [])


def _split_inside(w, X, Y, xr, yr, xy):
    """Contiguous runs inside the box, each ended exactly on the box edge (by bisection)."""
    ok = _inside(X, Y, xr, yr) & np.isfinite(X) & np.isfinite(Y)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
    out = []
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        ws, xs, ys = list(w[a:b]), list(X[a:b]), list(Y[a:b])
        if a > 0 and np.isfinite(X[a - 1]):
            we = _edge_crossing(xy, w[a - 1], w[a], xr, yr)
            if we is not None:
                xe, ye = xy(we)
                ws.insert(0, we)
                xs.insert(0, float(xe[0]))
                ys.insert(0, float(ye[0]))
        if b < w.size and np.isfinite(X[b]):
            we = _edge_crossing(xy, w[b - 1], w[b], xr, yr)
            if we is not None:
                xe, ye = xy(we)
                ws.append(we)
                xs.append(float(xe[0]))
                ys.append(float(ye[0]))
        if len(ws) >= 2:
            out.append((np.array(xs), np.array(ys), np.array(ws), "hopf"))
    return out


def _edge_crossing(xy, w_in, w_out, xr, yr):
    """The omega in (w_in, w_out) where the curve crosses the box edge."""
    from ..brent import brentq  # scipy: imported where used

    xo, yo = (float(v[0]) for v in xy(w_out))
    for val, lo, hi, is_x in ((xo, xr[0], xr[1], True), (yo, yr[0], yr[1], False)):
        for edge in (lo, hi):
            if (val - edge) * (1 if edge == hi else -1) > 0:

                def g(w, edge=edge, is_x=is_x):
                    px, py = xy(w)
                    return float((px if is_x else py)[0]) - edge

                try:
                    return brentq(g, w_in, w_out, xtol=1e-300, rtol=1e-15)
                except ValueError:
                    continue
    return None


def _zero_line(plane: _Plane, xr, yr, resolution: float):
    """The curve det Delta(0; x, y) = 0 in the box when it is a line (affine case)."""
    x0, y0 = 0.5 * (xr[0] + xr[1]), 0.5 * (yr[0] + yr[1])
    hx, hy = 0.5 * (xr[1] - xr[0]), 0.5 * (yr[1] - yr[0])
    f0 = complex(plane.det(x0, y0, 0.0)).real
    b = (complex(plane.det(x0 + hx, y0, 0.0)).real - f0) / hx
    c = (complex(plane.det(x0, y0 + hy, 0.0)).real - f0) / hy
    if abs(b) * hx + abs(c) * hy <= 1e-14 * max(abs(f0), 1e-300):
        return None
    t = np.linspace(0.0, 1.0, int(math.ceil(2.0 / resolution)) + 1)
    if abs(c) * hy >= abs(b) * hx:  # y as a function of x
        x = xr[0] + t * (xr[1] - xr[0])
        y = y0 - (f0 + b * (x - x0)) / c
    else:
        y = yr[0] + t * (yr[1] - yr[0])
        x = x0 - (f0 + c * (y - y0)) / b
    ok = _inside(x, y, xr, yr, 1e-12)
    if ok.sum() < 2:
        return None
    return (x[ok], y[ok], np.zeros(int(ok.sum())), "zero")


# ---------------------------------------------------------------------- continuation
class _Trace(ArclengthStepper):
    """The pseudo-arclength stepper of :func:`_trace`: the curve's points until it leaves the
    box (ending exactly on its edge), ``stop(u)`` holds, or it closes."""

    def __init__(self, curve, v0, lo, hi, stop, scales):
        super().__init__(curve, chord=True, tol=1e-12, loose_tol=1e-9, maxiter=20)
        self.v0, self.lo, self.hi, self.stop, self.scales = v0, lo, hi, stop, scales
        self.pts = [v0]
        self.closed = False

    def accepted(self, point, attempt, h_next):
        v, v_new, h = point.u, attempt.point, attempt.h
        xy = v_new[:2]
        lo, hi = self.lo, self.hi
        if np.any(xy < lo) or np.any(xy > hi):
            # land exactly on the box edge that was crossed
            j = int(np.argmax(np.maximum(lo - xy, xy - hi)))
            edge = lo[j] if xy[j] < lo[j] else hi[j]
            guess = v + (edge - v[j]) / (v_new[j] - v[j]) * (v_new - v)
            try:
                self.pts.append(self.correct(guess, point, _unit(v.size, j), edge)[0])
            except CorrectionFailed:
                pass
            return Stop(self.pts)
        self.pts.append(v_new)
        if self.stop(v_new * self.scales):
            return Stop(self.pts)
        if len(self.pts) > 8 and np.linalg.norm(v_new - self.v0) < 0.75 * h:
            self.pts.append(self.v0)
            self.closed = True
            return Stop(self.pts)
        J_new = self.curve.jacobian(v_new)
        return CurvePoint(u=v_new, tangent=null_tangent(J_new, point.tangent), J=J_new)

    def failed(self, point, error):
        return self.pts

    def finish(self, point):
        return self.pts


class _ScaledCurve:
    """``G(u) = 0`` in coordinates ``u / scales``, with a forward-difference Jacobian."""

    def __init__(self, G, scales):
        self.G, self.scales = G, scales

    def residual(self, v):
        return self.G(v * self.scales)

    def jacobian(self, v):
        d = v.size
        g0 = self.residual(v)
        J = np.empty((d - 1, d))
        for j in range(d):
            h = 1e-7 * max(1.0, abs(v[j]))
            e = np.zeros(d)
            e[j] = h
            J[:, j] = (self.residual(v + e) - g0) / h
        return J


def _unit(d: int, j: int) -> np.ndarray:
    e = np.zeros(d)
    e[j] = 1.0
    return e


def _trace(G, u0, scales, xr, yr, h_max, max_steps, stop, hold=0):
    """Pseudo-arclength continuation of ``G(u) = 0`` (``G: R^d -> R^(d-1)``) from ``u0``.

    The continuation engine (:func:`fluidnet.continuation.follow`) with a chord corrector (the
    Jacobian of the last accepted point, by forward differences) in scaled coordinates
    ``u / scales``, the step doubled after each accepted point (up to ``h_max``) and halved
    after a failed one (down to ``1e-7 h_max``). Returns the points of the curve through
    ``u0`` until it leaves the box (ending exactly on its edge), ``stop(u)`` holds, or it
    closes; at most ``max_steps`` points each way. The seed is first corrected with coordinate
    ``hold`` kept fixed.
    """
    curve = _ScaledCurve(G, scales)
    d = u0.size
    v0 = u0 / scales
    J0 = curve.jacobian(v0)
    seed = ArclengthStepper(curve, chord=True, tol=1e-12, loose_tol=1e-9, maxiter=20)
    try:
        v0 = seed.correct(v0, CurvePoint(v0, np.zeros(d), J0), _unit(d, hold), v0[hold])[0]
    except CorrectionFailed:
        return None
    J0 = curve.jacobian(v0)
    t0 = np.linalg.svd(J0)[2][-1]
    lo = np.array([xr[0], yr[0]]) / scales[:2]
    hi = np.array([xr[1], yr[1]]) / scales[:2]
    branches = []
    for sign in (1.0, -1.0):
        tracer = _Trace(curve, v0, lo, hi, stop, scales)
        control = IterationController(1e-7 * h_max, h_max, fast=None, grow=2.0, cut=0.5)
        start = CurvePoint(u=v0, tangent=sign * t0, J=J0)
        pts = run(follow(tracer, start, control, h_max, max_steps=max_steps))
        branches.append(np.array(pts) * scales)
        if tracer.closed:
            return branches[0]
    fwd, bwd = branches
    return np.vstack([bwd[::-1], fwd[1:]])


def _brackets(factory, xn, yn, xr, yr, n_seed, executor, progress):
    """Edges of a coarse chart's cells whose two ends differ in stability."""
    from .chart import stability_chart

    gx = np.linspace(xr[0], xr[1], n_seed)
    gy = np.linspace(yr[0], yr[1], n_seed)
    ds = stability_chart(factory, {xn: gx, yn: gy}, executor=executor, progress=progress)
    st = ds["stable"].values
    ok = np.isfinite(ds["abscissa"].values)
    out = []
    for i in range(n_seed):
        for j in range(n_seed):
            for di, dj in ((1, 0), (0, 1)):
                i2, j2 = i + di, j + dj
                if i2 >= n_seed or j2 >= n_seed or st[i, j] == st[i2, j2]:
                    continue
                if ok[i, j] and ok[i2, j2]:
                    out.append(((gx[i], gy[j]), (gx[i2], gy[j2])))
    return out


def _locate(factory, xn, yn, bracket):
    """The boundary point on a bracketing edge (Brent's method on the abscissa) and omega."""
    from ..brent import brentq  # scipy: imported where used

    (xa, ya), (xb, yb) = bracket

    def top(t):
        x, y = xa + t * (xb - xa), ya + t * (yb - ya)
        return characteristic_roots(factory(**{xn: x, yn: y}), k=2)[0]

    t = brentq(lambda v: top(v).real, 0.0, 1.0, xtol=1e-14)
    return xa + t * (xb - xa), ya + t * (yb - ya), abs(top(t).imag)


def _near_segment(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Smallest distance from the columns of ``points`` (2 x n) to the segment [a, b]."""
    ab = b - a
    t = np.clip(((points - a[:, None]).T @ ab) / max(ab @ ab, 1e-300), 0.0, 1.0)
    proj = a[:, None] + ab[:, None] * t[None, :]
    return float(np.min(np.hypot(*(points - proj)), initial=np.inf))


def _curve_through(plane, xr, yr, x, y, w, hold, omega_scale, resolution):
    """The D-curve through the crossing at ``(x, y)`` with frequency ``w``, traced both ways
    until it leaves the box (a Hopf curve until its frequency reaches 0), as ``(x, y, omega,
    kind)``; ``hold`` is the coordinate kept fixed while the seed is corrected. None when
    the seed cannot be corrected."""
    sx, sy = xr[1] - xr[0], yr[1] - yr[0]
    w_eps = 1e-6 * omega_scale

    def G_hopf(u):
        try:
            f = complex(plane.det(u[0], u[1], 1j * u[2]))
        except FluidnetError:  # outside the parameters' bounds: let the corrector back off
            return np.full(2, np.nan)
        return np.array([f.real, f.imag])

    def G_zero(u):
        try:
            return np.array([complex(plane.det(u[0], u[1], 0.0)).real])
        except FluidnetError:
            return np.full(1, np.nan)

    if w > w_eps:
        scales = np.array([sx, sy, max(w, omega_scale)])
        pts = _trace(
            G_hopf,
            np.array([x, y, w]),
            scales,
            xr,
            yr,
            resolution,
            20000,
            stop=lambda u: u[2] < w_eps,
            hold=hold,
        )
        kind = "hopf"
    else:
        scales = np.array([sx, sy])
        pts = _trace(
            G_zero,
            np.array([x, y]),
            scales,
            xr,
            yr,
            resolution,
            20000,
            stop=lambda u: False,
            hold=hold,
        )
        kind = "zero"
    if pts is not None:
        # a seed on the box's edge: the branch leaving the box lands back on it at once
        step = np.hypot((pts[1:, 0] - pts[:-1, 0]) / sx, (pts[1:, 1] - pts[:-1, 1]) / sy)
        pts = pts[np.concatenate([[True], step > 1e-12])]
    if pts is None or len(pts) < 2:
        return None
    omega = np.abs(pts[:, 2]) if kind == "hopf" else np.zeros(len(pts))
    return pts[:, 0], pts[:, 1], omega, kind


def _scaled_points(curve, xr, yr) -> np.ndarray:
    """A curve's points (2 x n) in box coordinates (each range mapped to [0, 1])."""
    return np.vstack(
        [
            (np.asarray(curve[0]) - xr[0]) / (xr[1] - xr[0]),
            (np.asarray(curve[1]) - yr[0]) / (yr[1] - yr[0]),
        ]
    )


def _continuation(plane, factory, xr, yr, n_seed, executor, progress, omega_scale, resolution):
    xn, yn = plane.xn, plane.yn
    origin = np.array([xr[0], yr[0]])
    span = np.array([xr[1] - xr[0], yr[1] - yr[0]])
    curves = []
    covered: list[np.ndarray] = []
    for bracket in _brackets(factory, xn, yn, xr, yr, n_seed, executor, progress):
        a = (np.asarray(bracket[0]) - origin) / span
        b = (np.asarray(bracket[1]) - origin) / span
        if any(_near_segment(c, a, b) < 1.5 * resolution for c in covered):
            continue  # a traced curve already crosses this edge
        x, y, w = _locate(factory, xn, yn, bracket)
        hold = 1 if bracket[0][1] == bracket[1][1] else 0  # the edge's constant coordinate
        curve = _curve_through(plane, xr, yr, x, y, w, hold, omega_scale, resolution)
        if curve is None:
            continue
        curves.append(curve)
        covered.append(_scaled_points(curve, xr, yr))
    return curves


def _edge_curves(plane, factory, xr, yr, found, omega_scale, resolution):
    """The curves through the stability switches on the box's four edges that no curve in
    ``found`` passes (within twice ``resolution``): pieces of the boundary that touch the
    box but cross no cell edge of the seed chart. Returns the new curves, and the reason
    when the switches along an edge could not be certified (else "")."""
    from .critical import stability_switches

    xn, yn = plane.xn, plane.yn
    covered = [_scaled_points(c, xr, yr) for c in found]
    new = []
    edges = (
        (xn, xr, yn, yr[0]),
        (xn, xr, yn, yr[1]),
        (yn, yr, xn, xr[0]),
        (yn, yr, xn, xr[1]),
    )
    for name, (lo, hi), other, value in edges:
        try:
            sw = stability_switches(factory, name, lo, hi, **{other: value})
        except FluidnetError as exc:
            return new, f"the switches along {other} = {value:g} were not certified: {exc}"
        for c in sw.switches:
            x, y = (c.value, value) if name == xn else (value, c.value)
            p = _scaled_points(([x], [y]), xr, yr)
            if any(np.min(np.hypot(*(q - p))) < 2 * resolution for q in covered if q.size):
                continue
            hold = 1 if name == xn else 0
            curve = _curve_through(plane, xr, yr, x, y, c.omega, hold, omega_scale, resolution)
            if curve is None:
                return new, f"the curve through the switch at ({x:g}, {y:g}) was not traced"
            new.append(curve)
            covered.append(_scaled_points(curve, xr, yr))
    return new, ""


# ---------------------------------------------------------------------- boundary marking
class _OnBoundary:
    """No root in the open right half-plane (the crossing ones sit on the axis)? Picklable."""

    def __init__(self, factory: SystemFactory, xn: str, yn: str):
        self.factory, self.xn, self.yn = factory, xn, yn
        self.systems = ContinuedSystems(factory)

    def __call__(self, point):
        x, y, _ = point
        try:
            lin = self.systems(**{self.xn: x, self.yn: y})
            roots = characteristic_roots(lin, k=2)
            top = roots.require_certified("the rightmost root")[0]
        except FluidnetError:
            return False
        return bool(top.real <= 1e-8 * (1.0 + abs(top.value)))

    def batch(self, xs: np.ndarray, ys: np.ndarray, near: np.ndarray | None = None) -> np.ndarray:
        """The flag at many points at once (points in curve order continue each other;
        ``near``: the equilibria found there, continued, see
        :meth:`~.system.SystemFactory.batch`)."""
        systems = self.factory.batch({self.xn: xs, self.yn: ys}, near=near)
        skip = np.zeros(xs.size, dtype=bool)
        skip[list(systems.errors)] = True
        skip[list(systems.separate)] = True
        found = rightmost_roots(systems.stack, system=systems.system, skip=skip)
        top = found.root
        flags = np.isfinite(top) & (np.real(top) <= 1e-8 * (1.0 + np.abs(top)))
        for k in systems.separate:
            flags[k] = self((float(xs[k]), float(ys[k]), 0.0))
        return flags


def _mark(
    marker: _OnBoundary, raw, executor, progress, samples: int = 64, equilibria=None
) -> list[np.ndarray]:
    """``on_boundary`` flags of every curve point.

    The flag can only change where another D-curve crosses, so it is evaluated at about
    ``samples`` points per curve — all samples of all curves as one batch
    (:func:`~fluidnet.linear.batch.rightmost_roots`, continued along each curve) — and located
    by bisection between samples that differ. ``equilibria``: a model's equilibria at every
    point of every curve (continued there, not searched again), or ``None``.
    """
    picks = []
    for cx, _, _, _ in raw:
        n = len(cx)
        picks.append(np.unique(np.linspace(0, n - 1, min(n, samples)).round().astype(int)))
    xs = np.array(
        [float(cx[i]) for (cx, _, _, _), idx in zip(raw, picks, strict=True) for i in idx]
    )
    ys = np.array(
        [float(cy[i]) for (_, cy, _, _), idx in zip(raw, picks, strict=True) for i in idx]
    )
    near = None
    if equilibria is not None and all(e is not None for e in equilibria):
        near = np.concatenate([e[idx] for e, idx in zip(equilibria, picks, strict=True)])
    done = marker.batch(xs, ys, near) if xs.size else np.zeros(0, dtype=bool)
    out, k = [], 0
    for (cx, cy, cw, _), idx in zip(raw, picks, strict=True):
        known = dict(zip(idx.tolist(), done[k : k + idx.size].tolist(), strict=True))
        k += idx.size

        def flag(i, cx=cx, cy=cy, cw=cw, known=known):
            if i not in known:
                known[i] = marker((float(cx[i]), float(cy[i]), float(cw[i])))
            return known[i]

        for a, b in zip(idx[:-1], idx[1:], strict=True):
            lo, hi = int(a), int(b)
            while hi - lo > 1 and flag(lo) != flag(hi):
                mid = (lo + hi) // 2
                if flag(mid) == flag(lo):
                    lo = mid
                else:
                    hi = mid
        flags = np.zeros(len(cx), dtype=bool)
        order = sorted(known)
        for a, b in zip(order, order[1:] + [len(cx)], strict=True):
            flags[a:b] = known[a]
        out.append(flags)
    return out


@blas_bound
def stability_boundary(
    model_or_factory: Model | Callable[..., Any],
    x: str,
    y: str,
    *,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    method: str = "auto",
    omega_max: float | None = None,
    resolution: float = 0.005,
    n_seed: int = 16,
    check_edges: bool | None = None,
    executor: ExecutorSpec = None,
    progress: bool | None = None,
    params: Mapping[str, float] | None = None,
    **fixed: float,
) -> StabilityBoundary:
    """The exact stability boundary in the plane of two parameters.

    Parameters
    ----------
    model_or_factory : Model or callable
        See :mod:`fluidnet.stability.system`.
    x, y : str
        The two parameters.
    x_range, y_range : (float, float)
        The box searched.
    method : {"auto", "dsubdivision", "continuation"}
        ``"auto"`` uses D-subdivision when the characteristic function is affine in ``(x, y)``
        and continuation otherwise (see the module docstring).
    omega_max : float, optional
        Largest crossing frequency considered by D-subdivision. Default: the bound
        ``||A0|| + sum ||A_k||`` (every root on the imaginary axis satisfies
        ``|omega| <= ||A0|| + sum ||A_k||``), taken over the corners and centre of the box.
    resolution : float, default 0.005
        Largest gap between neighbouring curve points, relative to the box size.
    n_seed : int, default 16
        Continuation: the coarse chart that brackets boundary points is ``n_seed x n_seed``;
        boundary pieces that cross no chart cell edge are missed (the result's repr says so).
        The tandem law of two TCP classes over two RED links has an unstable pocket on the
        edge ``K2 = 5.1e-4`` of the box ``d1`` in (0.017, 2.57), ``K2`` in (3.4e-4, 5.1e-4),
        for ``d1`` in (0.235, 0.352), between two stable points of the 16 x 16 chart: it is
        found with ``n_seed=40``, and by the edge check.
    check_edges : bool, optional
        Continuation: also find every stability switch along the box's four edges
        (:func:`~fluidnet.stability.critical.stability_switches`, certified) and trace the
        curves through those that no curve seeded by the chart passes, so that no piece
        touching the box is missed (the result's ``edges_checked``). It costs four
        certified sweeps: 0.05-0.2 s for the laws of a few states in ``make bench``, 1-25 s
        for its networks of 20-100 states, whose edges cross tens of D-curves. Default:
        checked for systems of at most ``fluidnet.stability.boundary.EDGE_CHECK_STATES`` (12)
        states.
    executor, progress
        For the coarse chart of the point-by-point continuation, when the batched one does not
        settle the curves (see :mod:`fluidnet.sweep`); the batched method and the boundary
        marking are batched computations in this process.
    params : dict, optional
        Values of the other parameters ``{name: value}``.
    **fixed
        The same as keywords (a name given both ways is an error).

    Returns
    -------
    StabilityBoundary
        ``.curves`` (every D-curve in the box, with ``on_boundary`` marks), ``.x``, ``.y``,
        ``.omega`` along the boundary (NaN-separated segments), ``.plot()``.

    Raises
    ------
    AnalysisError
        For ``method="dsubdivision"`` on a non-affine dependence.
    OptionError
        For a bad range (not a pair ``low < high`` of finite numbers), method, ``resolution``,
        ``n_seed``, ``check_edges`` or ``omega_max``.
    ParameterError
        For an end of a range or a fixed value that is not a real number (see
        :mod:`fluidnet.overrides`), or an unknown parameter name (models).

    See Also
    --------
    stability_chart : the verdict at grid points
    critical_value : one point of the boundary, along one parameter
    continue_hopf : the boundary as a curve of Hopf points, with criticality

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> b = fn.stability_boundary(fn.models.rcp(), "alpha", "beta", x_range=(0.0, 2.0),
    ...                           y_range=(0.01, 0.6), d0=1.0)
    >>> w = b.omega[np.isfinite(b.omega) & (b.omega > 0)]      # alpha = w sin w, beta = w^2 cos w
    >>> a = b.x[np.isfinite(b.omega) & (b.omega > 0)]
    >>> bool(np.max(np.abs(a - w * np.sin(w))) < 1e-9)
    True
    """
    xr = _as_range(x_range, "x_range", x)
    yr = _as_range(y_range, "y_range", y)
    if method not in ("auto", "dsubdivision", "continuation"):
        raise OptionError(f"method = {method!r}: use 'auto', 'dsubdivision' or 'continuation'")
    if x == y:
        raise OptionError(f"x and y must be two different parameters, got {x!r} twice")
    resolution = number_option("resolution", resolution, where="stability_boundary")
    if not 0 < resolution < 0.5:
        raise OptionError(f"resolution = {resolution!r} must lie in (0, 0.5)")
    n_seed = count_option("n_seed", n_seed, minimum=2, where="stability_boundary")
    if check_edges is not None and not isinstance(check_edges, (bool, np.bool_)):
        raise OptionError(f"check_edges = {check_edges!r} must be True, False or None")
    if omega_max is not None:
        omega_max = number_option("omega_max", omega_max, positive=True, where="stability_boundary")
    fixed = merge_params(params, fixed, "stability_boundary")
    factory = SystemFactory(model_or_factory, fixed)
    factory.check_names([x, y])
    plane = _Plane(factory, x, y)
    bound = _norm_bound(plane, xr, yr)
    w_max = omega_max if omega_max is not None else 1.05 * bound
    if not (w_max > 0 and math.isfinite(w_max)):
        raise AnalysisError(
            f"the bound ||A0|| + sum ||A_k|| on the crossing frequencies over the box is "
            f"{bound:g}: give omega_max"
        )
    raw = None
    equilibria = None
    flags = None
    edges_checked = None
    used = method
    if method in ("auto", "dsubdivision"):
        raw = _dsubdivision(plane, xr, yr, w_max, resolution)
        used = "dsubdivision"
        if raw is None and method == "dsubdivision":
            raise AnalysisError(
                f"det Delta(j omega) is not affine in ({x}, {y}): use method='continuation'"
            )
    if raw is None:
        lin = plane.lin(0.5 * (xr[0] + xr[1]), 0.5 * (yr[0] + yr[1]))
        w_scale = 1.0 / lin.max_delay if lin.delays else max(bound, 1.0)
        batched = boundary_curves(factory, x, y, xr, yr, n_seed, resolution, w_scale)
        if batched is not None:
            raw = [c[:4] for c in batched]
            equilibria = [c[4] for c in batched]
            # every point's flag already counted by the argument principle
            flags = [c[5] for c in batched]
        else:  # not settled in batches: traced one point at a time
            raw = _continuation(
                plane, factory, xr, yr, n_seed, executor, progress, w_scale, resolution
            )
        used = "continuation"
        if check_edges is None:
            check_edges = lin.n <= EDGE_CHECK_STATES
        if check_edges:
            extra, failure = _edge_curves(plane, factory, xr, yr, raw, w_scale, resolution)
            edges_checked = not failure
            if failure:
                warnings.warn(
                    f"stability_boundary: the box's edges were not checked ({failure}); "
                    "pieces touching them may be missing",
                    RuntimeWarning,
                    stacklevel=2,
                )
            if extra:
                raw = list(raw) + extra
                if flags is not None:  # the batch's own flags, and the new curves' marked
                    flags = flags + _mark(_OnBoundary(factory, x, y), extra, executor, progress)
    # edge points found by root finding may overshoot the box by rounding: clip them
    raw = [(np.clip(cx, *xr), np.clip(cy, *yr), cw, kind) for cx, cy, cw, kind in raw]
    if flags is None:
        marker = _OnBoundary(factory, x, y)
        flags = _mark(marker, raw, executor, progress, equilibria=equilibria)
    curves = [
        BoundaryCurve(
            x=np.asarray(cx, float),
            y=np.asarray(cy, float),
            omega=np.asarray(cw, float),
            on_boundary=f,
            kind=kind,
        )
        for (cx, cy, cw, kind), f in zip(raw, flags, strict=True)
    ]
    return StabilityBoundary(
        x_name=x,
        y_name=y,
        x_range=xr,
        y_range=yr,
        curves=curves,
        method=used,
        fixed=dict(fixed),
        n_seed=n_seed if used == "continuation" else None,
        edges_checked=edges_checked,
    )


def _as_range(r: Any, name: str, param: str) -> tuple[float, float]:
    if isinstance(r, (str, bytes, Mapping)) or np.ndim(r) != 1 or len(r) != 2:
        raise OptionError(f"{name} = {r!r} must be a pair (low, high)")
    lo, hi = (
        parameter_value(f"{name}[{i}] (of {param!r})", v, finite=False) for i, v in enumerate(r)
    )
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"{name} = {r!r}: need finite low < high")
    return lo, hi
