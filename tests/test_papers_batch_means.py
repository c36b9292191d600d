"""Batch means (the packet items' standard errors) against the closed-form standard error of the
mean of an AR(1) series, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from fluidnet.errors import ParameterError
from fluidnet.papers.batch_means import batch_mean, batch_ratio


def test_batch_means_estimate_the_long_run_standard_error_of_an_ar1_series():
    # x_k = phi x_{k-1} + e_k, var(e) = 1: the mean of n samples has variance
    # ~ 1/(1 - phi)^2 / n, not the 1/((1 - phi^2) n) of independent samples
    rng = np.random.default_rng(7)
    phi, n = 0.9, 200_000
    e = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = e[0] / np.sqrt(1 - phi**2)
    for k in range(1, n):
        x[k] = phi * x[k - 1] + e[k]
    t = np.arange(n, dtype=float)
    m = batch_mean(t, 5.0 + x, after=0.0, blocks=20)
    exact = 1.0 / (1.0 - phi) / np.sqrt(n)
    assert m.mean == pytest.approx(5.0, abs=4 * exact)
    assert m.se == pytest.approx(exact, rel=0.5)  # 20 blocks: the estimate's own error ~ 16 %
    assert m.se > 3 * np.std(x) / np.sqrt(n)  # the naive error is far too small


def test_batch_ratio_is_the_ratio_of_the_tail_means():
    t = np.linspace(0, 10, 1001)
    r = batch_ratio(t, 3.0 + 0 * t, 1.5 + 0 * t, after=2.0, blocks=5)
    assert r.mean == 2.0 and r.se == 0.0 and r.blocks.size == 5


def test_a_tail_too_short_or_a_zero_denominator_is_refused():
    t = np.linspace(0, 1, 11)
    with pytest.raises(ParameterError, match="after = 0.9"):
        batch_mean(t, t, after=0.9, blocks=10)
    with pytest.raises(ParameterError, match="blocks"):
        batch_mean(t, t, after=0.0, blocks=1)
    with pytest.raises(ParameterError, match="denominator"):
        batch_ratio(t, t, 0 * t, after=0.0, blocks=2)
