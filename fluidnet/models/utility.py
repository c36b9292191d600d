"""Utility functions of users' rates, as objects with symbolic derivatives.

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003. Assumption 4: ``U`` is
continuously differentiable, strictly concave and increasing on ``(0, inf)`` and unbounded as
``x -> 0``. The paper works with two families (Sec II, after Corollary 1):

* ``R_1``: ``U(x) = log x`` (proportional fairness);
* ``R_2``: ``U(x) = -1/x^nu`` with ``nu > 0`` (``nu = 1``: minimum potential delay fairness).

Sec IV associates ``nu = 0`` with ``log``: a controller whose throughput is proportional to
``1/(d (1 - alpha)^(1/(nu+1)))`` has utility ``-1/x^nu`` (``log x`` for ``nu = 0``).

The rate laws (9)/(10) differ by the factor ``nu`` in the increase term: (9) is
``x' = kappa (w/beta_r - beta x f)`` and (10) is ``x' = kappa (nu w/beta_r - beta x^(nu+1) f)``
with ``f`` the lost (or marked) fraction. Both are ``kappa c (w/beta_r - beta f / U'(x))`` with
``c = 1`` for ``log`` and ``c = nu`` for ``-1/x^nu``: :attr:`Utility.law_scale` is that ``c``, and
:meth:`Utility.decrease` is ``c / U'(x)`` (``x`` and ``x^(nu+1)``). A utility given by its own
expression gets ``c = 1``, which is the general form (38).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..errors import ModelError, ParameterError
from ..parsing import as_expression

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Utility", "log_utility", "power_utility", "utility_family"]

#: The rate variable of utility expressions (positive real).
X = sympy.Symbol("x", positive=True)


@dataclass(frozen=True)
class Utility:
    """A utility ``U(x)`` of a rate ``x > 0`` with its symbolic derivatives.

    Build one with :func:`log_utility`, :func:`power_utility`, :func:`utility_family` or
    :meth:`from_expr`.

    Attributes
    ----------
    expr : sympy.Expr
        ``U`` as an expression of :data:`X` (the positive symbol ``x``).
    name : str
        Printable name, e.g. ``"log x"`` or ``"-1/x^2"``.
    nu : float or None
        The exponent of the family ``-1/x^nu`` (0 for ``log``); ``None`` for any other utility.
    law_scale : float
        The factor ``c`` of the increase term of the rate law: 1 for ``log`` (eq (9)), ``nu``
        for ``-1/x^nu`` (eq (10)), 1 otherwise (eq (38)).

    Examples
    --------
    >>> from fluidnet.models.utility import power_utility, X
    >>> u = power_utility(2)
    >>> u.dU(), u.decrease()
    (2/x**3, x**3)
    """

    expr: sympy.Expr
    name: str
    nu: float | None = None
    law_scale: float = 1.0
    _cache: dict = field(default_factory=dict, repr=False, compare=False, hash=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_expr(cls, expr: Any, x: sympy.Symbol | None = None, name: str = "") -> Utility:
        """A utility from a sympy expression of one variable, checked against Assumption 4.

        Parameters
        ----------
        expr : sympy expression or str
            ``U(x)``, e.g. ``sympy.log(x / (1 + x))`` (the TCP utility of Hurley et al. that
            the paper compares with ``-1/x`` in Sec III-A).
        x : sympy.Symbol, optional
            The variable of ``expr`` (default: its only free symbol).
        name : str, optional

        Raises
        ------
        ModelError
            When ``expr`` has other free symbols, or ``U' <= 0`` or ``U'' >= 0`` somewhere on
            a logarithmic grid of ``(1e-6, 1e6)`` (Assumption 4: increasing, strictly concave).
        """
        e = as_expression(expr, where="utility")
        if not isinstance(e, sympy.Expr):
            raise ModelError(f"utility {e} is not an expression")
        free = e.free_symbols
        if x is None:
            if len(free) != 1:
                raise ModelError(f"utility {e} must have exactly one free symbol, has {free}")
            x = cast(sympy.Symbol, next(iter(free)))
        elif free - {x}:
            raise ModelError(f"utility {e} has free symbols {free - {x}} besides {x}")
        u = cls(cast(sympy.Expr, e.xreplace({x: X})), name or str(e))
        u._check_assumption4()
        return u

    # ------------------------------------------------------------------ symbolic
    def U(self, x: Any = X) -> sympy.Expr:
        """``U(x)``.

        Parameters
        ----------
        x : sympy.Expr or number, optional
            What to substitute for the rate; default the symbol :data:`X` itself.

        Returns
        -------
        sympy.Expr
        """
        return self.expr if x is X else cast(sympy.Expr, self.expr.xreplace({X: x}))

    def dU(self, x: Any = X) -> sympy.Expr:
        """``U'(x)``.

        Parameters
        ----------
        x : sympy.Expr or number, optional
            What to substitute for the rate; default the symbol :data:`X` itself.

        Returns
        -------
        sympy.Expr
            Simplified.
        """
        d = self._sym("dU", lambda: sympy.simplify(sympy.diff(self.expr, X)))
        return d if x is X else cast(sympy.Expr, d.xreplace({X: x}))

    def d2U(self, x: Any = X) -> sympy.Expr:
        """``U''(x)``.

        Parameters
        ----------
        x : sympy.Expr or number, optional
            What to substitute for the rate; default the symbol :data:`X` itself.

        Returns
        -------
        sympy.Expr
            Simplified.
        """
        d = self._sym("d2U", lambda: sympy.simplify(sympy.diff(self.expr, X, 2)))
        return d if x is X else cast(sympy.Expr, d.xreplace({X: x}))

    def decrease(self, x: Any = X) -> sympy.Expr:
        """The multiplier of ``beta f`` in the rate law, ``law_scale / U'(x)``.

        ``x`` for ``log`` (eq (9)), ``x^(nu+1)`` for ``-1/x^nu`` (eq (10)), ``1/U'(x)`` for a
        general utility (eq (38)).

        Parameters
        ----------
        x : sympy.Expr or number, optional
            What to substitute for the rate; default the symbol :data:`X` itself.

        Returns
        -------
        sympy.Expr
        """
        d = self._sym(
            "dec",
            lambda: sympy.powsimp(sympy.simplify(sympy.nsimplify(self.law_scale) / self.dU())),
        )
        return d if x is X else cast(sympy.Expr, d.xreplace({X: x}))

    # ------------------------------------------------------------------ numeric
    def value(self, x: ArrayLike) -> np.ndarray:
        """``U(x)`` evaluated on numbers or arrays.

        Parameters
        ----------
        x : float or array_like
            Rates, ``x > 0``.

        Returns
        -------
        numpy.ndarray
            The shape of ``x``.
        """
        return self._num("U", self.expr)(np.asarray(x, dtype=float))

    def marginal(self, x: ArrayLike) -> np.ndarray:
        """``U'(x)`` evaluated on numbers or arrays.

        Parameters
        ----------
        x : float or array_like
            Rates, ``x > 0``.

        Returns
        -------
        numpy.ndarray
            The shape of ``x``.
        """
        return self._num("dU", self.dU())(np.asarray(x, dtype=float))

    def curvature(self, x: ArrayLike) -> np.ndarray:
        """``U''(x)`` evaluated on numbers or arrays.

        Parameters
        ----------
        x : float or array_like
            Rates, ``x > 0``.

        Returns
        -------
        numpy.ndarray
            The shape of ``x``.
        """
        return self._num("d2U", self.d2U())(np.asarray(x, dtype=float))

    def marginal_inverse(self, v: float) -> float:
        """``x`` with ``U'(x) = v`` (``v > 0``): the inverse function of ``U'``, as in (39).

        Closed form for the two families (``1/v`` and ``(nu/v)^(1/(nu+1))``), a bracketed
        root otherwise.

        Parameters
        ----------
        v : float
            A marginal utility, ``v > 0``.

        Returns
        -------
        float
            The rate ``x > 0``.

        Raises
        ------
        ParameterError
            For ``v <= 0`` or not finite (``U'`` is positive), or (a general utility) when no
            rate in ``(1e-300, 1e300)`` has that marginal utility.
        """
        v = float(v)
        if not (math.isfinite(v) and v > 0):
            raise ParameterError(f"marginal_inverse of {self.name}: U' = {v!r} must be > 0")
        if self.nu == 0:
            return 1.0 / v
        if self.nu is not None:
            return (self.nu / v) ** (1.0 / (self.nu + 1.0))
        from ..brent import brentq

        f = self._num("dU", self.dU())
        lo, hi = 1e-12, 1.0
        while f(hi) > v:
            hi *= 10.0
            if hi > 1e300:
                raise ParameterError(f"marginal_inverse of {self.name}: no x with U'(x) = {v:g}")
        while f(lo) < v:
            lo /= 10.0
            if lo < 1e-300:
                raise ParameterError(f"marginal_inverse of {self.name}: no x with U'(x) = {v:g}")
        return float(brentq(lambda z: f(z) - v, lo, hi, xtol=1e-300, rtol=1e-15))

    # ------------------------------------------------------------------ internals
    def _sym(self, key: str, make: Callable[[], sympy.Expr]) -> sympy.Expr:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _num(self, key: str, expr: sympy.Expr) -> Callable:
        k = "num_" + key
        if k not in self._cache:
            self._cache[k] = sympy.lambdify(X, expr, np)
        return self._cache[k]

    def _check_assumption4(self) -> None:
        grid = np.logspace(-6, 6, 121)
        with np.errstate(all="ignore"):
            d1 = np.broadcast_to(self.marginal(grid), grid.shape)
            d2 = np.broadcast_to(self.curvature(grid), grid.shape)
        bad1 = ~(d1 > 0)
        if bad1.any():
            raise ModelError(
                f"utility {self.name} is not increasing (Assumption 4): U'({grid[bad1][0]:g}) "
                f"= {d1[bad1][0]:g}"
            )
        bad2 = ~(d2 < 0)
        if bad2.any():
            raise ModelError(
                f"utility {self.name} is not strictly concave (Assumption 4): "
                f"U''({grid[bad2][0]:g}) = {d2[bad2][0]:g}"
            )

    def __str__(self) -> str:
        return self.name


def log_utility() -> Utility:
    """``U(x) = log x``: the class ``R_1`` of Kunniyur & Srikant (2003), rate law (9)."""
    return Utility(sympy.log(X), "log x", nu=0.0, law_scale=1.0)


def power_utility(nu: float) -> Utility:
    """``U(x) = -1/x^nu`` with ``nu > 0``: the class ``R_2`` of Kunniyur & Srikant (2003), law (10).

    ``nu = 1`` is TCP-like (minimum potential delay fairness); ``nu = 1/2`` is user 0 of the
    paper's Experiment 1 (``-1/sqrt(x)``).

    Parameters
    ----------
    nu : float
        The exponent, ``nu > 0``.

    Returns
    -------
    Utility

    Raises
    ------
    ParameterError
        For ``nu <= 0`` or not finite (use :func:`log_utility` for ``nu = 0``).
    """
    try:
        nu_f = float(nu)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"nu = {nu!r} is not a number") from exc
    if not (math.isfinite(nu_f) and nu_f > 0):
        raise ParameterError(f"nu = {nu!r} must be > 0 for U = -1/x^nu (nu = 0 is log x)")
    nu_s = sympy.nsimplify(nu) if float(sympy.nsimplify(nu)) == nu_f else sympy.Float(nu_f)
    exponent = str(nu_s) if nu_s.is_Integer else f"({nu_s})"
    name = f"-1/x^{exponent}" if nu_s != 1 else "-1/x"
    return Utility(-(X ** (-nu_s)), name, nu=nu_f, law_scale=nu_f)


def utility_family(nu: float) -> Utility:
    """Sec IV's family: ``log x`` for ``nu = 0`` and ``-1/x^nu`` for ``nu > 0``.

    Parameters
    ----------
    nu : float
        The exponent, ``nu >= 0``.

    Returns
    -------
    Utility

    Raises
    ------
    ParameterError
        For ``nu < 0`` or not finite.
    """
    try:
        if float(nu) == 0.0:
            return log_utility()
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"nu = {nu!r} is not a number") from exc
    return power_utility(nu)
