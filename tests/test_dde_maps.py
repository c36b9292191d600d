"""Discrete-time maps (fluidnet.dde.maps): closed forms, numpy's own draws, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.dde.maps import BLOCK_STEPS, DiscreteMap, iterate_map


def test_affine_map_closed_form():
    """x <- a x + b: x_k = a^k x0 + b (1 - a^k) / (1 - a)."""
    a, b, x0 = 0.9, 0.3, 2.0
    run = iterate_map(DiscreteMap({"x": "a*x + b"}, params={"a": a, "b": b}), [x0], 60)
    k = np.arange(61)
    exact = a**k * x0 + b * (1 - a**k) / (1 - a)
    np.testing.assert_allclose(run.x[0], exact, rtol=1e-13)
    np.testing.assert_array_equal(run.steps, k)
    # params= overrides a default: b = 0 is pure decay
    run0 = iterate_map(DiscreteMap({"x": "a*x + b"}, params={"a": a, "b": b}), [x0], 5,
                       params={"b": 0.0})  # fmt: skip
    np.testing.assert_allclose(run0.x[0], x0 * a ** np.arange(6), rtol=1e-15)
    assert run0.params == {"a": a, "b": 0.0}


def test_vector_affine_map_updates_simultaneously():
    """(x, y) <- (y, x): a swap, which an in-place update would break."""
    run = iterate_map(DiscreteMap({"x": "y", "y": "x"}), {"x": 1.0, "y": 2.0}, 3)
    np.testing.assert_array_equal(run.x, [[1, 2, 1, 2], [2, 1, 2, 1]])


def test_logistic_map_period_two_orbit():
    """The logistic map r x (1 - x) for 3 < r < 1 + sqrt(6): the period-2 orbit
    (r + 1 +- sqrt((r - 3)(r + 1))) / (2 r), and its mean (r + 1) / (2 r)."""
    r = 3.3
    run = iterate_map(DiscreteMap({"x": "r*x*(1 - x)"}, params={"r": r}), [0.2], 2000, average=0.5)
    root = math.sqrt((r - 3) * (r + 1))
    orbit = sorted([(r + 1 - root) / (2 * r), (r + 1 + root) / (2 * r)])
    np.testing.assert_allclose(sorted(run.x[0, -2:]), orbit, rtol=1e-12)
    assert run.average_steps == 1000
    assert run.mean_states[0] == pytest.approx((r + 1) / (2 * r), rel=1e-12)


def test_random_inputs_are_numpys_draws_in_order():
    """Each step draws the inputs in declared order: the states equal numpy's own stream
    from the same seed, across the block boundary of the compiled loop."""
    steps = BLOCK_STEPS + 1234
    m = DiscreteMap({"first": "u", "second": "v"}, random=["u", "v"])
    run = iterate_map(m, [0.0, 0.0], steps, seed=12345)
    draws = np.random.default_rng(12345).random(2 * steps).reshape(steps, 2)
    np.testing.assert_array_equal(run.x[:, 1:], draws.T)
    # averaged over the last half: the mean of the same draws
    half = steps - round(0.5 * steps)
    np.testing.assert_allclose(run.mean_states, draws[half:].mean(axis=0), rtol=1e-12)
    other = iterate_map(m, [0.0, 0.0], 10, seed=1)
    np.testing.assert_array_equal(other.x[:, 1:], np.random.default_rng(1).random((10, 2)).T)


def test_signals_evaluated_in_order_and_averaged():
    """s1 = x + 1, s2 = 2 s1, x <- s2: x_k = 2 x_{k-1} + 2, i.e. x_k = 2^k (x0 + 2) - 2."""
    m = DiscreteMap({"x": "s2"}, signals={"s1": "x + 1", "s2": "2*s1"})
    run = iterate_map(m, [1.0], 10, average=0.2)  # averages over steps 9 and 10
    k = np.arange(11)
    np.testing.assert_array_equal(run.x[0], 2.0**k * 3 - 2)
    np.testing.assert_allclose(run.mean_states, [(run.x[0, 9] + run.x[0, 10]) / 2])
    # signals of steps 9 and 10 are computed from x_8 and x_9
    s1 = np.array([run.x[0, 8] + 1, run.x[0, 9] + 1])
    np.testing.assert_allclose(run.mean_signals, [s1.mean(), 2 * s1.mean()])


def test_record_every_keeps_the_initial_state_and_every_kth():
    run = iterate_map(DiscreteMap({"x": "x + 1"}), [0.0], 10, record_every=3)
    np.testing.assert_array_equal(run.steps, [0, 3, 6, 9])
    np.testing.assert_array_equal(run.x[0], [0, 3, 6, 9])


def test_numba_backend_gives_the_same_bits():
    pytest.importorskip("numba")
    m = DiscreteMap({"x": "Max(r*x*(1 - x) + 0.01*(u - 1/2), 0)"}, params={"r": 3.7}, random="u")
    c = iterate_map(m, [0.4], 5000, seed=3, backend="c")
    nb = iterate_map(m, [0.4], 5000, seed=3, backend="numba")
    assert (c.backend, nb.backend) == ("c", "numba")
    np.testing.assert_array_equal(c.x, nb.x)


def test_non_finite_state_names_state_and_step():
    """x <- x^2 from 10: x_k = 10^(2^k) overflows at step 9 (1e512)."""
    m = DiscreteMap({"y": "1", "x": "x**2"})
    with pytest.raises(fn.IntegrationError, match=r"state 'x' is not finite .* after step 9"):
        iterate_map(m, [0.0, 10.0], 20)


def test_errors_name_what_is_at_fault():
    m = DiscreteMap({"x": "a*x"}, params={"a": 0.5})
    with pytest.raises(fn.ParameterError, match="no parameter 'b'"):
        iterate_map(m, [1.0], 3, params={"b": 1.0})
    with pytest.raises(fn.ParameterError, match="parameter 'a'"):
        iterate_map(m, [1.0], 3, params={"a": "0.3"})
    with pytest.raises(fn.ParameterError, match="one value per state"):
        iterate_map(m, [1.0, 2.0], 3)
    with pytest.raises(fn.ParameterError, match="x0 of x is not finite"):
        iterate_map(m, [math.nan], 3)
    with pytest.raises(fn.ParameterError, match="steps"):
        iterate_map(m, [1.0], 0)
    with pytest.raises(fn.ParameterError, match="record_every"):
        iterate_map(m, [1.0], 3, record_every=0)
    with pytest.raises(fn.ParameterError, match="average"):
        iterate_map(m, [1.0], 3, average=0.0)
    with pytest.raises(fn.OptionError, match="backend"):
        iterate_map(m, [1.0], 3, backend="fortran")
    with pytest.raises(fn.ModelError, match="uses 'c'"):
        DiscreteMap({"x": "c*x"})
    with pytest.raises(fn.ModelError, match="signal 's2', which is computed after it"):
        DiscreteMap({"x": "s1"}, signals={"s1": "s2", "s2": "x"})
    with pytest.raises(fn.ModelError, match="'a' is both a state and a parameter"):
        DiscreteMap({"a": "a"}, params={"a": 1.0})
    with pytest.raises(fn.ParameterError, match="parameter 'a'"):
        DiscreteMap({"x": "a*x"}, params={"a": math.inf})


def test_xarray_and_plot():
    pytest.importorskip("xarray")
    import matplotlib

    matplotlib.use("Agg")
    run = iterate_map(DiscreteMap({"x": "a*x + 1"}, params={"a": 0.5}), [0.0], 8, average=0.25)
    ds = run.to_xarray()
    np.testing.assert_array_equal(ds["x"].values, run.x[0])
    np.testing.assert_array_equal(ds["step"].values, np.arange(9))
    assert ds.attrs["param_a"] == 0.5
    assert ds.attrs["mean_x"] == pytest.approx(run.x[0, 7:].mean(), rel=1e-15)
    axes = run.plot()
    assert len(axes) == 1 and axes[0].get_ylabel() == "x"


@pytest.mark.parametrize("seed", ["abc", -1, 1.5, False])
def test_a_bad_seed_is_a_named_error(seed):
    m = DiscreteMap({"x": "u"}, random="u")
    with pytest.raises(fn.OptionError, match=r"iterate_map: seed = .*(whole number|>= 0)"):
        iterate_map(m, [0.0], 3, seed=seed)
    assert iterate_map(m, [0.0], 3, seed=None).x.shape == (1, 4)
