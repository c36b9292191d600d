"""The Jacobian of a form's right-hand side with respect to the current state (and time), for
the linearly implicit methods: its nonzero entries, differentiated by sympy."""

from __future__ import annotations

from typing import cast

import sympy

from ..errors import ModelError
from .arrayform import ArrayForm

__all__ = ["jacobian_entries"]


def jacobian_entries(form, sym: ArrayForm) -> tuple[list[int], list[sympy.Expr]]:
    """The nonzero entries of the Jacobian ``d rhs_i / d x_j`` (and ``d rhs_i / d t``, lagged
    values and mode weights held fixed): their flat indices ``i * (n + 1) + j`` (``j = n`` for
    time) in increasing order, and their expressions.

    Raises
    ------
    ModelError
        When sympy cannot differentiate a right-hand side (it names the state).
    """
    n = form.n
    xs = {f"x[{i}]": i for i in range(n)}
    entries: dict[int, sympy.Expr] = {}
    for i, e in enumerate(sym.rhs):
        for x in sorted(cast("set[sympy.Symbol]", e.free_symbols), key=lambda v: v.name):
            j = n if x == form.t else xs.get(x.name)
            if j is None:
                continue
            d = sympy.diff(e, x)
            if d.has(sympy.Derivative, sympy.Subs):
                raise ModelError(
                    f"model {form.name!r}: the right-hand side of state {form.states[i]!r} "
                    f"cannot be differentiated in {x.name if j == n else form.states[j]!r} "
                    f"(needed by a linearly implicit method): {d}"
                )
            if d != 0:
                entries[i * (n + 1) + j] = d
    keys = sorted(entries)
    return keys, [entries[k] for k in keys]
