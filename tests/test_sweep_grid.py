"""fluidnet.sweep.grid: grid points in C order (against itertools.product), lazily indexed, a
sweep of a closed form into an xarray Dataset, failed points, and the errors."""

import itertools
import math

import numpy as np
import pytest

from fluidnet.errors import OptionError, ParameterError
from fluidnet.sweep.grid import GridPoints, grid_axes, grid_points, sweep

GRID = {"a": [0.5, 1.0, 2.0], "b": np.linspace(0.0, 1.0, 5), "c": [10.0, 20.0]}


def _product():
    return [dict(zip(GRID, v, strict=True)) for v in itertools.product(*GRID.values())]


def test_points_in_c_order_like_itertools_product():
    points = GridPoints(GRID)
    expected = _product()
    assert len(points) == 30 and points.shape == (3, 5, 2)
    assert list(points) == expected
    assert [points[i] for i in range(30)] == expected
    assert points[-1] == expected[-1]
    assert points[3:27:2] == expected[3:27:2]  # a long slice: every axis at once
    assert points[4:9] == expected[4:9]
    names, shape, listed = grid_points(GRID)
    assert names == ["a", "b", "c"] and shape == (3, 5, 2) and listed == expected
    with pytest.raises(IndexError, match="out of range"):
        points[30]


def _hypot_and_sum(a, b, c):
    return {"hypot": math.hypot(a, b), "total": a + b + c}


def _sqrt_or_fail(a, b, c):
    if b > 0.6:
        raise ValueError("too large")
    return math.sqrt(a * b)


def test_sweep_collects_a_dataset():
    ds = sweep(_hypot_and_sum, GRID)
    a, b, c = np.meshgrid(*(np.asarray(v, dtype=float) for v in GRID.values()), indexing="ij")
    np.testing.assert_allclose(ds["hypot"].values, np.hypot(a, b), rtol=1e-15)
    np.testing.assert_allclose(ds["total"].values, a + b + c, rtol=1e-15)
    assert list(ds["hypot"].dims) == ["a", "b", "c"]
    np.testing.assert_array_equal(ds["b"].values, GRID["b"])


def test_failed_points_are_nan_with_their_reason():
    ds = sweep(_sqrt_or_fail, GRID, on_error="nan")
    b = ds["b"].values[None, :, None] * np.ones((3, 1, 2))
    a = np.asarray(GRID["a"])[:, None, None] * np.ones((1, 5, 2))
    ok = b <= 0.6
    np.testing.assert_allclose(ds["value"].values[ok], np.sqrt(a * b)[ok])
    assert np.all(np.isnan(ds["value"].values[~ok]))
    assert all("too large" in e for e in ds["error"].values[~ok])
    assert all(e == "" for e in ds["error"].values[ok])
    with pytest.raises(ValueError, match="too large"):
        sweep(_sqrt_or_fail, GRID)


def test_fixed_arguments_are_passed():
    ds = sweep(_hypot_and_sum, {"a": [3.0], "b": [4.0]}, c=100.0)
    assert ds["hypot"].item() == 5.0 and ds["total"].item() == 107.0


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({}, "non-empty dict"),
        ([1, 2], "non-empty dict"),
        ({"a": []}, "non-empty 1-D"),
        ({"a": [[1.0, 2.0]]}, "non-empty 1-D"),
        ({"a": ["0.3"]}, "'a'"),
        ({"a": [True, False]}, "'a'"),
        ({"a": [1.0, np.nan]}, "'a'"),
    ],
)
def test_bad_grids(grid, message):
    with pytest.raises(ParameterError, match=message):
        grid_axes(grid)


def test_bad_on_error():
    with pytest.raises(OptionError, match="on_error = 'ignore'"):
        sweep(_hypot_and_sum, GRID, on_error="ignore")
