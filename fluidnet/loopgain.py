"""Loop transfer functions of a linearized model, cut at a state or a signal.

Cutting at a name ``c`` turns every *use* of ``c`` in the right-hand sides into an external input
``u`` (current or delayed, as used), while the *definition* of ``c`` (its state trajectory, or
its signal expression) becomes the output ``y``. With ``H(s)`` the transfer function from ``u``
to ``y`` of the linearized open loop, the loop gain is ``L(s) = -H(s)``, so that closing the loop
(``u = y``) gives the characteristic equation ``1 + L(s) = 0``.

The result is exact: ``L = N/D`` where ``D(s) = det(s I - A0 - sum A_k e^{-s tau_k})`` is the
characteristic function of the open loop and ``N(s) = -C(s) adj(Delta(s)) B(s)``. The fraction
is deliberately not reduced: then ``D + N`` is exactly the closed-loop characteristic function,
and the Nyquist count ``Z = N + P`` with ``P`` the right-half-plane zeros of ``D`` counts every
closed-loop root, including modes a cancellation would hide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import sympy

from .ddeform import DDEForm, Lag, build_form
from .delaytf import DelayTF
from .errors import ModelError
from .linearize import _matching_symbolic_equilibrium
from .model import param_subs
from .quasipoly import DELAY_RTOL, QuasiPolynomial
from .symbols import s as S_SYM

__all__ = ["loop_gain", "loop_gain_expr", "cut_form"]


def cut_form(model, cut: str) -> tuple[DDEForm, sympy.Expr]:
    """The model's canonical form with the loop cut at ``cut``, and the loop output expression.

    Returns
    -------
    form : DDEForm
        With ``inputs == (cut,)``: current uses of ``cut`` are ``form.u[0]``, delayed uses are
        lags whose ``state`` index is ``len(form.states)``.
    output : sympy.Expr
        The definition of ``cut`` in the form's symbols.
    """
    if cut in model.signal_names:
        form = build_form(model, opaque=(cut,))
        out = form.signals[cut]
        return form, out
    if cut not in model.state_names:
        raise ModelError(
            f"cannot cut the loop at {cut!r}: it is neither a state nor a signal of model "
            f"{model.name!r} (states: {', '.join(model.state_names)}; signals: "
            f"{', '.join(model.signal_names) or 'none'})"
        )
    base = model.form
    i = base.states.index(cut)
    n = len(base.states)
    u0 = sympy.Symbol(f"{cut}_in", real=True)
    rep = {base.x[i]: u0}
    lags = []
    for lag in base.lags:
        if lag.state == i:
            sym = sympy.Symbol(f"{cut}_in(t - ({lag.delay}))", real=True)
            rep[lag.symbol] = sym
            lags.append(Lag(sym, n, lag.delay, lag.kind))
        lags.append(lag)
    # delays keep referring to the real states (they are frozen at the equilibrium anyway)
    rhs = tuple(e.xreplace(rep) for e in base.rhs)
    form = replace(base, lags=tuple(lags), rhs=rhs, inputs=(cut,), u=(u0,))
    return form, base.x[i]


def _open_loop_blocks(form: DDEForm, output: sympy.Expr):
    """Symbolic Jacobian blocks: state part, input part, output part."""
    n = len(form.states)
    f = sympy.Matrix(form.rhs)
    y = sympy.Matrix([output])
    blocks = {"A": [], "B": [], "C": [], "D": []}  # lists of (delay expr, matrix)
    X = sympy.Matrix(form.x)
    U = sympy.Matrix(form.u)
    blocks["A"].append((sympy.S.Zero, f.jacobian(X)))
    blocks["B"].append((sympy.S.Zero, f.jacobian(U)))
    blocks["C"].append((sympy.S.Zero, y.jacobian(X)))
    blocks["D"].append((sympy.S.Zero, y.jacobian(U)))
    for lag in form.lags:
        if lag.state < n:
            colA = sympy.zeros(n, n)
            colA[:, lag.state] = f.diff(lag.symbol)
            colC = sympy.zeros(1, n)
            colC[:, lag.state] = y.diff(lag.symbol)
            blocks["A"].append((lag.delay, colA))
            blocks["C"].append((lag.delay, colC))
        else:
            blocks["B"].append((lag.delay, f.diff(lag.symbol)))
            blocks["D"].append((lag.delay, y.diff(lag.symbol)))
    return blocks


def _substitution(form: DDEForm, eq: Mapping[str, Any], u_eq: Any) -> dict:
    vals = [sympy.sympify(eq[n]) for n in form.states] + [sympy.sympify(u_eq)]
    rep = dict(zip(tuple(form.x) + tuple(form.u), vals, strict=True))
    for lag in form.lags:
        rep[lag.symbol] = vals[lag.state]
    return rep


def _assemble(blocks, rep, delay_value, exp_of):
    """Matrices ``Delta(s)``, ``B(s)``, ``C(s)``, ``D(s)`` with ``exp_of(tau)`` for each delay."""

    def total(name):
        acc = None
        for dexpr, M in blocks[name]:
            tau = delay_value(dexpr)
            term = M.xreplace(rep)
            term = term if tau == 0 else term * exp_of(tau)
            acc = term if acc is None else acc + term
        return acc

    A = total("A")
    n = A.shape[0]
    return sympy.eye(n) * S_SYM - A, total("B"), total("C"), total("D")


def _quasi(expr: sympy.Expr, zs: list[sympy.Symbol], taus: list[float]) -> QuasiPolynomial:
    expr = sympy.expand(expr)
    if expr == 0:
        return QuasiPolynomial([])
    poly = sympy.Poly(expr, S_SYM, *zs)
    terms = {}
    for monom, coeff in poly.terms():
        a, *bs = monom
        tau = float(sum(b * tj for b, tj in zip(bs, taus, strict=True)))
        c = complex(coeff)
        if abs(c.imag) > 1e-14 * max(1.0, abs(c.real)):
            raise ModelError(f"complex coefficient {c} in a loop gain")
        arr = terms.setdefault(tau, {})
        arr[a] = arr.get(a, 0.0) + c.real
    pairs = []
    for tau, powers in terms.items():
        deg = max(powers)
        coeffs = np.zeros(deg + 1)
        for a, c in powers.items():
            coeffs[deg - a] = c
        pairs.append((tau, coeffs))
    return QuasiPolynomial(pairs)


def _prepare(model, cut, equilibrium, params):
    values = model.resolve_params(params)
    eq = dict(equilibrium) if equilibrium is not None else model.equilibrium(**params)
    form, output = cut_form(model, cut)
    psubs = param_subs(values)
    rep_state = _substitution(form, eq, 0)  # the input value is computed next
    u_eq = output.xreplace(rep_state).xreplace(psubs)
    try:
        u_eq = float(sympy.N(u_eq))
    except TypeError as exc:
        raise ModelError(f"the cut signal {cut!r} does not evaluate to a number at {eq}") from exc
    blocks = _open_loop_blocks(form, output)
    return values, eq, form, output, psubs, u_eq, blocks


def loop_gain(
    model, cut: str, *, equilibrium: Mapping[str, float] | None = None, **params: Any
) -> DelayTF:
    """The loop transfer function ``L(s)`` of ``model`` cut at ``cut``.

    Parameters
    ----------
    model : fluidnet.Model
    cut : str
        A state or signal name. Its uses in the right-hand sides become the loop input, its
        definition the loop output.
    equilibrium : dict, optional
        Default: :meth:`Model.equilibrium`.
    **params
        Parameter overrides.

    Returns
    -------
    DelayTF
        With ``1 + L(s) = 0`` the closed-loop characteristic equation. The fraction is not
        reduced (see the module docstring).

    Raises
    ------
    ModelError
        For an unknown cut, an algebraic loop (the output depends directly on the input), or a
        delay that is negative or not real at the equilibrium.

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> L = fn.models.rcp().loop_gain("R")       # eq (9): e^{-s d0}(alpha s d0 + beta)/(s d0)^2
    >>> w = 2.0; d0, a, b = 0.2, 0.4, 0.2
    >>> G = np.exp(-1j*w*d0)*(a*1j*w*d0 + b)/(1j*w*d0)**2
    >>> bool(abs(L(1j*w) - G) < 1e-12 * abs(G))
    True
    """
    values, eq, form, output, psubs, u_eq, blocks = _prepare(model, cut, equilibrium, params)
    rep = {**_substitution(form, eq, u_eq), **psubs}

    taus: list[float] = []

    def delay_value(dexpr):
        v = complex(sympy.N(dexpr.xreplace(rep)))
        if abs(v.imag) > 0 or not math.isfinite(v.real) or v.real < 0:
            raise ModelError(f"delay {dexpr} is {v} at the equilibrium {eq}: not real and >= 0")
        tau = v.real
        for t0 in taus:
            if abs(t0 - tau) <= DELAY_RTOL * max(1.0, tau):
                return t0
        if tau != 0.0:
            taus.append(tau)
        return tau

    zsyms: dict[float, sympy.Symbol] = {}

    def exp_of(tau):
        if tau not in zsyms:
            zsyms[tau] = sympy.Symbol(f"z{len(zsyms)}")
        return zsyms[tau]

    Delta, B, C, D = _assemble(blocks, rep, delay_value, exp_of)
    if any(sympy.expand(e) != 0 for e in D):
        raise ModelError(
            f"cutting at {cut!r} leaves an algebraic loop: its definition depends "
            "directly on its own uses"
        )
    det = Delta.det(method="berkowitz")
    adj = Delta.adjugate(method="berkowitz")
    num = -(C * adj * B)[0, 0]
    zs = list(zsyms.values())
    tl = list(zsyms.keys())
    return DelayTF(_quasi(num, zs, tl), _quasi(det, zs, tl))


def loop_gain_expr(model, cut: str, **params: Any) -> sympy.Expr:
    """The loop gain as a sympy expression in :data:`fluidnet.s`, simplified.

    Parameters keep their symbols when the model's equilibrium has a closed form (parameter
    overrides only select which closed-form branch is used); otherwise numbers are substituted.
    """
    values, eq, form, output, psubs, u_eq, blocks = _prepare(model, cut, None, params)
    sym_eq = _matching_symbolic_equilibrium(model, model.form, eq, psubs)
    if sym_eq is None:
        rep = {**_substitution(form, eq, u_eq), **psubs}
    else:
        rep0 = _substitution(form, sym_eq, 0)
        u_sym = sympy.simplify(output.xreplace(rep0))
        rep = _substitution(form, sym_eq, u_sym)

    def delay_value(dexpr):
        return sympy.simplify(dexpr.xreplace(rep))

    Delta, B, C, D = _assemble(blocks, rep, delay_value, lambda tau: sympy.exp(-S_SYM * tau))
    if any(sympy.simplify(e) != 0 for e in D):
        raise ModelError(f"cutting at {cut!r} leaves an algebraic loop")
    num = -(C * Delta.adjugate(method="berkowitz") * B)[0, 0]
    return sympy.simplify(num / Delta.det(method="berkowitz"))
