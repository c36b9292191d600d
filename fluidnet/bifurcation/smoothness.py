"""Where the smooth theory stops: projected states and switching terms along an orbit.

Normal forms, collocation and Floquet multipliers assume a smooth vector field. A fluid model
is not smooth where a projected queue sits at 0 (``q' = max(f, 0)`` while ``q = 0``) or where a
switching term (``Heaviside``, ``Max``, ``Min``, ``Abs``, ``sign``, ``Piecewise``) changes
branch. An orbit computed for the smooth right-hand side is the model's orbit only if it stays
strictly inside the projected region and on one side of every switching surface; otherwise
these checks raise :class:`NonSmoothError` instead of returning a number that belongs to a
different (unprojected or one-branch) model.
"""

from __future__ import annotations

import numpy as np
import sympy

from ..errors import AnalysisError
from ..symbolic.switches import extract_switches
from ._system import _vectorized

__all__ = [
    "NonSmoothError",
    "NonSmoothWarning",
    "check_equilibrium_smooth",
    "check_orbit_smooth",
    "crossed_surfaces",
]

_SWITCH_TYPES = (sympy.Heaviside, sympy.Max, sympy.Min, sympy.Abs, sympy.sign, sympy.Piecewise)

#: A projected state or switching function within this fraction of its scale counts as 0.
TOUCH_TOL = 1e-9


class NonSmoothError(AnalysisError):
    """The equilibrium or orbit reaches a non-smooth surface of the model (a projected state at
    0 or a switching surface), where the smooth bifurcation theory does not apply.

    Attributes
    ----------
    surface : str
        The state held at 0 or the switching term.
    where : float
        Time on the orbit (``nan`` for an equilibrium).
    """

    def __init__(self, message: str, *, surface: str = "", where: float = float("nan")):
        super().__init__(message)
        self.surface = surface
        self.where = where


class NonSmoothWarning(UserWarning):
    """A result of the smooth theory (a normal-form prediction) reaches beyond the region where
    the model is smooth: past a projected state's 0 or across a switching surface. The result
    says so too (see :meth:`fluidnet.HopfPoint.predict`)."""


class _Switches:
    def __init__(self, form):
        _, switches = extract_switches(list(form.rhs))
        self.switches = switches
        z = tuple(lag.symbol for lag in form.lags)
        w = tuple(sw.weight for sw in switches)
        self.values = _vectorized(
            (form.x, z, form.p, w), [sw.surface for sw in switches], (len(w),)
        )
        scales = [sum(abs(a) for a in sympy.Add.make_args(sw.surface)) for sw in switches]
        self.scales = _vectorized((form.x, z, form.p, w), scales, (len(w),))

    def evaluate(self, X: np.ndarray, Z: np.ndarray, P: np.ndarray):
        npts = X.shape[0]
        Pc = np.broadcast_to(P[:, None], (len(P), npts))
        W = np.zeros((len(self.switches), npts))
        for _ in range(len(self.switches)):  # nested switches: inner weights first
            S = self.values(X.T, Z.T, Pc, W)
            W = (S > 0).astype(float).T
        return S, self.scales(X.T, Z.T, Pc, W)


def _switches(model):
    form = model.form
    if not any(e.has(*_SWITCH_TYPES) for e in form.rhs):
        return None
    return model.cached("bifurcation switches", lambda: _Switches(form))


def check_equilibrium_smooth(model, eq: dict, where: str) -> None:
    """Raise :class:`NonSmoothError` when a projected state is 0 at the equilibrium ``eq``.

    An orbit bifurcating from such an equilibrium has the state below 0 half of the time in the
    unprojected model: the projected model's oscillation is not the smooth Hopf orbit.
    """
    for name in model.nonnegative:
        v = float(eq[name])
        if abs(v) <= TOUCH_TOL * max(1.0, *(abs(float(x)) for x in eq.values())):
            raise NonSmoothError(
                f"{where}: the projected state {name} is {v:g} at the equilibrium, on its "
                f"boundary {name} = 0; any oscillation about it reaches {name} < 0 where the "
                f"projection {name}' = max(f, 0) acts, so the smooth Hopf theory (normal form, "
                "smooth orbits) does not describe the projected model",
                surface=name,
            )


def _surfaces(model, X: np.ndarray, Z: np.ndarray, P: np.ndarray):
    """Each non-smooth surface of ``model`` along the sampled orbit: ``(state, name, label,
    values, relative)``, the surface function at the samples and the same relative to its scale (a
    projected state: the state over ``max(1, max |x|)``; a switch: over ``max(1, |scale|)``
    per sample). ``state`` is True for a projected state (``name``), False for a switch
    (``name``: its source)."""
    names = model.state_names
    for name in model.nonnegative:
        x = X[:, names.index(name)]
        yield True, name, f"{name} = 0", x, x / max(1.0, float(np.max(np.abs(x))))
    sw = _switches(model)
    if sw is not None:
        S, scales = sw.evaluate(X, Z, P)
        for j, s in enumerate(sw.switches):
            label = f"the switching surface {s.surface} = 0 of {s.source}"
            yield (
                False,
                str(s.source),
                label,
                S[:, j],
                S[:, j] / np.maximum(1.0, np.abs(scales[:, j])),
            )


def check_orbit_smooth(model, X: np.ndarray, Z: np.ndarray, P: np.ndarray, times: np.ndarray):
    """Raise :class:`NonSmoothError` when sampled orbit points reach a projected state's 0 or
    cross (or touch) a switching surface.

    Parameters
    ----------
    X, Z : ndarray
        Current and delayed values at the sample points, ``(npts, n)`` and ``(npts, K)``.
    P : ndarray
        Parameter values.
    times : ndarray
        Times of the samples on the orbit (for the message).
    """
    for state, name, label, vals, rel in _surfaces(model, X, Z, P):
        if state:
            k = int(np.argmin(rel))
            if rel[k] <= TOUCH_TOL:
                raise NonSmoothError(
                    f"the orbit reaches the boundary of the projected state {name} "
                    f"(min {name} = {vals[k]:.4g} at t = {times[k]:.4g} in the period): there "
                    f"the projected model holds {name} at 0, and the smooth orbit (of the "
                    "unprojected model) is not the model's orbit",
                    surface=name,
                    where=float(times[k]),
                )
            continue
        sign_change = np.any(rel > TOUCH_TOL) and np.any(rel < -TOUCH_TOL)
        if sign_change or np.any(np.abs(rel) <= TOUCH_TOL):
            k = int(np.argmin(np.abs(vals)))
            raise NonSmoothError(
                f"the orbit crosses {label} (near t = {times[k]:.4g} in the period, value range "
                f"[{vals.min():.4g}, {vals.max():.4g}]): the right-hand side is not smooth along "
                "the orbit, so collocation, Floquet multipliers and normal forms of the smooth "
                "theory do not apply",
                surface=name,
                where=float(times[k]),
            )


def nearest_surface(model, X: np.ndarray, Z: np.ndarray, P: np.ndarray) -> tuple[float, str] | None:
    """How close sampled orbit points come to a non-smooth surface: ``(distance, surface)``
    for the nearest one, the distance relative to the surface function's scale (as in
    :func:`check_orbit_smooth`); ``None`` for a model without such surfaces.

    Parameters
    ----------
    X, Z : ndarray
        Current and delayed values at the sample points, ``(npts, n)`` and ``(npts, K)``.
    P : ndarray
        Parameter values.
    """
    near = [
        (float(np.min(rel if state else np.abs(rel))), label)
        for state, _, label, _, rel in _surfaces(model, X, Z, P)
    ]
    return min(near) if near else None


def crossed_surfaces(model, X: np.ndarray, Z: np.ndarray, P: np.ndarray) -> list[str]:
    """The non-smooth surfaces that sampled orbit points reach or cross (as
    :func:`check_orbit_smooth` judges them): a projected state at or below 0 (``"q = 0"``), a
    switching function that changes sign or touches 0; empty for a smooth model or an orbit
    that stays clear of them."""
    out = []
    for state, _, label, _, rel in _surfaces(model, X, Z, P):
        if state:
            if float(np.min(rel)) <= TOUCH_TOL:
                out.append(label)
        elif (np.any(rel > TOUCH_TOL) and np.any(rel < -TOUCH_TOL)) or np.any(
            np.abs(rel) <= TOUCH_TOL
        ):
            out.append(label)
    return out
