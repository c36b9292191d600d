"""Packet stage benchmarks (issue 28): ns-3 speed, fluid-to-packet cost, agreement on MGT/RED.

1. **The MGT/RED default** (Misra, Gong & Towsley: 60 NewReno flows, 3750 packets/s of 1000
   bytes, 200 ms round trip, RED 50/600/0.1, weight 1.33e-6) in ns-3 with one ACK per segment,
   ``T_END`` simulated seconds, seed 1, RED's drop spacing as is and compensated
   (``red_spacing``): mean queue and standard deviation over the second half against the fluid
   model's; the speed of ns-3 (events and simulated seconds per CPU second of the worker) and
   the cost ratio of a packet run to the fluid run of the same length (CPU seconds; the fluid
   run's compilation excluded, it is cached).
2. **An agreement map** of MGT/RED on 10 Mb/s (1250 packets/s, RED 20/200/0.1, weight 0.001
   per packet) over the number of flows and the round-trip delay (``fn.packet.agreement_map``,
   runs of ``MAP_T_END`` s, one seed): the fraction of grid points where the fluid verdict
   (linear stability) and the packet verdict (the swing criterion of
   :mod:`fluidnet.packet.analysis`) agree, and the points where they do not. The figure is
   written to ``benchmarks/results/packet_agreement.png``.

``FLUIDNET_BENCH_PACKET_T_END`` (default 100), ``FLUIDNET_BENCH_PACKET_MAP_T_END`` (default 40)
and ``FLUIDNET_BENCH_PACKET_MAP`` (``0`` skips part 2) change the sizes. Needs
``fluidnet[packet]``.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import numpy as np

import fluidnet as fn

T_END = float(os.environ.get("FLUIDNET_BENCH_PACKET_T_END", "100"))
MAP_T_END = float(os.environ.get("FLUIDNET_BENCH_PACKET_MAP_T_END", "40"))
RUN_MAP = os.environ.get("FLUIDNET_BENCH_PACKET_MAP", "1") != "0"
MAP_GRID = {"N": [5, 10, 20, 40], "Tp": [0.05, 0.1, 0.15, 0.2, 0.3]}


def default_network() -> dict:
    m = fn.models.mgt_red()
    fn.simulate(m, 1.0, history=fn.packet.mapping.fluid_view(m)["history"])  # compile
    t0 = time.process_time()
    sol = fn.simulate(m, T_END, history=fn.packet.mapping.fluid_view(m)["history"])
    fluid_cpu = time.process_time() - t0
    out = {"t_end": T_END, "fluid_cpu_s": fluid_cpu}
    for spacing in ("as_is", "compensate"):
        sc = fn.packet.scenario_for(m, red_spacing=spacing)
        run = fn.packet.simulate(sc, T_END, seed=1)
        c = fn.compare(sol, run)
        out[spacing] = {
            "fluid_mean_queue": c.fluid["mean_queue"],
            "packet_mean_queue": float(c.packets["mean_queue"][0]),
            "packet_queue_std": float(c.packets["queue_std"][0]),
            "fluid_mean_window": c.fluid["mean_window"],
            "packet_mean_window": float(c.packets["mean_window"][0]),
            "packet_utilisation": float(c.packets["utilisation"][0]),
            "events": run.events,
            "worker_cpu_s": run.cpu_time,
            "events_per_cpu_s": run.events / run.cpu_time,
            "simulated_s_per_cpu_s": T_END / run.cpu_time,
            "packet_to_fluid_cost": run.cpu_time / fluid_cpu,
        }
        r = out[spacing]
        print(
            f"MGT/RED default, {T_END:g} s, red_spacing={spacing}: mean queue fluid "
            f"{r['fluid_mean_queue']:.1f}, ns-3 {r['packet_mean_queue']:.1f} "
            f"(std {r['packet_queue_std']:.1f}); window {r['fluid_mean_window']:.2f} vs "
            f"{r['packet_mean_window']:.2f}; {r['events']} events in {r['worker_cpu_s']:.1f} "
            f"CPU s ({r['events_per_cpu_s']:.3g} events/s, {r['simulated_s_per_cpu_s']:.2f} "
            f"simulated s per CPU s); packet/fluid cost {r['packet_to_fluid_cost']:.0f}x",
            flush=True,
        )
    return out


def agreement() -> dict:
    m = fn.models.mgt_red(C=1250, weight=0.001, delta=1 / 1250, min_th=20, max_th=200)
    t0 = time.perf_counter()
    amap = fn.packet.agreement_map(
        m, MAP_GRID, MAP_T_END, seeds=(1,), after=MAP_T_END / 4, boundary_points=20
    )
    wall = time.perf_counter() - t0
    d = amap.data
    disagree = [
        {"N": float(n), "Tp": float(tp), "fluid_stable": bool(d["fluid_stable"].sel(N=n, Tp=tp))}
        for n in MAP_GRID["N"]
        for tp in MAP_GRID["Tp"]
        if float(d["agree"].sel(N=n, Tp=tp)) == 0
    ]
    print(repr(amap), flush=True)
    print("disagreeing points:", disagree, flush=True)
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    ax = amap.plot()
    ax.figure.savefig(out / "packet_agreement.png", dpi=120)
    return {
        "grid": MAP_GRID,
        "t_end": MAP_T_END,
        "agreement": amap.agreement(),
        "disagree": disagree,
        "packet_oscillating": np.asarray(d["packet_oscillating"]).tolist(),
        "fluid_stable": np.asarray(d["fluid_stable"]).tolist(),
        "wall_s": wall,
    }


def main() -> dict:
    if not fn.packet._ns3.available():
        print("ns-3 not installed (pip install 'fluidnet[packet]'): skipped")
        return {"skipped": "ns-3 not installed"}
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "default": default_network()}
    if RUN_MAP:
        res["agreement"] = agreement()
    return res


if __name__ == "__main__":
    main()
