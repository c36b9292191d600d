"""fluidnet.stochastic.distribution: the statistics of a WindowDistribution against a gamma
law's closed forms (scipy.stats), the histogram quantiles of a uniform law, and its errors."""

import math

import numpy as np
import pytest
from scipy import stats

from fluidnet.errors import AnalysisError, OptionError
from fluidnet.stochastic.distribution import (
    QUANTILES,
    STATISTICS,
    WindowDistribution,
    quantile_label,
)

K, THETA = 4.0, 2.5  # gamma shape and scale: mean 10, var 25, skew 1, mode 7.5


@pytest.fixture(scope="module")
def gamma():
    w = np.linspace(1e-6, 150.0, 60001)
    # unnormalized on purpose: the class normalizes by the trapezoid rule
    return WindowDistribution(w, 3.0 * stats.gamma.pdf(w, K, scale=THETA), method="pdmp")


def test_statistics_match_the_gamma_law(gamma):
    assert gamma.mean == pytest.approx(K * THETA, rel=1e-6)
    assert gamma.var == pytest.approx(K * THETA**2, rel=1e-5)
    assert gamma.std == pytest.approx(math.sqrt(K) * THETA, rel=1e-5)
    assert gamma.cov == pytest.approx(1 / math.sqrt(K), rel=1e-5)
    assert gamma.skew == pytest.approx(2 / math.sqrt(K), rel=1e-4)
    assert gamma.mode == pytest.approx((K - 1) * THETA, abs=1e-4)
    assert gamma.moment(2) == pytest.approx(K * (K + 1) * THETA**2, rel=1e-6)
    assert math.isnan(gamma.mark_probability)


def test_quantiles_and_probabilities_match_scipy(gamma):
    qs = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(gamma.quantile(qs), stats.gamma.ppf(qs, K, scale=THETA), rtol=1e-5)
    assert isinstance(gamma.quantile(0.5), float)
    expected = stats.gamma.cdf(12.0, K, scale=THETA) - stats.gamma.cdf(5.0, K, scale=THETA)
    assert gamma.probability(5.0, 12.0) == pytest.approx(expected, abs=1e-7)
    assert gamma.probability() == pytest.approx(1.0)


def test_exact_values_take_precedence(gamma):
    """Raw moments given exactly give the central moments by the binomial formula."""
    m = {k: stats.gamma.moment(k, K, scale=THETA) for k in (1, 2, 3)}
    d = WindowDistribution(
        gamma.w[::100],
        gamma.pdf[::100],
        method="series",
        exact={"moments": m, "mode": 7.5, "mark_probability": 0.01},
    )
    assert d.mean == m[1]
    assert d.var == pytest.approx(K * THETA**2, rel=1e-13)
    assert d.skew == pytest.approx(2 / math.sqrt(K), rel=1e-12)
    assert d.mode == 7.5 and d.mark_probability == 0.01


def test_histogram_quantiles_are_piecewise_linear_through_the_edges():
    """A uniform histogram on [0, 10]: the q-quantile is 10 q exactly."""
    edges = np.linspace(0.0, 10.0, 11)
    centres = 0.5 * (edges[1:] + edges[:-1])
    d = WindowDistribution(
        centres, np.ones(10), method="monte carlo", edges=edges, counts=np.full(10, 7.0)
    )
    np.testing.assert_allclose(d.quantile([0.0, 0.05, 0.37, 0.5, 1.0]), [0.0, 0.5, 3.7, 5.0, 10.0])


def test_summary_lists_every_statistic_and_the_time_average(gamma):
    t = WindowDistribution(
        gamma.w, stats.gamma.pdf(gamma.w, K + 1, scale=THETA), method="pdmp", average="time"
    )
    d = WindowDistribution(gamma.w, gamma.pdf, method="pdmp", time_average=t)
    s = d.summary()
    assert set(STATISTICS) <= set(s)
    assert [quantile_label(q) for q in QUANTILES] == ["q05", "q25", "q50", "q75", "q95"]
    assert s["mean_time"] == pytest.approx((K + 1) * THETA, rel=1e-6)
    assert d.time_average is t and t.time_average is t
    assert quantile_label(0.975) == "q97.5"


@pytest.mark.parametrize(
    ("w", "pdf", "kwargs", "error", "message"),
    [
        ([0, 1], [1, 1], {}, AnalysisError, "matching 1-d grid"),
        ([0, 2, 1], [1, 1, 1], {}, AnalysisError, "strictly increasing"),
        ([0, 1, 2], [1, np.nan, 1], {}, AnalysisError, "finite and non-negative"),
        ([0, 1, 2], [1, -1, 1], {}, AnalysisError, "finite and non-negative"),
        ([0, 1, 2], [0, 0, 0], {}, AnalysisError, "no mass"),
        ([0, 1, 2], [1, 1, 1], {"average": "packet"}, OptionError, "average must be"),
        (
            [0, 1, 2],
            [1, 1, 1],
            {"edges": [0, 1], "counts": [1, 1, 1]},
            AnalysisError,
            "edges/counts",
        ),
    ],
)
def test_bad_input_is_refused(w, pdf, kwargs, error, message):
    with pytest.raises(error, match=message):
        WindowDistribution(w, pdf, method="pdmp", **kwargs)


def test_bad_requests_are_refused(gamma):
    with pytest.raises(OptionError, match=r"\[0, 1\]"):
        gamma.quantile(1.5)
    with pytest.raises(AnalysisError, match="no per-time distribution"):
        _ = gamma.time_average
    with pytest.raises(AnalysisError, match="no confidence intervals"):
        gamma.interval("mean")
    d = WindowDistribution(
        gamma.w[::100], gamma.pdf[::100], method="monte carlo", ci={"mean": (9.9, 10.1)}
    )
    assert d.interval("mean") == (9.9, 10.1)
    with pytest.raises(AnalysisError, match="available: mean"):
        d.interval("var")
    with pytest.raises(OptionError, match="'ack', 'time' or 'both'"):
        gamma.plot(average="window")


def test_plot_draws_the_per_ack_density_without_a_per_time_companion(gamma):
    """Found by this test: plot() evaluated the per-time companion even when only the per-ACK
    density was asked for, so every plot of a distribution without one failed."""
    ax = gamma.plot()
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), gamma.pdf)
    with pytest.raises(AnalysisError, match="no per-time distribution"):
        gamma.plot(average="both")
