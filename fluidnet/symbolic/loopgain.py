"""Loop transfer functions of a linearized model, cut at a state or a signal.

Cutting at a name ``c`` turns every *use* of ``c`` in the right-hand sides into an external input
``u`` (current or delayed, as used), while the *definition* of ``c`` (its state trajectory, or
its signal expression) becomes the output ``y``. With ``H(s)`` the transfer function from ``u``
to ``y`` of the linearized open loop, the loop gain is ``L(s) = -H(s)``, so that closing the loop
(``u = y``) gives the characteristic equation ``1 + L(s) = 0``.

The result is exact: ``L = N/D`` where ``D(s) = det(s I - A(s))`` is the characteristic function of
the open loop ``x' = A x + B u, y = C x`` (``A``, ``B``, ``C`` sums of matrices times
``e^{-s tau_k}``) and ``N(s) = det(s I - A - B C) - D(s)`` (which equals ``-C adj(sI - A) B``):
both are characteristic polynomials, computed division-free over the ring of the delay
exponentials. The fraction
is deliberately not reduced: then ``D + N`` is exactly the closed-loop characteristic function,
and the Nyquist count ``Z = N + P`` with ``P`` the right-half-plane zeros of ``D`` counts every
closed-loop root, including modes a cancellation would hide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..errors import AnalysisError, ModelError
from ..linear.delays import DELAY_RTOL
from ..linear.delaytf import DelayTF
from ..linear.quasipoly import QuasiPolynomial
from .canonical import DDEForm, Lag, build_form
from .equilibrium import state_values
from .linearize import (
    check_off_switching_surfaces,
    equilibrium_substitution,
    matching_symbolic_equilibrium,
)
from .symbols import identifier, param_subs
from .symbols import s as S_SYM

if TYPE_CHECKING:
    from .model import Model

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
    if isinstance(cut, str):
        cut = identifier(cut)  # the model's names are NFKC-normalized identifiers
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


def _assemble(blocks, rep, delay_value, exp_of):
    """Matrices ``A``, ``B``, ``C``, ``D`` of the open loop, with ``exp_of(tau)`` standing for
    each ``exp(-s tau)``."""

    def total(name: str) -> sympy.Matrix:
        acc = None
        for dexpr, M in blocks[name]:
            tau = delay_value(dexpr)
            term = M.xreplace(rep)
            term = term if tau == 0 else term * exp_of(tau)
            acc = term if acc is None else acc + term
        assert acc is not None  # every list starts with the delay-free block
        return acc

    return total("A"), total("B"), total("C"), total("D")


#: Refuse to expand a loop gain whose quasi-polynomials could hold more delay monomials than
#: this (the exact form grows like the product over states of the delays each one sees).
MAX_MONOMIALS = 20_000


def monomial_bound(M: sympy.Matrix, zs: Sequence[sympy.Symbol]) -> int:
    """An upper bound on the monomials of ``det(s I - M(z))``: every term of the determinant
    picks one entry per column, so the product over columns of (distinct ``z`` in the column,
    plus one for the delay-free part, plus one for ``s`` on the diagonal)."""
    bound = 1
    zset = set(zs)
    for j in range(M.shape[1]):
        col = set().union(*(cast(sympy.Expr, M[i, j]).free_symbols for i in range(M.shape[0])))
        col &= zset
        bound *= len(col) + 2
    return bound


def characteristic_quasipolynomial(
    M: sympy.Matrix, zs: Sequence[sympy.Symbol], taus: Sequence[float]
) -> QuasiPolynomial:
    """``det(s I - M(z))`` with ``z_k = exp(-s tau_k)``, exactly, as a quasi-polynomial.

    ``M`` holds numbers and the symbols ``zs``; the characteristic polynomial is computed
    division-free (Berkowitz) over the polynomial ring in ``zs``.
    """
    from sympy.polys.matrices import DomainMatrix

    n = M.shape[0]
    dM = DomainMatrix.from_Matrix(M)
    dom = dM.domain
    gens = list(getattr(dom, "symbols", ()))
    index = [gens.index(z) if z in gens else None for z in zs]
    terms: dict[float, dict[int, float]] = {}
    for k, c in enumerate(dM.charpoly()):
        power = n - k
        items = c.terms() if gens else [((), c)]
        for monom, coeff in items:
            tau = sum(
                float(monom[i]) * t for i, t in zip(index, taus, strict=True) if i is not None
            )
            value = complex(coeff)
            if abs(value.imag) > 1e-14 * max(1.0, abs(value.real)):
                raise ModelError(f"complex coefficient {value} in a characteristic function")
            slot = terms.setdefault(tau, {})
            slot[power] = slot.get(power, 0.0) + value.real
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
    if equilibrium is None:
        eq = model.equilibrium(**params)
    else:
        eq = state_values(model.state_names, equilibrium, "equilibrium")
    form, output = cut_form(model, cut)
    psubs = param_subs(values)
    rep_state = equilibrium_substitution(form, eq, [0])  # the input value is computed next
    check_off_switching_surfaces(model, eq, values)
    u_eq = output.xreplace(rep_state).xreplace(psubs)
    try:
        u_eq = float(sympy.N(u_eq))
    except TypeError as exc:
        raise ModelError(f"the cut signal {cut!r} does not evaluate to a number at {eq}") from exc
    blocks = _open_loop_blocks(form, output)
    return values, eq, form, output, psubs, u_eq, blocks


def loop_gain(
    model: Model, cut: str, *, equilibrium: Mapping[str, float] | None = None, **params: Any
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
    AnalysisError
        When the equilibrium lies on a switching surface (e.g. a sliding equilibrium of a
        binary-feedback law), where the model has no linearization.

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
    rep = {**equilibrium_substitution(form, eq, [u_eq]), **psubs}

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

    A, B, C, D = _assemble(blocks, rep, delay_value, exp_of)
    if any(sympy.expand(e) != 0 for e in D):
        raise ModelError(
            f"cutting at {cut!r} leaves an algebraic loop: its definition depends "
            "directly on its own uses"
        )
    # open loop x' = A x + B u, y = C x; closing u = y gives A + B C, and
    # det(sI - A - BC) = det(sI - A) (1 + L)  =>  L = [det(sI - A - BC) - det(sI - A)] / det(sI - A)
    zs, tl = list(zsyms.values()), list(zsyms.keys())
    closed = (A + B * C).applyfunc(sympy.expand)
    bound = max(monomial_bound(A, zs), monomial_bound(closed, zs))
    if bound > MAX_MONOMIALS:
        raise AnalysisError(
            f"the exact loop gain of model {model.name!r} cut at {cut!r} could hold up to "
            f"{bound} delay monomials ({A.shape[0]} states, {len(zs)} distinct delays), too many "
            "to expand; analyse the characteristic function instead: lin = model.linearize(); "
            "lin.roots(), lin.spectral_abscissa(), fn.critical_value(...)"
        )
    den = characteristic_quasipolynomial(A, zs, tl)
    return DelayTF(
        cancellation_free_difference(characteristic_quasipolynomial(closed, zs, tl), den), den
    )


#: A coefficient of ``N = det(sI - A - BC) - det(sI - A)`` smaller than this fraction of the same
#: coefficient (same delay, same power of ``s``) of the two determinants is a rounding residue of
#: their cancellation: both are expanded in floating point, with relative errors far above
#: 1e-16, so such a difference carries no information.
CANCELLATION_RTOL = 1e-12


def cancellation_free_difference(a: QuasiPolynomial, b: QuasiPolynomial) -> QuasiPolynomial:
    """``a - b`` with the coefficients that cancel to rounding level set to exactly 0.

    Left in, such residues (e.g. ``1e-16`` next to ``0.01``) are harmless in value but not in
    structure: a residue on a high power of ``s`` puts a spurious zero near ``1e16`` rad/s, and
    the frequency grids of :func:`fluidnet.margins` and :func:`fluidnet.nyquist`, which span two
    decades beyond every zero, then reach astronomical frequencies.
    """
    ta, tb = a.terms, b.terms
    out = []
    for tau in sorted(set(ta) | set(tb)):
        ca = ta.get(tau, np.zeros(1))
        cb = tb.get(tau, np.zeros(1))
        n = max(ca.size, cb.size)
        ca = np.concatenate([np.zeros(n - ca.size, dtype=ca.dtype), ca])
        cb = np.concatenate([np.zeros(n - cb.size, dtype=cb.dtype), cb])
        d = ca - cb
        d[np.abs(d) <= CANCELLATION_RTOL * np.maximum(np.abs(ca), np.abs(cb))] = 0
        out.append((tau, d))
    return QuasiPolynomial(out)


def loop_gain_expr(model, cut: str, **params: Any) -> sympy.Expr:
    """The loop gain as a sympy expression in :data:`fluidnet.s`, simplified.

    Parameters keep their symbols when the model's equilibrium has a closed form (parameter
    overrides only select which closed-form branch is used); otherwise numbers are substituted.
    """
    values, eq, form, output, psubs, u_eq, blocks = _prepare(model, cut, None, params)
    sym_eq = matching_symbolic_equilibrium(model, model.form, eq, psubs)
    if sym_eq is None:
        rep = {**equilibrium_substitution(form, eq, [u_eq]), **psubs}
    else:
        rep0 = equilibrium_substitution(form, sym_eq, [0])
        u_sym = sympy.simplify(output.xreplace(rep0))
        rep = equilibrium_substitution(form, sym_eq, [u_sym])

    def delay_value(dexpr):
        return sympy.simplify(dexpr.xreplace(rep))

    A, B, C, D = _assemble(blocks, rep, delay_value, lambda tau: sympy.exp(-S_SYM * tau))
    Delta = sympy.eye(A.shape[0]) * S_SYM - A
    if any(sympy.simplify(cast(sympy.Expr, e)) != 0 for e in D):
        raise ModelError(f"cutting at {cut!r} leaves an algebraic loop")
    num = -(C * Delta.adjugate(method="berkowitz") * B)[0, 0]
    return sympy.simplify(num / Delta.det(method="berkowitz"))
