"""Nichols charts with exact delays (issue 36): fluidnet.nichols and NicholsResponse, against
the closed-form gain and phase of a delayed integrating loop."""

import numpy as np
import pytest

import fluidnet as fn

K, TAU = 2.0, 0.4


def loop() -> fn.DelayTF:
    """``K e^{-s tau} / (s (s + 1))``: gain ``K / (w sqrt(1 + w^2))``, phase
    ``-90 - atan(w) - w tau`` degrees (continuous in w)."""
    return fn.DelayTF.from_expr(f"{K}*exp(-{TAU}*s)/(s*(s + 1))")


def test_gain_and_unwrapped_phase_match_the_closed_form():
    w = np.geomspace(0.01, 60.0, 400)  # the delay's phase passes several turns
    n = fn.nichols(loop(), w)
    np.testing.assert_allclose(n.omega, w)
    np.testing.assert_allclose(
        n.magnitude_db, 20 * np.log10(K / (w * np.sqrt(1 + w**2))), rtol=1e-12
    )
    phase = -90.0 - np.degrees(np.arctan(w)) - np.degrees(w * TAU)
    np.testing.assert_allclose(n.phase_deg, phase, rtol=0, atol=1e-9)


def test_the_chart_marks_the_margins():
    L = loop()
    n = fn.nichols(L)
    m = fn.margins(L)
    ax = n.plot()
    title = ax.get_title()
    assert f"GM = {m.gain_margin:.3g}" in title and f"PM = {m.phase_margin:.3g}" in title
    # the phase margin's segment starts at the gain crossover's phase, on 0 dB
    wc = m.gain_crossover
    ph_c = -90.0 - np.degrees(np.arctan(wc)) - np.degrees(wc * TAU)
    segments = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2]
    assert any(
        abs(ln.get_xdata()[0] - ph_c) < 0.05 and np.all(ln.get_ydata() == 0.0) for ln in segments
    )
    # and its length is the phase margin: to the critical phase -180 deg
    pm_seg = [ln for ln in segments if np.all(ln.get_ydata() == 0.0)][0]
    assert abs(pm_seg.get_xdata()[0] - pm_seg.get_xdata()[1]) == pytest.approx(
        m.phase_margin, abs=0.05
    )


def test_to_xarray():
    n = fn.nichols(loop(), np.array([0.5, 1.0, 2.0]))
    ds = n.to_xarray()
    np.testing.assert_allclose(ds["magnitude_db"].values, n.magnitude_db)
    assert ds["phase_deg"].attrs["units"] == "degree"
    assert "3 frequencies" in repr(n)
