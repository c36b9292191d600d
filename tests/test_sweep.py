"""Sweep executors: order, parallel results equal serial ones, clear errors."""

import concurrent.futures as cf

import numpy as np
import pytest
from sweep_helpers import square_root_or_fail

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
        ({"a": [1.0, np.nan]}, "'a'.*nan is not finite"),
        ({"a": ["x"]}, "'a'.*'x' is not a real number"),
    ],
)
def test_bad_grids(grids, match):
    with pytest.raises(fn.ParameterError, match=match):
        grid_points(grids)


def test_on_error_nan_keeps_every_other_point_and_the_reason():
    x = [4.0, -1.0, 9.0, -4.0]
    ds = sweep(square_root_or_fail, {"x": x}, on_error="nan")
    np.testing.assert_array_equal(ds["root"].values, [2.0, np.nan, 3.0, np.nan])
    np.testing.assert_array_equal(ds["twice"].values, [8.0, np.nan, 18.0, np.nan])
    assert ds["error"].values.tolist() == [
        "",
        "ValueError: no real square root of -1.0",
        "",
        "ValueError: no real square root of -4.0",
    ]
    # the same on worker processes
    assert ds.identical(sweep(square_root_or_fail, {"x": x}, on_error="nan", executor=2))


def test_on_error_raise_names_the_point():
    with pytest.raises(ValueError, match="-1.0") as info:
        sweep(square_root_or_fail, {"x": [4.0, -1.0]})
    assert info.value.__notes__ == ["(sweep at x=-1)"]
    with pytest.raises(fn.OptionError, match="on_error"):
        sweep(square_root_or_fail, {"x": [4.0]}, on_error="skip")


def test_array_results_get_their_own_dimensions():
    ds = sweep(lambda a: {"v": np.array([a, 2 * a, 3 * a])}, {"a": [1.0, 2.0]})
    assert ds["v"].dims == ("a", "v_dim_0")
    np.testing.assert_array_equal(ds["v"].values, [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])


def test_dask_address_and_client_specs_are_recognized():
    with pytest.raises(fn.OptionError, match="client"):
        DaskExecutor(client=object())
    assert resolve_executor(ProcessExecutor(2)).workers == 2


@pytest.mark.parametrize(
    "n, workers, store, expected",
    [(100, 2, False, 13), (100, 2, True, 4), (7, 4, False, 1), (0, 2, False, 1)],
)
def test_default_chunks(n, workers, store, expected):
    # about 4 tasks per worker, 16 with a store (smaller losses when killed)
    assert ProcessExecutor(workers).chunk_size(n, store) == expected
    assert ProcessExecutor(workers, chunksize=5).chunk_size(n, store) == 5
