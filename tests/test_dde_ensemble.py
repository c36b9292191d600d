"""simulate_ensemble: members, coordinates, parallel execution, defaults."""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.errors import OptionError, ParameterError

C, N, D0 = 18750.0, 10.0, 0.2
ICS = [{"R": 0.5 * C, "q": 2 * C * D0}, {"R": 0.01 * C, "q": 0.0}]


def test_members_are_the_individual_runs():
    m = fn.models.rcp()
    a, b = np.meshgrid([0.4, 1.4], [0.2, 0.8])
    te = np.linspace(0.0, 10.0, 201)
    ds = fn.simulate_ensemble(
        m, 10.0, params={"alpha": a, "beta": b}, history=ICS, t_eval=te, progress=False
    )
    assert ds.sizes == {"member": 8, "time": 201}
    for member in range(8):
        al, be, h = (float(ds[k][member]) for k in ("alpha", "beta", "history"))
        assert (al, be) == (a.ravel()[member // 2], b.ravel()[member // 2])
        sol = fn.simulate(m, 10.0, params={"alpha": al, "beta": be}, history=ICS[int(h)], t_eval=te)
        np.testing.assert_allclose(ds["R"][member], sol["R"], rtol=1e-12)
        np.testing.assert_allclose(ds["q"][member], sol["q"], rtol=1e-12, atol=1e-9)
        assert int(ds["steps"][member]) == sol.counters.steps
        tb = float(ds["time_on_boundary_q"][member])
        assert tb == pytest.approx(sol.counters.time_on_boundary["q"])
    grid = ds.set_index(member=["alpha", "beta", "history"]).unstack("member")
    assert grid["R"].dims == ("time", "alpha", "beta", "history")


def test_threads_and_serial_give_identical_results():
    m = fn.models.rcp()
    params = {"alpha": np.linspace(0.2, 1.6, 12), "beta": 0.5}
    kw = dict(params=params, history=ICS, n_points=101, progress=False)
    serial = fn.simulate_ensemble(m, 8.0, workers=1, **kw)
    parallel = fn.simulate_ensemble(m, 8.0, workers=2, **kw)
    np.testing.assert_array_equal(serial["R"].values, parallel["R"].values)
    np.testing.assert_array_equal(serial["q"].values, parallel["q"].values)
    assert np.all(serial["beta"].values == 0.5)


def test_default_history_is_each_members_equilibrium():
    m = fn.models.rcp()
    caps = np.array([1000.0, 5000.0, 20000.0])
    ds = fn.simulate_ensemble(m, 5.0, params={"C": caps}, n_points=11, progress=False)
    np.testing.assert_array_equal(ds["R"].values, np.repeat(caps[:, None] / N, 11, axis=1))
    np.testing.assert_array_equal(ds["q"].values, 0.0)
    assert ds.attrs["param_N"] == N


def test_bad_ensemble_arguments():
    m = fn.models.rcp()
    with pytest.raises(ParameterError, match="do not broadcast"):
        fn.simulate_ensemble(m, 1.0, params={"alpha": [0.1, 0.2], "beta": [0.1, 0.2, 0.3]})
    with pytest.raises(ParameterError, match="unknown parameter 'gamma'"):
        fn.simulate_ensemble(m, 1.0, params={"gamma": [0.1]})
    with pytest.raises(OptionError, match="n_points"):
        fn.simulate_ensemble(m, 1.0, n_points=1)
    with pytest.raises(ParameterError, match="empty"):
        fn.simulate_ensemble(m, 1.0, history=[])


def test_parameter_sets_are_validated_like_single_runs():
    m = fn.models.rcp()
    with pytest.raises(ParameterError, match=r"'alpha': value -0.1 is below its lower bound 0"):
        fn.simulate_ensemble(m, 1.0, params={"alpha": [0.2, -0.1]})
    with pytest.raises(ParameterError, match="not finite"):
        fn.simulate_ensemble(m, 1.0, params={"beta": [0.2, np.nan]})
    x = fn.states("x")
    T, a = fn.params("T a")
    shifted = fn.Model(rhs={x: -x(fn.t - (T - a))}, params={T: 1.0, a: 0.0})
    with pytest.raises(ParameterError, match=r"delay T - a .* evaluates to -0.5"):
        fn.simulate_ensemble(shifted, 1.0, params={"a": [0.5, 1.5]}, history={"x": 1.0})


def test_runs_as_histories():
    m = fn.models.rcp(alpha=0.8, beta=0.5)
    warm = fn.simulate(m, 10.0, history=ICS[0])
    ds = fn.simulate_ensemble(
        m, 20.0, t0=10.0, history=[warm], params={"beta": [0.5, 0.6]}, n_points=11, progress=False
    )
    np.testing.assert_allclose(ds["R"][:, 0], warm(10.0, "R"), rtol=1e-15)
    single = fn.simulate(m, 20.0, history=warm, t_eval=ds["time"].values)
    np.testing.assert_allclose(ds["R"][0], single["R"], rtol=1e-12)
