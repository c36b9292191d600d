"""SISO transfer functions with exact delays: ``L(s) = N(s) / D(s)`` with quasi-polynomials N, D."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy
from numpy.typing import ArrayLike

from ..errors import ModelError, OptionError
from ..options import root_options as check_root_options
from .quasipoly import (
    LAPLACE,
    QuasiPolynomial,
    QuasiPolynomialLike,
    as_quasipolynomial,
    terms_from_sympy,
)
from .roots import count_rhp_roots

if TYPE_CHECKING:
    import control

__all__ = ["DelayTF", "PoleCensus", "as_delay_tf"]


@dataclass(frozen=True, kw_only=True)
class PoleCensus:
    """The open-loop poles that matter to Nyquist's criterion.

    Attributes
    ----------
    rhp : int
        Zeros of the denominator with positive real part, counted with multiplicity.
    axis_frequencies : numpy.ndarray of float
        Frequencies ``w`` of the denominator zeros ``j w`` on the imaginary axis, one entry per
        distinct pole.
    """

    rhp: int
    axis_frequencies: np.ndarray


class DelayTF:
    """A SISO transfer function with exact delays, ``L(s) = num(s) / den(s)``.

    ``num`` and ``den`` are :class:`~fluidnet.linear.quasipoly.QuasiPolynomial` objects, so sums of
    rational functions times ``exp(-s tau)`` and quotients of such quasi-polynomials (a delay in
    the denominator, as in RCP's ``G1``) are represented exactly. No Padé approximation is made
    unless asked for by :meth:`to_control`.

    Parameters
    ----------
    num, den : QuasiPolynomial, coefficient sequence, number or mapping ``{tau: coeffs}``
    expr : sympy.Expr, optional
        A symbolic form kept for display.

    Examples
    --------
    >>> import fluidnet as fn
    >>> L = fn.DelayTF.from_expr(fn.sympy.exp(-fn.s) / fn.s)
    >>> round(float(abs(L(1j))), 12)
    1.0
    """

    __slots__ = ("num", "den", "expr")

    def __init__(
        self,
        num: QuasiPolynomialLike,
        den: QuasiPolynomialLike = 1.0,
        *,
        expr: sympy.Expr | None = None,
    ) -> None:
        self.num = as_quasipolynomial(num)
        self.den = as_quasipolynomial(den)
        if self.den.is_zero:
            raise ModelError("the denominator of a DelayTF must not be identically zero")
        self.expr = expr

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_expr(cls, expr: sympy.Basic | str, s: sympy.Symbol | None = None) -> DelayTF:
        """Build from a sympy expression in ``s`` with ``exp(-tau*s)`` delays.

        Parameters
        ----------
        expr : sympy.Expr or str
            E.g. ``exp(-0.2*s)*(0.4*0.2*s + 0.2)/(0.2*s)**2``. Every symbol other than ``s`` must
            already be replaced by a number. Text is parsed, never run (see
            :mod:`fluidnet.parsing`).
        s : sympy.Symbol, optional
            The Laplace variable (default :data:`fluidnet.s`, or the only symbol named ``s``).

        Raises
        ------
        ModelError
            When a free symbol other than ``s`` remains, a term is not polynomial times
            exponential, or the result would need a time advance (non-causal).
        """
        if isinstance(expr, str):
            # parsed over the Laplace variable only, never evaluated (sympify would run it)
            from ..parsing import parse_expression

            var = LAPLACE if s is None else s
            parsed = parse_expression(expr, symbols={var.name: var}, where="DelayTF.from_expr")
        else:
            try:
                parsed = sympy.sympify(expr, strict=True)
            except (sympy.SympifyError, TypeError) as exc:
                raise ModelError(f"DelayTF.from_expr: cannot interpret {expr!r}") from exc
        if not isinstance(parsed, sympy.Expr):
            raise ModelError(f"DelayTF.from_expr: {expr!r} is not an expression")
        expr = parsed
        symbols = cast("set[sympy.Symbol]", expr.free_symbols)
        if s is None:
            named = [x for x in symbols if x.name == "s"]
            s = named[0] if named else LAPLACE
        others = sorted(str(x) for x in symbols if x != s)
        if others:
            raise ModelError(
                f"DelayTF.from_expr: free symbols {others} besides {s}; substitute numbers for them"
            )
        num, den = sympy.fraction(sympy.together(expr))
        nterms = terms_from_sympy(num, s)
        dterms = terms_from_sympy(den, s)
        dterms = [(tau, c) for tau, c in dterms if np.any(c != 0)]
        if not dterms:
            raise ModelError(f"the denominator of {expr} is zero")
        shift = -min(tau for tau, _ in dterms)  # make the smallest denominator delay zero
        nterms = [(tau + shift, c) for tau, c in nterms]
        dterms = [(tau + shift, c) for tau, c in dterms]
        bad = [tau for tau, c in nterms if tau < -1e-15 and np.any(c != 0)]
        if bad:
            raise ModelError(f"{expr} is not causal: it needs a time advance exp(+{-min(bad):g} s)")
        nterms = [(max(tau, 0.0), c) for tau, c in nterms]
        return cls(QuasiPolynomial(nterms), QuasiPolynomial(dterms), expr=expr)

    @classmethod
    def from_control(cls, sys: Any) -> DelayTF:
        """Build from a SISO :class:`control.TransferFunction` or :class:`control.StateSpace`."""
        import control

        if isinstance(sys, control.StateSpace):
            sys = control.ss2tf(sys)
        if not isinstance(sys, control.TransferFunction):
            raise ModelError(f"expected a control.TransferFunction, got {type(sys).__name__}")
        if sys.ninputs != 1 or sys.noutputs != 1:
            raise ModelError(f"only SISO systems are supported, got {sys.noutputs}x{sys.ninputs}")
        if not sys.isctime(strict=False):
            raise ModelError("only continuous-time systems are supported")
        num = np.asarray(sys.num[0][0], dtype=float)
        den = np.asarray(sys.den[0][0], dtype=float)
        return cls(num, den)

    # ------------------------------------------------------------------ evaluation
    def __call__(self, s):
        """Evaluate ``L(s)`` at complex ``s`` (any array shape)."""
        return self.num(s) / self.den(s)

    def freqresp(self, w: ArrayLike) -> np.ndarray:
        """Complex frequency response ``L(j w)``.

        Parameters
        ----------
        w : float or array_like
            Angular frequencies in rad/s (any shape).

        Returns
        -------
        numpy.ndarray of complex
            ``L(j w)``, the shape of ``w``.
        """
        w = np.asarray(w, dtype=float)
        return self(1j * w)

    @property
    def delays(self) -> tuple[float, ...]:
        """All delays in numerator and denominator."""
        return tuple(sorted(set(self.num.delays) | set(self.den.delays)))

    @property
    def is_rational(self) -> bool:
        return self.num.is_rational and self.den.is_rational

    # ------------------------------------------------------------------ poles
    def poles(self, k: int = 10, **kwargs: Any) -> np.ndarray:
        """The ``k`` rightmost roots of the denominator (the open-loop poles).

        The roots of a rational denominator come from :func:`numpy.roots` (multiple roots, which
        it splits by about ``eps**(1/m)``, merged); a delayed, retarded denominator is handled by
        :func:`fluidnet.linear.roots.characteristic_roots` on its companion system.

        Parameters
        ----------
        k : int, default 10
            How many poles to return, rightmost first (a rational denominator has at most its
            degree).
        **kwargs
            Root-finder options (``max_nodes``, ``n_nodes``) passed to
            :func:`fluidnet.linear.roots.characteristic_roots` for a delayed denominator; not used
            for a rational one.

        Returns
        -------
        numpy.ndarray of complex
            Distinct poles sorted by real part, descending.

        Raises
        ------
        ModelError
            When the delayed denominator is not retarded.
        OptionError
            For an unknown or invalid root-finder option (delayed denominator).
        """
        values, _ = self._poles_with_multiplicity(k=k, **kwargs)
        return values

    def _poles_with_multiplicity(self, k=None, region=None, **kwargs):
        # checked here for a rational denominator too (whose poles are exact and need none),
        # so that a misspelt option is an OptionError whatever the denominator
        check_root_options(kwargs, where="DelayTF poles")
        if self.den.is_rational:
            c = self.den.coeffs[0]
            if len(c) < 2:
                return np.zeros(0, dtype=complex), np.zeros(0, dtype=int)
            values, mult = _merge_close(np.roots(c))
            return values[:k], mult[:k]
        roots = self.den.companion().roots(k=k or 10, region=region, **kwargs)
        return roots.values, np.array([r.multiplicity for r in roots], dtype=int)

    def pole_census(self, *, axis_tol: float = 1e-9) -> PoleCensus:
        """The open-loop poles in the right half-plane and on the imaginary axis.

        Poles with ``|Re(p)| <= axis_tol * max(1, |p|)`` are on the axis (for a rational
        denominator also those within ``1e-7 * max(1, |p|)``, the accuracy of
        :func:`numpy.roots`).

        Parameters
        ----------
        axis_tol : float, default 1e-9
            Relative tolerance on the real part below which a pole counts as on the imaginary axis.

        Returns
        -------
        PoleCensus
            The number of right-half-plane poles (with multiplicity) and the frequencies of the
            poles on the axis.
        """
        if self.den.is_rational:
            r, mult = self._poles_with_multiplicity()
        else:
            r, mult = self._poles_with_multiplicity(region=-1e-6)
        scale = np.maximum(1.0, np.abs(r))
        tol = np.maximum(axis_tol, 1e-7 * self.den.is_rational) * scale
        on_axis = np.abs(np.real(r)) <= tol
        rhp = int(np.sum(mult[(np.real(r) > 0) & ~on_axis]))
        return PoleCensus(rhp=rhp, axis_frequencies=np.unique(np.round(np.imag(r)[on_axis], 12)))

    def rhp_pole_count(self, **kwargs: Any) -> int:
        """Number of open-loop poles with positive real part (counted with multiplicity).

        Parameters
        ----------
        **kwargs
            For a rational denominator, ``axis_tol`` of :meth:`pole_census`; for a delayed one,
            ``axis_tol`` and the root-finder options of
            :func:`fluidnet.linear.roots.count_rhp_roots`.

        Returns
        -------
        int

        Raises
        ------
        AnalysisError
            For a delayed denominator, when the roots right of the imaginary axis are not certified
            complete.
        """
        axis_tol = kwargs.pop("axis_tol", 1e-9)
        check_root_options(kwargs, where="DelayTF.rhp_pole_count")
        if self.den.is_rational:
            return self.pole_census(axis_tol=axis_tol).rhp
        return count_rhp_roots(self.den.companion(), axis_tol=axis_tol, **kwargs)

    # ------------------------------------------------------------------ algebra
    def __mul__(self, other) -> DelayTF:
        other = as_delay_tf(other)
        return DelayTF(self.num * other.num, self.den * other.den)

    __rmul__ = __mul__

    def __truediv__(self, other) -> DelayTF:
        other = as_delay_tf(other)
        return DelayTF(self.num * other.den, self.den * other.num)

    def __rtruediv__(self, other) -> DelayTF:
        return as_delay_tf(other) / self

    def __add__(self, other) -> DelayTF:
        other = as_delay_tf(other)
        if self.den == other.den:
            return DelayTF(self.num + other.num, self.den)
        return DelayTF(self.num * other.den + other.num * self.den, self.den * other.den)

    __radd__ = __add__

    def __neg__(self) -> DelayTF:
        return DelayTF(-self.num, self.den)

    def __sub__(self, other) -> DelayTF:
        return self + (-as_delay_tf(other))

    def __rsub__(self, other) -> DelayTF:
        return as_delay_tf(other) - self

    # ------------------------------------------------------------------ closed loops
    def feedback(self, other: Any = 1.0, sign: int = -1) -> DelayTF:
        """The closed loop of this transfer function with ``other`` in its feedback path.

        ``G / (1 - sign G K)`` with ``G = self`` and ``K = other``: with the defaults (unity
        negative feedback) ``L / (1 + L)``, the complementary sensitivity of the loop ``L``, as
        python-control's ``feedback(sys1, sys2=1, sign=-1)``. Exact: for ``G = N_G/D_G`` and
        ``K = N_K/D_K`` the result is ``N_G D_K / (D_G D_K - sign N_G N_K)``, delays included,
        not reduced (its denominator is the closed loop's characteristic function).

        Parameters
        ----------
        other : DelayTF, number, sympy expression, str or control.TransferFunction, default 1
            The feedback path ``K``.
        sign : {-1, 1}, default -1
            ``-1`` for negative feedback, ``+1`` for positive feedback.

        Returns
        -------
        DelayTF

        Raises
        ------
        OptionError
            When ``sign`` is not ``-1`` or ``+1``.
        ModelError
            When ``other`` is not a transfer function.

        See Also
        --------
        sensitivity : ``1 / (1 + L)``.
        complementary_sensitivity : ``L / (1 + L)``.
        fluidnet.step_response : the closed loop's step response, with exact delays.

        Examples
        --------
        >>> import fluidnet as fn
        >>> L = fn.DelayTF.from_expr("exp(-0.2*s)*(0.08*s + 0.2)/(0.2*s)**2")
        >>> T = L.feedback()
        >>> s = 0.3 + 2.0j
        >>> bool(abs(T(s) - L(s) / (1 + L(s))) < 1e-14 * abs(T(s)))
        True
        """
        if sign not in (-1, 1) or isinstance(sign, bool):
            raise OptionError(f"sign must be -1 (negative feedback) or +1, got {sign!r}")
        K = as_delay_tf(other)
        return DelayTF(self.num * K.den, self.den * K.den - sign * (self.num * K.num))

    def sensitivity(self) -> DelayTF:
        """The sensitivity ``S = 1 / (1 + L)`` of the unity negative-feedback loop ``L``.

        Exact (``D / (D + N)`` for ``L = N/D``, not reduced). ``S + T = 1`` with
        :meth:`complementary_sensitivity`; ``max |S(jw)|`` is the inverse of the stability
        margin of :func:`fluidnet.margins`.

        Returns
        -------
        DelayTF

        See Also
        --------
        complementary_sensitivity, feedback

        Examples
        --------
        >>> import fluidnet as fn
        >>> L = fn.DelayTF.from_expr("2*exp(-s)/(s + 1)")
        >>> S, T = L.sensitivity(), L.complementary_sensitivity()
        >>> bool(abs(S(1j) + T(1j) - 1) < 1e-15)
        True
        """
        return DelayTF(self.den, self.den + self.num)

    def complementary_sensitivity(self) -> DelayTF:
        """The complementary sensitivity ``T = L / (1 + L)`` of the unity negative-feedback
        loop ``L``: the closed loop from reference to output, :meth:`feedback` with its
        defaults.

        Returns
        -------
        DelayTF

        See Also
        --------
        sensitivity, feedback
        """
        return self.feedback()

    # ------------------------------------------------------------------ interop
    def to_control(self, pade: int | None = None) -> control.TransferFunction:
        """Convert to a :class:`control.TransferFunction`, each delay replaced by a Padé
        approximation.

        python-control has no exact delay: ``e^{-s tau}`` becomes the rational function of
        :func:`control.pade` of order ``pade``, which matches the delay's phase only up to a
        frequency of about ``pade / tau``. Every analysis of fluidnet keeps the delays exact;
        use this to hand a loop to python-control's other tools, checking the approximation
        against :meth:`freqresp` over the frequencies that matter.

        Parameters
        ----------
        pade : int, optional
            Order of the Padé approximation used for every ``exp(-s tau)``. Required when
            the transfer function has delays.

        Returns
        -------
        control.TransferFunction

        Raises
        ------
        ModelError
            When the transfer function has delays and ``pade`` is not given.

        See Also
        --------
        frd : the exact frequency response as python-control data.
        from_control : the way back.

        Examples
        --------
        >>> import numpy as np, fluidnet as fn
        >>> L = fn.DelayTF.from_expr("exp(-0.2*s)/(s + 1)")
        >>> G = L.to_control(pade=6)
        >>> w = 2.0
        >>> bool(abs(complex(G(1j * w)) - complex(L(1j * w))) < 1e-8)
        True
        """
        import control

        delays = [tau for tau in self.delays if tau > 0]
        if delays and pade is None:
            raise ModelError(
                f"this DelayTF has delays {delays}; pass pade=N to approximate them "
                "(python-control has no exact delay)"
            )
        approx = {tau: control.pade(tau, int(pade)) for tau in delays} if pade is not None else {}

        def rational(qp: QuasiPolynomial) -> tuple[np.ndarray, np.ndarray]:
            # sum_k p_k * P_k/Q_k over the common denominator prod_all Q
            common = np.array([1.0])
            for tau in delays:
                common = np.polymul(common, approx[tau][1])
            total = np.zeros(1)
            for tau, c in qp.terms.items():
                term = np.polymul(c, common)
                if tau > 0:
                    P, Q = approx[tau]
                    others = np.array([1.0])
                    for t2 in delays:
                        if t2 != tau:
                            others = np.polymul(others, approx[t2][1])
                    term = np.polymul(c, np.polymul(P, others))
                total = np.polyadd(total, term)
            return total, common

        n_num, _ = rational(self.num)
        d_num, _ = rational(self.den)  # the common factor cancels between num and den
        tf = control.tf(np.real_if_close(n_num), np.real_if_close(d_num))
        return cast("control.TransferFunction", tf)  # control annotates tf as possibly None

    def frd(self, omega: ArrayLike) -> control.FrequencyResponseData:
        """The exact frequency response as :class:`control.FrequencyResponseData`.

        Parameters
        ----------
        omega : array_like
            Angular frequencies in rad/s, 1-D.

        Returns
        -------
        control.FrequencyResponseData
            ``L(j omega)`` at ``omega``, delays included exactly (no Padé approximation).
        """
        import control

        omega = np.asarray(omega, dtype=float)
        return control.frd(self.freqresp(omega), omega)

    def to_sympy(self, s: sympy.Symbol | None = None) -> sympy.Expr:
        """``num(s)/den(s)`` as a sympy expression.

        Parameters
        ----------
        s : sympy.Symbol, optional
            The Laplace variable to write it in; default ``fluidnet.s``.

        Returns
        -------
        sympy.Expr
            Coefficients as floats, delays as ``exp(-s*tau)`` factors; not simplified.
        """
        return self.num.to_sympy(s) / self.den.to_sympy(s)

    def _repr_latex_(self) -> str:
        expr = self.expr if self.expr is not None else self.to_sympy()
        return "$L(s) = " + sympy.latex(expr) + "$"

    def __repr__(self) -> str:
        return f"DelayTF(num={self.num!r}, den={self.den!r})"


def as_delay_tf(obj: Any) -> DelayTF:
    """Coerce a DelayTF, a :class:`control.TransferFunction`, a number, a sympy expression or
    its text (parsed, never run: see :meth:`DelayTF.from_expr`).

    Parameters
    ----------
    obj : DelayTF, control.TransferFunction, control.StateSpace, number, sympy.Expr or str
        The transfer function.

    Returns
    -------
    DelayTF

    Raises
    ------
    ModelError
        For anything else.
    """
    if isinstance(obj, DelayTF):
        return obj
    if isinstance(obj, (sympy.Basic, str)):
        return DelayTF.from_expr(obj)
    if np.isscalar(obj):
        return DelayTF(obj)
    try:
        import control
    except ImportError:  # pragma: no cover - control is a dependency
        control = None
    if control is not None and isinstance(obj, (control.TransferFunction, control.StateSpace)):
        return DelayTF.from_control(obj)
    raise ModelError(f"cannot interpret {type(obj).__name__} as a transfer function")


def _merge_close(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the roots :func:`numpy.roots` returns for one multiple root; sorted rightmost first."""
    vals: list[complex] = []
    mult: list[int] = []
    for v in r[np.argsort(-np.real(r))]:
        for i, u in enumerate(vals):
            if abs(u - v) <= 1e-5 * max(1.0, abs(v)):
                vals[i] = (u * mult[i] + v) / (mult[i] + 1)
                mult[i] += 1
                break
        else:
            vals.append(complex(v))
            mult.append(1)
    return np.array(vals, dtype=complex), np.array(mult, dtype=int)
