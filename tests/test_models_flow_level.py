"""Flow-level formulas (fluidnet.models.flow_level) against the RCP paper and closed forms.

Expected values are the independent numbers of note 004 (§3, §5 R9-R12) or a second method
(numerical integration of the Pareto density).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from fluidnet.errors import ParameterError
from fluidnet.models.flow_level import (
    arrival_rate,
    fct_lower_bound,
    little_mean_flows,
    max_min_rates,
    offered_load,
    pareto_cdf,
    pareto_conditional_mean,
    pareto_scale,
    ps_fct,
    ps_mean_active_flows,
    ps_size_split_afct,
    rcp_flow_estimate,
    slow_start_fct,
)

C_24G = 2.4e9 / 8000  # 300 000 pkts/s
C_150M = 150e6 / 8000  # 18 750 pkts/s


def test_ps_fct_setups_1_and_2():
    # note 004 §5 R9
    assert ps_fct(2000, C=C_24G, rtpd=0.1, rho=0.9) == pytest.approx(0.21667, abs=5e-5)
    assert ps_fct(1e4, C=C_24G, rtpd=0.1, rho=0.9) == pytest.approx(0.48333, abs=5e-5)
    assert ps_fct(2000, C=C_150M, rtpd=1.6, rho=0.9) == pytest.approx(3.4667, abs=5e-4)
    assert ps_fct(6000, C=C_150M, rtpd=1.6, rho=0.9) == pytest.approx(5.6, abs=1e-9)


def test_ps_fct_broadcasts_and_bound_below():
    L = np.array([0.0, 10.0, 1000.0])
    ps = ps_fct(L, C=1000.0, rtpd=0.2, rho=0.5)
    lb = fct_lower_bound(L, C=1000.0, rtpd=0.2)
    np.testing.assert_allclose(ps, [0.3, 0.32, 2.3])
    np.testing.assert_allclose(lb, [0.3, 0.31, 1.3])
    assert ps_fct(10.0, C=1000.0, rtpd=0.2, rho=0.0) == pytest.approx(0.31)


def test_slow_start_curve():
    # note 004 §5 R9
    assert slow_start_fct(230, C=C_24G, rtpd=0.1) == pytest.approx(0.836, abs=5e-4)
    assert slow_start_fct(2000, C=C_24G, rtpd=0.1) == pytest.approx(1.153, abs=5e-4)
    assert slow_start_fct(1000, C=C_150M, rtpd=1.6) == pytest.approx(16.8, abs=5e-3)
    # equals the lower bound for a one-packet flow (log2(2) + 1/2 = 1.5)
    assert slow_start_fct(1, C=C_24G, rtpd=0.1) == pytest.approx(
        fct_lower_bound(1, C=C_24G, rtpd=0.1)
    )


def test_load_and_little():
    lam = arrival_rate(0.9, 30, C_24G)
    assert lam == pytest.approx(9000.0)
    assert offered_load(lam, 30, C_24G) == pytest.approx(0.9)
    assert little_mean_flows(2.0, 3.0) == 6.0
    # note 004 §3 derived table / R11
    assert ps_mean_active_flows(C=C_24G, rtpd=0.1, rho=0.9, mean_size=30) == pytest.approx(1359)
    assert ps_mean_active_flows(C=C_24G, rtpd=0.1, rho=0.9, mean_size=25) == pytest.approx(1629)
    assert ps_mean_active_flows(C=C_24G, rtpd=0.1, rho=0.8, mean_size=30) == pytest.approx(1204)
    assert ps_mean_active_flows(C=18750.0, rtpd=0.1, rho=0.7, mean_size=30) == pytest.approx(
        68.0, abs=0.05
    )


def test_pareto_scale_and_cdf():
    assert pareto_scale(25, 1.2) == pytest.approx(4.16667, abs=1e-5)
    assert pareto_scale(30, 1.4) == pytest.approx(8.5714, abs=1e-4)
    # x_m / 500 = (25/6) / 500 = 1/120 exactly
    assert pareto_cdf(500, shape=1.2, scale=pareto_scale(25, 1.2)) == pytest.approx(
        1 - (1 / 120) ** 1.2, rel=1e-12
    )
    assert pareto_cdf(1.0, shape=1.2, scale=2.0) == 0.0


@pytest.mark.parametrize(
    "shape,scale,lo,hi",
    [(1.2, 4.1667, 0.0, 500.0), (1.2, 5000.0, 0.0, 7000.0), (1.8, 13.33, 20.0, 400.0)],
)
def test_pareto_conditional_mean_matches_quadrature(shape, scale, lo, hi):
    def pdf(x):
        return shape * scale**shape / x ** (shape + 1)

    a = max(lo, scale)
    mass = integrate.quad(pdf, a, hi)[0]
    first = integrate.quad(lambda x: x * pdf(x), a, hi, limit=200)[0]
    got = pareto_conditional_mean(shape=shape, scale=scale, lo=lo, hi=hi)
    assert got == pytest.approx(first / mass, rel=1e-8)


def test_pareto_tail_mean_is_six_times_threshold_for_shape_1_2():
    assert pareto_conditional_mean(shape=1.2, scale=5.0, lo=7000) == pytest.approx(42000)
    assert pareto_conditional_mean(shape=1.2, scale=4.1667, lo=500) == pytest.approx(3000)
    assert pareto_conditional_mean(shape=1.2, scale=4.16667, hi=500) == pytest.approx(
        15.45, abs=0.01
    )


def test_size_split_ps_lines_figs_10_20_21_22():
    # note 004 §5 R9-R10
    f10 = dict(C=C_24G, rtpd=0.1, rho=0.8, shape=1.2)
    assert ps_size_split_afct(mean=30, lo=7000, **f10) == pytest.approx(0.85)
    assert ps_size_split_afct(mean=30000, lo=7000, **f10) == pytest.approx(0.85)
    assert ps_size_split_afct(mean=30, lo=0, hi=7000, **f10) == pytest.approx(0.1504, abs=5e-5)
    assert ps_size_split_afct(mean=30000, lo=0, hi=7000, **f10) == pytest.approx(0.248, abs=5e-4)
    f20 = dict(rtpd=0.1, rho=0.9, mean=25, shape=1.2)
    assert ps_size_split_afct(C=12500, lo=0, hi=500, **f20) == pytest.approx(0.1624, abs=5e-5)
    assert ps_size_split_afct(C=1.2e6, lo=0, hi=500, **f20) == pytest.approx(0.1501, abs=5e-5)
    assert ps_size_split_afct(C=12500, lo=500, **f20) == pytest.approx(2.55, abs=5e-3)
    assert ps_size_split_afct(C=1.2e6, lo=500, **f20) == pytest.approx(0.175, abs=5e-4)
    small = ps_size_split_afct(C=C_150M, rtpd=0.0, rho=0.9, mean=25, shape=1.2, lo=0, hi=500)
    assert small == pytest.approx(0.0082, abs=5e-5)
    big = ps_size_split_afct(C=80000, rtpd=0.0, rho=0.9, mean=25, shape=1.2, lo=500)
    assert big == pytest.approx(0.375, abs=5e-4)


def test_max_min_fig3():
    caps = {"B": 80.0, "C": 400.0}
    routes = {"A": ["C"], "B": ["B", "C"]}
    r = max_min_rates(caps, routes, {"A": 8, "B": 4})
    assert r == {"A": pytest.approx(40.0), "B": pytest.approx(20.0)}
    # without group B, group A gets the whole link
    assert max_min_rates(caps, routes, {"A": 8, "B": 0})["A"] == pytest.approx(50.0)
    # C/R = N1 + theta N2 with theta = R2/R
    assert rcp_flow_estimate(400.0, r["A"]) == pytest.approx(8 + (20 / 40) * 4)


def test_max_min_classic_line_network():
    # two links of capacity 1: a long flow over both, one short flow on each: all get 1/2;
    # with capacities 1 and 2 the second short flow gets 3/2.
    r = max_min_rates({"l1": 1, "l2": 2}, {"long": ["l1", "l2"], "s1": ["l1"], "s2": ["l2"]})
    assert r == {"long": pytest.approx(0.5), "s1": pytest.approx(0.5), "s2": pytest.approx(1.5)}


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: ps_fct(10, C=100, rtpd=0.1, rho=1.0), "rho"),
        (lambda: ps_fct(10, C=100, rtpd=0.1, rho=-0.1), "rho"),
        (lambda: ps_fct(-1, C=100, rtpd=0.1, rho=0.5), "flow size L"),
        (lambda: ps_fct(10, C=0, rtpd=0.1, rho=0.5), "capacity C"),
        (lambda: fct_lower_bound(10, C=100, rtpd=math.nan), "rtpd"),
        (lambda: slow_start_fct(10, C=-5, rtpd=0.1), "capacity C"),
        (lambda: pareto_scale(25, 1.0), "shape"),
        (lambda: pareto_conditional_mean(shape=1.2, scale=5, lo=10, hi=10), "empty"),
        (lambda: pareto_conditional_mean(shape=1.2, scale=5, lo=0, hi=4), "zero probability"),
        (lambda: max_min_rates({"a": 0}, {"g": ["a"]}), "capacity of link 'a'"),
        (lambda: max_min_rates({"a": 1}, {"g": ["b"]}), "unknown link 'b'"),
        (lambda: max_min_rates({"a": 1}, {"g": []}), "uses no link"),
        (lambda: max_min_rates({"a": 1}, {"g": ["a"]}, {"g": -1}), "group 'g'"),
        (lambda: max_min_rates({"a": 1}, {"g": ["a"]}, {"h": 1}), "without a route"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
