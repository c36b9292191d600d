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

3. **The cost of the packet items** (issue 35): every registered item that runs ns-3 (found by
   ``require_ns3`` in its module), each in a fresh ``fluidnet reproduce <item> --rerun``
   process: CPU seconds of the process and everything it started (the ns-3 server and its
   forked runs: ``getrusage(RUSAGE_CHILDREN)`` around it) and wall seconds; then the same
   item again with its stores (the second run reads it back). Then all of them on a Dask
   ``LocalCluster`` of 1 and of 2 worker processes (``--scheduler``: each ns-3 run one task),
   wall seconds and CPU seconds (the client's, and the cluster's processes' own and their
   reaped children's, from psutil, before the cluster closes).

``FLUIDNET_BENCH_PACKET_T_END`` (default 100), ``FLUIDNET_BENCH_PACKET_MAP_T_END`` (default 40)
and ``FLUIDNET_BENCH_PACKET_MAP`` (``0`` skips part 2), ``FLUIDNET_BENCH_PACKET_ITEMS`` (``0``
skips part 3; a comma-separated list of items runs those) and ``FLUIDNET_BENCH_PACKET_DASK``
(``0`` skips the Dask comparison) change the sizes. Needs ``fluidnet[packet]`` (and
``fluidnet[dask]`` for the cluster). CPU times are the honest measure on a shared machine;
wall times depend on its load.
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
ITEMS = os.environ.get("FLUIDNET_BENCH_PACKET_ITEMS", "")
RUN_DASK = os.environ.get("FLUIDNET_BENCH_PACKET_DASK", "1") != "0"
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
        m, MAP_GRID, MAP_T_END, seeds=(1,), after=MAP_T_END / 4, boundary_points=20, store=False
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


def packet_items() -> list[str]:
    """``paper:item`` of every registered item whose module asks for ns-3."""
    import inspect

    from fluidnet.papers.registry import papers

    if ITEMS and ITEMS != "1":
        return [name.strip() for name in ITEMS.split(",") if name.strip()]
    found = []
    for key, p in papers().items():
        for name, item in p.items.items():
            if "require_ns3" in inspect.getsource(inspect.getmodule(item.func)):
                found.append(f"{key}:{name}")
    return found


def _reproduce(args: list[str], env: dict | None = None) -> dict:
    """``fluidnet reproduce ARGS`` in a fresh process: CPU (with everything it started) and
    wall seconds, and its last line."""
    import resource
    import subprocess
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "fluidnet", "reproduce", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = out.stdout.strip().splitlines()
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "status": out.returncode,
        "summary": lines[-1] if lines else out.stderr[-500:],
    }


def _cluster_cpu() -> float:
    """CPU seconds of this process's live descendants (a LocalCluster's processes, their ns-3
    servers) and of the children they reaped (the forked runs)."""
    import psutil

    total = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def item_costs() -> dict:
    import tempfile

    items = packet_items()
    root = Path(tempfile.mkdtemp(prefix="fluidnet-bench-items-"))
    out: dict = {"items": {}}
    for name in items:
        store = ["--store", str(root / name.replace(":", "-"))]
        first = _reproduce([name, "--out", str(root / "out"), *store])  # a new store: computed
        first_store = _reproduce([name, "--out", str(root / "fresh"), *store])  # runs stored
        again = _reproduce([name, "--out", str(root / "fresh"), *store])  # all read back
        out["items"][name] = {"first": first, "runs_stored": first_store, "second": again}
        print(
            f"{name}: {first['cpu_s']:.1f} CPU s ({first['wall_s']:.1f} s wall) computed; "
            f"{first_store['cpu_s']:.1f} CPU s with its ns-3 runs stored; "
            f"{again['cpu_s']:.1f} CPU s read back -- {first['summary']}",
            flush=True,
        )
    total = sum(v["first"]["cpu_s"] for v in out["items"].values())
    print(f"packet items: {total:.1f} CPU s in all", flush=True)
    out["total_cpu_s"] = total
    if RUN_DASK:
        out["dask"] = dask_workers(items, root)
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    return out


def dask_workers(items: list[str], root: Path) -> dict:
    """The packet items on a LocalCluster of 1 and of 2 workers (each ns-3 run one task)."""
    try:
        from dask.distributed import LocalCluster
    except ImportError:
        print("dask.distributed not installed: Dask comparison skipped", flush=True)
        return {"skipped": "dask not installed"}
    res = {}
    for workers in (1, 2):
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            cpu0 = _cluster_cpu()
            run = _reproduce(
                [*items, "--rerun", "--out", str(root / f"dask{workers}"),
                 "--scheduler", cluster.scheduler_address]
            )  # fmt: skip
            run["cluster_cpu_s"] = _cluster_cpu() - cpu0
        res[workers] = run
        print(
            f"Dask LocalCluster, {workers} worker(s): {run['wall_s']:.1f} s wall, "
            f"{run['cpu_s']:.1f} CPU s client + {run['cluster_cpu_s']:.1f} CPU s cluster -- "
            f"{run['summary']}",
            flush=True,
        )
    return res


def main() -> dict:
    if not fn.packet.ns3_available():
        print("ns-3 not installed (pip install 'fluidnet[packet]'): skipped")
        return {"skipped": "ns-3 not installed"}
    res: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    if T_END > 0:
        res["default"] = default_network()
    if RUN_MAP:
        res["agreement"] = agreement()
    if ITEMS != "0":
        res["items"] = item_costs()
    return res


if __name__ == "__main__":
    main()
