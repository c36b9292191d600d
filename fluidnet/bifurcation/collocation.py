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
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionError
from ..options import count_option

__all__ = ["Mesh", "Assembly", "assemble", "profile_values", "profile_extrema"]


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
    # derived in __post_init__: basis coefficients, Gauss nodes and weights on [0, 1]
    _coef: np.ndarray = field(init=False, repr=False, compare=False)
    _gauss: np.ndarray = field(init=False, repr=False, compare=False)
    _gauss_w: np.ndarray = field(init=False, repr=False, compare=False)

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
        powers = np.vander(xi.reshape(-1), m + 1, increasing=True)
        if derivative:
            powers = np.concatenate(
                [np.zeros((powers.shape[0], 1)), powers[:, :-1] * np.arange(1, m + 1)], axis=1
            )
        return (powers @ self._coef).reshape(xi.shape + (m + 1,))

    @property
    def colloc(self):
        """Cached ``(s, interval, xi, E, Ed, idx)`` at the Gauss points: basis values and
        derivatives (``d/ds``) and the (unwrapped) node indices of each point's interval."""
        got = self.__dict__.get("_colloc_cache")
        if got is None:
            s_c, j_c, _ = self.collocation_points()
            xi = s_c * self.intervals - j_c
            E = self.basis(xi)
            Ed = self.basis(xi, derivative=True) * self.intervals
            idx = j_c[:, None] * self.degree + np.arange(self.degree + 1)
            got = (s_c, j_c, xi, E, Ed, idx)
            object.__setattr__(self, "_colloc_cache", got)
        return got

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


def profile_extrema(mesh: Mesh, Y: np.ndarray):
    """Exact extrema of a profile's polynomial pieces.

    On each interval a state is a polynomial of degree ``m`` in the local coordinate; its
    extrema lie at the interval's ends or at the real roots of its derivative inside (found as
    eigenvalues of companion matrices, all intervals and states at once).

    Returns
    -------
    (maxima, minima, s_max, s_min) : ndarrays of shape (n,)
        Values and scaled times ``s = t / T`` of the largest and smallest value of each state.
    """
    L, m, N = mesh.intervals, mesh.degree, mesh.n_nodes
    n = Y.shape[1]
    idx = (np.arange(L)[:, None] * m + np.arange(m + 1)) % N
    A = np.einsum("pi,lin->lnp", mesh._coef, Y[idx])  # (L, n, m+1) monomial coefficients
    cand_xi = [np.zeros((L, n, 1)), np.ones((L, n, 1))]
    if m >= 2:
        d = A[:, :, 1:] * np.arange(1, m + 1)  # derivative coefficients, degree m-1
        lead = d[:, :, -1]
        size = np.max(np.abs(d), axis=2)
        ok = np.abs(lead) > 1e-12 * np.maximum(size, 1e-300)
        k = m - 1
        C = np.zeros((L, n, k, k))
        if k > 1:
            C[:, :, 1:, :-1] = np.eye(k - 1)
        with np.errstate(all="ignore"):
            C[:, :, :, -1] = -d[:, :, :-1] / np.where(ok, lead, 1.0)[:, :, None]
        roots = np.linalg.eigvals(C.reshape(-1, k, k)).reshape(L, n, k)
        for li, si in zip(*np.nonzero(~ok), strict=True):
            # a piece of lower degree: its own roots
            r = (
                np.polynomial.polynomial.polyroots(np.trim_zeros(d[li, si], "b"))
                if np.any(d[li, si])
                else np.zeros(0)
            )
            roots[li, si] = np.nan
            roots[li, si, : r.size] = r[:k]
        real = np.abs(roots.imag) <= 1e-9
        xi = np.where(real & (roots.real > 0) & (roots.real < 1), roots.real, 0.0)
        cand_xi.append(xi)
    xi = np.concatenate(cand_xi, axis=2)  # (L, n, c)
    powers = xi[..., None] ** np.arange(m + 1)  # (L, n, c, m+1)
    vals = np.einsum("lncp,lnp->lnc", powers, A)
    s = (np.arange(L)[:, None, None] + xi) / L
    flat_v = vals.transpose(1, 0, 2).reshape(n, -1)
    flat_s = s.transpose(1, 0, 2).reshape(n, -1)
    imax = np.argmax(flat_v, axis=1)
    imin = np.argmin(flat_v, axis=1)
    rows = np.arange(n)
    return (
        flat_v[rows, imax],
        flat_v[rows, imin],
        np.mod(flat_s[rows, imax], 1.0),
        np.mod(flat_s[rows, imin], 1.0),
    )


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
    JP: np.ndarray | None = None


def assemble(
    system,
    mesh: Mesh,
    Y: np.ndarray,
    T: float,
    P: np.ndarray,
    *,
    jac: bool = True,
    history=None,
    param=None,
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
    param : int or sequence of int, optional
        Also ``dR/dp`` for the parameter of this index (``Assembly.JP``; a column per index for
        a sequence).
    """
    n, N, m, L = system.n, mesh.n_nodes, mesh.degree, mesh.intervals
    s_c, j_c, _, E, Ed, idx_c = mesh.colloc
    Yw = Y[idx_c % N]
    X = np.einsum("ci,cin->cn", E, Yw)
    Xdot = np.einsum("ci,cin->cn", Ed, Yw)
    npts = len(s_c)
    Pc = system.params_columns(P, npts)

    delayed = {}

    def profile(k: int, tau: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(tau)):
            bad = int(np.argmax(~np.isfinite(tau)))
            raise _delay_error(system, k, tau[bad], s_c[bad] * T)
        if np.any(tau < 0):
            bad = int(np.argmin(tau))
            raise _delay_error(system, k, tau[bad], s_c[bad] * T)
        sd = s_c - tau / T
        j, xi = mesh.locate(sd)
        idx = j[:, None] * m + np.arange(m + 1)
        Yd = Y[idx % N, system.lag_state[k]]
        B = mesh.basis(xi)
        Bd = mesh.basis(xi, derivative=True) * L
        delayed[k] = (idx, B, np.einsum("ci,ci->c", Bd, Yd))
        return np.einsum("ci,ci->c", B, Yd)

    taus, Z = system.lags_at(X, P, profile)
    if jac:
        F, fx, fz = system.derivatives(X, Z, P)
    else:
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
    for k in range(system.K):
        if history is not None and np.any(col(delayed[k][0]) < 0):
            raise _history_error(system, k, history)
    dzT = np.zeros((system.K, npts))
    for k in range(system.K):
        dzT[k] = delayed[k][2] * taus[:, k] / T**2
    if system.sd and _state_dependent_somewhere(system, X, Z, Pc):
        J, dzT = _dense_jacobian(system, mesh, T, fx, fz, delayed, taus, dzT, col, ncols, X, Z, Pc)
    else:
        J = _sparse_jacobian(system, mesh, T, fx, fz, delayed, col, ncols)
    out.J = J
    out.JT = (-F - T * np.einsum("cak,kc->ca", fz, dzT)).reshape(-1)
    if param is not None:
        if np.ndim(param) == 0:
            out.JP = _param_derivative(system, mesh, T, P, X, Z, Pc, fz, delayed, int(param))
        else:
            out.JP = np.stack(
                [
                    _param_derivative(system, mesh, T, P, X, Z, Pc, fz, delayed, int(k))
                    for k in param
                ],
                axis=1,
            )
    return out


def _state_dependent_somewhere(system, X, Z, Pc) -> bool:
    tx = system.tau_x(X.T, Z.T, Pc)
    tz = system.tau_z(X.T, Z.T, Pc)
    return bool(np.any(tx) or np.any(tz))


def _sparse_jacobian(system, mesh, T, fx, fz, delayed, col, ncols) -> np.ndarray:
    """``dR/dY`` for delays that do not depend on the state: every entry is one product of
    a basis value and a Jacobian entry, accumulated at once."""
    n = system.n
    _, _, _, E, Ed, idx_c = mesh.colloc
    npts = E.shape[0]
    J = np.zeros((npts * n, ncols))
    flat = J.reshape(-1)
    cc = col(idx_c)  # (c, i)
    c_ = np.arange(npts)
    # x'(s_c): rows (c, a), columns (node, a)
    rows = c_[:, None, None] * n + np.arange(n)[None, None, :]  # (c, 1, a)
    cols = cc[:, :, None] * n + np.arange(n)[None, None, :]  # (c, i, a)
    np.add.at(flat, (rows * ncols + cols).reshape(-1), np.repeat(Ed[:, :, None], n, 2).reshape(-1))
    # -T f_x x(s_c): rows (c, a), columns (node, b)
    r = c_[:, None, None, None] * n + np.arange(n)[None, :, None, None]  # (c, a, 1, 1)
    cl = cc[:, None, None, :] * n + np.arange(n)[None, None, :, None]  # (c, 1, b, i)
    vals = -T * fx[:, :, :, None] * E[:, None, None, :]  # (c, a, b, i)
    np.add.at(flat, (r * ncols + cl).reshape(-1), vals.reshape(-1))
    # -T f_z z_k(s_c): rows (c, a), columns (delayed node, s_k)
    for k in range(system.K):
        idx, B, _ = delayed[k]
        ck = col(idx) * n + system.lag_state[k]  # (c, i)
        r = c_[:, None, None] * n + np.arange(n)[None, :, None]  # (c, a, 1)
        vals = -T * fz[:, :, k, None] * B[:, None, :]  # (c, a, i)
        np.add.at(flat, (r * ncols + ck[:, None, :]).reshape(-1), vals.reshape(-1))
    return J


def _dense_jacobian(system, mesh, T, fx, fz, delayed, taus, dzT, col, ncols, X, Z, Pc):
    """``dR/dY`` with state-dependent delays: the delayed values move with the reading
    point, ``dz_k -= x'(s - tau_k/T) dtau_k / T``."""
    n, m = system.n, mesh.degree
    _, _, _, E, Ed, idx_c = mesh.colloc
    npts = E.shape[0]
    rows = np.arange(npts)
    dX = np.zeros((npts, n, ncols))
    dXdot = np.zeros((npts, n, ncols))
    cc = col(idx_c)
    for a in range(n):
        for i in range(m + 1):
            np.add.at(dX, (rows, a, cc[:, i] * n + a), E[:, i])
            np.add.at(dXdot, (rows, a, cc[:, i] * n + a), Ed[:, i])
    tx = system.tau_x(X.T, Z.T, Pc)
    tz = system.tau_z(X.T, Z.T, Pc)
    dz = np.zeros((system.K, npts, ncols))
    dzT = dzT.copy()
    for k in range(system.K):
        idx, B, slope = delayed[k]
        a = system.lag_state[k]
        ck = col(idx)
        for i in range(m + 1):
            np.add.at(dz[k], (rows, ck[:, i] * n + a), B[:, i])
        if np.any(tx[:, k]) or np.any(tz[:, k]):
            dtau = np.einsum("cb,cbj->cj", tx[:, k], dX)
            dtauT = np.zeros(npts)
            for jj in range(k):
                dtau += tz[:, k, jj, None] * dz[jj]
                dtauT += tz[:, k, jj] * dzT[jj]
            dz[k] -= (slope / T)[:, None] * dtau
            dzT[k] -= slope / T * dtauT
    J = dXdot - T * (np.einsum("cab,cbj->caj", fx, dX) + np.einsum("cak,kcj->caj", fz, dz))
    return J.reshape(npts * n, ncols), dzT


def _param_derivative(system, mesh, T, P, X, Z, Pc, fz, delayed, param: int) -> np.ndarray:
    """``dR/dp`` at fixed profile and period: ``-T (f_p + sum_k f_{z_k} dz_k/dp)``, where a
    delay depending on ``p`` (directly or through earlier lags) moves the reading point:
    ``dz_k/dp = -x'(s - tau_k / T) dtau_k/dp / T``."""
    fp = system.fp(X.T, Z.T, Pc)[:, :, param]  # (c, n)
    total = fp.copy()
    if system.K:
        tp = system.tau_p(X.T, Z.T, Pc)[:, :, param]  # (c, K)
        tz = system.tau_z(X.T, Z.T, Pc) if system.sd else None
        dz = np.zeros((system.K, X.shape[0]))
        for k in range(system.K):
            dtau = tp[:, k].copy()
            if tz is not None:
                for jj in range(k):
                    dtau += tz[:, k, jj] * dz[jj]
            dz[k] = -delayed[k][2] * dtau / T
        total = total + np.einsum("cak,kc->ca", fz, dz)
    return (-T * total).reshape(-1)


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
