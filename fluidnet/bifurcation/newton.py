"""Newton's method on the collocation system: profile, period and (optionally) one parameter.

Unknowns ``u = (Y, T[, p])``: the profile's node values, the period and, on a branch, the
continuation parameter. Equations: the collocation residual, the integral phase condition
``int_0^1 <x(s) - x_ref(s), x_ref'(s)> ds = 0`` (which fixes the time shift of the periodic
solution relative to a reference profile) and, on a branch, the pseudo-arclength condition
``<u - u_prev, t> = ds`` in scaled variables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisError
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
        In scaled variables ``u / scales``.
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
    n = system.n
    shape = guess.Y.shape
    row, c = phase_row(mesh, ref, n)
    u = guess.vector(free)
    size = u.size
    if scales is None:
        scales = np.ones(size)
    P = guess.P.copy()

    def equations(u, jac=True):
        st = OrbitState.from_vector(u, shape, P, free)
        asm = assemble(system, mesh, st.Y, st.T, st.P, jac=jac)
        extra = [row @ st.Y.reshape(-1) - c]
        if free is not None:
            u_prev, tangent, ds = arclength
            extra.append(tangent @ (u / scales - u_prev) - ds)
        return st, asm, np.concatenate([asm.R, extra])

    last = np.inf
    st, asm, rhs = equations(u)
    for it in range(1, maxiter + 1):
        nr = asm.R.size
        A = np.zeros((rhs.size, size))
        A[:nr, : shape[0] * shape[1]] = asm.J
        A[:nr, shape[0] * shape[1]] = asm.JT
        A[nr, : row.size] = row
        if free is not None:
            A[:nr, -1] = _param_column(system, mesh, st, free)
            A[nr + 1] = arclength[1] / scales
        try:
            du = np.linalg.solve(A, -rhs)
        except np.linalg.LinAlgError as exc:
            raise AnalysisError(f"the collocation system is singular ({exc})") from exc
        step = float(np.max(np.abs(du / scales)))
        if not np.all(np.isfinite(du)):
            raise AnalysisError("Newton's method diverged (non-finite iterate)")
        if step < tol:
            return OrbitState.from_vector(u + du, shape, P, free), it
        if it >= 3 and step > 0.5 * last and step < STAGNATION:
            # no longer converging quadratically: the rounding floor of an ill-conditioned
            # system (near a Hopf point the amplitude is very sensitive to the parameter)
            return OrbitState.from_vector(u + du, shape, P, free), it
        # damped step: halve while the residual grows (far from the solution only)
        lam, norm0 = 1.0, float(np.linalg.norm(rhs))
        while True:
            try:
                _, _, trial = equations(u + lam * du, jac=False)
                ok = np.all(np.isfinite(trial)) and np.linalg.norm(trial) < norm0
            except AnalysisError:
                ok = False
            if ok or lam < 1 / 64 or step < 1e-3:
                break
            lam /= 2
        u = u + lam * du
        st, asm, rhs = equations(u)
        last = step * lam
    raise AnalysisError(
        f"Newton's method on the collocation system did not converge (last scaled step "
        f"{step:.3g} after {it} iterations)"
    )


def _param_column(system, mesh: Mesh, st: OrbitState, free: int) -> np.ndarray:
    p = st.P[free]
    h = 1e-7 * max(1.0, abs(p))
    Pp, Pm = st.P.copy(), st.P.copy()
    Pp[free] += h
    Pm[free] -= h
    Rp = assemble(system, mesh, st.Y, st.T, Pp, jac=False).R
    Rm = assemble(system, mesh, st.Y, st.T, Pm, jac=False).R
    return (Rp - Rm) / (2 * h)
