"""Newton's method on the collocation system: profile, period and (optionally) one parameter.

Unknowns ``u = (Y, T[, p])``: the profile's node values, the period and, on a branch, the
continuation parameter. Equations: the collocation residual, the integral phase condition
``int_0^1 <x(s) - x_ref(s), x_ref'(s)> ds = 0`` (which fixes the time shift of the periodic
solution relative to a reference profile) and, on a branch, the pseudo-arclength condition
``<u - u_prev, t> = ds`` in scaled variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AnalysisError, OptionError
from .collocation import Mesh, assemble

__all__ = ["OrbitState", "correct"]

#: A Newton iteration that stops converging below this scaled step has reached rounding.
STAGNATION = 1e-7


@dataclass
class OrbitState:
    """One point of the collocation problem."""

    Y: np.ndarray  # (L m, n) node values
    T: float
    P: np.ndarray  # all parameter values, model order

    def vector(self, free: int | None) -> np.ndarray:
        parts = [self.Y.reshape(-1), [self.T]]
        if free is not None:
            parts.append([self.P[free]])
        return np.concatenate(parts)

    @staticmethod
    def from_vector(u: np.ndarray, shape, P: np.ndarray, free: int | None) -> OrbitState:
        size = shape[0] * shape[1]
        P = P.copy()
        if free is not None:
            P[free] = u[size + 1]
        return OrbitState(u[:size].reshape(shape).copy(), float(u[size]), P)


def phase_row(mesh: Mesh, ref: OrbitState, n: int) -> tuple[np.ndarray, float]:
    """Row ``r`` and value ``c`` of the phase condition ``r . Y = c`` for reference ``ref``."""
    from .collocation import profile_values

    s, j, w = mesh.collocation_points()
    m, N = mesh.degree, mesh.n_nodes
    xi = s * mesh.intervals - j
    E = mesh.basis(xi)
    idx = (j[:, None] * m + np.arange(m + 1)) % N
    dref = profile_values(mesh, ref.Y, s, derivative=True)  # (npts, n)
    row = np.zeros(N * n)
    for a in range(n):
        for i in range(m + 1):
            np.add.at(row, idx[:, i] * n + a, w * dref[:, a] * E[:, i])
    c = float(row @ ref.Y.reshape(-1))
    return row, c


@dataclass
class Correction:
    """A converged correction: the state, the iterations, and the last linear system."""

    state: OrbitState
    iterations: int
    matrix: np.ndarray  # [J JT (JP); phase row] at the last iterate (unscaled columns)
    assembly: Any
    lu: Any = None  # LU factors of [matrix; constraint row / scales] (with a free parameter)


def correct(
    system,
    mesh: Mesh,
    guess: OrbitState,
    ref: OrbitState,
    *,
    free: int | None = None,
    arclength: tuple[np.ndarray, np.ndarray, float] | None = None,
    scales: np.ndarray | None = None,
    tol: float = 1e-10,
    maxiter: int = 25,
) -> tuple[OrbitState, int]:
    """Newton-correct ``guess`` to a periodic solution.

    Parameters
    ----------
    free : int, optional
        Index of the free parameter (then ``arclength`` must be given).
    arclength : (u_prev, tangent, ds), optional
        ``tangent . (u / scales - u_prev) = ds`` in scaled variables.
    scales : ndarray, optional
        Scale of each unknown (for the arclength condition and convergence test).

    Returns
    -------
    (OrbitState, iterations)

    Raises
    ------
    AnalysisError
        When Newton does not converge in ``maxiter`` steps.
    """
    constraint = None
    if free is not None:
        if arclength is None:
            raise OptionError("correct: a free parameter needs arclength=(u_prev, tangent, ds)")
        u_prev, tangent, ds = arclength
        constraint = (tangent, float(ds + tangent @ u_prev))
    out = correct_full(
        system, mesh, guess, ref, free=free, constraint=constraint, scales=scales,
        tol=tol, maxiter=maxiter,
    )  # fmt: skip
    return out.state, out.iterations


def correct_full(
    system,
    mesh: Mesh,
    guess: OrbitState,
    ref: OrbitState,
    *,
    free: int | None = None,
    constraint: tuple[np.ndarray, float] | None = None,
    scales: np.ndarray | None = None,
    tol: float = 1e-10,
    maxiter: int = 25,
) -> Correction:
    """:func:`correct` with a general constraint ``row . (u / scales) = target`` (with a free
    parameter) and the last linear system returned (for tangents)."""
    if (free is None) != (constraint is None):
        raise OptionError("correct_full: give a free parameter and its constraint together")
    n = system.n
    shape = guess.Y.shape
    ny = shape[0] * shape[1]
    row, c = phase_row(mesh, ref, n)
    u = guess.vector(free)
    size = u.size
    if scales is None:
        scales = np.ones(size)
    P = guess.P.copy()

    def equations(u, jac=True):
        st = OrbitState.from_vector(u, shape, P, free)
        asm = assemble(system, mesh, st.Y, st.T, st.P, jac=jac, param=free if jac else None)
        extra = [row @ st.Y.reshape(-1) - c]
        if constraint is not None:  # (given exactly with a free parameter, checked above)
            extra.append(constraint[0] @ (u / scales) - constraint[1])
        return st, asm, np.concatenate([asm.R, extra])

    def matrix(asm) -> np.ndarray:
        nr = asm.R.size
        A = np.zeros((nr + 1, size))
        A[:nr, :ny] = asm.J
        A[:nr, ny] = asm.JT
        A[nr, : row.size] = row
        if free is not None:
            A[:nr, -1] = asm.JP
        return A

    import scipy.linalg  # scipy: imported where used

    last = np.inf
    st, asm, rhs = equations(u)
    step = np.inf
    for it in range(1, maxiter + 1):
        A = matrix(asm)
        full = A if constraint is None else np.vstack([A, constraint[0] / scales])
        with np.errstate(all="ignore"):
            lu = scipy.linalg.lu_factor(full, check_finite=False)
            du = scipy.linalg.lu_solve(lu, -rhs, check_finite=False)
        if not np.all(np.isfinite(du)) or not np.all(np.isfinite(lu[0].diagonal())):
            raise AnalysisError("the collocation system is singular or Newton's method diverged")
        step = float(np.max(np.abs(du / scales)))
        if step < tol or (it >= 3 and step > 0.5 * last and step < STAGNATION):
            # converged, or no longer converging quadratically: the rounding floor of an
            # ill-conditioned system (near a Hopf point the amplitude is very sensitive to
            # the parameter)
            done = OrbitState.from_vector(u + du, shape, P, free)
            return Correction(done, it, A, asm, lu if free is not None else None)
        # damped step: the full step when it lowers the residual (or is small), else halved
        norm0 = float(np.linalg.norm(rhs))
        lam = 1.0
        try:
            trial = equations(u + du)
            good = np.all(np.isfinite(trial[2])) and np.linalg.norm(trial[2]) < norm0
        except AnalysisError:
            trial, good = None, False
        if not good and step >= 1e-3:
            while lam > 1 / 64:
                lam /= 2
                try:
                    _, _, r = equations(u + lam * du, jac=False)
                    if np.all(np.isfinite(r)) and np.linalg.norm(r) < norm0:
                        break
                except AnalysisError:
                    pass
            trial = None
        elif trial is None:
            raise AnalysisError("Newton's method left the domain of the model")
        u = u + lam * du
        st, asm, rhs = trial if (trial is not None and lam == 1.0) else equations(u)
        last = step * lam
    raise AnalysisError(
        f"Newton's method on the collocation system did not converge (last scaled step "
        f"{step:.3g} after {maxiter} iterations)"
    )


def _param_column(system, mesh: Mesh, st: OrbitState, free: int) -> np.ndarray:
    """``dR/dp`` by central differences (a check of :func:`assemble`'s exact column)."""
    p = st.P[free]
    h = 1e-7 * max(1.0, abs(p))
    Pp, Pm = st.P.copy(), st.P.copy()
    Pp[free] += h
    Pm[free] -= h
    Rp = assemble(system, mesh, st.Y, st.T, Pp, jac=False).R
    Rm = assemble(system, mesh, st.Y, st.T, Pm, jac=False).R
    return (Rp - Rm) / (2 * h)
