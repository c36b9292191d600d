"""Sympy expressions written out as straight-line numpy source, evaluated on many points at once.

:func:`sympy.lambdify` prints each expression with sympy's code printer (about a millisecond per
line) and, the first time in a process, runs ``from numpy import *`` (60-70 ms of CPU: numpy
then loads its testing and f2py packages); its functions cannot be written to disk. The source
written here is plain Python over a fixed namespace (numpy's functions and a few helpers): it is
printed in microseconds per node, compiled once, and kept in the compile cache by the callers
(see :mod:`fluidnet.symbolic.steadycode`).

A function made by :func:`function_source` takes one array per argument group (its first axis
the group's symbols, any further axes the points: ``(len(group),)`` for one point,
``(len(group), K)`` for ``K``) and returns ``(len(outputs),) + points`` float64, evaluated under
the caller's ``np.errstate``: a value that is undefined (``0/0``, the square root of a negative
number, ``log`` of a negative number) is NaN, never complex. Nodes without a numpy counterpart
(special functions outside numpy) raise :class:`Unprintable`; callers fall back to
:func:`fluidnet.symbolic.numeric.to_numpy` for such models.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy

__all__ = [
    "GeneratedFunction",
    "Unprintable",
    "function_source",
    "real_function_source",
    "namespace",
    "NAMESPACE_VERSION",
]

#: Changes when the helpers of :func:`namespace` change meaning (part of the cache keys).
NAMESPACE_VERSION = "1"


class Unprintable(Exception):
    """A node this printer has no numpy form for."""


def _heaviside(x, h0=0.5):
    return np.heaviside(x, h0)


def _heaviside_strict(x, *_):
    # a switch evaluated exactly on its surface inside a derivative: undefined
    return np.where(x == 0, np.nan, np.heaviside(x, 0.5))


def _sign_strict(x):
    return np.where(x == 0, np.nan, np.sign(x))


def _dirac(x):
    # the derivative of a switch: zero away from the kink, undefined on it
    return np.where(x == 0, np.inf, 0.0)


def _piecewise(*pairs):
    """``Piecewise((v1, c1), (v2, c2), ...)``: the first true condition's value, NaN where
    none holds."""
    out = np.nan
    for value, cond in reversed(pairs):
        out = np.where(cond, value, out)
    return out


def _max(*args):
    out = args[0]
    for a in args[1:]:
        out = np.maximum(out, a)
    return out


def _min(*args):
    out = args[0]
    for a in args[1:]:
        out = np.minimum(out, a)
    return out


def namespace() -> dict[str, Any]:
    """The names the generated source uses (a new dict: the caller executes source in it)."""
    return {
        "_np": np,
        "_empty": np.empty,
        "_shape": np.broadcast_shapes,
        "_exp": np.exp,
        "_log": np.log,
        "_sqrt": np.sqrt,
        "_sin": np.sin,
        "_cos": np.cos,
        "_tan": np.tan,
        "_asin": np.arcsin,
        "_acos": np.arccos,
        "_atan": np.arctan,
        "_atan2": np.arctan2,
        "_sinh": np.sinh,
        "_cosh": np.cosh,
        "_tanh": np.tanh,
        "_asinh": np.arcsinh,
        "_acosh": np.arccosh,
        "_atanh": np.arctanh,
        "_abs": np.abs,
        "_sign": np.sign,
        "_floor": np.floor,
        "_ceil": np.ceil,
        "_and": np.logical_and,
        "_or": np.logical_or,
        "_not": np.logical_not,
        "_heaviside": _heaviside,
        "_heaviside_strict": _heaviside_strict,
        "_sign_strict": _sign_strict,
        "_dirac": _dirac,
        "_piecewise": _piecewise,
        "_max": _max,
        "_min": _min,
        "_nan": np.nan,
        "_inf": np.inf,
    }


_FUNCTIONS = {
    sympy.exp: "_exp",
    sympy.log: "_log",
    sympy.sin: "_sin",
    sympy.cos: "_cos",
    sympy.tan: "_tan",
    sympy.asin: "_asin",
    sympy.acos: "_acos",
    sympy.atan: "_atan",
    sympy.atan2: "_atan2",
    sympy.sinh: "_sinh",
    sympy.cosh: "_cosh",
    sympy.tanh: "_tanh",
    sympy.asinh: "_asinh",
    sympy.acosh: "_acosh",
    sympy.atanh: "_atanh",
    sympy.Abs: "_abs",
    sympy.floor: "_floor",
    sympy.ceiling: "_ceil",
    sympy.Max: "_max",
    sympy.Min: "_min",
    sympy.DiracDelta: "_dirac",
}

_RELATIONS = {
    sympy.StrictLessThan: "<",
    sympy.LessThan: "<=",
    sympy.StrictGreaterThan: ">",
    sympy.GreaterThan: ">=",
    sympy.Equality: "==",
    sympy.Unequality: "!=",
}


def _number(e, complex_ok: bool = False) -> str:
    if e is sympy.S.NaN:
        return "_nan"
    if e is sympy.S.Infinity:
        return "_inf"
    if e is sympy.S.NegativeInfinity:
        return "(-_inf)"
    if e is sympy.S.ComplexInfinity:
        return "_nan"  # 1/0 written out by sympy: undefined
    if not e.is_real:
        if not complex_ok:
            raise Unprintable(f"the complex number {e}")
        z = complex(e)
        return f"complex({z.real!r}, {z.imag!r})"
    value = float(e)
    if math.isnan(value):
        return "_nan"
    if math.isinf(value):
        return "_inf" if value > 0 else "(-_inf)"
    return f"({value!r})"


class Printer:
    """Prints expressions over named symbols; ``strict`` switches are NaN on their surface."""

    def __init__(self, names: dict, strict: bool = False, complex_ok: bool = False):
        self.names = names
        self.strict = strict
        self.complex_ok = complex_ok

    def __call__(self, e) -> str:
        names = self.names
        if e in names:
            return names[e]
        if e is sympy.true:
            return "True"
        if e is sympy.false:
            return "False"
        if e.is_Number or e.is_NumberSymbol or e is sympy.I:
            return _number(e, self.complex_ok)
        if e.is_Symbol:
            raise Unprintable(f"the symbol {e} is neither an argument nor defined")
        if e.is_Add:
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if e.is_Mul:
            args = list(e.args)
            if args[0] is sympy.S.NegativeOne and len(args) > 1:
                return "(-" + " * ".join(self(a) for a in args[1:]) + ")"
            return "(" + " * ".join(self(a) for a in args) + ")"
        if e.is_Pow:
            base, k = e.args
            if k is sympy.S.Half:
                return f"_sqrt({self(base)})"
            if k.is_Integer:
                if k == -1:
                    return f"(1.0 / {self(base)})"
                return f"({self(base)} ** {int(k)})"
            return f"({self(base)} ** {self(k)})"
        func = e.func
        if func in _FUNCTIONS:
            return f"{_FUNCTIONS[func]}({', '.join(self(a) for a in e.args)})"
        if func is sympy.Heaviside:
            helper = "_heaviside_strict" if self.strict else "_heaviside"
            return f"{helper}({', '.join(self(a) for a in e.args)})"
        if func is sympy.sign:
            helper = "_sign_strict" if self.strict else "_sign"
            return f"{helper}({self(e.args[0])})"
        if func is sympy.Piecewise:
            pairs = ", ".join(f"({self(v)}, {self(c)})" for v, c in e.args)
            return f"_piecewise({pairs})"
        if func in _RELATIONS:
            return f"({self(e.args[0])} {_RELATIONS[func]} {self(e.args[1])})"
        if func is sympy.And:
            return f"_np.logical_and.reduce(({', '.join(self(a) for a in e.args)},))"
        if func is sympy.Or:
            return f"_np.logical_or.reduce(({', '.join(self(a) for a in e.args)},))"
        if func is sympy.Not:
            return f"_not({self(e.args[0])})"
        if func is sympy.re:
            return self(e.args[0])  # states and parameters are real
        if func is sympy.im:
            return "0.0"
        raise Unprintable(f"{func} (in {e})")


def function_source(
    name: str,
    groups: Sequence[Sequence[sympy.Symbol]],
    outputs: Sequence[Any],
    *,
    definitions: Sequence[tuple[sympy.Symbol, Any]] = (),
    strict: bool = False,
    complex_values: bool = False,
) -> str:
    """The source of ``def name(a0, a1, ...)`` returning ``outputs`` as one float array.

    Parameters
    ----------
    name : str
        The function's name.
    groups : sequence of sequences of sympy.Symbol
        The argument groups: argument ``g`` is an array whose row ``j`` is ``groups[g][j]``.
    outputs : sequence of sympy.Expr or numbers
        The values returned, rows of the result.
    definitions : sequence of (Symbol, Expr)
        Subexpressions the outputs (and later definitions) use, evaluated once, in order.
    strict : bool
        ``Heaviside`` and ``sign`` are NaN exactly on their switching surface (for derivatives,
        which are undefined there), not sympy's ``1/2`` and ``0``.
    complex_values : bool
        The expressions may hold complex numbers (closed forms of polynomial roots by
        radicals): the result is complex.

    Returns
    -------
    str
        Python source of the function, to be executed in :func:`namespace`.

    Raises
    ------
    Unprintable
        For a node with no numpy counterpart.
    """
    names: dict = {}
    args = [f"_a{g}" for g in range(len(groups))]
    lines = [f"def {name}({', '.join(args)}):"]
    shapes = ", ".join(f"{a}.shape[1:]" for a in args)
    lines.append(f"    _s = _shape({shapes})" if args else "    _s = ()")
    for g, group in enumerate(groups):
        for j, sym in enumerate(group):
            if sym in names:
                continue  # a symbol listed twice: its first row
            names[sym] = f"_v{len(names)}"
            lines.append(f"    {names[sym]} = {args[g]}[{j}]")
    code = Printer(names, strict, complex_values)
    for sym, expr in definitions:
        value = code(sympy.sympify(expr))
        names[sym] = f"_v{len(names)}"
        lines.append(f"    {names[sym]} = {value}")
    dtype = ", dtype=complex" if complex_values else ""
    lines.append(f"    _o = _empty(({len(outputs)},) + _s{dtype})")
    for i, out in enumerate(outputs):
        lines.append(f"    _o[{i}] = {code(sympy.sympify(out))}")
    lines.append("    return _o")
    return "\n".join(lines) + "\n"


def real_function_source(
    name: str,
    groups: Sequence[Sequence[sympy.Symbol]],
    outputs: Sequence[Any],
    *,
    definitions: Sequence[tuple[sympy.Symbol, Any]] = (),
) -> str | None:
    """:func:`function_source` of real expressions, or ``None`` where one has no numpy form
    here or holds ``I`` (the caller falls back to :func:`~fluidnet.symbolic.numeric.to_numpy`,
    which evaluates complex values)."""
    exprs = [*outputs, *(e for _, e in definitions)]
    if any(sympy.sympify(e).has(sympy.I) for e in exprs):
        return None
    try:
        return function_source(name, groups, outputs, definitions=definitions)
    except Unprintable:
        return None


class GeneratedFunction:
    """A function of :func:`function_source` (its rows first: ``(k,) + points``) called as
    :func:`~fluidnet.symbolic.numeric.to_numpy`'s functions are: with the arguments of one
    point it gives ``(k,)``, and ``batch`` with arrays ``(len(group), K)`` gives ``(K, k)``;
    floating-point errors ignored (undefined values are NaN, callers check)."""

    def __init__(self, function: Callable[..., np.ndarray]) -> None:
        self._function = function

    def __call__(self, *args) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._function(*(np.asarray(a, dtype=float) for a in args))

    def batch(self, *args) -> np.ndarray:
        return self(*args).T
