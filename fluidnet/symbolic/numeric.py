"""Turn sympy expressions into fast numpy functions (cached per model by the callers)."""

from __future__ import annotations

import keyword
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np
import sympy
from numpy.exceptions import ComplexWarning

__all__ = ["to_numpy"]


def _dirac(x):
    # Derivative of a switch (Heaviside, sign, Max): zero away from the kink, undefined on it.
    return np.where(np.asarray(x) == 0, np.inf, 0.0)


def _heaviside_strict(x, *_):
    # A switch evaluated exactly on its switching surface inside a derivative: undefined.
    x = np.asarray(x, dtype=float)
    return np.where(x == 0, np.nan, (x > 0).astype(float))


def _sign_strict(x):
    x = np.asarray(x, dtype=float)
    return np.where(x == 0, np.nan, np.sign(x))


#: sympy.lambdify's modules: NumPy given as the module, not the name "numpy". Both select
#: sympy's NumPy printer (the same code); the name also makes sympy run ``from numpy import *``
#: once per process, which imports every submodule NumPy lists in ``__all__`` (f2py, testing,
#: typing, ...): 73 ms of the first chart or linearization of a process.
_MODULES = [{"DiracDelta": _dirac}, np]
_MODULES_STRICT = [
    {"DiracDelta": _dirac, "Heaviside": _heaviside_strict, "sign": _sign_strict},
    np,
]


def to_numpy(
    args: Sequence[Sequence[sympy.Symbol]],
    exprs: Sequence[sympy.Expr | float] | sympy.MatrixBase,
    *,
    strict_switches: bool = False,
    definitions: Sequence[tuple[sympy.Symbol, sympy.Expr]] = (),
    plain: bool = False,
) -> Callable[..., np.ndarray]:
    """A numpy function of the argument groups returning the expressions as an array.

    ``args`` is a sequence of symbol tuples (e.g. ``(x_symbols, p_symbols)``); the function takes
    one array per group and returns an array shaped like ``exprs`` (float, or complex when an
    entry is complex). Evaluation happens under ``np.errstate(all="ignore")``: callers check the
    result for non-finite values and raise a clear error themselves.

    With ``strict_switches`` (used for derivatives), ``Heaviside`` and ``sign`` evaluate to NaN
    exactly on their switching surface, where a derivative of a switching term is undefined,
    instead of sympy's conventional values ``1/2`` and ``0``.

    ``definitions`` are ``(symbol, expression)`` pairs, in order, that the expressions may use
    (common subexpressions computed once).

    With ``plain`` the expressions are written out as they are, without the search for common
    subexpressions: much faster to build for thousands of expressions, the same values up to
    the order of rounding.

    The function's ``batch`` attribute evaluates ``K`` points at once: one array of shape
    ``(len(group), K)`` per group, a result of shape ``(K,) + shape``.
    """
    if isinstance(exprs, sympy.MatrixBase):
        shape = exprs.shape
        flat = list(cast("Iterable[sympy.Expr]", exprs))  # the entries, row by row
    else:
        flat = list(exprs)
        shape = (len(flat),)
    groups = [tuple(a) for a in args]
    modules = _MODULES_STRICT if strict_switches else _MODULES
    if not definitions and not plain:
        groups, flat = _plain_arguments(groups, flat)
    fill: Callable[[np.ndarray, Any], bool] | None = None
    if definitions or plain:
        # the expressions use the symbols of `definitions` (evaluated first, in order)
        filling = _straight_line(groups, list(definitions), flat, modules)

        def f(*vals):
            return filling(None, *vals)

        def fill_real(out: np.ndarray, vals) -> bool:
            """Write the values into the real array ``out``; False when one is complex."""
            with warnings.catch_warnings():
                warnings.simplefilter("error", ComplexWarning)
                try:
                    with np.errstate(all="ignore"):
                        filling(out, *vals)
                except (TypeError, ComplexWarning):
                    return False
            return True

        fill = fill_real
    else:
        f = sympy.lambdify(groups, flat, modules=modules, cse=True)

    def call(*vals) -> np.ndarray:
        vals = [np.asarray(v, dtype=float) for v in vals]
        if fill is not None:
            arr = np.empty(len(flat))
            if fill(arr, vals):
                return arr.reshape(shape)
        with np.errstate(all="ignore"):
            out = f(*vals)
        cplx = any(np.iscomplexobj(o) for o in out)
        arr = np.empty(len(flat), dtype=complex if cplx else float)
        for i, o in enumerate(out):
            arr[i] = o
        return arr.reshape(shape)

    def batch(*vals) -> np.ndarray:
        """Many points at once: each group as an array ``(len(group), K)``; returns
        ``(K,) + shape``."""
        vals = [np.asarray(v, dtype=float) for v in vals]
        K = next((v.shape[-1] for v in vals if v.ndim == 2), 1)
        if fill is not None:
            arr = np.empty((len(flat), K))
            if fill(arr, vals):
                return np.moveaxis(arr, 0, -1).reshape((K,) + tuple(shape))
        with np.errstate(all="ignore"):
            out = f(*vals)
        cplx = any(np.iscomplexobj(o) for o in out)
        arr = np.empty((len(flat), K), dtype=complex if cplx else float)
        for i, o in enumerate(out):
            arr[i] = o
        return np.moveaxis(arr, 0, -1).reshape((K,) + tuple(shape))

    call.batch = batch
    return call


def _plain_arguments(groups: list[tuple], flat: list) -> tuple[list[tuple], list]:
    """The argument groups with every symbol whose name is not a Python identifier (a lag such
    as ``x_1(t - (T_1))``) renamed, in one substitution over the expressions.

    :func:`sympy.lambdify` renames such arguments itself, but one at a time, each time
    substituting into every expression: quadratic in the size of a large model (thousands of
    lags in a network of a thousand flows took minutes).
    """
    unsafe = [
        s
        for g in groups
        for s in g
        if isinstance(s, sympy.Symbol)
        and not (s.name.isidentifier() and not keyword.iskeyword(s.name))
    ]
    if not unsafe:
        return groups, flat
    used = {s.name for g in groups for s in g if isinstance(s, sympy.Symbol)}
    for e in flat:
        if isinstance(e, sympy.Basic):
            used.update(s.name for s in cast("set[sympy.Symbol]", e.free_symbols))
    rename: dict = {}
    for s in unsafe:
        if s not in rename:
            name = f"_arg{len(rename)}"
            while name in used:
                name = "_" + name
            used.add(name)
            rename[s] = sympy.Symbol(name, **s.assumptions0)
    groups = [tuple(rename.get(s, s) for s in g) for g in groups]
    flat = [e.xreplace(rename) if isinstance(e, sympy.Basic) else e for e in flat]
    return groups, flat


def _straight_line(groups, definitions, outputs, modules) -> Callable[..., list]:
    """A numpy function evaluating ``definitions`` in order, then ``outputs``: ``f(out, *args)``
    writes them into ``out`` (rows), ``f(None, *args)`` returns them as a list.

    Sums, products, powers, symbols and numbers are written out directly (sympy's code
    printer costs about a millisecond per line, and a linearization plan of a large model has
    thousands of small definitions); any other node is compiled by :func:`sympy.lambdify`
    with the same ``modules`` and called.
    """
    names: dict = {}
    ns: dict = {"numpy": np}
    lines = [f"def _f(_out, {', '.join(f'_a{g}' for g in range(len(groups)))}):"]
    for g, group in enumerate(groups):
        for j, sym in enumerate(group):
            names[sym] = f"_v{len(names)}"
            lines.append(f"    {names[sym]} = _a{g}[{j}]")

    def code(e) -> str:
        if e in names:
            return names[e]
        if e.is_Number and e.is_real and e.is_finite:
            return f"({float(e)!r})"
        if e.is_Add:
            return "(" + " + ".join(code(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + " * ".join(code(a) for a in e.args) + ")"
        if e.is_Pow:
            return f"({code(e.args[0])} ** {code(e.args[1])})"
        if e.is_Symbol:
            raise ValueError(f"{e} is neither an argument nor defined")
        free = sorted(e.free_symbols, key=str)
        key = f"_g{len(ns)}"
        ns[key] = sympy.lambdify(free, e, modules=modules)
        return f"{key}({', '.join(code(v) for v in free)})"

    for sym, expr in definitions:
        value = code(expr)
        names[sym] = f"_v{len(names)}"
        lines.append(f"    {names[sym]} = {value}")
    values = [code(o) for o in outputs]
    lines.append("    if _out is None:")
    lines.append("        return [" + ", ".join(values) + "]")
    lines += [f"    _out[{i}] = {v}" for i, v in enumerate(values)]
    exec(compile("\n".join(lines), "<fluidnet linearization plan>", "exec"), ns)  # noqa: S102
    return ns["_f"]
