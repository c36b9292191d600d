"""A canonical form rewritten in array symbols: what both backends print.

States become ``x[i]``, lagged values ``z[k]``, parameters ``p[j]``; every switching term is
replaced by its mode weight ``w[j]`` (:func:`fluidnet.symbolic.switches.extract_switches`), and
each switching function gets its gradient (for the Filippov equivalent control).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import ModelError
from ..symbolic.switches import Switch, extract_switches

__all__ = ["ArrayForm", "CODEGEN_VERSION", "array_form"]

#: Bump when the generated code changes meaning (invalidates every cached module).
CODEGEN_VERSION = "1"


@dataclass(frozen=True)
class ArrayForm:
    """The form rewritten in array symbols, ready to print."""

    rhs: list[sympy.Expr]
    delays: list[sympy.Expr]
    switches: list[Switch]
    grads: list[list[sympy.Expr]]
    lag_state: list[int]
    lag_statedep: list[int]
    switch_lagdep: list[int]


def array_form(form) -> ArrayForm:
    """The form in array symbols, its switches extracted and their gradients taken.

    Raises
    ------
    ModelError
        For a loop-gain form (external inputs), or an unsupported switching condition.
    """
    n = form.n
    xs = [sympy.Symbol(f"x[{i}]", real=True) for i in range(n)]
    zs = [sympy.Symbol(f"z[{k}]", real=True) for k in range(len(form.lags))]
    ps = [sympy.Symbol(f"p[{j}]", real=True) for j in range(len(form.p))]
    if form.inputs:
        raise ModelError("cannot integrate a loop-gain form (it has external inputs)")
    rep = dict(zip(form.x, xs, strict=True))
    rep.update(zip(form.p, ps, strict=True))
    rep.update({lag.symbol: z for lag, z in zip(form.lags, zs, strict=True)})
    rhs = [e.xreplace(rep) for e in form.rhs]
    delays = [lag.delay.xreplace(rep) for lag in form.lags]
    rhs, switches = extract_switches(rhs)
    aux = [sympy.Symbol(f"aux[{k}]", real=True) for k in range(len(form.lags))]
    grads = []
    lagdep = []
    for sw in switches:
        row = [sympy.diff(sw.surface, x) for x in xs]
        dt = sympy.diff(sw.surface, form.t)
        used = [k for k, z in enumerate(zs) if sw.surface.has(z)]
        dt += sum((sympy.diff(sw.surface, zs[k]) * aux[k] for k in used), sympy.S.Zero)
        grads.append(row + [dt])
        lagdep.append(1 if used else 0)
    statedep = [0 if lag.kind in ("constant", "parameter") else 1 for lag in form.lags]
    return ArrayForm(
        rhs=rhs,
        delays=delays,
        switches=switches,
        grads=grads,
        lag_state=[lag.state for lag in form.lags],
        lag_statedep=statedep,
        switch_lagdep=lagdep,
    )
