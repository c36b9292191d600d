"""Expressions as plain JSON trees, and back to sympy without evaluating any text.

A certificate carries the model it is about (its right-hand sides and frozen delays) as JSON
trees, so that anyone can re-check it without fluidnet's model code, and without ``eval``: the
reader below builds sympy expressions node by node from a closed list of node kinds.

Node kinds (each a JSON list whose first item names the kind):

=====================================  ==================================================
``["n", "p/q"]``                       an exact rational (``"3"``, ``"-1/2"``)
``["f", "0.1"]``                       a floating-point constant of the model, by its
                                       shortest decimal; evaluated as the interval between
                                       that decimal and its binary value
``["x", i]``, ``["z", k]``             current state ``i``; delayed value (lag) ``k``
``["p", name]``                        a parameter
``["+", a, ...]``, ``["*", a, ...]``   sum, product
``["^", a, b]``                        power
``["fn", name, a, ...]``               one of :data:`FUNCTIONS`
``["pw", [e, c], ...]``                piecewise: the first ``e`` whose condition ``c`` holds
``["<", a, b]`` (and ``"<="``,         a condition; ``["true"]``, ``["and", ...]``,
``">"``, ``">="``)                     ``["or", ...]``, ``["not", c]``
``["pi"]``, ``["E"]``                  the constants
=====================================  ==================================================
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import sympy

__all__ = ["FUNCTIONS", "digest", "from_tree", "to_tree", "TreeError"]

#: Functions a tree may apply (sympy's names); the switching ones are decided on a box or the
#: box is left undecided (a non-smooth point may lie inside).
FUNCTIONS = {
    "exp": sympy.exp,
    "log": sympy.log,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "atan": sympy.atan,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "Abs": sympy.Abs,
    "sign": sympy.sign,
    "Heaviside": sympy.Heaviside,
    "DiracDelta": sympy.DiracDelta,
    "Max": sympy.Max,
    "Min": sympy.Min,
}

_RELATIONS = {
    sympy.StrictLessThan: "<",
    sympy.LessThan: "<=",
    sympy.StrictGreaterThan: ">",
    sympy.GreaterThan: ">=",
}
_FROM_RELATION = {
    "<": sympy.StrictLessThan,
    "<=": sympy.LessThan,
    ">": sympy.StrictGreaterThan,
    ">=": sympy.GreaterThan,
}


class TreeError(ValueError):
    """An expression that has no tree form, or a tree that is not well formed."""


def to_tree(expr: Any, names: Mapping[sympy.Symbol, list]) -> list:
    """The JSON tree of a sympy expression whose symbols are the keys of ``names`` (each mapped
    to its leaf, e.g. ``["x", 0]``).

    Raises
    ------
    TreeError
        For a symbol not in ``names`` or a function outside :data:`FUNCTIONS`.
    """
    e = sympy.sympify(expr)
    if e is sympy.true:
        return ["true"]
    if isinstance(e, sympy.Symbol):
        if e not in names:
            raise TreeError(f"the symbol {e} is not a state, a delayed value or a parameter")
        return list(names[e])
    if isinstance(e, sympy.Rational):
        return ["n", str(e)]
    if isinstance(e, sympy.Float):
        return ["f", repr(float(e))]
    if e is sympy.pi:
        return ["pi"]
    if e is sympy.E:
        return ["E"]
    if isinstance(e, sympy.Add):
        return ["+", *[to_tree(a, names) for a in e.args]]
    if isinstance(e, sympy.Mul):
        return ["*", *[to_tree(a, names) for a in e.args]]
    if isinstance(e, sympy.Pow):
        return ["^", to_tree(e.base, names), to_tree(e.exp, names)]
    if isinstance(e, sympy.Piecewise):
        return ["pw", *[[to_tree(a.args[0], names), to_tree(a.args[1], names)] for a in e.args]]
    if type(e) in _RELATIONS:
        return [_RELATIONS[type(e)], to_tree(e.lhs, names), to_tree(e.rhs, names)]
    if isinstance(e, sympy.And):
        return ["and", *[to_tree(a, names) for a in e.args]]
    if isinstance(e, sympy.Or):
        return ["or", *[to_tree(a, names) for a in e.args]]
    if isinstance(e, sympy.Not):
        return ["not", to_tree(e.args[0], names)]
    name = type(e).__name__
    if isinstance(e, sympy.Derivative):
        raise TreeError(
            f"{e} is a derivative: neutral terms are not supported (the root bound of a "
            "retarded system does not hold for a neutral one)"
        )
    if name in FUNCTIONS:
        return ["fn", name, *[to_tree(a, names) for a in e.args]]
    raise TreeError(
        f"{e} ({name}) cannot be enclosed by the proof: supported are + * ^, rationals, "
        f"floats, pi, E, Piecewise with < <= > >= conditions and {', '.join(FUNCTIONS)}"
    )


def from_tree(tree: Any, leaf) -> Any:
    """The sympy expression of a tree; ``leaf(kind, key)`` gives the symbol of an ``"x"``,
    ``"z"`` or ``"p"`` leaf.

    Raises
    ------
    TreeError
        For a node that is not one of the kinds of the module notes.
    """
    if not isinstance(tree, list) or not tree or not isinstance(tree[0], str):
        raise TreeError(f"{tree!r} is not an expression node")
    kind, args = tree[0], tree[1:]
    if kind in ("x", "z", "p"):
        if len(args) != 1:
            raise TreeError(f"{tree!r}: a leaf has one key")
        return leaf(kind, args[0])
    if kind == "n":
        _one_string(tree)
        try:
            return sympy.Rational(args[0])
        except (TypeError, ValueError):
            raise TreeError(f"{tree!r} is not a rational number") from None
    if kind == "f":
        _one_string(tree)
        try:
            value = float(args[0])
        except ValueError:
            raise TreeError(f"{tree!r} is not a decimal number") from None
        return sympy.Float(value)
    if kind == "pi" and not args:
        return sympy.pi
    if kind == "E" and not args:
        return sympy.E
    if kind == "true" and not args:
        return sympy.true
    if kind == "+":
        return sympy.Add(*[from_tree(a, leaf) for a in args])
    if kind == "*":
        return sympy.Mul(*[from_tree(a, leaf) for a in args])
    if kind == "^" and len(args) == 2:
        return sympy.Pow(from_tree(args[0], leaf), from_tree(args[1], leaf))
    if kind == "fn" and args and isinstance(args[0], str) and args[0] in FUNCTIONS:
        return FUNCTIONS[args[0]](*[from_tree(a, leaf) for a in args[1:]])
    if kind == "pw":
        pairs = []
        for a in args:
            if not isinstance(a, list) or len(a) != 2:
                raise TreeError(f"{a!r} is not a piece [expression, condition]")
            pairs.append((from_tree(a[0], leaf), from_tree(a[1], leaf)))
        return sympy.Piecewise(*pairs)
    if kind in _FROM_RELATION and len(args) == 2:
        return _FROM_RELATION[kind](from_tree(args[0], leaf), from_tree(args[1], leaf))
    if kind in ("and", "or"):
        op = sympy.And if kind == "and" else sympy.Or
        return op(*[from_tree(a, leaf) for a in args])
    if kind == "not" and len(args) == 1:
        return sympy.Not(from_tree(args[0], leaf))
    raise TreeError(f"{tree!r}: unknown expression node {kind!r}")


def _one_string(tree: Sequence) -> None:
    if len(tree) != 2 or not isinstance(tree[1], str):
        raise TreeError(f"{tree!r}: a number node holds one string")


def digest(data: Any) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``data`` (sorted keys, no spaces)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
