"""From fluid models to packet scenarios (fn.packet.scenario_for): units, parameters and the
stated assumptions, checked against the models' papers and closed forms (no ns-3 run)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import PI, RCP, RED, SBRM
from fluidnet.packet.mapping import fluid_view


def test_mgt_red_defaults_map_to_the_link_flows_and_red_of_the_paper():
    sc = fn.packet.scenario_for(fn.models.mgt_red())
    (flows,) = sc.flows
    assert (flows.n, flows.rtt, flows.transport.name) == (60, 0.2, "newreno")
    # 3750 packets/s of 1000 bytes with 2 bytes of PPP framing: 30.06 Mb/s on the wire
    assert sc.link.rate == pytest.approx(3750 * 8 * 1002)
    assert sc.capacity() == pytest.approx(3750.0)
    red = sc.link.aqm
    assert isinstance(red, RED) and not red.gentle and not red.ecn
    assert (red.min_th, red.max_th, red.p_max) == (50.0, 600.0, 0.1)
    # the model samples its EWMA every delta = 1/C with weight 1.33e-6 (Misra et al.): at
    # arrivals of C packets/s that is the same weight per packet
    assert red.weight == pytest.approx(1.33e-6, rel=1e-9)
    assert sc.ack_every == 1 and sc.min_rto == 1.0
    text = sc.describe()
    assert "one ACK per segment" in text and "RED p_max 0.1" in text


def test_red_weight_follows_the_averaging_pole_not_the_sampling_interval():
    # the same pole K = -ln(1 - w)/delta sampled twice as often: the per-packet weight at
    # arrivals of C packets/s is 1 - exp(-K/C)
    w, C = 0.002, 1250.0
    m = fn.models.mgt_red(C=C, weight=w, delta=0.5 / C)
    K = -math.log(1 - w) / (0.5 / C)
    red = fn.packet.scenario_for(m).link.aqm
    assert red.weight == pytest.approx(1 - math.exp(-K / C), rel=1e-12)
    assert red.weight == pytest.approx(1 - (1 - w) ** 2, rel=1e-12)


def test_red_spacing_compensation_and_gentle_red():
    m = fn.models.mgt_red(gentle=True)
    sc = fn.packet.scenario_for(m, red_spacing="compensate")
    assert sc.link.aqm.gentle
    assert sc.link.aqm.p_max == pytest.approx(0.15)
    assert "3/2" in sc.describe()
    with pytest.raises(fn.ParameterError, match="red_spacing"):
        fn.packet.scenario_for(m, red_spacing="double")


def test_reno_red_uses_zimmermanns_filter_pole():
    m = fn.models.reno_red()
    sc = fn.packet.scenario_for(m)
    v = m.values
    red = sc.link.aqm
    assert sc.capacity() == pytest.approx(v["c"])
    assert sc.flows[0].rtt == v["d"] and sc.flows[0].n == 30
    assert (red.min_th, red.max_th, red.gentle) == (v["th_min"], v["th_max"], True)
    # the filter pole alpha c (1/s) with arrivals at c packets/s: 1 - exp(-alpha) per packet
    assert red.weight == pytest.approx(-math.expm1(-v["alpha"]), rel=1e-12)
    assert not fn.packet.scenario_for(fn.models.reno_red(gentle=False)).link.aqm.gentle


def test_hollot_pi_is_discretized_to_the_papers_coefficients():
    sc = fn.packet.scenario_for(fn.models.hollot_pi())
    pi = sc.link.aqm
    assert isinstance(pi, PI) and pi.sample_rate == 160.0 and pi.q_ref == 175.0
    # Hollot, Misra, Towsley & Gong (INFOCOM 2001) print a = 1.822e-5, b = 1.816e-5
    assert pi.a == pytest.approx(1.822e-5, rel=2e-3)
    assert pi.b == pytest.approx(1.816e-5, rel=2e-3)
    assert sc.flows[0].n == 60 and sc.capacity() == pytest.approx(3750.0)


def test_sbrm_dctcp_and_rcp_scenarios():
    sb = fn.packet.scenario_for(fn.models.sbrm(), params={"N": 10})
    assert isinstance(sb.link.aqm, SBRM)
    assert (sb.link.aqm.gamma, sb.link.aqm.b0) == (0.006, 50.0)
    t = sb.flows[0].transport
    assert t.name == "sbrm" and t.ecn and t.option("w") == 20.0 and t.option("kappa") == 0.2
    assert sb.flows[0].n == 10 and sb.capacity() == pytest.approx(10000.0)

    dc = fn.packet.scenario_for(fn.models.dctcp())
    assert dc.packet_size == 1500  # the model's C = 10 Gb/s / (8 * 1500 bytes)
    assert dc.capacity() == pytest.approx(fn.models.dctcp().values["C"])
    red = dc.link.aqm
    assert (red.min_th, red.max_th, red.p_max, red.weight, red.ecn) == (40.0, 41.0, 1.0, 1.0, True)
    assert dc.flows[0].transport.option("g") == 0.0625

    rc = fn.packet.scenario_for(fn.models.rcp())
    aqm = rc.link.aqm
    assert isinstance(aqm, RCP) and (aqm.alpha, aqm.beta, aqm.interval) == (0.4, 0.2, 0.01)
    assert rc.flows[0].transport.is_rcp and rc.flows[0].rtt == 0.2


def test_params_override_and_bad_values_are_named():
    sc = fn.packet.scenario_for(fn.models.mgt_red(), params={"N": 20, "Tp": 0.3}, start=0)
    assert (sc.flows[0].n, sc.flows[0].rtt, sc.flows[0].start) == (20, 0.3, (0.0, 0.0))
    with pytest.raises(fn.ParameterError, match="N = 20.5"):
        fn.packet.scenario_for(fn.models.mgt_red(), params={"N": 20.5})
    with pytest.raises(fn.ParameterError, match="'Rtt' is not a parameter"):
        fn.packet.scenario_for(fn.models.mgt_red(), params={"Rtt": 0.1})
    with pytest.raises(fn.ModelError, match="no packet counterpart"):
        fn.packet.scenario_for(fn.models.fast_tcp())


def test_fluid_view_arrival_rate_is_the_window_over_the_rtt():
    m = fn.models.mgt_red()
    view = fluid_view(m)
    eq = m.equilibrium()
    # at the equilibrium N W / (Tp + q/C) = C (the queue is busy and steady)
    arrival = view["arrival"]({k: np.array(v) for k, v in eq.items()})
    assert float(arrival) == pytest.approx(3750.0, rel=1e-9)
    assert view["queue"] == "q" and view["rtt"] == 0.2
