"""Stationary window laws (fluidnet.stochastic, issue 12): PDMP solver and Monte Carlo speeds.

1. The PDMP solver on the Sec IV baseline of Misra, Baras & Ott (2000) (standard TCP, ORED
   thresholds 15/95, p_max = 0.02, gamma = 0.75, BDP 5) for m = 500 ... 8000 grid points per
   jump: best-of-3 wall time (with and without the m/2 error estimate), mean and variance, and
   the error against m = 32000.
2. The PDMP solver against the exact constant-marking series on the 25 cases
   alpha = -1 ... 0, c2 = 0.1 ... 0.5 (p = 0.01): largest relative error of mean and CoV, and
   total time.
3. Monte Carlo of the exact chain (17): ACK updates per second of the compiled loop (2000
   chains x 40 000 ACKs after 5000 of burn-in, after a warm-up that compiles), the 95 %
   half-width of the mean, against a vectorized numpy loop of the same chain (laws evaluated
   by ``WindowChain.evaluate``).

Run with ``make bench`` (or ``python benchmarks/run.py stochastic``); ``main()`` returns the
numbers.
"""

from __future__ import annotations

import time

import numpy as np

import fluidnet as fn


def _best(f, repeat: int = 3) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def pdmp_speed() -> dict:
    chain = fn.models.generalized_tcp_chain()
    ref = chain.stationary(m=32000, check=False)
    rows = []
    for m in (500, 1000, 2000, 4000, 8000):
        t_plain, d = _best(lambda m=m: chain.stationary(m=m, check=False))
        t_check, dc = _best(lambda m=m: chain.stationary(m=m))
        rows.append(
            {
                "m": m,
                "points": d.info["points"],
                "seconds": t_plain,
                "seconds_with_error_estimate": t_check,
                "mean": d.mean,
                "var": d.var,
                "error_mean_vs_m32000": abs(d.mean / ref.mean - 1),
                "error_var_vs_m32000": abs(d.var / ref.var - 1),
                "estimated_error_mean": dc.info["error_mean"],
            }
        )
    return {"reference_mean": ref.mean, "reference_var": ref.var, "rows": rows}


def pdmp_vs_series() -> dict:
    import sympy

    w = sympy.Symbol("w", positive=True)
    worst, t0 = 0.0, time.perf_counter()
    for alpha in (-1.0, -0.75, -0.5, -0.25, 0.0):
        for c2 in (0.1, 0.2, 0.3, 0.4, 0.5):
            d = fn.WindowChain(w**alpha, c2 * w, 0.01, window=w).stationary()
            s = fn.constant_mark_distribution(alpha=alpha, c1=1.0, c2=c2, p=0.01)
            worst = max(worst, abs(d.mean / s.mean - 1), abs(d.cov / s.cov - 1))
    return {"cases": 25, "max_relative_error": worst, "seconds": time.perf_counter() - t0}


def _numpy_chain(chain, n_chains: int, n_steps: int, seed: int) -> float:
    """The same chain as a vectorized numpy loop over the chains, with its laws evaluated by
    ``chain.evaluate`` (what one would write without the compiled loop); returns the mean."""
    rng = np.random.default_rng(seed)
    W = np.full(n_chains, chain.zero_drift())
    total = 0.0
    for _ in range(n_steps):
        p = chain.evaluate("mark", W, check=False)
        up = chain.evaluate("increase", W, check=False)
        down = chain.evaluate("decrease", W, check=False)
        total += W.sum()
        W = np.where(rng.random(n_chains) < p, W - down, W + up)
    return total / (n_chains * n_steps)


def monte_carlo_speed() -> dict:
    chain = fn.models.generalized_tcp_chain()
    chain.monte_carlo(n_chains=10, n_steps=100, burn_in=10, seed=0)  # compile (or load cache)
    n_chains, n_steps, burn_in = 2000, 40_000, 5000
    t0 = time.perf_counter()
    d = chain.monte_carlo(n_chains=n_chains, n_steps=n_steps, burn_in=burn_in, seed=1)
    seconds = time.perf_counter() - t0
    lo, hi = d.interval("mean")
    n_np, steps_np = 2000, 2000
    t0 = time.perf_counter()
    _numpy_chain(chain, n_np, steps_np, seed=1)
    seconds_np = time.perf_counter() - t0
    return {
        "n_chains": n_chains,
        "n_steps": n_steps + burn_in,
        "seconds": seconds,
        "updates_per_second": n_chains * (n_steps + burn_in) / seconds,
        "mean": d.mean,
        "mean_ci95_halfwidth": (hi - lo) / 2,
        "cov": d.cov,
        "numpy_updates_per_second": n_np * steps_np / seconds_np,
    }


def main() -> dict:
    out = {
        "pdmp": pdmp_speed(),
        "pdmp_vs_series": pdmp_vs_series(),
        "monte_carlo": monte_carlo_speed(),
    }
    print(
        f"{'PDMP, m':>10s} {'points':>7s} {'time (ms)':>10s} {'with est.':>10s} "
        f"{'mean':>12s} {'rel err':>9s} {'est err':>9s}"
    )
    for r in out["pdmp"]["rows"]:
        print(
            f"{r['m']:10d} {r['points']:7d} {1e3 * r['seconds']:10.1f} "
            f"{1e3 * r['seconds_with_error_estimate']:10.1f} {r['mean']:12.8f} "
            f"{r['error_mean_vs_m32000']:9.1e} {r['estimated_error_mean']:9.1e}"
        )
    r = out["pdmp_vs_series"]
    print(
        f"PDMP vs series, 25 constant-p cases: max relative error {r['max_relative_error']:.1e}"
        f" in {r['seconds']:.2f} s"
    )
    r = out["monte_carlo"]
    print(
        f"Monte Carlo {r['n_chains']} chains x {r['n_steps']} ACKs: {r['seconds']:.2f} s, "
        f"{r['updates_per_second'] / 1e6:.1f} M updates/s (numpy loop "
        f"{r['numpy_updates_per_second'] / 1e6:.1f} M/s); mean {r['mean']:.4f} +- "
        f"{r['mean_ci95_halfwidth']:.4f}, CoV {r['cov']:.4f}"
    )
    return out


if __name__ == "__main__":
    main()
