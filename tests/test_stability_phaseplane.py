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
    # an initial condition naming a state the model does not have was an IntegrationError (the
    # integrator never ran), and a bad n_points was blamed on simulate_ensemble
    with pytest.raises(fn.ModelError, match=r"member 0: history given for 'rate'"):
        fn.phase_portrait(m, [{"rate": 1.0}], x="R", y="q", t_end=1.0)
    with pytest.raises(fn.OptionError, match=r"^phase_portrait: n_points = 1 must be at least 2"):
        fn.phase_portrait(m, ICS, x="R", y="q", t_end=1.0, n_points=1)
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
    # an unknown name is a ParameterError, as in stability_chart (it was an AnalysisError)
    with pytest.raises(fn.ParameterError, match="'gain' is not a parameter of model 'rcp'"):
        fn.nonlinear_chart(m, {"gain": [1.0]}, ics=ICS, t_end=1.0)
    with pytest.raises(fn.ParameterError, match="'gain' is not a parameter of model 'rcp'"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, params={"gain": 1.0})
    # options read only after the runs: a raw TypeError / ValueError from the classification
    # (after every trajectory had been integrated), or an error blamed on simulate_ensemble
    with pytest.raises(fn.OptionError, match=r"equilibrium_rtol = 'x' must be a real number"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, equilibrium_rtol="x")
    with pytest.raises(fn.OptionError, match=r"equilibrium_rtol = 0 must be positive"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, equilibrium_rtol=0)
    with pytest.raises(fn.OptionError, match=r"after = '0.5' must be a real number"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, after="0.5")
    with pytest.raises(fn.OptionError, match=r"^nonlinear_chart: n_points = -3 must be at least"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, n_points=-3)
    with pytest.raises(fn.ModelError, match="'rate' is not a state"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, state="rate")
    with pytest.raises(fn.OptionError, match="both as a grid and in params"):
        fn.nonlinear_chart(m, {"alpha": [1.0]}, ics=ICS, t_end=1.0, params={"alpha": 0.5})


# ----------------------------------------------------------------------------- memory
_OSCILLATOR = """
import resource, sys
import numpy as np
import fluidnet as fn
x, y = fn.states("x y")
a, b = fn.params("a b")
m = fn.Model(rhs={x: y(fn.t), y: -a * x(fn.t - 1) - b * y(fn.t)}, params={a: 0.5, b: 1.0})
ics = [{"x": 1.0, "y": 0.0}, {"x": -0.5, "y": 0.5}]
n = int(sys.argv[1])
fn.nonlinear_chart(m, {"a": [0.5], "b": [1.0]}, ics=ics, t_end=1.0, progress=False)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ds = fn.nonlinear_chart(m, {"a": np.linspace(0.1, 2, n), "b": np.linspace(0.1, 2, n)},
                        ics=ics, t_end=15.0, workers=1, progress=False)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((peak - base) * 1024, int(ds["stable"].sum()))
"""


def test_nonlinear_chart_memory_is_result_sized():
    # 32 x 32 points x 2 starts x 2 states x 4001 times = 131 MB of trajectories (all held at
    # once before: the peak grew by 132 MB); verdicts only are kept now, one batch of
    # trajectories (256 x 2 x 4001 doubles = 16 MB) at a time
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _OSCILLATOR, "32"], capture_output=True, text=True, check=True
    ).stdout.split()
    grew, n_stable = int(out[0]), int(out[1])
    trajectories = 32 * 32 * 2 * 2 * 4001 * 8
    assert grew < 0.5 * trajectories, f"peak memory grew by {grew / 1e6:.0f} MB"
    assert 0 < n_stable < 32 * 32


def test_nonlinear_chart_batches_give_the_same_verdicts(monkeypatch):
    from fluidnet.stability import phaseplane

    m = fn.models.rcp()
    grid = {"alpha": [0.6, 1.4, 1.6], "beta": [0.1, 0.8]}
    kw = {"ics": ICS[:2], "t_end": 200 * D0, "progress": False}
    whole = fn.nonlinear_chart(m, grid, **kw)
    monkeypatch.setattr(phaseplane, "_BATCH_MEMBERS", 3)  # one point (2 starts) per batch
    batched = fn.nonlinear_chart(m, grid, **kw)
    assert whole.equals(batched)
    assert not bool(whole["stable"].sel(alpha=1.4, beta=0.8))


def test_an_unknown_option_names_phase_portrait():
    """Issue 33: phase_portrait(foo=1) blamed simulate_ensemble()."""
    x, y = fn.states("x y")
    a = fn.params("a")
    m = fn.Model({x: y(fn.t), y: -a * x(fn.t - 1) - y(fn.t)}, {a: 0.5}, name="osc")
    with pytest.raises(fn.OptionError, match=r"phase_portrait\(\) got unknown option.*'foo'.*rtol"):
        fn.phase_portrait(m, [{"x": 1.0}], x="x", y="y", t_end=2.0, foo=1)
    with pytest.raises(fn.OptionError, match=r"phase_portrait\(\) takes parameter overrides"):
        fn.phase_portrait(m, [{"x": 1.0}], x="x", y="y", t_end=2.0, a=0.3)
    pp = fn.phase_portrait(m, [{"x": 1.0}], x="x", y="y", t_end=2.0, rtol=1e-8)
    assert pp.x.shape == (1, 2001)
