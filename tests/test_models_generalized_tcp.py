"""Generalized TCP models (Misra, Baras & Ott 2000) against closed forms and each other."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet import ParameterError

B = 1e6 / 8  # bytes/s per Mb/s
M = 512.0


def fixed_point(C, R, RTT, **law):
    kw = dict(alpha=-1.0, beta=1.0, c1=1.0, c2=0.5, min_th=20 * M, max_th=100 * M, p_max=0.01)
    kw.update(law)
    return fn.models.assured_service_fixed_point(
        C=C * B, R=[r * B for r in R], RTT=RTT, M=[M] * len(R), **kw
    )


def test_ored_marking_profile():
    q = sympy.Symbol("q")
    f = fn.models.ored_marking(q, 20, 100, 0.1)
    values = [float(f.subs(q, x)) for x in (0, 20, 60, 100, 500)]
    assert values == pytest.approx([0.0, 0.0, 0.05, 0.1, 0.1], abs=1e-15)


def test_fixed_point_solves_eqs_8_and_9():
    fp = fixed_point(6.0, [1.5, 1.5], [0.02, 0.1])
    C = 6.0 * B
    assert fp.throughputs.sum() == pytest.approx(C, rel=1e-12)  # eq (9)
    T = np.array([0.02, 0.1]) + fp.queue / C
    gamma = 1 - 1.5 * B * T / (fp.windows * M)  # eq (7), corrected
    f = 0.01 * (fp.queue - 20 * M) / (80 * M)
    p = gamma * f
    np.testing.assert_allclose(fp.marking, p, rtol=1e-12)
    # eq (4): c1 W^alpha (1 - p) = c2 W^beta p
    np.testing.assert_allclose((1 - p) / fp.windows, 0.5 * fp.windows * p, rtol=1e-10)
    # Sec III-C values (4 significant digits): Q* = 34.73 pkts, W = (41.90, 62.63)
    assert fp.queue / M == pytest.approx(34.73, abs=5e-3)
    np.testing.assert_allclose(fp.windows, [41.90, 62.63], atol=5e-3)


def test_equal_rtt_saimd_sharing_law():
    # small p: rho (rho - R) = const with equal RTTs -> rho2/rho1 = (C - R1)/(C - R2)
    for C in (5.0, 8.0, 12.0):
        fp = fixed_point(C, [1.5, 3.0], [0.05, 0.05])
        assert fp.throughputs[1] / fp.throughputs[0] == pytest.approx(
            (C - 1.5) / (C - 3.0), abs=1e-3
        )


def test_fixed_point_errors():
    with pytest.raises(ParameterError, match="must exceed the sum of assured rates"):
        fixed_point(4.5, [1.5, 3.0], [0.02, 0.02])
    with pytest.raises(ParameterError, match="alpha = 1 must be < beta = 1"):
        fixed_point(6.0, [1.5, 1.5], [0.02, 0.1], alpha=1.0)
    with pytest.raises(ParameterError, match="one entry per flow"):
        fn.models.assured_service_fixed_point(
            C=6 * B,
            R=[B, B],
            RTT=[0.1],
            M=[M, M],
            alpha=-1,
            beta=1,
            c1=1,
            c2=0.5,
            min_th=1e4,
            max_th=5e4,
            p_max=0.01,
        )
    with pytest.raises(ParameterError, match="min_th"):
        fixed_point(6.0, [1.5, 1.5], [0.02, 0.1], min_th=100 * M, max_th=20 * M)
    with pytest.raises(ParameterError, match="p_max"):
        fixed_point(6.0, [1.5, 1.5], [0.02, 0.1], p_max=0.0)


def test_multiflow_dde_equilibrium_is_the_fixed_point():
    m = fn.models.assured_service(2)
    fp = fixed_point(6.0, [1.5, 1.5], [0.02, 0.1])
    eq = m.equilibrium(guess={"W1": 40.0, "W2": 60.0, "Q": 30 * M})
    assert [eq["W1"], eq["W2"], eq["Q"]] == pytest.approx([*fp.windows, fp.queue], rel=1e-9)
    assert m.nonnegative == ("Q",)
    assert m.params["C"].unit == "bytes/s"
    three = fn.models.assured_service(3)
    assert three.state_names == ("W1", "W2", "W3", "Q")


def test_pipe_dde_linearization_and_hopf_closed_form():
    m = fn.models.generalized_tcp_pipe()
    We = m.equilibrium(guess={"W": 30.0})["W"]
    chain = fn.models.generalized_tcp_chain()
    assert We == pytest.approx(chain.zero_drift(), rel=1e-12)
    lin = m.linearize()
    # u' = a u + b u(t - tau), tau = W/C; a, b from differentiating the drift by hand
    C = m.values["C"]
    p = 0.75 * 0.02 * (We - 20.0) / 80.0
    dp = 0.75 * 0.02 / 80.0
    a = C * (-(We**-2) * (1 - p) - 0.5 * p)
    b = -C * (1 / We + 0.5 * We) * dp
    assert lin.delays[0] == pytest.approx(We / C, rel=1e-12)
    assert lin.A0[0, 0] == pytest.approx(a, rel=1e-10)
    assert lin.A[0][0, 0] == pytest.approx(b, rel=1e-10)
    # rightmost root by Lambert W equals the spectral abscissa
    from scipy.special import lambertw

    tau = We / C
    lam = a + lambertw(b * tau * math.exp(-a * tau), 0).real / tau
    assert lin.spectral_abscissa() == pytest.approx(lam, rel=1e-8)


def test_pipe_hopf_bdp():
    from scipy.special import lambertw

    def abscissa(bdp):
        def p(W):
            return 0.015 * min(max((W - bdp - 15) / 80, 0), 1)

        We = brentq(lambda W: (1 - p(W)) / W - 0.5 * W * p(W), bdp + 15 + 1e-9, bdp + 95)
        a_tau = We * (-(We**-2) * (1 - p(We)) - 0.5 * p(We))
        b_tau = -We * (1 / We + 0.5 * We) * 0.015 / 80
        return (a_tau + lambertw(b_tau * math.exp(-a_tau), 0)).real

    closed = brentq(abscissa, 100, 130, xtol=1e-12)
    cv = fn.critical_value(fn.models.generalized_tcp_pipe(), "bdp", 100.0, 130.0)
    assert cv.value == pytest.approx(closed, rel=1e-8)
    assert round(closed) == 114
