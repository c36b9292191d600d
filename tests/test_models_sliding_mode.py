"""The binary-feedback law family of Ye et al. (fluidnet.models.sliding_mode): closed forms,
symbolic identities, the sliding equilibrium, the discrete-time law and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.models import (
    RATE,
    BinaryFeedbackNetwork,
    FlowLaw,
    approximate_law,
    approximate_utility,
    binary_feedback,
    continuity_constant,
    mrg_law,
    reverse_engineer,
    single_link_network,
    tcp_law,
    tcp_utility,
    topology_one_network,
)

x = RATE


def test_module_is_not_shadowed():
    import fluidnet.models.sliding_mode as mod

    assert mod.__name__ == "fluidnet.models.sliding_mode"


def test_reverse_engineering_of_aimd_is_eq12_13():
    mu, be = sympy.symbols("mu beta", positive=True)
    r = reverse_engineer(mu, be * x)
    assert sympy.simplify(r.z - (mu + be * x)) == 0
    assert sympy.simplify(r.f - mu / (mu + be * x)) == 0
    U12 = (mu / be + x) * (sympy.log(mu + be * x) - 1) - x * (sympy.log(be * x) - 1)
    assert sympy.simplify(U12.diff(x) - r.marginal_utility) == 0
    # (4): f = 1 - exp(-U')
    assert sympy.simplify(r.f - (1 - sympy.exp(-r.marginal_utility))) == 0


def test_tcp_utility_is_continuous_with_the_printed_constant():
    U = tcp_utility(0.1, 0.5, 1.0, 1.0)
    below = float(U.args[0][0].subs(x, 1.0))
    above = float(U.args[1][0].subs(x, 1.0))
    assert below == pytest.approx(math.log(3), abs=1e-14)
    assert above == pytest.approx(below, abs=1e-12)
    # (14) by hand: C = log(1.5/0.6) - 0.2 log 0.6 + 0.2
    C = math.log(1.5 / 0.6) - 0.2 * math.log(0.6) + 0.2
    assert float(continuity_constant(0.1, 0.5, 1.0, 1.0)) == pytest.approx(C, abs=1e-14)


def test_approximate_utility_slope():
    mu, xs = sympy.symbols("mu x_s", positive=True)
    d = approximate_utility(mu, xs).diff(x)
    assert sympy.simplify(sympy.exp(d) - (1 + mu / (x - xs))) == 0


def test_mrg_law_increase_is_eq22():
    law = mrg_law(0.1, 5.0, 2.0, x_s=1.0)
    a, _ = law.numeric()
    # slow start: (3 r - 1) x / 2 = 2.5 x; CA below theta: (r - 1) x / 2 + mu r; above: mu
    assert a(0.5) == pytest.approx(2.5 * 0.5, abs=1e-14)
    assert a(3.0) == pytest.approx(0.5 * 3.0 + 0.2, abs=1e-14)
    assert a(6.0) == pytest.approx(0.1, abs=1e-14)
    # r_max = 1 is the TCP law
    a1, d1 = mrg_law(0.1, 5.0, 1.0, x_s=1.0).numeric()
    a2, d2 = tcp_law(0.1, x_s=1.0).numeric()
    for v in (0.3, 2.0, 7.0):
        assert a1(v) == pytest.approx(a2(v)) and d1(v) == pytest.approx(d2(v))


def test_single_link_sliding_equilibrium_closed_form():
    """Rates proportional to mu, duty fraction p = sum mu / (sum mu + beta B), exactly."""
    mus = (0.6, 0.3, 0.1)
    net = single_link_network([tcp_law(m) for m in mus], 10.0)
    sol = fn.simulate(net.model(), 600.0, history={"x_1": 1.0, "x_2": 1.0, "x_3": 1.0})
    np.testing.assert_allclose(sol(600.0), [6.0, 3.0, 1.0], atol=1e-6)
    late = fn.simulate(net.model(), 700.0, history=sol)
    p = sum(mus) / (sum(mus) + 0.5 * 10.0)
    assert late.counters.mean_sliding_weight["-B_1 + x_1 + x_2 + x_3"] == pytest.approx(p, abs=1e-9)
    # the sliding motion as a smooth model: same equilibrium, and its signal p
    sm = net.sliding_model()
    eq = sm.equilibrium(guess={"x_1": 5.0, "x_2": 4.0})
    assert eq["x_1"] == pytest.approx(6.0, abs=1e-9) and eq["x_2"] == pytest.approx(3.0, abs=1e-9)


def test_sliding_motion_linearization_two_flows_by_hand():
    """Two AIMD flows: x1' = mu1 - (mu1 + b x1) p, p = (mu1 + mu2)/(mu1 + mu2 + b B):
    d x1'/d x1 = -b p - (mu1 + b x1) dp/dx1 with dp/dx1 = 0 (sum x = B): -b p."""
    net = single_link_network([tcp_law(0.6), tcp_law(0.2)], 10.0)
    sm = net.sliding_model()
    lin = sm.linearize(equilibrium={"x_1": 7.5})
    p = 0.8 / (0.8 + 5.0)
    assert lin.A0[0, 0] == pytest.approx(-0.5 * p, rel=1e-12)


def test_switching_model_has_no_linearization_at_the_sliding_equilibrium():
    m = single_link_network([tcp_law(0.6), tcp_law(0.2)], 10.0).model()
    for point in ({"x_1": 7.5, "x_2": 2.5}, {"x_1": 7.5, "x_2": 2.5 + 1e-14}):
        with pytest.raises(fn.AnalysisError, match="not differentiable"):
            m.linearize(equilibrium=point)
    with pytest.raises(fn.AnalysisError):
        m.equilibrium()  # no root of either one-sided field


def test_smooth_marking_approaches_the_sliding_equilibrium():
    """Logistic marking p(y): every flow has f(x_i) = p, so x_i = mu_i (1 - p)/(beta p) and the
    load solves sum x_i = B (1 + width logit p)."""
    from scipy.optimize import brentq

    net = single_link_network([tcp_law(0.6), tcp_law(0.2)], 10.0)
    for w in (1e-2, 1e-3):
        p = brentq(lambda q, w=w: 0.8 * (1 - q) / (0.5 * q) - 10 * (1 + w * math.log(q / (1 - q))),
                   1e-9, 1 - 1e-9, xtol=1e-15)  # fmt: skip
        ref = {"x_1": 0.6 * (1 - p) / (0.5 * p), "x_2": 0.2 * (1 - p) / (0.5 * p)}
        e = net.model(marking="smooth", width=w).equilibrium(guess=ref)
        assert e == pytest.approx(ref, rel=1e-9)
        assert abs(sum(e.values()) - 10.0) < 20 * w  # the load tends to B as the width -> 0


def test_topology_one_product_form_gives_eq16():
    m = topology_one_network("I").model()
    sol = fn.simulate(m, 4000.0, history={"x_1": 10.0, "x_2": 10.0, "x_3": 10.0, "x_4": 5.0})
    v = sol(4000.0)
    # (16) solved independently: brentq on the printed condition, Case I
    from scipy.optimize import brentq

    mu, mu4, b, B = 8e-3 / 0.03, 8e-3 / 0.05, 0.5, 100.0
    x4 = brentq(lambda y: ((mu / b + B - y) / (B - y)) ** 3 - (mu4 / b + y) / y, 1e-6, 99.0)
    assert v[3] == pytest.approx(x4, abs=1e-5)


def test_discrete_law_is_seeded_and_reproducible():
    net = topology_one_network("I")
    a = net.discrete(200.0, 0.05, [10, 10, 10, 5], marking="random", seed=3)
    b = net.discrete(200.0, 0.05, [10, 10, 10, 5], marking="random", seed=3)
    c = net.discrete(200.0, 0.05, [10, 10, 10, 5], marking="random", seed=4)
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.array_equal(a.x, c.x)
    # synchronized random marking: path congested exactly when each link is (one draw)
    s = net.discrete(200.0, 0.05, [10, 10, 10, 5], marking="random", correlation="synchronized")
    assert s.path_fraction[3] == pytest.approx(s.marking_fraction.max(), abs=1e-12)


def test_discrete_single_flow_sawtooth_closed_form():
    """Two AIMD flows, dt = 1: each grows by mu per step until the load reaches B, then both
    halve (beta = 1/2)."""
    net = single_link_network([tcp_law(1.0), tcp_law(1.0)], 10.0)
    run = net.discrete(4.0, 1.0, [3.0, 4.0], record_every=1)
    # y = 7 -> 9 -> 11 (>= B: both halve) -> 5.5/2... step by step
    np.testing.assert_allclose(run.x[:, 1], [4.0, 5.0])
    np.testing.assert_allclose(run.x[:, 2], [5.0, 6.0])
    np.testing.assert_allclose(run.x[:, 3], [2.5, 3.0])
    np.testing.assert_allclose(run.x[:, 4], [3.5, 4.0])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tcp_law(0.0), "mu must be positive"),
        (lambda: tcp_law(1.0, beta=1.5), r"beta must be in \(0, 1\]"),
        (lambda: tcp_law(1.0, x_s=-1.0), "x_s must be finite and >= 0"),
        (lambda: mrg_law(1.0, 5.0, 0.5), "r_max must be >= 1"),
        (lambda: mrg_law(1.0, -5.0, 2.0), "theta must be finite"),
        (lambda: approximate_law(1.0, math.nan), "x_s must be finite"),
        (lambda: topology_one_network("IV"), "case must be one of"),
        (lambda: topology_one_network("I", approximate=(4,)), "need a threshold x_s"),
        (lambda: single_link_network([tcp_law(1.0)], -2.0), r"capacities\[0\] must be positive"),
    ],
)
def test_bad_parameters_are_named(call, match):
    with pytest.raises(fn.ParameterError, match=match):
        call()


def test_bad_options_and_models():
    net = single_link_network([tcp_law(1.0), tcp_law(0.5)], 10.0)
    with pytest.raises(fn.OptionError, match="marking must be one of"):
        net.model(marking="red")
    with pytest.raises(fn.OptionError, match="needs marking='smooth'"):
        net.model(correlation="synchronized")
    with pytest.raises(fn.OptionError, match="'deterministic' or 'random'"):
        net.discrete(10.0, 0.1, [1, 1], marking="binary")
    with pytest.raises(fn.ParameterError, match="x0 must be >= 0"):
        net.discrete(10.0, 0.1, [1, -1])
    with pytest.raises(fn.ParameterError, match="dt must be positive"):
        net.discrete(10.0, 0.0, [1, 1])
    with pytest.raises(fn.ModelError, match="FlowLaw objects, one per flow"):
        BinaryFeedbackNetwork([[1, 1]], 10.0, [tcp_law(1.0)])
    with pytest.raises(fn.ModelError, match="neither the rate x nor a parameter"):
        FlowLaw(sympy.Symbol("k") * x, x, {}, name="bad")
    with pytest.raises(fn.ModelError, match="one link shared"):
        topology_one_network("I").sliding_model()


def test_binary_feedback_shorthand_and_rtt_time_keep_the_equilibrium():
    laws = [tcp_law(0.6), tcp_law(0.2)]
    m = binary_feedback([[1, 1]], 10.0, laws, rtt=[0.01, 0.05])
    assert set(m.param_names) >= {"T_1", "T_2"}
    sol = fn.simulate(m, 400.0, history={"x_1": 1.0, "x_2": 1.0})
    np.testing.assert_allclose(sol(400.0), [7.5, 2.5], atol=1e-5)


def test_discrete_map_steps_the_sawtooth():
    """The law as a DiscreteMap, iterated directly: two AIMD flows (mu = 1, beta = 1/2) on
    B = 10 from (3, 4) with h = 1 grow by 1 per step while y < B and halve once y >= B; the
    marks and path indicators are the signals m_1, cg_1, cg_2."""
    net = single_link_network([tcp_law(1.0), tcp_law(1.0)], 10.0)
    dmap = net.discrete_map()
    assert dmap.states == ("x_1", "x_2")
    assert {"y_1", "m_1", "cg_1", "cg_2"} <= set(dmap.signal_names)
    run = fn.iterate_map(dmap, [3.0, 4.0], 5, average=1.0)
    # y: 7, 9, 11 (>= B: both halve), 5.5, 7.5
    expected = [[3, 4, 5, 2.5, 3.5, 4.5], [4, 5, 6, 3, 4, 5]]
    np.testing.assert_array_equal(run.x, expected)
    m = dmap.signal_names.index("m_1")
    assert run.mean_signals[m] == pytest.approx(1 / 5)
