"""Truncated power series in several variables: the algebra of normal-form computations.

An element is ``sum_alpha c_alpha z^alpha`` over multi-indices ``alpha`` of ``m`` variables with
``|alpha| <= N`` (complex coefficients). Products are truncated at total degree ``N``; a
smooth function of a series ``a0 + n`` (``n`` without constant term, nilpotent in the truncated
algebra) is its Taylor polynomial ``sum_k f^(k)(a0) n^k / k!``. Evaluating a model's right-hand
side (:func:`fluidnet.bifurcation.jets.evaluate`) on series whose variables are the
center-manifold coordinates gives every Taylor coefficient of the composed map at once, to any
order, without forming derivative tensors.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np

__all__ = ["SeriesRing", "Series", "ring"]


class SeriesRing:
    """Monomials of ``m`` variables up to total degree ``N``, with the product table.

    Attributes
    ----------
    monomials : list of tuple
        Exponent tuples, by increasing degree (the constant first).
    index : dict
        Exponent tuple -> position.
    degree : ndarray
        Total degree of each monomial.
    """

    def __init__(self, m: int, N: int):
        self.m, self.N = m, N
        monos = [(0,) * m]
        for d in range(1, N + 1):
            for combo in combinations_with_replacement(range(m), d):
                e = [0] * m
                for i in combo:
                    e[i] += 1
                monos.append(tuple(e))
        self.monomials = monos
        self.index = {e: i for i, e in enumerate(monos)}
        self.degree = np.array([sum(e) for e in monos])
        self.size = len(monos)
        I, J, K = [], [], []
        for i, a in enumerate(monos):
            for j, b in enumerate(monos):
                if self.degree[i] + self.degree[j] <= N:
                    I.append(i)
                    J.append(j)
                    K.append(self.index[tuple(x + y for x, y in zip(a, b, strict=True))])
        self._I, self._J, self._K = np.array(I), np.array(J), np.array(K)
        self.factorial = np.array([math.prod(math.factorial(x) for x in e) for e in monos])

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        prod = a[self._I] * b[self._J]
        re = np.bincount(self._K, weights=np.real(prod), minlength=self.size)
        im = np.bincount(self._K, weights=np.imag(prod), minlength=self.size)
        return re + 1j * im

    def const(self, v: complex) -> Series:
        c = np.zeros(self.size, dtype=complex)
        c[0] = v
        return Series(c, self)

    def variable(self, i: int, base: complex = 0.0) -> Series:
        c = np.zeros(self.size, dtype=complex)
        c[0] = base
        e = [0] * self.m
        e[i] = 1
        c[self.index[tuple(e)]] = 1.0
        return Series(c, self)

    def of_degree(self, d: int) -> list[tuple[int, ...]]:
        return [e for e in self.monomials if sum(e) == d]


@lru_cache(maxsize=32)
def ring(m: int, N: int) -> SeriesRing:
    """The (cached) :class:`SeriesRing` of ``m`` variables to degree ``N``."""
    return SeriesRing(m, N)


class Series:
    """An element of a :class:`SeriesRing` (supports ``+``, ``*`` and smooth functions)."""

    __slots__ = ("c", "ring")

    def __init__(self, c: np.ndarray, ring_: SeriesRing):
        self.c = c
        self.ring = ring_

    @property
    def order(self) -> int:
        return self.ring.N

    @property
    def base(self) -> complex:
        return complex(self.c[0])

    def nilpotent_part_nonzero(self) -> bool:
        return bool(np.any(self.c[1:] != 0))

    def _other(self, o) -> np.ndarray:
        if isinstance(o, Series):
            return o.c
        c = np.zeros(self.ring.size, dtype=complex)
        c[0] = o
        return c

    def __add__(self, o):
        return Series(self.c + self._other(o), self.ring)

    __radd__ = __add__

    def __neg__(self):
        return Series(-self.c, self.ring)

    def __sub__(self, o):
        return Series(self.c - self._other(o), self.ring)

    def __mul__(self, o):
        if not isinstance(o, Series):
            return Series(self.c * complex(o), self.ring)
        return Series(self.ring.mul(self.c, o.c), self.ring)

    __rmul__ = __mul__

    def apply(self, derivs) -> Series:
        """``f(self)`` from ``derivs[k] = f^(k)(base)``, ``k = 0..N``."""
        n = self.c.copy()
        n[0] = 0.0
        out = np.zeros(self.ring.size, dtype=complex)
        out[0] = derivs[0]
        power = np.zeros(self.ring.size, dtype=complex)
        power[0] = 1.0
        for k in range(1, self.ring.N + 1):
            power = self.ring.mul(power, n)
            if not np.any(power):
                break
            out = out + (derivs[k] / math.factorial(k)) * power
        return Series(out, self.ring)

    def coefficient(self, exponents: tuple[int, ...]) -> complex:
        return complex(self.c[self.ring.index[tuple(exponents)]])
