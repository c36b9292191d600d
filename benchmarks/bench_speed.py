"""Speed of the linear analysis (issue 14, and issue 18 item 7), per-point method against batch.

Rows, each timed in this run (wall clock and CPU time of this process, one BLAS thread):

1. The RCP 100 x 100 (alpha, beta) stability chart, serial: ``method="batch"`` on the whole
   grid, ``method="pointwise"`` (the full method at every point, as before the batch existed) on
   a 20 x 20 subgrid; the number of verdicts that differ from RCP's closed-form region
   (alpha = w sin w, beta = w^2 cos w; Dukkipati & McKeown) at points farther than 1e-3 from it.
2. Per point: ``model.linearize(**params)`` against :func:`linearize_batch` over the grid.
3. Per point: ``characteristic_roots`` (with and without ``threadpoolctl`` limiting the BLAS
   threads around it, as each call did before) against :func:`rightmost_roots` over the grid.
4. ``linearize`` of a 200-state network model (Kelly's primal law on a parking-lot network: one
   long flow over 199 links, one short flow per link, a delay per flow): the first call (plan
   built: sparse Jacobians compiled) and later calls.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.linear.batch import rightmost_roots
from fluidnet.linear.roots import characteristic_roots
from fluidnet.symbolic.linearize import linearize_batch

ALPHA = np.linspace(0.01, 2.0, 100)
BETA = np.linspace(0.0, 0.7, 100)
W_PEAK = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)


class _Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def _exact(alpha: float, beta: float) -> bool:
    if beta <= 0 or beta >= W_PEAK**2 * math.cos(W_PEAK):
        return False
    w1 = brentq(lambda x: x**2 * math.cos(x) - beta, 1e-12, W_PEAK)
    w2 = brentq(lambda x: x**2 * math.cos(x) - beta, W_PEAK, math.pi / 2)
    return w1 * math.sin(w1) < alpha < w2 * math.sin(w2)


def _far_from_boundary(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    w = np.linspace(0.0, math.pi / 2, 20001)
    ca, cb = w * np.sin(w), w**2 * np.cos(w)
    a, b = A.ravel(), B.ravel()
    d = np.abs(b)
    for i in range(0, a.size, 256):
        near = np.hypot(a[i : i + 256, None] - ca, b[i : i + 256, None] - cb).min(axis=1)
        d[i : i + 256] = np.minimum(d[i : i + 256], near)
    return (d > 1e-3).reshape(A.shape)


def chart() -> dict:
    model = fn.models.rcp()
    # one small chart first: plans compiled, one-time imports done, before timing
    fn.stability_chart(model, {"alpha": ALPHA[:3], "beta": BETA[:3]}, progress=False)
    with _Timer() as batch:
        ds = fn.stability_chart(model, {"alpha": ALPHA, "beta": BETA}, progress=False)
    sub = {"alpha": ALPHA[::5], "beta": BETA[::5]}
    with _Timer() as point:
        dp = fn.stability_chart(model, sub, method="pointwise", progress=False)
    A, B = np.meshgrid(ALPHA, BETA, indexing="ij")
    exact = np.array([[_exact(a, b) for b in BETA] for a in ALPHA])
    far = _far_from_boundary(A, B)
    same = np.allclose(dp["abscissa"].values, ds["abscissa"].values[::5, ::5], rtol=1e-9)
    return {
        "batch_seconds": batch.wall,
        "batch_cpu_seconds": batch.cpu,
        "batch_points_per_second": A.size / batch.wall,
        "pointwise_points_per_second": dp["abscissa"].size / point.wall,
        "pointwise_cpu_points_per_second": dp["abscissa"].size / point.cpu,
        "mismatches_far_from_boundary": int(np.sum(ds["stable"].values[far] != exact[far])),
        "points_far_from_boundary": int(far.sum()),
        "every_point_certified": bool(np.all(np.isfinite(ds["certificate"].values))),
        "batch_equals_pointwise_on_subgrid": bool(same),
    }


def per_point() -> dict:
    model = fn.models.rcp()
    model.linearize()
    A, B = np.meshgrid(ALPHA, BETA, indexing="ij")
    picks = np.linspace(0, A.size - 1, 200).astype(int)
    with _Timer() as lin_one:
        systems = [model.linearize(alpha=A.flat[k], beta=B.flat[k]) for k in picks]
    with _Timer() as lin_batch:
        lb = linearize_batch(model, {"alpha": A.ravel(), "beta": B.ravel()})
    with _Timer() as roots_one:
        for lin in systems:
            characteristic_roots(lin, k=2)
    out = {}
    try:
        from threadpoolctl import threadpool_limits

        with _Timer() as roots_tp:
            for lin in systems:
                with threadpool_limits(limits=1, user_api="blas"):
                    characteristic_roots(lin, k=2)
        out["roots_with_threadpoolctl_ms"] = 1e3 * roots_tp.wall / len(systems)
        out["roots_with_threadpoolctl_cpu_ms"] = 1e3 * roots_tp.cpu / len(systems)
    except ImportError:
        pass
    with _Timer() as roots_batch:
        found = rightmost_roots(lb.stack, A.shape)
    out.update(
        {
            "linearize_ms": 1e3 * lin_one.wall / len(picks),
            "linearize_cpu_ms": 1e3 * lin_one.cpu / len(picks),
            "linearize_batch_us": 1e6 * lin_batch.wall / A.size,
            "linearize_batch_cpu_us": 1e6 * lin_batch.cpu / A.size,
            "roots_ms": 1e3 * roots_one.wall / len(systems),
            "roots_cpu_ms": 1e3 * roots_one.cpu / len(systems),
            "roots_batch_us": 1e6 * roots_batch.wall / A.size,
            "roots_batch_cpu_us": 1e6 * roots_batch.cpu / A.size,
            "batch_stats": found.stats,
        }
    )
    return out


def network_model(links: int = 199):
    S = links + 1
    A = np.zeros((links, S))
    A[:, 0] = 1.0
    A[np.arange(links), np.arange(1, S)] = 1.0
    # x = 1 is the equilibrium: every link carries 2 = c (price (2/2)^4 = 1), so source 0 (on
    # every link) pays 199 and the others 1 (w_n = x_n p_n)
    w = [float(links)] + [1.0] * links
    return fn.models.kelly_primal(A, w=w, T=[0.05 + 0.001 * i for i in range(S)], c=2.0, B=4.0)


def large_linearize() -> dict:
    with _Timer() as build:
        model = network_model()
        model.form  # noqa: B018 - the canonical form, built once
    eq = {n: 1.0 for n in model.state_names}  # the equilibrium (see network_model)
    with _Timer() as first:
        lin = model.linearize(equilibrium=eq)
    with _Timer() as again:
        model.linearize(equilibrium=eq)
    return {
        "states": lin.n,
        "lags": len(model.form.lags),
        "delays": len(lin.delays),
        "model_build_seconds": build.wall,
        "first_linearize_seconds": first.wall,
        "first_linearize_cpu_seconds": first.cpu,
        "later_linearize_seconds": again.wall,
    }


def main() -> dict:
    out = {"chart": chart(), "per_point": per_point(), "large": large_linearize()}
    c, p, g = out["chart"], out["per_point"], out["large"]
    rows = [
        (
            "RCP 100x100 chart, serial",
            f"{c['pointwise_points_per_second']:.0f} points/s (CPU "
            f"{c['pointwise_cpu_points_per_second']:.0f}; pointwise, 20x20)",
            f"{c['batch_points_per_second']:.0f} points/s ({c['batch_seconds']:.2f} s; "
            f"CPU {c['batch_cpu_seconds']:.2f} s)",
            ">= 5000 points/s",
        ),
        (
            "  verdicts vs closed form (d > 1e-3)",
            "",
            f"{c['mismatches_far_from_boundary']} of {c['points_far_from_boundary']} differ; "
            f"certified: {c['every_point_certified']}",
            "0",
        ),
        (
            "per point: linearize",
            f"{p['linearize_ms']:.2f} ms (CPU {p['linearize_cpu_ms']:.2f} ms)",
            f"{p['linearize_batch_us']:.1f} us (CPU {p['linearize_batch_cpu_us']:.1f} us)",
            "<= 20 us",
        ),
        (
            "per point: characteristic_roots",
            f"{p['roots_ms']:.2f} ms (CPU {p['roots_cpu_ms']:.2f} ms"
            + (
                f"; {p['roots_with_threadpoolctl_cpu_ms']:.2f} ms with threadpoolctl)"
                if "roots_with_threadpoolctl_ms" in p
                else ")"
            ),
            f"{p['roots_batch_us']:.0f} us (CPU {p['roots_batch_cpu_us']:.0f} us)",
            "<= 100 us",
        ),
        (
            f"linearize, {g['states']} states",
            f"{g['lags']} lags, {g['delays']} delays",
            f"{g['first_linearize_seconds']:.2f} s first (CPU "
            f"{g['first_linearize_cpu_seconds']:.2f} s), "
            f"{g['later_linearize_seconds']:.2f} s later",
            "<= 2 s",
        ),
    ]
    print(f"{'work':38s} {'per point (pointwise method)':48s} {'batch / now':44s} goal")
    for r in rows:
        print(f"{r[0]:38s} {r[1]:48s} {r[2]:44s} {r[3]}")
    print(f"batch: {p['batch_stats']}")
    return out


if __name__ == "__main__":
    main()
