"""Kelly's primal rate law and the dual (gradient-projection) price law on a network.

Source: Zimmermann (2005), Section 3.2, with logarithmic utilities ``U_n(x) = w_n ln x``
(3.2.21), so that ``x U'(x) = w_n``:

* primal (3.2.16): ``x_n' = kappa_n (w_n - p_n x_n)`` with the path price
  ``p_n = sum_l A_ln lambda_l(y_l)`` (3.2.15), ``y_l = sum_n A_ln x_n`` and a static price
  (penalty derivative) per link ``lambda_l(y) = C_l'(y)``;
* dual (3.2.20): ``lambda_l' = gamma_l (y_l - c_l)`` projected at ``lambda_l = 0`` (the continuous
  form of the projected step ``[lambda + gamma (y - c)]^+``; the price rises when the link is
  overloaded, as printed: M19 in ``papers/sbrm/README.md``), with the sources at their static
  optimum ``x_n = w_n / p_n`` (3.2.19).

The dissertation does not fix a price function for the primal law; the default here is the power
law ``lambda_l(y) = (y / c_l)^B`` (a penalty ``C_l`` that steepens with ``B``): the equilibrium
tends to the capacity-constrained proportionally fair optimum as ``B`` grows. An optional
feedback delay ``T_n`` per source gives the delayed law ``x_n' = kappa_n (w_n - x_n(t - T_n)
p_n(t - T_n))``, whose delay-stability condition (3.2.17) is ``kappa_n T_n (p_n + sum_l A_ln
lambda_l' y_l) < 1`` (sufficient).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..errors import ModelError, ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import t
from .network import per_element, routing_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["kelly_primal", "kelly_dual", "proportional_fair"]


def _funcs(prefix: str, count: int) -> list:
    return [sympy.Function(f"{prefix}_{i + 1}", real=True) for i in range(count)]


def _syms(prefix: str, count: int) -> list[sympy.Symbol]:
    return [sympy.Symbol(f"{prefix}_{i + 1}", real=True) for i in range(count)]


def kelly_primal(
    A: ArrayLike,
    *,
    w: float | Sequence[float] = 1.0,
    kappa: float | Sequence[float] = 1.0,
    c: float | Sequence[float] = 1.0,
    B: float = 10.0,
    T: float | Sequence[float] | None = None,
    price: Callable[[Any, Any], Any] | None = None,
) -> Model:
    """Kelly's primal rate ODE (3.2.16) on the network with routing matrix ``A``.

    States ``x_1 ... x_S`` (rates, pkts/s); signals ``y_l`` (link loads), ``lam_l`` (link prices)
    and ``p_n`` (path prices).

    Parameters
    ----------
    A : array_like, shape (links, sources)
        Routing matrix of zeros and ones.
    w, kappa : float or sequence
        Willingness to pay ``w_n`` [pkts/s] and gain ``kappa_n`` [1/s] per source.
    c : float or sequence
        Capacity ``c_l`` per link [pkts/s].
    B : float
        Exponent of the default price ``lambda_l(y) = (y/c_l)^B`` (parameter ``B``).
    T : float or sequence, optional
        Feedback delay per source [s] (parameters ``T_n``); ``None`` for the undelayed law.
    price : callable, optional
        ``price(y, c)`` returning a sympy expression of the load ``y`` and capacity ``c``, used
        instead of the power law (then ``B`` is not a parameter).

    Returns
    -------
    Model

    Raises
    ------
    ModelError
        For a bad routing matrix or a ``price`` that does not return an expression.
    ParameterError
        For per-source or per-link values of the wrong length.

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.kelly_primal([[1, 0, 1], [0, 1, 1]], B=30)   # double bottleneck
    >>> eq = m.equilibrium(guess={"x_1": 0.6, "x_2": 0.6, "x_3": 0.3})
    >>> round(eq["x_1"] / (eq["x_1"] + eq["x_3"]), 6)          # the (3.2.21) share 2/3
    0.666667
    """
    A = routing_matrix(A)
    L, S = A.shape
    wv, kv = per_element("w", w, S, "source"), per_element("kappa", kappa, S, "source")
    cv = per_element("c", c, L, "link")
    x, y, lam, p = _funcs("x", S), _funcs("y", L), _funcs("lam", L), _funcs("p", S)
    ws, ks, cs = _syms("w", S), _syms("kappa", S), _syms("c", L)
    pdefs: dict[Any, Param] = {}
    for n in range(S):
        pdefs[ws[n]] = Param(wv[n], unit="pkts/s", doc="willingness to pay", bounds=(0, None))
        pdefs[ks[n]] = Param(kv[n], unit="1/s", doc="source gain", bounds=(0, None))
    for ll in range(L):
        pdefs[cs[ll]] = Param(cv[ll], unit="pkts/s", doc="link capacity", bounds=(0, None))
    if price is None:
        Bs = sympy.Symbol("B", real=True)
        pdefs[Bs] = Param(
            float(B), unit="1", doc="price exponent, lambda = (y/c)^B", bounds=(0, None)
        )

        def power_price(load, cap):  # the documented default
            return (load / cap) ** Bs

        price = power_price

    Ts: list = [0] * S
    if T is not None:
        Tv = per_element("T", T, S, "source")
        Ts = _syms("T", S)
        for n in range(S):
            pdefs[Ts[n]] = Param(Tv[n], unit="s", doc="feedback delay", bounds=(0, None))
    sig: dict[Any, Any] = {}
    for ll in range(L):
        sig[y[ll]] = sum(x[n](t) for n in np.flatnonzero(A[ll]))
        expr = price(y[ll](t), cs[ll])
        if not isinstance(expr, sympy.Expr):
            raise ModelError(f"price(y, c) must return a sympy expression, got {expr!r}")
        sig[lam[ll]] = expr
    for n in range(S):
        sig[p[n]] = sum(lam[ll](t) for ll in np.flatnonzero(A[:, n]))  # (3.2.15)
    rhs = {}
    for n in range(S):
        lag = t - Ts[n]
        rhs[x[n]] = ks[n] * (ws[n] - x[n](lag) * p[n](lag))
    return Model(rhs=rhs, params=pdefs, signals=sig, name="kelly_primal")


def kelly_dual(
    A: ArrayLike,
    *,
    w: float | Sequence[float] = 1.0,
    c: float | Sequence[float] = 1.0,
    gamma: float | Sequence[float] = 1.0,
    x_max: float | Sequence[float] | None = None,
) -> Model:
    """The dual price ODE (3.2.20) with static log-utility sources ``x_n = min(w_n/p_n, x_max)``.

    States ``lam_1 ... lam_L`` (link prices, projected at 0); signals ``p_n``, ``x_n``, ``y_l``.
    The static optimum ``w_n / p_n`` (3.2.19) is unbounded at a zero path price; each source is
    capped at an access rate ``x_max_n`` (default ten times the largest capacity), which leaves
    every equilibrium with ``x_n < x_max_n`` unchanged and lets the prices start from 0.

    Parameters
    ----------
    A : array_like, shape (links, sources)
    w : float or sequence
        Willingness to pay per source [pkts/s].
    c : float or sequence
        Capacity per link [pkts/s].
    gamma : float or sequence
        Price step size per link [1/pkt].
    x_max : float or sequence, optional
        Access-rate cap per source [pkts/s] (parameters ``x_max_n``).

    Returns
    -------
    Model
    """
    A = routing_matrix(A)
    L, S = A.shape
    wv = per_element("w", w, S, "source")
    cv, gv = per_element("c", c, L, "link"), per_element("gamma", gamma, L, "link")
    xm = per_element("x_max", 10 * max(cv) if x_max is None else x_max, S, "source")
    lam, p, x, y = _funcs("lam", L), _funcs("p", S), _funcs("x", S), _funcs("y", L)
    ws, cs, gs = _syms("w", S), _syms("c", L), _syms("gamma", L)
    xs = _syms("x_max", S)
    pdefs: dict[Any, Param] = {}
    for n in range(S):
        pdefs[ws[n]] = Param(wv[n], unit="pkts/s", doc="willingness to pay", bounds=(0, None))
        pdefs[xs[n]] = Param(xm[n], unit="pkts/s", doc="access-rate cap", bounds=(0, None))
    for ll in range(L):
        pdefs[cs[ll]] = Param(cv[ll], unit="pkts/s", doc="link capacity", bounds=(0, None))
        pdefs[gs[ll]] = Param(gv[ll], unit="1/pkt", doc="price step size", bounds=(0, None))
    sig: dict[Any, Any] = {}
    for n in range(S):
        sig[p[n]] = sum(lam[ll](t) for ll in np.flatnonzero(A[:, n]))
        # (3.2.19) with U = w ln x, capped: w / max(p, w/x_max) = min(w/p, x_max), finite at p = 0
        sig[x[n]] = ws[n] / sympy.Max(p[n](t), ws[n] / xs[n])
    for ll in range(L):
        sig[y[ll]] = sum(x[n](t) for n in np.flatnonzero(A[ll]))
    rhs = {lam[ll]: gs[ll] * (y[ll](t) - cs[ll]) for ll in range(L)}  # (3.2.20)
    return Model(rhs=rhs, params=pdefs, signals=sig, nonnegative=lam, name="kelly_dual")


def proportional_fair(A, w, c, *, tol: float = 1e-12, max_iter: int = 10_000) -> np.ndarray:
    """The weighted proportionally fair rates: maximize ``sum w_n ln x_n`` s.t. ``A x <= c``.

    Solved independently of the ODEs (by :func:`scipy.optimize.minimize` on the dual
    ``sum_l c_l lam_l - sum_n w_n ln(sum_l A_ln lam_l)`` over ``lam > 0``), as a reference for
    :func:`kelly_primal` and :func:`kelly_dual`.

    Raises
    ------
    ParameterError
        For non-positive ``w`` or ``c``.
    """
    from scipy import optimize

    A = routing_matrix(A)
    L, S = A.shape
    wv = np.asarray(per_element("w", w, S, "source"))
    cv = np.asarray(per_element("c", c, L, "link"))
    if np.any(wv <= 0) or np.any(cv <= 0):
        raise ParameterError("w and c must be > 0")

    def dual(z):
        lam = np.exp(z)
        return float(cv @ lam - wv @ np.log(A.T @ lam))

    def grad(z):
        lam = np.exp(z)
        return lam * (cv - A @ (wv / (A.T @ lam)))

    z0 = np.log(np.full(L, wv.sum() / cv.sum()))
    res = optimize.minimize(
        dual, z0, jac=grad, method="BFGS", options={"gtol": tol, "maxiter": max_iter}
    )
    lam = np.exp(res.x)
    return wv / (A.T @ lam)
