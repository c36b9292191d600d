"""Phase portraits of RCP (seed 004 Sec IV-E) and nonlinear charts."""

import numpy as np
import pytest

import fluidnet as fn

C, D0 = 18750.0, 0.2  # seed 004 phase-plane setup: 0.15 Gb/s, 1000-byte packets, d0 = 0.2 s
# gamma = R/C in {0.5, 0.1, 0.01} x q in {2 C d0, 0}: the six initial conditions of Figs 41-44
ICS = [{"R": g * C, "q": q} for g in (0.5, 0.1, 0.01) for q in (2 * C * D0, 0.0)]


@pytest.mark.parametrize("alpha, beta", [(0.6, 0.2), (0.6, 0.8)])
def test_rcp_figs_41_42_every_trajectory_converges(alpha, beta):
    pp = fn.phase_portrait(
        fn.models.rcp(), ICS, x="R", y="q", t_end=80.0, params={"alpha": alpha, "beta": beta}
    )
    assert pp.equilibrium == {"R": C / 10, "q": 0.0}  # (C/N, 0), seed 004 Sec IV-B
    np.testing.assert_allclose(pp.starts, [[ic["R"], ic["q"]] for ic in ICS])
    np.testing.assert_allclose(pp.x[:, -1], C / 10, rtol=1e-3)
    np.testing.assert_allclose(pp.y[:, -1], 0.0, atol=1e-3 * C * D0)
    ax = pp.plot(x_scale=1 / C)
    assert len(ax.lines) >= 2 * len(ICS)


def test_phase_portrait_errors():
    m = fn.models.rcp()
    with pytest.raises(fn.ModelError, match="'rate' is not a state"):
        fn.phase_portrait(m, ICS, x="rate", y="q", t_end=1.0)
    with pytest.raises(fn.AnalysisError, match="ics"):
        fn.phase_portrait(m, [], x="R", y="q", t_end=1.0)
    with pytest.raises(fn.AnalysisError, match=r"ics\[1\]"):
        fn.phase_portrait(m, [{"R": 1.0}, 3.0], x="R", y="q", t_end=1.0)


def test_rcp_nonlinear_chart_figs_41_to_43():
    m = fn.models.rcp()
    ds = fn.nonlinear_chart(
        m, {"alpha": [0.6, 1.4], "beta": [0.2, 0.8]}, ics=ICS, t_end=400 * D0, progress=False
    )
    st = ds["stable"].sel
    # Figs 41, 42: every trajectory converges; Fig 43: (1.4, 0.8) oscillates for good
    assert bool(st(alpha=0.6, beta=0.2)) and bool(st(alpha=0.6, beta=0.8))
    assert not bool(st(alpha=1.4, beta=0.8))
    point = ds.sel(alpha=1.4, beta=0.8)
    assert bool(point["oscillating"]) and float(point["amplitude"]) > 0.1 * C / 10
    assert np.isfinite(float(point["frequency"]))
    assert "sustained" in point["ic_status"].values.tolist()
    assert ds["ic_status"].dims == ("alpha", "beta", "ic")
    assert ds.stability.plot().get_xlabel() == "alpha"


def test_rcp_onset_at_beta_01_is_the_papers():
    # seed 004 Fig 37 / Sec IV-F: at beta = 0.1 the system is unstable for alpha >= 1.6
    ds = fn.nonlinear_chart(
        fn.models.rcp(),
        {"alpha": [1.5, 1.6], "beta": [0.1]},
        ics=ICS,
        t_end=400 * D0,
        progress=False,
    )
    assert ds["stable"].values.ravel().tolist() == [True, False]


def test_nonlinear_chart_errors():
    m = fn.models.rcp()
    with pytest.raises(fn.AnalysisError, match="'gain' is not a parameter"):
        fn.nonlinear_chart(m, {"gain": [1.0]}, ics=ICS, t_end=1.0)
    with pytest.raises(fn.ModelError, match="'rate' is not a state"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, state="rate")
    with pytest.raises(fn.OptionError, match="both as a grid and in params"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, params={"alpha": 0.5})
