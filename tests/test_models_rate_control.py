"""The RCP library model (seed 004 eqs 4-7) and its dimensionless form."""

import numpy as np
import pytest

import fluidnet as fn
from fluidnet import ParameterError


def test_defaults_are_the_phase_plane_setup():
    m = fn.models.rcp()
    v = m.values
    assert v["C"] == 0.15e9 / 8000 == 18750.0  # 0.15 Gb/s, 1000-byte packets
    assert (v["N"], v["d0"], v["T"]) == (10.0, 0.2, 0.01)
    assert m.nonnegative == ("q",)
    assert m.params["C"].unit == "pkts/s"


def test_overrides_and_bounds():
    assert fn.models.rcp(alpha=1.4, beta=0.8).values["alpha"] == 1.4
    with pytest.raises(ParameterError, match="'beta'.*below its lower bound"):
        fn.models.rcp(beta=-0.1)


def test_dimensionless_form_matches_eq9_with_unit_delay():
    m = fn.models.rcp_dimensionless(alpha=0.7, beta=0.3)
    assert m.equilibrium() == {"g": 1.0, "x": 0.0}
    L = m.loop_gain("g")
    s = np.array([0.2 + 1.0j, 3.0j, 1.0 + 0.5j])
    np.testing.assert_allclose(L(s), np.exp(-s) * (0.7 * s + 0.3) / s**2, rtol=1e-12)


def test_dimensional_and_dimensionless_characteristic_agree():
    # lambda = s d0 maps the dimensional characteristic function onto the dimensionless one
    d0 = 0.2
    lin = fn.models.rcp(alpha=0.9, beta=0.4, d0=d0).linearize()
    lin_nd = fn.models.rcp_dimensionless(alpha=0.9, beta=0.4).linearize()
    lam = np.array([0.3 + 1.2j, -0.1 + 0.4j])
    ratio = lin.characteristic(lam / d0) / lin_nd.characteristic(lam)
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
