"""Quasi-polynomials ``p(s) = sum_k p_k(s) exp(-s tau_k)`` with exact delays.

They are the numerators and denominators of :class:`fluidnet.DelayTF` and the characteristic
functions of linear delay systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias, cast

import numpy as np
import sympy
from numpy.typing import ArrayLike

from ..errors import ModelError
from .delays import merge_delays, same_delay
from .lineardde import LinearDDE

__all__ = ["LAPLACE", "QuasiPolynomial", "as_quasipolynomial", "from_sympy", "terms_from_sympy"]

#: The Laplace variable ``s`` of every transfer function and characteristic function
#: (``fluidnet.s``).
LAPLACE = sympy.Symbol("s")


def _trim(c: np.ndarray) -> np.ndarray:
    """Drop leading (highest power) zeros, keep at least one coefficient."""
    if c.size and c[0] != 0:
        return c
    nz = np.flatnonzero(c != 0)
    return c[nz[0] :] if nz.size else np.zeros(1, dtype=c.dtype)


def _padd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _trim(np.polyadd(a, b))


def _as_coeffs(c) -> np.ndarray:
    if type(c) is np.ndarray and c.ndim == 1 and c.dtype == np.float64:  # the common case
        if not np.isfinite(c).all():
            raise ModelError(f"polynomial coefficients must be finite, got {c!r}")
        return _trim(c.copy())
    arr = np.atleast_1d(np.asarray(c))
    if arr.ndim != 1:
        raise ModelError("polynomial coefficients must be a 1-D sequence (highest power first)")
    if not np.issubdtype(arr.dtype, np.number):
        raise ModelError(f"polynomial coefficients must be numbers, got {arr!r}")
    arr = arr.astype(complex) if np.iscomplexobj(arr) else arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"polynomial coefficients must be finite, got {arr!r}")
    if np.iscomplexobj(arr) and np.all(np.imag(arr) == 0):
        arr = np.real(arr).copy()
    return _trim(arr)


class QuasiPolynomial:
    """A quasi-polynomial ``p(s) = sum_k p_k(s) * exp(-s * tau_k)``.

    Parameters
    ----------
    terms : mapping or iterable of ``(tau, coeffs)``
        Delay ``tau >= 0`` (seconds) and the coefficients of the polynomial ``p_k``, highest
        power first (the :func:`numpy.polyval` convention). Equal delays are merged, zero
        polynomials dropped. A bare coefficient sequence means a single delay-free polynomial.

    Examples
    --------
    >>> qp = QuasiPolynomial({0.0: [1, 0, 0], 1.0: [0.5, 0.3]})   # s^2 + (0.5 s + 0.3) e^{-s}
    >>> qp.degree, qp.is_retarded
    (2, True)
    """

    __slots__ = ("_delays", "_coeffs")

    def __init__(
        self, terms: QuasiPolynomialLike | Iterable[tuple[float, ArrayLike]] | None = None
    ) -> None:
        if terms is None:
            pairs: list = []
        elif isinstance(terms, QuasiPolynomial):
            pairs = list(zip(terms.delays, terms.coeffs, strict=True))
        elif isinstance(terms, Mapping):
            pairs = list(terms.items())
        elif np.isscalar(terms) or (
            isinstance(terms, (list, tuple, np.ndarray))
            and len(terms) > 0
            and all(np.isscalar(c) for c in terms)
        ):
            pairs = [(0.0, terms)]
        else:
            pairs = list(cast("Iterable[Any]", terms))  # each checked to be a (tau, c) pair
        clean = []
        for tau, c in pairs:
            tau = float(np.real(tau))
            if not np.isfinite(tau):
                raise ModelError(f"delay {tau!r} is not finite")
            if tau < 0:
                raise ModelError(
                    f"delay {tau!r} is negative (an advance); quasi-polynomials "
                    "here use delays tau >= 0"
                )
            clean.append((tau, _as_coeffs(c)))
        merged = merge_delays(clean, _padd)
        merged = [(tau, c) for tau, c in merged if (c != 0).any()]
        self._delays = tuple(tau for tau, _ in merged)
        self._coeffs = tuple(c for _, c in merged)

    @classmethod
    def _from_terms(cls, pairs) -> QuasiPolynomial:
        """From ``(tau, coeffs)`` pairs produced by arithmetic on valid quasi-polynomials: the
        delays are valid and the coefficients fresh 1-D arrays (checked only for overflow)."""
        clean = []
        for tau, c in pairs:
            if c.dtype != np.float64 or tau < 0:
                return cls(pairs)  # complex coefficients, or a shift below zero: validate
            if not np.isfinite(c).all():
                raise ModelError(f"polynomial coefficients must be finite, got {c!r}")
            clean.append((tau, _trim(c)))
        merged = [(tau, c) for tau, c in merge_delays(clean, _padd) if (c != 0).any()]
        out = cls.__new__(cls)
        out._delays = tuple(tau for tau, _ in merged)
        out._coeffs = tuple(c for _, c in merged)
        return out

    # ------------------------------------------------------------------ properties
    @property
    def delays(self) -> tuple[float, ...]:
        """The distinct delays, ascending."""
        return self._delays

    @property
    def coeffs(self) -> tuple[np.ndarray, ...]:
        """Polynomial coefficients per delay (highest power first)."""
        return self._coeffs

    @property
    def terms(self) -> dict[float, np.ndarray]:
        """``{delay: coeffs}``."""
        return dict(zip(self._delays, self._coeffs, strict=True))

    @property
    def is_zero(self) -> bool:
        return not self._delays

    @property
    def degree(self) -> int:
        """Highest power of ``s`` over all terms (``-1`` for the zero quasi-polynomial)."""
        return max((len(c) - 1 for c in self._coeffs), default=-1)

    @property
    def is_rational(self) -> bool:
        """True when there is no delayed term (an ordinary polynomial)."""
        return all(tau == 0.0 for tau in self._delays)

    @property
    def is_retarded(self) -> bool:
        """True when the delay-free term alone carries the highest power of ``s``.

        Retarded quasi-polynomials have finitely many roots in every right half-plane; those
        are the characteristic functions of retarded delay equations.
        """
        if self.is_zero:
            return False
        deg0 = len(self._coeffs[0]) - 1 if self._delays[0] == 0.0 else -1
        others = [
            len(c) - 1 for tau, c in zip(self._delays, self._coeffs, strict=True) if tau != 0.0
        ]
        return deg0 >= 0 and all(d < deg0 for d in others)

    # ------------------------------------------------------------------ evaluation
    def __call__(self, s):
        """Evaluate at complex ``s`` (any array shape)."""
        s = np.asarray(s, dtype=complex)
        out = np.zeros(s.shape, dtype=complex)
        for tau, c in zip(self._delays, self._coeffs, strict=True):
            term = np.polyval(c, s)
            out += term if tau == 0.0 else term * np.exp(-s * tau)
        return out

    def derivative(self) -> QuasiPolynomial:
        """``d/ds p(s)``, itself a quasi-polynomial."""
        pairs = []
        for tau, c in zip(self._delays, self._coeffs, strict=True):
            dc = np.polyder(c) if len(c) > 1 else np.zeros(1)
            pairs.append((tau, _padd(dc, -tau * c) if tau else dc))
        return QuasiPolynomial(pairs)

    # ------------------------------------------------------------------ algebra
    def __add__(self, other) -> QuasiPolynomial:
        other = as_quasipolynomial(other)
        pairs = list(zip(self._delays + other._delays, self._coeffs + other._coeffs, strict=True))
        return QuasiPolynomial._from_terms([(tau, c.copy()) for tau, c in pairs])

    __radd__ = __add__

    def __neg__(self) -> QuasiPolynomial:
        return QuasiPolynomial._from_terms([(tau, -c) for tau, c in self.terms.items()])

    def __sub__(self, other) -> QuasiPolynomial:
        return self + (-as_quasipolynomial(other))

    def __rsub__(self, other) -> QuasiPolynomial:
        return as_quasipolynomial(other) - self

    def __mul__(self, other) -> QuasiPolynomial:
        other = as_quasipolynomial(other)
        # the coefficients are trimmed: their convolution is the product (np.polymul)
        return QuasiPolynomial._from_terms(
            [
                (ta + tb, np.convolve(ca, cb))
                for ta, ca in zip(self._delays, self._coeffs, strict=True)
                for tb, cb in zip(other._delays, other._coeffs, strict=True)
            ]
        )

    __rmul__ = __mul__

    def shift(self, tau: float) -> QuasiPolynomial:
        """Multiply by ``exp(-s tau)`` (``tau < 0`` is allowed while every delay stays >= 0).

        Parameters
        ----------
        tau : float
            The delay added to every term; negative to remove a common delay.

        Returns
        -------
        QuasiPolynomial

        Raises
        ------
        ModelError
            When a delay would become negative.
        """
        return QuasiPolynomial([(d + tau, c) for d, c in self.terms.items()])

    def __eq__(self, other) -> bool:
        if not isinstance(other, QuasiPolynomial):
            return NotImplemented
        if len(self._delays) != len(other._delays):
            return False
        return all(
            same_delay(a, b) and len(ca) == len(cb) and np.allclose(ca, cb, rtol=1e-12, atol=0)
            for a, b, ca, cb in zip(
                self._delays, other._delays, self._coeffs, other._coeffs, strict=True
            )
        )

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ conversions
    def to_sympy(self, s: sympy.Symbol | None = None) -> sympy.Expr:
        """The quasi-polynomial as a sympy expression in ``s``.

        Parameters
        ----------
        s : sympy.Symbol, optional
            The Laplace variable to write it in; default ``fluidnet.s``.

        Returns
        -------
        sympy.Expr
            Coefficients as floats (complex ones as sympy complex numbers), delays as
            ``exp(-s*tau)`` factors.
        """
        s = LAPLACE if s is None else s
        expr = sympy.S.Zero
        for tau, c in self.terms.items():
            poly = sum(
                (sympy.sympify(complex(ci)) if np.iscomplexobj(c) else sympy.Float(ci))
                * s ** (len(c) - 1 - i)
                for i, ci in enumerate(c)
            )
            expr += poly * (sympy.exp(-s * sympy.Float(tau)) if tau else 1)
        return expr

    def companion(self) -> LinearDDE:
        """A linear DDE whose characteristic function is this quasi-polynomial divided by its
        leading coefficient (the companion form of the scalar delay equation).

        Raises
        ------
        ModelError
            If the quasi-polynomial is not retarded (the delay-free term must carry the
            highest power of ``s``).
        """
        if not self.is_retarded:
            raise ModelError(
                "companion form needs a retarded quasi-polynomial: the delay-free term must "
                f"carry the highest power of s (degrees per delay: "
                f"{ {tau: len(c) - 1 for tau, c in self.terms.items()} })"
            )
        n = self.degree
        lead = self._coeffs[0][0]

        def last_row(c: np.ndarray) -> np.ndarray:
            full = np.zeros(n + 1, dtype=np.result_type(c, float))
            full[n + 1 - len(c) :] = c
            return -(full[1:][::-1]) / lead  # coefficients of s^0 ... s^{n-1}

        A0 = np.zeros((n, n), dtype=np.result_type(lead, float))
        A0[np.arange(n - 1), np.arange(1, n)] = 1.0
        A0[-1, :] = last_row(self._coeffs[0])
        delayed = []
        for tau, c in zip(self._delays[1:], self._coeffs[1:], strict=True):
            Ak = np.zeros((n, n), dtype=A0.dtype)
            Ak[-1, :] = last_row(c)
            delayed.append((tau, Ak))
        return LinearDDE(A0, delayed)

    def __repr__(self) -> str:
        parts = []
        for tau, c in self.terms.items():
            poly = np.array2string(np.asarray(c), precision=6, separator=", ")
            parts.append(f"{poly}" + (f"·e^(-{tau:g}s)" if tau else ""))
        return "QuasiPolynomial(" + (" + ".join(parts) if parts else "0") + ")"


#: What :func:`as_quasipolynomial` (and so every ``num``/``den`` argument) accepts: a
#: :class:`QuasiPolynomial`, a number or coefficient sequence (highest power first), or a mapping
#: ``{tau: coefficients}``.
QuasiPolynomialLike: TypeAlias = "QuasiPolynomial | ArrayLike | Mapping[float, ArrayLike]"


def as_quasipolynomial(obj: QuasiPolynomialLike) -> QuasiPolynomial:
    """Coerce a number, coefficient sequence or QuasiPolynomial."""
    if isinstance(obj, QuasiPolynomial):
        return obj
    return QuasiPolynomial(obj)


def from_sympy(expr: sympy.Expr, s: sympy.Symbol) -> QuasiPolynomial:
    """Convert a sympy sum of ``poly(s) * exp(a - tau s)`` terms into a :class:`QuasiPolynomial`.

    Negative delays are allowed here only transiently by the caller through
    :func:`terms_from_sympy`; this function requires ``tau >= 0``.
    """
    return QuasiPolynomial(terms_from_sympy(expr, s))


def terms_from_sympy(expr: sympy.Expr, s: sympy.Symbol) -> list[tuple[float, np.ndarray]]:
    """``[(tau, coeffs), ...]`` for ``expr = sum poly_k(s) exp(-tau_k s)``; tau may be negative."""
    expr = sympy.expand(sympy.sympify(expr), power_exp=False)
    out: list[tuple[float, np.ndarray]] = []
    for term in sympy.Add.make_args(expr):
        exp_arg: sympy.Expr = sympy.S.Zero
        rest: sympy.Expr = sympy.S.One
        for f in sympy.Mul.make_args(term):
            if isinstance(f, sympy.exp):
                exp_arg += cast(sympy.Expr, f.args[0])
            elif isinstance(f, sympy.Pow) and isinstance(f.base, sympy.exp) and f.exp.is_number:
                exp_arg += cast(sympy.Expr, f.base.args[0]) * f.exp
            else:
                rest *= f
        exp_arg = sympy.expand(exp_arg)
        slope = cast(sympy.Expr, exp_arg.coeff(s, 1))
        offset: sympy.Expr = sympy.expand(exp_arg - slope * s)
        if offset.has(s) or not slope.is_number or not offset.is_number:
            raise ModelError(f"exponent {exp_arg} is not of the form a - tau*s with numbers a, tau")
        try:
            poly = sympy.Poly(rest, s)
        except sympy.PolynomialError as exc:
            raise ModelError(f"term {term} is not a polynomial in {s} times exp(-tau*{s})") from exc
        coeffs = []
        for c in poly.all_coeffs():
            if not c.is_number:
                raise ModelError(
                    f"coefficient {c} of term {term} is not a number: free symbols "
                    f"{sorted(map(str, c.free_symbols))} must be given values first"
                )
            coeffs.append(complex(c) * complex(sympy.exp(offset)))
        arr = np.array(coeffs, dtype=complex)
        if np.all(np.imag(arr) == 0):
            arr = np.real(arr)
        out.append((-float(slope), arr))
    return out
