"""What a proof is about: a model's right-hand sides and frozen delays, and what follows from them.

:class:`ModelRecord` is the model as a certificate stores it (plain JSON trees, see
:mod:`fluidnet.proof.expressions`): the state and parameter names, the right-hand sides
``f_i(x, z, p)`` in the current states ``x`` and the delayed values (lags) ``z_k``, each lag's
state and its delay *at rest* (every delayed value equal to the current one), and the projected
states. Its digest names the model in a certificate.

:class:`Problem` derives, with sympy and from the record alone (so a checker needs nothing of
the model code that wrote it):

* the steady-state equations ``F(x, p) = f(x, x, p)`` and their Jacobian ``dF/dx``
  (for the equilibrium's enclosure);
* the linearization ``x'(t) = A_0 x(t) + sum_m A_m x(t - tau_m)``: ``A_0 = df/dx`` and, for each
  distinct delay ``tau_m``, the sum of ``df/dz_k`` placed in the column of lag ``k``'s state,
  at ``z = x`` (state-dependent delays frozen at the equilibrium: the variation of a delay
  multiplies ``x'(t - tau) = 0``);
* the characteristic function ``Delta(lambda) = det(lambda I - A_0 - sum_m A_m E_m)`` with
  ``E_m = exp(-lambda tau_m)``, as a polynomial in ``lambda``, the ``E_m`` and symbols standing
  for the nonzero entries, and its derivative
  ``dDelta/dlambda = dDelta/dlambda|_E - sum_m tau_m E_m dDelta/dE_m``;

each compiled into a function over balls (:mod:`fluidnet.proof.arbcode`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from ..errors import ModelError
from .arbcode import compile_balls
from .expressions import TreeError, digest, from_tree, to_tree

__all__ = ["ModelRecord", "Problem", "problem_of"]

#: Largest number of states whose characteristic determinant is expanded symbolically.
MAX_STATES = 8


@dataclass(frozen=True)
class ModelRecord:
    """A model as a certificate stores it.

    Attributes
    ----------
    name : str
    states, params : tuple of str
    rhs : tuple
        One JSON tree per state: ``f_i(x, z, p)``.
    lags : tuple of (int, tree)
        Each delayed value's state index and its delay at rest ``tau_k(x, p)``.
    nonnegative : tuple of int
        Projected states (``x_i >= 0``).
    """

    name: str
    states: tuple[str, ...]
    params: tuple[str, ...]
    rhs: tuple[Any, ...]
    lags: tuple[tuple[int, Any], ...]
    nonnegative: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "states": list(self.states),
            "parameters": list(self.params),
            "rhs": list(self.rhs),
            "lags": [{"state": s, "delay": d} for s, d in self.lags],
            "nonnegative": list(self.nonnegative),
        }

    @property
    def digest(self) -> str:
        """``"sha256:..."`` of the record's canonical JSON."""
        return digest(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any) -> ModelRecord:
        """The record of a certificate's ``"model"`` entry (without its digest).

        Raises
        ------
        TreeError
            When an entry is missing or malformed.
        """
        try:
            lags = tuple((int(g["state"]), g["delay"]) for g in data["lags"])
            return cls(
                name=str(data["name"]),
                states=tuple(str(s) for s in data["states"]),
                params=tuple(str(p) for p in data["parameters"]),
                rhs=tuple(data["rhs"]),
                lags=lags,
                nonnegative=tuple(int(i) for i in data.get("nonnegative", [])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TreeError(f"the model entry is malformed ({exc})") from None

    @classmethod
    def from_model(cls, model: Any) -> ModelRecord:
        """The record of a :class:`fluidnet.Model`.

        Raises
        ------
        ModelError
            When the model depends explicitly on time or has loop inputs, or an expression
            cannot be enclosed (a function outside the supported list).
        """
        form = model.form
        if form.explicit_time:
            raise ModelError(
                f"model {form.name!r} depends explicitly on t: a time-varying model has no "
                "equilibrium to certify"
            )
        names: dict[sympy.Symbol, list] = {}
        for i, xs in enumerate(form.x):
            names[xs] = ["x", i]
        for k, lag in enumerate(form.lags):
            names[lag.symbol] = ["z", k]
        for ps in form.p:
            names[ps] = ["p", ps.name]
        at_rest = {lag.symbol: form.x[lag.state] for lag in form.lags}
        try:
            rhs = tuple(to_tree(e, names) for e in form.rhs)
            lags = tuple(
                (lag.state, to_tree(sympy.expand(lag.delay.xreplace(at_rest)), names))
                for lag in form.lags
            )
        except TreeError as exc:
            raise ModelError(f"model {form.name!r}: {exc}") from None
        return cls(
            name=form.name,
            states=tuple(form.states),
            params=tuple(form.params),
            rhs=rhs,
            lags=lags,
            nonnegative=tuple(form.nonnegative),
        )


@dataclass
class Problem:
    """The symbolic steady state, linearization and characteristic function of a record, and
    their ball functions.

    Attributes
    ----------
    record : ModelRecord
    x, z, p : tuple of sympy.Symbol
        Current states, lags, parameters.
    F, J : list
        Steady-state residuals and their Jacobian (row-major ``n x n``).
    entries : list of (int, int, int, sympy.Expr)
        Nonzero linearization entries ``(matrix m, row, column, expression at rest)``;
        ``m = 0`` is ``A_0``, ``m >= 1`` the matrix of delay ``delays[m - 1]``.
    delays : list of sympy.Expr
        The distinct delays at rest ``tau_m(x, p)``.
    state_delays : list of bool
        Whether each delay depends on the state (then it is frozen at the equilibrium).
    """

    record: ModelRecord
    x: tuple[sympy.Symbol, ...] = ()
    z: tuple[sympy.Symbol, ...] = ()
    p: tuple[sympy.Symbol, ...] = ()
    F: list = field(default_factory=list)
    J: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    delays: list = field(default_factory=list)
    state_delays: list = field(default_factory=list)

    def __post_init__(self):
        rec = self.record
        n = len(rec.states)
        if n > MAX_STATES:
            raise ModelError(
                f"model {rec.name!r} has {n} states: region certificates expand the "
                f"characteristic determinant symbolically, for at most {MAX_STATES} states"
            )
        self.x = tuple(sympy.Symbol(f"x{i}", real=True) for i in range(n))
        self.z = tuple(sympy.Symbol(f"z{k}", real=True) for k in range(len(rec.lags)))
        self.p = tuple(sympy.Symbol(f"p_{name}", real=True) for name in rec.params)
        pindex = {name: s for name, s in zip(rec.params, self.p, strict=True)}

        def leaf(kind, key):
            try:
                if kind == "x":
                    return self.x[int(key)]
                if kind == "z":
                    return self.z[int(key)]
                return pindex[key]
            except (IndexError, KeyError, ValueError, TypeError):
                raise TreeError(f"[{kind!r}, {key!r}] names nothing of the model") from None

        rhs = [from_tree(t, leaf) for t in rec.rhs]
        if len(rhs) != n:
            raise TreeError(f"{len(rhs)} right-hand sides for {n} states")
        lag_states = [s for s, _ in rec.lags]
        if any(not 0 <= s < n for s in lag_states):
            raise TreeError("a lag names a state that does not exist")
        taus = [sympy.expand(from_tree(d, leaf)) for _, d in rec.lags]
        rest = {zk: self.x[s] for zk, s in zip(self.z, lag_states, strict=True)}
        self.F = [e.xreplace(rest) for e in rhs]
        self.J = [sympy.diff(Fi, xj) for Fi in self.F for xj in self.x]
        # distinct delays (a lag whose delay is identically 0 joins A_0)
        delays: list = []
        group = []
        for tau in taus:
            if tau == 0:
                group.append(0)
                continue
            if tau not in delays:
                delays.append(tau)
            group.append(delays.index(tau) + 1)
        self.delays = delays
        self.state_delays = [bool(d.free_symbols & set(self.x)) for d in delays]
        acc: dict[tuple[int, int, int], Any] = {}
        for i, fi in enumerate(rhs):
            for j, xj in enumerate(self.x):
                d = sympy.diff(fi, xj)
                if d != 0:
                    acc[(0, i, j)] = acc.get((0, i, j), 0) + d.xreplace(rest)
            for k, zk in enumerate(self.z):
                d = sympy.diff(fi, zk)
                if d != 0:
                    key = (group[k], i, lag_states[k])
                    acc[key] = acc.get(key, 0) + d.xreplace(rest)
        self.entries = [(m, i, j, e) for (m, i, j), e in sorted(acc.items())]
        self._compiled: dict[str, Any] = {}

    # ------------------------------------------------------------------ compiled functions
    @property
    def n(self) -> int:
        return len(self.x)

    @property
    def inputs(self) -> tuple[sympy.Symbol, ...]:
        return self.x + self.p

    def _get(self, key: str, build):
        if key not in self._compiled:
            self._compiled[key] = build()
        return self._compiled[key]

    def residuals(self, values: Sequence[Any]) -> list:
        """Balls of ``F`` at balls of ``x + p``."""
        return self._get("F", lambda: compile_balls(self.F, self.inputs))(values)

    def jacobian(self, values: Sequence[Any]) -> list:
        """Balls of ``dF/dx`` (row-major) at balls of ``x + p``."""
        return self._get("J", lambda: compile_balls(self.J, self.inputs))(values)

    def linearization(self, values: Sequence[Any]) -> tuple[list, list]:
        """Balls of the linearization's nonzero entries and of the delays at ``x + p``."""
        exprs = [e for *_, e in self.entries] + list(self.delays)
        out = self._get("lin", lambda: compile_balls(exprs, self.inputs))(values)
        k = len(self.entries)
        return out[:k], out[k:]

    def characteristic(self) -> Any:
        """``(Delta, dDelta/dlambda)`` as a ball function of
        ``[lambda, E_1..E_M, tau_1..tau_M, a_1..a_K]``."""
        return self._get("Delta", self._build_characteristic)

    def _build_characteristic(self):
        lam = sympy.Symbol("lam")
        M = len(self.delays)
        E = [sympy.Symbol(f"E{m}") for m in range(1, M + 1)]
        tau = [sympy.Symbol(f"tau{m}") for m in range(1, M + 1)]
        a = [sympy.Symbol(f"a{e}") for e in range(len(self.entries))]
        n = self.n
        mat = sympy.zeros(n, n)
        for i in range(n):
            mat[i, i] = lam
        for e, (m, i, j, _) in enumerate(self.entries):
            mat[i, j] -= a[e] * (E[m - 1] if m else 1)
        delta = sympy.expand(mat.det(method="berkowitz"))
        ddelta = sympy.diff(delta, lam) - sum(
            (tau[m] * E[m] * sympy.diff(delta, E[m]) for m in range(M)), sympy.S.Zero
        )
        return compile_balls([delta, sympy.expand(ddelta)], [lam, *E, *tau, *a], complex_mode=True)


def problem_of(record: ModelRecord) -> Problem:
    """The (cached) :class:`Problem` of a record."""
    key = record.digest
    if key not in _PROBLEMS:
        if len(_PROBLEMS) > 16:
            _PROBLEMS.clear()
        _PROBLEMS[key] = Problem(record)
    return _PROBLEMS[key]


_PROBLEMS: dict[str, Problem] = {}
