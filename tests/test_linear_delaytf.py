"""DelayTF: construction from sympy, evaluation, algebra and python-control interop."""

import control
import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import DelayTF

s = fn.s
W = np.logspace(-2, 2, 25)


def G_closed(w, a=0.4, b=0.2, d0=0.2):
    jw = 1j * w
    return np.exp(-jw * d0) * (a * jw * d0 + b) / (jw * d0) ** 2


def test_from_expr_rcp_eq9():
    L = DelayTF.from_expr(sympy.exp(-0.2 * s) * (0.4 * 0.2 * s + 0.2) / (0.2 * s) ** 2)
    np.testing.assert_allclose(L.freqresp(W), G_closed(W), rtol=1e-13)
    assert L.delays == (0.0, 0.2)


def test_delay_in_denominator_rcp_g1():
    beta, d0 = 0.3, 1.0
    expr = d0 * s * sympy.exp(-s * d0) / (d0**2 * s**2 + beta * sympy.exp(-s * d0))
    G1 = DelayTF.from_expr(expr)
    jw = 1j * W
    ref = jw * np.exp(-jw) / (jw**2 + beta * np.exp(-jw))
    np.testing.assert_allclose(G1.freqresp(W), ref, rtol=1e-13)
    assert G1.den.is_retarded


def test_advance_in_denominator_is_normalised():
    L = DelayTF.from_expr(1 / (s * sympy.exp(0.5 * s) + 1))
    ref = np.exp(-0.5j * W) / (1j * W + np.exp(-0.5j * W))
    np.testing.assert_allclose(L.freqresp(W), ref, rtol=1e-13)


def test_from_expr_errors():
    k = sympy.Symbol("k")
    with pytest.raises(ValueError, match=r"free symbols \['k'\]"):
        DelayTF.from_expr(k / s)
    with pytest.raises(ValueError, match="not causal"):
        DelayTF.from_expr(sympy.exp(s) / (s + 1))
    with pytest.raises(ValueError, match="not a polynomial"):
        DelayTF.from_expr(sympy.sin(s) / (s + 1))
    with pytest.raises(ValueError, match="zero"):
        DelayTF([1.0], [0.0])


def test_algebra_against_closed_forms():
    a = DelayTF.from_expr(1 / (s + 1))
    b = DelayTF.from_expr(sympy.exp(-0.3 * s) / s)
    jw = 1j * W
    np.testing.assert_allclose((a * b).freqresp(W), np.exp(-0.3 * jw) / (jw * (jw + 1)))
    np.testing.assert_allclose((a + b).freqresp(W), 1 / (jw + 1) + np.exp(-0.3 * jw) / jw)
    np.testing.assert_allclose((a / b).freqresp(W), jw / ((jw + 1) * np.exp(-0.3 * jw)))
    np.testing.assert_allclose((2 - a).freqresp(W), 2 - 1 / (jw + 1))


def test_control_round_trip_rational():
    sys = control.tf([2.0, 1.0], [1.0, 3.0, 2.0])
    L = DelayTF.from_control(sys)
    np.testing.assert_allclose(L.freqresp(W), sys(1j * W), rtol=1e-13)
    back = L.to_control()
    np.testing.assert_allclose(back(1j * W), sys(1j * W), rtol=1e-13)
    assert fn.as_delay_tf(sys).num == L.num


def test_to_control_pade_matches_control_pade():
    tau = 0.2
    L = DelayTF.from_expr(sympy.exp(-tau * s) * (0.08 * s + 0.2) / (0.04 * s**2))
    num, den = control.pade(tau, 4)
    ref = control.tf(num, den) * control.tf([0.08, 0.2], [0.04, 0, 0])
    got = L.to_control(pade=4)
    np.testing.assert_allclose(got(1j * W), ref(1j * W), rtol=1e-9)
    with pytest.raises(ValueError, match="pade"):
        L.to_control()


def test_frd_holds_the_exact_response():
    L = DelayTF.from_expr(sympy.exp(-0.2 * s) / (s + 1))
    frd = L.frd(W)
    np.testing.assert_allclose(np.squeeze(frd.frdata), L.freqresp(W), rtol=1e-14)


def test_rational_poles():
    L = DelayTF([1.0], [1.0, -1.0, -2.0])  # poles 2, -1
    np.testing.assert_allclose(np.sort(L.poles().real), [-1.0, 2.0])
    assert L.rhp_pole_count() == 1


def test_from_expr_refuses_a_non_expression():
    # an equation is not a transfer function: a ModelError naming it, not a failure deep in
    # the quasi-polynomial conversion
    s = fn.s
    with pytest.raises(fn.ModelError, match="is not an expression"):
        fn.DelayTF.from_expr(fn.sympy.Eq(s, 1))


# ------------------------------------------------------------------- closed loops (issue 36)
#: Points of the complex plane, left and right half-plane, off the poles of the loops below.
S_POINTS = np.array(
    [complex(a, b) for a in (-0.7, -0.05, 0.0, 0.3, 2.0) for b in (-9.0, -1.3, 0.4, 2.2, 30.0)]
)


@pytest.mark.parametrize(
    "expr",
    [
        "exp(-0.2*s)*(0.08*s + 0.2)/(0.2*s)**2",  # RCP's loop, eq (9)
        "0.2*s*exp(-0.2*s)/(0.04*s**2 + 0.3*exp(-0.2*s))",  # a delay in the denominator
        "3*exp(-0.5*s)/((s + 1)*(0.1*s + 1))",
    ],
)
def test_feedback_is_l_over_one_plus_l(expr):
    L = DelayTF.from_expr(expr)
    T, S = L.feedback(), L.sensitivity()
    Ls = L(S_POINTS)
    np.testing.assert_allclose(T(S_POINTS), Ls / (1 + Ls), rtol=1e-13)
    np.testing.assert_allclose(S(S_POINTS), 1 / (1 + Ls), rtol=1e-13)
    np.testing.assert_allclose(L.complementary_sensitivity()(S_POINTS), T(S_POINTS), rtol=0)
    # the denominator is the closed loop's characteristic function D + N, not reduced
    assert T.den == L.den + L.num


def test_feedback_with_a_controller_and_positive_feedback():
    G = DelayTF.from_expr("exp(-0.3*s)/(s + 1)")
    K = DelayTF.from_expr("(2*s + 1)/(0.5*s + 1)")
    Gs, Ks = G(S_POINTS), K(S_POINTS)
    np.testing.assert_allclose(G.feedback(K)(S_POINTS), Gs / (1 + Gs * Ks), rtol=1e-13)
    np.testing.assert_allclose(G.feedback(K, sign=1)(S_POINTS), Gs / (1 - Gs * Ks), rtol=1e-13)
    np.testing.assert_allclose(G.feedback(0.5)(S_POINTS), Gs / (1 + 0.5 * Gs), rtol=1e-13)
    # python-control's feedback of the same rational parts agrees where there is no delay
    H = DelayTF.from_expr("1/(s + 1)")
    ref = control.feedback(H.to_control(), K.to_control())
    np.testing.assert_allclose(
        H.feedback(K)(S_POINTS), [complex(ref(x)) for x in S_POINTS], rtol=1e-12
    )


def test_feedback_refuses_a_bad_sign():
    G = DelayTF.from_expr("1/(s + 1)")
    with pytest.raises(fn.OptionError, match="sign"):
        G.feedback(1, sign=2)
    with pytest.raises(fn.ModelError, match="cannot interpret"):
        G.feedback(object())
