"""The C++ components of the Kunniyur & Srikant and Ye et al. packet items against their defining
rules: one ns-3 run (about 3 s of CPU) with every component on its own link.

* ``TcpKelly`` (the window laws (12)/(13)): the window after n ACKs against the recursion
  ``W <- W + kappa c w d^2 / W``; with every packet marked, the fixed point of
  ``W <- W + c/W - kappa beta W^nu d^(1 - nu)``; with losses, the fixed point ``W = w d/(beta p)``
  of a log user (one increment per packet sent, one decrement per packet lost), p the measured
  loss fraction (drop-front queue) or the set random-loss probability.
* ``AvqQueueDisc``: a virtual queue served at ``C~`` and fed at ``lambda`` marks the fraction
  ``1 - C~/lambda`` of the arrivals; the adaptive level changes at ``alpha (gamma C - lambda)``.
* ``TcpSlidingMode`` and ``TcpMrg`` ((6)/(10) and (22) of Ye et al.): the window after n ACKs
  against ``W + alpha`` (slow start), ``W + mu/W`` (congestion avoidance) and, below the target,
  ``W + r(alpha + beta) - beta`` and ``W + (r - 1) beta + r mu/W``; on congestion the threshold
  becomes ``(1 - beta)`` of the flight.
"""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import AVQ, DropFront, Flows, Link, ParkingLot, Transport

pytestmark = pytest.mark.skipif(
    not fn.packet._ns3.available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)

T_END = 4.0
PAYLOAD = 1000 - 52  # bytes of a segment of a 1000-byte packet
C = 1250.0  # packets/s of most links


def _link(rate=C, buffer=2000, aqm="droptail"):
    return Link.from_packets(rate, buffer=buffer, aqm=aqm, delay=0.001)


#: name -> (link, flow group); one link per component check
CASES = {
    "increments": (_link(), Flows(rtt=0.01, transport=Transport("kelly", w=4))),
    "marked_log": (
        _link(aqm=AVQ(level=0.0, virtual_buffer=1)),
        Flows(rtt=0.01, transport=Transport("kelly", ecn=True, w=20)),
    ),
    "marked_nu1": (
        _link(aqm=AVQ(level=0.0, virtual_buffer=1)),
        Flows(rtt=0.01, transport=Transport("kelly", ecn=True, w=50, d=2, nu=1)),
    ),
    "drop_front": (
        _link(buffer=50, aqm=DropFront()),
        Flows(rtt=0.02, transport=Transport("kelly", kappa=4)),
    ),
    "random_loss": (
        _link(2 * C),
        Flows(rtt=0.01, transport=Transport("kelly", kappa=4, w=0.25), loss=0.02),
    ),
    # a flow that keeps its initial 10 packets in flight over a 5-packet round trip: the link
    # stays busy, the arrival rate is C
    "avq_fixed": (
        _link(buffer=100, aqm=AVQ(level=0.8, virtual_buffer=20)),
        Flows(rtt=0.002, transport=Transport("kelly", ecn=True, kappa=1e-9)),
    ),
    "avq_adaptive": (
        _link(
            buffer=100,
            aqm=AVQ(
                level=0.9,
                adaptive=True,
                gamma=0.9,
                alpha=0.5,
                update_every=100,
                virtual_buffer=20,
            ),
        ),
        Flows(rtt=0.002, transport=Transport("kelly", ecn=True, kappa=1e-9)),
    ),
    "sliding_ca": (_link(), Flows(rtt=0.01, transport=Transport("sliding", mu=2, x_s=1e-3))),
    "mrg_ca": (
        _link(500),
        Flows(rtt=0.01, transport=Transport("mrg", theta=1e9, r_max=1.2, x_s=1e-3)),
    ),
    "mrg_ss": (
        _link(500),
        Flows(rtt=0.01, transport=Transport("mrg", theta=1e9, r_max=1.2), start=T_END - 0.5),
    ),
    "sliding_decrease": (
        _link(2 * C),
        Flows(rtt=0.01, transport=Transport("sliding", beta=0.3), loss=0.002),
    ),
}
INDEX = {name: i for i, name in enumerate(CASES)}


@pytest.fixture(scope="module")
def run():
    links = [link for link, _ in CASES.values()]
    flows = [group for _, group in CASES.values()]
    sc = ParkingLot(links=links, routing=np.eye(len(links), dtype=int), flows=flows)
    return fn.packet.simulate(sc, T_END, seed=1, n_points=401)


def _recursion(W0, step, n):
    """W_0 = W0, W_{k+1} = W_k + step(W_k) for k < n."""
    out = [W0]
    for _ in range(int(n) + 1):
        out.append(out[-1] + step(out[-1]))
    return np.array(out)


def _against_recursion(run, name, step, back=0.005, after=1.0):
    """Largest |W(t) - W_rec(n(t - back))| from ``after`` seconds into the flow on: ``n`` the
    segments delivered to the sink (their ACKs reach the sender ``back`` seconds later; the
    10-ms samples leave n uncertain by a few packets, which matters less as dW/dn falls)."""
    j = INDEX[name]
    t, W = run.time, run.cwnd[:, j]
    n = run.received[:, j] / PAYLOAD
    ref = _recursion(10.0, step, n[-1])
    start = run.scenario.flows[j].start[0]
    sel = (n > 1) & np.isfinite(W) & (t >= start + after)
    acked = np.interp(t[sel] - back, t, n)
    return np.max(np.abs(W[sel] - np.interp(acked, np.arange(ref.size), ref))), W[-1]


def _tail(x, run):
    return x[run.time >= T_END / 2]


def test_kelly_window_follows_the_increment_of_its_law(run):
    # log utility, w = 4, d = 1, kappa = 1: every ACK adds 4/W (the cwnd trace is W rounded)
    err, end = _against_recursion(run, "increments", lambda w: 4.0 / w)
    assert end > 100 and err < 1.0


@pytest.mark.parametrize(
    ("name", "nu", "w", "d"), [("marked_log", 0.0, 20.0, 1.0), ("marked_nu1", 1.0, 50.0, 2.0)]
)
def test_kelly_window_with_every_packet_marked_sits_at_its_fixed_point(run, name, nu, w, d):
    # every ACK echoes a mark: c w d^2/W = beta W^nu d^(1 - nu) (kappa cancels), beta = 0.5
    c = nu if nu > 0 else 1.0
    fixed = (c * w * d * d / (0.5 * d ** (1 - nu))) ** (1 / (1 + nu))  # 40 and 20
    j = INDEX[name]
    assert run.marks[-1, j] > 0.99 * run.departed[-1, j] / 1000
    assert np.mean(_tail(run.cwnd[:, j], run)) == pytest.approx(fixed, abs=0.5)


def _loss_fraction(run, j, i0):
    """Packets lost over packets sent (delivered or lost) by flow ``j`` since sample ``i0``."""
    lost = run.lost[-1, j] - run.lost[i0, j]
    delivered = (run.received[-1, j] - run.received[i0, j]) / PAYLOAD
    return lost / (lost + delivered)


def test_kelly_log_user_at_a_drop_front_queue_balances_its_losses(run):
    # per packet sent: +c/W (an ACK or a negative one), -kappa beta d per loss: W = w d/(beta p)
    j = INDEX["drop_front"]
    h = run.time >= T_END / 2
    i0 = np.flatnonzero(h)[0]
    p = _loss_fraction(run, j, i0)
    assert run.lost[-1, j] == run.drops[-1, j]  # every drop was reported to its sender
    assert 0.005 < p < 0.1
    assert np.mean(run.cwnd[h, j]) == pytest.approx(1.0 / (0.5 * p), rel=0.05)
    assert np.mean(run.queue[h, j]) > 45  # the 50-packet buffer stays full: losses at overflow


def test_kelly_log_user_with_random_losses_balances_them(run):
    # w = 0.25, d = 1: W = w d/(beta p), p the loss fraction drawn (set: 0.02)
    j = INDEX["random_loss"]
    h = run.time >= 1.0
    p = _loss_fraction(run, j, np.flatnonzero(h)[0])
    assert p == pytest.approx(0.02, rel=0.3)
    assert np.mean(run.cwnd[h, j]) == pytest.approx(0.25 / (0.5 * p), rel=0.1)


def test_avq_marks_what_its_virtual_queue_cannot_hold(run):
    j = INDEX["avq_fixed"]
    i0 = np.flatnonzero(run.time >= 1.0)[0]
    arrived = (run.departed[-1, j] - run.departed[i0, j]) / 1000 + run.drops[-1, j]
    lam = arrived / (run.time[-1] - run.time[i0])
    capacity = run.scenario.capacity(j)
    assert lam == pytest.approx(capacity, rel=0.01)  # the link is busy
    marked = (run.marks[-1, j] - run.marks[i0, j]) / arrived
    assert marked == pytest.approx(1 - 0.8 * capacity / lam, abs=0.01)


def test_adaptive_avq_moves_its_level_at_alpha_times_the_excess(run):
    # arrivals at C > gamma C: C~/C falls at alpha (gamma - 1) = -0.05 per second from 0.9
    j = INDEX["avq_adaptive"]
    t, level = run.time, run.aqm_state[:, j]
    slope = np.polyfit(t[t > 0.5], level[t > 0.5], 1)[0]
    assert slope == pytest.approx(0.5 * (0.9 - 1.0), rel=0.05)
    assert level[0] == pytest.approx(0.9) and np.all(np.diff(level) <= 1e-12)


def test_sliding_mode_law_in_congestion_avoidance_adds_mu_per_round_trip(run):
    err, end = _against_recursion(run, "sliding_ca", lambda w: 2.0 / w)
    assert end > 100 and err < 0.5


def test_mrg_law_below_its_target_grows_exponentially(run):
    # (22) with r = 1.2, beta = 1/2, mu = 1: +(r - 1)/2 + r/W per ACK in congestion avoidance,
    # +r (alpha + beta) - beta = 1.3 per ACK in slow start
    err, end = _against_recursion(run, "mrg_ca", lambda w: 0.1 + 1.2 / w)
    assert end > 100 and err < 0.5
    err, end = _against_recursion(run, "mrg_ss", lambda w: 1.3, after=0.1)
    assert end > 100 and err < 2.0


def test_sliding_mode_law_cuts_the_threshold_to_one_minus_beta_of_the_flight(run):
    j = INDEX["sliding_decrease"]
    ss, W, t = run.ssthresh[:, j], run.cwnd[:, j], run.time
    at = np.flatnonzero((np.diff(ss) != 0) & (t[1:] > 0.5)) + 1
    ratio = ss[at] / W[at - 1]
    assert at.size >= 10
    # the flight at a loss is the window less a few segments (the lost one, three SACKed)
    low = 0.7 * (1 - 6.0 / W[at - 1])
    assert np.mean((ratio >= low) & (ratio <= 0.71)) >= 0.8
    assert np.median(ratio) > 0.6  # beta = 1/2 would give at most 0.5
