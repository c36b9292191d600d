"""fn.explore without a browser: the state a slider sets, checked against closed forms.

The model ``x' = b - a x(t - T)^2`` has the equilibrium ``x* = sqrt(b / a)`` (none for
``b < 0``), the linearization ``xi' = -k xi(t - T)`` with ``k = 2 sqrt(a b)``, so its rightmost
root is ``W0(-k T) / T`` (Lambert's W) and it is stable while ``k T < pi / 2``; cut at ``x`` its
loop gain is ``k e^{-sT} / s``: gain crossover ``k``, phase margin ``pi/2 - k T``, delay margin
``(pi/2 - k T) / k``, gain margin ``pi / (2 T k)``. RCP's loop gain cut at ``R`` is
``e^{-s d0} (alpha s d0 + beta) / (s d0)^2`` (Dukkipati & McKeown, eq (9)), whose crossover
solves a quadratic in ``(w d0)^2``. The explorer's numbers are checked against these, and its
errors (no equilibrium, a diverging run) are checked to be messages, not exceptions.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.explore.debounce import Throttle
from fluidnet.explore.explorer import Explorer
from fluidnet.explore.numbers import numbers_html

T = 0.5


@pytest.fixture(scope="module")
def riccati():
    t = fn.t
    x = fn.states("x")
    a, b, tau = fn.params("a b T")
    return fn.Model(
        rhs={x: b - a * x(t - tau) ** 2},
        params={a: fn.Param(1.0, bounds=(0, None)), b: 1.0, tau: T},
        name="riccati",
    )


@pytest.fixture(scope="module")
def ex(riccati):
    # the equilibrium x* = sqrt(b/a) is the first of two (x = -x* too): a warning, shown
    grid = {"a": np.linspace(0.25, 4.0, 9), "b": np.linspace(-1.0, 3.0, 9)}
    return fn.explore(riccati, {"a": None, "b": (-1.0, 3.0)}, chart=grid)


def _closed_form(a: float, b: float, T: float = T) -> dict:
    k = 2.0 * math.sqrt(a * b)
    pm = math.pi / 2 - k * T
    return {
        "x": math.sqrt(b / a),
        "root": complex(lambertw(-k * T, 0)) / T,
        "crossover": k,
        "phase_margin": math.degrees(pm),
        "delay_margin": pm / k,
        "gain_margin": math.pi / (2 * T * k),
        "stable": k * T < math.pi / 2,
    }


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.5, 3.0), (1.2, 2.2), (1.0, 2.6)])
def test_the_numbers_are_the_closed_forms(ex, a, b):
    want = _closed_form(a, b)
    ex.set(a=a, b=b)
    assert ex.values["a"] == a and ex.values["b"] == b
    assert ex.equilibrium["x"] == pytest.approx(want["x"], rel=1e-12)
    assert complex(ex.roots[0]) == pytest.approx(want["root"], rel=1e-9)
    assert ex.stable is want["stable"]
    mg = ex.margins
    assert mg.gain_crossover == pytest.approx(want["crossover"], rel=1e-9)
    assert mg.phase_margin == pytest.approx(want["phase_margin"], rel=1e-9, abs=1e-9)
    assert mg.delay_margin == pytest.approx(want["delay_margin"], rel=1e-9, abs=1e-12)
    assert mg.gain_margin == pytest.approx(want["gain_margin"], rel=1e-9)
    assert mg.closed_loop_stable is want["stable"]
    assert ex.nyquist.stable is want["stable"]
    # the numbers shown are these numbers
    assert ex.numbers == numbers_html(ex.snapshot, ["a", "b"])
    assert f'class="fn-at-b">{b:.6g}<' in ex.numbers
    assert f">{want['x']:.5g}<" in ex.numbers
    assert f">{want['phase_margin']:.5g} deg<" in ex.numbers
    assert ("unstable" if not want["stable"] else ">stable<") in ex.numbers


def test_a_stable_response_settles_at_the_equilibrium(ex):
    ex.set(a=1.0, b=1.0)
    sol = ex.solution
    assert sol.t[-1] == pytest.approx(ex.t_end)
    assert sol["x"][0] == pytest.approx(0.9)  # the default history: 0.9 x*
    # root -0.636 +- 2.67j: after t_end the offset has decayed by e^{-0.636 t_end}
    assert abs(sol["x"][-1] - 1.0) < 0.1 * math.exp(-0.6 * ex.t_end) + 1e-6


def test_the_picture_and_the_chart_change_with_a_slider(ex):
    ex.set(a=1.0, b=1.0)
    picture, chart, numbers = ex.png, ex.chart_png, ex.numbers
    assert picture.startswith(b"\x89PNG") and chart.startswith(b"\x89PNG")
    ex.set(b=2.0)
    assert ex.png != picture and ex.chart_png != chart and ex.numbers != numbers
    ex.set(b=1.0)  # the same point again: the same picture (the snapshot was kept)
    assert ex.png == picture and ex.chart_png == chart and ex.numbers == numbers
    assert ex.last_update["compute"] == 0.0


def test_the_chart_is_the_closed_form_region(ex):
    ds = ex.chart
    a, b = np.meshgrid(ds["a"].values, ds["b"].values, indexing="ij")
    k = 2 * np.sqrt(np.clip(a * b, 0, None))
    exact = (b > 0) & (k * T < math.pi / 2)
    have = ds["abscissa"].transpose("a", "b").values
    near = np.abs(k * T - math.pi / 2) < 0.05
    assert np.array_equal((have < 0)[~near], exact[~near])
    # b < 0: no equilibrium, so no answer (grey on the chart), not an error
    assert np.all(np.isnan(have[b < 0]))


def test_no_equilibrium_is_a_message_not_an_error(ex):
    ex.set(b=-0.5)
    assert ex.equilibrium is None and ex.roots is None and ex.margins is None
    assert ex.stable is None
    assert "no equilibrium found for model 'riccati'" in ex.message
    assert "roots: no equilibrium to linearize at" in ex.message
    assert "give the explorer a history" in ex.message
    assert "undecided" in ex.numbers and "fn-message" in ex.numbers
    ex.set(b=1.0)
    assert ex.equilibrium is not None


def test_a_diverging_response_is_a_message(riccati):
    # from x = 1 with b < 0, x' = b - a x^2 < 0 and x reaches -infinity in finite time
    ex = fn.explore(riccati, {"b": (-1.0, 3.0)}, chart=False, history={"x": 1.0}, t_end=20.0)
    ex.set(b=-0.5)
    assert ex.solution is None
    assert "response: riccati: the solution diverges" in ex.message
    ex.set(b=1.0)
    assert ex.solution is not None and "response" not in ex.snapshot.messages


def test_warnings_of_the_stages_are_notes(ex):
    ex.set(a=1.0, b=1.0)
    # x = -1 is an equilibrium too: the stage warns which one it returned
    assert ex.snapshot.messages["equilibrium"].startswith("warning: model 'riccati' has 2")


def test_rcp_margins_are_the_closed_form_of_its_loop_gain():
    ex = fn.explore(fn.models.rcp(), ["alpha", "beta"], chart=False, cut="R")
    d0 = 0.2
    for alpha, beta in [(0.4, 0.2), (0.7, 0.3), (1.2, 0.1)]:
        ex.set(alpha=alpha, beta=beta)
        x = (alpha**2 + math.sqrt(alpha**4 + 4 * beta**2)) / 2  # (w d0)^2 where |L| = 1
        wd = math.sqrt(x)
        pm = math.atan(alpha * wd / beta) - wd
        assert ex.margins.gain_crossover == pytest.approx(wd / d0, rel=1e-9)
        assert ex.margins.phase_margin == pytest.approx(math.degrees(pm), rel=1e-8)
        assert ex.margins.delay_margin == pytest.approx(pm / (wd / d0), rel=1e-8)
        assert ex.equilibrium["R"] == pytest.approx(18750.0 / 10)


def test_set_refuses_what_the_model_refuses(ex):
    with pytest.raises(fn.ParameterError, match="unknown parameter 'c'"):
        ex.set(c=1.0)
    with pytest.raises(fn.ParameterError, match="'a': value -1 is below its lower bound 0"):
        ex.set(a=-1.0)


def test_set_beyond_a_slider_widens_it(ex):
    ex.set(b=5.0)
    assert ex.sliders["b"].max == 5.0 and ex.values["b"] == 5.0
    ex.set(b=1.0)


def test_a_fixed_parameter_moves_the_chart_out_of_date(ex):
    ex.set(a=1.0, b=1.0, T=0.6)
    assert ex.values["T"] == 0.6
    assert complex(ex.roots[0]) == pytest.approx(_closed_form(1.0, 1.0, T=0.6)["root"], rel=1e-9)
    assert ex._chart_note(ex.values) == "(chart computed at T = 0.5: recompute it here)"
    ex.set(T=T)
    assert ex._chart_note(ex.values) == ""


def test_bad_arguments_are_refused_early(riccati):
    with pytest.raises(fn.ParameterError, match="cut='y': not a state or signal"):
        fn.explore(riccati, ["a"], cut="y", chart=False)
    with pytest.raises(fn.ParameterError, match="states: 'y' is not a state"):
        fn.explore(riccati, ["a"], states=["y"], chart=False)
    with pytest.raises(fn.ParameterError, match="chart parameter 'T' has no slider"):
        fn.explore(riccati, ["a", "b"], chart=["a", "T"])
    with pytest.raises(fn.ParameterError, match="no parameter 'zz'"):
        fn.explore(riccati, ["zz"], chart=False)


def test_a_one_parameter_chart(riccati):
    ex = fn.explore(riccati, {"b": (0.1, 4.0)}, chart=["b"])
    assert list(ex.chart.dims) == ["b"] and ex.chart.sizes["b"] == 41
    before = ex.chart_png
    ex.set(b=3.0)  # k T = sqrt(3) > pi/2: unstable
    assert ex.stable is False and ex.chart_png != before


#: A median update slower than this (five times the goal of issue 36) is a regression.
UPDATE_REGRESSION_S = 1.0


def test_update_cpu_time_of_the_library_laws():
    # CPU time (not wall time: the machine is shared) of an update at a new point: the
    # stages and the picture. The goal, 0.2 s, is measured by benchmarks/bench_explore.py in
    # make bench: CPU time grows with the load of the machine (on a 2-core machine with three
    # test runs at once, 0.17-0.24 s for the code that meets the goal alone, and the same for
    # the code before), so this test guards against updates several times slower only.
    cases = [
        (fn.models.rcp(), "alpha", "beta", "R"),
        (fn.models.mgt_red(), "N", "Tp", "x"),
        (fn.models.sbrm(), "kappa", "d", "W"),
    ]
    for model, x, y, cut in cases:
        v = model.values
        grid = {x: [v[x] * 0.8, v[x] * 1.2], y: [v[y] * 0.8, v[y] * 1.2]}
        ex = fn.explore(model, [x, y], cut=cut, chart=grid)
        times = []
        for f in (1.02, 1.05, 1.1):
            ex.set(**{x: v[x] * f})
            times.append(ex.last_update["total"])
        assert statistics.median(times) < UPDATE_REGRESSION_S, (model.name, times)


def test_throttle_runs_at_once_without_an_event_loop():
    calls = []
    th = Throttle(lambda: calls.append(1), 10.0)
    th()
    th()
    assert calls == [1, 1] and not th.pending


def test_throttle_keeps_the_last_request_and_spaces_the_runs():
    import asyncio

    runs: list[float] = []

    drag: list[float] = []

    async def main():
        loop = asyncio.get_running_loop()
        th = Throttle(lambda: runs.append(loop.time()), 0.05)
        drag.append(loop.time())
        for _ in range(20):  # a slider dragged: 20 values in 0.1 s (longer on a busy machine)
            th()
            await asyncio.sleep(0.005)
        drag.append(loop.time())
        await asyncio.sleep(0.2)
        return th

    th = asyncio.run(main())
    assert not th.pending
    # not 20: one run per interval of the drag as it took, and one after the last request
    most = int((drag[1] - drag[0]) / 0.05) + 2
    assert 2 <= len(runs) <= min(most, 19), (runs, drag)
    assert all(b - a >= 0.05 - 1e-3 for a, b in zip(runs, runs[1:], strict=False))


def test_explorer_is_the_public_type_and_displays_as_its_widget(ex):
    assert isinstance(ex, Explorer) and fn.Explorer is Explorer
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    assert repr(ex).startswith("Explorer('riccati', ")
    # renderers without a kernel show the numbers and both pictures
    static = bundle["text/html"]
    assert ex.numbers in static and static.count('src="data:image/png;base64,') == 2


def test_snapshot_to_xarray_and_plot(ex):
    ex.set(a=1.0, b=1.0)
    ds = ex.snapshot.to_xarray()
    assert float(ds["phase_margin"]) == pytest.approx(_closed_form(1, 1)["phase_margin"])
    assert float(ds["stable"]) == 1.0 and ds.attrs["cut"] == "x"
    fig = ex.snapshot.plot()
    assert len(fig.axes) == 3


def test_update_time_is_reported(ex):
    ex.set(a=0.9, b=1.1)
    t0 = time.process_time()
    ex.set(a=0.95)
    spent = time.process_time() - t0
    assert 0 < ex.last_update["total"] <= spent
    assert "ms of CPU" in ex._status.value
