"""Solution: dense output with history, output times, export and plotting."""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn

t = fn.t


def _model():
    x, y = fn.states("x y")
    k = fn.params("k")
    return fn.Model(rhs={x: -k * y(t - 1), y: x(t)}, params={k: 1.0}, name="oscillator")


def test_dense_output_history_and_mesh():
    hist = {"x": np.cos, "y": lambda s: np.sin(s)}
    sol = fn.simulate(_model(), 6.0, history=hist, rtol=1e-9, atol=1e-12)
    past = np.linspace(-1.9, 0.0, 50)
    np.testing.assert_allclose(sol(past), [np.cos(past), np.sin(past)], atol=1e-10)
    assert sol.t[0] == 0.0 and sol.t[-1] == 6.0
    np.testing.assert_array_equal(sol.t, sol.mesh)
    np.testing.assert_allclose(sol.y[:, -1], sol(6.0), rtol=1e-14)
    np.testing.assert_allclose(sol.y, sol(sol.t), rtol=1e-12, atol=1e-14)
    assert sol(3.0, "y") == pytest.approx(sol(3.0)[1])
    assert sol(np.array([1.0, 2.0]), ["y"]).shape == (1, 2)


def test_t_eval_and_export():
    te = np.linspace(0.0, 5.0, 11)
    sol = fn.simulate(_model(), 5.0, params={"k": 0.5}, history={"x": 1.0, "y": 0.0}, t_eval=te)
    np.testing.assert_array_equal(sol.t, te)
    np.testing.assert_allclose(sol.y, sol(te), rtol=1e-13, atol=1e-15)
    ds = sol.to_xarray()
    assert list(ds.data_vars) == ["x", "y"]
    np.testing.assert_array_equal(ds["time"].values, te)
    assert ds.attrs["param_k"] == 0.5 and ds.attrs["method"] == "DP5"
    assert "oscillator" in repr(sol) and "steps=" in repr(sol)


def test_plot_draws_one_axes_per_state():
    sol = fn.simulate(_model(), 4.0, history={"x": 1.0, "y": 0.0})
    axes = sol.plot()
    assert len(axes) == 2 and axes[1].get_ylabel() == "y"
    assert len(axes[0].lines[0].get_xdata()) >= 2000
    axes = sol.plot(states=["x"])
    assert len(axes) == 1


def test_a_solution_continues_as_history():
    """Continuing from a run reads its dense output exactly and matches one long run."""
    m = fn.models.rcp(alpha=1.4, beta=0.8)
    start = {"R": 9375.0, "q": 0.0}
    first = fn.simulate(m, 8.0, history=start, rtol=1e-9, atol=1e-9)
    cont = fn.simulate(m, 20.0, history=first, rtol=1e-9, atol=1e-9)
    assert cont.t0 == 8.0
    past = np.linspace(-0.5, 8.0, 301)
    np.testing.assert_allclose(cont(past), first(past), rtol=1e-14)
    whole = fn.simulate(m, 20.0, history=start, rtol=1e-9, atol=1e-9)
    tt = np.linspace(8.0, 20.0, 121)
    np.testing.assert_allclose(cont(tt), whole(tt), rtol=1e-6, atol=1e-6 * 18750 * 0.2)
    # starting inside the earlier run cuts its last piece at t0
    mid = fn.simulate(m, 20.0, history=whole, t0=5.0, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mid(5.0), whole(5.0), rtol=1e-15)
    with pytest.raises(fn.IntegrationError, match="outside the run"):
        fn.simulate(m, 30.0, history=whole, t0=25.0)
