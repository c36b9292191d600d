"""Loop gains: RCP eq (9), the closed-loop identity 1 + L = det(closed)/det(open), signal cuts."""

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import AnalysisError, ModelError
from fluidnet.symbolic.loopgain import loop_gain_expr

t = fn.t
SPTS = np.array([0.4 + 2.0j, -0.3 + 7.0j, 1.5 + 0.1j, 0.05j])


def test_rcp_cut_at_rate_is_eq9():
    m = fn.models.rcp()
    for a, b, d0 in [(0.4, 0.2, 0.2), (1.4, 0.8, 0.05), (0.1, 1.0, 1.0)]:
        L = m.loop_gain("R", alpha=a, beta=b, d0=d0)
        G = np.exp(-SPTS * d0) * (a * SPTS * d0 + b) / (SPTS * d0) ** 2
        np.testing.assert_allclose(L(SPTS), G, rtol=1e-12)


def test_rcp_symbolic_loop_gain():
    alpha, beta, d0 = sympy.symbols("alpha beta d0", real=True)
    expr = loop_gain_expr(fn.models.rcp(), "R")
    G = sympy.exp(-fn.s * d0) * (alpha * fn.s * d0 + beta) / (fn.s * d0) ** 2
    assert sympy.simplify(expr - G) == 0


@pytest.mark.parametrize("cut", ["R", "q"])
def test_closed_loop_identity(cut):
    # L = N/D unreduced, D = det(open loop): D + N must equal det(closed loop) from linearize
    m = fn.models.rcp()
    L = m.loop_gain(cut, alpha=0.7, beta=0.3)
    lin = m.linearize(alpha=0.7, beta=0.3)
    np.testing.assert_allclose(L.den(SPTS) + L.num(SPTS), lin.characteristic(SPTS), rtol=1e-12)


def test_rcp_cut_at_queue_gives_characteristic_eq15():
    a, b, d0 = 0.4, 0.2, 0.2
    L = fn.models.rcp().loop_gain("q")
    e = np.exp(-SPTS * d0)
    # 1 + L = 0  <=>  d0^2 s^2 + alpha d0 s e^{-s d0} + beta e^{-s d0} = 0   (eq 15)
    lhs = (1 + L(SPTS)) * (d0**2 * SPTS**2 + a * d0 * SPTS * e)
    np.testing.assert_allclose(lhs, d0**2 * SPTS**2 + a * d0 * SPTS * e + b * e, rtol=1e-12)


def test_signal_cut_closed_form():
    # x' = k (w - x p(t - T)), p = x / c.   L(s) = k x* e^{-sT} / (c (s + k p*))
    x = fn.states("x")
    p = fn.signals("p")
    k, w, c, T = fn.params("k w c T")
    m = fn.Model(
        {x: k * (w - x(t) * p(t - T))},
        {k: 0.8, w: 4.0, c: 25.0, T: 0.3},
        signals={p: x(t) / c},
    )
    xs = np.sqrt(4.0 * 25.0)
    ps = xs / 25.0
    L = m.loop_gain("p")
    ref = 0.8 * xs * np.exp(-0.3 * SPTS) / (25.0 * (SPTS + 0.8 * ps))
    np.testing.assert_allclose(L(SPTS), ref, rtol=1e-12)
    # closing the loop gives the model's own characteristic function
    lin = m.linearize()
    np.testing.assert_allclose(L.den(SPTS) + L.num(SPTS), lin.characteristic(SPTS), rtol=1e-12)


def test_delayed_signal_with_state_dependent_delay():
    # p used at t - RTT(t)/2 with RTT = d + b/c: the cut keeps the frozen delay
    w, b = fn.states("w b")
    m_, p = fn.signals("m p")
    d, c, g, N = fn.params("d c g N")
    rtt = d + b(t) / c
    model = fn.Model(
        rhs={w: 1 / rtt - p(t) * w(t) / rtt, b: N * w(t) / rtt - c},
        params={d: 0.05, c: 1000.0, g: 0.01, N: 10.0},
        signals={m_: 1 - sympy.exp(-g * b(t)), p: m_(t - rtt / 2)},
        nonnegative=[b],
    )
    eq = model.equilibrium(guess={"w": 5.0, "b": 10.0})
    L = model.loop_gain("m")
    lin = model.linearize(equilibrium=eq)
    np.testing.assert_allclose(L.den(SPTS) + L.num(SPTS), lin.characteristic(SPTS), rtol=1e-10)
    rtt_star = 0.05 + eq["b"] / 1000.0
    assert pytest.approx(rtt_star / 2, rel=1e-12) in L.num.delays


def test_unknown_cut():
    with pytest.raises(ModelError, match="cannot cut the loop at 'rate'"):
        fn.models.rcp().loop_gain("rate")


def test_too_many_delay_monomials_is_a_clear_error_not_a_hang():
    # 8 states coupled through 8 distinct delays each: the exact quasi-polynomials could hold
    # up to 10^8 delay monomials
    xs = fn.states(" ".join(f"x{i}" for i in range(8)))
    rhs = {
        xi: -xi(t) - sum(0.1 * xj(t - 0.1 * (1 + i + 8 * j)) for j, xj in enumerate(xs))
        for i, xi in enumerate(xs)
    }
    m = fn.Model(rhs, {})
    zero = {f"x{i}": 0.0 for i in range(8)}
    with pytest.raises(fn.AnalysisError, match=r"up to \d+ delay monomials.*linearize"):
        m.loop_gain("x0", equilibrium=zero)
    assert m.linearize(equilibrium=zero).n == 8  # the characteristic function remains available


def test_no_loop_gain_at_a_sliding_equilibrium():
    """Binary congestion feedback holds x1 + x2 = B by sliding: no linearization exists there."""
    x1, x2 = fn.states("x1 x2")
    mu1, mu2, B = fn.params("mu1 mu2 B")
    cg = sympy.Heaviside(x1(t) + x2(t) - B)
    m = fn.Model(
        {x1: mu1 * (1 - cg) - x1(t) * cg, x2: mu2 * (1 - cg) - x2(t) * cg},
        {mu1: 1.0, mu2: 3.0, B: 10.0},
    )
    for point in ({"x1": 2.5, "x2": 7.5}, {"x1": 2.5, "x2": 7.5 + 1e-13}):
        with pytest.raises(AnalysisError, match="switching surface"):
            m.loop_gain("x1", equilibrium=point)


def test_numerator_cancellation_residues_are_removed():
    """det(sI - A - BC) - det(sI - A) keeps real differences and drops rounding residues."""
    from fluidnet.linear.quasipoly import QuasiPolynomial
    from fluidnet.symbolic.loopgain import cancellation_free_difference

    a = QuasiPolynomial({0.0: [1.0, 3.0, 0.5], 0.2: [2.0, 1.0]})
    b = QuasiPolynomial({0.0: [1.0, 3.0 * (1 + 1e-15), 0.25], 0.2: [2.0, 1.0 - 1e-16]})
    d = cancellation_free_difference(a, b)
    assert d.terms.keys() == {0.0}
    np.testing.assert_array_equal(d.terms[0.0], [0.25])
    # the TCP/RED loop (Misra-Gong-Towsley): only the delayed marking path remains
    L = fn.models.mgt_red().loop_gain("p")
    assert len(L.num.delays) == 1 and L.num.delays[0] > 0
    assert L.num.terms[L.num.delays[0]].size == 1
