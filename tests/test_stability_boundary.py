"""stability_boundary: RCP's exact curve alpha = w sin w, beta = w^2 cos w by both methods."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn

BETA_MAX = (lambda w: w**2 * math.cos(w))(
    brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)
)


def _check_exact(b, d0):
    hopf = [s for s in b.segments() if s.kind == "hopf"]
    assert hopf, "no Hopf boundary found"
    for seg in hopf:
        w = seg.omega * d0  # dimensionless crossing frequency
        np.testing.assert_allclose(seg.x, w * np.sin(w), rtol=0, atol=1e-9)
        np.testing.assert_allclose(seg.y, w**2 * np.cos(w), rtol=0, atol=1e-9)
        assert np.all((w > 0) & (w < math.pi / 2 + 1e-9))


def test_rcp_boundary_by_dsubdivision_is_exact():
    d0 = 0.2
    b = fn.stability_boundary(
        fn.models.rcp(),
        "alpha",
        "beta",
        x_range=(0.0, 2.0),
        y_range=(0.0, 0.7),
        d0=d0,
        progress=False,
    )
    assert b.method == "dsubdivision"
    _check_exact(b, d0)
    assert BETA_MAX == pytest.approx(0.5498, abs=1e-4)  # note 004 §2.8
    assert np.nanmax(b.y) == pytest.approx(BETA_MAX, abs=1e-5)
    # the curve spans omega d0 in (0, pi/2): it reaches alpha = pi/2 at beta = 0
    assert np.nanmax(b.x) == pytest.approx(math.pi / 2, abs=1e-9)
    # the zero-root segment beta = 0 closes the region for 0 < alpha < pi/2
    zero = [s for s in b.segments() if s.kind == "zero"]
    assert len(zero) == 1 and np.all(zero[0].y == 0.0)
    assert zero[0].x.max() == pytest.approx(math.pi / 2, abs=0.02)


def test_rcp_boundary_by_continuation_is_exact():
    b = fn.stability_boundary(
        fn.models.rcp(),
        "alpha",
        "beta",
        x_range=(0.0, 2.0),
        y_range=(0.05, 0.7),
        d0=1.0,
        method="continuation",
        n_seed=8,
        resolution=0.02,
        progress=False,
    )
    assert b.method == "continuation"
    _check_exact(b, 1.0)
    assert np.nanmax(b.y) == pytest.approx(BETA_MAX, abs=1e-3)


def test_non_affine_plane_uses_continuation():
    # RCP's region does not depend on d0 (note 004 §2.6): in the (alpha, d0) plane at
    # beta = 0.3 the boundary is the two vertical lines alpha = 0.3427 and 1.4061
    w_peak = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)
    w1 = brentq(lambda x: x**2 * math.cos(x) - 0.3, 1e-9, w_peak)
    w2 = brentq(lambda x: x**2 * math.cos(x) - 0.3, w_peak, math.pi / 2)
    with pytest.raises(fn.AnalysisError, match="not affine"):
        fn.stability_boundary(
            fn.models.rcp(),
            "alpha",
            "d0",
            x_range=(0.1, 2.0),
            y_range=(0.1, 1.0),
            beta=0.3,
            method="dsubdivision",
        )
    b = fn.stability_boundary(
        fn.models.rcp(),
        "alpha",
        "d0",
        x_range=(0.1, 2.0),
        y_range=(0.1, 1.0),
        beta=0.3,
        n_seed=5,
        resolution=0.05,
        progress=False,
    )
    assert b.method == "continuation"
    segs = sorted(b.segments(), key=lambda s: s.x.mean())
    assert len(segs) == 2
    for seg, w in zip(segs, (w1, w2), strict=True):
        np.testing.assert_allclose(seg.x, w * math.sin(w), rtol=1e-9)
        np.testing.assert_allclose(seg.omega * seg.y, w, rtol=1e-9)
        assert seg.y.min() == pytest.approx(0.1) and seg.y.max() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"x_range": (1.0, 0.0)}, "x_range"),
        ({"y_range": (0.0,)}, "y_range"),
        ({"method": "magic"}, "method"),
        ({"resolution": 0.0}, "resolution"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"x_range": (0.0, 2.0), "y_range": (0.0, 0.6), **kwargs}
    with pytest.raises(fn.OptionError, match=match):
        fn.stability_boundary(fn.models.rcp(), "alpha", "beta", **args)


def test_same_parameter_twice_and_unknown_name():
    with pytest.raises(fn.OptionError, match="two different"):
        fn.stability_boundary(fn.models.rcp(), "alpha", "alpha", x_range=(0, 1), y_range=(0, 1))
    with pytest.raises(fn.ParameterError, match="gain"):
        fn.stability_boundary(fn.models.rcp(), "alpha", "gain", x_range=(0, 1), y_range=(0, 1))


def test_plot():
    b = fn.stability_boundary(
        fn.models.rcp(),
        "alpha",
        "beta",
        x_range=(0.0, 2.0),
        y_range=(0.0, 0.6),
        resolution=0.05,
        progress=False,
    )
    ax = b.plot()
    assert ax.get_xlabel() == "alpha" and len(ax.lines) >= 2
    assert "dsubdivision" in repr(b)
