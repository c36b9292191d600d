"""One ns-3 run from a plan (:meth:`fluidnet.packet.Scenario.plan`): build, run, collect arrays.

Runs inside a process forked by the packet server (:mod:`fluidnet.packet._server`), which has
loaded ns-3 and compiled fluidnet's components; ns-3's global state (the simulator, node ids,
random streams) is therefore fresh in every run, and a run is a function of its plan and seed.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["run_plan", "warm_up"]


def _array(vec, shape=None) -> np.ndarray:
    n = int(vec.size())
    if n == 0:
        out = np.zeros(0)
    else:
        out = np.array(np.frombuffer(vec.data(), dtype=np.float64, count=n), copy=True)
    return out if shape is None else out.reshape(shape)


def _strings(values) -> tuple[list[str], list[str]]:
    names = list(values)
    return names, [str(values[k]) for k in names]


def run_plan(
    plan: dict, t_end: float, seed: int, dt: float, n_points: int | None = None
) -> dict[str, np.ndarray]:
    """Run ``plan`` for ``t_end`` seconds, taking ``n_points`` samples every ``dt`` (default
    ``t_end/dt + 1``, the last at ``t_end``); return the traces as arrays."""
    import cppyy

    from . import _ns3

    _ns3.load()
    std = cppyy.gbl.std
    Vs = std.vector[std.string]
    Vd = std.vector["double"]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    exp = cppyy.gbl.fluidnet.Experiment(
        int(seed),
        int(plan["packet_size"]),
        int(plan["ack_every"]),
        float(plan["min_rto"]),
        int(plan["initial_window"]),
        float(plan["access_rate"]),
        int(plan["socket_buffer"]),
        bool(plan["ecn_endpoints"]),
    )
    for link in plan["links"]:
        names, values = _strings(link["attrs"])
        exp.AddLink(float(link["rate"]), float(link["delay"]), link["qdisc"], Vs(names), Vs(values))
    for index, g in enumerate(plan["groups"]):
        names, values = _strings(g["attrs"])
        exp.AddGroup(
            g["kind"],
            g["congestion"],
            Vs(names),
            Vs(values),
            bool(g["ecn"]),
            g["sink"],
            int(g["first"]),
            int(g["last"]),
            float(g["access_delay"]),
            Vd(g["starts"]),
            Vd(g["sizes"]),
            float(g.get("loss", 0.0)),
        )
        for key, value in g.get("options", {}).items():
            exp.SetGroupOption(index, key, float(value))
    build = time.process_time() - cpu0
    samples = int(n_points) if n_points is not None else int(round(t_end / dt)) + 1
    exp.Run(float(t_end), float(dt), samples)
    n_links = len(plan["links"])
    times = _array(exp.times)
    T = times.size
    n_traced = int(exp.tracedFlows.size())
    out = {
        "time": times,
        "queue": _array(exp.queue, (T, n_links)),
        "drops": _array(exp.drops, (T, n_links)),
        "marks": _array(exp.marks, (T, n_links)),
        "departed": _array(exp.departed, (T, n_links)),
        "aqm_state": _array(exp.aqmState, (T, n_links)),
        "cwnd": _array(exp.cwnd, (T, n_traced)),
        "rtt": _array(exp.rtt, (T, n_traced)),
        "rx": _array(exp.rx, (T, n_traced)),
        "ssthresh": _array(exp.ssthresh, (T, n_traced)),
        "lost": _array(exp.lost, (T, n_traced)),
        "traced_flow": np.array([int(exp.tracedFlows[i]) for i in range(n_traced)], dtype=np.int64),
        "flow_start": _array(exp.flowStart),
        "flow_size": _array(exp.flowSize),
        "flow_done": _array(exp.flowDone),
        "flow_group": np.array([int(x) for x in exp.flowGroup], dtype=np.int64),
        "events": np.int64(exp.GetEvents()),
        "cpu_time": np.float64(time.process_time() - cpu0),
        "build_cpu_time": np.float64(build),
        "wall_time": np.float64(time.perf_counter() - wall0),
    }
    return out


def warm_scenario():
    """A small scenario that goes through the components of the first packet stage (TCP and RCP,
    long and short flows, RED, PI, SBRM, CoDel and RCP queues): running it once makes cling
    compile their code."""
    from .aqm import PI, RCP, RED, SBRM, CoDel
    from .scenario import Flows, Link, ParkingLot, ShortFlows

    links = [
        Link(10e6, 0.001, 50, RED(min_th=5, max_th=15)),
        Link(10e6, 0.001, 50, PI(q_ref=5)),
        Link(10e6, 0.001, 50, SBRM(gamma=0.1, b0=5)),
        Link(10e6, 0.001, 50, CoDel()),
        Link(10e6, 0.001, 50, RCP()),
    ]
    routing = [
        [1, 1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 0, 1, 0, 0],
        [0, 0, 0, 0, 1, 1],
    ]
    flows = [
        Flows(n=2, rtt=0.01),
        ShortFlows(arrival_rate=50, mean_size=5, rtt=0.01),
        Flows(n=2, rtt=0.01, transport="sbrm"),
        Flows(n=2, rtt=0.01, transport="dctcp"),
        Flows(n=2, rtt=0.01, transport="rcp"),
        ShortFlows(arrival_rate=50, mean_size=5, rtt=0.01, transport="rcp"),
    ]
    return ParkingLot(links=links, routing=routing, flows=flows)


def warm_scenario_laws():
    """A small scenario through the components added for the seed papers' packet items (drop-front
    and AVQ queues, the Kelly, sliding-mode and MRG laws, random losses)."""
    from .aqm import AVQ, DropFront
    from .scenario import Flows, Link, ParkingLot
    from .transport import Transport

    links = [
        Link(10e6, 0.001, 50, DropFront()),
        Link(10e6, 0.001, 50, AVQ(level=0.9, adaptive=True, update_every=10)),
    ]
    flows = [
        Flows(n=1, rtt=0.01, transport="kelly", loss=0.05),
        Flows(n=1, rtt=0.01, transport=Transport("mrg", theta=500, r_max=2)),
        Flows(n=1, rtt=0.01, transport=Transport("kelly", ecn=True)),
    ]
    return ParkingLot(links=links, routing=[[1, 1, 0], [0, 0, 1]], flows=flows)


def warm_scenario_seeds():
    """A small scenario through the components added for the packet halves of Misra, Baras & Ott,
    Dukkipati & McKeown and Zimmermann (edge meters and ORED, the generalized TCP, TCP/RM, XCP's
    router, sender and receivers)."""
    from .aqm import ORED, SBRM, XCP
    from .scenario import Flows, Link, ParkingLot, ShortFlows
    from .transport import Transport

    links = [
        Link(10e6, 0.001, 50, ORED(min_th=2, max_th=10, p_max=0.5)),
        Link(10e6, 0.001, 50, SBRM(gamma=0.1, b0=5)),
        Link(10e6, 0.001, 50, XCP()),
    ]
    flows = [
        Flows(n=2, rtt=0.01, transport=Transport("generalized", alpha=0.0), assured_rate=1e6),
        Flows(n=2, rtt=0.01, transport="tcp_rm"),
        Flows(n=2, rtt=0.01, transport="xcp"),
        ShortFlows(arrival_rate=50, mean_size=5, rtt=0.01, transport="xcp"),
    ]
    return ParkingLot(links=links, routing=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], flows=flows)


def warm_up(t_end: float = 0.3) -> None:
    """Run :func:`warm_scenario_laws`, :func:`warm_scenario_seeds` and :func:`warm_scenario` in
    this process (the packet server, before it forks runs).

    ns-3 numbers the random streams of a process in the order they are made; the counter is
    reset after each of the first two, so the runs forked afterwards draw the same streams as
    when the warm-up was :func:`warm_scenario` alone (their results do not depend on the
    components added since)."""
    import cppyy

    run_plan(warm_scenario_laws().plan(t_end, 0), t_end, 0, 0.01)
    cppyy.gbl.ns3.RngSeedManager.ResetNextStreamIndex()
    run_plan(warm_scenario_seeds().plan(t_end, 0), t_end, 0, 0.01)
    cppyy.gbl.ns3.RngSeedManager.ResetNextStreamIndex()
    run_plan(warm_scenario().plan(t_end, 0), t_end, 0, 0.01)
