"""The symbolic model layer: construction, parameters and every validation error."""

import math

import pytest
import sympy

import fluidnet as fn
from fluidnet import ModelError, Param, ParameterError

t = fn.t


@pytest.fixture
def decay():
    x = fn.states("x")
    k, T = fn.params("k T")
    return fn.Model(
        rhs={x: -k * x(t - T)},
        params={k: Param(1.0, unit="1/s", doc="gain", bounds=(0, 10)), T: 1.0},
        name="decay",
    )


def test_basic_attributes(decay):
    assert decay.state_names == ("x",)
    assert decay.param_names == ("k", "T")
    assert decay.params["k"].unit == "1/s"
    assert decay.values == {"k": 1.0, "T": 1.0}
    eq = decay.equations[0]
    assert isinstance(eq, sympy.Eq)
    assert eq.lhs == sympy.Derivative(sympy.Function("x", real=True)(t), t)
    assert "x" in decay._repr_latex_()


def test_keys_may_be_names_functions_or_applied():
    x, y = fn.states("x y")
    a = fn.params("a")
    m1 = fn.Model({x: -a * x(t), "y": x(t) - y(t)}, {"a": 2.0})
    m2 = fn.Model({x(t): -a * x(t), y: x(t) - y(t)}, {a: 2.0})
    assert m1.state_names == m2.state_names == ("x", "y")
    assert m1.form.rhs == m2.form.rhs


def test_plain_sympy_symbols_and_functions_are_accepted():
    X = sympy.Function("X")  # no assumptions, user-made
    k, tt = sympy.symbols("k t")
    m = fn.Model({X: -k * X(tt - 2)}, {"k": 0.5})
    assert m.form.lags[0].delay == 2
    assert m.linearize().delays == (2.0,)


def test_with_params_is_immutable(decay):
    m2 = decay.with_params(k=2.0)
    assert decay.values["k"] == 1.0
    assert m2.values["k"] == 2.0
    assert m2.params["k"].unit == "1/s"  # metadata kept


def test_resolve_params_overrides(decay):
    assert decay.resolve_params({"k": 3.0}) == {"k": 3.0, "T": 1.0}


# ---------------------------------------------------------------- parameter errors
def test_unknown_parameter_name(decay):
    with pytest.raises(ParameterError, match="unknown parameter 'kappa'"):
        decay.with_params(kappa=1.0)
    with pytest.raises(ParameterError, match="unknown parameter 'kappa'"):
        decay.resolve_params({"kappa": 1.0})
    with pytest.raises(ParameterError, match="kappa"):
        decay.linearize(kappa=1.0)


def test_missing_value():
    x = fn.states("x")
    k = fn.params("k")
    m = fn.Model({x: -k * x(t)}, {k: None})
    with pytest.raises(ParameterError, match="'k'.*no value"):
        m.equilibrium()
    assert m.equilibrium(k=1.0) == {"x": 0.0}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values(decay, bad):
    with pytest.raises(ParameterError, match="'k'.*not finite"):
        decay.with_params(k=bad)
    with pytest.raises(ParameterError, match="'T'.*not finite"):
        decay.resolve_params({"T": bad})


def test_non_numeric_value(decay):
    with pytest.raises(ParameterError, match="'k'.*not a real number"):
        decay.with_params(k="fast")
    with pytest.raises(ParameterError, match="'k'.*not a real number"):
        decay.with_params(k=True)


def test_value_outside_bounds(decay):
    with pytest.raises(ParameterError, match="'k'.*above its upper bound 10"):
        decay.with_params(k=11.0)
    with pytest.raises(ParameterError, match="'k'.*below its lower bound 0"):
        decay.resolve_params({"k": -1.0})


def test_bad_bounds():
    x = fn.states("x")
    with pytest.raises(ParameterError, match="lower bound 2 exceeds"):
        fn.Model({x: -x(t)}, {"k": Param(1.0, bounds=(2, 1))})


def test_parameter_delay_negative(decay):
    with pytest.raises(ParameterError, match=r"delay T of x\(t - \(T\)\).*-0.5"):
        decay.with_params(T=-0.5)
    with pytest.raises(ParameterError, match="delays must be real and >= 0"):
        decay.linearize(T=-0.5)


def test_parameter_delay_not_real():
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: -x(t - sympy.sqrt(a))}, {a: 1.0})
    with pytest.raises(ParameterError, match=r"sqrt\(a\).*I"):
        m.with_params(a=-4.0)


# ---------------------------------------------------------------- model errors
def test_state_listed_twice():
    x = fn.states("x")
    with pytest.raises(ModelError, match="state 'x' is listed twice"):
        fn.Model({x: -x(t), "x": x(t)}, {})


def test_delayed_reference_to_unknown_state():
    x, y = fn.states("x y")
    with pytest.raises(ModelError, match=r"y\(t - 1\) refers to 'y'.*neither a state"):
        fn.Model({x: -y(t - 1)}, {})


def test_free_symbol_that_is_not_a_parameter():
    x = fn.states("x")
    k, g = fn.params("k g")
    with pytest.raises(ModelError, match="free symbol 'g' is neither a parameter nor t"):
        fn.Model({x: -k * g * x(t)}, {k: 1.0})


def test_negative_constant_delay():
    x = fn.states("x")
    with pytest.raises(ModelError, match="future"):
        fn.Model({x: -x(t + 1)}, {})


def test_function_with_two_arguments():
    x = fn.states("x")
    with pytest.raises(ModelError, match="exactly one argument"):
        fn.Model({x: -x(t, 1)}, {})


def test_nonnegative_must_be_a_state():
    x = fn.states("x")
    with pytest.raises(ModelError, match="nonnegative entry 'q' is not a state"):
        fn.Model({x: -x(t)}, {}, nonnegative=["q"])


def test_name_clashes():
    x = fn.states("x")
    with pytest.raises(ModelError, match="clashes"):
        fn.Model({x: -x(t)}, {"x": 1.0})
    with pytest.raises(ModelError, match="time symbol"):
        fn.Model({"t": 1}, {})


def test_signal_cycles_and_self_reference():
    x = fn.states("x")
    p, r = fn.signals("p r")
    with pytest.raises(ModelError, match="algebraic loop"):
        fn.Model({x: -p(t)}, {}, signals={p: r(t) + x(t), r: p(t)})
    with pytest.raises(ModelError, match="refers to itself"):
        fn.Model({x: -p(t)}, {}, signals={p: p(t - 1) + x(t)})


def test_a_delayed_loop_of_signals_is_not_called_algebraic():
    # p(t) = r(t - 1) + x(t), r(t) = p(t): a difference equation (issue 23: it was reported as
    # "an algebraic loop", which only an undelayed cycle is)
    x = fn.states("x")
    p, r, u = fn.signals("p r u")
    with pytest.raises(ModelError, match="loop through delays") as info:
        fn.Model({x: -p(t)}, {}, signals={p: r(t - 1) + x(t), r: p(t)})
    assert "form an algebraic loop" not in str(info.value)
    assert "p uses r(t - (1))" in str(info.value) and "difference equation" in str(info.value)
    with pytest.raises(ModelError, match="refers to itself through a delay") as info:
        fn.Model({x: -p(t)}, {}, signals={p: p(t - 1) + x(t)})
    assert "not an algebraic loop" in str(info.value)
    # an undelayed cycle next to a delayed one is the algebraic loop, and named as such
    with pytest.raises(ModelError, match="algebraic loop.*r -> u -> r|algebraic loop.*u -> r -> u"):
        fn.Model({x: -p(t)}, {}, signals={p: r(t - 1), r: u(t) + x(t), u: r(t) + p(t - 2)})
    # delayed uses of signals without a cycle are fine
    m = fn.Model({x: -p(t)}, {}, signals={p: r(t - 1) + x(t), r: 2 * x(t - 1)})
    assert m.linearize().A0.tolist() == [[-1.0]]


def test_empty_and_non_expression_rhs():
    with pytest.raises(ModelError, match="non-empty"):
        fn.Model({}, {})
    x = fn.states("x")
    with pytest.raises(ModelError, match="cannot interpret"):
        fn.Model({x: object()}, {})


def test_pickle_round_trip_after_analysis():
    import pickle

    m = fn.models.rcp(alpha=0.7)
    m.linearize()
    m.equilibrium()
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.values == m.values and m2.state_names == m.state_names
    np_A = m2.linearize().A[0]
    assert np_A[0, 0] == pytest.approx(-0.7 / 0.2)


def test_a_neutral_term_is_refused_at_construction():
    """Issue 33: Derivative(x(t - 1), t) was accepted, then called 'time-varying' by linearize.
    The remedy the error gives (a delayed derivative of a state whose own right-hand side has
    none is that right-hand side delayed) works: y' = -y + x'(t - 1) with x' = -x is
    y' = -y - x(t - 1)."""
    x, y = fn.states("x y")
    with pytest.raises(ModelError, match=r"Derivative\(x\(t - 1\), t\).*neutral.*not supported"):
        fn.Model({x: -x(t), y: -y(t) + sympy.Derivative(x(t - 1), t)}, {})
    with pytest.raises(ModelError, match="neutral"):
        fn.Model({x: -x(t) + sympy.Rational(1, 2) * sympy.Derivative(x(t - 1), t)}, {})
    lin = fn.Model({x: -x(t), y: -y(t) - x(t - 1)}, {}).linearize()
    assert lin.delays == (1.0,)
    assert lin.A0.tolist() == [[-1.0, 0.0], [0.0, -1.0]]
    assert lin.A[0].tolist() == [[0.0, 0.0], [-1.0, 0.0]]
