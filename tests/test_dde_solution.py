"""Solution: dense output with history, output times, export and plotting."""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn

t = fn.t


def _model():
    x, y = fn.states("x y")
    k = fn.params("k")
    return fn.Model(rhs={x: -k * y(t - 1), y: x(t)}, params={k: 1.0}, name="oscillator")


def test_dense_output_history_and_mesh():
    hist = {"x": np.cos, "y": lambda s: np.sin(s)}
    sol = fn.simulate(_model(), 6.0, history=hist, rtol=1e-9, atol=1e-12)
    past = np.linspace(-1.0, 0.0, 50)  # the history is kept where the run reads it
    np.testing.assert_allclose(sol(past), [np.cos(past), np.sin(past)], atol=1e-10)
    with pytest.raises(fn.ParameterError, match=r"before the history of 'x' \(defined from t = -1"):
        sol(-1.5)
    assert sol.t[0] == 0.0 and sol.t[-1] == 6.0
    # the default output: every step point, at least 3 points inside each step, none more
    # than 1/1000 of the run apart
    assert np.all(np.isin(sol.mesh, sol.t)) and np.all(np.diff(sol.t) <= 6.0 / 1000 + 1e-12)
    assert np.all(np.diff(np.searchsorted(sol.t, sol.mesh)) >= 4)
    np.testing.assert_allclose(sol.y[:, -1], sol(6.0), rtol=1e-14)
    np.testing.assert_allclose(sol.y, sol(sol.t), rtol=1e-12, atol=1e-14)
    assert sol(3.0, "y") == pytest.approx(sol(3.0)[1])
    assert sol(np.array([1.0, 2.0]), ["y"]).shape == (1, 2)


def test_t_eval_and_export():
    te = np.linspace(0.0, 5.0, 11)
    sol = fn.simulate(_model(), 5.0, params={"k": 0.5}, history={"x": 1.0, "y": 0.0}, t_eval=te)
    np.testing.assert_array_equal(sol.t, te)
    np.testing.assert_allclose(sol.y, sol(te), rtol=1e-13, atol=1e-15)
    ds = sol.to_xarray()
    assert list(ds.data_vars) == ["x", "y"]
    np.testing.assert_array_equal(ds["time"].values, te)
    assert ds.attrs["param_k"] == 0.5 and ds.attrs["method"] == "DP5"
    assert "oscillator" in repr(sol) and "steps=" in repr(sol)


def test_plot_draws_one_axes_per_state():
    sol = fn.simulate(_model(), 4.0, history={"x": 1.0, "y": 0.0})
    axes = sol.plot()
    assert len(axes) == 2 and axes[1].get_ylabel() == "y"
    assert len(axes[0].lines[0].get_xdata()) >= 2000
    axes = sol.plot(states=["x"])
    assert len(axes) == 1


def test_a_solution_continues_as_history():
    """Continuing from a run reads its dense output exactly and matches one long run."""
    m = fn.models.rcp(alpha=1.4, beta=0.8)
    start = {"R": 9375.0, "q": 0.0}
    first = fn.simulate(m, 8.0, history=start, rtol=1e-9, atol=1e-9)
    cont = fn.simulate(m, 20.0, history=first, rtol=1e-9, atol=1e-9)
    assert cont.t0 == 8.0
    past = np.linspace(-0.5, 8.0, 301)
    np.testing.assert_allclose(cont(past), first(past), rtol=1e-14)
    whole = fn.simulate(m, 20.0, history=start, rtol=1e-9, atol=1e-9)
    tt = np.linspace(8.0, 20.0, 121)
    np.testing.assert_allclose(cont(tt), whole(tt), rtol=1e-6, atol=1e-6 * 18750 * 0.2)
    # starting inside the earlier run cuts its last piece at t0
    mid = fn.simulate(m, 20.0, history=whole, t0=5.0, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mid(5.0), whole(5.0), rtol=1e-15)
    with pytest.raises(fn.IntegrationError, match="outside the run"):
        fn.simulate(m, 30.0, history=whole, t0=25.0)


def _delayed_decay_of_log(t_end: float) -> float:
    """x' = -x(t - 1) with x(t) = ln t before t0 = 1.5, at ``t_end`` in [1.5, 3.5], by steps.

    With F(u) = u ln u - u: on [1.5, 2.5] x(t) = ln 1.5 - (F(t - 1) - F(1/2)); on [2.5, 3.5]
    x(t) = x(2.5) - int_{2.5}^t x(s - 1) ds, where int F = u^2/2 ln u - 3 u^2/4.
    """
    import math

    def F(u):
        return u * math.log(u) - u

    def G(u):  # an antiderivative of F
        return u * u / 2 * math.log(u) - 0.75 * u * u

    def first(s):
        return math.log(1.5) - (F(s - 1) - F(0.5))

    if t_end <= 2.5:
        return first(t_end)
    # int_{2.5}^{t} x(s - 1) ds = int_{1.5}^{t - 1} first(u) du
    c = math.log(1.5) + F(0.5)
    integral = c * (t_end - 2.5) - (G(t_end - 2.0) - G(0.5))
    return first(2.5) - integral


@pytest.mark.parametrize("delay", ["constant", "parameter", "state"])
def test_a_callable_history_is_called_only_where_it_is_needed(delay):
    """ln t before t0 = 1.5 with delay 1: the run reads the history on [0.5, 1.5] only; it was
    tabulated on [t0 - 4 tau, t0] = [-2.5, 1.5] and failed (issue 23). A delay that depends on
    a state (here one that stays 1) may grow, so its history is tabulated four delays back
    where it can be, and otherwise on the span needed at t0."""
    x, y = fn.states("x y")
    T = fn.params("T")
    lag = {"constant": 1, "parameter": T, "state": y(t)}[delay]
    m = fn.Model(rhs={x: -x(t - lag), y: 0 * x(t)}, params={T: 1.0}, name="log history")
    sol = fn.simulate(
        m,
        3.5,
        history={"x": lambda s: np.log(s), "y": 1.0},
        t0=1.5,
        t_eval=[2.0, 2.5, 3.5],
        rtol=1e-10,
        atol=1e-12,
    )
    want = [_delayed_decay_of_log(s) for s in (2.0, 2.5, 3.5)]
    np.testing.assert_allclose(sol["x"], want, rtol=1e-8)


def test_history_and_output_take_either_spelling_of_a_state():
    """x' = -mu x(t - 1), x = 1 before 0, declared with the ligature U+FB01 and the micro sign,
    mu = 2: by steps x = 1 - 2t on [0, 1] and x = -1 - 2((t - 1) - (t - 1)^2) on [1, 2]."""
    lig, micro = "\ufb01", "\u00b5"
    m = fn.Model(rhs={lig: f"-{micro}*{lig}(t - 1)"}, params={micro: 1.0})
    want = [1 - 2 * 0.25, -1 - 2 * (0.5 - 0.25)]
    for key in (lig, "fi"):
        sol = fn.simulate(
            m, 1.5, history={key: lambda s: 1.0 + 0 * s}, params={micro: 2.0}, t_eval=[0.25, 1.5]
        )
        np.testing.assert_allclose(sol[lig], want, rtol=1e-9)
        np.testing.assert_allclose(sol["fi"], want, rtol=1e-9)
    with pytest.raises(fn.ModelError, match=r"state 'fi' twice: 'ﬁ' and 'fi' are one identifier"):
        fn.simulate(m, 1.0, history={lig: 1.0, "fi": 1.0})
    with pytest.raises(fn.ModelError, match=r"history given for 'ℌ', which is not a state"):
        fn.simulate(m, 1.0, history={"ℌ": 1.0})


def _steps_solution(tq):
    """x' = -x(t - 1), x = 1 before 0, by the method of steps on [0, 3] (closed form)."""
    tq = np.asarray(tq, dtype=float)
    return np.select(
        [tq <= 1.0, tq <= 2.0],
        [1.0 - tq, 1.0 - tq + (tq - 1.0) ** 2 / 2],
        1.0 - tq + (tq - 1.0) ** 2 / 2 - (tq - 2.0) ** 3 / 6,
    )


def test_n_points_and_a_default_output_smooth_to_draw():
    """Issue 33: simulate(m, t_end, n_points=...) was an unknown option although the README
    says n_points counts output samples; the default output (the step points only) drew
    visibly broken lines. Against the method of steps' closed form of x' = -x(t - 1)."""
    x = fn.states("x")
    m = fn.Model({x: -x(t - 1)}, {}, name="steps")
    sol = fn.simulate(m, 3.0, history={"x": 1.0}, n_points=301, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(sol.t, np.linspace(0.0, 3.0, 301))
    np.testing.assert_allclose(sol["x"], _steps_solution(sol.t), atol=1e-9)
    default = fn.simulate(m, 3.0, history={"x": 1.0})
    fine = np.linspace(0.0, 3.0, 30001)
    drawn = np.interp(fine, default.t, default["x"])  # what a plot draws between samples
    exact = _steps_solution(fine)
    assert np.max(np.abs(drawn - exact)) < 2e-3 * np.ptp(exact)
    steps_only = np.interp(fine, default.mesh, default(default.mesh)[0])
    assert np.max(np.abs(steps_only - exact)) > 3 * np.max(np.abs(drawn - exact))
    with pytest.raises(fn.OptionError, match="not both"):
        fn.simulate(m, 3.0, n_points=11, t_eval=[0.0, 1.0])
    with pytest.raises(fn.OptionError, match="n_points"):
        fn.simulate(m, 3.0, n_points=1)
    with pytest.raises(fn.OptionError, match="GB"):
        fn.simulate(m, 3.0, n_points=10**9)
    with pytest.raises(fn.ModelError, match="needs a fluidnet.Model.*NoneType"):
        fn.simulate(None, 3.0)
