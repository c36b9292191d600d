"""oscillation: converged vs decaying vs sustained, on known signals and on RCP (seed 004)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.errors import AnalysisError, ParameterError

TT = np.linspace(0.0, 200.0, 40001)
C, N, D0 = 18750.0, 10.0, 0.2


@pytest.mark.parametrize(
    ("signal", "status", "ratio"),
    [
        (1 + np.exp(-0.05 * TT) * np.sin(TT), "decaying", np.exp(-0.05 * 2 * np.pi)),
        (1 + np.exp(-0.0015 * TT) * np.sin(TT), "decaying", np.exp(-0.0015 * 2 * np.pi)),
        (3 + 2 * np.sin(TT), "sustained", 1.0),
        (np.exp(0.002 * TT) * np.sin(TT), "growing", np.exp(0.002 * 2 * np.pi)),
    ],
    ids=["decay", "slow-decay", "limit-cycle", "growth"],
)
def test_amplitude_ratio_and_period_of_known_signals(signal, status, ratio):
    osc = fn.oscillation((TT, signal), "x", after=100.0)
    assert osc.status == status
    assert osc.decay_ratio == pytest.approx(ratio, rel=2e-4)
    assert osc.period == pytest.approx(2 * np.pi, rel=1e-5)
    assert osc.frequency == pytest.approx(1 / (2 * np.pi), rel=1e-5)
    assert osc.converged == (status == "decaying")
    assert osc.sustained == (status != "decaying")


def test_sustained_amplitude_and_mean():
    osc = fn.oscillation((TT, 3 + 2 * np.sin(TT)), "x")
    assert osc.amplitude == pytest.approx(4.0, rel=1e-6)
    assert osc.mean == pytest.approx(3.0, rel=1e-5)
    assert osc.omega == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize(
    ("signal", "status"),
    [
        (np.full_like(TT, 2.0), "converged"),
        (1 - np.exp(-0.01 * TT), "settling"),
        (np.exp(0.01 * TT), "diverging"),
    ],
)
def test_signals_without_oscillation(signal, status):
    assert fn.oscillation((TT, signal), "x").status == status


def test_kelly_primal_near_equilibrium_decays_like_its_characteristic_root():
    """x' = kappa (1 - x(t-1)^11): linearization x' = -1.54 x(t-1), root W_0(-1.54)."""
    m = fn.models.kelly_primal([[1]], T=1.0, w=1.0, c=1.0, B=10, kappa=0.14)
    sol = fn.simulate(m, 1500.0, history={"x_1": 0.5}, rtol=1e-9, atol=1e-12)
    lam = complex(lambertw(-1.54, 0))  # the rightmost root of s = -1.54 exp(-s)
    osc = fn.oscillation(sol, "x_1", after=700.0, tol=1e-12)
    assert osc.status == "decaying"
    assert osc.period == pytest.approx(2 * np.pi / lam.imag, rel=1e-4)
    assert osc.decay_ratio == pytest.approx(np.exp(lam.real * 2 * np.pi / lam.imag), rel=2e-3)


@pytest.mark.parametrize(
    ("alpha", "beta", "sustained"),
    [(0.6, 0.2, False), (0.6, 0.8, False), (1.4, 0.8, True)],
)
def test_rcp_phase_plane_points(alpha, beta, sustained):
    """Seed 004, Figs 41-43: (0.6, 0.2) and (0.6, 0.8) converge, (1.4, 0.8) keeps oscillating.

    Initial condition of Fig 43 (bottom): R = 0.01 C, q = 2 C d0; 400 RTTs."""
    m = fn.models.rcp(alpha=alpha, beta=beta)
    sol = fn.simulate(m, 400 * D0, history={"R": 0.01 * C, "q": 2 * C * D0})
    osc = fn.oscillation(sol, "R", after=200 * D0)
    assert osc.sustained == sustained
    assert osc.converged == (not sustained)
    if sustained:
        # note 004, sec 2.9: |gamma_agg - 1| ~ 0.27, q up to ~ 0.28 C d0
        assert osc.amplitude * N / C == pytest.approx(2 * 0.27, rel=0.1)
        assert fn.oscillation(sol, "q", after=200 * D0).amplitude / (C * D0) == pytest.approx(
            0.28, rel=0.1
        )
    else:
        assert sol(400 * D0, "R") == pytest.approx(C / N, rel=1e-4)


def test_ensemble_member_input_and_errors():
    m = fn.models.rcp(alpha=1.4, beta=0.8)
    ds = fn.simulate_ensemble(
        m, 40.0, history=[{"R": 0.01 * C, "q": 2 * C * D0}], n_points=4001, progress=False
    )
    osc = fn.oscillation(ds["R"].isel(member=0), "R", after=20.0)
    assert osc.status == "sustained"
    with pytest.raises(ParameterError, match="1-D"):
        fn.oscillation(ds["R"], "R")
    with pytest.raises(ParameterError, match="outside"):
        fn.oscillation((TT, np.sin(TT)), "x", after=300.0)
    with pytest.raises(AnalysisError, match="not finite"):
        fn.oscillation((TT, np.where(TT > 150, np.nan, 1.0)), "x")
