"""Equilibria at many parameter points at once (issue 34): the full search at a few seeds,
continued to the other points by one vectorized Newton iteration; checked point by point against
independent solutions and the per-point search, and the points it leaves to the per-point search
with their reasons."""

from __future__ import annotations

import numpy as np
import pytest
from equilibrium_laws import kelly3, kelly_by_scipy, tandem, tandem_reference, window_red

import fluidnet as fn
from fluidnet.symbolic.batchequilibria import equilibria_at_points
from fluidnet.symbolic.linearize import equilibria_batch, linearize_batch

t = fn.t


def _grid(**axes):
    mesh = np.meshgrid(*axes.values(), indexing="ij")
    return {k: m.ravel() for k, m in zip(axes, mesh, strict=True)}


def test_window_law_over_a_plane_equals_the_cubic_at_every_point():
    from equilibrium_laws import window_reference

    m = window_red()
    grid = _grid(d=np.linspace(0.05, 0.5, 7), K=np.geomspace(2e-5, 5e-4, 6))
    X, ok, why = equilibria_batch(m, grid, reasons=True)
    assert ok.all() and why == [""] * 42
    for k in range(42):
        want = window_reference(d=grid["d"][k], K=grid["K"][k])
        assert X[k] == pytest.approx([want["W"], want["q"]], rel=1e-12)


def test_queues_that_empty_across_the_plane_settle_in_their_configuration():
    # link 1 is a bottleneck for small C1 and empty (q1 = 0, held by the projection) for
    # large: the continuation changes boundary configuration between neighbours
    m = tandem()
    grid = _grid(C1=np.linspace(900.0, 2600.0, 6), d1=np.linspace(0.05, 0.3, 4))
    X, ok = equilibria_batch(m, grid)
    assert ok.all()
    held = 0
    for k in range(24):
        want = tandem_reference(grid["C1"][k], d1=grid["d1"][k])
        held += want["q1"] == 0
        assert X[k] == pytest.approx(list(want.values()), rel=1e-10, abs=1e-12)
    assert 0 < held < 24  # both configurations are on the plane


def test_a_change_of_configuration_is_continued_not_searched_point_by_point(monkeypatch):
    # on a finer plane every point whose queue empties between it and its neighbour is settled
    # by Newton's method in the other configuration; the full search runs only at the seeds and
    # the checks (it ran at 32 of them, one by one, and left the others unsettled: the
    # configurations were read from the generated code, which has one function for all)
    import fluidnet.symbolic.batchequilibria as be

    calls = []
    full = be.equilibria
    monkeypatch.setattr(be, "equilibria", lambda *a, **k: calls.append(k) or full(*a, **k))
    m = tandem()
    grid = _grid(C1=np.linspace(900.0, 2600.0, 20), d1=np.linspace(0.05, 0.3, 20))
    X, ok, why = equilibria_batch(m, grid, reasons=True)
    assert ok.all() and why == [""] * 400
    assert len(calls) <= be.SEEDS + be.CHECKS
    held = 0
    for k in range(0, 400, 7):
        want = tandem_reference(grid["C1"][k], d1=grid["d1"][k])
        held += want["q1"] == 0
        assert X[k] == pytest.approx(list(want.values()), rel=1e-10, abs=1e-12)
    assert 0 < held < len(range(0, 400, 7))


def test_kelly_exponential_marking_over_a_plane():
    m = kelly3()
    Bs = np.array([6.0, 9.0, 12.0, 15.0])
    grid = _grid(B=Bs, T=np.array([0.05, 1.0]))
    lb = linearize_batch(m, grid)
    assert lb.ok.all()
    for k in range(8):
        (want,) = kelly_by_scipy(grid["B"][k])
        assert lb.equilibrium[k] == pytest.approx(want, rel=1e-10)
    # the delays are the T of every point; A0 is 0 (every term is delayed)
    assert lb.stack.tau[:, 0] == pytest.approx(grid["T"])
    assert np.all(lb.stack.A0 == 0)


def test_a_later_process_recalls_a_search_of_the_same_class(monkeypatch, tmp_path):
    # the gain k and the delay T do not move the equilibria (fluidnet.symbolic.rowscaling):
    # a later process (a new model object, the record on disk) charting a plane over them
    # reads the search that equilibria() made at the defaults instead of searching again, and
    # every point has scipy's equilibrium; a plane that moves them (B) is searched
    import fluidnet.symbolic.equilibrium as eqm
    from fluidnet.symbolic.equilibrium import equilibria

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs
    equilibria(kelly3())  # the first full search of a process: kept in the record
    searched = []
    numeric = eqm._numeric_candidates
    monkeypatch.setattr(
        eqm, "_numeric_candidates", lambda *a, **k: searched.append(1) or numeric(*a, **k)
    )
    m = kelly3()  # a later process's model
    X, ok = equilibria_batch(m, _grid(k=np.array([0.3, 0.7, 2.0]), T=np.array([0.05, 1.0])))
    assert ok.all() and not searched
    (want,) = kelly_by_scipy(12.0)
    for x in X:
        assert x == pytest.approx(want, rel=1e-10)
    grid = _grid(k=np.array([0.3, 0.7]), B=np.array([9.0, 12.0]))
    X, ok = equilibria_batch(m, grid)
    assert ok.all() and searched
    for x, b in zip(X, grid["B"], strict=True):
        (want,) = kelly_by_scipy(b)
        assert x == pytest.approx(want, rel=1e-10)


def test_batch_equals_the_per_point_search_and_its_linearization():
    m = window_red()
    grid = _grid(d=np.array([0.1, 0.3]), K=np.array([5e-5, 3e-4]))
    lb = linearize_batch(m, grid)
    for k in range(4):
        lin = m.linearize(d=grid["d"][k], K=grid["K"][k])
        assert lb.equilibrium[k] == pytest.approx(list(lin.equilibrium.values()), rel=1e-12)
        np.testing.assert_allclose(lb.stack.A0[k], lin.A0, rtol=1e-10, atol=1e-14)
        merged = np.sum(lb.stack.A[k], axis=0)
        np.testing.assert_allclose(merged, np.sum(lin.A, axis=0), rtol=1e-10, atol=1e-14)


def test_points_left_to_the_per_point_search_say_why():
    # three equilibria 1, 3 (tied by the documented order) and -2: the per-point search picks
    # one by the order found and warns; the batch settles no point and says so
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a * (x(t) - 1) * (x(t) - 3) * (x(t) + 2)}, {a: 1.0})
    X, ok, why = equilibria_batch(m, {"a": np.array([1.0, 2.0, 3.0])}, reasons=True)
    assert not ok.any() and np.isnan(X).all()
    assert all("tied by the documented order" in w for w in why)
    # a value out of the parameter's bounds is refused with its name
    y = fn.states("y")
    k = fn.params("k")
    bounded = fn.Model({y: 1 - k * y(t)}, {k: fn.Param(1.0, bounds=(0, None))})
    X, ok, why = equilibria_batch(bounded, {"k": np.array([2.0, -1.0])}, reasons=True)
    assert ok.tolist() == [True, False] and X[0, 0] == pytest.approx(0.5, rel=1e-15)
    assert "parameter 'k' = -1" in why[1]


def test_guess_selects_the_branch_that_is_continued():
    # x' = (x - 1)(x - 4 a): with guess near 4 a the search returns 4 a, which is continued
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: (x(t) - 1) * (x(t) - 4 * a)}, {a: 1.0})
    values = {"a": np.linspace(2.0, 3.0, 5)}
    X, ok = equilibria_batch(m, values, guess={"x": 9.0})
    assert ok.all() and X[:, 0] == pytest.approx(4 * values["a"], rel=1e-14)


def test_points_whose_continuation_fails_are_searched_on_their_own():
    # a fold: x' = a - x^2 has the equilibria +- sqrt(a) (the positive one first) for a >= 0
    # and none below; continuation does not settle a < 0, the full search there gives its error
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a - x(t) ** 2}, {a: 1.0})
    from fluidnet.symbolic.equilibrium import _plan

    plan = _plan(m)
    values = np.linspace(-1.0, 4.0, 21)
    found = equilibria_at_points(m, plan, plan.code, values[None, :], np.ones(21, dtype=bool))
    assert found.ok.tolist() == (values >= 0).tolist()
    assert found.x[values >= 0, 0] == pytest.approx(
        np.sqrt(values[values >= 0]), rel=1e-14, abs=1e-15
    )
    assert all("no equilibrium found" in found.reasons[k] for k in np.flatnonzero(values < 0))


@pytest.mark.parametrize(
    "name",
    [
        "tcp_red_rtt",
        "primal_dual",
        "kelly_three_routes",
        "pi_over_tcp",
        "sigmoid_rate",
        "tandem_two_class",
        "kelly_twenty",
    ],
)
def test_user_laws_batch_equals_the_per_point_search(name):
    """The laws written from scratch for issue 34 (tests/user_laws.py), over 3 x 3 points of
    their chart planes: every point settled by the batch is the equilibrium the per-point search
    returns there (the law with three equilibria included)."""
    import warnings

    import user_laws

    law = user_laws.LAWS[name]
    m = law.build()
    grid = _grid(**user_laws.plane_axes(law, 3))
    X, ok = equilibria_batch(m, grid)
    assert ok.all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fn.EquilibriumWarning)
        for k in range(9):
            eq = m.equilibrium(**{a: grid[a][k] for a in grid})
            assert X[k] == pytest.approx(list(eq.values()), rel=1e-9, abs=1e-12)
