"""Every failure of the integrator raises a clear exception naming time, values and cause."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import IntegrationError, ModelError, OptionError, ParameterError

t = fn.t
x = fn.states("x")


def _decay():
    return fn.Model(rhs={x: -x(t - 1)}, params={}, name="decay")


def _reported(message: str, name: str) -> tuple[float, float]:
    """(value, time) of the diverging state named in an IntegrationError message."""
    got = re.search(rf"the solution diverges: {name} = (\S+) at t = (\S+) ", message)
    assert got, message
    return float(got.group(1)), float(got.group(2))


def test_finite_time_blow_up_is_reported_as_a_divergence():
    # issue 23: a blow-up was a "step size underflow" (and a diverging switched system "too many
    # mode changes without progress ... Zeno"); x = 1 / (1 - t) blows up at t = 1
    m = fn.Model(rhs={x: x(t) ** 2}, params={}, name="blowup")
    with pytest.raises(IntegrationError, match=r"blowup: the solution diverges: x = ") as e:
        fn.simulate(m, 2.0, history={"x": 1.0})
    value, when = _reported(str(e.value), "x")
    assert abs(when - 1.0) < 1e-5 and value > 1e6
    # x(0.5) = 2 is the largest value over the first half of the run (the integrator's own
    # steps see slightly less); it stopped on a step size underflow
    assert re.search(r"\|x\| was at most 1\.[89]\d* up to t = 0\.5", str(e.value))
    assert "step size underflow" in str(e.value) and "Zeno" not in str(e.value)


def test_a_diverging_switched_system_is_a_divergence():
    # x' = -3 x(t - 1) + sign(x): the linear part grows like exp(Re(W0(-3)) t) (its rightmost
    # characteristic root lambda = W0(-3), from lambda e^lambda = -3), Re = 0.467; the switching
    # term is bounded. Overflow (|x| ~ 1e307) comes at t ~ ln|x| / Re(lambda) ~ 1514.
    from scipy.special import lambertw

    rate = float(lambertw(-3.0, 0).real)
    assert rate == pytest.approx(0.46699785792566, rel=1e-12)
    m = fn.Model(rhs={x: -3 * x(t - 1) + sympy.sign(x(t))}, params={}, name="switched")
    with pytest.raises(IntegrationError, match=r"switched: the solution diverges: x = ") as e:
        fn.simulate(m, 2000.0, history={"x": 1.0})
    value, when = _reported(str(e.value), "x")
    assert abs(value) > 1e300 and when == pytest.approx(math.log(abs(value)) / rate, rel=0.01)
    assert "Zeno" not in str(e.value) and "singular" not in str(e.value)


def _kernel_result(status, y, t_fail):
    from fluidnet.dde.simulation import KernelResult

    return KernelResult(
        status=status,
        index=0,
        info=(t_fail, 1e-13, 0.0, t_fail),
        y=np.array(y, dtype=float),
        mesh_t=np.array([0.0]),
        mesh_c=np.zeros((0, 1, 5)),
        n_hist_pieces=0,
        y_eval=np.zeros((0, 1)),
        counters={"steps": 10, "events": 201},
        btime=np.zeros(0),
        slide_time=np.zeros(0),
        slide_weight=np.zeros(0),
        t0=0.0,
        x0=np.array([1.0]),
    )


def test_mode_changes_at_an_overflowing_state_are_a_divergence_not_zeno():
    # what the kernel reports as "no progress through mode changes" (ST_ZENO), at x = -2e212
    # (the probe of issue 23), is the divergence; at a bounded state it stays Zeno behaviour
    from fluidnet.codegen.compiled import compile_model
    from fluidnet.dde import _codes
    from fluidnet.dde.simulation import failure_message

    cm = compile_model(fn.Model(rhs={x: -sympy.sign(x(t))}, params={}))
    msg = failure_message(cm, _kernel_result(_codes.ST_ZENO, [-2e212], 37.5))
    assert msg.startswith("the solution diverges: x = -2e+212 at t = 37.5")
    assert "Zeno" not in msg and "mode changes without progress" in msg
    msg = failure_message(cm, _kernel_result(_codes.ST_ZENO, [0.3], 37.5))
    assert "too many mode changes without progress at t = 37.5" in msg and "Zeno" in msg


def test_twisting_zeno_is_reported_as_zeno_not_stiffness():
    # x' = y, y' = -2 sign(x) - sign(y) (the twisting algorithm): infinitely many switches
    # before the origin is reached at a finite time. From (1, 0) each half turn takes
    # (4/3) sqrt(2 |x|) and shrinks |x| threefold: T = (4/3) sqrt(2) / (1 - 1/sqrt(3)).
    # Before, max_steps ran out there with advice to use an implicit method for stiffness.
    T = (4 / 3) * math.sqrt(2) / (1 - 1 / math.sqrt(3))
    y = fn.states("y")
    m = fn.Model(rhs={x: y(t), y: -2 * sympy.sign(x(t)) - sympy.sign(y(t))}, params={})
    with pytest.raises(IntegrationError, match=r"mode changes pile up at t = (\S+):") as e:
        fn.simulate(m, 10.0, history={"x": 1.0, "y": 0.0}, max_steps=5000)
    when = float(re.search(r"pile up at t = (\S+):", str(e.value)).group(1))
    assert when == pytest.approx(T, abs=1e-6)
    assert "Zeno" in str(e.value) and "ROS2" not in str(e.value)


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


def test_a_callable_history_is_needed_only_as_far_back_as_the_delays_reach():
    # issue 23: log(t) from t0 = 2 with a delay of 1 was "history of 'x' is not finite: nan at
    # t = -2" -- a time the model never asks for. x' = -x(t - 1), x = log t on [1, 2]: by the
    # method of steps x(3) = 1 - log 2 and x(4) = -1/4 exactly.
    m = fn.Model(rhs={x: -x(t - 1)}, params={}, name="logh")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing about times that are not needed either
        sol = fn.simulate(
            m, 4.0, t0=2.0, history={"x": lambda s: np.log(s)}, rtol=1e-10, atol=1e-12
        )
    assert sol(3.0)[0] == pytest.approx(1 - math.log(2), abs=1e-8)
    assert sol(4.0)[0] == pytest.approx(-0.25, abs=1e-8)
    # where the delays do reach a time the history does not cover, that is what is said
    with pytest.raises(IntegrationError, match=r"history of 'x' is not finite: nan at t = 0\.5"):
        with np.errstate(invalid="ignore"):
            fn.simulate(m, 4.0, t0=1.5, history={"x": lambda s: np.sqrt(s - 1.0)})


# ------------------------------------------------------------------ errors that keep their class
def test_an_ensemble_member_with_a_bad_history_is_not_an_integration_failure():
    # issue 23: a history naming a state the model does not have, or text for a value, was an
    # IntegrationError ("rcp, member 1: history given for 'y' ..."): the integrator never ran
    m = _decay()
    with pytest.raises(ModelError, match=r"decay, member 1 \(history 1\): history given for 'y'"):
        fn.simulate_ensemble(m, 1.0, history=[{"x": 1.0}, {"y": 1.0}], progress=False, workers=1)
    with pytest.raises(ModelError, match=r"member 0: history of 'x': '1' is neither"):
        fn.simulate_ensemble(m, 1.0, history={"x": "1"}, progress=False, workers=1)
    # a member that does fail in the integrator still raises an IntegrationError
    blowup = fn.Model(rhs={x: x(t) ** 2}, params={}, name="blowup")
    with pytest.raises(IntegrationError, match=r"blowup, member 0: the solution diverges"):
        fn.simulate_ensemble(blowup, 2.0, history={"x": 1.0}, progress=False, workers=1)


def test_times_and_tail_starts_are_real_numbers():
    # x' = -x(t - 1), x = 1 on [-1, 0]: x = 1 - t on [0, 1], x(2) = -1/2 (method of steps).
    # Times given as text were read as numbers by Solution.__call__, and oscillation's after
    # was a raw ValueError for text that is not a number
    sol = fn.simulate(_decay(), 3.0, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
    assert sol(np.float64(2.0), "x") == pytest.approx(-0.5, abs=1e-8)
    assert sol(np.array(0.5), "x") == pytest.approx(0.5, abs=1e-8)
    with pytest.raises(ParameterError, match=r"t: '2' is not a real number \(text"):
        sol("2")
    with pytest.raises(ParameterError, match=r"t: True is not a real number"):
        sol([0.5, True])
    with pytest.raises(ParameterError, match=r"after: 'x' is not a real number"):
        fn.oscillation(sol, "x", after="x")
    with pytest.raises(ParameterError, match=r"after: '1' is not a real number"):
        fn.oscillation((np.linspace(0, 3, 31), np.linspace(0, 3, 31)), "x", after="1")
    with pytest.raises(ParameterError, match=r"tol: '1e-3' is not a real number"):
        fn.oscillation(sol, "x", tol="1e-3")
