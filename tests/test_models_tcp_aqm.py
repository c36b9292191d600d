"""TCP/AQM models: Misra-Gong-Towsley with RED and with Hollot et al.'s PI controller."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models.tcp_aqm import hollot_pi_design, hollot_plant, red_stability_bound


def test_pi_equilibrium_is_the_reference_queue_at_any_load():
    for n in (60.0, 150.0):
        eq = fn.models.hollot_pi(N=n).equilibrium()
        R0 = 0.2 + 175.0 / 3750.0
        W0 = R0 * 3750.0 / n
        assert eq["q"] == pytest.approx(175.0, abs=1e-9)
        assert eq["W"] == pytest.approx(W0, rel=1e-12)
        assert eq["p"] == pytest.approx(2.0 / W0**2, rel=1e-12)


def test_pi_loop_gain_matches_the_hand_linearization():
    """L = (C^2/2N) e K(s)/[(s + a(1+e))(s + 1/R) + (N/R) b (1-e)], a = N/(R^2 C), b = 1/(R^2 C)."""
    N, C, R = 60.0, 3750.0, 0.2 + 175.0 / 3750.0
    K, z = 9.64e-6, 0.53
    L = fn.models.hollot_pi().loop_gain("p")
    s = 1j * np.logspace(-2, 2, 9)
    e = np.exp(-s * R)
    a, b = N / (R * R * C), 1 / (R * R * C)
    hand = (
        C
        * C
        / (2 * N)
        * e
        * K
        * (s / z + 1)
        / s
        / ((s + a * (1 + e)) * (s + 1 / R) + N / R * b * (1 - e))
    )
    np.testing.assert_allclose(L(s), hand, rtol=1e-10)


def test_hollot_plant_and_design_rule():
    N, C, R = 60.0, 3750.0, 0.246
    P = hollot_plant(N, C, R)
    s = 0.7j
    want = C * C / (2 * N) * np.exp(-s * R) / ((s + 2 * N / (R * R * C)) * (s + 1 / R))
    assert P(s) == pytest.approx(want, rel=1e-13)
    d = hollot_pi_design(N, C, R, omega_g=0.53)
    assert d["z"] == pytest.approx(2 * N / (R * R * C), rel=1e-14)
    # zero on the TCP pole: L = K (RC)^3/(2N)^2 e^{-sR}/(s (R s + 1)), |L| = 1 at 0.53
    loop = d["K_pi"] * (R * C) ** 3 / (2 * N) ** 2 / abs(0.53j * (0.53j * R + 1))
    assert loop == pytest.approx(1.0, rel=1e-12)
    assert d["K_pi_low"] == pytest.approx(0.53 * (2 * N) ** 2 / (R * C) ** 3, rel=1e-14)


def test_red_bound_closed_form():
    N, C, R, K = 60.0, 3750.0, 0.25, 0.005
    wg = 0.1 * min(2 * N / (R * R * C), 1 / R)
    assert red_stability_bound(N, C, R, K) == pytest.approx(
        math.sqrt((wg / K) ** 2 + 1) * (2 * N) ** 2 / (R * C) ** 3, rel=1e-14
    )


def test_red_fixed_point_by_bracketing():
    from scipy.optimize import brentq

    m = fn.models.mgt_red()
    eq = m.equilibrium()

    def gap(q):
        W = (0.2 + q / 3750.0) * 3750.0 / 60.0
        return 0.1 / 550.0 * (q - 50.0) - 2 / W**2

    q = brentq(gap, 50.0, 600.0, xtol=1e-13)
    assert eq["q"] == pytest.approx(q, rel=1e-9)
    assert eq["x"] == pytest.approx(q, rel=1e-9)


@pytest.mark.parametrize(
    ("factory", "kw", "word"),
    [
        (fn.models.mgt_red, {"min_th": 700.0}, "max_th"),
        (fn.models.mgt_red, {"weight": 1.0}, "weight"),
        (fn.models.hollot_pi, {"K_pi": -1.0}, "K_pi"),
        (fn.models.hollot_pi, {"N": float("nan")}, "N"),
    ],
)
def test_bad_parameters_are_named(factory, kw, word):
    with pytest.raises(fn.ParameterError, match=word):
        factory(**kw)


@pytest.mark.parametrize("bad", [{"N": 0.0}, {"R0": -1.0}, {"C": math.inf}])
def test_helpers_reject_bad_input(bad):
    args = {"N": 60.0, "C": 3750.0, "R0": 0.25} | bad
    name = next(iter(bad))
    with pytest.raises(fn.ParameterError, match=name):
        hollot_plant(**args)
    with pytest.raises(fn.ParameterError, match=name):
        hollot_pi_design(**args)
