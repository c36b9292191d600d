"""FAST TCP on one link with the static and the integrator link models."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models import fast_equilibrium, fast_static_critical_gamma, fast_tcp


@pytest.mark.parametrize("link", ["static", "integrator"])
def test_equilibrium_keeps_alpha_packets_queued(link):
    ref = fast_equilibrium(5.0, 12500.0, 0.1, 30.0)
    assert fast_tcp(link).equilibrium()["w"] == pytest.approx(145.0, rel=1e-10)
    eq = fast_tcp(link, N=5.0, alpha=30.0).equilibrium(guess={"w": 1.1 * ref["w"]})
    assert eq["w"] == pytest.approx(ref["w"], rel=1e-10)
    assert ref["q"] * ref["x"] == pytest.approx(30.0, rel=1e-14)


def _char_static(lam, g, rho):
    return lam + g * (1 - rho) + g * rho * np.exp(-lam * rho)


def _char_integrator(lam, g, rho):
    E = np.exp(-lam * rho)
    return (lam + g * (1 - rho)) * (lam + E) + g * rho * E


@pytest.mark.parametrize(
    ("link", "char"), [("static", _char_static), ("integrator", _char_integrator)]
)
def test_linearization_matches_the_derived_characteristic_equation(link, char):
    """Every characteristic root of fluidnet's linearization solves the hand-derived equation."""
    m = fast_tcp(link, gamma=0.7)
    R = 0.1 + 20 * 10 / 12500.0
    rho = 0.1 / R
    roots = m.linearize().roots(k=3)
    for r in roots:
        lam = r.value * R
        assert abs(char(lam, 0.7, rho)) < 1e-8 * (1 + abs(lam) ** 2)


def test_static_critical_gain_closed_form_and_limits():
    rho = 0.9
    g = fast_static_critical_gamma(rho)
    W = g * math.sqrt(2 * rho - 1)  # crossing at lambda = j W
    assert abs(_char_static(1j * W, g, rho)) < 1e-12
    assert fast_static_critical_gamma(0.4) == math.inf
    assert fast_static_critical_gamma(1.0) == pytest.approx(math.pi / 2, rel=1e-14)
    with pytest.raises(fn.ParameterError, match="rho"):
        fast_static_critical_gamma(1.5)


def test_bad_input_is_named():
    with pytest.raises(fn.ParameterError, match="link"):
        fast_tcp("pipe")
    with pytest.raises(fn.ParameterError, match="split"):
        fast_tcp(split=2.0)
    with pytest.raises(fn.ParameterError, match="alpha"):
        fast_equilibrium(10.0, 12500.0, 0.1, -1.0)
