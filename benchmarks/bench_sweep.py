"""Sweep benchmarks (issue 15): a killed and resumed chart, and the cost of Dask tasks.

1. A 100 000-point RCP stability chart (Dukkipati & McKeown, alpha in [0.01, 2], beta in
   [0, 0.7], d0 = 0.2 s) on 2 worker processes with a checkpoint store: a separate process
   starts it and is killed (SIGKILL) once part of the work items (blocks of rows of a batch
   chart) are in the store; the same call
   is then run again. Reported: the uninterrupted time, how much the store held at the kill,
   the time of the rerun and the points it computed, and whether its result is identical (bit
   for bit, ``Dataset.identical``) to an uninterrupted run without store.
2. Dask task overhead on the RCP chart: a LocalCluster of 2 worker processes runs a chart of
   ``DASK_POINTS`` points with the default chunking. Reported: the serial time (the work),
   the Dask wall time, the extra core-seconds ``(2 x wall - serial) / serial`` (which include
   each new worker's start: imports, and the model, whose built pieces are shipped with the
   tasks; shown by the time of a first 2-point chart, then of a second one on the same workers;
   meaningful only on an otherwise idle machine), and the bare cost of a task
   (round trip of an empty task) times the number of tasks, over the work: the task overhead.

``FLUIDNET_BENCH_CHART_POINTS`` (default 100000) and ``FLUIDNET_BENCH_DASK_POINTS`` (default
3600) change the sizes.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import fluidnet as fn
from fluidnet.sweep import ProcessExecutor, Store

CHART_POINTS = int(os.environ.get("FLUIDNET_BENCH_CHART_POINTS", "100000"))
DASK_POINTS = int(os.environ.get("FLUIDNET_BENCH_DASK_POINTS", "3600"))
#: The first run is killed when the store holds this fraction of the points.
KILL_AT = 0.4


def _grid(points: int) -> dict[str, np.ndarray]:
    n_beta = max(2, int(round(math.sqrt(points * 0.35 / 1.99))))
    n_alpha = max(2, points // n_beta)
    return {"alpha": np.linspace(0.01, 2.0, n_alpha), "beta": np.linspace(0.0, 0.7, n_beta)}


_RUN = textwrap.dedent(
    """
    import sys, numpy as np, fluidnet as fn
    import fluidnet.stability.chart as chart
    from fluidnet.sweep import ProcessExecutor
    chart.CHUNK_POINTS = {chunk}
    grid = {{"alpha": np.linspace(0.01, 2.0, {na}), "beta": np.linspace(0.0, 0.7, {nb})}}
    fn.stability_chart(fn.models.rcp(), grid, executor=ProcessExecutor(2), store=sys.argv[1],
                       progress=False)
    """
)


#: Points per work item of the killed chart: a whole chart takes a few seconds, so items
#: smaller than the default let the kill land while the store is part full.
KILL_CHUNK_POINTS = 2048


def killed_and_resumed(points: int = CHART_POINTS) -> dict:
    import fluidnet.stability.chart as chart

    chart.CHUNK_POINTS = KILL_CHUNK_POINTS  # the same cut in every run compared
    grid = _grid(points)
    n = grid["alpha"].size * grid["beta"].size
    model = fn.models.rcp()
    t0 = time.perf_counter()
    reference = fn.stability_chart(model, grid, executor=ProcessExecutor(2), progress=False)
    uninterrupted = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chart"
        script = _RUN.format(na=grid["alpha"].size, nb=grid["beta"].size, chunk=KILL_CHUNK_POINTS)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", script, str(path)], env=env)
        store = Store(path)
        # the store counts items: blocks of rows for a batch chart, points otherwise
        while proc.poll() is None:
            time.sleep(0.02)
            if store.exists:
                done, total = store.progress()
                if done >= KILL_AT * total:
                    proc.send_signal(signal.SIGKILL)
                    break
        proc.wait()
        killed_after = time.perf_counter() - t0
        held, total = store.progress()
        t0 = time.perf_counter()
        resumed = fn.stability_chart(
            model, grid, executor=ProcessExecutor(2), store=path, progress=False
        )
        rerun = time.perf_counter() - t0
    return {
        "points": n,
        "uninterrupted_seconds": uninterrupted,
        "killed": proc.returncode == -signal.SIGKILL,
        "killed_after_seconds": killed_after,
        "items_in_store_at_kill": f"{held}/{total}",
        "rerun_seconds": rerun,
        "rerun_computed_items": total - held,
        "identical_to_uninterrupted": bool(resumed.identical(reference)),
    }


def dask_overhead(points: int = DASK_POINTS) -> dict:
    from dask.distributed import Client, LocalCluster

    from fluidnet.sweep import DaskExecutor

    grid = _grid(points)
    model = fn.models.rcp()
    fn.stability_chart(model, {"alpha": [0.4], "beta": [0.2]})  # build the plans once
    t0 = time.perf_counter()
    serial = fn.stability_chart(model, grid, progress=False)
    work = time.perf_counter() - t0
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        with Client(cluster) as client:
            executor = DaskExecutor(client)
            t0 = time.perf_counter()  # a 2-point chart: starting the workers' model
            fn.stability_chart(model, {"alpha": [0.4, 0.8], "beta": [0.2]}, executor=executor)
            setup = time.perf_counter() - t0
            t0 = time.perf_counter()  # another chart of the same model: the workers keep it
            fn.stability_chart(model, {"alpha": [0.5, 0.9], "beta": [0.3]}, executor=executor)
            again = time.perf_counter() - t0
            n = serial["stable"].size
            tasks = math.ceil(n / executor.chunk_size(n))
            t0 = time.perf_counter()
            on_dask = fn.stability_chart(model, grid, executor=executor, progress=False)
            wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            client.gather([client.submit(abs, i, pure=False) for i in range(tasks)])  # no work
            per_task = (time.perf_counter() - t0) / tasks
    finally:
        cluster.close()
    return {
        "points": int(n),
        "tasks": tasks,
        "serial_seconds": work,
        "dask_wall_seconds": wall,
        "dask_two_point_chart_seconds": setup,
        "dask_two_point_chart_again_seconds": again,
        "extra_core_seconds_fraction": (2 * wall - work) / work,
        "task_round_trip_ms": per_task * 1e3,
        "task_overhead_fraction": per_task * tasks / work,
        "identical_to_serial": bool(on_dask.identical(serial)),
    }


def main() -> dict:
    out = {"dask_overhead": dask_overhead(), "chart_killed_and_resumed": killed_and_resumed()}
    r = out["chart_killed_and_resumed"]
    print(
        f"chart {r['points']} points, 2 processes: uninterrupted {r['uninterrupted_seconds']:.1f}"
        f" s; killed (SIGKILL: {r['killed']}) after {r['killed_after_seconds']:.1f} s with "
        f"{r['items_in_store_at_kill']} blocks stored; rerun {r['rerun_seconds']:.1f} s "
        f"computing {r['rerun_computed_items']} blocks; identical: "
        f"{r['identical_to_uninterrupted']}"
    )
    r = out["dask_overhead"]
    print(
        f"dask chart {r['points']} points in {r['tasks']} tasks: serial {r['serial_seconds']:.1f}"
        f" s, dask {r['dask_wall_seconds']:.1f} s on 2 workers (extra core-seconds "
        f"{100 * r['extra_core_seconds_fraction']:.0f} %; a 2-point chart takes "
        f"{r['dask_two_point_chart_seconds']:.1f} s on new workers, "
        f"{r['dask_two_point_chart_again_seconds']:.2f} s again); task round trip "
        f"{r['task_round_trip_ms']:.1f} ms = {100 * r['task_overhead_fraction']:.2f} % of the "
        f"work; identical: {r['identical_to_serial']}"
    )
    return out


if __name__ == "__main__":
    main()
