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
