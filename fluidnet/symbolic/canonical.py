"""The canonical form of a model: plain symbols for current states and for every delayed value.

A :class:`DDEForm` is what every back end consumes (equilibrium, linearization, the compiled
integrator). Each delayed reference ``X(t - tau)`` becomes a *lag*: a symbol ``z_k`` standing for
the value of state ``X`` at ``t - tau_k``, where ``tau_k`` is an expression of ``t``, the current
states, parameters and *earlier* lags (signals used delayed produce nested, state-dependent
delays such as ``b(t - tau_b - b(t - tau_b)/c)``). Evaluating the lags in order is always possible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, cast

import sympy
from sympy.core.function import AppliedUndef

from ..errors import ModelError
from .symbols import t as T_SYM

if TYPE_CHECKING:
    from .model import Model

__all__ = ["Lag", "DDEForm", "build_form", "delay_of"]


@dataclass(frozen=True)
class Lag:
    """One delayed value ``states[state](t - delay)``.

    Attributes
    ----------
    symbol : sympy.Symbol
        The symbol standing for the delayed value in ``rhs``, ``signals`` and later delays.
    state : int
        Index of the state (or of an input, for loop-gain forms: ``index >= n_states``).
    delay : sympy.Expr
        The delay, an expression of ``t``, current-state symbols, parameters and earlier lags.
    """

    symbol: sympy.Symbol
    state: int
    delay: sympy.Expr

    kind: str = "state"
    """``"constant"`` (a number), ``"parameter"`` (parameters only) or ``"state"`` (depends
    on states, other lags or ``t``)."""


@dataclass(frozen=True)
class DDEForm:
    """Canonical, fully expanded form of a :class:`fluidnet.Model`.

    Attributes
    ----------
    name : str
    states : tuple of str
        State names; their order is the order of the state vector.
    x : tuple of sympy.Symbol
        Symbols of the current state values.
    t : sympy.Symbol
        Time.
    params : tuple of str
        Parameter names; their order is the order of the parameter vector.
    p : tuple of sympy.Symbol
        Parameter symbols.
    lags : tuple of Lag
        Delayed values, in evaluation order.
    rhs : tuple of sympy.Expr
        The unprojected right-hand sides ``f_i(t, x, z, p)``.
    nonnegative : tuple of int
        Indices of projected states (``x_i >= 0``: while ``x_i = 0`` the derivative is
        ``max(f_i, 0)``).
    signals : dict of str to sympy.Expr
        The model's signals, expanded in the same symbols (for output only).
    inputs : tuple of str
        Names of loop inputs (only in forms built for a loop gain); lags with
        ``state >= len(states)`` refer to them and ``u`` holds their current-value symbols.
    u : tuple of sympy.Symbol
        Current-value symbols of the inputs.
    """

    name: str
    states: tuple[str, ...]
    x: tuple[sympy.Symbol, ...]
    t: sympy.Symbol
    params: tuple[str, ...]
    p: tuple[sympy.Symbol, ...]
    lags: tuple[Lag, ...]
    rhs: tuple[sympy.Expr, ...]
    nonnegative: tuple[int, ...]
    signals: dict[str, sympy.Expr] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    u: tuple[sympy.Symbol, ...] = ()

    @property
    def n(self) -> int:
        return len(self.states)

    def lag_label(self, lag: Lag) -> str:
        names = self.states + self.inputs
        return f"{names[lag.state]}(t - ({lag.delay}))"

    @property
    def explicit_time(self) -> bool:
        """True when ``t`` appears explicitly in a right-hand side or a delay."""
        return any(e.has(self.t) for e in self.rhs) or any(
            lag.delay.has(self.t) for lag in self.lags
        )


@lru_cache(maxsize=1 << 16)
def delay_of(arg: sympy.Expr) -> sympy.Expr:
    """The delay ``expand(t - arg)`` of a reference ``X(arg)``, without forming ``t - arg`` when
    ``arg`` is ``t`` plus other terms (references of many states share one argument, e.g.
    ``t - T_n`` in flow ``n``'s equation, hence the cache)."""
    if arg == T_SYM:
        return sympy.S.Zero
    if isinstance(arg, sympy.Add) and T_SYM in arg.args:
        rest = [a for a in arg.args if a != T_SYM]
        if len(rest) == len(arg.args) - 1:
            return sympy.expand(sympy.Add(*[-a for a in rest]))
    return sympy.expand(T_SYM - arg)


def build_form(model: Model, opaque: tuple[str, ...] = ()) -> DDEForm:
    """Expand the signals of ``model`` and replace every state reference by a symbol.

    One pass over each right-hand side: a signal used at time ``arg`` is replaced by its
    definition read at ``arg`` (``t -> arg``, its own signals expanded in turn), a state used
    at ``arg`` by the symbol of its lag, and every node is rebuilt once, from the canonical
    pieces. Intermediate expressions with the signals (or states) still applied at shifted
    times are never formed, and each (subexpression, time) pair is converted once however many
    right-hand sides share it (a link's price in the equation of every flow on the link), so
    building the form of a network of ``n`` flows costs time linear in ``n``.

    Parameters
    ----------
    model : fluidnet.Model
    opaque : tuple of str
        Signal names kept unexpanded and treated as inputs (used to cut a loop at a signal).
    """
    states = model.state_names
    inputs = tuple(opaque)
    names = states + inputs
    index = {n: i for i, n in enumerate(names)}
    x = tuple(sympy.Symbol(n, real=True) for n in names)
    p_syms = tuple(sympy.Symbol(n, real=True) for n in model.param_names)
    p_set = set(p_syms)
    signal_defs = {k: v for k, v in model._signal_exprs.items() if k not in inputs}
    lags: list[Lag] = []
    lag_index: dict[tuple[int, sympy.Expr], sympy.Symbol] = {}
    # (subexpression, time it is read at) -> its canonical form; ``t`` itself maps to the time
    done: dict[tuple[sympy.Expr, sympy.Expr], sympy.Expr] = {}
    expanding: set[tuple[str, sympy.Expr]] = set()

    def lag_symbol(name: str, arg: sympy.Expr, shown: sympy.Expr) -> sympy.Expr:
        delay = delay_of(arg)
        i = index[name]
        if delay == 0:
            return x[i]
        if delay.is_number and delay < 0:
            raise ModelError(f"{name}({shown}) refers to the future (negative delay {delay})")
        key = (i, delay)
        sym = lag_index.get(key)
        if sym is None:
            sym = sympy.Symbol(f"{name}(t - ({delay}))", real=True)
            lag_index[key] = sym
            if delay.is_number:
                kind = "constant"
            elif delay.free_symbols <= p_set:
                kind = "parameter"
            else:
                kind = "state"
            lags.append(Lag(sym, i, delay, kind))
        return sym

    def canon(e: sympy.Expr, at: sympy.Expr) -> sympy.Expr:
        # ``e`` read at time ``at`` (already canonical): signals expanded, states as symbols
        if not e.args:
            return at if e.is_Symbol and e == T_SYM else e
        key = (e, at)
        got = done.get(key)
        if got is not None:
            return got
        if isinstance(e, AppliedUndef):
            name = e.func.__name__
            arg = canon(cast(sympy.Expr, e.args[0]), at)
            if name in signal_defs:
                if (name, arg) in expanding:  # pragma: no cover - Model rejects cycles before
                    raise ModelError("signal definitions reference each other in a cycle")
                expanding.add((name, arg))
                out = canon(signal_defs[name], arg)
                expanding.discard((name, arg))
            else:
                out = lag_symbol(name, arg, cast(sympy.Expr, e.args[0]))
        else:
            new_args = [canon(cast(sympy.Expr, a), at) for a in e.args]
            if all(a is b for a, b in zip(new_args, e.args, strict=True)):
                out = e
            else:
                out = e.func(*new_args)
        done[key] = out
        return out

    rhs = tuple(canon(model._rhs_exprs[n], T_SYM) for n in states)
    sig = {k: canon(v, T_SYM) for k, v in model._signal_exprs.items()}
    return DDEForm(
        name=model.name,
        states=states,
        x=x[: len(states)],
        t=T_SYM,
        params=model.param_names,
        p=p_syms,
        lags=tuple(lags),
        rhs=rhs,
        nonnegative=tuple(states.index(n) for n in model.nonnegative),
        signals=sig,
        inputs=inputs,
        u=x[len(states) :],
    )
