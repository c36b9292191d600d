"""Scenario pieces of the seed papers' packet items, without ns-3: ORED's profile, the XCP router,
the generalized TCP's and TCP/RM's options, assured rates and stop times, and their refusals."""

from __future__ import annotations

import pytest

import fluidnet as fn
from fluidnet.errors import ParameterError
from fluidnet.packet import ORED, XCP, Dumbbell, Flows, Link, Transport


def test_ored_profile_is_reds_linear_ramp_held_at_p_max():
    o = ORED(min_th=20, max_th=100, p_max=0.1)
    assert [o.profile(q) for q in (10, 20, 60, 100, 500)] == [0, 0, 0.05, 0.1, 0.1]
    name, attrs = o.ns3(rate=6e6, delay=0.0, buffer=1000, packet_size=564)
    assert name == "fluidnet::OredQueueDisc" and attrs["MaxP"] == "0.1"
    assert attrs["QW"] == "0.002" and attrs["MeanPktSize"] == "564"
    with pytest.raises(ParameterError, match="ORED.max_th"):
        ORED(min_th=50, max_th=40)
    with pytest.raises(ParameterError, match="ORED.p_max"):
        ORED(p_max=1.5)


def test_xcp_router_takes_the_ip_capacity_and_katabis_gains():
    name, attrs = XCP().ns3(rate=1002e4, delay=0.0, buffer=100, packet_size=1000)
    assert name == "fluidnet::XcpQueueDisc"
    assert float(attrs["Capacity"]) == pytest.approx(1e7)
    assert (attrs["Alpha"], attrs["Beta"], attrs["Gamma"]) == ("0.4", "0.226", "0.1")
    with pytest.raises(ParameterError, match="XCP.gamma"):
        XCP(gamma=2.0)


def test_generalized_tcp_and_tcp_rm_options():
    t = Transport("generalized", alpha=-0.5, c1=2, c2=0.2)
    assert t.ecn and t.ns3() == (
        "fluidnet::TcpGeneralized",
        {"Alpha": "-0.5", "C1": "2.0", "C2": "0.2"},
        "ns3::TcpDctcp",  # every mark echoed on its own ACK
    )
    assert Transport("tcp_rm").ecn and Transport("tcp_rm").ns3()[2] == "ns3::TcpNewReno"
    with pytest.raises(ParameterError, match="alpha = 1.0 must be below beta"):
        Transport("generalized", alpha=1.0)
    with pytest.raises(ParameterError, match="c2 = 1.0 must be < 1"):
        Transport("generalized", c2=1.0)
    with pytest.raises(ParameterError, match="kappa"):
        Transport("tcp_rm", kappa=1.0)


def test_assured_rates_stop_times_and_xcp_routes_enter_the_plan():
    sc = Dumbbell(
        link=Link(6e6, buffer=1000, aqm=ORED()),
        flows=[
            Flows(1, rtt=0.02, transport="generalized", assured_rate=1.5e6, stop=5.0),
            Flows(1, rtt=0.1, transport="generalized"),
        ],
    )
    g0, g1 = sc.plan(10.0, 1)["groups"]
    assert g0["options"] == {"profile_rate": 1.5e6, "profile_depth": 20.0, "stop": 5.0}
    assert "options" not in g1  # plans of groups without options are as before
    assert "assured 1.5 Mb/s" in sc.describe() and "stop 5 s" in sc.describe()
    xcp = Dumbbell(link=Link(1e7, aqm=XCP()), flows=[Flows(2, transport="xcp")])
    assert xcp.plan(1.0, 0)["groups"][0]["options"] == {"xcp_sink": 1.0}
    with pytest.raises(ParameterError, match="without the XCP router"):
        Dumbbell(link=Link(1e7), flows=[Flows(2, transport="xcp")])
    with pytest.raises(ParameterError, match="marking-only AQM"):
        Dumbbell(link=Link(1e7, aqm=ORED()), flows=[Flows(2)])
    with pytest.raises(ParameterError, match="Flows.stop"):
        Flows(1, start=2.0, stop=1.0)
    with pytest.raises(ParameterError, match="Flows.assured_rate"):
        Flows(1, assured_rate=-1.0)
    assert isinstance(fn.packet.ORED(), fn.packet.AQM)
