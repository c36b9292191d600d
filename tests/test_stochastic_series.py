"""The constant-marking series (fluidnet.stochastic.series) against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet import OptionError, ParameterError
from fluidnet.stochastic import series


def test_standard_tcp_moments_ott_kemperman_mathis():
    # E[W] sqrt(p) = 1.52691 (Ott, Kemperman & Mathis 1996), E[W^2] p = 8/3 exactly
    for p in (0.01, 0.002):
        m1 = fn.constant_mark_moment(1, alpha=-1, c1=1, c2=0.5, p=p)
        m2 = fn.constant_mark_moment(2, alpha=-1, c1=1, c2=0.5, p=p)
        assert m1 * math.sqrt(p) == pytest.approx(1.52691, abs=5e-6)
        assert m2 * p == pytest.approx(8 / 3, rel=1e-13)


@pytest.mark.parametrize("c1, c2, p", [(1.0, 0.5, 0.01), (0.4, 0.2, 0.05), (2.0, 0.1, 0.003)])
def test_closed_forms(c1, c2, p):
    # alpha = -1: E[W^2] = 2 c1 / (p c2 (2 - c2)); alpha = 0: E[W] = c1/(c2 p),
    # CoV = sqrt(c2/(2 - c2)) (both from the drift balance of W and W^2 per ACK)
    m2 = fn.constant_mark_moment(2, alpha=-1, c1=c1, c2=c2, p=p)
    assert m2 == pytest.approx(2 * c1 / (p * c2 * (2 - c2)), rel=1e-12)
    d = fn.constant_mark_distribution(alpha=0, c1=c1, c2=c2, p=p)
    assert d.mean == pytest.approx(c1 / (c2 * p), rel=1e-12)
    assert d.cov == pytest.approx(math.sqrt(c2 / (2 - c2)), rel=1e-12)


def test_tail_solves_the_functional_equation():
    # In u = lam w^nu the tail G solves G'(u) + G(u) = G(r u), r = (1 - c2)^-nu; check with a
    # centred difference, independently of how the series was built.
    alpha, c1, c2, p = -0.5, 1.0, 0.3, 0.02
    nu = 1 - alpha
    lam = p / (c1 * nu)
    r = (1 - c2) ** (-nu)

    def G(u):
        return fn.constant_mark_tail((u / lam) ** (1 / nu), alpha=alpha, c1=c1, c2=c2, p=p)

    for u in (0.2, 1.0, 3.0):
        h = 1e-5
        dG = (G(u + h) - G(u - h)) / (2 * h)
        assert dG + G(u) == pytest.approx(G(r * u), abs=1e-8)
    assert G(1e-12) == pytest.approx(1.0, abs=1e-10)
    assert G(60.0) < 1e-20


def test_time_average_of_window_limited_flow():
    # with ACKs at rate w/RTT the time average of W is 1/E_n[1/W]: 1.3098/sqrt(p) for
    # standard TCP (Ott, Kemperman & Mathis 1996)
    p = 0.01
    d = fn.constant_mark_distribution(alpha=-1, c1=1, c2=0.5, p=p, ack_exponent=1)
    inv = fn.constant_mark_moment(-1, alpha=-1, c1=1, c2=0.5, p=p)
    assert d.time_average.mean == pytest.approx(1 / inv, rel=1e-12)
    assert d.time_average.mean * math.sqrt(p) == pytest.approx(1.30983, abs=5e-6)


def test_density_double_precision_matches_mpmath():
    ws = np.linspace(5.0, 80.0, 7)
    fast = series._density(ws, -1.0, 1.0, 0.2, 0.01)
    a, r, dps = series._coefficients(-1.0, 0.2)
    import mpmath

    with mpmath.workdps(dps):
        lam = mpmath.mpf(0.01) / 2
        slow = [
            float(
                lam
                * 2
                * mpmath.mpf(x)
                * mpmath.fsum(
                    ak * r**k * mpmath.exp(-(r**k) * lam * mpmath.mpf(x) ** 2)
                    for k, ak in enumerate(a)
                )
            )
            for x in ws
        ]
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-15)  # double-precision floor


def test_grid_density_integrates_to_the_exact_moments():
    d = fn.constant_mark_distribution(alpha=-0.75, c1=1, c2=0.4, p=0.01, points=2001)
    trap = np.trapezoid(d.w * d.pdf, d.w)
    assert trap == pytest.approx(d.mean, rel=1e-5)
    assert d.quantile(0.5) == pytest.approx(float(np.interp(0.5, d.cdf, d.w)), rel=1e-6)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"alpha": 1.0}, "alpha"),
        ({"c2": 1.0}, "c2"),
        ({"c2": 0.0}, "c2"),
        ({"c1": -1.0}, "c1"),
        ({"p": 0.0}, "p = 0.0"),
        ({"p": float("nan")}, "p"),
    ],
)
def test_bad_parameters(kw, match):
    base = {"alpha": -1.0, "c1": 1.0, "c2": 0.5, "p": 0.01}
    with pytest.raises(ParameterError, match=match):
        fn.constant_mark_distribution(**(base | kw))


def test_bad_orders_and_options():
    with pytest.raises(OptionError, match="order q = -2"):
        fn.constant_mark_moment(-2, alpha=-1, c1=1, c2=0.5, p=0.01)
    with pytest.raises(OptionError, match="ack_exponent"):
        fn.constant_mark_distribution(alpha=0, c1=1, c2=0.5, p=0.01, ack_exponent=1)
