"""fluidnet.bifurcation.series: truncated multivariate power series against sympy's expansions
(products, compositions with exp and 1/(1+u)) and the ring's monomial count."""

import math

import numpy as np
import pytest
import sympy

from fluidnet.bifurcation.series import Series, SeriesRing, ring

u, v = sympy.symbols("u v")


def _sympy_coefficients(expr, N, m=2):
    """Coefficients of the Taylor polynomial of expr in (u, v) up to total degree N."""
    poly = sympy.Poly(
        sympy.series(
            expr.subs({u: u * sympy.Symbol("t"), v: v * sympy.Symbol("t")}),
            sympy.Symbol("t"),
            0,
            N + 1,
        )
        .removeO()
        .subs(sympy.Symbol("t"), 1),
        u,
        v,
    )
    return {tuple(e): complex(c) for e, c in poly.terms()}


@pytest.mark.parametrize(("m", "N"), [(1, 5), (2, 4), (3, 3)])
def test_ring_holds_every_monomial_up_to_degree_N(m, N):
    r = SeriesRing(m, N)
    assert r.size == math.comb(m + N, N)
    assert list(r.degree) == sorted(r.degree)
    assert r.monomials[0] == (0,) * m
    assert len(r.of_degree(N)) == math.comb(m + N - 1, N)
    assert ring(m, N) is ring(m, N)


def test_product_is_truncated_polynomial_multiplication():
    N = 4
    r = ring(2, N)
    a = 1 + 2 * r.variable(0) + r.variable(1) * r.variable(1) * 3
    b = r.variable(0) * r.variable(1) - 0.5 + r.variable(1)
    got = a * b - 1
    exact = sympy.expand((1 + 2 * u + 3 * v**2) * (u * v - sympy.Rational(1, 2) + v) - 1)
    for e, c in sympy.Poly(exact, u, v).terms():
        if sum(e) <= N:
            assert got.coefficient(e) == pytest.approx(complex(c))
    assert (2, 3) not in r.index  # degree 5 (3 u v^3 from 3 v^2 * u v) is cut


@pytest.mark.parametrize(
    ("name", "f", "derivs"),
    [
        ("exp", lambda w: sympy.exp(w), lambda a0, N: [math.exp(a0)] * (N + 1)),
        (
            "1/(1+w)",
            lambda w: 1 / (1 + w),
            lambda a0, N: [
                (-1) ** k * math.factorial(k) / (1 + a0) ** (k + 1) for k in range(N + 1)
            ],
        ),
    ],
)
def test_smooth_function_of_a_series_is_its_taylor_polynomial(name, f, derivs):
    """f(a0 + u - 2 u v + 0.5 v) from f's derivatives at a0, against sympy's expansion."""
    N, a0 = 5, 0.3
    r = ring(2, N)
    arg = r.const(a0) + r.variable(0) - 2 * r.variable(0) * r.variable(1) + 0.5 * r.variable(1)
    got = arg.apply(derivs(a0, N))
    exact = _sympy_coefficients(f(sympy.Float(a0, 30) + u - 2 * u * v + v / 2), N)
    for e in r.monomials:
        assert got.coefficient(e) == pytest.approx(exact.get(e, 0.0), rel=1e-12, abs=1e-12), (
            name,
            e,
        )


def test_arithmetic_with_numbers():
    r = ring(1, 3)
    x = r.variable(0, base=2.0)
    assert isinstance(x, Series) and x.base == 2.0 and x.order == 3
    y = x * -2 + 4
    np.testing.assert_allclose(y.c, [0.0, -2.0, 0.0, 0.0])
    np.testing.assert_allclose((x * x).c, [4.0, 4.0, 1.0, 0.0])  # (2 + t)^2
    assert (-x).base == -2.0 and (x - x).nilpotent_part_nonzero() is False
