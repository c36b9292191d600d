"""ns-3 runs: determinism, traces, failures reported, sweeps that keep their other runs, and
the C++ components against closed forms (short runs: a few seconds of CPU each)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import Dumbbell, Flows, Link, ShortFlows, Transport
from fluidnet.packet.analysis import summary
from fluidnet.packet.batch import sweep

pytestmark = pytest.mark.skipif(
    not fn.packet.ns3_available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)

C = 1250.0  # packets/s: 10 Mb/s of 1000-byte packets


def small(n: int = 4, aqm="droptail", **kw) -> Dumbbell:
    return Dumbbell(
        link=Link.from_packets(C, buffer=100, aqm=aqm), flows=[Flows(n=n, rtt=0.05, **kw)]
    )


class Broken(Dumbbell):
    """A scenario whose plan hands ns-3 an attribute value it cannot parse (ns-3 aborts)."""

    def plan(self, t_end, seed):
        plan = super().plan(t_end, seed)
        plan["links"][0]["attrs"]["MinTh"] = "many"
        return plan


def broken_or_fine(n: float):
    cls = Broken if n == 3 else Dumbbell
    return cls(
        link=Link.from_packets(C, buffer=100, aqm=fn.packet.RED()),
        flows=[Flows(n=int(n), rtt=0.05)],
    )


def test_a_run_is_determined_by_its_scenario_and_seed():
    sc = small(start=(0.0, 0.5))
    a = fn.packet.simulate(sc, 3.0, seed=3)
    b = fn.packet.simulate(sc, 3.0, seed=3)
    c = fn.packet.simulate(sc, 3.0, seed=4)
    np.testing.assert_array_equal(a.queue, b.queue)
    np.testing.assert_array_equal(a.cwnd, b.cwnd)
    assert a.events == b.events
    assert not np.array_equal(a.queue, c.queue)
    # traces: 10 ms samples on [0, 3], the link busy, windows and RTTs of 4 flows
    assert a.time.size == 301 and a.time[-1] == pytest.approx(3.0)
    assert a.cwnd.shape == (301, 4) and np.all(a.rtt[-1] >= 0.05)
    assert a.utilisation(after=1.0) > 0.9
    ds = a.to_xarray()
    assert set(ds.dims) == {"time", "link", "flow", "short_flow"}
    assert float(ds["queue"].max()) <= 100  # the buffer
    assert len(a.plot()) == 2


def test_a_crash_inside_ns3_is_reported_and_the_next_run_works():
    bad = Broken(link=Link.from_packets(C, buffer=100, aqm=fn.packet.RED()), flows=[Flows()])
    with pytest.raises(fn.packet.PacketRunError, match="not properly formatted") as info:
        fn.packet.simulate(bad, 1.0, seed=2)
    assert "seed=2" in str(info.value) and isinstance(info.value, fn.FluidnetError)
    assert fn.packet.simulate(small(), 0.5).events > 0


def test_a_run_past_its_timeout_is_killed_and_reported():
    with pytest.raises(fn.packet.PacketRunError, match="timeout of 0.5 s"):
        fn.packet.simulate(small(n=20), 600.0, timeout=0.5)


def test_a_sweep_keeps_its_other_runs_when_one_crashes(tmp_path):
    store = tmp_path / "sweep"
    ds = sweep(broken_or_fine, 1.0, grid={"n": [2, 3]}, seeds=[0], store=store)
    err = ds["error"].sel(n=3.0, seed=0).item()
    assert "not properly formatted" in err
    assert ds["error"].sel(n=2.0, seed=0).item() == ""
    assert math.isnan(ds["mean_queue"].sel(n=3.0, seed=0))
    assert ds["utilisation"].sel(n=2.0, seed=0) > 0.5
    again = sweep(broken_or_fine, 1.0, grid={"n": [2, 3]}, seeds=[0], store=store)
    assert again.identical(ds)  # read back from the store: nothing ran again
    assert fn.sweep.Store(store).progress() == (2, 2)


def test_sbrm_components_reach_zimmermanns_steady_state():
    # SBRM queue and source (Zimmermann 2005): p* = N w / c (5.5.6), b* = b0 - ln(1 - p*)/gamma
    # (5.5.7). N = 10, w = 20, c = 1250: p* = 0.16, b* = 53.49 packets.
    N, w, gamma, b0 = 10, 20.0, 0.05, 50.0
    sc = Dumbbell(
        link=Link.from_packets(C, buffer=500, aqm=fn.packet.SBRM(gamma=gamma, b0=b0)),
        flows=[Flows(n=N, rtt=0.05, transport=Transport("sbrm", w=w, kappa=0.2))],
    )
    run = fn.packet.simulate(sc, 12.0, seed=1)
    s = summary(run, after=4.0)
    p_star = N * w / C
    assert s["mark_rate"] == pytest.approx(p_star, rel=0.1)
    assert s["mean_queue"] == pytest.approx(b0 - math.log(1 - p_star) / gamma, abs=2.0)
    assert s["utilisation"] > 0.99 and s["drop_rate"] == 0


def test_rcp_router_gives_every_flow_its_share():
    # RCP (Dukkipati & McKeown, eq (2)) is at rest when alpha (C - y) = beta q/d0: the N flows
    # send y = N R = C - (beta/alpha) q/d0 (C for an empty queue), each at R = y/N.
    N, alpha, beta, d0 = 10, 0.1, 1.0, 0.1
    sc = Dumbbell(
        link=Link.from_packets(C, buffer=500, aqm=fn.packet.RCP(alpha, beta, initial_rtt=d0)),
        flows=[Flows(n=N, rtt=d0, transport="rcp")],
    )
    run = fn.packet.simulate(sc, 20.0, seed=1)
    tail = run.time >= 10.0
    q = run.mean_queue(after=10.0)
    rest = (1 - beta / alpha * q / (d0 * C)) / N  # R/C at rest for the measured queue
    assert q < 3 and np.mean(run.aqm_state[tail, 0]) == pytest.approx(rest, rel=0.05)
    rates = np.mean(run.sender_rate[tail], axis=0)
    np.testing.assert_allclose(rates, rest * C, rtol=0.05)
    assert run.utilisation(after=10.0) == pytest.approx(N * rest, rel=0.05)


def test_pi_aqm_holds_the_queue_at_its_reference():
    # The integral action removes the steady-state error: the queue settles at q_ref
    # (Hollot et al. 2001). Gains from their design rule for this network.
    N, R0, q_ref = 10, 0.1, 60.0
    gains = fn.models.hollot_pi_design(N, C, R0 + q_ref / C)
    pi = fn.packet.PI.from_gains(gains["K_pi"], gains["z"], q_ref)
    sc = Dumbbell(link=Link.from_packets(C, buffer=400, aqm=pi), flows=[Flows(n=N, rtt=R0)])
    run = fn.packet.simulate(sc, 30.0, seed=1)
    assert run.mean_queue(after=15.0) == pytest.approx(q_ref, rel=0.2)
    assert np.all(run.aqm_state[run.time > 15, 0] > 0)


def test_short_flows_complete_and_are_timed():
    sc = Dumbbell(
        link=Link.from_packets(C, buffer=200),
        flows=[ShortFlows(arrival_rate=20, mean_size=10, shape=2.0, rtt=0.05, stop=3.0)],
    )
    run = fn.packet.simulate(sc, 5.0, seed=2)
    fct = run.completion_times()
    assert fct.size > 30 and np.all(np.isfinite(fct))
    # no flow finishes before the handshake, half a round trip and its own transmission time
    assert np.all(fct >= fn.flowlevel.fct_lower_bound(run.short_size, C=C, rtpd=0.05) - 1e-3)


def test_samples_stop_at_t_end():
    # issue 33: with samples closer than the stop's 1 us of slack, samples past t_end came back
    # (0.05 s in 100001 samples gave 100002, the last at 0.0500005 s)
    run = fn.packet.simulate(small(n=2), 0.05, n_points=100_001, store=False)
    assert run.time.size == 100_001 and run.queue.shape == (100_001, 1)
    assert run.time[-1] == pytest.approx(0.05, abs=1e-9) and run.time.max() <= 0.05 + 1e-12
    np.testing.assert_allclose(np.diff(run.time), 0.05 / 100_000, rtol=1e-6)


def test_sweeps_of_simulate_many_keep_their_other_runs(tmp_path):
    bad = Broken(link=Link.from_packets(C, buffer=100, aqm=fn.packet.RED()), flows=[Flows()])
    good = small(n=2)
    out = fn.packet.simulate_many([good, bad], 1.0, seeds=(1,), store=tmp_path, on_error="return")
    assert isinstance(out[0][0], fn.packet.PacketRun)
    assert isinstance(out[1][0], fn.packet.PacketRunError)
    with pytest.raises(fn.packet.PacketRunError, match="not properly formatted"):
        fn.packet.simulate_many([good, bad], 1.0, seeds=(1,), store=tmp_path)
    assert fn.packet.simulate_many([good], 1.0, seeds=(1,), store=tmp_path)[0][0].stored
