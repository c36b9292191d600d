"""fn.compare: a fluid model next to packet runs of its scenario (one short ns-3 run), and the
confidence intervals over seeds against Student's t table."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet.comparison import METRICS, Comparison

needs_ns3 = pytest.mark.skipif(
    not fn.packet.ns3_available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)

# MGT/RED on 10 Mb/s of 1000-byte packets, 10 flows, RTT 100 ms: fluid-stable, with the
# equilibrium q* = 34.20 packets, W* = 15.92 packets
MODEL = dict(C=1250.0, weight=0.001, delta=1 / 1250, min_th=20.0, max_th=200.0)
POINT = {"N": 10, "Tp": 0.1}


@pytest.fixture(scope="module")
def comparison():
    m = fn.models.mgt_red(**MODEL)
    run = fn.packet.simulate(fn.packet.scenario_for(m, params=POINT), 14.0, seed=1)
    return fn.compare(m, run, params=POINT, after=7.0)


@needs_ns3
def test_fluid_and_packets_agree_on_a_stable_red_point(comparison):
    eq = fn.models.mgt_red(**MODEL).equilibrium(params=POINT)
    fl, pk = comparison.fluid, comparison.packets
    # the fluid side has settled on its equilibrium and does not oscillate
    assert fl["mean_queue"] == pytest.approx(eq["q"], rel=0.02)
    assert fl["mean_window"] == pytest.approx(eq["W"], rel=0.02)
    assert fl["oscillating"] == 0 and fl["utilisation"] == pytest.approx(1.0, abs=1e-3)
    # packets: same mean queue and window within 20 % (measured 35.0 and 16.7 over 30 s, two
    # seeds), the link busy, no packet oscillation by the stated criterion
    assert pk["mean_queue"][0] == pytest.approx(eq["q"], rel=0.2)
    assert pk["mean_window"][0] == pytest.approx(eq["W"], rel=0.2)
    assert pk["utilisation"][0] > 0.97
    assert pk["swing"][0] < 1.0 and pk["oscillating"][0] == 0
    ds = comparison.to_xarray()
    assert list(ds["metric"].values) == list(METRICS) and ds.sizes["seed"] == 1
    assert len(comparison.plot()) == 2
    assert "mean_queue" in repr(comparison)


def test_intervals_over_seeds_use_students_t():
    # three runs 10, 12, 14: mean 12, s = 2, t_{0.975, 2} = 4.303 (printed tables)
    packets = {m: np.array([10.0, 12.0, 14.0]) for m in METRICS}
    c = Comparison(
        fluid=dict.fromkeys(METRICS, 11.0), packets=packets, confidence=0.95, solution=None, runs=[]
    )
    mean, lo, hi = c.interval("mean_queue")
    half = 4.303 * 2 / math.sqrt(3)
    assert mean == 12.0 and lo == pytest.approx(12 - half, rel=1e-3)
    assert hi == pytest.approx(12 + half, rel=1e-3)
    assert c.relative_difference("mean_queue") == pytest.approx(1 / 11)
    packets["period"] = np.array([math.nan, 3.0, math.nan])  # one run with a period
    assert c.interval("period")[0] == 3.0 and math.isnan(c.interval("period")[1])


def test_compare_refuses_bad_input():
    m = fn.models.mgt_red()
    with pytest.raises(fn.ParameterError, match="PacketRun"):
        fn.compare(m, [])
    with pytest.raises(fn.ModelError, match="no packet counterpart"):
        fn.packet.mapping.fluid_view(fn.models.fast_tcp())


def _fake_run(scenario, t_end: float = 4.0, seed: int = 1):
    """A PacketRun of ``scenario`` without ns-3: a queue at 30 packets, windows of 15."""
    from fluidnet.packet.results import PacketRun

    t = np.linspace(0.0, t_end, 401)
    n = scenario.flows[0].n
    zeros = np.zeros((t.size, 1))
    arrays = {
        "time": t,
        "queue": zeros + 30.0,
        "drops": zeros,
        "marks": zeros,
        "departed": np.cumsum(zeros + 10.0, axis=0),
        "aqm_state": zeros,
        "cwnd": np.full((t.size, n), 15.0),
        "rtt": np.full((t.size, n), 0.12),
        "rx": np.zeros((t.size, n)),
        "traced_flow": np.arange(n),
        "flow_start": np.zeros(n),
        "flow_size": np.zeros(n),
        "flow_done": np.full(n, np.nan),
        "flow_group": np.zeros(n, dtype=np.int64),
        "events": np.int64(1),
        "cpu_time": np.float64(0.0),
    }
    return PacketRun(scenario=scenario, t_end=t_end, seed=seed, arrays=arrays)


def test_compare_refuses_runs_of_another_point():
    # issue 33: without params= the fluid model was compared at its defaults (60 flows,
    # Tp = 0.2 s) with runs made at 10 flows and Tp = 0.1 s, silently
    m = fn.models.mgt_red(**MODEL)
    run = _fake_run(fn.packet.scenario_for(m, params=POINT))
    assert run.scenario.fluid_model() == ("mgt_red", {**m.values, "N": 10.0, "Tp": 0.1})
    with pytest.raises(fn.ParameterError) as info:
        fn.compare(m, run)
    message = str(info.value)
    assert "N: fluid 60.0, runs 10.0" in message and "Tp: fluid 0.2, runs 0.1" in message
    assert "params={'N': 10.0, 'Tp': 0.1}" in message  # the remedy, which works:
    c = fn.compare(m, run, params={"N": 10.0, "Tp": 0.1})
    assert c.packets["mean_queue"][0] == pytest.approx(30.0)
    # a solution at another point, another model, a hand-built scenario at another capacity
    sol = fn.simulate(m, 4.0, params={"N": 20, "Tp": 0.1}, history={"W": 1.0, "q": 0.0, "x": 0})
    with pytest.raises(fn.ParameterError, match="N: fluid 20.0, runs 10.0"):
        fn.compare(sol, run)
    with pytest.raises(fn.ParameterError, match="mapped from the fluid model 'mgt_red'"):
        fn.compare(fn.models.mgt_red(**MODEL, gentle=True), run, params=POINT)
    hand = fn.packet.Dumbbell(
        link=fn.packet.Link.from_packets(2500, buffer=800, aqm=fn.packet.RED()),
        flows=[fn.packet.Flows(n=10, rtt=0.1)],
    )
    assert hand.fluid_model() is None
    with pytest.raises(fn.ParameterError, match=r"capacity \(pkts/s\): fluid 1250.0, runs 2500"):
        fn.compare(m, _fake_run(hand), params=POINT)
