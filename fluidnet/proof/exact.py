"""Exact numbers in, enclosures out: how a value enters a proof and how an enclosure is written.

Every number a proof uses is an exact rational or an interval with exact rational ends, and is
turned into an arb ball (python-flint) that contains it:

* a **box end** (the parameter region) is read exactly: an ``int``, a
  :class:`fractions.Fraction` or a sympy ``Rational`` as it is, a ``float`` as the shortest
  decimal that prints it (``0.1`` is 1/10, which is what was typed);
* a **fixed parameter value** is enclosed by the interval between that decimal and the binary
  value of the float (they differ by less than one unit in the last place), so the proof covers
  both readings;
* an irrational real (``sympy.pi``) by the neighbouring floats of its value.

Enclosures computed by a proof are written as intervals ``[lo, hi]`` of decimal strings, rounded
outward to :data:`DIGITS` significant digits, and read back as the exact rationals they spell.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Any

from ..errors import ParameterError
from ..overrides import real_number

__all__ = [
    "DIGITS",
    "PRECISION",
    "Interval",
    "as_arb",
    "ball",
    "decimal_string",
    "exact_value",
    "fixed_interval",
    "interval_of",
    "interval_strings",
    "read_interval",
    "read_number",
    "working_precision",
]

#: Significant digits of the decimal strings a certificate stores for computed enclosures.
DIGITS = 17
#: The precision (bits) of the ball arithmetic of proofs; a certificate records it.
PRECISION = 53

#: An interval with exact rational ends.
Interval = tuple[Fraction, Fraction]


def _flint():
    import flint

    return flint


@contextmanager
def working_precision(bits: int = PRECISION) -> Iterator[None]:
    """python-flint's precision set to ``bits`` inside the block (and restored after it)."""
    flint = _flint()
    saved = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = saved


def exact_value(label: str, value: Any) -> Fraction:
    """``value`` (a real number) as an exact rational: floats by their shortest decimal.

    Raises
    ------
    ParameterError
        For a value that is not a finite real number, or an irrational one (use
        :func:`fixed_interval` for those).
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise ParameterError(f"{label}: {value!r} is not a real number")
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    num, den = getattr(value, "p", None), getattr(value, "q", None)
    if type(value).__module__.startswith("sympy") and isinstance(num, int):
        return Fraction(num, den if isinstance(den, int) else 1)
    got = real_number(value)
    if got is None or not math.isfinite(got):
        raise ParameterError(f"{label}: {value!r} is not a finite real number")
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if type(value).__module__.startswith("sympy"):
        raise ParameterError(
            f"{label}: {value!r} is irrational; a box end must be exact (give a rational, e.g. "
            "a float or a Fraction)"
        )
    return Fraction(repr(float(got)))


def fixed_interval(label: str, value: Any) -> Interval:
    """The interval a fixed parameter value stands for: its exact value, or for a float the
    hull of its shortest decimal and its binary value; for an irrational, the neighbouring
    floats."""
    try:
        exact = exact_value(label, value)
    except ParameterError:
        got = real_number(value)
        if got is None or not math.isfinite(got):
            raise
        return Fraction(math.nextafter(got, -math.inf)), Fraction(math.nextafter(got, math.inf))
    if isinstance(value, float) or (real_number(value) is not None and _is_float_like(value)):
        binary = Fraction(float(value))
        return min(exact, binary), max(exact, binary)
    return exact, exact


def _is_float_like(value: Any) -> bool:
    return (
        type(value).__module__ == "numpy"
        and getattr(value, "dtype", None) is not None
        and (value.dtype.kind == "f")
    )


def decimal_string(q: Fraction, direction: str = "exact") -> str:
    """``q`` as a decimal string: exact when its expansion has at most :data:`DIGITS`
    significant digits, else rounded ``"down"`` or ``"up"`` (``"exact"``: to nearest, for
    display only)."""
    if q == 0:
        return "0"
    rounding = {"down": ROUND_FLOOR, "up": ROUND_CEILING}.get(direction)
    with localcontext() as ctx:
        ctx.prec = DIGITS
        if rounding is not None:
            ctx.rounding = rounding
        value = Decimal(q.numerator) / Decimal(q.denominator)
    value = value.normalize()
    return format(value, "f") if -25 < value.adjusted() < 25 else str(value)


def read_number(text: str, label: str = "number") -> Fraction:
    """The exact rational a decimal string (or ``"p/q"``) spells.

    Raises
    ------
    ValueError
        When ``text`` is not a decimal number.
    """
    if not isinstance(text, str):
        raise ValueError(f"{label}: {text!r} is not a decimal string")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{label}: {text!r} is not a decimal number") from None


def read_interval(pair: Any, label: str = "interval") -> Interval:
    """``[lo, hi]`` decimal strings as exact rationals (``lo <= hi``)."""
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ValueError(f"{label}: {pair!r} is not a pair [lo, hi]")
    lo, hi = read_number(pair[0], label), read_number(pair[1], label)
    if lo > hi:
        raise ValueError(f"{label}: [{pair[0]}, {pair[1]}] has lo > hi")
    return lo, hi


def interval_strings(iv: Interval) -> list[str]:
    """``[lo, hi]`` as decimal strings rounded outward (an enclosure of ``iv``)."""
    return [decimal_string(iv[0], "down"), decimal_string(iv[1], "up")]


def as_arb(q: Fraction):
    """A ball containing the rational ``q`` (exact when ``q`` is a short binary fraction)."""
    flint = _flint()
    if q.denominator == 1:
        return flint.arb(q.numerator)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def ball(iv: Interval):
    """A ball containing the interval ``iv``."""
    lo, hi = iv
    if lo == hi:
        return as_arb(lo)
    return as_arb(lo).union(as_arb(hi))


def _arf_fraction(x) -> Fraction:
    """The exact value of an exact arb (a point)."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def interval_of(x) -> Interval:
    """The exact interval ``[mid - rad, mid + rad]`` (outward) of an arb ball ``x``.

    Raises
    ------
    ValueError
        When ``x`` is not finite.
    """
    if not x.is_finite():
        raise ValueError(f"{x} is not finite")
    lo, hi = x.lower(), x.upper()
    return _arf_fraction(lo), _arf_fraction(hi)
