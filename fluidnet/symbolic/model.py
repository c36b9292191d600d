"""Symbolic fluid models: delay-differential equations written with sympy.

A :class:`Model` holds right-hand sides for its states, named parameters with values, optional
projected (non-negative) states and named algebraic signals. It is immutable; every analysis
takes parameter overrides as ``params={name: value}`` (see :mod:`fluidnet.overrides`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast, overload

import numpy as np
import sympy
from sympy.core.function import AppliedUndef, UndefinedFunction

from ..errors import ModelError, ParameterError
from ..overrides import merge_params, parameter_value
from ..parsing import parse_expression
from .canonical import DDEForm, build_form, delay_of
from .equilibrium import Equilibrium, chosen_equilibrium, equilibria
from .linearize import linearize
from .loopgain import loop_gain
from .numeric import to_numpy
from .symbols import collision, given_name, identifier, name_of, param_subs
from .symbols import t as T_SYM

if TYPE_CHECKING:
    from ..linear.delaytf import DelayTF
    from ..linear.lineardde import LinearDDE

__all__ = ["Model", "Param"]


@dataclass(frozen=True)
class Param:
    """A model parameter: value plus metadata.

    Parameters
    ----------
    value : float or None
        Default value; ``None`` means the value must be given at analysis time.
    unit : str
        Unit, e.g. ``"pkts/s"``.
    doc : str
        Meaning.
    bounds : (lower, upper)
        Inclusive admissible range; ``None`` for an open side.
    """

    value: float | None = None
    unit: str = ""
    doc: str = ""
    bounds: tuple[float | None, float | None] = (None, None)

    def with_value(self, value: float | None) -> Param:
        """A copy of this parameter with another default value.

        Parameters
        ----------
        value : float or None
            The new default; ``None`` leaves the parameter without a default (it must then be given
            at analysis time). It is not checked here: the model checks it against ``bounds``.

        Returns
        -------
        Param
            Unit, meaning and bounds unchanged.
        """
        return replace(self, value=value)


def _check_value(name: str, value: Any, bounds=(None, None)) -> float | None:
    """A default (``None``: none yet) or override, checked to be a finite real number (the rule
    of :mod:`fluidnet.overrides`: text, ``True`` and complex numbers are not) within
    ``bounds``."""
    if value is None:
        return None
    value = parameter_value(f"parameter {name!r}", value)
    lo, hi = bounds
    if lo is not None and value < lo:
        raise ParameterError(f"parameter {name!r}: value {value:g} is below its lower bound {lo:g}")
    if hi is not None and value > hi:
        raise ParameterError(f"parameter {name!r}: value {value:g} is above its upper bound {hi:g}")
    return value


class Model:
    """A fluid model: delay-differential equations in sympy.

    Parameters
    ----------
    rhs : dict
        ``{state: expression}``; a state is given as a function from :func:`fluidnet.states`,
        ``R(t)`` or its name. Expressions may use current states ``R(t)``, delayed states
        ``R(t - tau)`` (``tau`` a number, a parameter expression or a state-dependent
        expression such as ``d0 + q(t)/C``), signals (current or delayed), explicit ``t`` and
        switching terms (``Heaviside``, ``Piecewise``, ``Max``, ``Min``, ``sign``, ``Abs``).
        An expression given as text, e.g. ``"-k*x(t - T)"``, is parsed over the model's names
        only, never run (see :mod:`fluidnet.parsing`).
    params : dict
        ``{symbol or name: value or Param}``. Every free symbol of the equations other than
        ``t`` must be a parameter. ``None`` (or ``Param(None)``) means "give it later".
    nonnegative : iterable
        States with projected dynamics: while such a state is 0 its derivative is ``max(f, 0)``.
    signals : dict
        ``{name or function: expression}``: named algebraic functions of time (a marking
        probability, an aggregate rate) usable in the right-hand sides, current or delayed.
    name : str

    Raises
    ------
    ModelError
        For a state listed twice, an unknown function (a reference to an unknown state), a free
        symbol that is neither a parameter nor ``t``, a negative constant delay, an algebraic
        loop between signals, or a non-negative state that is not a state.
    ParameterError
        For a parameter value that is not finite, outside its bounds, or that makes a delay
        negative.

    Examples
    --------
    >>> import fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> k, T = fn.params("k T")
    >>> m = fn.Model(rhs={x: -k * x(fn.t - T)}, params={k: 1.0, T: 1.0}, name="delayed decay")
    >>> m.state_names
    ('x',)
    """

    def __init__(
        self,
        rhs: Mapping[Any, Any],
        params: Mapping[Any, Any] | None = None,
        *,
        nonnegative: Iterable[Any] = (),
        signals: Mapping[Any, Any] | None = None,
        name: str = "model",
    ) -> None:
        self.name = str(name)
        if not isinstance(rhs, Mapping) or not rhs:
            raise ModelError("rhs must be a non-empty dict {state: expression}")
        # every declared name is the identifier Python reads (NFKC-normalized, as text is
        # parsed); two spellings of one identifier are refused, never merged
        spelled: dict[str, tuple[str, str]] = {"t": ("the time symbol", "t")}

        def declare(key: Any, what: str) -> str:
            given = given_name(key, what)
            n = identifier(given)
            if n in spelled and spelled[n][1] != given:
                other_what, other = spelled[n]
                raise collision(other, given, other_what, what)
            spelled.setdefault(n, (what, given))
            return n

        state_names: list[str] = []
        for key in rhs:
            state_names.append(declare(key, "state"))
        if len(set(state_names)) != len(state_names):
            n = next(n for i, n in enumerate(state_names) if n in state_names[:i])
            raise ModelError(f"state {n!r} is listed twice in rhs")
        self._state_names = tuple(state_names)

        params = dict(params or {})
        self._params: dict[str, Param] = {}
        for key, val in params.items():
            n = declare(key, "parameter")
            if n in self._params:
                raise ModelError(f"parameter {n!r} is listed twice")
            p = val if isinstance(val, Param) else Param(val)
            _check_bounds_shape(n, p.bounds)
            self._params[n] = p.with_value(_check_value(n, p.value, p.bounds))

        signals = dict(signals or {})
        signal_names = [declare(k, "signal") for k in signals]
        if len(set(signal_names)) != len(signal_names):
            raise ModelError(f"a signal is listed twice: {signal_names}")
        self._signal_names = tuple(signal_names)

        taken = set(self._state_names) | set(self._signal_names) | {"t"}
        for n in self._params:
            if n in taken:
                raise ModelError(f"parameter name {n!r} clashes with a state, a signal or t")
        state_set = set(self._state_names)
        for n in self._signal_names:
            if n in state_set:
                raise ModelError(f"signal name {n!r} clashes with a state")
        if "t" in self._state_names or "t" in self._signal_names:
            raise ModelError("'t' is the time symbol and cannot name a state or a signal")

        # one canonical function per state and signal, shared by every expression (building
        # them per right-hand side made a model of n states cost n^2 function classes)
        given = [*rhs, *signals]
        canon = {
            n: _real_function(n, key)
            for n, key in zip(self._state_names + self._signal_names, given, strict=True)
        }
        self._rhs_exprs = {
            n: self._normalize(e, f"right-hand side of {n}", canon)
            for n, e in zip(self._state_names, rhs.values(), strict=True)
        }
        self._signal_exprs = {
            n: self._normalize(e, f"signal {n}", canon)
            for n, e in zip(self._signal_names, signals.values(), strict=True)
        }
        self.__dict__.pop("_text_symbols", None)

        nonneg = []
        for key in nonnegative:
            n = name_of(key, "nonnegative state")
            if n not in self._state_names:
                raise ModelError(
                    f"nonnegative entry {n!r} is not a state of the model "
                    f"(states: {', '.join(self._state_names)})"
                )
            if n not in nonneg:
                nonneg.append(n)
        self._nonnegative = tuple(nonneg)
        self._cache: dict[str, Any] = {}
        self._check_signal_cycles()
        self._check_delays()

    # ------------------------------------------------------------------ construction helpers
    def _normalize(
        self, expr: Any, where: str, canon: Mapping[str, sympy.FunctionClass]
    ) -> sympy.Expr:
        if isinstance(expr, str):
            # text is parsed over the model's names, never evaluated (sympify would run it)
            if "_text_symbols" not in self.__dict__:
                self._text_symbols = {n: sympy.Symbol(n, real=True) for n in self._params}
                self._text_symbols["t"] = T_SYM
            expr = parse_expression(expr, symbols=self._text_symbols, functions=canon, where=where)
        else:
            try:
                expr = sympy.sympify(expr, strict=True)
            except (sympy.SympifyError, TypeError) as exc:
                raise ModelError(f"{where}: cannot interpret {expr!r} as an expression") from exc
        if not isinstance(expr, sympy.Expr):
            raise ModelError(f"{where}: {expr!r} is not an expression")
        sym_rep = {}
        spelled: dict[str, str] = {}
        for s in cast("set[sympy.Symbol]", expr.free_symbols):
            name = identifier(s.name)
            if spelled.setdefault(name, s.name) != s.name:
                raise collision(spelled[name], s.name, "symbol", where=where)
            if name == "t":
                if s != T_SYM:
                    sym_rep[s] = T_SYM
            elif name in self._params:
                real = sympy.Symbol(name, real=True)
                if s != real:  # an identical symbol is kept: no rebuilding of the expression
                    sym_rep[s] = real
            else:
                raise ModelError(
                    f"{where}: free symbol {s.name!r} is neither a parameter nor t "
                    f"(parameters: {', '.join(self._params) or 'none'})"
                )
        if sym_rep:
            expr = expr.xreplace(sym_rep)
        for d in expr.atoms(sympy.Derivative):
            raise ModelError(
                f"{where}: {d} is a derivative: a right-hand side reading derivatives of the "
                "states (a neutral delay equation, x'(t) = f(x, x'(t - tau))) is not supported; "
                "a derivative of a delayed state whose own right-hand side has none is that "
                "right-hand side delayed: write it out (x'(t - tau) = f(x(t - tau), ...))"
            )
        for app in expr.atoms(AppliedUndef):
            fname = identifier(app.func.__name__)
            if fname not in canon:
                raise ModelError(
                    f"{where}: {app} refers to {fname!r}, which is neither a state nor a signal "
                    f"(states: {', '.join(self._state_names)})"
                )
            if len(app.args) != 1:
                raise ModelError(f"{where}: {app} must have exactly one argument (a time)")
            tau = delay_of(app.args[0])
            if tau.is_number and (not tau.is_real or tau < 0):
                raise ModelError(
                    f"{where}: {app} has delay {tau}, which is not a real "
                    "non-negative number (a reference to the future)"
                )
        return _recanon(expr, canon)

    def _check_signal_cycles(self) -> None:
        """Refuse signals that refer to themselves, directly or through other signals.

        A signal is expanded into the states wherever it is used, so a cycle of signals never
        ends. Without a delay on it the cycle is an algebraic loop (an implicit equation); with
        one it is a difference equation, which needs a history of its own: either way one
        signal of the cycle must become a state.
        """
        # edges[n][m]: the shortest delay with which signal n reads signal m (0 = undelayed)
        edges: dict[str, dict[str, sympy.Expr]] = {}
        for n, e in self._signal_exprs.items():
            edges[n] = {}
            for app in e.atoms(AppliedUndef):
                m = app.func.__name__
                if m not in self._signal_exprs:
                    continue
                tau = delay_of(app.args[0])
                if m not in edges[n] or tau == 0:
                    edges[n][m] = tau
        for undelayed_only in (True, False):
            cycle = _find_cycle(
                {
                    n: [m for m, tau in out.items() if tau == 0 or not undelayed_only]
                    for n, out in edges.items()
                }
            )
            if cycle is None:
                continue
            uses = ", ".join(
                f"{a} uses {b}(t - ({edges[a][b]}))"
                for a, b in zip(cycle[:-1], cycle[1:], strict=True)
                if edges[a][b] != 0
            )
            path = " -> ".join(cycle)
            if undelayed_only and len(cycle) == 2:
                raise ModelError(
                    f"signal {cycle[0]!r} refers to itself ({cycle[0]}(t)): an algebraic loop; "
                    "signals are algebraic, make it a state instead"
                )
            if len(cycle) == 2:
                raise ModelError(
                    f"signal {cycle[0]!r} refers to itself through a delay "
                    f"({cycle[0]}(t - ({edges[cycle[0]][cycle[0]]}))): not an algebraic loop "
                    "but a difference equation, which needs a history of its own (a signal is "
                    "expanded into the states wherever it is used); make it a state instead"
                )
            if undelayed_only:
                raise ModelError(
                    f"signals form an algebraic loop (each reads the next at the same time "
                    f"t): {path}; make one of them a state"
                )
            raise ModelError(
                f"signals form a loop through delays: {path} ({uses}). It is not an algebraic "
                "loop but a difference equation: a signal is expanded into the states wherever "
                "it is used, and a loop of signals would need a history of its own; make one "
                "of them a state"
            )

    def _check_delays(self, values: Mapping[str, float] | None = None) -> None:
        """Parameter-only delays must be real and >= 0 at the given parameter values."""
        if values is None:
            values = {k: p.value for k, p in self._params.items() if p.value is not None}
        lags, delays = self._parameter_delays()
        if not lags:
            return
        if len(values) == len(self._params):  # the hot path: one compiled evaluation
            taus = delays([values[k] for k in self._params])
            if (
                np.all(np.isfinite(taus))
                and np.all(np.real(taus) >= 0)
                and not np.any(np.imag(taus))
            ):
                return
        subs = param_subs(values)
        for lag in lags:
            val = lag.delay.xreplace(subs)
            if not val.is_number:
                continue  # uses a parameter without a value yet
            v = complex(val)
            if abs(v.imag) > 0 or not math.isfinite(v.real) or v.real < 0:
                label = self.form.lag_label(lag)
                used = {str(s): values[str(s)] for s in lag.delay.free_symbols}
                raise ParameterError(
                    f"delay {lag.delay} of {label} evaluates to {val} with {used}; "
                    "delays must be real and >= 0"
                )

    def _parameter_delays(self):
        """The lags whose delay depends on parameters only, and a compiled evaluator of them."""

        def build():
            lags = [lag for lag in self.form.lags if lag.kind == "parameter"]
            if not lags:
                return lags, None
            # a delay that is one parameter (the common case: a delay per flow) is read from
            # the vector; only the others are compiled (lambdify of thousands of delays is slow)
            where: dict[sympy.Expr, int] = {p: i for i, p in enumerate(self.form.p)}
            bare = [k for k, lag in enumerate(lags) if lag.delay in where]
            other = [k for k, lag in enumerate(lags) if lag.delay not in where]
            index = np.array([where[lags[k].delay] for k in bare], dtype=np.intp)
            rest = to_numpy((self.form.p,), [lags[k].delay for k in other]) if other else None

            def evaluate(values) -> np.ndarray:
                values = np.asarray(values, dtype=float)
                out = np.empty(len(lags), dtype=complex if rest is not None else float)
                out[bare] = values[index]
                if rest is not None:
                    out[other] = rest(values)
                return out

            return lags, evaluate

        return self.cached("parameter delays", build)

    # ------------------------------------------------------------------ derived-object cache
    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """A object derived from the model's definition, built by ``build()`` on first use.

        The one cache of a model: the canonical form, equilibrium and linearization plans and
        the compiled integrator live here under their ``key``. What is cached must not depend
        on parameter values: :meth:`with_params` shares the cache with the new model, and
        pickling drops it (it is rebuilt on demand).

        Parameters
        ----------
        key : str
            Name of the cached object (e.g. ``"form"``).
        build : callable
            Called with no arguments the first time ``key`` is asked for; its return value is stored
            and returned from then on.

        Returns
        -------
        object
            What ``build()`` returned, now or on an earlier call.
        """
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = build()
            return value

    # ------------------------------------------------------------------ read-only views
    @property
    def state_names(self) -> tuple[str, ...]:
        """State names in state-vector order."""
        return self._state_names

    @property
    def signal_names(self) -> tuple[str, ...]:
        return self._signal_names

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(self._params)

    @property
    def params(self) -> dict[str, Param]:
        """``{name: Param}`` (a copy)."""
        return dict(self._params)

    @property
    def values(self) -> dict[str, float | None]:
        """``{name: default value}``."""
        return {k: p.value for k, p in self._params.items()}

    @property
    def nonnegative(self) -> tuple[str, ...]:
        """Names of projected (non-negative) states."""
        return self._nonnegative

    @property
    def rhs(self) -> dict[str, sympy.Expr]:
        """``{state name: right-hand side}`` as written (signals not expanded)."""
        return dict(self._rhs_exprs)

    @property
    def signals(self) -> dict[str, sympy.Expr]:
        return dict(self._signal_exprs)

    def state(self, name: str) -> sympy.FunctionClass:
        """The sympy function of a state or signal, to build expressions such as ``q(t - 1)``.

        Parameters
        ----------
        name : str
            A state or signal name of the model.

        Returns
        -------
        sympy.FunctionClass
            The real-valued undefined function of that name.

        Raises
        ------
        ModelError
            When ``name`` is neither a state nor a signal of the model.
        """
        key = identifier(name)
        if key not in self._state_names and key not in self._signal_names:
            raise ModelError(f"{name!r} is not a state or signal of model {self.name!r}")
        return sympy.Function(key, real=True)

    @property
    def equations(self) -> list[sympy.Eq]:
        """The model as sympy equations: ``d/dt X(t) = f`` for states, ``p(t) = g`` for signals."""
        eqs = []
        for n in self._state_names:
            f = sympy.Function(n, real=True)
            eqs.append(sympy.Eq(sympy.Derivative(f(T_SYM), T_SYM), self._rhs_exprs[n]))
        for n in self._signal_names:
            f = sympy.Function(n, real=True)
            eqs.append(sympy.Eq(f(T_SYM), self._signal_exprs[n]))
        return eqs

    @property
    def form(self) -> DDEForm:
        """The canonical :class:`~fluidnet.symbolic.canonical.DDEForm` (signals expanded, lags as
        symbols)."""
        return self.cached("form", lambda: build_form(self))

    # ------------------------------------------------------------------ parameters
    def with_params(self, **values: Any) -> Model:
        """A new model with some default parameter values replaced.

        The new model shares the definition and the parameter-free cache of this one; this model
        is unchanged.

        Parameters
        ----------
        **values
            ``name=value`` for each default to replace. A value is a real number, ``None`` (no
            default: the value must then be given at analysis time) or a :class:`Param`, which
            replaces the parameter's unit, meaning and bounds too.

        Returns
        -------
        Model

        Raises
        ------
        ParameterError
            For an unknown name or an invalid value (not a real number, out of bounds, or making
            a delay negative).
        """
        new = dict(self._params)
        for k, v in _identifiers(values, "parameter").items():
            if k not in new:
                raise ParameterError(self._unknown(k))
            new[k] = v if isinstance(v, Param) else new[k].with_value(v)
        m = object.__new__(Model)
        m.__dict__.update(self.__dict__)  # the definition and the (parameter-free) cache
        params = {}
        for k, p in new.items():
            _check_bounds_shape(k, p.bounds)
            params[k] = p.with_value(_check_value(k, p.value, p.bounds))
        m._params = params
        m._check_delays()
        return m

    def _unknown(self, name: str) -> str:
        return (
            f"unknown parameter {name!r} for model {self.name!r} "
            f"(parameters: {', '.join(self._params) or 'none'})"
        )

    def resolve_params(self, overrides: Mapping[str, Any] | None = None) -> dict[str, float]:
        """All parameter values as floats, defaults updated by ``overrides``.

        Parameters
        ----------
        overrides : dict, optional
            ``{name: value}`` replacing defaults for this call; a value may also be a
            :class:`Param`, whose value is used.

        Returns
        -------
        dict
            ``{name: float}`` for every parameter of the model, in definition order.

        Raises
        ------
        ParameterError
            For an unknown name, a missing value, a value that is not finite or out of bounds,
            or a value that makes a delay negative.
        """
        overrides = _identifiers(overrides or {}, "parameter")
        out: dict[str, float] = {}
        for k, v in overrides.items():
            if k not in self._params:
                raise ParameterError(self._unknown(k))
            if v is None:
                parameter_value(f"parameter {k!r}", v)  # an override must be a number
        for k, p in self._params.items():
            v = overrides.get(k, p.value)
            if isinstance(v, Param):
                v = v.value
            v = _check_value(k, v, p.bounds)
            if v is None:
                raise ParameterError(
                    f"parameter {k!r} of model {self.name!r} has no value; give it as "
                    f"{k}=... or with with_params"
                )
            out[k] = v
        if overrides:
            self._check_delays(out)
        return out

    # ------------------------------------------------------------------ analysis entry points
    @overload
    def equilibrium(
        self,
        *,
        all: Literal[False] = False,
        guess: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> Equilibrium: ...
    @overload
    def equilibrium(
        self,
        *,
        all: Literal[True],
        guess: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> list[Equilibrium]: ...
    def equilibrium(
        self,
        *,
        all: bool = False,
        guess: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> Equilibrium | list[Equilibrium]:
        """The equilibrium ``{state: value}`` (see
        :func:`fluidnet.symbolic.equilibrium.equilibria`), at parameter values
        ``params={name: value}`` (or as keywords, see :mod:`fluidnet.overrides`).

        Parameters
        ----------
        all : bool, default False
            Return every equilibrium found (a list, in the documented order) instead of the
            first.
        guess : dict, optional
            ``{state: value}``: the search starts there and the equilibrium nearest to it is
            returned.
        params : dict, optional
            Parameter values other than the defaults.
        **overrides
            The same overrides as keywords (``T=0.2``); a name may not be given both ways.

        Returns
        -------
        Equilibrium or list of Equilibrium

        Raises
        ------
        AnalysisError
            When no equilibrium is found, or (with ``all``) the equilibria found are not
            isolated.

        Warns
        -----
        EquilibriumWarning
            When the equilibrium returned is one point of a continuum (a conserved quantity, a
            state nothing pins): the model does not determine it, and its linearization has a
            zero root that says nothing about stability. It is returned with
            ``isolated = False``; the message names the curve's direction and the combination
            of states behind the zero root (give ``equilibrium={...}`` to :meth:`linearize` to
            use a point of it deliberately). And, without ``guess`` and ``all``, when other
            equilibria of the same kind (``f = 0``, or held at the boundary by the projection)
            were found: they are listed with the rule that chose the one returned (no negative
            state first, then fewer zero states); give ``guess=`` near the one you mean, or
            use ``all=True``. An equilibrium held at the boundary does not compete with one
            where ``f = 0``, which comes first (the papers linearize there).
        """
        values = merge_params(params, overrides, "equilibrium")
        found = equilibria(self, guess=guess, isolated=all, **values)
        if all:
            return found
        return chosen_equilibrium(self, found, guess, self.resolve_params(values))

    def linearize(
        self,
        *,
        equilibrium: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> LinearDDE:
        """Linearize at an equilibrium into a :class:`fluidnet.LinearDDE`
        (see :func:`fluidnet.symbolic.linearize.linearize`), at parameter values
        ``params={name: value}`` (or as keywords, see :mod:`fluidnet.overrides`).

        Parameters
        ----------
        equilibrium : dict, optional
            ``{state: value}`` to linearize at; by default the one :meth:`equilibrium` returns
            at these parameter values.
        params : dict, optional
            Parameter values other than the defaults.
        **overrides
            The same overrides as keywords; a name may not be given both ways.

        Returns
        -------
        LinearDDE
            ``x' = A0 x + sum_k A_k x(t - tau_k)`` in deviation variables.

        Raises
        ------
        ModelError
            When a delay is negative or not real at the equilibrium, or the model depends
            explicitly on time.
        AnalysisError
            When the equilibrium lies on a switching surface, a Jacobian entry is not finite, or a
            given ``equilibrium`` is not one.
        """
        values = merge_params(params, overrides, "linearize")
        return linearize(self, equilibrium=equilibrium, **values)

    def loop_gain(
        self,
        cut: str,
        *,
        equilibrium: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> DelayTF:
        """The loop transfer function cut at a state or signal
        (see :func:`fluidnet.symbolic.loopgain.loop_gain`), at parameter values
        ``params={name: value}`` (or as keywords, see :mod:`fluidnet.overrides`).

        Parameters
        ----------
        cut : str
            The state or signal where the loop is opened: its uses in the right-hand sides become
            the loop input, its definition the loop output.
        equilibrium : dict, optional
            ``{state: value}`` to linearize at; by default the one :meth:`equilibrium` returns.
        params : dict, optional
            Parameter values other than the defaults.
        **overrides
            The same overrides as keywords; a name may not be given both ways.

        Returns
        -------
        DelayTF
            ``L(s)``, with ``1 + L(s) = 0`` the closed-loop characteristic equation.

        Raises
        ------
        ModelError
            For an unknown cut, an algebraic loop, or a delay that is negative or not real at the
            equilibrium.
        AnalysisError
            When the equilibrium lies on a switching surface, where the model has no linearization.
        """
        values = merge_params(params, overrides, "loop_gain")
        return loop_gain(self, cut, equilibrium=equilibrium, **values)

    # ------------------------------------------------------------------ pickling
    #: The attributes that define a model; ``_cache`` (see :meth:`cached`) is rebuilt on demand.
    _DEFINITION = (
        "name",
        "_state_names",
        "_params",
        "_signal_names",
        "_rhs_exprs",
        "_signal_exprs",
        "_nonnegative",
    )

    def __getstate__(self) -> dict[str, Any]:
        return {k: self.__dict__[k] for k in self._DEFINITION}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache = {}

    # ------------------------------------------------------------------ display
    def _repr_latex_(self) -> str:
        lines = [sympy.latex(eq) for eq in self.equations]
        if self._nonnegative:
            lines.append(
                r"\text{projected: } "
                + ", ".join(
                    sympy.latex(sympy.Function(n)(T_SYM)) + r" \ge 0" for n in self._nonnegative
                )
            )
        return r"$\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}$"

    def __repr__(self) -> str:
        return (
            f"Model({self.name!r}, states={list(self._state_names)}, "
            f"params={ {k: p.value for k, p in self._params.items()} })"
        )


def _find_cycle(graph: Mapping[str, list[str]]) -> list[str] | None:
    """A cycle ``[a, b, ..., a]`` of the directed graph ``{node: successors}``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for root in graph:
        if root in state:
            continue
        path, stack = [root], [iter(graph[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(graph[nxt]))
    return None


def _identifiers(values: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``values`` keyed by identifiers (NFKC-normalized names, as the model declares them); two
    spellings of one name are refused."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for k, v in values.items():
        key = identifier(k) if isinstance(k, str) else k
        if key in spelled:
            raise collision(spelled[key], k, what)
        spelled[key] = k
        out[key] = v
    return out


def _check_bounds_shape(name: str, bounds) -> None:
    try:
        lo, hi = bounds
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"parameter {name!r}: bounds must be a (lower, upper) pair") from exc
    if lo is not None and hi is not None and lo > hi:
        raise ParameterError(f"parameter {name!r}: lower bound {lo} exceeds upper bound {hi}")


_REAL_KWARGS = getattr(sympy.Function("_fluidnet_real_probe", real=True), "_kwargs")  # noqa: B009


def _real_function(name: str, key: Any) -> sympy.FunctionClass:
    """The real function ``name``: the caller's own class when it already is one (creating a
    function class costs about a millisecond once sympy's cache has dropped it)."""
    func = key.func if isinstance(key, AppliedUndef) else key
    if isinstance(func, UndefinedFunction) and func.__name__ == name:
        if getattr(func, "_kwargs", None) == _REAL_KWARGS:
            return func
    return sympy.Function(name, real=True)


def _recanon(expr: sympy.Expr, canon: Mapping[str, sympy.FunctionClass]) -> sympy.Expr:
    """Rebuild ``expr`` with every applied state/signal function replaced by the canonical one
    (subexpressions that already use the canonical functions are kept as they are)."""
    if isinstance(expr, AppliedUndef) and identifier(expr.func.__name__) in canon:
        args = [_recanon(cast(sympy.Expr, a), canon) for a in expr.args]
        func = canon[identifier(expr.func.__name__)]
        if expr.func == func and all(a is b for a, b in zip(args, expr.args, strict=True)):
            return expr
        return func(*args)
    if not expr.args:
        return expr
    new = [_recanon(cast(sympy.Expr, a), canon) for a in expr.args]
    if all(a is b for a, b in zip(new, expr.args, strict=True)):
        return expr
    return expr.func(*new)
