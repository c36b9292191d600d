"""QuasiPolynomial: evaluation, algebra, retardedness, companion form, sympy conversion."""

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from fluidnet import QuasiPolynomial
from fluidnet.linear.quasipoly import from_sympy

S = np.array([0.3 + 1.1j, -0.7 + 0.2j, 2.0, 5j])


def closed(s):
    return s**2 + (0.5 * s + 0.3) * np.exp(-s) - 2 * np.exp(-2.5 * s)


QP = QuasiPolynomial({0.0: [1, 0, 0], 1.0: [0.5, 0.3], 2.5: [-2.0]})


def test_evaluation_matches_closed_form():
    np.testing.assert_allclose(QP(S), closed(S), rtol=1e-14)


def test_structure():
    assert QP.delays == (0.0, 1.0, 2.5)
    assert QP.degree == 2 and QP.is_retarded and not QP.is_rational
    assert QuasiPolynomial([1.0, 2.0]).is_rational
    neutral = QuasiPolynomial({0.0: [1.0, 0.0], 1.0: [0.5, 0.0]})
    assert not neutral.is_retarded


def test_merging_and_zero_terms():
    qp = QuasiPolynomial([(1.0, [1.0]), (1.0, [-1.0]), (0.0, [0.0, 2.0])])
    assert qp.delays == (0.0,) and list(qp.coeffs[0]) == [2.0]
    assert QuasiPolynomial([]).is_zero


def test_algebra():
    a = QuasiPolynomial({0.0: [1.0, 1.0]})
    b = QuasiPolynomial({0.5: [2.0]})
    np.testing.assert_allclose((a * b)(S), (S + 1) * 2 * np.exp(-0.5 * S), rtol=1e-14)
    np.testing.assert_allclose((a + b - 1)(S), S + 2 * np.exp(-0.5 * S), rtol=1e-14)
    np.testing.assert_allclose((-b).shift(0.25)(S), -2 * np.exp(-0.75 * S), rtol=1e-14)


def test_derivative_matches_finite_difference():
    h = 1e-6
    fd = (QP(S + h) - QP(S - h)) / (2 * h)
    np.testing.assert_allclose(QP.derivative()(S), fd, rtol=1e-7)


def test_companion_characteristic_is_monic_quasipolynomial():
    qp = QuasiPolynomial({0.0: [2.0, 1.0, 4.0], 0.8: [0.6, -1.0]})
    lin = qp.companion()
    np.testing.assert_allclose(lin.characteristic(S), qp(S) / 2.0, rtol=1e-13)
    with pytest.raises(ValueError, match="retarded"):
        QuasiPolynomial({0.0: [1.0], 1.0: [1.0, 0.0]}).companion()


def test_sympy_round_trip():
    s = sympy.Symbol("s")
    expr = s**2 + (sympy.Rational(1, 2) * s + 0.3) * sympy.exp(-s) - 2 * sympy.exp(-2.5 * s)
    qp = from_sympy(expr, s)
    np.testing.assert_allclose(qp(S), closed(S), rtol=1e-14)
    back = sympy.lambdify(s, QP.to_sympy(s), "numpy")
    np.testing.assert_allclose(back(S), closed(S), rtol=1e-13)


@pytest.mark.parametrize(
    "terms, match",
    [({-1.0: [1.0]}, "negative"), ({np.nan: [1.0]}, "not finite"), ({0.0: [np.inf]}, "finite")],
)
def test_invalid(terms, match):
    with pytest.raises(ValueError, match=match):
        QuasiPolynomial(terms)


finite = dict(allow_nan=False, allow_infinity=False)


@given(
    c0=st.lists(st.floats(-5, 5, **finite), min_size=1, max_size=3),
    c1=st.lists(st.floats(-5, 5, **finite), min_size=1, max_size=3),
    tau=st.floats(0.01, 3.0, **finite),
    lead=st.floats(0.5, 4.0, **finite),
)
@settings(max_examples=60, deadline=None)
def test_companion_property(c0, c1, tau, lead):
    # degree-3 delay-free part with leading coefficient `lead`, delayed part of degree <= 2
    qp = QuasiPolynomial({0.0: [lead, *c0] + [0.0] * (3 - len(c0)), tau: c1})
    lin = qp.companion()
    np.testing.assert_allclose(lin.characteristic(S), qp(S) / lead, rtol=1e-9, atol=1e-9)


@given(
    a=st.lists(st.floats(-3, 3, **finite), min_size=1, max_size=3),
    b=st.lists(st.floats(-3, 3, **finite), min_size=1, max_size=3),
    ta=st.floats(0, 2, **finite),
    tb=st.floats(0, 2, **finite),
)
@settings(max_examples=60, deadline=None)
def test_product_and_sum_evaluate_pointwise(a, b, ta, tb):
    A = QuasiPolynomial({ta: a})
    B = QuasiPolynomial({tb: b})
    np.testing.assert_allclose((A * B)(S), A(S) * B(S), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose((A + B)(S), A(S) + B(S), rtol=1e-9, atol=1e-9)
