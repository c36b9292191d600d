"""One point of the explorer: every panel's result from the stages, or the stage's message.

The numbers of a snapshot must be the stages' own (the explorer computes nothing): they are
compared with direct calls of the stages at the same point.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.explore.figure import ChartFigure, PanelsFigure
from fluidnet.explore.point import PANELS, Snapshot, relative_history, snapshot


@pytest.fixture(scope="module")
def rcp():
    return fn.models.rcp()


@pytest.fixture(scope="module")
def riccati():
    # x' = b - a x(t - T)^2: no equilibrium for b < 0
    t = fn.t
    x = fn.states("x")
    a, b, T = fn.params("a b T")
    return fn.Model(rhs={x: b - a * x(t - T) ** 2}, params={a: 1.0, b: -1.0, T: 0.5})


def test_a_snapshot_holds_the_stages_results(rcp):
    point = {"alpha": 0.6, "beta": 0.3}
    snap = snapshot(rcp, point, cut="R", t_end=5.0, k=4, n_points=101)
    assert isinstance(snap, Snapshot) and snap.messages == {}
    assert snap.values == {**rcp.values, **point}
    eq = rcp.equilibrium(params=point)
    assert snap.equilibrium == eq
    roots = rcp.linearize(params=point).roots(k=4)
    np.testing.assert_array_equal(snap.roots.values, roots.values)
    mg = fn.margins(rcp.loop_gain("R", params=point))
    assert snap.margins.phase_margin == mg.phase_margin
    assert snap.margins.delay_margin == mg.delay_margin
    assert snap.nyquist.encirclements == fn.nyquist(rcp.loop_gain("R", params=point)).encirclements
    sol = fn.simulate(
        rcp, 5.0, params=point, history=relative_history(eq), t_eval=np.linspace(0, 5, 101)
    )
    np.testing.assert_allclose(snap.solution.y, sol.y, rtol=1e-12, atol=1e-9)
    assert snap.stable is True and snap.cpu_time > 0


def test_relative_history_is_ten_percent_below():
    assert relative_history({"R": 1000.0, "q": 0.0}) == {"R": 900.0, "q": 0.0}


def test_errors_fill_messages_and_leave_panels_empty(riccati):
    snap = snapshot(riccati, {}, cut="x", t_end=5.0)
    assert snap.equilibrium is None and snap.solution is None
    assert set(snap.messages) == set(PANELS)
    assert snap.stable is None and snap.message.count("\n") == 3


def test_a_bad_cut_is_a_loop_message(rcp):
    snap = snapshot(rcp, {}, cut="nope", t_end=2.0)
    assert snap.margins is None and snap.roots is not None and snap.solution is not None
    assert "cannot cut the loop at 'nope'" in snap.messages["loop"]


def test_a_run_over_its_step_limit_is_a_message(rcp):
    snap = snapshot(rcp, {}, cut="R", t_end=50.0, max_steps=20)
    assert snap.solution is None and "max_steps" in snap.messages["response"]


def test_to_xarray_and_plot(rcp):
    snap = snapshot(rcp, {"alpha": 0.1, "beta": 1.0}, cut="R", t_end=5.0)
    ds = snap.to_xarray()
    assert float(ds["stable"]) == 0.0 and float(ds["alpha"]) == 0.1
    assert float(ds["equilibrium_R"]) == pytest.approx(1875.0)
    assert ds["roots"].dtype == complex and ds.sizes["root"] == 6
    assert math.isfinite(float(ds["phase_margin"]))
    fig = snap.plot()
    assert [ax.get_ylabel() for ax in fig.axes[2:]] == ["R", "q"]


def test_figures_show_messages_where_a_panel_is_empty(riccati):
    snap = snapshot(riccati, {}, cut="x", t_end=5.0)
    fig = PanelsFigure(["x"])
    fig.draw(snap)
    texts = [t.get_text().replace("\n", " ") for ax in fig.figure.axes for t in ax.texts]
    assert texts.count("no equilibrium to linearize at") == 2  # roots and Nyquist
    assert any("give the explorer a history" in t for t in texts)
    assert fig.png().startswith(b"\x89PNG")
    chart = ChartFigure(None, ())
    chart.draw(snap)
    assert chart.png().startswith(b"\x89PNG")
