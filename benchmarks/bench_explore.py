"""fn.explore: CPU time of one update, for the library's laws (issue 36: within 0.2 s).

An update at a new point asks the stages for the equilibrium, the linearization's roots, the
loop gain's margins and Nyquist count and a nonlinear run (``compute``), then draws the panels
and the chart's point and renders both pictures (``draw``). Measured as CPU time of this
process (the machine is shared: wall time says more about the neighbours than about us), the
median over six updates at new points of one slider, after one warm-up update; the chart is a
3 x 3 grid (its cost is paid once, at the start, and is not part of an update).

Usage: ``python benchmarks/bench_explore.py`` (or ``make bench``).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import fluidnet as fn

#: (model factory, slider, second chart parameter, loop cut)
CASES = [
    ("rcp", "alpha", "beta", "R"),
    ("mgt_red", "Tp", "N", "x"),
    ("sbrm", "kappa", "d", "W"),
    ("reno_red", "d", "N", "W"),
    ("hollot_pi", "Tp", "N", "q"),
    ("xcp", "alpha", "beta", "y"),
    ("fast_tcp", "alpha", "gamma", "w"),
    ("dcqcn", "g", "N", "alpha"),
]

STEPS = (1.02, 1.04, 1.06, 1.08, 1.10, 1.12)


def measure(name: str, x: str, y: str, cut: str) -> dict[str, float]:
    model = getattr(fn.models, name)()
    v = model.values
    grid = {x: np.array([0.9, 1.0, 1.1]) * v[x], y: np.array([0.9, 1.0, 1.1]) * v[y]}
    t0 = time.process_time()
    ex = fn.explore(model, [x, y], cut=cut, chart=grid)
    start = time.process_time() - t0
    ex.set(**{x: v[x] * 1.01})  # warm-up: the first update loads what the others reuse
    rows = []
    for f in STEPS:
        ex.set(**{x: v[x] * f})
        rows.append(dict(ex.last_update))
    out = {k: statistics.median(r[k] for r in rows) for k in ("compute", "draw", "total")}
    out["max_total"] = max(r["total"] for r in rows)
    out["start"] = start
    return out


def main() -> dict:
    results = {}
    print(f"{'model':<10} {'stages':>8} {'picture':>8} {'total':>8} {'worst':>8} {'start':>8}")
    for name, x, y, cut in CASES:
        r = measure(name, x, y, cut)
        results[name] = r
        print(
            f"{name:<10} {1e3 * r['compute']:7.0f}m {1e3 * r['draw']:7.0f}m "
            f"{1e3 * r['total']:7.0f}m {1e3 * r['max_total']:7.0f}m {r['start']:7.1f}s",
            flush=True,
        )
    print("(CPU time of one update, median of 6; m = ms; start: building the explorer)")
    return results


if __name__ == "__main__":
    main()
