"""Every failure of the integrator raises a clear exception naming time, values and cause."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import IntegrationError, ModelError, OptionError, ParameterError

t = fn.t
x = fn.states("x")


def _decay():
    return fn.Model(rhs={x: -x(t - 1)}, params={}, name="decay")


def test_finite_time_blow_up_is_a_step_size_underflow():
    m = fn.Model(rhs={x: x(t) ** 2}, params={}, name="blowup")  # x = 1/(1 - t)
    with pytest.raises(IntegrationError, match=r"blowup: step size underflow at t = 1\.0000") as e:
        fn.simulate(m, 2.0, history={"x": 1.0})
    assert "with x = " in str(e.value)


def test_non_finite_right_hand_side():
    # x reaches 0 at t = 2 - 2 sqrt(... ) < 1 and sqrt turns NaN below it
    m = fn.Model(rhs={x: sympy.sqrt(x(t)) - 2}, params={}, name="sqrt")
    with pytest.raises(IntegrationError, match=r"non-finite right-hand side or state \(x = nan\)"):
        fn.simulate(m, 2.0, history={"x": 1.0})


def test_delay_turning_negative():
    m = fn.Model(rhs={x: 1 + x(t - (2 - x(t))) / 1000}, params={}, name="ahead")
    with pytest.raises(
        IntegrationError, match=r"delay 2 - x of x\(t - \(2 - x\)\) became negative"
    ) as e:
        fn.simulate(m, 5.0, history={"x": 0.0})
    assert "at t = 1.99" in str(e.value)
    assert "refers to the future" in str(e.value)


def test_negative_delay_already_at_t0():
    m = fn.Model(rhs={x: x(t - (1 - x(t)))}, params={})
    with pytest.raises(IntegrationError, match="negative"):
        fn.simulate(m, 1.0, history={"x": 2.0})


def test_history_not_reaching_back_far_enough():
    samples = (np.linspace(-0.5, 0.0, 11), np.ones(11))
    with pytest.raises(IntegrationError, match=r"history of 'x' is not defined at t = -1"):
        fn.simulate(_decay(), 2.0, history={"x": samples})


@pytest.mark.parametrize(
    "history",
    [
        {"x": float("nan")},
        {"x": lambda s: np.where(s < -0.5, np.nan, 1.0)},
        {"x": (np.array([-2.0, -1.0, -0.5, 0.0]), np.array([1.0, np.inf, 1.0, 1.0]))},
    ],
    ids=["constant", "callable", "samples"],
)
def test_history_that_is_not_finite(history):
    with pytest.raises(IntegrationError, match=r"history of 'x' is not finite"):
        fn.simulate(_decay(), 2.0, history=history)


def test_samples_must_reach_t0():
    with pytest.raises(IntegrationError, match="before t0"):
        fn.simulate(_decay(), 2.0, history={"x": ([-2.0, -1.0, -0.5], [1.0, 1.0, 1.0])})


def test_projected_state_negative_at_t0():
    q = fn.states("q")
    m = fn.Model(rhs={q: -1}, params={}, nonnegative=[q])
    with pytest.raises(IntegrationError, match=r"'q' at t0 = 0 is -1 < 0"):
        fn.simulate(m, 1.0, history={"q": -1.0})


def test_max_steps():
    with pytest.raises(IntegrationError, match=r"max_steps reached at t = "):
        fn.simulate(_decay(), 100.0, history={"x": 1.0}, max_steps=20)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rtol": 0.0}, "rtol"),
        ({"rtol": 1e-15}, "rtol"),
        ({"atol": -1.0}, "atol"),
        ({"atol": [1e-9, 1e-9]}, "atol"),
        ({"atol": {"y": 1e-9}}, "unknown states"),
        ({"max_step": 0.0}, "max_step"),
        ({"method": "RK4"}, "method 'RK4'"),
        ({"t0": 3.0}, "t_end = 2 must be after t0 = 3"),
        ({"t_eval": [0.5, 3.0]}, "t_eval must lie in"),
        ({"t_eval": [1.0, 0.5]}, "non-decreasing"),
    ],
)
def test_bad_options_are_option_errors(kwargs, match):
    with pytest.raises(OptionError, match=match):
        fn.simulate(_decay(), 2.0, **kwargs)


def test_unknown_parameter_is_a_parameter_error():
    with pytest.raises(ParameterError, match="unknown parameter 'k'"):
        fn.simulate(_decay(), 2.0, params={"k": 1.0})


def test_bad_history_specs_are_model_errors():
    with pytest.raises(ModelError, match="'y', which is not a state"):
        fn.simulate(_decay(), 1.0, history={"y": 1.0})
    with pytest.raises(ModelError, match="history must be a dict"):
        fn.simulate(_decay(), 1.0, history=[1.0])
    with pytest.raises(ModelError, match="neither a number"):
        fn.simulate(_decay(), 1.0, history={"x": "one"})
    with pytest.raises(ModelError, match="strictly increasing"):
        fn.simulate(_decay(), 1.0, history={"x": ([0.0, -1.0], [1.0, 1.0])})

    def broken(s):
        raise RuntimeError("no data")

    with pytest.raises(ModelError, match="calling it at t = 0 failed: no data"):
        fn.simulate(_decay(), 1.0, history={"x": broken})


def test_solution_evaluation_outside_the_run():
    sol = fn.simulate(_decay(), 2.0, history={"x": (np.linspace(-1.5, 0, 16), np.ones(16))})
    with pytest.raises(ParameterError, match="after the end of the run"):
        sol(2.5)
    with pytest.raises(ParameterError, match="before the history of 'x'"):
        sol(-2.0)
    with pytest.raises(ModelError, match="'y' is not a state"):
        sol["y"]


def test_ensemble_failure_names_the_member():
    a = fn.params("a")
    m = fn.Model(rhs={x: a * x(t) ** 2}, params={a: 1.0}, name="blowup")
    with pytest.raises(IntegrationError, match=r"member 1 \(a = 1\)"):
        fn.simulate_ensemble(
            m, 2.0, params={"a": [-1.0, 1.0]}, history={"x": 1.0}, workers=1, progress=False
        )
    with pytest.warns(RuntimeWarning, match="1 of 2 ensemble members failed"):
        ds = fn.simulate_ensemble(
            m, 2.0, params={"a": [-1.0, 1.0]}, history={"x": 1.0}, on_error="nan", progress=False
        )
    assert np.all(np.isfinite(ds["x"][0])) and np.all(np.isnan(ds["x"][1]))
    assert ds["error"][0] == "" and "step size underflow" in str(ds["error"][1].values)
    with pytest.raises(OptionError, match="on_error"):
        fn.simulate_ensemble(m, 2.0, on_error="ignore")


def test_delay_that_is_not_finite():
    m = fn.Model(rhs={x: -1 + x(t - sympy.sqrt(x(t))) / 1000}, params={}, name="sqrtdelay")
    with pytest.raises(IntegrationError, match=r"delay sqrt\(x\) of .* is not finite \(nan\)"):
        fn.simulate(m, 3.0, history={"x": 1.0})


def test_max_steps_on_a_stiff_model_points_to_the_implicit_method():
    """x' = -1e6 (x - cos t): an explicit method needs ~1e6 steps per unit time (stability
    limit), ROS2 follows the slow solution x ~ cos t with a few hundred."""
    x = fn.states("x")
    m = fn.Model({x: -1e6 * (x(fn.t) - sympy.cos(fn.t))}, {}, name="stiff")
    with pytest.raises(IntegrationError, match=r"max_steps reached .*method='ROS2'"):
        fn.simulate(m, 1.0, history={"x": 1.0}, max_steps=20000)
    sol = fn.simulate(m, 1.0, history={"x": 1.0}, max_steps=20000, method="ROS2", rtol=1e-6)
    # slow manifold: x = cos t + 1e-6 sin t + O(1e-12)
    assert sol(1.0)[0] == pytest.approx(math.cos(1.0) + 1e-6 * math.sin(1.0), abs=1e-6)
