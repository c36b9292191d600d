"""The ``classics`` reproduction: quick runs of its fastest items and key numbers recomputed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.papers.classics import data, mgt_loop
from fluidnet.papers.classics.fast_link_models import integrator_critical_gamma


@pytest.mark.parametrize(
    "item",
    [
        "hollot_pi",
        "dctcp",
        pytest.param("mgt_red_packets", marks=pytest.mark.slow),
        pytest.param("dctcp_packets", marks=pytest.mark.slow),
    ],
)
def test_quick_items_pass(item, tmp_path):
    report = fn.reproduce(f"classics:{item}", out=tmp_path, quick=True, progress=False)
    assert report.ok, report.summary()
    # quick dctcp: refusal, rest point, two (K, g) cases x 2 checks, queue emptiness
    # quick mgt_red_packets: one ns-3 run at Tp = 0.1 s, its mean queue against the fluid's
    # quick dctcp_packets: one ns-3 run at K = 40: period, mean queue, span (a documented mismatch)
    n = {"hollot_pi": 8, "dctcp": 7, "mgt_red_packets": 1, "dctcp_packets": 3}[item]
    assert len(report.targets) >= n
    if item == "dctcp_packets":  # the span mismatches (packet span ~1.6 x the fluid's at K = 40)
        assert [t.status for t in report.targets if t.mismatch] == ["documented mismatch"]


def test_pi_design_numbers():
    """K_pi = omega_g (2N)^2/(R0 C)^3 at omega_g = 0.53 and the Tustin coefficients (ns-2)."""
    N, C, R0 = 60.0, 3750.0, 0.2 + 175.0 / 3750.0
    assert 0.53 * (2 * N) ** 2 / (R0 * C) ** 3 == pytest.approx(9.64e-6, abs=0.005e-6)
    K, z, Ts = 9.64e-6, 0.53, 1 / 170.0
    # a and b are printed with 4 significant digits: half a unit of the last one is 5e-9
    assert K * (1 / z + Ts / 2) == pytest.approx(data.NS2_PI["a"], abs=5e-9)
    assert K * (1 / z - Ts / 2) == pytest.approx(data.NS2_PI["b"], abs=5e-9)
    # margins of the hand-derived exact loop (independent of fluidnet)
    ref = mgt_loop.margins_numpy(
        lambda s: mgt_loop.plant_exact(s, N, C, R0) * mgt_loop.pi_controller(s, K, z), 1e-2, 1e2
    )
    assert ref["phase_margin"] == pytest.approx(75.346, abs=1e-3)
    assert ref["gain_margin"] == pytest.approx(8.6417, abs=1e-3)


def test_xcp_region_closed_form():
    """The stable alpha interval at beta = 0.226 contains the default 0.4; on the theorem's curve
    the crossing is at w = pi/4, alpha = pi/(4 sqrt 2)."""
    lo, hi = data.xcp_alpha_range(0.226)
    assert lo < 0.4 < hi
    w = math.pi / 4
    assert w * math.sin(w) == pytest.approx(data.XCP_ALPHA_BOUND, rel=1e-15)
    assert w * w * math.cos(w) == pytest.approx(math.sqrt(2) * data.XCP_ALPHA_BOUND**2, rel=1e-14)


def test_fast_integrator_critical_gain_scan():
    """The D-subdivision scan returns a gain at which the equation has a root on the axis."""
    rho = 0.862
    g = integrator_critical_gamma(rho)
    W = np.linspace(1e-3, 10, 200001)
    E = np.exp(-1j * W * rho)
    F = (1j * W + g * (1 - rho)) * (1j * W + E) + g * rho * E
    assert np.min(np.abs(F)) < 1e-3
    assert 0.5 < g < 1.5


def test_dcqcn_figure_data_shape():
    """Fig. 3(a): a dip then a rise in N, negative at 100 us for small N."""
    for delay, pts in data.DCQCN_PM_FIGURE.items():
        ns = sorted(pts)
        k = int(np.argmin([pts[n] for n in ns]))
        assert 0 < k < len(ns) - 1, delay
    assert data.DCQCN_PM_FIGURE[100.0][10] < 0 < data.DCQCN_PM_FIGURE[1.0][10]
