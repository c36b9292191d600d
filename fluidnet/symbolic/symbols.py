"""The symbols a model is written with: time ``t``, Laplace variable ``s``, states, parameters.

Names are identifiers as Python reads them: Python's parser normalizes every identifier to
Unicode normal form NFKC (PEP 3131), so ``"\ufb01"`` (the ligature ``ﬁ``) is read as ``fi``,
``"ℌ"`` as ``H`` and the micro sign ``µ`` (U+00B5) as the Greek ``μ`` (U+03BC). Text
expressions are parsed by Python's parser, so every declared name is normalized the same way
(:func:`identifier`), and two declared names that are the same identifier once normalized are
refused rather than merged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy
from sympy.core.function import AppliedUndef, UndefinedFunction

from ..errors import ModelError
from ..linear.quasipoly import LAPLACE
from ..parsing import collision, identifier

__all__ = [
    "t",
    "s",
    "states",
    "params",
    "signals",
    "identifier",
    "given_name",
    "name_of",
    "param_subs",
]

#: The time symbol of every model, ``sympy.Symbol("t", real=True)``: a state ``x`` is written
#: ``x(t)`` at the current time and ``x(t - T)`` delayed by ``T``.
t = sympy.Symbol("t", real=True)

#: The Laplace variable ``s`` of every transfer function and characteristic function, e.g.
#: ``fn.DelayTF.from_expr(fn.sympy.exp(-0.2 * fn.s) / (fn.s + 1))``.
s = LAPLACE


def _names(names: str | list[str] | tuple[str, ...]) -> list[str]:
    if isinstance(names, str):
        out = names.replace(",", " ").split()
    else:
        out = [str(n) for n in names]
    if not out:
        raise ModelError("no names given")
    seen: dict[str, str] = {}
    for name in out:
        if not name.isidentifier():
            raise ModelError(f"{name!r} is not a valid identifier for a symbol name")
        key = identifier(name)
        if key in seen and seen[key] != name:
            raise collision(seen[key], name)
        seen.setdefault(key, name)
    return [identifier(n) for n in out]


def states(names: str | list[str] | tuple[str, ...]) -> Any:
    """Create state functions of time.

    Parameters
    ----------
    names : str or sequence of str
        Space- or comma-separated names, e.g. ``"R q"``.

    Returns
    -------
    sympy.FunctionClass or tuple of them
        Undefined real functions; ``R(t)`` is the current value, ``R(t - tau)`` a delayed one.

    Examples
    --------
    >>> import fluidnet as fn
    >>> R, q = fn.states("R q")
    >>> R(fn.t - 1)
    R(t - 1)
    """
    funcs = tuple(sympy.Function(n, real=True) for n in _names(names))
    return funcs[0] if len(funcs) == 1 else funcs


def signals(names: str | list[str] | tuple[str, ...]) -> Any:
    """Create named algebraic signals (functions of time), e.g. a marking probability ``p``.

    Signals are defined in :class:`fluidnet.Model` by ``signals={p: expr}`` and may be used
    current or delayed in the right-hand sides, exactly like states.

    Parameters
    ----------
    names : str or sequence of str
        Space- or comma-separated names, e.g. ``"p"``.

    Returns
    -------
    sympy.FunctionClass or tuple of them
        As :func:`states`.
    """
    return states(names)


def params(names: str | list[str] | tuple[str, ...]) -> Any:
    """Create real parameter symbols.

    Parameters
    ----------
    names : str or sequence of str
        Space- or comma-separated names, e.g. ``"alpha beta"``.

    Returns
    -------
    sympy.Symbol or tuple of them
    """
    syms = tuple(sympy.Symbol(n, real=True) for n in _names(names))
    return syms[0] if len(syms) == 1 else syms


def given_name(key: Any, what: str) -> str:
    """Name of a state/signal/parameter given as a string, a sympy Function, ``R(t)`` or Symbol,
    as spelled (see :func:`name_of` for the identifier it stands for)."""
    if isinstance(key, str):
        name = key
    elif isinstance(key, UndefinedFunction):
        name = key.__name__
    elif isinstance(key, AppliedUndef):
        name = key.func.__name__
    elif isinstance(key, sympy.Symbol):
        name = key.name
    else:
        raise ModelError(f"cannot use {key!r} ({type(key).__name__}) as a {what}")
    if not name.isidentifier():
        raise ModelError(f"{what} name {name!r} is not a valid identifier")
    return name


def name_of(key: Any, what: str) -> str:
    """The identifier (NFKC-normalized, see :func:`identifier`) of a state/signal/parameter given
    as a string, a sympy Function, ``R(t)`` or Symbol."""
    return identifier(given_name(key, what))


def param_subs(values: Mapping[str, float]) -> dict[sympy.Symbol, sympy.Float]:
    """``{parameter symbol: sympy.Float(value)}`` for ``xreplace``."""
    return {sympy.Symbol(k, real=True): sympy.Float(v) for k, v in values.items()}
