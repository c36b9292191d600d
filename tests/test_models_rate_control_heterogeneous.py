"""RCP extensions (fluidnet.models.rate_control): heterogeneous RTTs, flow schedules, eq (8).

Expected values are closed forms derived by hand from seed 004's eqs (4)-(9) (note 004 §2.4-2.6).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import ParameterError
from fluidnet.models.rate_control import (
    flow_schedule,
    rcp,
    rcp_flow_schedule,
    rcp_heterogeneous,
    rcp_linearized,
)


def g_closed_form(w, alpha, beta, d0, rtts, counts):
    """(alpha s d0 + beta)/(s d0)^2 * sum_i (N_i/N) exp(-s d_i) at s = j w."""
    s = 1j * np.asarray(w)
    n = sum(counts)
    mix = sum(c / n * np.exp(-s * d) for c, d in zip(counts, rtts, strict=True))
    return (alpha * s * d0 + beta) / (s * d0) ** 2 * mix


def test_lazy_export():
    assert fn.models.rcp_heterogeneous is rcp_heterogeneous


def test_equilibrium_and_default_average_rtt():
    rtts, counts = (0.05, 0.2, 0.4), (3.0, 1.0, 6.0)
    m = rcp_heterogeneous(rtts, counts)
    v = m.resolve_params()
    assert v["d0"] == pytest.approx((3 * 0.05 + 0.2 + 6 * 0.4) / 10)
    eq = m.equilibrium()
    assert eq["R"] == pytest.approx(v["C"] / 10)
    assert eq["q"] == 0.0


def test_loop_gain_closed_form():
    rtts, counts = (0.05, 0.2, 0.4), (3.0, 1.0, 6.0)
    m = rcp_heterogeneous(rtts, counts, alpha=0.5, beta=0.3, d0=0.25)
    w = np.logspace(-1, 2, 25)
    got = m.loop_gain("R").freqresp(w)
    want = g_closed_form(w, 0.5, 0.3, 0.25, rtts, counts)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_one_group_is_the_paper_model():
    m1 = rcp_heterogeneous([0.2], [10.0])
    m0 = rcp()
    w = np.logspace(-1, 2, 15)
    np.testing.assert_allclose(
        m1.loop_gain("R").freqresp(w), g_closed_form(w, 0.4, 0.2, 0.2, [0.2], [10]), rtol=1e-12
    )
    assert m1.equilibrium() == pytest.approx(m0.equilibrium())
    lin0, lin1 = m0.linearize(), m1.linearize()
    assert lin1.delays == lin0.delays
    np.testing.assert_allclose(lin1.A0, lin0.A0)
    np.testing.assert_allclose(lin1.A[0], lin0.A[0])


def test_param_overrides_and_names():
    m = rcp_heterogeneous([0.1, 0.3], [1, 2], d_2=0.5, N_1=4)
    v = m.resolve_params()
    assert v["d_2"] == 0.5 and v["N_1"] == 4.0 and v["N_2"] == 2.0
    assert set(m.param_names) == {"alpha", "beta", "C", "T", "d_1", "d_2", "N_1", "N_2", "d0"}


def test_time_varying_population():
    m = rcp_heterogeneous([0.1, 0.3], flows=[[1, 1], [2, 2], [1, 1]], times=[40, 100])
    assert m.resolve_params()["d0"] == pytest.approx(0.2)
    rhs_q = m.rhs["q"]
    R = m.state("R")
    tsym = fn.t
    for tt, n in ((10.0, 1.0), (50.0, 2.0), (150.0, 1.0)):
        e = rhs_q.subs(tsym, tt)
        coeffs = [e.coeff(a) for a in sorted(e.atoms(sympy.core.function.AppliedUndef), key=str)]
        assert all(float(c) == n for c in coeffs)
        assert {a.func for a in e.atoms(sympy.core.function.AppliedUndef)} == {R}


def test_flow_schedule_values():
    N = flow_schedule([5, 10, 5], [40, 100])
    vals = [float(N.subs(fn.t, x)) for x in (0.0, 39.9, 40.0, 99.9, 100.0, 1e4)]
    assert vals == [5.0, 5.0, 10.0, 10.0, 5.0, 5.0]
    assert float(flow_schedule([3], []).subs(fn.t, 7.0)) == 3.0


def test_flow_schedule_model_matches_rcp_between_switches():
    m = rcp_flow_schedule([5, 10, 5], [40, 100])
    for tt, n in ((10.0, 5.0), (60.0, 10.0), (130.0, 5.0)):
        a = m.rhs["R"].subs(sympy.Heaviside(fn.t - 40.0, 1), 1.0 if tt >= 40 else 0.0)
        a = a.subs(sympy.Heaviside(fn.t - 100.0, 1), 1.0 if tt >= 100 else 0.0)
        b = rcp().rhs["R"].subs(sympy.Symbol("N", real=True), n)
        assert sympy.simplify(a - b) == 0
    assert set(m.param_names) == {"alpha", "beta", "C", "d0", "T"}


def test_linearized_model_is_eq_8():
    m = rcp_linearized(alpha=0.7, beta=0.3)
    lin = m.linearize()
    v = m.resolve_params()
    d0, N = v["d0"], v["N"]
    np.testing.assert_allclose(lin.A0, [[0.0, -0.3 / (N * d0**2)], [0.0, 0.0]])
    assert lin.delays == (d0,)
    np.testing.assert_allclose(lin.A[0], [[-0.7 / d0, 0.0], [N, 0.0]])
    # the same linear system as the nonlinear model's linearization
    full = rcp(alpha=0.7, beta=0.3).linearize()
    np.testing.assert_allclose(full.A0, lin.A0, atol=1e-12)
    np.testing.assert_allclose(full.A[0], lin.A[0])


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: rcp_heterogeneous([]), "at least one RTT"),
        (lambda: rcp_heterogeneous([0.1, -0.2]), "d_2"),
        (lambda: rcp_heterogeneous([0.1, float("nan")]), "d_2"),
        (lambda: rcp_heterogeneous([0.1, 0.2], [1, 2, 3]), "3 flow counts for 2"),
        (lambda: rcp_heterogeneous([0.1, 0.2], [1, -2]), "-2"),
        (lambda: rcp_heterogeneous([0.1], 0.0), "at least one flow"),
        (lambda: rcp_heterogeneous([0.1], 2.0, times=[1.0]), "one entry per interval"),
        (lambda: rcp_heterogeneous([0.1], [1, 2], times=[1.0, 2.0]), "needs 3 entries"),
        (lambda: rcp_heterogeneous([0.1], alpha=-1.0), "alpha"),
        (lambda: flow_schedule([1, 2], []), "len\\(times\\) \\+ 1"),
        (lambda: flow_schedule([1, 2, 3], [5, 5]), "increase"),
        (lambda: flow_schedule([1, -2], [5]), "-2"),
        (lambda: rcp_flow_schedule(N=3), "unknown parameter 'N'"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
