"""State-space form of a transfer function with exact delays, for its time responses.

A :class:`~fluidnet.linear.delaytf.DelayTF` ``N(s)/D(s)`` whose denominator is *retarded* (its
delay-free term ``d_0(s)`` carries the highest power ``n`` of ``s``, every delayed term a lower
one) and whose numerator is *proper* (no term of degree above ``n``) is the input-output map of
the delay system

.. math::

    X'(t) = A_0 X(t) + \\sum_k A_k X(t - \\tau_k) + b\\, u(t), \\qquad
    y(t) = \\sum_j c_j \\cdot X(t - \\sigma_j) + \\sum_j d_j\\, u(t - \\rho_j),

with ``X = (xi, xi', ..., xi^(n-1))`` and ``D(s) Xi = U`` (the companion form of
:meth:`~fluidnet.linear.quasipoly.QuasiPolynomial.companion`). A numerator term of degree ``n``
is divided by ``d_0`` once: its quotient is a direct feedthrough ``d_j u(t - rho_j)`` and the
remainder, with the denominator's delayed terms shifted by the term's delay, of lower degree.
Nothing is approximated: the delays stay exact.

A neutral denominator (a delayed term of degree ``n``, e.g. ``1 + k e^{-s}`` in the closed
loop of a loop gain ``k e^{-s}``) and an improper numerator are refused with
:class:`NeutralSystemError` and :class:`ImproperSystemError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .delays import same_delay
from .lineardde import LinearDDE
from .quasipoly import QuasiPolynomial

__all__ = ["DelaySystem", "ImproperSystemError", "NeutralSystemError", "realize"]


class ImproperSystemError(ModelError):
    """A transfer function has more zeros than poles (a numerator term of higher degree in ``s``
    than the denominator's delay-free term): its step response would hold derivatives of a
    step, which no time response can sample. The message names the term."""


class NeutralSystemError(ModelError):
    """A transfer function's denominator is neutral (a delayed term as high in ``s`` as the
    delay-free term, e.g. the closed loop ``1 + k e^{-s tau}`` of a loop gain without
    roll-off) or of advanced type. Its time response would carry jumps that recur at every
    multiple of the delay and is not computed here. The message names the term."""


@dataclass(frozen=True, kw_only=True)
class DelaySystem:
    """A linear delay system with one input and one output (see the module docstring).

    Attributes
    ----------
    dynamics : LinearDDE or None
        ``X' = A_0 X + sum_k A_k X(t - tau_k)``; None for a system without states (a gain with
        delays, ``y = sum_j d_j u(t - rho_j)``).
    b : numpy.ndarray, shape (n,)
        The input's column (undelayed).
    outputs : tuple of (float, numpy.ndarray)
        ``(sigma_j, c_j)``: the output reads ``c_j . X(t - sigma_j)``.
    feedthrough : tuple of (float, float)
        ``(rho_j, d_j)``: the output holds ``d_j u(t - rho_j)``.
    """

    dynamics: LinearDDE | None
    b: np.ndarray
    outputs: tuple[tuple[float, np.ndarray], ...] = field(default=())
    feedthrough: tuple[tuple[float, float], ...] = field(default=())

    @property
    def n(self) -> int:
        """Number of states."""
        return 0 if self.dynamics is None else self.dynamics.n

    @property
    def delays(self) -> tuple[float, ...]:
        """Every delay of the system: state, output and feedthrough delays."""
        own = self.dynamics.delays if self.dynamics is not None else ()
        other = [s for s, _ in self.outputs] + [r for r, _ in self.feedthrough]
        return tuple(sorted({*own, *(d for d in other if d > 0)}))


def _add_term(terms: list[tuple[float, np.ndarray]], tau: float, c: np.ndarray) -> None:
    for i, (t0, c0) in enumerate(terms):
        if same_delay(t0, tau):
            terms[i] = (t0, c0 + c)
            return
    terms.append((tau, c))


def _as_real(c: np.ndarray, what: str) -> np.ndarray:
    if np.iscomplexobj(c):
        if np.any(np.imag(c) != 0):
            raise ModelError(
                f"the {what} has complex coefficients {c}: time responses are computed for "
                "real systems only"
            )
        c = np.real(c)
    return np.asarray(c, dtype=float)


def realize(tf) -> DelaySystem:
    """The delay system whose input-output map is the transfer function ``tf``.

    Parameters
    ----------
    tf : DelayTF
        A transfer function with a retarded denominator and a proper numerator.

    Returns
    -------
    DelaySystem

    Raises
    ------
    ImproperSystemError
        When a numerator term has a higher degree in ``s`` than the denominator.
    NeutralSystemError
        When a delayed term of the denominator has the degree of its delay-free term (or more).
    ModelError
        For complex coefficients, or a transfer function that needs a time advance.

    Examples
    --------
    >>> import fluidnet as fn
    >>> from fluidnet.linear.realization import realize
    >>> sys = realize(fn.DelayTF.from_expr("exp(-2*s)/(s + 1)"))   # x' = -x + u, y = x(t - 2)
    >>> sys.dynamics.A0, sys.b, sys.outputs
    (array([[-1.]]), array([1.]), ((2.0, array([1.])),))
    """
    num, den = tf.num, tf.den
    shift = den.delays[0]
    if shift > 0:  # a common delay of the denominator: e^{+s shift} moves onto the numerator
        if num.delays and num.delays[0] < shift and not same_delay(num.delays[0], shift):
            raise ModelError(
                f"{tf!r} is not causal: its denominator delays every term by at least "
                f"{shift:g} s, more than the numerator's smallest delay {num.delays[0]:g} s"
            )
        num = QuasiPolynomial([(max(tau - shift, 0.0), c) for tau, c in num.terms.items()])
        den = QuasiPolynomial([(max(tau - shift, 0.0), c) for tau, c in den.terms.items()])
    dterms = [(tau, _as_real(c, "denominator")) for tau, c in den.terms.items()]
    nterms = [(tau, _as_real(c, "numerator")) for tau, c in num.terms.items()]
    d0 = dterms[0][1]
    n = len(d0) - 1
    lead = float(d0[0])
    for tau, c in dterms[1:]:
        if len(c) - 1 >= n:
            kind = "neutral" if len(c) - 1 == n else "advanced"
            raise NeutralSystemError(
                f"the denominator is {kind}: its term delayed by {tau:g} s has degree "
                f"{len(c) - 1} in s, not below the degree {n} of its delay-free term; its time "
                "response is not computed (for a closed loop 1 + L, give the loop gain L more "
                "poles than zeros in every delayed term, e.g. a first-order lag)"
            )
    for tau, c in nterms:
        if len(c) - 1 > n:
            raise ImproperSystemError(
                f"the numerator term delayed by {tau:g} s has degree {len(c) - 1} in s, above "
                f"the denominator's degree {n}: the transfer function is improper (more zeros "
                "than poles), its response would hold derivatives of the input"
            )
    outputs: list[tuple[float, np.ndarray]] = []
    feedthrough: list[tuple[float, float]] = []
    for sigma, c in nterms:
        if len(c) - 1 == n:  # c = q d_0 + r: a feedthrough, and the denominator's delayed terms
            q = float(c[0]) / lead
            feedthrough.append((sigma, q))
            r = np.polysub(c, q * d0)[1:] if n > 0 else np.zeros(0)
            if r.size:
                _add_term(outputs, sigma, _row(r, n))
            for tau, dk in dterms[1:]:
                _add_term(outputs, sigma + tau, _row(-q * dk, n))
        elif n > 0:
            _add_term(outputs, sigma, _row(c, n))
    if n == 0:
        return DelaySystem(dynamics=None, b=np.zeros(0), feedthrough=tuple(feedthrough))
    dynamics = QuasiPolynomial(dterms).companion()
    b = np.zeros(n)
    b[-1] = 1.0 / lead
    kept = tuple((s, c) for s, c in sorted(outputs, key=lambda p: p[0]) if np.any(c != 0))
    return DelaySystem(dynamics=dynamics, b=b, outputs=kept, feedthrough=tuple(feedthrough))


def _row(c: np.ndarray, n: int) -> np.ndarray:
    """The output row reading the polynomial ``c(s)`` (degree < n, highest power first) of
    ``Xi`` from the state ``(xi, xi', ..., xi^(n-1))``."""
    c = np.trim_zeros(np.asarray(c, dtype=float), "f")
    row = np.zeros(n)
    if c.size:
        row[: c.size] = c[::-1]
    return row
