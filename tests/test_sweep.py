"""Sweep executors: order, parallel results equal serial ones, clear errors."""

import concurrent.futures as cf
from collections.abc import Sequence

import numpy as np
import pytest
from sweep_helpers import square_root_or_fail

import fluidnet as fn
from fluidnet.sweep import (
    DaskExecutor,
    FuturesExecutor,
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


# ------------------------------------------------------------------ streaming (issue 23)
def _product(a, b):
    return a * b


def _peak_extra_bytes(grids) -> tuple[int, int]:
    """Peak memory (tracemalloc) a sweep allocated above what was allocated before it, and the
    size of the Dataset it returned."""
    import tracemalloc

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        ds = sweep(_product, grids)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(ds["value"].values, np.outer(grids["a"], grids["b"]))
    return peak, ds.nbytes


def test_sweep_memory_grows_with_its_result_not_with_its_points(monkeypatch):
    # issue 23: sweep() once held every point as a dict and every result in lists (about
    # 500 bytes a point; 5.7 GB for a 10^7-point grid whose result is 80 MB)
    sweep(_product, {"a": [1.0], "b": [1.0]})  # imports done before measuring
    # the serial chunks double to their largest size whatever the machine's speed
    monkeypatch.setattr("fluidnet.sweep.executors.SERIAL_CHUNK_SECONDS", 1e9, raising=False)
    small = {"a": np.linspace(0, 1, 80), "b": np.linspace(1, 2, 80)}
    large = {"a": np.linspace(0, 1, 160), "b": np.linspace(1, 2, 160)}
    p1, r1 = _peak_extra_bytes(small)
    p2, r2 = _peak_extra_bytes(large)
    # each further point costs at most twice its share of the result (8 bytes here) ...
    assert p2 - p1 <= 2 * (r2 - r1), (p1, r1, p2, r2)
    # ... above a fixed allowance for the one chunk of points and results in flight
    assert p2 <= 2 * r2 + 1_000_000, (p2, r2)


class _CountingPool(cf.ThreadPoolExecutor):
    """A thread pool that records how many submitted tasks were unfinished at once."""

    def __init__(self):
        super().__init__(2)
        self.outstanding = self.most = 0

    def submit(self, fn, *args):
        self.outstanding += 1
        self.most = max(self.most, self.outstanding)
        fut = super().submit(fn, *args)
        fut.add_done_callback(self._done)
        return fut

    def _done(self, _):
        self.outstanding -= 1


class _Points(Sequence):
    """``range(n)`` that remembers the largest index read."""

    def __init__(self, n):
        self.n, self.read = n, -1

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        self.read = max(self.read, i)
        return i


def test_executors_read_items_and_submit_chunks_as_they_go():
    with _CountingPool() as pool:
        run = FuturesExecutor(pool, chunksize=3, workers=2)
        items = _Points(300)
        unsent, got = [], []

        def receive(indices, out):
            # items read but not handed over: those of the chunks in flight, and this one's
            unsent.append(items.read + 1 - len(got))
            assert out == [10 * i for i in indices]
            got.extend(indices)

        run.map_chunks(lambda x: 10 * x, items, receive)
    assert sorted(got) == list(range(300))
    assert pool.most <= run.in_flight() == 4
    assert max(unsent) <= 3 * (run.in_flight() + 1)


def test_a_sweep_of_differing_keys_or_shapes_says_where():
    def keys(x):
        return {"a": x} if x < 2 else {"a": x, "b": x}

    with pytest.raises(fn.OptionError, match=r"keys \['a', 'b'\] at x=2 but \['a'\] at x=1"):
        sweep(keys, {"x": [1.0, 2.0]})

    def shapes(x):
        return {"v": np.zeros(2 if x < 3 else 3)}

    with pytest.raises(fn.OptionError, match=r"'v' of shape \(3,\) at x=3 but of shape \(2,\)"):
        sweep(shapes, {"x": [1.0, 2.0, 3.0]})


def test_variables_have_the_dtype_of_all_their_values():
    # as numpy makes one array of every value: ints and floats give floats, bools stay bools
    def mixed(x):
        return {"n": 1 if x < 2 else 2.5, "flag": x > 1, "name": "x" * int(x)}

    ds = sweep(mixed, {"x": [1.0, 2.0, 3.0]})
    assert ds["n"].dtype == np.float64 and ds["n"].values.tolist() == [1.0, 2.5, 2.5]
    assert ds["flag"].dtype == bool and ds["flag"].values.tolist() == [False, True, True]
    assert ds["name"].values.tolist() == ["x", "xx", "xxx"] and ds["name"].dtype == "<U3"
    assert list(ds.data_vars) == ["n", "flag", "name"]
