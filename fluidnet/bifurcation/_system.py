"""Vectorized numeric evaluation of a model's right-hand sides, delays and their Jacobians.

The periodic-orbit solver evaluates the unprojected right-hand side ``f(x, z, p)`` of the
canonical form (:attr:`fluidnet.Model.form`: ``x`` the current states, ``z_k`` the delayed
values, one per lag) at many collocation points at once, with its Jacobians ``df/dx``,
``df/dz`` and, for state-dependent delays, the delays ``tau_k(x, z_<k, p)`` and their
Jacobians. Everything is built once per model (parameter values are arguments) and cached
on the model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from ..errors import ModelError

__all__ = ["OrbitSystem", "orbit_system"]

# NumPy as the module, not its name (see fluidnet.symbolic.numeric._MODULES)
_MODULES = [{"DiracDelta": lambda x: np.where(np.asarray(x) == 0, np.inf, 0.0)}, np]


def _vectorized(args, exprs: Sequence[sympy.Basic | float], shape: tuple[int, ...]):
    """A function of the argument groups returning ``(npts,) + shape`` arrays.

    Each group is passed as a 2-D array ``(len(group), npts)``; entries that do not depend on
    the points (constants) are broadcast.
    """
    flat = list(exprs)
    if not flat:
        return lambda *vals: np.zeros((vals[0].shape[1],) + shape)
    f = sympy.lambdify([tuple(a) for a in args], flat, modules=_MODULES, cse=True)

    def call(*vals) -> np.ndarray:
        npts = vals[0].shape[1]
        with np.errstate(all="ignore"):
            out = f(*vals)
        arr = np.empty((len(flat), npts))
        for i, o in enumerate(out):
            arr[i] = np.real(o)
        return np.moveaxis(arr.reshape(shape + (npts,)), -1, 0)

    return call


class OrbitSystem:
    """Numeric right-hand side, delays and Jacobians of one model, vectorized over points.

    Attributes
    ----------
    n, K : int
        Number of states and of lags.
    lag_state : ndarray of int
        The state each lag delays.
    sd : bool
        Whether some delay depends on the state (then ``tau_x``/``tau_z`` are not all zero).
    """

    def __init__(self, model):
        form = model.form
        if form.explicit_time:
            raise ModelError(
                f"model {model.name!r} depends explicitly on t: periodic orbits and normal forms "
                "need an autonomous model"
            )
        self.form = form
        self.n = form.n
        self.K = len(form.lags)
        self.lag_state = np.array([lag.state for lag in form.lags], dtype=int)
        x, p = form.x, form.p
        z = tuple(lag.symbol for lag in form.lags)
        args = (x, z, p)
        f = sympy.Matrix(form.rhs)
        taus = sympy.Matrix([lag.delay for lag in form.lags]) if z else sympy.zeros(0, 1)
        self.f = _vectorized(args, f.flat(), (self.n,))
        self.fx = _vectorized(args, f.jacobian(sympy.Matrix(x)).flat(), (self.n, self.n))
        fz = f.jacobian(sympy.Matrix(z)) if z else sympy.zeros(self.n, 0)
        self.fz = _vectorized(args, fz.flat(), (self.n, self.K))
        self.tau = _vectorized(args, taus.flat(), (self.K,))
        P = sympy.Matrix(p)
        self.fp = _vectorized(args, f.jacobian(P).flat() if p else [], (self.n, len(p)))
        tp = taus.jacobian(P) if (z and p) else sympy.zeros(self.K, len(p))
        self.tau_p = _vectorized(args, tp.flat(), (self.K, len(p)))
        self.sd = any(lag.kind == "state" for lag in form.lags)
        # f, f_x and f_z in one generated function (one call per assembly)
        jets = f.flat() + f.jacobian(sympy.Matrix(x)).flat() + fz.flat()
        self._f_fx_fz = _vectorized(args, jets, (len(jets),))
        if self.sd:
            self.tau_x = _vectorized(args, list(taus.jacobian(sympy.Matrix(x))), (self.K, self.n))
            self.tau_z = _vectorized(args, list(taus.jacobian(sympy.Matrix(z))), (self.K, self.K))
        self.state_names = form.states
        self.param_names = form.params

    def derivatives(self, X: np.ndarray, Z: np.ndarray, P: np.ndarray):
        """``(f, f_x, f_z)`` at the points (one evaluation)."""
        npts = X.shape[0]
        v = self._f_fx_fz(X.T, Z.T, self.params_columns(P, npts))
        n, K = self.n, self.K
        return (
            v[:, :n],
            v[:, n : n + n * n].reshape(npts, n, n),
            v[:, n + n * n :].reshape(npts, n, K),
        )

    def lags_at(self, X: np.ndarray, P: np.ndarray, profile) -> tuple[np.ndarray, np.ndarray]:
        """Delays and delayed values at points with current states ``X`` (npts, n).

        ``profile(k, tau)`` returns the delayed value of lag ``k``'s state ``tau`` before each
        point (npts,). Lags are evaluated in order, since a delay may depend on earlier lags
        (without state-dependent delays, all delays at once).
        """
        npts = X.shape[0]
        if not self.sd:
            Pc = np.broadcast_to(P[:, None], (len(P), npts))
            taus = self.tau(X.T, np.zeros((self.K, npts)), Pc)
            Z = np.empty((npts, self.K))
            for k in range(self.K):
                Z[:, k] = profile(k, taus[:, k])
            return taus, Z
        Z = np.zeros((npts, self.K))
        taus = np.zeros((npts, self.K))
        Pc = np.broadcast_to(P[:, None], (len(P), npts))
        for k in range(self.K):
            tau_k = self.tau(X.T, Z.T, Pc)[:, k]
            taus[:, k] = tau_k
            Z[:, k] = profile(k, tau_k)
        return taus, Z

    def params_columns(self, P: np.ndarray, npts: int) -> np.ndarray:
        return np.broadcast_to(np.asarray(P, dtype=float)[:, None], (len(P), npts))


def orbit_system(model) -> OrbitSystem:
    """The cached :class:`OrbitSystem` of ``model``."""
    return model.cached("bifurcation orbit system", lambda: OrbitSystem(model))
