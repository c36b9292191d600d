"""The criticality item of the Misra-Baras-Ott reproduction (fluidnet.papers.mbo.criticality).

Independent truths: the crossing frequency of ``u' = a u + b u(t - tau)`` (a root of the
characteristic equation, checked here with numpy alone), the Lambert-W critical bdp, and the
collocation cycles that a subcritical Hopf point must have on its stable side.
"""

from __future__ import annotations

import cmath
import json
import math

import pytest

import fluidnet as fn
from fluidnet.papers.mbo.criticality import C_SEGMENTS, closed_form_omega, kink_margin
from fluidnet.papers.mbo.mean_field import hopf_bdp_closed_form, pipe_coefficients


def test_quick_item_passes(tmp_path):
    report = fn.reproduce("mbo:criticality", out=tmp_path, quick=True, progress=False)
    assert report.ok, report.summary()
    names = {t.name for t in report.targets}
    assert any(n.startswith("baseline: the Hopf bifurcation is subcritical") for n in names)
    assert any(n.startswith("Hopf curve in (bdp, alpha)") for n in names)
    assert len(report.targets) >= 11
    files = {p.name for p in report.files}
    assert {"criticality_onset_map.png", "criticality.csv"} <= files
    data = json.loads((tmp_path / "mbo" / "targets.json").read_text())
    assert all(t["passed"] for t in data["targets"])


@pytest.mark.parametrize("law", [{}, {"alpha": 0.0}, {"c2": 0.1}])
def test_omega_solves_the_characteristic_equation(law):
    # i omega = a + b exp(-i omega tau) at the critical bdp, numpy/scipy only
    bdp = hopf_bdp_closed_form(5.0, 400.0, **law)
    We, a_tau, b_tau = pipe_coefficients(bdp, **law)
    tau = We / C_SEGMENTS
    omega = closed_form_omega(bdp, **law)
    lam = 1j * omega
    residual = lam - (a_tau + b_tau * cmath.exp(-lam * tau)) / tau
    assert abs(residual) < 1e-9 * omega
    # and it is the first crossing: 0 < omega tau < pi
    assert 0.0 < omega * tau < math.pi


def test_baseline_equilibrium_sits_next_to_the_kink():
    # W_e - bdp = 15.63 segments at the Hopf point: 0.63 above min_th = 15 (zero drift, eq (4))
    bdp = hopf_bdp_closed_form(5.0, 400.0)
    We = pipe_coefficients(bdp)[0]
    assert kink_margin(We, bdp) == pytest.approx(0.633, abs=1e-3)
    p = 0.75 * 0.02 * (We - bdp - 15.0) / 80.0
    assert 1.0 / We * (1 - p) == pytest.approx(0.5 * We * p, rel=1e-10)
