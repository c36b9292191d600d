"""Second and third derivatives of a delay equation at an equilibrium, as multilinear forms.

The normal form of a Hopf bifurcation needs the quadratic and cubic terms of the right-hand
side as a functional of the history, ``B(phi1, phi2)`` and ``C(phi1, phi2, phi3)``, on
exponential functions ``phi(theta) = exp(lambda theta) v`` (the critical eigenfunction, its
conjugate and the second-order center-manifold coefficients). They are the mixed derivatives

``B(phi_i, phi_j) = d^2/(de_i de_j) G(e)``,  ``C(phi_1, phi_2, phi_3) = d^3/(de_1 de_2 de_3) G(e)``

at ``e = 0`` of ``G(e) = f(x* + sum_i e_i phi_i(0), z(e), p)``, where each delayed value of the
canonical form (:attr:`fluidnet.Model.form`) is read from the history at its *actual* delay,
``z_k(e) = x*_s + sum_i e_i phi_i,s(-tau_k(e))``, and ``tau_k(e)`` is the lag's delay evaluated at
the perturbed current states and earlier delayed values.

These derivatives are computed exactly (to rounding) by evaluating the model's sympy
expressions in the algebra of *hyper-dual numbers* ``a = sum_S a_S e^S`` over subsets ``S`` of
``{1, 2, 3}`` with ``e_i^2 = 0``: a product keeps only square-free monomials, and a smooth
function of ``a0 + n`` (``n`` nilpotent) is its Taylor polynomial to third order. The
coefficient of ``e_1 e_2`` is then ``B`` and that of ``e_1 e_2 e_3`` is ``C``.

For a constant delay ``tau_k`` this is the usual second/third derivative of ``f`` in the states
and lags. For a state-dependent delay the reading point moves with the state, and
``exp(-lambda tau_k(e))`` contributes the history's derivatives ``phi'``, ``phi''`` at ``-tau_k*``:
the formal expansion that Sieber (2017, "Local bifurcations in differential equations with
state-dependent delay", Chaos 27) shows gives the correct normal-form coefficients.
"""

from __future__ import annotations

import cmath
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy
from sympy.core.relational import Relational

from ..errors import ModelError

__all__ = ["HyperDual", "multilinear_terms"]

# square-free products: c[S] = sum over A subset of S of a[A] b[S \ A]
_PAIRS = [(s, a, s ^ a) for s in range(8) for a in range(8) if a & s == a]


class HyperDual:
    """``sum_S c[S] e^S`` over subsets ``S`` of ``{e1, e2, e3}`` (bit masks), ``e_i^2 = 0``."""

    __slots__ = ("c",)

    def __init__(self, c):
        self.c = c

    @staticmethod
    def const(v: complex) -> HyperDual:
        c = np.zeros(8, dtype=complex)
        c[0] = v
        return HyperDual(c)

    @property
    def base(self) -> complex:
        return complex(self.c[0])

    def __add__(self, o):
        return HyperDual(self.c + _coef(o))

    __radd__ = __add__

    def __neg__(self):
        return HyperDual(-self.c)

    def nilpotent_part_nonzero(self) -> bool:
        return bool(np.any(self.c[1:] != 0))

    def __mul__(self, o):
        if not isinstance(o, HyperDual):
            return HyperDual(self.c * o)
        a, b = self.c, o.c
        c = np.zeros(8, dtype=complex)
        for s, x, y in _PAIRS:
            c[s] += a[x] * b[y]
        return HyperDual(c)

    __rmul__ = __mul__

    #: Highest derivative order the algebra carries (products of three distinct ``e_i``).
    order = 3

    def apply(self, derivs) -> HyperDual:
        """``f(self)`` from ``f`` and its derivatives ``derivs[k] = f^(k)`` at the base value."""
        f0, f1, f2, f3 = derivs[:4]
        n = HyperDual(self.c.copy())
        n.c[0] = 0.0
        n2 = n * n
        n3 = n2 * n
        return HyperDual(f1 * n.c + (f2 / 2.0) * n2.c + (f3 / 6.0) * n3.c + _unit(f0))


def _unit(v):
    c = np.zeros(8, dtype=complex)
    c[0] = v
    return c


def _coef(o):
    return o.c if isinstance(o, HyperDual) else _unit(o)


def _is_jet(v) -> bool:
    return hasattr(v, "apply")


def _as_hd(v) -> HyperDual:
    return v if isinstance(v, HyperDual) else HyperDual.const(v)


def _base(v) -> complex:
    return v.base if _is_jet(v) else complex(v)


def _real_base(v, expr) -> float:
    b = _base(v)
    if abs(b.imag) > 1e-12 * max(1.0, abs(b.real)):
        raise ModelError(f"{expr} is not real at the equilibrium ({b})")
    return b.real


def _pow(base, expo, expr):
    if _is_jet(expo) and expo.nilpotent_part_nonzero():
        return _exp(_log(base, expr) * expo)
    e = _base(expo).real
    if not _is_jet(base):
        return complex(base) ** e
    b = _real_base(base, expr)
    order = base.order
    if b == 0.0 and e < order and e != int(e):
        raise ModelError(f"{expr} is not {order} times differentiable at the equilibrium")
    derivs = []
    coef = 1.0
    for k in range(order + 1):
        derivs.append(coef * b ** (e - k) if coef != 0 else 0.0)
        coef *= e - k
    return base.apply(derivs)


def _exp(a):
    if not _is_jet(a):
        return cmath.exp(a)
    v = cmath.exp(a.base)
    return a.apply([v] * (a.order + 1))


def _log(a, expr):
    if not _is_jet(a):
        return cmath.log(a)
    b = _real_base(a, expr)
    if b <= 0:
        raise ModelError(f"{expr}: the logarithm's argument is {b:g} <= 0 at the equilibrium")
    derivs = [math.log(b)]
    derivs += [(-1) ** (k - 1) * math.factorial(k - 1) / b**k for k in range(1, a.order + 1)]
    return a.apply(derivs)


def _trig(a, kind):
    if not _is_jet(a):
        return {"sin": cmath.sin, "cos": cmath.cos, "tanh": cmath.tanh}[kind](a)
    b = a.base
    N = a.order
    if kind in ("sin", "cos"):
        cycle = [cmath.sin(b), cmath.cos(b), -cmath.sin(b), -cmath.cos(b)]
        shift = 0 if kind == "sin" else 1
        return a.apply([cycle[(k + shift) % 4] for k in range(N + 1)])
    # tanh: f^(k) = P_k(t), t = tanh(b), polynomials with P_0 = t, P_{k+1} = P_k'(t) (1 - t^2)
    t = cmath.tanh(b)
    derivs = []
    for coefs in _tanh_polynomials(N):
        v = 0j
        for c in coefs:  # Horner, highest power first
            v = v * t + c
        derivs.append(v)
    return a.apply(derivs)


@functools.cache
def _tanh_polynomials(N: int) -> tuple[tuple[float, ...], ...]:
    """Coefficients (highest power first) of ``P_0 .. P_N`` with ``tanh^(k) = P_k(tanh)``."""
    out = []
    poly = np.polynomial.Polynomial([0.0, 1.0])
    one_minus = np.polynomial.Polynomial([1.0, 0.0, -1.0])
    for _ in range(N + 1):
        out.append(tuple(float(c) for c in poly.coef[::-1]))
        poly = poly.deriv() * one_minus
    return tuple(out)


_GENERIC: dict = {}


def _generic(func, a, expr):
    """A unary function of a jet from its symbolic derivatives (built once per function)."""
    if not _is_jet(a):
        return complex(func(sympy.sympify(a)).evalf())
    N = a.order
    key = (func, N)
    if key not in _GENERIC:
        X = sympy.Symbol("X")
        ders = [func(X)]
        for _ in range(N):
            ders.append(sympy.diff(ders[-1], X))
        _GENERIC[key] = sympy.lambdify([X], ders, modules=["cmath", "math"])
    try:
        derivs = [complex(d) for d in _GENERIC[key](_real_base(a, expr))]
    except (ValueError, ZeroDivisionError) as exc:
        raise ModelError(f"{expr} is not differentiable at the equilibrium ({exc})") from exc
    return a.apply(derivs)


def _surface_side(value, expr) -> float:
    s = _real_base(value, expr)
    if s == 0.0:
        raise ModelError(f"{expr} is evaluated on its switching surface: not differentiable")
    return s


_SWITCHES = (sympy.Heaviside, sympy.sign, sympy.Abs, sympy.Piecewise, sympy.Max, sympy.Min)


def evaluate(expr: sympy.Basic, env: Mapping[Any, Any]) -> Any:
    """``expr`` evaluated with symbols from ``env`` (numbers or :class:`HyperDual`)."""
    if expr in env:
        return env[expr]
    if isinstance(expr, sympy.Expr) and (expr.is_Number or expr.is_NumberSymbol):
        return complex(expr)
    if expr.is_Symbol:
        raise ModelError(f"no value for the symbol {expr}")
    args = expr.args
    if isinstance(expr, sympy.Add):
        out = 0
        for a in args:
            out = out + evaluate(a, env)
        return out
    if isinstance(expr, sympy.Mul):
        out = 1
        for a in args:
            out = out * evaluate(a, env)
        return out
    if isinstance(expr, sympy.Pow):
        return _pow(evaluate(args[0], env), evaluate(args[1], env), expr)
    if isinstance(expr, sympy.exp):
        return _exp(evaluate(args[0], env))
    if isinstance(expr, sympy.log):
        return _log(evaluate(args[0], env), expr)
    if isinstance(expr, (sympy.sin, sympy.cos, sympy.tanh)):
        return _trig(evaluate(args[0], env), type(expr).__name__)
    if isinstance(expr, sympy.Function) and len(args) == 1 and not isinstance(expr, _SWITCHES):
        return _generic(type(expr), evaluate(args[0], env), expr)
    if isinstance(expr, (sympy.Max, sympy.Min)):
        vals = [evaluate(a, env) for a in args]
        bases = [_real_base(v, expr) for v in vals]
        pick = int(np.argmax(bases) if isinstance(expr, sympy.Max) else np.argmin(bases))
        others = [b for i, b in enumerate(bases) if i != pick]
        if any(b == bases[pick] for b in others):
            raise ModelError(f"{expr} is evaluated on its switching surface: not differentiable")
        return vals[pick]
    if isinstance(expr, sympy.Heaviside):
        return 1.0 if _surface_side(evaluate(args[0], env), expr) > 0 else 0.0
    if isinstance(expr, sympy.sign):
        return 1.0 if _surface_side(evaluate(args[0], env), expr) > 0 else -1.0
    if isinstance(expr, sympy.Abs):
        v = evaluate(args[0], env)
        return v if _surface_side(v, expr) > 0 else -1 * v
    if isinstance(expr, sympy.Piecewise):
        for pair in args:
            value, cond = pair.args
            if cond is sympy.true:
                return evaluate(value, env)
            if not isinstance(cond, Relational):
                raise ModelError(f"{expr}: the condition {cond} is not a comparison")
            lhs, rhs = evaluate(cond.lhs, env), evaluate(cond.rhs, env)
            diff = _real_base(lhs, cond) - _real_base(rhs, cond)
            if diff == 0.0:
                raise ModelError(f"{cond} is on its switching surface: not differentiable")
            if bool(cond.func(diff, 0)):
                return evaluate(value, env)
        raise ModelError(f"{expr}: no branch applies")  # pragma: no cover
    raise ModelError(
        f"cannot differentiate {type(expr).__name__} terms ({expr}) for a normal form; "
        "supported: +, *, powers, functions of one argument and switching terms"
    )


def multilinear_terms(
    form,
    eq: Sequence[float],
    P: Sequence[float],
    args: Sequence[tuple[complex, np.ndarray]],
) -> np.ndarray:
    """Mixed derivatives of ``G`` for up to three exponential arguments.

    Parameters
    ----------
    form : DDEForm
    eq : sequence of float
        Equilibrium, state order.
    P : sequence of float
        Parameter values, model order.
    args : sequence of (lambda, v)
        Up to three arguments ``phi_i(theta) = exp(lambda_i theta) v_i``.

    Returns
    -------
    ndarray, shape (8, n)
        Row ``S`` (a bit mask of the arguments) holds ``d^|S| G / prod_{i in S} de_i``: rows 3,
        5, 6 are ``B`` of pairs, row 7 is ``C`` of the three.
    """
    env: dict = {sym: float(v) for sym, v in zip(form.p, P, strict=True)}
    units = []
    for i in range(len(args)):
        c = np.zeros(8, dtype=complex)
        c[1 << i] = 1.0
        units.append(HyperDual(c))
    for j, xsym in enumerate(form.x):
        val = HyperDual.const(float(eq[j]))
        for (_, v), u in zip(args, units, strict=True):
            val = val + u * complex(v[j])
        env[xsym] = val
    for lag in form.lags:
        s = lag.state
        tau = _as_hd(evaluate(lag.delay, env))
        val = HyperDual.const(float(eq[s]))
        for (lam, v), u in zip(args, units, strict=True):
            if v[s] != 0:
                val = val + u * (complex(v[s]) * _exp(tau * (-complex(lam))))
        env[lag.symbol] = val
    out = np.zeros((8, len(form.rhs)), dtype=complex)
    for i, e in enumerate(form.rhs):
        out[:, i] = _as_hd(evaluate(sympy.sympify(e), env)).c
    return out
