"""The PDMP stationary solver against the exact series, a second implementation, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import ModelError, OptionError, ParameterError

w = sympy.Symbol("w", positive=True)


def constant(alpha, c1, c2, p, **kw):
    return fn.WindowChain(c1 * w**alpha, c2 * w, p, window=w, **kw)


@pytest.mark.parametrize(
    "alpha, c1, c2", [(-1.0, 1.0, 0.5), (-1.0, 2.0, 0.1), (-0.5, 0.5, 0.3), (0.0, 0.4, 0.2)]
)
def test_constant_marking_equals_series(alpha, c1, c2):
    p = 0.01
    d = fn.stationary_distribution(constant(alpha, c1, c2, p))
    s = fn.constant_mark_distribution(alpha=alpha, c1=c1, c2=c2, p=p)
    assert d.mean == pytest.approx(s.mean, rel=2e-8)
    assert d.var == pytest.approx(s.var, rel=2e-8)
    assert d.skew == pytest.approx(s.skew, rel=1e-6)
    assert d.mark_probability == pytest.approx(p, rel=1e-12)
    assert d.quantile(0.5) == pytest.approx(s.quantile(0.5), rel=2e-4)  # series on 801 points


def test_per_time_average():
    # ACK rate proportional to w: time average 1.3098/sqrt(p) (Ott, Kemperman & Mathis 1996)
    p = 0.01
    d = constant(-1.0, 1.0, 0.5, p, ack_rate=w).stationary()
    assert d.mean * math.sqrt(p) == pytest.approx(1.52691, abs=5e-6)
    assert d.time_average.mean * math.sqrt(p) == pytest.approx(1.30983, abs=5e-6)
    assert d.summary()["mean_time"] == d.time_average.mean


def test_grid_convergence_is_second_order():
    chain = fn.models.generalized_tcp_chain()
    means = [chain.stationary(m=m, check=False).mean for m in (500, 1000, 2000)]
    ratio = (means[0] - means[1]) / (means[1] - means[2])
    assert ratio == pytest.approx(4.0, rel=0.05)
    d = chain.stationary(m=4000)
    assert max(d.info["error_mean"], d.info["error_var"]) < 1e-8


def _independent_solver(alpha, c1, c2, bdp, top, m=4000):
    """A second, loop-based implementation of the backward march (not fluidnet's code)."""
    gamma, p_max, lo_th, hi_th = 0.75, 0.02, 15.0, 95.0
    onset = lo_th + bdp
    w0 = (1 - c2) * onset
    rho = (1 - c2) ** (-1.0 / m)
    n = int(math.ceil(math.log(top / w0) / math.log(rho)))
    x = w0 * rho ** np.arange(n)
    p = gamma * p_max * np.clip((x - onset) / (hi_th - lo_th), 0.0, 1.0)
    v = c1 * x**alpha
    k = p / v
    lam = np.concatenate(([0.0], np.cumsum(0.5 * (k[1:] + k[:-1]) * np.diff(x))))
    H = np.ones(n)
    integrand = np.zeros(n)
    for j in range(n - m - 1, -1, -1):
        integrand[j] = k[j] * math.exp(lam[j] - lam[j + m]) * H[j + m]
        H[j] = H[j + 1] - 0.5 * (integrand[j] + integrand[j + 1]) * (x[j + 1] - x[j])
    G = H * np.exp(-lam)
    G /= G[0]
    pi = (G[: n - m] - G[m:]) / v[: n - m]
    xs = x[: n - m]
    pi /= np.trapezoid(pi, xs)
    mean = np.trapezoid(xs * pi, xs)
    return mean, np.trapezoid((xs - mean) ** 2 * pi, xs)


def test_baseline_against_independent_implementation():
    d = fn.models.generalized_tcp_chain().stationary()
    mean, var = _independent_solver(-1.0, 1.0, 0.5, 5.0, top=400.0)
    assert d.mean == pytest.approx(mean, rel=1e-9)
    assert d.var == pytest.approx(var, rel=1e-8)
    # the paper's baseline (BDP 5): mean 30.28, variance 64.05, CoV 0.264
    assert (round(d.mean, 2), round(d.var, 2), round(d.cov, 3)) == (30.28, 64.05, 0.264)


def test_saturated_tail_is_kept():
    # alpha = 0: the marking saturates at gamma p_max = 0.015 and the tail decays slowly; a
    # grid cut at w = 2000 loses about 1 of the variance, the solver's automatic top does not
    d = fn.models.generalized_tcp_chain(alpha=0.0).stationary()
    _, var_cut = _independent_solver(0.0, 1.0, 0.5, 5.0, top=2000.0)
    _, var_full = _independent_solver(0.0, 1.0, 0.5, 5.0, top=5000.0)
    assert var_full - var_cut > 0.5
    assert d.var == pytest.approx(var_full, rel=1e-8)
    assert d.info["upper"] > 3000


def test_distribution_api():
    d = fn.models.generalized_tcp_chain().stationary()
    assert d.w[0] == pytest.approx(10.0, abs=1e-9)  # (1 - c2) W*
    s = d.summary()
    assert s["q05"] < s["q25"] < s["q50"] < s["q75"] < s["q95"]
    assert d.probability() == pytest.approx(1.0)
    assert d.cdf[-1] == 1.0 and np.all(np.diff(d.cdf) >= 0)
    with pytest.raises(fn.AnalysisError, match="no confidence intervals"):
        d.interval("mean")
    with pytest.raises(OptionError, match="quantile levels"):
        d.quantile(1.5)
    import matplotlib

    matplotlib.use("Agg")
    ax = d.plot(average="both")
    assert len(ax.lines) == 2
    assert "pdmp" in repr(d)


def test_errors():
    with pytest.raises(ModelError, match="multiplicative decrease"):
        fn.WindowChain(1 / w, 0.5 * w**0.8, 0.01, window=w).stationary()
    with pytest.raises(ParameterError, match="c = 1.2"):
        fn.WindowChain(1 / w, 1.2 * w, 0.01, window=w).stationary()
    with pytest.raises(OptionError, match="m = 7"):
        constant(-1, 1, 0.5, 0.01).stationary(m=7)
    with pytest.raises(OptionError, match="drift"):
        constant(-1, 1, 0.5, 0.01).stationary(drift="exact")
    with pytest.raises(ParameterError, match="mark law .* at w = "):
        fn.WindowChain(1 / w, w / 2, w / 10, window=w).stationary()  # mark > 1 for w > 10
    with pytest.raises(ParameterError, match="increase law"):
        fn.WindowChain(1 / w - 1, w / 2, 0.01, window=w).stationary(window_range=(0.5, 50.0))
    # increase faster than the decrease: no zero-drift window, the window escapes
    with pytest.raises(fn.NotNormalizableError, match="grows without bound"):
        fn.WindowChain(w**1.2, w / 2, 0.01, window=w).stationary()
    # a marking that vanishes like 1/w: the drift stays positive
    with pytest.raises(fn.NotNormalizableError):
        fn.WindowChain(sympy.Integer(1), w / 2, 1 / (w + 100), window=w).stationary()
    # a coarse grid cannot meet a tight tolerance
    with pytest.raises(fn.GridConvergenceError, match="increase m"):
        fn.models.generalized_tcp_chain().stationary(m=8, tol=1e-9)


def test_mean_drift_variant_is_closer_to_the_chain_at_large_alpha():
    # keeping (1 - p) in the growth lowers the alpha = 0 mean towards the chain's ~139
    limit = fn.models.generalized_tcp_chain(alpha=0.0).stationary()
    mean = fn.models.generalized_tcp_chain(alpha=0.0).stationary(drift="mean")
    assert 138.0 < mean.mean < limit.mean - 1.0


def test_window_range_and_max_nodes():
    # the window range and the grid size are named as everywhere in the API (issue 24):
    # window_range=(lo, hi), like monte_carlo's, and max_nodes for a discretization size
    p = fn.sympy.Symbol("p")
    tcp = fn.WindowChain(1 / w, w / 2, p, window=w, params={p: 0.01})
    d = fn.stationary_distribution(tcp, window_range=(0.5, 200.0))
    assert d.w[0] == 0.5 and d.w[-1] == pytest.approx(200.0, rel=1e-3)
    assert d.info["lower_rule"] == "given"
    # Ott, Kemperman & Mathis (1996): E[W] = 1.52691 / sqrt(p) per ACK
    assert d.mean == pytest.approx(1.52691 / 0.1, rel=1e-5)
    for old in ({"support": (0.5, 200.0)}, {"max_points": 10**6}):
        with pytest.raises(TypeError, match=next(iter(old))):
            tcp.stationary(**old)
    for bad in (0, 2.5, True):
        with pytest.raises(OptionError, match="max_nodes"):
            tcp.stationary(max_nodes=bad)
    with pytest.raises(fn.GridConvergenceError, match="more than 1000 grid points"):
        tcp.stationary(max_nodes=1000)
    with pytest.raises(OptionError, match="window_range"):
        tcp.stationary(window_range=(2.0, 1.0))
