"""Scenarios, AQMs and transports of the packet stage: validation and plans (no ns-3 run)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import (
    PI,
    RCP,
    RED,
    SBRM,
    CoDel,
    Dumbbell,
    Flows,
    Link,
    ParkingLot,
    ShortFlows,
    Transport,
)


def red_dumbbell(**kw):
    link = Link.from_packets(3750, 1000, buffer=1200, aqm=RED(min_th=50, max_th=600))
    return Dumbbell(link=link, flows=[Flows(n=60, rtt=0.2)], **kw)


# ------------------------------------------------------------------------- refused values
@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"rate": 0.0}, "Link.rate"),
        ({"rate": -1e6}, "Link.rate"),
        ({"rate": 1e6, "buffer": 0}, "Link.buffer"),
        ({"rate": 1e6, "buffer": 10.5}, "Link.buffer"),
        ({"rate": 1e6, "delay": -0.1}, "Link.delay"),
        ({"rate": 1e6, "aqm": "blue"}, "Link.aqm"),
        ({"rate": 1e6, "aqm": 3}, "Link.aqm"),
        ({"rate": float("nan")}, "Link.rate"),
    ],
)
def test_a_link_ns3_cannot_run_is_an_error_naming_the_field(kwargs, field):
    with pytest.raises(fn.ParameterError, match=field.replace(".", r"\.")):
        Link(**kwargs)


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: RED(min_th=50, max_th=50), "RED.max_th"),
        (lambda: RED(p_max=0.0), "RED.p_max"),
        (lambda: RED(p_max=1.5), "RED.p_max"),
        (lambda: RED(weight=0.0), "RED.weight"),
        (lambda: RED(gentle="yes"), "RED.gentle"),
        (lambda: PI(sample_rate=0), "PI.sample_rate"),
        (lambda: SBRM(gamma=0), "SBRM.gamma"),
        (lambda: RCP(interval=0), "RCP.interval"),
        (lambda: CoDel(target=-1), "CoDel.target"),
        (lambda: Flows(n=0), "Flows.n"),
        (lambda: Flows(rtt=0), "Flows.rtt"),
        (lambda: Flows(start=(2.0, 1.0)), "Flows.start"),
        (lambda: Flows(transport="tahoe"), "transport"),
        (lambda: Transport("vegas", g=0.1), "option 'g'"),
        (lambda: Transport("dctcp", g=2.0), "g"),
        (lambda: ShortFlows(mean_size=10), "exactly one of"),
        (lambda: ShortFlows(load=1.2), "ShortFlows.load"),
        (lambda: ShortFlows(load=0.5, shape=1.0), "ShortFlows.shape"),
    ],
)
def test_bad_aqm_flow_and_transport_values_name_the_field(make, field):
    with pytest.raises(fn.ParameterError, match=field.replace(".", r"\.")):
        make()


def test_scenario_level_checks():
    link = Link(10e6, delay=0.05)
    with pytest.raises(fn.ParameterError, match=r"flows\[0\]\.rtt"):
        Dumbbell(link=link, flows=[Flows(rtt=0.08)])  # < 2 x 0.05
    with pytest.raises(fn.ParameterError, match="empty"):
        Dumbbell(link=link, flows=[])
    with pytest.raises(fn.ParameterError, match="RCP router"):
        Dumbbell(link=Link(10e6), flows=[Flows(transport="rcp")])
    with pytest.raises(fn.ParameterError, match="only transport='rcp'"):
        Dumbbell(link=Link(10e6, aqm=RCP()), flows=[Flows()])
    with pytest.raises(fn.ParameterError, match="without ECN"):
        Dumbbell(link=Link(10e6, aqm=SBRM()), flows=[Flows(transport="newreno")])
    with pytest.raises(fn.ParameterError, match="Scenario.ack_every"):
        Dumbbell(link=link, flows=[Flows(rtt=0.2)], ack_every=0)


def test_parking_lot_routes_follow_the_routing_matrix_of_the_fluid_networks():
    links = [Link(10e6, 0.005), Link(10e6, 0.01), Link(10e6, 0.005)]
    A = [[1, 0, 1], [1, 1, 1], [0, 1, 1]]
    lot = ParkingLot(links=links, routing=A, flows=[Flows(rtt=0.1)] * 3)
    assert lot.routes() == [(0, 1), (1, 2), (0, 2)]
    np.testing.assert_array_equal(lot.routing_matrix, A)
    plan = lot.plan(1.0, 0)
    # access delays make up the round trip: rtt/2 = 2 access + route's one-way delay
    np.testing.assert_allclose(
        [g["access_delay"] for g in plan["groups"]],
        [(0.05 - 0.015) / 2, (0.05 - 0.015) / 2, (0.05 - 0.02) / 2],
    )
    with pytest.raises(fn.ParameterError, match="consecutive"):
        ParkingLot(links=links, routing=[[1, 0], [0, 1], [1, 0]], flows=[Flows(rtt=0.1)] * 2)
    with pytest.raises(fn.ParameterError, match="shape"):
        ParkingLot(links=links, routing=[[1, 1], [1, 1], [1, 1]], flows=[Flows(rtt=0.1)])
    with pytest.raises(fn.ParameterError, match=r"ParkingLot\.routing.*no source"):
        ParkingLot(links=links, routing=[[1], [0], [0]], flows=[Flows(rtt=0.1)])


# ------------------------------------------------------------------------------- units
def test_link_capacity_in_packets_counts_the_framing():
    link = Link.from_packets(3750, 1000)
    assert link.rate == 3750 * 8 * 1002
    assert link.capacity(1000) == pytest.approx(3750)
    assert red_dumbbell().capacity() == pytest.approx(3750)


def test_pi_from_gains_gives_hollots_printed_coefficients():
    # Hollot et al. (INFOCOM 2001): K = 9.64e-6, z = 0.53 at 160 Hz -> a = 1.822e-5, b = 1.816e-5
    pi = PI.from_gains(9.64e-6, 0.53, 175, sample_rate=160)
    assert pi.a == pytest.approx(1.822e-5, rel=3e-3)
    assert pi.b == pytest.approx(1.816e-5, rel=3e-3)
    assert pi.a - pi.b == pytest.approx(9.64e-6 / 160)


def test_red_attributes_for_ns3():
    qdisc, attrs = RED(min_th=50, max_th=600, p_max=0.1, weight=1.33e-6, gentle=True).ns3(
        rate=30e6, delay=0.0, buffer=1200, packet_size=1000
    )
    assert qdisc == "ns3::RedQueueDisc"
    assert float(attrs["LInterm"]) == pytest.approx(10.0)  # ns-3 takes 1/p_max
    assert attrs["QW"] == "1.33e-06" and attrs["Gentle"] == "true" and attrs["MaxSize"] == "1200p"
    step = RED.step(40)
    assert (step.min_th, step.max_th, step.p_max, step.weight, step.ecn) == (40, 41, 1, 1, True)


def test_transports():
    assert Transport("dctcp").ecn and Transport("sbrm").ecn and not Transport("newreno").ecn
    t = Transport("sbrm", w=30, kappa=0.1)
    assert t.ns3() == ("fluidnet::TcpSbrm", {"W": "30.0", "Kappa": "0.1"}, "ns3::TcpDctcp")
    assert t.option("w") == 30 and Transport("sbrm").option("kappa") == 0.2
    assert pickle.loads(pickle.dumps(t)) == t and hash(t) == hash(
        Transport("sbrm", w=30, kappa=0.1)
    )


# ------------------------------------------------------------------------- random draws
def test_start_times_are_drawn_from_the_seed():
    sc = Dumbbell(link=Link(1e7), flows=[Flows(n=50, rtt=0.1, start=(1.0, 3.0))])
    a = sc.plan(10, seed=4)["groups"][0]["starts"]
    assert a == sc.plan(10, seed=4)["groups"][0]["starts"]
    assert a != sc.plan(10, seed=5)["groups"][0]["starts"]
    assert min(a) >= 1.0 and max(a) < 3.0


def test_short_flows_are_poisson_with_pareto_sizes():
    shape, mean = 1.5, 30.0
    short = ShortFlows(arrival_rate=400.0, mean_size=mean, shape=shape, rtt=0.1)
    times, sizes = short.draw(np.random.default_rng(7), capacity=1e4, t_end=50.0)
    n = times.size  # Poisson(20000): within 5 standard deviations
    assert abs(n - 20000) < 5 * math.sqrt(20000)
    gaps = np.diff(times)  # exponential gaps: the coefficient of variation is 1
    assert np.std(gaps) / np.mean(gaps) == pytest.approx(1.0, abs=0.03)
    scale = mean * (shape - 1) / shape
    for k in (20, 60, 200):  # P(ceil(X) > k) = P(X > k) = (scale / k)^shape for whole k
        p = (scale / k) ** shape
        assert abs(np.mean(sizes > k) - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert np.all(sizes >= 1) and np.all(sizes == np.round(sizes))
    load = ShortFlows(load=0.9, mean_size=25, rtt=0.1)
    assert load.rate(capacity=1000.0) == pytest.approx(36.0)


# ----------------------------------------------------------------------- data handling
def test_with_values_changes_fields_by_path():
    sc = red_dumbbell()
    new = sc.with_values({"flows[0].n": 20.0, "link.aqm.p_max": 0.05, "link.buffer": 800})
    assert new.flows[0].n == 20 and isinstance(new.flows[0].n, int)
    assert new.link.aqm.p_max == 0.05 and new.link.buffer == 800
    assert sc.flows[0].n == 60  # unchanged
    assert sc.with_values(ack_every=2).ack_every == 2
    assert sc.with_values({"flows[0].transport.name": "cubic"}).flows[0].transport.name == "cubic"
    with pytest.raises(fn.ParameterError, match="no field 'lnk'"):
        sc.with_values({"lnk.rate": 1e6})
    with pytest.raises(fn.ParameterError, match="Link.rate"):
        sc.with_values({"link.rate": 0})


def test_scenarios_pickle_and_compare_by_value():
    sc = red_dumbbell(notes=("one ACK per segment",))
    assert pickle.loads(pickle.dumps(sc)) == sc
    assert sc == red_dumbbell(notes=("one ACK per segment",))
    assert "RED(min_th=50" in sc.describe() and "note: one ACK per segment" in sc.describe()


def test_sizes_that_cannot_run_are_refused_before_memory_is_taken():
    # issue 33: simulate(..., n_points=10**9) took 8 GB and hung; Flows(n=10**9) took 7.8 GB
    # (its start times) before the plan refused it
    import tracemalloc

    link = fn.packet.Link.from_packets(1250, buffer=100)
    sc = fn.packet.Dumbbell(link=link, flows=[fn.packet.Flows(n=2, rtt=0.05)])
    tracemalloc.start()
    try:
        with pytest.raises(fn.OptionError, match=r"n_points = 1000000000: .* GiB.*n_points <="):
            fn.packet.simulate(sc, 10.0, n_points=10**9)
        with pytest.raises(fn.OptionError, match="closer than ns-3's resolution"):
            fn.packet.simulate(sc, 1e-3, n_points=10**7)
        with pytest.raises(fn.ParameterError, match="Flows.n = 1000000000: .* at most 50000"):
            fn.packet.Flows(n=10**9)
        short = fn.packet.ShortFlows(arrival_rate=1e9, rtt=0.05)
        with pytest.raises(fn.ParameterError, match="flows\\[0\\]: ShortFlows: more than 50000"):
            fn.packet.Dumbbell(link=link, flows=[short]).plan(10.0, 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, peak  # measured: about 4 MB
    # the largest allowed n_points is what the message says, and is accepted
    most = int(str(_refusal(sc)).rsplit("<= ", 1)[1])
    fn.packet.runner.RunRequest.checked(sc, 10.0, 0, most)


def _refusal(sc):
    with pytest.raises(fn.OptionError) as info:
        fn.packet.runner.RunRequest.checked(sc, 10.0, 0, 10**9)
    return info.value
