"""SystemFactory: a pickled factory of a model carries the model's built pieces, and a worker
keeps one model per definition."""

import importlib
import pickle
import re
from collections import OrderedDict

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.stability import system
from fluidnet.stability.system import SystemFactory

equilibrium = importlib.import_module("fluidnet.symbolic.equilibrium")
linearize = importlib.import_module("fluidnet.symbolic.linearize")  # the module, not the function


@pytest.fixture
def fresh_worker(monkeypatch):
    """A process that has unpickled no model yet."""
    monkeypatch.setattr(system, "_WORKER_MODELS", OrderedDict())


def test_pickled_factory_builds_nothing_again(fresh_worker, monkeypatch):
    fac = SystemFactory(fn.models.rcp(), {"beta": 0.2})
    points = {"alpha": np.array([0.4, 0.8, 1.2])}
    here = fac.batch(points).stack  # builds the plans here
    shipped = pickle.loads(pickle.dumps(fac))

    def no_build(*args, **kwargs):
        raise AssertionError("a plan was built again after unpickling")

    monkeypatch.setattr(equilibrium._Plan, "__init__", no_build)
    monkeypatch.setattr(linearize._Plan, "__init__", no_build)
    there = shipped.batch(points).stack
    for name in ("A0", "A", "tau"):
        np.testing.assert_array_equal(getattr(there, name), getattr(here, name))


def test_one_model_per_definition_in_a_worker(fresh_worker):
    # two charts (two factories) of equal models: the worker keeps the first model
    a = pickle.loads(pickle.dumps(SystemFactory(fn.models.rcp(), {})))
    b = pickle.loads(pickle.dumps(SystemFactory(fn.models.rcp(), {"beta": 0.5})))
    c = pickle.loads(pickle.dumps(SystemFactory(fn.models.rcp(N=20.0), {})))
    assert a.source is b.source
    assert c.source is not a.source  # another definition (its default N differs)
    assert b.fixed == {"beta": 0.5}


def test_a_factory_is_given_only_the_parameters_it_takes():
    # a name the factory does not take was a raw TypeError from the call
    def delayed(tau, k=1.0):
        return fn.LinearDDE(0.0, [(tau, -k)])

    with pytest.raises(fn.ParameterError, match=r"unknown parameter 'bogus' for the factory "):
        fn.critical_value(delayed, "tau", 0.1, 3.0, bogus=1.0)
    with pytest.raises(
        fn.ParameterError, match=r"unknown parameter 'tua' .*\(parameters: tau, k\)"
    ):
        fn.stability_chart(delayed, {"tua": [0.1, 0.2]})

    def needs_k(tau, k):
        return fn.LinearDDE(0.0, [(tau, -k)])

    with pytest.raises(fn.ParameterError, match=r"the factory 'needs_k' at tau=.*'k'"):
        fn.critical_value(needs_k, "tau", 0.1, 3.0)
    # x' = -k x(t - tau) is stable iff k tau < pi / 2; a factory taking **params takes any name
    cv = fn.critical_value(needs_k, "tau", 0.1, 3.0, k=2.0)
    assert cv.value == pytest.approx(np.pi / 4, rel=1e-12)
    cv = fn.critical_value(lambda **p: needs_k(**p), "tau", 0.1, 3.0, k=2.0)
    assert cv.value == pytest.approx(np.pi / 4, rel=1e-12)


def test_a_box_without_crossing_frequencies_asks_for_omega_max():
    # before: "omega_max = None must be a positive number", about an option nobody gave
    def still(a, b):
        return fn.LinearDDE(np.zeros((2, 2)))

    with pytest.raises(fn.AnalysisError, match=r"crossing frequencies over the box is 0: give"):
        fn.stability_boundary(still, "a", "b", x_range=(0.0, 1.0), y_range=(0.0, 1.0))


def test_an_error_raised_in_a_factory_names_the_point():
    # the factory's own error passes through (it is the user's), with a note saying at which
    # parameter values it was called: before, nothing said where in [0.1, 1] it failed
    def broken(tau):
        return fn.LinearDDE(np.nan if tau > 0.5 else -1.0, [(tau, -0.5)])

    with pytest.raises(fn.ModelError, match="non-finite entry nan") as err:
        fn.critical_value(broken, "tau", 0.1, 1.0)
    notes = [n for n in getattr(err.value, "__notes__", []) if "raised by the factory" in n]
    assert len(notes) == 1, getattr(err.value, "__notes__", None)
    got = re.fullmatch(r"\(raised by the factory 'broken' at tau=(\S+)\)", notes[0])
    assert got and 0.5 < float(got.group(1)) <= 1.0


def test_a_factory_of_a_factory_is_the_model_underneath(monkeypatch):
    # the coarse chart of a boundary by continuation wrapped the boundary's factory in another
    # one: the chart saw a callable, not a model, and solved every point's equilibrium by a
    # full search instead of the batch. The wrapped factory must give the same systems and
    # batch them.
    m = fn.models.rcp()
    inner = SystemFactory(m, {"alpha": 0.4})
    outer = SystemFactory(inner, {"beta": 0.2})
    assert outer.is_model and outer.source is m
    assert outer.fixed == {"alpha": 0.4, "beta": 0.2}
    calls = []
    monkeypatch.setattr(SystemFactory, "__call__", lambda self, **v: calls.append(v))
    ds = fn.stability_chart(
        inner, {"beta": np.linspace(0.1, 0.5, 8), "alpha": np.linspace(0.2, 0.6, 8)}
    )
    assert calls == []  # every point from the batch, none one by one
    direct = fn.stability_chart(
        m, {"beta": np.linspace(0.1, 0.5, 8), "alpha": np.linspace(0.2, 0.6, 8)}
    )
    np.testing.assert_array_equal(ds["abscissa"].values, direct["abscissa"].values)


def test_a_batch_of_more_points_than_its_dense_matrices_hold_is_made_in_parts(monkeypatch):
    # issue 34: the coarse chart of a boundary of the 100-state network with n_seed=40 (1600
    # points, room for 666) was linearized one point at a time, each with the full search (2.5
    # s against 1.1). Here RCP with room for 7 points: 20 points in three batches, each
    # point's system that of its own linearization, an error at point 15 kept at 15.
    monkeypatch.setattr(linearize, "BATCH_ENTRIES", 2 * 2 * 2 * 7)
    m = fn.models.rcp()
    factory = SystemFactory(m)
    assert factory.batch_points() == 7
    sizes = []
    batch = linearize.linearize_batch

    def recorded(model, values, **kw):
        sizes.append(max(np.size(v) for v in values.values()))
        return batch(model, values, **kw)

    monkeypatch.setattr(system, "linearize_batch", recorded)
    alpha = np.linspace(0.2, 1.2, 20)
    alpha[15] = np.nan
    beta = np.linspace(0.1, 0.6, 20)
    made = factory.batch({"alpha": alpha, "beta": beta})
    assert sizes == [7, 7, 6]
    assert set(made.errors) == {15} and "alpha" in str(made.errors[15])
    assert made.fallback == {} and made.separate == {}
    assert made.stack.K == 20 and made.equilibria.shape == (20, 2)
    for k in (0, 6, 7, 14, 16, 19):
        lin = m.linearize(alpha=alpha[k], beta=beta[k])
        expected = dict(lin.equilibrium)
        np.testing.assert_allclose(made.equilibria[k], [expected[s] for s in m.state_names])
        mine = made.system(k)
        np.testing.assert_allclose(mine.A0, lin.A0, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(mine.delays, lin.delays, rtol=1e-14)
        for a1, a2 in zip(mine.A, lin.A, strict=True):
            np.testing.assert_allclose(a1, a2, rtol=1e-12, atol=1e-15)
    # continued from those equilibria (a boundary's steps): parts alike
    sizes.clear()
    again = factory.batch({"alpha": alpha * 1.01, "beta": beta}, near=made.equilibria)
    assert again.stack.K == 20 and set(again.errors) == {15}
