"""The C++ components of the Misra-Baras-Ott, Dukkipati-McKeown and Zimmermann packet items against
their defining equations.

* Unit checks in one ns-3 process (a subprocess that loads ns-3 and compiles the components, then
  drives each object directly): ``TcpGeneralized``'s window after given ACKs, marks and losses
  against the recursion ``W + c1 W^alpha`` / ``W - c2 W^beta`` of eqs (1)-(2); ``TcpRm``'s
  increase (5.6.1) and its reactions to an ECN echo (5.6.2) and to a loss; ``XcpQueueDisc``'s
  control interval, aggregate feedback, shuffled traffic and per-packet feedback over three
  control intervals against Katabi et al.'s equations evaluated here; ORED's profile, the
  *in*/*out* rule, and the edge meter's token bucket.
* One short ns-3 run: AIMD (alpha = 0) under a constant marking probability (ORED saturated)
  has the exact per-ACK mean ``c1 (1 - p) / (c2 p)`` whatever the feedback delay (the chain is
  linear and the marks independent of the window); flows whose assured rate covers the link are
  never marked; XCP flows of three RTTs fill the link fairly, without a queue or a drop.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import ORED, XCP, Flows, Link, ParkingLot, Transport

pytestmark = pytest.mark.skipif(
    not fn.packet.ns3_available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)

SEG = 1000

# The harness: C++ helpers driving the components without a network, run in a fresh process.
HARNESS = textwrap.dedent(
    r"""
    import json, math, cppyy
    from fluidnet.packet import _ns3

    ns3 = _ns3.load()
    cppyy.cppdef(r'''
    namespace fltest {
    using namespace ns3;

    Ptr<TcpSocketState> Tcb(double cwndSegments) {
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1000;
        tcb->m_cWnd = uint32_t(cwndSegments * 1000);
        tcb->m_ssThresh = 1000000000;
        tcb->m_ecnState = TcpSocketState::ECN_IDLE;
        return tcb;
    }

    // TcpGeneralized: events is a string of 'u' (an unmarked ACK of one segment), 'm' (a marked
    // one), '3' (a cumulative ACK of three segments carrying a mark), 'L' (a fast retransmit),
    // 'T' (a timeout: TCP sets one segment); the window (segments) after each event.
    std::vector<double> Generalized(double c1, double c2, double alpha, double beta,
                                    const std::string& events) {
        Ptr<fluidnet::TcpGeneralized> cc = CreateObject<fluidnet::TcpGeneralized>();
        cc->SetAttribute("C1", DoubleValue(c1));
        cc->SetAttribute("C2", DoubleValue(c2));
        cc->SetAttribute("Alpha", DoubleValue(alpha));
        cc->SetAttribute("Beta", DoubleValue(beta));
        Ptr<TcpSocketState> tcb = Tcb(10);
        TcpRateOps::TcpRateConnection rc;
        std::vector<double> out;
        for (char e : events) {
            TcpRateOps::TcpRateSample rs;
            rs.m_ackedSacked = (e == '3') ? 3000 : 1000;
            tcb->m_ecnState = (e == 'm' || e == '3') ? TcpSocketState::ECN_ECE_RCVD
                                                     : TcpSocketState::ECN_IDLE;
            if (e == 'L') {
                cc->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
            } else {
                if (e == 'T') {
                    tcb->m_cWnd = 1000;
                    rs.m_ackedSacked = 1000;
                    tcb->m_ecnState = TcpSocketState::ECN_IDLE;
                }
                cc->CongControl(tcb, rc, rs);
            }
            out.push_back(tcb->m_cWnd.Get() / 1000.0);
        }
        return out;
    }

    // TcpRm: n ACKs in congestion avoidance (srtt 50 ms) from a window of 20 segments, then the
    // threshold an ECN echo sets (state open) and the one a loss sets (state recovery).
    std::vector<double> Rm(double w, double kappa, int n) {
        Ptr<fluidnet::TcpRm> cc = CreateObject<fluidnet::TcpRm>();
        cc->SetAttribute("W", DoubleValue(w));
        cc->SetAttribute("Kappa", DoubleValue(kappa));
        Ptr<TcpSocketState> tcb = Tcb(20);
        tcb->m_ssThresh = 2000;
        tcb->m_srtt = Seconds(0.05);
        std::vector<double> out;
        for (int k = 0; k < n; ++k) {
            cc->IncreaseWindow(tcb, 1);
            out.push_back(tcb->m_cWnd.Get());
        }
        tcb->m_cWnd = 40000;
        tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
        tcb->m_congState = TcpSocketState::CA_OPEN;
        out.push_back(cc->GetSsThresh(tcb, 30000));
        tcb->m_congState = TcpSocketState::CA_RECOVERY;
        out.push_back(cc->GetSsThresh(tcb, 30000));
        return out;
    }

    // TcpSbrm (kappa 0.2, w 20, srtt 0.1 s) from 20 segments: a marked ACK, a fast retransmit,
    // 5 duplicate ACKs in recovery (unmarked), then an unmarked ACK after it; the window after
    // each.
    std::vector<double> Sbrm() {
        Ptr<fluidnet::TcpSbrm> cc = CreateObject<fluidnet::TcpSbrm>();
        Ptr<TcpSocketState> tcb = Tcb(20);
        tcb->m_srtt = Seconds(0.1);
        std::vector<double> out;
        tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
        cc->PktsAcked(tcb, 1, Seconds(0.1));
        out.push_back(tcb->m_cWnd.Get() / 1000.0);
        tcb->m_ecnState = TcpSocketState::ECN_IDLE;
        cc->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
        tcb->m_congState = TcpSocketState::CA_RECOVERY;
        out.push_back(tcb->m_cWnd.Get() / 1000.0);
        for (int i = 0; i < 5; ++i) cc->PktsAcked(tcb, 1, Seconds(0.1));
        out.push_back(tcb->m_cWnd.Get() / 1000.0);
        tcb->m_congState = TcpSocketState::CA_OPEN;
        cc->PktsAcked(tcb, 1, Seconds(0.1));
        out.push_back(tcb->m_cWnd.Get() / 1000.0);
        return out;
    }

    Ptr<Ipv4QueueDiscItem> Item(bool tagged, double cwnd, double rtt) {
        Ptr<Packet> p = Create<Packet>(1000 - 20);
        if (tagged) {
            fluidnet::XcpTag tag;
            tag.cwnd = cwnd;
            tag.rtt = rtt;
            p->AddPacketTag(tag);
        }
        Ipv4Header h;
        h.SetPayloadSize(1000 - 20);
        return Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h);
    }

    double Feedback(Ptr<QueueDiscItem> item) {
        fluidnet::XcpTag tag;
        item->GetPacket()->PeekPacketTag(tag);
        return tag.feedback;
    }

    // XcpQueueDisc on 1000 packets/s of 1000 bytes, first interval 0.1 s. t = 0: 10 packets of
    // flow A (cwnd 10, rtt 0.1) and 10 of flow B (cwnd 20, rtt 0.2) arrive, 5 leave. Control at
    // 0.1 s; at 0.12 s 3 packets of A leave (feedback written); control at 0.25 s (no input;
    // Q = 12 packets); at 0.26 s 300 packets of A arrive and 100 leave, at 0.3 s one leaves;
    // control at 0.4 s; at 0.41 s one leaves. Returns the controller's state after each control
    // and the feedback of the packets that left after them.
    std::vector<double> Xcp() {
        Ptr<fluidnet::XcpQueueDisc> q = CreateObject<fluidnet::XcpQueueDisc>();
        q->SetAttribute("Capacity", DoubleValue(8e6));
        q->SetAttribute("InitialInterval", TimeValue(Seconds(0.1)));
        q->SetMaxSize(QueueSize("100000p"));
        q->Initialize();
        std::vector<double> out;
        auto state = [q, &out]() {
            out.push_back(q->GetInterval());
            out.push_back(q->GetPhi());
            out.push_back(q->GetShuffled());
            out.push_back(q->GetXiPositive());
            out.push_back(q->GetXiNegative());
            out.push_back(q->GetPersistentQueue());
        };
        for (int i = 0; i < 10; ++i) q->Enqueue(Item(true, 10, 0.1));
        for (int i = 0; i < 10; ++i) q->Enqueue(Item(true, 20, 0.2));
        for (int i = 0; i < 5; ++i) q->Dequeue();
        Simulator::Schedule(Seconds(0.11), state);
        Simulator::Schedule(Seconds(0.12), [q, &out]() {
            for (int i = 0; i < 3; ++i) out.push_back(Feedback(q->Dequeue()));
        });
        Simulator::Schedule(Seconds(0.255), state);
        Simulator::Schedule(Seconds(0.26), [q]() {
            for (int i = 0; i < 300; ++i) q->Enqueue(Item(true, 10, 0.1));
            for (int i = 0; i < 100; ++i) q->Dequeue();
        });
        Simulator::Schedule(Seconds(0.3), [q, &out]() { out.push_back(Feedback(q->Dequeue())); });
        Simulator::Schedule(Seconds(0.405), state);
        Simulator::Schedule(Seconds(0.41), [q, &out]() { out.push_back(Feedback(q->Dequeue())); });
        Simulator::Stop(Seconds(0.42));
        Simulator::Run();
        Simulator::Destroy();
        return out;
    }

    // ORED (weight 1, thresholds 10/20, p_max 1): marks among 200 "out" then 200 "in" packets
    // arriving to a queue of 30, and among 200 "out" packets arriving to an empty queue; its
    // profile at a few averages.
    std::vector<double> Ored() {
        Ptr<fluidnet::OredQueueDisc> q = CreateObject<fluidnet::OredQueueDisc>();
        q->SetAttribute("MinTh", DoubleValue(10));
        q->SetAttribute("MaxTh", DoubleValue(20));
        q->SetAttribute("MaxP", DoubleValue(1.0));
        q->SetAttribute("QW", DoubleValue(1.0));
        q->SetMaxSize(QueueSize("100000p"));
        q->Initialize();
        auto ecn = [](bool in) {
            Ptr<Packet> p = Create<Packet>(980);
            if (in) p->AddPacketTag(fluidnet::InProfileTag());
            Ipv4Header h;
            h.SetEcn(Ipv4Header::ECN_ECT0);
            return Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h);
        };
        std::vector<double> out;
        for (int i = 0; i < 30; ++i) q->Enqueue(ecn(true));
        double m0 = q->GetStats().nTotalMarkedPackets;
        for (int i = 0; i < 200; ++i) { q->Enqueue(ecn(false)); q->Dequeue(); }
        double m1 = q->GetStats().nTotalMarkedPackets;
        for (int i = 0; i < 200; ++i) { q->Enqueue(ecn(true)); q->Dequeue(); }
        double m2 = q->GetStats().nTotalMarkedPackets;
        while (q->Dequeue()) {}
        for (int i = 0; i < 200; ++i) { q->Enqueue(ecn(false)); q->Dequeue(); }
        double m3 = q->GetStats().nTotalMarkedPackets;
        out.push_back(m1 - m0);
        out.push_back(m2 - m1);
        out.push_back(m3 - m2);
        for (double a : {5.0, 10.0, 12.5, 19.0, 20.0, 50.0}) out.push_back(q->Profile(a));
        Simulator::Destroy();
        return out;
    }

    // The edge meter (1 Mb/s, depth 20 packets of 1000 bytes): a burst of 50 packets of one
    // flow at t = 0, then one packet every 4 ms (2 Mb/s) until 1 s: packets tagged "in".
    double Meter() {
        Ptr<fluidnet::ProfileMeterQueueDisc> q = CreateObject<fluidnet::ProfileMeterQueueDisc>();
        q->SetAttribute("Rate", DoubleValue(1e6));
        q->SetAttribute("Depth", DoubleValue(20));
        q->SetAttribute("PacketSize", UintegerValue(1000));
        q->SetMaxSize(QueueSize("100000p"));
        q->Initialize();
        auto send = [q]() {
            Ptr<Packet> p = Create<Packet>(1000 - 20 - 20);
            TcpHeader tcp;
            tcp.SetSourcePort(10000);
            p->AddHeader(tcp);
            Ipv4Header h;
            h.SetProtocol(6);
            Ptr<Ipv4QueueDiscItem> item = Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h);
            q->Enqueue(item);
            q->Dequeue();
        };
        for (int i = 0; i < 50; ++i) send();
        for (int k = 1; k <= 250; ++k) Simulator::Schedule(Seconds(0.004 * k), send);
        Simulator::Run();
        Simulator::Destroy();
        return double(q->GetInPackets());
    }
    }
    ''')
    g = cppyy.gbl.fltest
    out = {
        "aimd": list(g.Generalized(0.05, 0.2, 0.0, 1.0, "mu" * 20 + "3uuLuuTuuuuu")),
        "reno": list(g.Generalized(1.0, 0.5, -1.0, 1.0, "m" + "u" * 30 + "m" + "u" * 5)),
        "beta": list(g.Generalized(2.0, 0.1, -1.0, 0.5, "m" + "u" * 10 + "m")),
        "rm": list(g.Rm(20.0, 0.1, 50)),
        "sbrm": list(g.Sbrm()),
        "xcp": list(g.Xcp()),
        "ored": list(g.Ored()),
        "meter": g.Meter(),
    }
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def harness():
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS], capture_output=True, text=True, timeout=900
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(line[0][len("RESULT ") :])


def generalized_reference(c1, c2, alpha, beta, events, w0=10.0):
    """Eqs (1)-(2) event by event: slow start (+1 per ACK) until the first mark; a cumulative
    ACK of three segments is two increments and, for its mark, one decrement; a loss halves;
    a timeout restarts from one segment with slow start up to half the window before it."""
    w, slow, thresh, out = w0, True, math.inf, []

    def ack(w, slow, marked):
        if marked:
            return w - c2 * w**beta, False
        if slow:
            return w + 1.0, w + 1.0 < thresh
        return w + c1 * w**alpha, False

    for e in events:
        if e == "L":
            w, slow = max(1.0, w / 2), False
        elif e == "T":
            thresh, w, slow = max(2.0, w / 2), 1.0, True
            w, slow = ack(w, slow, False)
        else:
            n = 3 if e == "3" else 1
            for k in range(n):
                w, slow = ack(w, slow, e in "m3" and k == n - 1)
                w = max(w, 1.0)
        out.append(math.floor(w * SEG) / SEG)
    return np.array(out)


@pytest.mark.parametrize(
    "name, law, events",
    [
        ("aimd", (0.05, 0.2, 0.0, 1.0), "mu" * 20 + "3uuLuuTuuuuu"),
        ("reno", (1.0, 0.5, -1.0, 1.0), "m" + "u" * 30 + "m" + "u" * 5),
        ("beta", (2.0, 0.1, -1.0, 0.5), "m" + "u" * 10 + "m"),
    ],
)
def test_generalized_tcp_follows_equations_1_and_2(harness, name, law, events):
    got = np.array(harness[name])
    np.testing.assert_allclose(got, generalized_reference(*law, events), atol=1.001 / SEG)
    # the first mark ends slow start: 10 -> 10 - c2 10^beta
    c1, c2, alpha, beta = law
    assert got[0] == pytest.approx(10 - c2 * 10**beta, abs=1e-3)


def test_sbrm_source_halves_on_a_loss_and_holds_through_the_recovery(harness):
    # (4.2.3) per ACK: kappa (w RTT / cwnd - mark); a marked ACK ends slow start. Before the fix
    # the fast retransmit left the window alone and every duplicate ACK grew it
    marked, recovery, after_dupacks, after = harness["sbrm"]
    w1 = 20 + 0.2 * (20 * 0.1 / 20 - 1)
    assert marked == pytest.approx(w1, abs=1e-3)
    assert recovery == pytest.approx(w1 / 2, abs=1e-3)
    assert after_dupacks == recovery
    assert after == pytest.approx(w1 / 2 + 0.2 * (20 * 0.1 / (w1 / 2)), abs=1e-3)


def test_tcp_rm_follows_5_6_1_and_5_6_2(harness):
    out = harness["rm"]
    cwnd, ssthresh_echo, ssthresh_loss = np.array(out[:-2]), out[-2], out[-1]
    # (5.6.1): kappa RTT w / cwnd segments per ACK, accumulated in bytes
    w, kappa, rtt = 20.0, 0.1, 0.05
    ref, extra = [], 0.0
    c = 20_000.0
    for _ in range(cwnd.size):
        extra += kappa * rtt * w / (c / SEG) * SEG
        whole = math.floor(extra)
        extra -= whole
        c += whole
        ref.append(c)
    np.testing.assert_array_equal(cwnd, ref)
    assert cwnd[-1] - 20_000 == pytest.approx(50 * kappa * rtt * w / 20 * SEG, rel=0.01)
    # (5.6.2): an ECN echo takes kappa cwnd away; a loss halves the flight (NewReno)
    assert ssthresh_echo == pytest.approx((1 - kappa) * 40_000, abs=1)
    assert ssthresh_loss == 15_000


def test_xcp_router_follows_katabis_controllers(harness):
    x = harness["xcp"]
    first, fb1, second, fb2, third, fb3 = x[0:6], x[6:9], x[9:15], x[15], x[16:22], x[22]
    alpha, beta, gamma, C = 0.4, 0.226, 0.1, 1000.0  # C in packets/s
    # interval 1: 20 packets in 0.1 s (y = 200/s), d = sum(rtt^2/cwnd) / sum(rtt/cwnd)
    d = (10 * 0.1**2 / 10 + 10 * 0.2**2 / 20) / (10 * 0.1 / 10 + 10 * 0.2 / 20)
    phi = alpha * d * (C - 200.0) - beta * 0.0
    h = max(0.0, gamma * 200.0 * d - abs(phi))
    xi_p = (h + max(phi, 0)) / (d * (10 * 0.1 / 10 + 10 * 0.2 / 20))
    xi_n = (h + max(-phi, 0)) / (d * 20)
    np.testing.assert_allclose(first, [d, phi, h, xi_p, xi_n, 0.0], rtol=1e-12, atol=1e-12)
    # the packets that leave next (FIFO: three of A): p_i - n_i = xi_p rtt^2/cwnd - xi_n rtt
    np.testing.assert_allclose(fb1, [xi_p * 0.1**2 / 10 - xi_n * 0.1] * 3, rtol=1e-12)
    # interval 2 (0.1 .. 0.25 s): no input, d kept, Q the smallest queue a departure left (12)
    phi2 = alpha * d * C - beta * 12.0
    np.testing.assert_allclose(second, [d, phi2, 0.0, 0.0, 0.0, 12.0], rtol=1e-12, atol=1e-12)
    assert fb2 == 0.0  # xi_p = xi_n = 0 after an interval without XCP packets
    # interval 3 (0.25 .. 0.4 s): 300 packets (cwnd 10, rtt 0.1): y = 2000/s, d = 0.1; the
    # queue was 12 when the interval began and larger at every departure
    y, d3, q3 = 300 / 0.15, 0.1, 12.0
    phi3 = alpha * d3 * (C - y) - beta * q3
    h3 = max(0.0, gamma * y * d3 - abs(phi3))
    xi_n3 = (h3 + max(-phi3, 0)) / (d3 * 300)
    xi_p3 = (h3 + max(phi3, 0)) / (d3 * 300 * 0.1 / 10)
    np.testing.assert_allclose(third, [d3, phi3, h3, xi_p3, xi_n3, q3], rtol=1e-12)
    assert phi3 < 0 and fb3 == pytest.approx(xi_p3 * 0.01 / 10 - xi_n3 * 0.1, rel=1e-12)


def test_ored_marks_out_packets_by_the_profile_and_never_in_ones(harness):
    out, in_, empty, *profile = harness["ored"]
    assert (out, in_, empty) == (200, 0, 0)  # avg 30 >= max_th: p_max = 1; avg 0 < min_th
    np.testing.assert_allclose(profile, [0.0, 0.0, 0.25, 0.9, 1.0, 1.0])


def test_edge_meter_is_a_token_bucket(harness):
    # depth 20 packets at t = 0, then 1 Mb/s = 125 packets/s of 1000 bytes for 1 s
    assert harness["meter"] == pytest.approx(20 + 125, abs=1)


@pytest.fixture(scope="module")
def run():
    links = [
        # ORED saturated (q >= max_th = 2 at every arrival): a constant p = p_max = 0.02
        Link.from_packets(1250, buffer=1000, aqm=ORED(min_th=1, max_th=2, p_max=0.02, weight=1)),
        Link.from_packets(1250, buffer=300, aqm=XCP()),
        Link.from_packets(1250, buffer=300, aqm=ORED(min_th=1, max_th=2, p_max=1.0, weight=1)),
    ]
    flows = [
        Flows(rtt=0.01, transport=Transport("generalized", alpha=0.0, c1=1.0, c2=0.5)),
        Flows(rtt=0.02, transport="xcp"),
        Flows(rtt=0.05, transport="xcp"),
        Flows(rtt=0.1, transport="xcp"),
        # each flow's profile is the link's rate, its bucket deeper than any burst of its window
        Flows(2, rtt=0.02, transport="generalized", assured_rate=10e6, bucket=1000),
    ]
    routing = [[1, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 1]]
    sc = ParkingLot(links=links, routing=routing, flows=flows)
    return fn.packet.simulate(sc, 20.0, seed=1, n_points=2001, store=False)


def test_aimd_under_constant_marking_has_the_exact_mean(run):
    # E[dW] = c1 (1 - p) - c2 p E[W] = 0 per ACK, whatever the delays: E[W] = c1(1-p)/(c2 p);
    # ACKs come at the link's rate while the pipe is full, so the time average is the ACK one.
    # Tolerance: three batch-means standard errors of the run and 2 % for the rare ACKs whose
    # packet found fewer than max_th = 2 packets queued (then unmarked)
    from fluidnet.papers.batch_means import batch_mean

    m = batch_mean(run.time, run.cwnd[:, 0], after=5.0, blocks=15)
    expected = 1.0 * 0.98 / (0.5 * 0.02)
    assert abs(m.mean - expected) <= 3 * m.se + 0.02 * expected, m.describe()
    assert m.se < 0.1 * expected  # the check means something
    assert run.drops[-1, 0] == 0


def test_flows_within_their_profile_are_never_marked(run):
    assert run.marks[-1, 2] == 0 and run.mean_queue(link=2, after=2.0) > 2


def test_xcp_fills_the_link_fairly_without_a_queue(run):
    rate = run.flow_rate()[run.time >= 10.0][:, 1:4].mean(axis=0)
    assert run.utilisation(link=1, after=10.0) > 0.95
    assert rate.min() / rate.max() > 0.8  # RTTs 20, 50 and 100 ms: max-min fair
    assert run.drops[-1, 1] == 0 and run.mean_queue(link=1, after=10.0) < 5
