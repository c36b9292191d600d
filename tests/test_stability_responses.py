"""Step and impulse responses with exact delays (issue 36): fluidnet.step_response and
fluidnet.impulse_response, with the realization (fluidnet.linear.realization), the method of steps
(fluidnet.linear.steps), the result (fluidnet.linear.timeresponse) and a model's input and output
(fluidnet.symbolic.inputoutput).

Every expected value comes from an independent source: closed-form solutions of delay equations
(Erlang and gamma series, the polynomial pieces of the method of steps), a method of steps
written here on a different formulation with a different integrator (scipy's Radau), the
equilibrium solver, and the nonlinear integrator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import gammainc
from scipy.stats import gamma

import fluidnet as fn
from fluidnet.linear.realization import realize
from fluidnet.linear.steps import breakpoints
from fluidnet.linear.timeresponse import TimeResponse
from fluidnet.symbolic.inputoutput import input_output_system

T_LAG, TAU = 0.7, 0.3  # a first-order lag 1/(0.7 s + 1) behind a delay of 0.3 s


def lag_loop() -> fn.DelayTF:
    return fn.DelayTF.from_expr(f"exp(-{TAU}*s)/({T_LAG}*s + 1)")


def erlang_series_step(t: np.ndarray) -> np.ndarray:
    """Closed loop ``L/(1+L)`` of ``L = e^{-s tau}/(T s + 1)``: ``Y = (1/s) sum_n (-1)^(n+1)
    e^{-n s tau}/(T s + 1)^n``, and ``1/(s (T s + 1)^n)`` is the Erlang distribution function."""
    out = np.zeros_like(t)
    for n in range(1, int(t.max() / TAU) + 2):
        m = t >= n * TAU
        out[m] += (-1) ** (n + 1) * gammainc(n, (t[m] - n * TAU) / T_LAG)
    return out


def erlang_series_impulse(t: np.ndarray) -> np.ndarray:
    out = np.zeros_like(t)
    for n in range(1, int(t.max() / TAU) + 2):
        m = t >= n * TAU
        out[m] += (-1) ** (n + 1) * gamma.pdf(t[m] - n * TAU, n, scale=T_LAG)
    return out


def test_step_response_of_a_lag_with_delay_in_feedback_matches_the_erlang_series():
    t = np.linspace(0.0, 12.0, 1201)  # 40 delays
    r = fn.step_response(lag_loop().feedback(), t)
    np.testing.assert_allclose(r.y, erlang_series_step(t), rtol=0, atol=1e-8)
    assert np.max(np.abs(r.y - erlang_series_step(t))) < 1e-10  # the default rtol is 1e-12
    assert r.kind == "step" and r.diracs == ()


def test_impulse_response_matches_the_gamma_series():
    t = np.linspace(0.0, 12.0, 1201)
    r = fn.impulse_response(lag_loop().feedback(), t)
    np.testing.assert_allclose(r.y, erlang_series_impulse(t), rtol=0, atol=1e-8)
    # the jump at t = tau: nothing before, 1/T right after (right-continuous)
    r = fn.impulse_response(lag_loop().feedback(), [TAU - 1e-9, TAU])
    assert r.y[0] == 0.0 and r.y[1] == pytest.approx(1 / T_LAG, rel=1e-12)


def pieces_of_the_method_of_steps(t: np.ndarray, a: float, tau: float, c: float) -> np.ndarray:
    """``y' = -a y(t - tau) + c`` from rest: on ``[k tau, (k+1) tau]`` the solution is the
    polynomial ``c sum_{j<=k} (-a)^j (t - j tau)^(j+1) / (j+1)!`` (by induction over steps)."""
    out = np.zeros_like(t)
    for j in range(int(t.max() / tau) + 1):
        m = t >= j * tau
        out[m] += c * (-a) ** j * (t[m] - j * tau) ** (j + 1) / math.factorial(j + 1)
    return out


def test_a_model_with_a_parameter_input_matches_the_closed_form_pieces():
    # x' = k (w - x(t - T)): a step of w by one unit gives x' = -k x(t - T) + k
    t_, x, (k, w, T) = fn.t, fn.states("x"), fn.params("k w T")
    m = fn.Model(rhs={x: k * (w - x(t_ - T))}, params={k: 1.3, w: 2.0, T: 0.4}, name="lag")
    t = np.linspace(0.0, 4.0, 401)  # 10 delays: the pieces stay well conditioned
    exact = pieces_of_the_method_of_steps(t, 1.3, 0.4, 1.3)
    r = fn.step_response(m, t, input="w", output="x")
    np.testing.assert_allclose(r.y, exact, rtol=0, atol=1e-8)
    # the same system as a transfer function, 1.3 / (s + 1.3 e^{-0.4 s})
    r2 = fn.step_response("1.3/(s + 1.3*exp(-0.4*s))", t)
    np.testing.assert_allclose(r2.y, exact, rtol=0, atol=1e-8)
    # an input on the state's derivative: x' = -k x(t - T) + u
    r3 = fn.step_response(m, t, input="x", output="x")
    np.testing.assert_allclose(r3.y, exact / 1.3, rtol=0, atol=1e-8)


def radau_segments(t_end: float, a: float, b: float, d0: float) -> tuple[np.ndarray, callable]:
    """The closed loop of RCP's ``L = e^{-s d0} (a d0 s + b)/(d0 s)^2`` as the delay equation of
    its output, ``d0^2 y'' = a d0 (u' - y')(t - d0) + b (u - y)(t - d0)`` for a unit step ``u``:
    the step's derivative makes ``y'`` jump by ``a / d0`` at ``t = d0``. Integrated here one
    delay at a time with scipy's Radau (an implicit method, unlike the library's DOP853)."""
    segments = []

    def hist(s: float) -> np.ndarray:
        if s < 0:
            return np.zeros(2)
        for lo, hi, sol in segments:
            if lo - 1e-12 <= s <= hi + 1e-12:
                return sol(min(max(s, lo), hi))
        raise AssertionError(s)

    y = np.zeros(2)
    n = int(round(t_end / d0))
    for i in range(n):
        lo, hi = i * d0, (i + 1) * d0
        if i == 1:
            y = y + np.array([0.0, a / d0])  # the impulse of u' at t = d0

        def rhs(t, z, lo=lo):
            yd = hist(t - d0) if lo > 0 else np.zeros(2)
            u = 1.0 if lo > 0 else 0.0
            return [z[1], (-a * d0 * yd[1] + b * (u - yd[0])) / d0**2]

        sol = solve_ivp(rhs, (lo, hi), y, method="Radau", rtol=1e-12, atol=1e-14, dense_output=True)
        segments.append((lo, hi, sol.sol))
        y = sol.y[:, -1]

    def value(t: np.ndarray) -> np.ndarray:
        return np.array([hist(min(float(s), n * d0))[0] for s in t])

    return np.arange(n + 1) * d0, value


def test_rcp_closed_loop_matches_an_independent_method_of_steps():
    a, b, d0 = 0.4, 0.2, 0.2
    L = fn.models.rcp().loop_gain("R")  # eq (9)
    t = np.linspace(0.0, 4.0, 161)
    r = fn.step_response(L.feedback(), t)
    _, ref = radau_segments(4.0, a, b, d0)
    np.testing.assert_allclose(r.y, ref(t), rtol=0, atol=1e-8)


def test_final_value_of_a_parameter_step_is_the_slope_of_the_equilibrium():
    m = fn.models.rcp()
    r = fn.step_response(m, [60.0], input="C", output="R")
    eq = [m.equilibrium(C=c)["R"] for c in (18750.0 - 1.0, 18750.0 + 1.0)]
    assert r.y[0] == pytest.approx((eq[1] - eq[0]) / 2.0, rel=1e-6)  # 1/N = 0.1


def primal_dual() -> fn.Model:
    """The own-law tutorial's primal-dual controller, with the load excess as a signal."""
    t_ = fn.t
    x, p = fn.states("x p")
    excess = fn.signals("excess")
    k, w, g, N, C, T = fn.params("k w gamma N C T")
    return fn.Model(
        rhs={x: k * (w - x(t_ - T) * p(t_ - T)), p: g * excess(t_)},
        signals={excess: N * x(t_ - T / 2) - C},
        params={k: 1.0, w: 10.0, g: 0.01, N: 10, C: 100.0, T: 0.2},
        name="primal-dual",
    )


def test_a_parameter_step_agrees_with_the_nonlinear_model():
    m = primal_dual()
    delta = 1e-3  # a small step of the capacity: the linear response is exact to O(delta)
    sol = fn.simulate(
        m, 20.0, params={"C": 100.0 + delta}, history={"x": 10.0, "p": 1.0}, rtol=1e-10
    )
    t = np.linspace(0.0, 20.0, 201)
    r = fn.step_response(m, t, input="C", output="p")
    nonlinear = sol(t, "p") - 1.0  # the equilibrium price is w N / C = 1
    scale = np.max(np.abs(r.y))
    np.testing.assert_allclose(nonlinear / delta, r.y, rtol=0, atol=1e-4 * scale)  # found: 1.5e-5


def test_a_signal_output_reads_delayed_states_and_the_parameter_directly():
    m = primal_dual()
    t = np.linspace(0.0, 5.0, 101)
    x = fn.step_response(m, t, input="C", output="x").y
    x_half = fn.step_response(m, t - 0.1, input="C", output="x").y  # x(t - T/2)
    e = fn.step_response(m, t, input="C", output="excess")
    # excess = N x(t - T/2) - C: its deviation is N dx(t - T/2) - dC, dC = 1 from t = 0 on
    np.testing.assert_allclose(e.y, 10 * x_half - 1.0, rtol=0, atol=1e-10)
    assert not np.allclose(x, x_half)
    system, lin = input_output_system(m, "C", "excess")
    assert system.feedthrough == ((0.0, -1.0),)
    assert [s for s, _ in system.outputs] == [0.1]
    assert lin.delays == (0.1, 0.2)


def test_a_proper_transfer_function_has_a_feedthrough_and_a_dirac():
    # (s + 2)/(s + 1) = 1 + 1/(s + 1), delayed by 0.5 s
    g = "exp(-0.5*s)*(s + 2)/(s + 1)"
    t = np.array([0.2, 0.5, 1.5])
    r = fn.step_response(g, t)
    np.testing.assert_allclose(r.y, [0.0, 1.0, 2.0 - np.exp(-1.0)], rtol=0, atol=1e-11)
    i = fn.impulse_response(g, t)
    assert i.diracs == ((0.5, 1.0),)
    np.testing.assert_allclose(i.y, [0.0, 1.0, np.exp(-1.0)], rtol=0, atol=1e-11)


def test_neutral_and_improper_systems_are_refused_by_name():
    with pytest.raises(fn.NeutralSystemError, match="neutral.*delayed by 1"):
        fn.step_response(fn.DelayTF.from_expr("0.5*exp(-s)").feedback())
    with pytest.raises(fn.ImproperSystemError, match="degree 2 in s, above"):
        fn.step_response("s**2/(s + 1)")
    with pytest.raises(fn.ModelError, match="not causal"):
        realize(fn.DelayTF({0.0: [1.0]}, {1.0: [1.0, 1.0]}))
    assert issubclass(fn.NeutralSystemError, fn.ModelError)
    assert issubclass(fn.ImproperSystemError, fn.ModelError)


def test_bad_options_are_named():
    m = fn.models.rcp()
    with pytest.raises(fn.OptionError, match="input= .* and output="):
        fn.step_response(m)
    with pytest.raises(fn.OptionError, match="transfer function has one"):
        fn.step_response("1/(s + 1)", input="C")
    with pytest.raises(fn.OptionError, match="either t"):
        fn.step_response("1/(s + 1)", [1.0], t_end=2.0)
    with pytest.raises(fn.OptionError, match="rtol"):
        fn.step_response("1/(s + 1)", [1.0], rtol=1e-16)
    with pytest.raises(fn.OptionError, match="n_points"):
        fn.step_response("1/(s + 1)", n_points=1)
    with pytest.raises(fn.OptionError, match=r"ask for times up to 5 s"):
        fn.step_response("1/(s + exp(-0.0001*s))", [1000.0])  # 1e7 steps of the delay
    with pytest.raises(fn.ParameterError, match="neither a parameter nor a state"):
        fn.step_response(m, input="nope", output="R")
    with pytest.raises(fn.ModelError, match="neither a state nor a signal"):
        fn.step_response(m, input="C", output="nope")


def test_default_times_cover_the_settling():
    r = fn.step_response(lag_loop().feedback())
    assert r.t.size == 1000 and r.t[0] == 0.0
    # the closed loop settles to 1/2 (L(0) = 1); seven time constants of the slowest mode
    assert abs(r.y[-1] - 0.5) < 0.01


def test_segments_end_at_the_sums_of_delays():
    b = breakpoints((0.3, 0.5), 1.2)
    np.testing.assert_allclose(b, [0.0, 0.3, 0.5, 0.6, 0.8, 0.9, 1.0, 1.1])


def test_the_result_exports_and_plots():
    r = fn.impulse_response("exp(-0.5*s)*(s + 2)/(s + 1)", np.linspace(0, 3, 31))
    assert isinstance(r, TimeResponse)
    ds = r.to_xarray()
    np.testing.assert_array_equal(ds["y"].values, r.y)
    assert ds.attrs["dirac_times"] == [0.5] and ds.attrs["kind"] == "impulse"
    ax = r.plot()
    (line,) = ax.get_lines()[:1]
    np.testing.assert_array_equal(line.get_ydata(), r.y)
    assert "impulse response" in ax.get_title()
    assert "Dirac" in repr(r)
