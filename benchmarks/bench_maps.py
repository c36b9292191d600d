"""Discrete-time maps (issue 25): the sliding-mode discrete-time law through ``iterate_map``.

1. Ye et al.'s discrete runs, as the paper items call them (topology I, dt = 0.01, 3000 RTTs:
   deterministic from two starts, independent and synchronized random marking; the three-flow
   link, dt = 0.1 and 0.01, 1500 RTTs): wall time of each run in one process with the compile
   cache warm (a second call), and of the first call of a new network (building its
   ``DiscreteMap`` and loading its cached loop).
2. Throughput: steps per second of the random-marking law on a line of ``n`` links with one
   long flow and one flow per link (``n + 1`` flows), for n = 3, 10, 30, and the time to build
   and compile its loop with an empty cache (the code generator's common subexpressions grow
   faster than linearly: about 3.5 s of source generation at n = 30).

Measured on the shared 2-core development machine (under load from other developers), C
backend, 2026-11-28: item 1, warm, 8-17 ms per 300 000-step topology-I run with deterministic
marking and 30-50 ms with random marking (numpy draws 3 or 1 uniforms per step); the per-model
numba loop this replaced took 19-46 ms for the same runs, and a fresh process spent 1.7-2.5 s
importing numba and loading its first loop, against 0.05-0.1 s now. Item 2: 6.0, 2.6 and 0.57
million steps/s for n = 3, 10, 30; first call with an empty cache 0.9, 1.6 and 6.7 s.

Run with ``make bench`` (or ``python benchmarks/bench_maps.py``); ``main()`` returns the numbers.
"""

from __future__ import annotations

import time

import numpy as np

from fluidnet.models import single_link_network, tcp_law, topology_one_network
from fluidnet.models.sliding_mode import BinaryFeedbackNetwork


def _timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def ye_runs() -> dict:
    """Item 1: the paper's discrete runs, best of three with a warm cache."""
    t1 = topology_one_network("I")
    link = single_link_network([tcp_law(8e-3 / r) for r in (0.012, 0.022, 0.080)], 20.0)
    runs = {
        "topology I, deterministic, symmetric": (t1, (3000.0, 0.01, [10, 10, 10, 5]), {}),
        "topology I, deterministic, asymmetric": (t1, (3000.0, 0.01, [10, 20, 30, 5]), {}),
        "topology I, random independent": (
            t1,
            (3000.0, 0.01, [10, 10, 10, 5]),
            {"marking": "random", "seed": 1},
        ),
        "topology I, random synchronized": (
            t1,
            (3000.0, 0.01, [10, 10, 10, 5]),
            {"marking": "random", "seed": 1, "correlation": "synchronized"},
        ),
        "link, dt = 0.1": (link, (1500.0, 0.1, [1.0, 1.0, 1.0]), {}),
        "link, dt = 0.01": (link, (1500.0, 0.01, [1.0, 1.0, 1.0]), {}),
    }
    out = {}
    for name, (net, args, kw) in runs.items():
        net.discrete(*args, **kw)  # compile or load
        out[name] = _timed(lambda net=net, args=args, kw=kw: net.discrete(*args, **kw))
    # a network built again: its map and loop are found by structure
    t0 = time.perf_counter()
    topology_one_network("I").discrete(3000.0, 0.01, [10, 10, 10, 5])
    out["topology I built again, first call"] = time.perf_counter() - t0
    return out


def line_network(n: int) -> BinaryFeedbackNetwork:
    """``n`` links in a row: flow 0 crosses them all, flow l + 1 crosses link l only."""
    routes = np.zeros((n, n + 1), dtype=int)
    routes[:, 0] = 1
    routes[np.arange(n), np.arange(1, n + 1)] = 1
    return BinaryFeedbackNetwork(routes, 100.0, [tcp_law(0.2)] * (n + 1))


def throughput() -> dict:
    """Item 2: steps per second of the random-marking law on line networks."""
    out = {}
    for n in (3, 10, 30):
        net = line_network(n)
        x0 = [5.0] * (n + 1)
        steps = 200_000
        t0 = time.perf_counter()
        net.discrete(1.0, 0.01, x0, marking="random")  # compile or load
        first = time.perf_counter() - t0
        sec = _timed(
            lambda net=net, x0=x0, s=steps: net.discrete(s * 0.01, 0.01, x0, marking="random")
        )
        out[n] = {"steps": steps, "seconds": sec, "steps_per_second": steps / sec, "first": first}
    return out


def main() -> dict:
    out = {"ye": ye_runs(), "throughput": throughput()}
    for name, sec in out["ye"].items():
        print(f"{name:42s} {1e3 * sec:8.1f} ms")
    for n, r in out["throughput"].items():
        print(
            f"line of {n:3d} links: {r['steps_per_second']:12.0f} steps/s ({r['steps']} steps), "
            f"first call {r['first']:.2f} s"
        )
    return out


if __name__ == "__main__":
    main()
