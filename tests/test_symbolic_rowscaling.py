"""Parameters the equilibria do not depend on (issue 34): the factors of the steady-state
equations' rows, the classes of parameter points they define, and their use by the equilibrium
search's memory and the batched equilibria of a chart; checked against equilibria solved by
scipy on residuals written here and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from equilibrium_laws import kelly3, kelly_by_scipy

import fluidnet as fn
from fluidnet.symbolic.rowscaling import row_scaling

t = fn.t


def _free(model) -> set[str]:
    rs = row_scaling(model)
    return {nm for nm, f in zip(rs.names, rs.free, strict=True) if f}


def _column(model, **values) -> np.ndarray:
    p = {**{k: v.value for k, v in model.params.items()}, **values}
    return np.array([p[k] for k in model.param_names], dtype=float)


def test_a_gain_and_a_delay_are_free_the_marking_is_not():
    # x_r' = k (w - x_r(t - T) q_r(t - T)): k multiplies every row, T only delays
    assert _free(kelly3()) == {"k", "T"}


def test_a_difference_of_gains_is_not_read_as_free():
    # y' = a (C - y) - b q, q' = y - C: y = C, q = 0 for every a, b, but neither is a factor
    # of its row (the test is structural and one-sided: such points are solved one each)
    y, q = fn.states("y q")
    a, b, C = fn.params("a b C")
    m = fn.Model(rhs={y: a * (C - y(t)) - b * q(t), q: y(t) - C}, params={a: 1.0, b: 2.0, C: 5.0})
    assert _free(m) == set()
    assert row_scaling(m).key(_column(m)) is None


def test_points_differing_in_free_parameters_share_a_key_unless_a_factor_changes_sign():
    m = kelly3()
    rs = row_scaling(m)
    base = rs.key(_column(m))
    assert base is not None
    assert rs.key(_column(m, k=7.5, T=0.9)) == base
    assert rs.key(_column(m, B=8.0)) != base  # the marking moves the equilibrium
    assert rs.key(_column(m, k=-0.1)) not in (base, None)  # rows negated: f < 0 tests flip
    assert rs.key(_column(m, k=0.0)) is None  # every point is an equilibrium there


def test_the_search_at_another_gain_and_delay_is_recalled(monkeypatch, tmp_path):
    """kelly3 searched at k = 0.1; at k = 5 and T = 0.7 the equations are the same up to the
    factor 50 of every row: the points kept are checked again instead of searching, and the
    answer is scipy's equilibrium of the residuals written in the test (unique)."""
    import fluidnet.symbolic.equilibrium as E

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs
    (want,) = kelly_by_scipy(12.0)
    m = kelly3()
    assert list(m.equilibrium().values()) == pytest.approx(want, rel=1e-12)
    runs = []
    search = E.search
    monkeypatch.setattr(E, "search", lambda *a, **k: runs.append(1) or search(*a, **k))
    again = m.equilibrium(k=5.0, T=0.7)
    assert not runs  # recalled
    assert list(again.values()) == pytest.approx(want, rel=1e-12)
    assert again.isolated and again.residual <= 1e-14
    flipped = m.equilibrium(k=-0.1)  # every row negated: another class, searched
    assert runs and list(flipped.values()) == pytest.approx(want, rel=1e-12)
    m.equilibrium(B=9.0)  # the marking: searched
    assert len(runs) == 2


def test_a_plane_of_gains_and_delays_is_solved_at_one_point(monkeypatch, tmp_path):
    """A 6 x 5 plane of (k, T): one full search stands for the 30 points (it ran at 3 seeds and
    2 checks, and continued to the rest), each equal to scipy's equilibrium."""
    import fluidnet.symbolic.batchequilibria as be
    from fluidnet.symbolic.linearize import equilibria_batch

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))
    calls = []
    full = be.equilibria
    monkeypatch.setattr(be, "equilibria", lambda *a, **k: calls.append(k) or full(*a, **k))
    kk, TT = np.meshgrid(np.linspace(0.05, 3.0, 6), np.linspace(0.01, 0.5, 5), indexing="ij")
    X, ok, why = equilibria_batch(kelly3(), {"k": kk.ravel(), "T": TT.ravel()}, reasons=True)
    assert ok.all() and why == [""] * 30
    assert len(calls) == 1
    (want,) = kelly_by_scipy(12.0)
    np.testing.assert_allclose(X, np.tile(want, (30, 1)), rtol=1e-12)


def _counting_newton(monkeypatch) -> list[int]:
    """Count the plain Newton iterations of the continuation (one per batch of rows)."""
    import fluidnet.symbolic.nearby as nb

    runs: list[int] = []
    plain = nb._plain_newton
    monkeypatch.setattr(
        nb, "_plain_newton", lambda c, X, *a: runs.append(len(X)) or plain(c, X, *a)
    )
    return runs


def test_a_continuation_over_gains_and_delays_recalls_its_equilibrium(monkeypatch):
    """linearize_near continues kelly3's equilibrium over (k, T): once settled by Newton's
    method at one point, the same bits are an equilibrium at every point of the class (only k
    and T differ), and the linearization there is the one a fresh model continues to (Newton's
    method and the tests run again): the same matrices bit for bit; the equilibrium is scipy's
    of the residuals written in the test."""
    from fluidnet.symbolic.nearby import linearize_near

    (want,) = kelly_by_scipy(12.0)
    m = kelly3()
    runs = _counting_newton(monkeypatch)
    x0 = np.asarray(want) * (1 + 1e-6)  # a nearby start: Newton's method settles it
    linearize_near(m, {"k": np.array([0.3]), "T": np.array([0.2])}, x0)
    assert runs == [1]
    # nothing kept before the model has its row scaling (a chart's equilibria build it)
    linearize_near(m, {"k": np.array([0.3]), "T": np.array([0.2])}, x0)
    assert runs == [1, 1]
    row_scaling(m)
    runs.clear()
    first = linearize_near(m, {"k": np.array([0.3]), "T": np.array([0.2])}, x0)
    assert first.ok.all() and runs == [1]
    np.testing.assert_allclose(first.equilibrium[0], want, rtol=1e-12)
    grid = {"k": np.array([0.5, 2.0, 7.0]), "T": np.array([0.05, 0.1, 0.4])}
    start = np.tile(first.equilibrium[0], (3, 1))
    again = linearize_near(m, grid, start)
    assert again.ok.all() and runs == [1]  # recalled: no Newton step, no test
    assert np.array_equal(again.equilibrium, start)
    fresh = kelly3()  # a new model remembers nothing
    row_scaling(fresh)
    fresh = linearize_near(fresh, grid, start)
    assert runs == [1, 3]
    assert np.array_equal(fresh.equilibrium, again.equilibrium)
    for a, b in ((again.stack.A0, fresh.stack.A0), (again.stack.A, fresh.stack.A)):
        assert np.array_equal(a, b)
    assert np.array_equal(again.stack.tau, fresh.stack.tau)
    # the marking moves the equilibrium: another class, continued by Newton's method
    moved = linearize_near(m, {"B": np.array([12.5])}, first.equilibrium[0])
    assert runs == [1, 3, 1] and moved.ok.all()
    (want_b,) = kelly_by_scipy(12.5)
    np.testing.assert_allclose(moved.equilibrium[0], want_b, rtol=1e-12)
    # a start one ulp away from the kept bits is not recalled
    nudged = np.nextafter(first.equilibrium[0], np.inf)
    linearize_near(m, {"k": np.array([0.9])}, nudged)
    assert runs == [1, 3, 1, 1]


def test_a_start_with_a_queue_at_zero_is_continued_not_recalled(monkeypatch):
    """A projected state at 0 in the start: from it, the attempt with every state free may
    settle another point, so the continuation runs (kept or not)."""
    from fluidnet.symbolic.rowscaling import keep_equilibria, known_equilibria

    x, q = fn.states("x q")
    k, C, a, T = fn.params("k C a T")
    m = fn.Model(
        rhs={x: k * (C / 2 - x(t - T)), q: a * (x(t) - C)},  # the queue drains: held at 0
        params={k: 1.0, C: 10.0, a: 1.0, T: 0.1},
        nonnegative=[q],
    )
    free = _free(m)
    assert {"T"} <= free
    P = _column(m)[:, None]
    X = np.array([[5.0, 0.0]])
    keep_equilibria(m, P, X, np.array([True]))
    assert not known_equilibria(m, P, X).any()
    interior = np.array([[5.0, 1.0]])  # (not an equilibrium: only the bookkeeping is tested)
    keep_equilibria(m, P, interior, np.array([True]))
    assert known_equilibria(m, _column(m, T=0.3)[:, None], interior).all()
    assert not known_equilibria(m, _column(m, C=11.0)[:, None], interior).any()


def test_the_critical_gain_of_a_network_continues_by_recall(monkeypatch):
    """critical_value along kelly3's gain k (free): its continuation settles the first point by
    Newton's method and recalls the others; the answer equals, bit for bit, the one of the
    continuation that runs Newton's method at every point (the memory emptied before each)."""
    import fluidnet.symbolic.nearby as nb

    calls: list[int] = []
    settle = nb.NearbyPoint._settle
    monkeypatch.setattr(
        nb.NearbyPoint, "_settle", lambda self, *a, **kw: calls.append(1) or settle(self, *a, **kw)
    )
    m = kelly3()
    row_scaling(m)  # as a chart of the model would have built it
    recalled = fn.critical_value(m, "k", 0.05, 20.0)
    assert recalled.value is not None and 0.05 < recalled.value < 20.0  # a crossing exists
    n_recalled = len(calls)
    known = nb.known_equilibria

    def forgetting(model, P, X):
        model._cache.pop("equilibria by class", None)
        return known(model, P, X)

    monkeypatch.setattr(nb, "known_equilibria", forgetting)
    forgetful = kelly3()
    row_scaling(forgetful)
    full = fn.critical_value(forgetful, "k", 0.05, 20.0)
    n_full = len(calls) - n_recalled
    assert n_recalled == 1 and n_full > 5
    assert recalled.value == full.value


def test_the_row_scaling_is_kept_in_the_record_and_read_by_a_later_model(monkeypatch, tmp_path):
    """Built once from the equations (sympy's factor_terms: 13.6 ms of a first critical delay
    of the 4-state tandem law), the free parameters and the factors' generated code are kept in
    the model's record: a new model of the same law (a later process) reads them without
    splitting an equation, and its factors are those written here, a and b / c, with the same
    classes of points (a negative c flips the second row, a zero a leaves no class)."""
    import fluidnet.symbolic.rowscaling as RS

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))

    def law():
        x, q = fn.states("x q")
        a, b, c, w, C, T = fn.params("a b c w C T")
        rhs = {x: a * (w - x(t - T) * q(t - T)), q: (x(t) - C) * b / c}
        values = {a: 1.0, b: 2.0, c: 4.0, w: 3.0, C: 5.0, T: 0.1}
        return fn.Model(rhs=rhs, params=values, name="row scaling kept")

    first = row_scaling(law())
    assert _free_of(first) == {"a", "b", "c", "T"}

    def no_split(*args):
        raise AssertionError("the equations were split again")

    monkeypatch.setattr(RS, "_split", no_split)
    later = row_scaling(law())
    assert _free_of(later) == _free_of(first)
    m = law()
    points = [_column(m), _column(m, a=7.0, T=2.0), _column(m, c=-1.0), _column(m, a=0.0)]
    P = np.stack(points, axis=1)
    assert later.keys(P) == first.keys(P)
    keys = later.keys(P)
    assert keys[0] == keys[1] and keys[2] not in (keys[0], None) and keys[3] is None
    names = list(m.param_names)
    a, b, c = (P[names.index(nm)] for nm in "abc")
    np.testing.assert_allclose(later._factors.batch(P), np.stack([a, b / c], axis=1), rtol=1e-15)


def _free_of(rs) -> set[str]:
    return {nm for nm, f in zip(rs.names, rs.free, strict=True) if f}
