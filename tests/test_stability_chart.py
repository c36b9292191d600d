"""Stability charts against closed forms: RCP's exact region, Lambert W, delayed integrators."""

import importlib
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import lambertw

import fluidnet as fn

W_PEAK = brentq(lambda x: 2 * x * math.cos(x) - x**2 * math.sin(x), 0.5, 1.5)


def rcp_exactly_stable(alpha, beta):
    """Note 004 §2.8: stable iff 0 < beta < max and alpha between the two boundary branches."""
    if beta <= 0 or beta >= W_PEAK**2 * math.cos(W_PEAK):
        return False
    w1 = brentq(lambda x: x**2 * math.cos(x) - beta, 1e-12, W_PEAK)
    w2 = brentq(lambda x: x**2 * math.cos(x) - beta, W_PEAK, math.pi / 2)
    return w1 * math.sin(w1) < alpha < w2 * math.sin(w2)


def test_rcp_chart_matches_the_closed_form_at_every_point():
    alphas = np.linspace(0.03, 1.75, 17)
    betas = np.linspace(0.013, 0.63, 13)
    ds = fn.stability_chart(fn.models.rcp(), {"alpha": alphas, "beta": betas}, progress=False)
    expected = np.array([[rcp_exactly_stable(a, b) for b in betas] for a in alphas])
    np.testing.assert_array_equal(ds["stable"].values, expected)
    assert expected.sum() > 30 and (~expected).sum() > 30  # both sides well represented
    assert ds["abscissa"].attrs["units"] == "1/s"


def test_a_model_chart_larger_than_its_dense_batch_is_cut_into_batches_that_fit(monkeypatch):
    # issue 34: a 50 x 50 chart of the 100-state network (more points than its dense
    # (K, delays, n, n) matrices may hold: 666) went one point at a time for every point, at
    # 1.9 GB; here RCP (2 states, 2 delays) with room for 30 points, a 3 x 40 grid: one value
    # of alpha (40 points) does not fit, so each is cut along beta
    from fluidnet.symbolic.linearize import dense_batch_points

    # the module (the package's attribute of that name is the function linearize)
    lin_module = importlib.import_module("fluidnet.symbolic.linearize")

    monkeypatch.setattr(lin_module, "BATCH_ENTRIES", 2 * 2 * 2 * 30)
    m = fn.models.rcp()
    assert dense_batch_points(m) == 30
    sizes = []
    batch = lin_module.linearize_batch

    def recorded(model, values, **kw):
        sizes.append(max(np.size(v) for v in values.values()))
        return batch(model, values, **kw)

    monkeypatch.setattr("fluidnet.stability.system.linearize_batch", recorded)
    alphas, betas = np.array([0.2, 0.6, 1.2]), np.linspace(0.013, 0.63, 40)
    ds = fn.stability_chart(m, {"alpha": alphas, "beta": betas}, method="batch", progress=False)
    assert sizes and max(sizes) <= 30 and sum(sizes) == 120
    assert not (ds["fallback"].values != "").any()
    expected = np.array([[rcp_exactly_stable(a, b) for b in betas] for a in alphas])
    np.testing.assert_array_equal(ds["stable"].values, expected)
    assert expected.sum() > 20 and (~expected).sum() > 20


def test_chart_blocks_keep_the_grid_order_and_their_size():
    from fluidnet.stability.chart import _blocks

    axes = [np.arange(3.0), 10.0 + np.arange(5.0), 100.0 + np.arange(4.0)]
    full = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)
    for size, count in ((60, 1), (20, 3), (19, 3 * 2), (7, 3 * 5), (3, 3 * 5 * 2), (1, 60)):
        blocks = _blocks(axes, size)
        assert len(blocks) == count
        points = [
            np.stack([g.ravel() for g in np.meshgrid(*b, indexing="ij")], axis=1) for b in blocks
        ]
        assert max(len(p) for p in points) <= size
        np.testing.assert_array_equal(np.concatenate(points), full)


def test_rcp_beta_zero_has_a_root_at_zero_and_is_not_stable():
    ds = fn.stability_chart(fn.models.rcp(), {"alpha": [0.5, 1.0], "beta": [0.0]})
    assert np.all(ds["abscissa"].values == 0.0) and not ds["stable"].any()


def scalar_dde(a, b):
    return fn.LinearDDE(a, [(1.0, b)])


def test_scalar_chart_abscissa_and_omega_equal_lambert_w():
    a_grid, b_grid = np.array([-1.0, 0.0, 0.4]), np.array([-3.0, -1.0, 0.5])
    ds = fn.stability_chart(scalar_dde, {"a": a_grid, "b": b_grid})
    for i, a in enumerate(a_grid):
        for j, b in enumerate(b_grid):
            lam = a + lambertw(b * np.exp(-a), 0)  # the principal branch is the rightmost root
            assert ds["abscissa"].values[i, j] == pytest.approx(lam.real, abs=1e-12)
            assert ds["omega"].values[i, j] == pytest.approx(abs(lam.imag), abs=1e-12)


def delayed_integrator_loop(k, tau):
    return fn.DelayTF.from_expr(k * fn.sympy.exp(-tau * fn.s) / fn.s)


def test_loop_gain_factory_and_process_executor():
    ks, taus = np.array([0.5, 1.0, 2.0]), np.array([0.3, 1.0, 1.4])
    serial = fn.stability_chart(delayed_integrator_loop, {"k": ks, "tau": taus})
    expected = np.outer(ks, taus) < math.pi / 2
    np.testing.assert_array_equal(serial["stable"].values, expected)
    parallel = fn.stability_chart(delayed_integrator_loop, {"k": ks, "tau": taus}, executor=2)
    np.testing.assert_array_equal(parallel["abscissa"].values, serial["abscissa"].values)


def test_model_chart_with_process_executor_equals_serial():
    grids = {"alpha": [0.3, 0.9, 1.5], "beta": [0.1, 0.4]}
    m = fn.models.rcp()
    m.linearize()  # compiled caches on the model must not break pickling
    serial = fn.stability_chart(m, grids)
    parallel = fn.stability_chart(m, grids, executor="processes")
    np.testing.assert_array_equal(parallel["abscissa"].values, serial["abscissa"].values)


def picky(a):
    if a > 1.0:
        raise fn.AnalysisError(f"no equilibrium for a={a}")
    return fn.LinearDDE(-a)


def test_on_error_raise_or_nan():
    with pytest.raises(fn.AnalysisError, match="stability chart at a=2"):
        fn.stability_chart(picky, {"a": [0.5, 2.0]})
    ds = fn.stability_chart(picky, {"a": [0.5, 2.0]}, on_error="nan")
    assert ds["abscissa"].values[0] == -0.5 and np.isnan(ds["abscissa"].values[1])
    assert not ds["stable"].values[1] and "a=2" in ds["error"].values[1]


def bad_matrix(a):
    # a factory whose system is ill-formed at one point: the linear layer's ModelError
    return fn.LinearDDE(-a if a < 1.0 else [[1.0, 2.0]])


def test_on_error_nan_keeps_points_after_a_linear_layer_error():
    ds = fn.stability_chart(bad_matrix, {"a": [0.5, 2.0, 0.25]}, on_error="nan")
    np.testing.assert_array_equal(ds["abscissa"].values[[0, 2]], [-0.5, -0.25])
    assert np.isnan(ds["abscissa"].values[1]) and "square" in ds["error"].values[1]


def test_bad_arguments():
    m = fn.models.rcp()
    with pytest.raises(fn.ParameterError, match="gamma"):
        fn.stability_chart(m, {"gamma": [1.0]})
    with pytest.raises(fn.OptionError, match="both as a grid and as a fixed"):
        fn.stability_chart(m, {"alpha": [0.5]}, alpha=0.4)
    with pytest.raises(fn.OptionError, match="on_error"):
        fn.stability_chart(m, {"alpha": [0.5]}, on_error="ignore")
    with pytest.raises(fn.ParameterError, match="non-empty"):
        fn.stability_chart(m, {"alpha": []})


def test_plot_accessor():
    ds = fn.stability_chart(fn.models.rcp(), {"alpha": [0.2, 0.8, 1.6], "beta": [0.1, 0.3]})
    ax = ds.stability.plot(show_abscissa=True)
    assert ax.get_xlabel() == "alpha" and ax.get_ylabel() == "beta"
    one = fn.stability_chart(scalar_dde, {"b": [-2.0, -1.0, 0.5]}, a=0.0)
    assert one.stability.plot().get_xlabel() == "b"
