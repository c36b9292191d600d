"""Sweep executors: order, parallel results equal serial ones, clear errors."""

import concurrent.futures as cf

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.sweep import (
    DaskExecutor,
    ProcessExecutor,
    SerialExecutor,
    grid_points,
    resolve_executor,
    sweep,
)


def product_and_sum(a, b, offset=0.0):
    return {"product": a * b, "sum": a + b + offset}


def fails_at_two(a):
    if a == 2.0:
        raise fn.AnalysisError("no answer at a=2")
    return a


def test_serial_sweep_builds_the_grid_in_order():
    ds = sweep(product_and_sum, {"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0]}, offset=0.5)
    assert ds["product"].dims == ("a", "b") and ds["product"].shape == (3, 2)
    a, b = np.meshgrid([1.0, 2.0, 3.0], [10.0, 20.0], indexing="ij")
    np.testing.assert_array_equal(ds["product"].values, a * b)
    np.testing.assert_array_equal(ds["sum"].values, a + b + 0.5)


def test_scalar_results_become_value():
    ds = sweep(lambda a: a**2, {"a": [1.0, 2.0]})
    np.testing.assert_array_equal(ds["value"].values, [1.0, 4.0])


@pytest.mark.parametrize("spec", [2, "processes", ProcessExecutor(2, chunksize=3)])
def test_processes_equal_serial(spec):
    grids = {"a": np.linspace(0, 1, 7), "b": [1.0, 2.0, 5.0]}
    serial = sweep(product_and_sum, grids)
    parallel = sweep(product_and_sum, grids, executor=spec)
    np.testing.assert_array_equal(serial["product"].values, parallel["product"].values)


def test_futures_executor_wrapper_keeps_order():
    with cf.ThreadPoolExecutor(2) as pool:
        out = resolve_executor(pool).map(lambda x: x * 10, range(25))
    assert out == [x * 10 for x in range(25)]


def test_lambda_with_processes_is_refused_clearly():
    with pytest.raises(fn.OptionError, match="pickled"):
        sweep(lambda a: a, {"a": [1.0, 2.0]}, executor="processes")


def test_worker_errors_propagate_with_their_type():
    with pytest.raises(fn.AnalysisError, match="a=2"):
        ProcessExecutor(2).map(fails_at_two, [1.0, 2.0, 3.0])
    with pytest.raises(fn.AnalysisError, match="a=2"):
        SerialExecutor().map(fails_at_two, [1.0, 2.0])


@pytest.mark.parametrize("spec", ["threads", 0, 1.5, object()])
def test_bad_executor_specs(spec):
    with pytest.raises(fn.OptionError, match="executor"):
        resolve_executor(spec)


def test_one_process_is_serial():
    assert isinstance(resolve_executor(1), SerialExecutor)
    assert isinstance(resolve_executor(None), SerialExecutor)


@pytest.mark.parametrize(
    "grids, match",
    [
        ({}, "non-empty"),
        ({"a": []}, "non-empty"),
        ({"a": [[1.0, 2.0]]}, "1-D"),
        ({"a": [1.0, np.nan]}, "non-finite"),
        ({"a": ["x"]}, "numbers"),
    ],
)
def test_bad_grids(grids, match):
    with pytest.raises(fn.ParameterError, match=match):
        grid_points(grids)


def test_dask_missing_or_working():
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="fluidnet\\[dask\\]"):
            DaskExecutor()
    else:  # pragma: no cover - only where dask is installed
        pytest.skip("dask installed: covered by the chart benchmark")
