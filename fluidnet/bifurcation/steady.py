"""Equilibria and characteristic matrices of a model from its compiled derivatives.

Every defining system of the bifurcation analysis (Hopf points and curves, their codimension-two
points, folds of equilibria) needs, at a candidate equilibrium ``x`` and parameters ``p``,

* the steady-state residual ``g(x, p) = f(x, x_lagged, p)`` and its Jacobians ``g_x``, ``g_p``;
* the characteristic matrix ``Delta(lambda) = lambda I - f_x - sum_k f_{z_k} e_{s_k}^T
  exp(-lambda tau_k)`` (one term per lag ``k`` of the canonical form, delaying state ``s_k``)
  and its derivative ``Delta'(lambda)``.

They are evaluated here from one function generated (``sympy.lambdify`` with common
subexpressions) from the model's symbolic derivatives, built once per model: a few
microseconds per evaluation, instead of the full symbolic path of
:meth:`fluidnet.Model.linearize` (an equilibrium solved from scratch, every time). State-dependent
delays are frozen at the equilibrium, as in :func:`fluidnet.symbolic.linearize.linearize`.

:class:`EquilibriumBranch` follows an equilibrium in one parameter by Newton's method from the
nearest value already solved (the branch a Hopf point lives on), and gives the linear system
there as a :class:`fluidnet.LinearDDE`: the factory :func:`fluidnet.bifurcation.hopf_point`
hands to :func:`fluidnet.critical_value`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy

from ..errors import AnalysisError, FluidnetError
from ._system import _vectorized, orbit_system

__all__ = ["SteadyState", "steady_state", "Linearization", "EquilibriumBranch"]


@dataclass
class Linearization:
    """``f_x``, ``f_z`` and the delays at one equilibrium (the pieces of ``Delta``)."""

    x: np.ndarray  # equilibrium
    P: np.ndarray  # parameters (model order)
    fx: np.ndarray  # (n, n)
    fz: np.ndarray  # (n, K)
    tau: np.ndarray  # (K,)
    lag_state: np.ndarray  # (K,)

    @property
    def n(self) -> int:
        return self.fx.shape[0]

    def _lag_matrices(self, lam: np.ndarray) -> np.ndarray:
        """``sum_k f_{z_k} e_{s_k}^T exp(-lam tau_k)`` for each ``lam`` (``(..., n, n)``)."""
        lam = np.asarray(lam, dtype=complex)
        w = np.exp(-np.multiply.outer(lam, self.tau))  # (..., K)
        out = np.zeros(lam.shape + (self.n, self.n), dtype=complex)
        for k, s in enumerate(self.lag_state):
            out[..., :, s] += self.fz[:, k] * w[..., k, None]
        return out

    def delta(self, lam) -> np.ndarray:
        """``Delta(lam)`` (``(n, n)``, or ``(..., n, n)`` for an array of ``lam``)."""
        lam = np.asarray(lam, dtype=complex)
        eye = np.eye(self.n)
        return lam[..., None, None] * eye - self.fx - self._lag_matrices(lam)

    def ddelta(self, lam) -> np.ndarray:
        """``Delta'(lam) = I + sum_k tau_k f_{z_k} e_{s_k}^T exp(-lam tau_k)``."""
        lam = np.asarray(lam, dtype=complex)
        w = np.exp(-np.multiply.outer(lam, self.tau)) * self.tau
        out = np.zeros(lam.shape + (self.n, self.n), dtype=complex)
        out[...] = np.eye(self.n)
        for k, s in enumerate(self.lag_state):
            out[..., :, s] += self.fz[:, k] * w[..., k, None]
        return out

    def d2delta(self, lam) -> np.ndarray:
        """``Delta''(lam) = -sum_k tau_k^2 f_{z_k} e_{s_k}^T exp(-lam tau_k)``."""
        lam = np.asarray(lam, dtype=complex)
        w = -np.exp(-np.multiply.outer(lam, self.tau)) * self.tau**2
        out = np.zeros(lam.shape + (self.n, self.n), dtype=complex)
        for k, s in enumerate(self.lag_state):
            out[..., :, s] += self.fz[:, k] * w[..., k, None]
        return out

    def characteristic_matrix(self, lam) -> np.ndarray:
        """Alias of :meth:`delta` (the name :class:`fluidnet.LinearDDE` uses)."""
        return self.delta(lam)

    def characteristic_derivative(self, lam) -> np.ndarray:
        """Alias of :meth:`ddelta`."""
        return self.ddelta(lam)

    def linear_dde(self):
        """The :class:`fluidnet.LinearDDE` (equal delays merged)."""
        from ..linear.lineardde import LinearDDE

        mats = []
        for k, s in enumerate(self.lag_state):
            A = np.zeros((self.n, self.n))
            A[:, s] = self.fz[:, k]
            mats.append((float(self.tau[k]), A))
        return LinearDDE(self.fx, mats)

    def newton_root(self, lam: complex, *, maxiter: int = 40) -> tuple[complex, bool]:
        """Newton's method on ``det Delta`` from ``lam`` (step ``1 / tr(Delta^-1 Delta')``);
        ``(root, converged)``."""
        lam = complex(lam)
        prev = math.inf
        for _ in range(maxiter):
            try:
                g = complex(np.trace(np.linalg.solve(self.delta(lam), self.ddelta(lam))))
            except np.linalg.LinAlgError:
                return lam, True  # exactly singular: on the root
            if g == 0 or not math.isfinite(abs(g)):
                return lam, False
            step = 1.0 / g
            lam -= step
            size = abs(step)
            if size <= 1e-14 * (1.0 + abs(lam)) or (
                size >= 0.9 * prev and size <= 1e-10 * (1.0 + abs(lam))
            ):
                return lam, True
            prev = size
        return lam, False

    @property
    def steady_jacobian(self) -> np.ndarray:
        """``g_x = f_x + sum_k f_{z_k} e_{s_k}^T`` (``= -Delta(0)``)."""
        return -np.real(self.delta(0.0))


class SteadyState:
    """Steady-state residual, Jacobians and characteristic matrices of one model.

    Built once per model (:func:`steady_state`); parameter values are arguments.
    """

    def __init__(self, model):
        system = orbit_system(model)
        form = system.form
        self.model = model
        self.system = system
        self.n, self.K = system.n, system.K
        self.lag_state = system.lag_state
        x, p = form.x, form.p
        z = tuple(lag.symbol for lag in form.lags)
        f = sympy.Matrix(form.rhs)
        taus = [lag.delay for lag in form.lags]
        fx = f.jacobian(sympy.Matrix(x))
        fz = f.jacobian(sympy.Matrix(z)) if z else sympy.zeros(self.n, 0)
        fp = f.jacobian(sympy.Matrix(p)) if p else sympy.zeros(self.n, 0)
        self._sizes = [self.n, self.n * self.n, self.n * self.K, self.K]
        exprs = f.flat() + fx.flat() + fz.flat() + taus
        self._all = _vectorized((x, z, p), exprs, (len(exprs),))
        self._scalar = _scalar_function((x, z, p), exprs)
        self._fp = _vectorized((x, z, p), list(fp), (self.n, len(p)))
        self.n_params = len(p)

    def _columns(self, x: np.ndarray, P: np.ndarray):
        X = np.asarray(x, dtype=float).reshape(self.n, 1)
        Z = X[self.lag_state] if self.K else np.zeros((0, 1))
        Pc = np.asarray(P, dtype=float).reshape(-1, 1)
        return X, Z, Pc

    def _values(self, x: np.ndarray, P: np.ndarray) -> np.ndarray:
        if self._scalar is not None:
            xs = [float(v) for v in x]
            zs = [xs[s] for s in self.lag_state]
            try:
                return np.array(self._scalar(xs, zs, [float(v) for v in P]), dtype=float)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError):
                self._scalar = None  # something math cannot do: numpy from now on
        with np.errstate(all="ignore"):
            return self._all(*self._columns(x, P))[0]

    def residual(self, x: np.ndarray, P: np.ndarray) -> np.ndarray:
        """``g(x, p) = f(x, x_lagged, p)``."""
        return self._values(x, P)[: self.n]

    def linearization(self, x: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, Linearization]:
        """``(g(x, p), Linearization)`` at ``(x, p)`` in one evaluation."""
        v = self._values(x, P)
        n, K = self.n, self.K
        g = v[:n]
        fx = v[n : n + n * n].reshape(n, n)
        fz = v[n + n * n : n + n * n + n * K].reshape(n, K)
        tau = v[n + n * n + n * K :]
        lin = Linearization(
            x=np.asarray(x, dtype=float), P=np.asarray(P, dtype=float), fx=fx, fz=fz,
            tau=tau, lag_state=self.lag_state,
        )  # fmt: skip
        return g, lin

    def param_jacobian(self, x: np.ndarray, P: np.ndarray) -> np.ndarray:
        """``g_p`` (``(n, n_params)``)."""
        return self._fp(*self._columns(x, P))[0]

    def solve(self, x0: np.ndarray, P: np.ndarray, *, tol: float = 1e-13, maxiter: int = 30):
        """The equilibrium near ``x0`` by Newton's method; ``(x, Linearization)``.

        Raises
        ------
        AnalysisError
            When Newton's method does not converge or meets a singular Jacobian.
        """
        x = np.array(x0, dtype=float)
        scale = max(1.0, float(np.max(np.abs(x), initial=0.0)))
        for _ in range(maxiter):
            g, lin = self.linearization(x, P)
            if not np.all(np.isfinite(g)):
                raise AnalysisError(f"the steady-state residual is not finite at {x}")
            try:
                dx = np.linalg.solve(lin.steady_jacobian, -g)
            except np.linalg.LinAlgError as exc:
                raise AnalysisError(f"singular steady-state Jacobian at {x} ({exc})") from exc
            x = x + dx
            if np.max(np.abs(dx)) <= tol * max(scale, float(np.max(np.abs(x)))):
                return x, self.linearization(x, P)[1]
        raise AnalysisError(
            f"Newton's method for the equilibrium did not converge from {x0} "
            f"(last correction {np.max(np.abs(dx)):.3g})"
        )


def _scalar_function(args, exprs):
    """``exprs`` as a function of scalars (Python's ``math``: fast for one point), or ``None``
    when an expression has no ``math`` translation."""
    try:
        return sympy.lambdify([list(a) for a in args], exprs, modules="math", cse=True)
    except Exception:  # noqa: BLE001 - printing raises many kinds; numpy is the fallback
        return None


def steady_state(model) -> SteadyState:
    """The cached :class:`SteadyState` of ``model``."""
    return model.cached("bifurcation steady state", lambda: SteadyState(model))


class EquilibriumBranch:
    """The equilibrium of ``model`` followed in parameter ``name``, as a factory of linear
    systems (``factory(**{name: value}) -> LinearDDE``).

    The first system is linearized at :meth:`fluidnet.Model.equilibrium` (the model's own
    choice), or at the equilibrium Newton's method finds from ``guess``; every later one at
    the equilibrium continued by Newton's method from the nearest value solved so far (a
    secant predictor from the two nearest), and checked there by
    :func:`fluidnet.symbolic.linearize.linearize` (steady-state residual, projected states,
    switching surfaces). Where Newton's method fails, or the continued point is refused, the
    model's own equilibrium is used, as :meth:`fluidnet.Model.linearize` would.
    """

    def __init__(self, model, name: str, fixed: dict, guess: Mapping[str, float] | None = None):
        self.model = model
        self.name = name
        self.fixed = dict(fixed)
        self.guess = guess
        self.__name__ = f"equilibrium branch of {model.name} in {name}"
        self._p: list[float] = []
        self._x: list[np.ndarray] = []
        self._names = list(model.param_names)

    def params(self, value: float) -> dict:
        return self.model.resolve_params({**self.fixed, self.name: float(value)})

    def equilibrium(self, value: float) -> np.ndarray:
        """The branch's equilibrium at ``value`` (state order)."""
        value = float(value)
        i = bisect.bisect_left(self._p, value)
        if i < len(self._p) and self._p[i] == value:
            return self._x[i]
        values = self.params(value)
        x = None
        if self._p:
            x = self._continued(value, values, i)
        if x is None and self.guess is not None and not self._p:
            x = self._from_guess(values)
        if x is None:
            x = _model_equilibrium(self.model, values)
        self._p.insert(i, value)
        self._x.insert(i, x)
        return x

    def _from_guess(self, values: dict) -> np.ndarray:
        assert self.guess is not None  # called only with a guess
        names = self.model.state_names
        missing = [s for s in names if s not in self.guess]
        if missing:
            raise AnalysisError(f"the equilibrium guess misses the states {missing}")
        x0 = np.array([float(self.guess[s]) for s in names])
        P = np.array([values[k] for k in self._names], dtype=float)
        try:
            return steady_state(self.model).solve(x0, P)[0]
        except AnalysisError as exc:
            raise AnalysisError(f"no equilibrium near the guess {dict(self.guess)}: {exc}") from exc

    def _continued(self, value: float, values: dict, i: int) -> np.ndarray | None:
        near = sorted(range(len(self._p)), key=lambda j: abs(self._p[j] - value))[:2]
        x0 = self._x[near[0]]
        if len(near) == 2 and self._p[near[1]] != self._p[near[0]]:
            a, b = near
            slope = (self._x[b] - self._x[a]) / (self._p[b] - self._p[a])
            guess = self._x[a] + slope * (value - self._p[a])
        else:
            guess = x0
        P = np.array([values[k] for k in self._names], dtype=float)
        st = steady_state(self.model)
        try:
            x, _ = st.solve(guess, P)
        except (AnalysisError, FloatingPointError, np.linalg.LinAlgError):
            return None
        # a jump to another equilibrium would not be the branch
        size = max(float(np.max(np.abs(x0))), 1e-300)
        gap = abs(value - self._p[near[0]])
        if not np.all(np.isfinite(x)) or (np.max(np.abs(x - guess)) > 0.5 * size and gap > 0):
            return None
        return x

    def __call__(self, **values: float):
        from ..symbolic.linearize import linearize

        extra = {k: v for k, v in values.items() if k != self.name}
        if extra:
            raise FluidnetError(f"the branch in {self.name!r} takes only {self.name!r}")
        value = float(values[self.name])
        x = self.equilibrium(value)
        eq = dict(zip(self.model.state_names, (float(v) for v in x), strict=True))
        try:
            return linearize(self.model, equilibrium=eq, **self.params(value))
        except AnalysisError:
            # refused as an equilibrium (e.g. a projected state below 0): the model's own
            i = self._p.index(value)
            del self._p[i], self._x[i]
            return self.model.linearize(**self.params(value))

    def steady(self, value: float) -> tuple[np.ndarray, np.ndarray, Linearization]:
        """``(x, P, Linearization)`` at ``value``."""
        x = self.equilibrium(value)
        values = self.params(value)
        P = np.array([values[k] for k in self._names], dtype=float)
        _, lin = steady_state(self.model).linearization(x, P)
        return x, P, lin


def _model_equilibrium(model, values: dict) -> np.ndarray:
    """:meth:`fluidnet.Model.equilibrium` at ``values`` (state order), remembered per model and
    parameter values (solving from scratch can take tens of milliseconds)."""
    key = tuple(float(values[k]) for k in model.param_names)
    known = model.cached("bifurcation equilibria", dict)
    if key not in known:
        if len(known) > 256:
            known.clear()
        eq = model.equilibrium(**values)
        known[key] = np.array([float(eq[s]) for s in model.state_names])
    return known[key].copy()
