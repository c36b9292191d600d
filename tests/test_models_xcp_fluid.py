"""XCP fluid model (Katabi, Handley & Rohrs 2002)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models import xcp, xcp_alpha_bound, xcp_beta


def test_equilibrium_and_loop_gain():
    m = xcp()
    assert m.equilibrium() == {"y": 12500.0, "q": 0.0}
    a, b, d = 0.4, 0.226, 0.08
    s = 1j * np.logspace(-1, 2, 7)
    G = (a / d * s + b / d**2) * np.exp(-d * s) / s**2
    np.testing.assert_allclose(m.loop_gain("y")(s), G, rtol=1e-12)


def test_theorem_one_phase_margin_is_independent_of_delay():
    """With beta = sqrt(2) alpha^2: crossover at w d = sqrt(2) alpha, PM = pi/4 - sqrt(2) alpha."""
    for d in (0.01, 0.3):
        mg = fn.margins(xcp(beta=xcp_beta(0.4), d=d).loop_gain("y"))
        assert mg.phase_margin == pytest.approx(
            math.degrees(math.pi / 4 - 0.4 * math.sqrt(2)), abs=1e-9
        )
        assert mg.gain_crossover * d == pytest.approx(0.4 * math.sqrt(2), rel=1e-10)


def test_theorem_one_bound_is_exact_on_its_curve():
    """On beta = sqrt(2) alpha^2 the boundary sqrt(2) sin^2 w = cos w gives w = pi/4."""
    lin = lambda a: xcp(alpha=a, beta=xcp_beta(a)).linearize()  # noqa: E731
    assert lin(0.99 * xcp_alpha_bound()).is_stable()
    assert not lin(1.01 * xcp_alpha_bound()).is_stable()
    assert xcp_alpha_bound() == pytest.approx(0.5553603672697958, rel=1e-15)


def test_fairness_states_and_errors():
    m = xcp(flows=2)
    assert m.state_names == ("y", "q", "r1", "r2")
    with pytest.raises(fn.ParameterError, match="flows"):
        xcp(flows=-1)
    with pytest.raises(fn.ParameterError, match="alpha"):
        xcp(alpha=-0.1)
