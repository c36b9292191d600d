"""DCQCN fluid model (Zhu et al. 2015, 2016)."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.models import dcqcn, dcqcn_fixed_point, dcqcn_p_approx


def _p_star(N):
    """Theorem 1's equation a^2 alpha/((b+d)(c+e)) = tau^2 R_AI R_C, written out here."""
    C, tau, taup, T, B, F, Rai = 5.0, 50.0, 55.0, 55.0, 1e4, 5.0, 0.005
    r = C / N

    def f(p):
        k = 1 - p
        a, alpha = 1 - k ** (tau * r), 1 - k ** (taup * r)
        b, d = p / (k**-B - 1), p / (k ** (-T * r) - 1)
        c, e = k ** (F * B) * b, k ** (F * T * r) * d
        return a * a * alpha / ((b + d) * (c + e)) - tau * tau * Rai * r

    return brentq(f, 1e-6, 0.05, xtol=1e-16, rtol=1e-14)


@pytest.mark.parametrize("N", [2.0, 10.0])
def test_fixed_point(N):
    fp = dcqcn_fixed_point(N=N)
    assert fp["p"] == pytest.approx(_p_star(N), rel=1e-10)
    assert fp["q"] == pytest.approx(5 + fp["p"] / 0.01 * 195, rel=1e-12)
    eq = dcqcn(N=N).equilibrium()
    assert eq["R_C"] == pytest.approx(5.0 / N, rel=1e-12)
    assert eq["q"] == pytest.approx(fp["q"], rel=1e-8)
    assert eq["alpha"] == pytest.approx(1 - (1 - fp["p"]) ** (55 * 5 / N), rel=1e-8)


def test_printed_approximation():
    N, C = 10.0, 5.0
    want = (0.005 * N * N / (55 * C * C) * (1e-4 + N / (55 * C)) ** 2) ** (1 / 3)
    assert dcqcn_p_approx(N=N) == pytest.approx(want, rel=1e-14)


def test_marking_options_and_errors():
    assert dcqcn(marking="ramp").name == "dcqcn_ramp"
    with pytest.raises(fn.ParameterError, match="marking"):
        dcqcn(marking="red2")
    with pytest.raises(fn.ParameterError, match="K_max"):
        dcqcn(K_max=4.0)
    with pytest.raises(fn.ParameterError, match="p_max"):
        dcqcn(p_max=2.0)
    with pytest.raises(fn.ParameterError, match="unknown"):
        dcqcn_fixed_point(Q=1.0)
    assert math.isfinite(dcqcn_fixed_point(N=30.0)["q"])  # beyond K_max: the ramp's fixed point
