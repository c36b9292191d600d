"""One result family for critical values (issue 24): a single set gives a CriticalValue, a grid
a CriticalValues collection of them; both have .to_xarray() and .plot().

The model is ``x' = -k x(t - T)``, stable iff ``k T < pi/2``: the critical delay is
``T* = pi / (2 k)`` with crossing frequency ``omega = k`` (closed form).
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

import fluidnet as fn
from fluidnet.stability import CriticalValue, CriticalValues

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def model():
    x = fn.states("x")
    k, T, a, b = fn.params("k T a b")
    # a, b: extra damping (0 by default, the closed form's case), for grids of 2 and 3 dims
    return fn.Model({x: -k * x(fn.t - T) - (a + b) * x(fn.t)}, {k: 2.0, T: 0.1, a: 0.0, b: 0.0})


@pytest.fixture(scope="module")
def grid(model):
    return fn.critical_value(model, "T", 0.1, 2.0, grid={"k": [1.0, 2.0, 4.0]})


def test_one_set_and_a_grid_give_the_same_family(model, grid):
    one = fn.critical_value(model, "T", 0.1, 2.0, params={"k": 2.0})
    assert isinstance(one, CriticalValue) and isinstance(grid, CriticalValues)
    assert one.value == pytest.approx(math.pi / 4, rel=1e-12) and one.omega == pytest.approx(2.0)
    # position and parameter value give the same CriticalValue as the single call
    for cv in (grid[1], grid.sel(k=2.0)):
        assert isinstance(cv, CriticalValue)
        assert cv.value == pytest.approx(one.value, rel=1e-12, abs=0)
        assert cv.omega == pytest.approx(one.omega, rel=1e-12, abs=0)
        assert cv.direction == "destabilizing" and cv.checks
    # the whole grid against the closed form, through attributes, keys and iteration
    expect = math.pi / (2 * np.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(grid.value.values, expect, rtol=1e-12)
    np.testing.assert_allclose(grid["omega"].values, [1.0, 2.0, 4.0], rtol=1e-12)
    np.testing.assert_allclose([cv.value for cv in grid], expect, rtol=1e-12)
    assert len(grid) == 3 and grid.shape == (3,) and grid.dims == ("k",)


def test_to_xarray_has_the_same_variables_for_one_set_and_a_grid(model, grid):
    one = fn.critical_value(model, "T", 0.1, 2.0, params={"k": 2.0})
    ds1, dsg = one.to_xarray(), grid.to_xarray()
    assert set(ds1.data_vars) - {"check_value", "check_count"} == set(dsg.data_vars)
    assert float(ds1["value"]) == one.value and float(ds1["omega"]) == one.omega
    assert float(ds1["frequency"]) == pytest.approx(1 / math.pi, rel=1e-12)  # omega / 2 pi
    assert bool(ds1["destabilizing"]) and str(ds1["error"].values) == ""
    checks = zip(ds1["check_value"].values, ds1["check_count"].values, strict=True)
    assert [(v, int(n)) for v, n in checks] == list(one.checks)
    assert ds1.attrs["parameter"] == "T" and dsg.attrs["parameter"] == "T"
    assert dsg.attrs["lo"] == 0.1 and dsg.attrs["hi"] == 2.0
    dsg["value"][:] = 0.0  # a copy: the collection is not changed through it
    assert grid.value.values[0] == pytest.approx(math.pi / 2)


def test_a_failed_set_holds_its_message_and_says_where(model):
    # k = 0.5: T* = pi > 2, no switch in [0.1, 2]
    res = fn.critical_value(model, "T", 0.1, 2.0, grid={"k": [0.5, 2.0]}, on_error="nan")
    assert math.isnan(res.value.values[0]) and "no stability switch" in res.error.values[0]
    assert res.count_after.values[0] == -1 and res.error.values[1] == ""
    with pytest.raises(fn.AnalysisError, match=r"at k=0.5: no stability switch"):
        res[0]
    assert isinstance(list(res)[0], str)
    assert "1 found, 1 failed" in repr(res)


def test_selection_errors_are_clear(grid):
    with pytest.raises(fn.OptionError, match="not on the grid"):
        grid.sel(k=3.0)
    with pytest.raises(fn.OptionError, match="one value for each of"):
        grid.sel(T=1.0)


def test_plots(model, grid):
    one = fn.critical_value(model, "T", 0.1, 2.0, params={"k": 2.0})
    ax = one.plot()
    assert ax.get_xlabel() == "T" and ax.lines  # the certificate's steps and the value
    assert ax.lines[-1].get_xdata()[0] == pytest.approx(one.value)
    ax = grid.plot()
    np.testing.assert_allclose(ax.lines[0].get_ydata(), grid.value.values)
    plane = fn.critical_value(model, "T", 0.1, 4.0, grid={"k": [1.0, 2.0], "a": [0.0, 0.1]})
    assert plane.shape == (2, 2)
    assert plane.plot().get_ylabel() == "a"


def test_a_three_dimensional_grid_does_not_plot(model):
    res = fn.critical_value(
        model, "T", 0.1, 4.0, grid={"k": [1.0, 2.0], "a": [0.0], "b": [0.0, 0.1]}, on_error="nan"
    )
    with pytest.raises(fn.AnalysisError, match="1-D or 2-D"):
        res.plot()
