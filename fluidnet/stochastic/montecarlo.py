"""Monte Carlo of a window chain: many independent chains, compiled, seeded.

Every chain runs the exact per-ACK transitions of :class:`~fluidnet.stochastic.WindowChain`
(Misra, Baras & Ott 2000, eqs (1)-(2); eq (17) for their single flow) — no small-increment
limit. After a burn-in, each chain accumulates power sums of the window (per ACK, and weighted
by the time between ACKs ``1/ack_rate``), the expected marking probability and a histogram.
Point estimates pool all chains; confidence intervals come from the spread of the same
statistic over ``groups`` disjoint groups of chains (batch means with independent batches,
Student t with ``groups - 1`` degrees of freedom).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError, ParameterError
from ..options import seed_option
from .checks import require_chain
from .distribution import QUANTILES, WindowDistribution, quantile_label

if TYPE_CHECKING:
    from .chain import WindowChain

__all__ = ["monte_carlo"]


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise OptionError(f"{name} = {value!r} must be an integer >= {minimum}")
    return int(value)


def _moment_stats(s: np.ndarray, shift: float) -> dict[str, float]:
    """Statistics from summed power sums ``[n, sum d, sum d^2, sum d^3]`` of ``d = W - shift``."""
    n = s[0]
    m1 = s[1] / n
    r2, r3 = s[2] / n, s[3] / n
    var = max(r2 - m1 * m1, 0.0)
    c3 = r3 - 3 * m1 * r2 + 2 * m1**3
    mean = shift + m1
    std = math.sqrt(var)
    return {
        "mean": mean,
        "var": var,
        "std": std,
        "cov": std / mean,
        "skew": c3 / var**1.5 if var > 0 else math.nan,
    }


def _hist_quantiles(counts: np.ndarray, edges: np.ndarray, levels) -> np.ndarray:
    """Quantiles of a histogram with a piecewise-linear distribution function on the edges."""
    cdf = np.concatenate(([0.0], np.cumsum(counts)))
    cdf /= cdf[-1]
    return np.interp(levels, cdf, edges)


def monte_carlo(
    chain: WindowChain,
    *,
    n_chains: int = 2000,
    n_steps: int = 40_000,
    burn_in: int = 5_000,
    seed: int | None = None,
    start: float | None = None,
    bins: int = 400,
    window_range: tuple[float, float] | None = None,
    groups: int = 20,
    level: float = 0.95,
) -> WindowDistribution:
    """The stationary window law of a chain by simulation, with confidence intervals.

    Parameters
    ----------
    chain : WindowChain
        Any increase, decrease and marking laws.
    n_chains : int, default 2000
        Independent chains, run together.
    n_steps : int, default 40000
        ACKs per chain after the burn-in that enter the statistics.
    burn_in : int, default 5000
        ACKs per chain discarded first.
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same result.
    start : float, optional
        Initial window of every chain (default: the zero-drift window).
    bins : int, default 400
        Histogram bins for the density, quantiles and mode.
    window_range : (float, float), optional
        Histogram range; default ``[W_min / 2, 2 W_max]`` over the chains at the end of the
        burn-in. Windows outside it are counted (``info["outside"]``), not binned.
    groups : int, default 20
        Disjoint groups of chains for the confidence intervals (at most ``n_chains``).
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    WindowDistribution
        ``method="monte carlo"``: moments and ``mark_probability`` from the exact power sums,
        density/quantiles/mode from the histogram, ``ci`` with intervals for ``mean``,
        ``var``, ``std``, ``cov``, ``skew``, ``mark_probability`` and the quantiles ``q05`` …
        ``q95``; ``info`` with the run lengths, seed, range, ``outside`` and ``seconds``.

    Raises
    ------
    OptionError
        For a bad option (run lengths, ``start``, ``window_range``, ``level``).
    ParameterError
        When a chain reaches a window where a law is out of range (the message names the law,
        the window, the value, the chain and the ACK).
    ModelError
        When numba cannot compile the laws.

    Examples
    --------
    >>> import fluidnet as fn
    >>> w, p = fn.sympy.symbols("w p")
    >>> chain = fn.WindowChain(1 / w, w / 2, p, params={p: 0.01})
    >>> d = fn.monte_carlo(chain, n_chains=200, n_steps=20000, seed=1)  # doctest: +SKIP
    >>> lo, hi = d.interval("mean")  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    require_chain(chain)
    n_chains = _int("n_chains", n_chains, 2)
    n_steps = _int("n_steps", n_steps, 1)
    burn_in = _int("burn_in", burn_in, 0)
    seed = seed_option(seed, where="monte_carlo")
    bins = _int("bins", bins, 4)
    groups = min(_int("groups", groups, 2), n_chains)
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise OptionError(f"level = {level!r} must lie in (0, 1)")
    if start is None:
        start = chain.zero_drift()
    start = float(start)
    if not (math.isfinite(start) and start > 0):
        raise OptionError(f"start = {start!r} must be a positive window")

    from ._kernel import ERRORS, chain_kernel, compile_error  # numba: imported on first use

    kernel = chain_kernel(chain)
    th = np.array(list(chain.params.values()) or [0.0], dtype=float)
    rng = np.random.default_rng(seed)
    W = np.full(n_chains, start)
    group = (np.arange(n_chains) % groups).astype(np.int64)
    S = np.zeros((n_chains, 9))
    hist = np.zeros((groups, 2, bins + 2))
    block = max(1, min(n_steps + burn_in, (1 << 21) // n_chains))

    def advance(steps: int, accumulate: bool, lo: float, inv_dw: float, shift: float) -> None:
        done = 0
        while done < steps:
            k = min(block, steps - done)
            U = rng.random((n_chains, k))
            try:
                code, i, j, x, value = kernel.run(
                    W, U, th, shift, lo, inv_dw, bins, group, accumulate, S, hist
                )
            except Exception as exc:  # numba typing/lowering errors surface at the first call
                if type(exc).__module__.startswith("numba"):
                    raise compile_error(chain, exc) from exc
                raise
            if code:
                law = ERRORS[int(code)]
                raise ParameterError(
                    f"{law} law of {chain.name!r} is out of range at w = {x:.6g} "
                    f"({law} = {value!r}) in chain {i}, ACK {done + j} of "
                    f"{'the run' if accumulate else 'the burn-in'}"
                )
            done += k

    advance(burn_in, False, 0.0, 1.0, 0.0)
    if window_range is None:
        lo, hi = 0.5 * float(W.min()), 2.0 * float(W.max())
    else:
        try:
            lo, hi = (float(x) for x in window_range)
        except (TypeError, ValueError) as exc:
            raise OptionError(f"window_range = {window_range!r} must be (low, high)") from exc
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise OptionError(f"window_range = {window_range!r} needs finite low < high")
    shift = float(W.mean())
    advance(n_steps, True, lo, bins / (hi - lo), shift)
    if not kernel.TIMED:  # constant ACK rate: per-time sums are the per-ACK ones
        S[:, 5:9] = S[:, 0:4]
        hist[:, 1] = hist[:, 0]

    edges = np.linspace(lo, hi, bins + 1)
    centers = 0.5 * (edges[1:] + edges[:-1])
    width = edges[1] - edges[0]
    total = S.sum(axis=0)

    def stats_of(sums: np.ndarray, counts: np.ndarray, time_avg: bool) -> dict[str, float]:
        if time_avg:  # normalized by the summed weights: sum(w d^k) / sum(w)
            out = _moment_stats(sums[5:9], shift)
        else:
            out = _moment_stats(sums[0:4], shift)
            out["mark_probability"] = sums[4] / sums[0]
        for q, v in zip(QUANTILES, _hist_quantiles(counts, edges, QUANTILES), strict=True):
            out[quantile_label(q)] = float(v)
        return out

    def intervals(time_avg: bool) -> dict[str, tuple[float, float]]:
        from scipy.stats import t as student

        per_group = [
            stats_of(S[group == g].sum(axis=0), hist[g, int(time_avg), :bins], time_avg)
            for g in range(groups)
        ]
        point = stats_of(total, hist[:, int(time_avg), :bins].sum(axis=0), time_avg)
        half = student.ppf(0.5 + level / 2, groups - 1) / math.sqrt(groups)
        out = {}
        for key, val in point.items():
            spread = float(np.std([pg[key] for pg in per_group], ddof=1))
            out[key] = (float(val - half * spread), float(val + half * spread))
        return out

    info = {
        "n_chains": n_chains,
        "n_steps": n_steps,
        "burn_in": burn_in,
        "seed": seed,
        "start": start,
        "range": (lo, hi),
        "bins": bins,
        "groups": groups,
        "level": level,
        "outside": float(hist[:, 0, bins:].sum() / total[0]),
    }
    res = {}
    for time_avg in (True, False):
        counts = hist[:, int(time_avg), :bins].sum(axis=0)
        exact = stats_of(total, counts, time_avg)
        exact = {k: v for k, v in exact.items() if not k.startswith("q")}
        res[time_avg] = WindowDistribution(
            centers,
            counts / (counts.sum() * width),
            method="monte carlo",
            average="time" if time_avg else "ack",
            exact=exact,
            ci=intervals(time_avg),
            info=info,
            edges=edges,
            counts=counts,
            time_average=res.get(True),
            name=chain.name,
        )
    info["seconds"] = time.perf_counter() - t0
    return res[False]
