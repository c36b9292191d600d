"""Continuation of a Hopf point in two parameters.

The unknowns are the critical eigenvector ``q`` (complex), the frequency ``omega`` and the two
parameters; the equations are ``Delta(i omega; p1, p2) q = 0`` and the normalization
``conj(q_ref) . q = 1`` (``2n + 2`` real equations for ``2n + 3`` real unknowns), closed by the
pseudo-arclength condition. The derivatives in the parameters are central differences of the
characteristic matrix of the model's linearization (its equilibrium moves with them).
Optionally the first Lyapunov coefficient is evaluated along the curve, and a sign change
(a generalized Hopf / Bautin point, where the criticality flips) is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError, OptionError, ParameterError
from ..options import count_option, number_option
from .hopf import HopfPoint, hopf_at
from .smoothness import NonSmoothError

__all__ = ["HopfCurve", "continue_hopf"]


@dataclass(frozen=True, kw_only=True)
class HopfCurve:
    """A curve of Hopf points in a parameter plane.

    Attributes
    ----------
    x, y : str
        The two parameters (``x`` is the starting Hopf point's parameter).
    xs, ys : ndarray
        Points of the curve.
    omega : ndarray
        Crossing frequency along the curve.
    lyapunov : ndarray or None
        First Lyapunov coefficient along the curve (``nan`` where the smooth theory does not
        apply); ``None`` when not computed.
    bautin : list of int
        Indices ``i`` where ``lyapunov`` changes sign between points ``i - 1`` and ``i``.
    stop_reason : str
    """

    x: str
    y: str
    xs: np.ndarray = field(repr=False)
    ys: np.ndarray = field(repr=False)
    omega: np.ndarray = field(repr=False)
    lyapunov: np.ndarray | None = field(repr=False)
    bautin: list
    stop_reason: str
    hopf: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.xs)

    def __repr__(self) -> str:
        return (
            f"HopfCurve({self.x}-{self.y}: {len(self)} points, {self.x} in "
            f"[{self.xs.min():.6g}, {self.xs.max():.6g}], {self.y} in "
            f"[{self.ys.min():.6g}, {self.ys.max():.6g}], Bautin points {len(self.bautin)}; "
            f"stopped: {self.stop_reason})"
        )

    def plot(self, ax=None, **kwargs):
        """The curve in the ``(x, y)`` plane; supercritical parts solid, subcritical dashed."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        color = kwargs.pop("color", "C0")
        if self.lyapunov is None:
            ax.plot(self.xs, self.ys, color=color, **kwargs)
        else:
            for i in range(len(self.xs) - 1):
                sub = self.lyapunov[i] > 0 or self.lyapunov[i + 1] > 0
                ax.plot(
                    self.xs[i : i + 2],
                    self.ys[i : i + 2],
                    ls="--" if sub else "-",
                    color=color,
                    **kwargs,
                )
            for i in self.bautin:
                ax.plot(self.xs[i], self.ys[i], "s", color="k")
        ax.set(xlabel=self.x, ylabel=self.y, title="Hopf curve")
        return ax


def _residual(model, params, x, y, q, w, qref):
    lin = model.linearize(**{**params, x[0]: x[1], y[0]: y[1]})
    D = lin.characteristic_matrix(1j * w)
    r = D @ q
    nrm = np.vdot(qref, q) - 1.0
    return np.concatenate([r.real, r.imag, [nrm.real, nrm.imag]]), lin


def _system(model, params, xn, yn, v, qref, n):
    """Residual and Jacobian at ``v = (Re q, Im q, omega, x, y)``."""
    q = v[:n] + 1j * v[n : 2 * n]
    w, xv, yv = v[2 * n], v[2 * n + 1], v[2 * n + 2]
    R, lin = _residual(model, params, (xn, xv), (yn, yv), q, w, qref)
    D = lin.characteristic_matrix(1j * w)
    Dw = 1j * lin.characteristic_derivative(1j * w) @ q
    J = np.zeros((2 * n + 2, 2 * n + 3))
    J[:n, :n], J[:n, n : 2 * n] = D.real, -D.imag
    J[n : 2 * n, :n], J[n : 2 * n, n : 2 * n] = D.imag, D.real
    J[:n, 2 * n], J[n : 2 * n, 2 * n] = Dw.real, Dw.imag
    c = qref.conj()
    J[2 * n, :n], J[2 * n, n : 2 * n] = c.real, -c.imag
    J[2 * n + 1, :n], J[2 * n + 1, n : 2 * n] = c.imag, c.real
    for col, (name, val, other) in enumerate(((xn, xv, (yn, yv)), (yn, yv, (xn, xv)))):
        h = 1e-6 * max(abs(val), 1e-3)
        Rp, _ = _residual(model, params, (name, val + h), other, q, w, qref)
        Rm, _ = _residual(model, params, (name, val - h), other, q, w, qref)
        J[:, 2 * n + 1 + col] = (Rp - Rm) / (2 * h)
    return R, J


def continue_hopf(
    hopf: HopfPoint,
    y: str,
    *,
    n_points: int = 40,
    step: float = 0.02,
    max_step: float = 0.1,
    direction: int = 1,
    x_bounds: tuple[float, float] | None = None,
    y_bounds: tuple[float, float] | None = None,
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
        Points to compute.
    step, max_step : float
        Initial and largest arclength step, relative to the parameters' sizes at the start.
    direction : {1, -1}
        Start towards increasing (1) or decreasing (-1) ``y``.
    x_bounds, y_bounds : (float, float), optional
        Stop when the curve leaves them.
    lyapunov : bool
        Evaluate the first Lyapunov coefficient along the curve (flags Bautin points).
    tol : float
        Newton tolerance (scaled).

    Returns
    -------
    HopfCurve

    Raises
    ------
    OptionError
        For a bad option or ``y`` equal to the Hopf point's parameter.
    ParameterError
        For an unknown parameter.
    """
    model = hopf.model
    xn = hopf.name
    if y == xn:
        raise OptionError(f"the second parameter must differ from {xn!r}")
    if y not in model.param_names:
        raise ParameterError(
            f"unknown parameter {y!r} (parameters: {', '.join(model.param_names)})"
        )
    if direction not in (1, -1):
        raise OptionError(f"direction = {direction!r} must be 1 or -1")
    n_points = count_option("n_points", n_points, minimum=2, where="continue_hopf")
    step, max_step, tol = (
        number_option(k, v, positive=True, where="continue_hopf")
        for k, v in (("step", step), ("max_step", max_step), ("tol", tol))
    )
    params = dict(hopf.params)
    n = len(hopf.eigenvector)
    qref = hopf.eigenvector.copy()
    v = np.concatenate([qref.real, qref.imag, [hopf.omega, hopf.value, params[y]]])
    scales = np.concatenate(
        [np.ones(2 * n), [hopf.omega, max(abs(hopf.value), 1e-9), max(abs(params[y]), 1e-9)]]
    )
    points = [v.copy()]
    # initial tangent: null vector of J, oriented by the direction in y
    _, J = _system(model, params, xn, y, v, qref, n)
    tangent = _null(J * scales, None, direction)
    ds = step
    stop = f"{n_points} points computed"
    while len(points) < n_points:
        u_prev = points[-1] / scales
        u = u_prev + ds * tangent
        ok = False
        for _ in range(12):
            vv = u * scales
            try:
                R, J = _system(model, params, xn, y, vv, qref, n)
            except (AnalysisError, ParameterError) as exc:
                stop = f"linearization failed: {exc}"
                break
            A = np.vstack([J * scales, tangent])
            rhs = np.concatenate([R, [tangent @ (u - u_prev) - ds]])
            du = np.linalg.solve(A, -rhs)
            u = u + du
            if np.max(np.abs(du)) < tol:
                ok = True
                break
        if not ok:
            if ds > step / 64:
                ds /= 2
                continue
            stop = stop if stop.startswith("linearization") else "Newton failed at small step"
            break
        vv = u * scales
        if x_bounds is not None and not x_bounds[0] <= vv[2 * n + 1] <= x_bounds[1]:
            stop = f"{xn} left [{x_bounds[0]:g}, {x_bounds[1]:g}]"
            break
        if y_bounds is not None and not y_bounds[0] <= vv[2 * n + 2] <= y_bounds[1]:
            stop = f"{y} left [{y_bounds[0]:g}, {y_bounds[1]:g}]"
            break
        if vv[2 * n] <= 0:
            stop = "the frequency reached 0 (a Bogdanov-Takens or zero-Hopf point)"
            break
        points.append(vv)
        _, J = _system(model, params, xn, y, vv, qref, n)
        tangent = _null(J * scales, tangent, direction)
        ds = min(ds * 1.5, max_step)
    pts = np.array(points)
    xs, ys, om = pts[:, 2 * n + 1], pts[:, 2 * n + 2], pts[:, 2 * n]
    lyap = None
    bautin: list[int] = []
    if lyapunov:
        vals = []
        for xv, yv, w in zip(xs, ys, om, strict=True):
            try:
                hp = hopf_at(model, xn, xv, w, other_roots=(), **{**_others(params, xn), y: yv})
                vals.append(hp.lyapunov if hp.criticality != "degenerate" else 0.0)
            except (NonSmoothError, AnalysisError):
                vals.append(np.nan)
        lyap = np.array(vals)
        s = np.sign(lyap)
        bautin = [i for i in range(1, len(s)) if s[i] * s[i - 1] < 0]
    return HopfCurve(
        x=xn,
        y=y,
        xs=xs,
        ys=ys,
        omega=om,
        lyapunov=lyap,
        bautin=bautin,
        stop_reason=stop,
        hopf=hopf,
    )


def _others(params: dict, xn: str) -> dict:
    return {k: v for k, v in params.items() if k != xn}


def _null(J: np.ndarray, prev: np.ndarray | None, direction: int) -> np.ndarray:
    """Unit null vector of the ``(m, m + 1)`` matrix ``J``, oriented along ``prev`` (or with
    the sign of ``direction`` on the last component)."""
    _, _, Vh = np.linalg.svd(J)
    t = Vh[-1]
    if prev is not None:
        return t if t @ prev >= 0 else -t
    return t if t[-1] * direction >= 0 else -t
