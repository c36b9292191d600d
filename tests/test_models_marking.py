"""Marking levels (27)/(39) and the adaptive marking level (Sec V-D), Kunniyur & Srikant (2003)."""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models import (
    UserNetwork,
    adaptive_marking,
    log_utility,
    marking_level,
    power_utility,
    utility_primal,
)

EXP3 = dict(
    A=[[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 1, 1]],
    utilities=[log_utility(), power_utility(1)] * 3,
    N=50,
)


def test_single_link_levels_are_the_closed_forms_and_tight():
    # N log users: C~ <= C - N/beta;  N users with nu = 1: C - C~ >= N^2/(beta C)
    for u, closed in ((log_utility(), 100 - 10 / 0.5), (power_utility(1), 100 - 100 / 50)):
        net = UserNetwork([[1]], u, C=100.0, N=10)
        level = marking_level(net, 0.5)
        assert level == pytest.approx([closed], rel=1e-12)
        eq = utility_primal(net, beta=0.5, feedback="ecn", levels=level).equilibrium()
        assert 10 * eq["x_1"] == pytest.approx(100.0, rel=1e-10)  # (27) is tight here


def test_prop3_on_a_network_is_loss_free():
    net = UserNetwork(**EXP3, C=[7812.5, 3906.25])
    levels = marking_level(net, 0.5)
    assert np.all(levels < net.C)
    m = utility_primal(net, beta=0.5, feedback="ecn", levels=levels)
    eq = m.equilibrium(guess={f"x_{i + 1}": v for i, v in enumerate([28, 5, 110, 10, 38, 6])})
    x = np.array([eq[f"x_{i + 1}"] for i in range(6)])
    assert np.all(net.loads(x) <= net.C * (1 + 1e-12))


def test_disturbance_levels_and_infeasible_units():
    net = UserNetwork([[1]], log_utility(), C=100.0, N=10, w=0.5)
    # Prop 4 reconstructed: C~ + sum w/(beta beta_i) <= C - xi^
    lv = marking_level(net, 0.5, disturbance=10.0, kind="bound")
    assert lv == pytest.approx([100 - 10 - 10], rel=1e-12)
    # Prop 5: sum w/(beta beta_i) C/(C - C~) <= C - xi, tight for (38) with the mean xi
    lv = marking_level(net, 0.5, disturbance=10.0)
    assert lv == pytest.approx([100 - 10 * 100 / 90], rel=1e-12)
    m = utility_primal(net, beta=0.5, feedback="ecn", levels=lv, disturbance=10.0)
    assert 10 * m.equilibrium()["x_1"] == pytest.approx(90.0, rel=1e-10)
    with pytest.raises(fn.ParameterError, match="log users only"):
        marking_level(
            UserNetwork([[1]], power_utility(1), C=10.0), 0.5, disturbance=1.0, kind="bound"
        )
    with pytest.raises(fn.OptionError, match="kind"):
        marking_level(net, 0.5, kind="peak")
    exp3 = UserNetwork(**EXP3, C=[156.25, 78.125], rate_unit="pkts/(0.02 s)")
    with pytest.raises(fn.ParameterError, match=r"link 1.*beta = 0.5.*pkts/\(0.02 s\)"):
        marking_level(exp3, 0.5)
    with pytest.raises(fn.ParameterError, match="no feasible marking level"):
        adaptive_marking(exp3)
    with pytest.raises(fn.ParameterError, match="disturbance"):
        marking_level(net, 0.5, disturbance=100.0)
    with pytest.raises(fn.ParameterError, match="gamma"):
        adaptive_marking(net, gamma=1.5)


@pytest.fixture(scope="module")
def single_link():
    net = UserNetwork([[1]], log_utility(), C=100.0, N=10)
    return adaptive_marking(net, beta=0.5, eta=0.5, gamma=1.0)


def test_adaptive_level_slides_on_gamma_c_and_converges(single_link):
    # low load: C~ rises to gamma C = 100 and is held there (Filippov sliding) until the load
    # exceeds 100, then converges to the Prop 3 level C - N/beta = 80
    sol = fn.simulate(single_link, 200.0, history={"x_1": 1.0, "Ct_1": 99.0}, rtol=1e-8)
    ct = sol["Ct_1"]
    assert ct.max() <= 100.0 + 1e-9
    held = sol.t[np.abs(ct - 100.0) < 1e-9]
    assert held.size > 2 and held.max() - held.min() > 1.0
    assert sol.counters.sliding_entries >= 1
    assert sol(200.0)[1] == pytest.approx(80.0, abs=1e-3)
    assert sol(200.0)[0] == pytest.approx(10.0, abs=1e-4)


def test_adaptive_level_is_projected_at_zero(single_link):
    sol = fn.simulate(single_link, 200.0, history={"x_1": 30.0, "Ct_1": 5.0}, rtol=1e-8)
    assert sol["Ct_1"].min() == 0.0
    assert sol.counters.time_on_boundary["Ct_1"] > 0.1
    assert sol(200.0)[1] == pytest.approx(80.0, abs=1e-3)
