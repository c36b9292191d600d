"""Piecewise-polynomial collocation of periodic solutions of delay equations.

A periodic solution of period ``T`` is written on the scaled time ``s = t / T`` in ``[0, 1)``
as a continuous piecewise polynomial of degree ``m`` on ``L`` equal intervals, represented by
its values at ``m + 1`` equidistant nodes per interval (``L m`` unknown node values per state,
the node at ``s = 1`` being the node at ``s = 0``). The delay equation

``x'(s) = T f(x(s), x_k(s - tau_k / T), p)``

is imposed at the ``m`` Gauss-Legendre points of every interval, with each delayed value read
off the periodic profile itself (``s - tau_k / T`` taken modulo 1). State-dependent delays
``tau_k(x, z_<k)`` are evaluated at each point from its current states and earlier delayed
values, and enter the Jacobian through ``-x'(s - tau_k/T) dtau_k / T``. This is the method of
Engelborghs, Luzyanina, in 't Hout & Roose (2000), used by DDE-BIFTOOL; the superconvergence
of Gauss points gives errors of order ``h^m`` uniformly (``h^{2m}`` at the mesh points for
ODEs).

The same assembly, with the delayed arguments *not* wrapped (they point into the previous
period(s), a history), gives the discretized monodromy operator of the variational equation,
whose eigenvalues approximate the Floquet multipliers (:mod:`fluidnet.bifurcation.floquet`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..options import count_option

__all__ = ["Mesh", "Assembly", "assemble", "profile_values"]


@dataclass(frozen=True)
class Mesh:
    """``L`` equal intervals of ``[0, 1]``, degree ``m`` polynomials on each.

    Attributes
    ----------
    intervals : int
    degree : int
    """

    intervals: int
    degree: int

    def __post_init__(self):
        for name, v, lo in (("intervals", self.intervals, 2), ("degree", self.degree, 1)):
            object.__setattr__(self, name, count_option(name, v, minimum=lo))
        if self.degree > 8:
            raise OptionError(f"degree = {self.degree} is too high (at most 8)")
        m = self.degree
        xi = np.linspace(0.0, 1.0, m + 1)
        V = np.vander(xi, increasing=True)  # V[i, p] = xi_i^p
        object.__setattr__(self, "_coef", np.linalg.inv(V))  # basis_i(x) = sum_p C[p, i] x^p
        g, w = np.polynomial.legendre.leggauss(m)
        object.__setattr__(self, "_gauss", (g + 1.0) / 2.0)
        object.__setattr__(self, "_gauss_w", w / 2.0)

    @property
    def n_nodes(self) -> int:
        """Distinct nodes of a periodic profile, ``L m``."""
        return self.intervals * self.degree

    @property
    def nodes(self) -> np.ndarray:
        """Node positions in ``[0, 1]`` including ``s = 1`` (``L m + 1`` values)."""
        return np.linspace(0.0, 1.0, self.n_nodes + 1)

    def basis(self, xi: np.ndarray, derivative: bool = False) -> np.ndarray:
        """Lagrange basis values (or derivatives in ``xi``) at local coordinates, ``(len, m+1)``."""
        m = self.degree
        xi = np.asarray(xi, dtype=float)
        if derivative:
            powers = np.stack(
                [p * xi ** max(p - 1, 0) if p else np.zeros_like(xi) for p in range(m + 1)], -1
            )
        else:
            powers = np.stack([xi**p for p in range(m + 1)], -1)
        return powers @ self._coef

    def locate(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Interval index ``j`` (unwrapped; a point on a mesh point belongs to the interval on its
        left) and local coordinate ``xi`` in ``(0, 1]`` of scaled times ``s``."""
        sL = np.asarray(s, dtype=float) * self.intervals
        j = np.ceil(sL).astype(np.int64) - 1
        xi = sL - j
        # rounding: keep xi in [0, 1]
        return j, np.clip(xi, 0.0, 1.0)

    def collocation_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s, interval, weight)`` of the ``L m`` Gauss points (weights sum to 1)."""
        L, m = self.intervals, self.degree
        j = np.repeat(np.arange(L), m)
        xi = np.tile(self._gauss, L)
        return (j + xi) / L, j, np.tile(self._gauss_w, L) / L

    def check_points(self) -> np.ndarray:
        """Scaled times away from the collocation points (to measure the defect)."""
        L = self.intervals
        xi = (np.arange(self.degree) + 0.5) / self.degree
        xi = np.where(np.isin(np.round(xi, 12), np.round(self._gauss, 12)), xi * 0.5, xi)
        return (np.repeat(np.arange(L), self.degree) + np.tile(xi, L)) / L


def profile_values(mesh: Mesh, Y: np.ndarray, s, derivative: bool = False) -> np.ndarray:
    """Values (or ``d/ds``) of the periodic profile with node values ``Y`` (``L m``, n) at ``s``."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    j, xi = mesh.locate(np.mod(s, 1.0))
    j = np.where(j < 0, mesh.intervals - 1, j)
    xi = np.where(s % 1.0 == 0.0, 0.0, xi)
    j = np.where(s % 1.0 == 0.0, 0, j)
    idx = (j[:, None] * mesh.degree + np.arange(mesh.degree + 1)) % mesh.n_nodes
    B = mesh.basis(xi, derivative)
    if derivative:
        B = B * mesh.intervals
    return np.einsum("ci,cin->cn", B, Y[idx])


@dataclass
class Assembly:
    """Collocation residual and Jacobian at one point of the unknowns.

    Attributes
    ----------
    R : ndarray, shape (L m n,)
        ``x'(s_c) - T f`` at the Gauss points, point-major.
    F : ndarray, shape (L m, n)
        ``f`` at the Gauss points.
    Xdot : ndarray, shape (L m, n)
        ``x'(s_c)`` (derivative in scaled time).
    taus : ndarray, shape (L m, K)
        Delays at the Gauss points.
    J : ndarray or None
        ``dR/dY`` with columns ``node * n + state`` (nodes shifted by ``history`` periods).
    JT : ndarray or None
        ``dR/dT``.
    """

    R: np.ndarray
    F: np.ndarray
    X: np.ndarray
    Xdot: np.ndarray
    Z: np.ndarray
    taus: np.ndarray
    J: np.ndarray | None = None
    JT: np.ndarray | None = None


def assemble(
    system, mesh: Mesh, Y: np.ndarray, T: float, P: np.ndarray, *, jac: bool = True, history=None
) -> Assembly:
    """Residual (and Jacobian) of the collocation equations.

    Parameters
    ----------
    system : OrbitSystem
    mesh : Mesh
    Y : ndarray, shape (L m, n)
        Node values of the periodic profile.
    T : float
        Period.
    P : ndarray
        Parameter values in the model's order.
    jac : bool
        Also the Jacobian.
    history : int, optional
        For the monodromy operator: the Jacobian columns cover the nodes of ``history``
        previous periods and the current one (node ``g`` in ``[-history L m, L m]`` at column
        block ``g + history L m``), with delayed arguments not wrapped. Default: periodic
        (columns are the ``L m`` nodes, arguments wrapped).
    """
    n, N, m, L = system.n, mesh.n_nodes, mesh.degree, mesh.intervals
    s_c, j_c, _ = mesh.collocation_points()
    xi_c = s_c * L - j_c
    E = mesh.basis(xi_c)
    Ed = mesh.basis(xi_c, derivative=True) * L
    idx_c = j_c[:, None] * m + np.arange(m + 1)  # unwrapped node indices (max L m)
    Yw = Y[idx_c % N]
    X = np.einsum("ci,cin->cn", E, Yw)
    Xdot = np.einsum("ci,cin->cn", Ed, Yw)
    npts = len(s_c)
    Pc = system.params_columns(P, npts)

    delayed = {}

    def profile(k: int, tau: np.ndarray) -> np.ndarray:
        if np.any(~np.isfinite(tau)):
            bad = int(np.argmax(~np.isfinite(tau)))
            raise _delay_error(system, k, tau[bad], s_c[bad] * T)
        if np.any(tau < 0):
            bad = int(np.argmin(tau))
            raise _delay_error(system, k, tau[bad], s_c[bad] * T)
        sd = s_c - tau / T
        j, xi = mesh.locate(sd)
        idx = j[:, None] * m + np.arange(m + 1)
        B = mesh.basis(xi)
        Bd = mesh.basis(xi, derivative=True) * L
        Yd = Y[idx % N, system.lag_state[k]]
        delayed[k] = (idx, B, np.einsum("ci,ci->c", Bd, Yd))
        return np.einsum("ci,ci->c", B, Yd)

    taus, Z = system.lags_at(X, P, profile)
    F = system.f(X.T, Z.T, Pc)
    R = (Xdot - T * F).reshape(-1)
    out = Assembly(R=R, F=F, X=X, Xdot=Xdot, Z=Z, taus=taus)
    if not jac:
        return out

    if history is None:
        n_cols_nodes, offset = N, 0

        def col(idx):
            return idx % N
    else:
        n_cols_nodes, offset = (history + 1) * N + 1, history * N

        def col(idx):
            return idx + offset

    ncols = n_cols_nodes * n
    rows = np.arange(npts)
    dX = np.zeros((npts, n, ncols))
    dXdot = np.zeros((npts, n, ncols))
    cc = col(idx_c)
    for a in range(n):
        for i in range(m + 1):
            np.add.at(dX, (rows, a, cc[:, i] * n + a), E[:, i])
            np.add.at(dXdot, (rows, a, cc[:, i] * n + a), Ed[:, i])
    fx = system.fx(X.T, Z.T, Pc)
    fz = system.fz(X.T, Z.T, Pc)
    if system.sd:
        tx = system.tau_x(X.T, Z.T, Pc)
        tz = system.tau_z(X.T, Z.T, Pc)
    dz = np.zeros((system.K, npts, ncols))
    dzT = np.zeros((system.K, npts))
    for k in range(system.K):
        idx, B, slope = delayed[k]
        a = system.lag_state[k]
        ck = col(idx)
        if history is not None and np.any(ck < 0):
            raise _history_error(system, k, history)
        for i in range(m + 1):
            np.add.at(dz[k], (rows, ck[:, i] * n + a), B[:, i])
        dzT[k] = slope * taus[:, k] / T**2
        if system.sd and (np.any(tx[:, k]) or np.any(tz[:, k])):
            dtau = np.einsum("cb,cbj->cj", tx[:, k], dX)
            dtauT = np.zeros(npts)
            for jj in range(k):
                dtau += tz[:, k, jj, None] * dz[jj]
                dtauT += tz[:, k, jj] * dzT[jj]
            dz[k] -= (slope / T)[:, None] * dtau
            dzT[k] -= slope / T * dtauT
    J = dXdot - T * (np.einsum("cab,cbj->caj", fx, dX) + np.einsum("cak,kcj->caj", fz, dz))
    out.J = J.reshape(npts * n, ncols)
    out.JT = (-F - T * np.einsum("cak,kc->ca", fz, dzT)).reshape(-1)
    return out


def _delay_error(system, k: int, tau: float, t: float):
    from ..errors import AnalysisError

    lag = system.form.lags[k]
    return AnalysisError(
        f"the delay of {system.form.lag_label(lag)} is {tau:g} at t = {t:g} on the orbit: a "
        "delay must stay finite and >= 0"
    )


def _history_error(system, k: int, history: int):
    from ..errors import AnalysisError

    lag = system.form.lags[k]
    return AnalysisError(
        f"the delay of {system.form.lag_label(lag)} reaches beyond {history} periods of history"
    )


def history_periods(taus: np.ndarray, T: float) -> int:
    """Whole periods of history the delays reach (at least 1)."""
    return max(1, int(math.ceil(float(np.max(taus, initial=0.0)) / T + 1e-12)))
