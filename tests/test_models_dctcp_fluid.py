"""DCTCP fluid model (Alizadeh, Javanmard & Prabhakar 2011) and the 2010 sawtooth."""

from __future__ import annotations

import math

import pytest

import fluidnet as fn
from fluidnet.models import dctcp, dctcp_sawtooth


def test_no_linearization_on_the_marking_surface():
    """The only rest point has q = K, where p = 1{q > K} switches: fluidnet refuses it."""
    m = dctcp()
    v = m.resolve_params()
    W = v["C"] * (v["d"] + v["K"] / v["C"]) / v["N"]
    with pytest.raises(fn.AnalysisError):
        m.linearize(equilibrium={"W": W, "alpha": math.sqrt(2 / W), "q": v["K"]})


def test_no_smooth_equilibrium():
    """No smooth equilibrium exists: with p = 1, alpha = 1 and W = 2 give R = N W / C and
    q = N W - C d = 20 - 83.3 < 0; with p = 0, dW/dt = 1/R > 0; at q = 0 (held), p = 0 again.
    The search must say so (the rest point is on q = K), not return a point at infinity."""
    m = dctcp()
    with pytest.raises(fn.AnalysisError, match=r"no isolated smooth equilibrium.*-K \+ q = 0"):
        m.equilibrium()


def test_sawtooth_formulas():
    s = dctcp_sawtooth(N=2.0, C=1000.0, d=0.1, K=20.0)  # C d + K = 120
    assert s["W_star"] == 60.0
    assert s["alpha"] == pytest.approx(math.sqrt(2 / 60), rel=1e-15)
    assert s["amplitude"] == pytest.approx(0.5 * math.sqrt(480.0), rel=1e-15)
    assert s["period"] == pytest.approx(0.5 * math.sqrt(120.0) * 0.1, rel=1e-15)
    assert s["q_max"] == 22.0
    with pytest.raises(fn.ParameterError, match="K"):
        dctcp_sawtooth(N=2.0, C=1000.0, d=0.1, K=-1.0)


def test_limit_cycle_mean_alpha_equals_marked_fraction():
    """Over a period, d alpha/dt = (g/R)(p - alpha) averages to zero (weights 1/R)."""
    from fluidnet.papers.classics.dctcp_limit_cycle import cycle

    c = cycle(dctcp(), 0.06)
    assert c["status"] == "sustained"
    assert c["mean_alpha_over_R"] == pytest.approx(c["marked_over_R"], abs=3e-3)
    assert c["q_min"] > 0 and c["utilization"] == pytest.approx(1.0, abs=1e-3)


def test_bad_parameter_named():
    with pytest.raises(fn.ParameterError, match="g"):
        dctcp(g=1.5)
