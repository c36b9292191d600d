"""Switching terms of a model: every ``Heaviside``, ``sign``, ``Abs``, ``Max``, ``Min`` and
``Piecewise`` replaced by an expression linear in a mode weight, with its switching surface.

The integrator (:mod:`fluidnet.dde`, through :mod:`fluidnet.codegen`) freezes the weights during
a step and locates the surfaces' zeros as events; linearization
(:mod:`fluidnet.symbolic.linearize`) and the non-smooth checks of
:mod:`fluidnet.bifurcation.smoothness` read the surfaces. Pure sympy: nothing here needs numba.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import sympy

from ..errors import ModelError

__all__ = ["Switch", "extract_switches"]


@dataclass(frozen=True)
class Switch:
    """A switching surface ``s(t, x, z, p) = 0`` and the weight symbol that replaces it.

    Attributes
    ----------
    weight : sympy.Symbol
        ``w_j``: 1 on the side ``s > 0``, 0 on the side ``s < 0``; a Filippov convex weight in
        between while the solution slides on the surface.
    surface : sympy.Expr
        ``s_j``, an expression of ``t``, current states, lags, parameters and the weights of
        switches nested inside it.
    source : sympy.Expr
        The term of the model it was extracted from (for messages).
    """

    weight: sympy.Symbol
    surface: sympy.Expr
    source: sympy.Expr


def extract_switches(exprs, prefix: str = "w") -> tuple[list[sympy.Expr], list[Switch]]:
    """Replace every switching term of ``exprs`` by an expression linear in a mode weight.

    ``Heaviside(s)`` becomes ``w``, ``sign(s)`` becomes ``2w - 1``, ``Abs(s)`` becomes
    ``(2w - 1) s``, ``Max(a, b)`` becomes ``w a + (1 - w) b`` with ``s = a - b`` (``Min``
    likewise), and ``Piecewise((e1, c1), ..., (en, True))`` becomes nested convex combinations
    with ``s = lhs - rhs`` of each relational condition. Inner switches are extracted first, so a
    surface may depend on the weights of switches nested inside it. Identical surfaces share a
    weight; a surface ``-s`` reuses the weight of ``s`` as ``1 - w``.

    Returns
    -------
    new_exprs : list of sympy.Expr
    switches : list of Switch
        In evaluation order (inner before outer).

    Raises
    ------
    ModelError
        For a ``Piecewise`` without a final ``(value, True)`` branch or with a condition that is
        not a single inequality (``==``, ``!=``, ``And``, ``Or`` ...).
    """
    switches: list[Switch] = []
    by_surface: dict[sympy.Expr, sympy.Expr] = {}

    def weight_for(s: sympy.Expr, source: sympy.Expr) -> sympy.Expr:
        s = sympy.expand(s) if s.is_Add else s
        if s in by_surface:
            return by_surface[s]
        neg = sympy.expand(-s) if (-s).is_Add else -s
        if neg in by_surface:
            return 1 - by_surface[neg]
        w = sympy.Symbol(f"{prefix}[{len(switches)}]", real=True)
        switches.append(Switch(w, s, source))
        by_surface[s] = w
        return w

    def condition_surface(cond, where) -> sympy.Expr:
        if isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
            lhs, rhs = cast("tuple[sympy.Expr, sympy.Expr]", cond.args)
            return lhs - rhs
        if isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
            lhs, rhs = cast("tuple[sympy.Expr, sympy.Expr]", cond.args)
            return rhs - lhs
        raise ModelError(
            f"unsupported condition {cond} in {where}: a switching condition must be a single "
            "inequality such as x > y (nest Piecewise terms for compound conditions)"
        )

    def rebuild(e: sympy.Expr) -> sympy.Expr:
        if not e.args or e.is_Atom:
            return e
        if isinstance(e, sympy.Piecewise):
            branches = cast("tuple[tuple[sympy.Expr, Any], ...]", e.args)
            pieces = [(rebuild(v), c) for v, c in branches]
            if pieces[-1][1] is not sympy.true:
                raise ModelError(f"{e}: a Piecewise must end with a (value, True) branch")
            acc = pieces[-1][0]
            for value, cond in reversed(pieces[:-1]):
                cond = cond.func(*[rebuild(a) for a in cond.args])
                w = weight_for(condition_surface(cond, e), e)
                acc = w * value + (1 - w) * acc
            return acc
        args = [rebuild(cast(sympy.Expr, a)) for a in e.args]
        if isinstance(e, sympy.Heaviside):
            return weight_for(args[0], e)
        if isinstance(e, sympy.sign):
            return 2 * weight_for(args[0], e) - 1
        if isinstance(e, sympy.Abs):
            return (2 * weight_for(args[0], e) - 1) * args[0]
        if isinstance(e, (sympy.Max, sympy.Min)):
            acc = args[0]
            for b in args[1:]:
                w = weight_for(acc - b, e)
                acc = w * acc + (1 - w) * b if isinstance(e, sympy.Max) else w * b + (1 - w) * acc
            return acc
        if all(a is b for a, b in zip(args, e.args, strict=True)):
            return e
        return e.func(*args)

    return [rebuild(sympy.sympify(e)) for e in exprs], switches
