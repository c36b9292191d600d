"""One convention for parameter overrides: params={...} at every entry point."""

import numpy as np
import pytest

import fluidnet as fn


def delayed_decay():
    x = fn.states("x")
    k, T = fn.params("k T")
    return fn.Model({x: 1.0 - k * x(fn.t - T)}, {k: 1.0, T: 0.5}, name="decay")


def test_params_dict_and_keywords_agree_in_the_analyses():
    m = delayed_decay()
    a, b = m.linearize(params={"k": 2.0}), m.linearize(k=2.0)
    assert a.A[0][0, 0] == b.A[0][0, 0] == -2.0
    assert m.equilibrium(params={"k": 4.0}) == {"x": 0.25} == m.equilibrium(k=4.0)
    L = m.loop_gain("x", params={"k": 2.0})
    assert abs(L(1j) - m.loop_gain("x", k=2.0)(1j)) == 0
    ds = fn.stability_chart(m, {"T": [0.5, 1.0]}, params={"k": 2.0})
    # stable iff k T < pi / 2
    assert ds["stable"].values.tolist() == [True, False]
    cv = fn.critical_value(m, "T", 0.1, 2.0, params={"k": 2.0})
    assert cv.value == pytest.approx(np.pi / 4, rel=1e-12)


def test_a_name_given_twice_is_an_error():
    m = delayed_decay()
    with pytest.raises(fn.OptionError, match="'k' given both"):
        m.linearize(params={"k": 2.0}, k=3.0)
    with pytest.raises(fn.OptionError, match="'k' given both"):
        fn.stability_chart(m, {"T": [0.5]}, params={"k": 2.0}, k=3.0)
    with pytest.raises(fn.OptionError, match="params must be a dict"):
        m.equilibrium(params=[("k", 2.0)])


def test_a_parameter_named_like_an_option_goes_in_params():
    x = fn.states("x")
    method, T = fn.params("method T")
    m = fn.Model({x: -method * x(fn.t - T)}, {method: 1.0, T: 0.5})
    cv = fn.critical_value(m, "T", 0.1, 3.0, params={"method": 2.0}, method="continuation")
    assert cv.method == "continuation" and cv.value == pytest.approx(np.pi / 4, rel=1e-10)


def test_integrators_point_keywords_to_params():
    m = delayed_decay()
    with pytest.raises(fn.OptionError, match=r"params=\{'k': 2\}"):
        fn.simulate(m, 5.0, k=2)
    with pytest.raises(fn.OptionError, match=r"unknown option\(s\) 'tol'.*params="):
        fn.simulate(m, 5.0, tol=1e-3)
    with pytest.raises(fn.OptionError, match=r"simulate_ensemble\(\) takes .*params=\{'T': 1.0\}"):
        fn.simulate_ensemble(m, 5.0, T=1.0)


# ------------------------------------------------------------------ parameter values (issue 24)
# A parameter value is a real number (int, float, numpy real scalar, 0-d real array, real sympy
# number); grids and array-valued overrides are real arrays. Before, text was read as a number
# in some places (params={"T": "0.3"}, a default "1.0", lo="0.1", a grid ["1", "2"]) and refused
# in others ("1/3", True), and a complex grid value was a raw TypeError after a ComplexWarning.
BAD_VALUES = ["0.3", "1/3", True, 0.5 + 0j, object()]
BAD_IDS = ["text", "fraction-text", "bool", "complex", "object"]


def _entry_points(v):
    """Each entry point given the value ``v`` for parameter ``k`` (or an end of a range)."""
    x = fn.states("x")
    k, T = fn.params("k T")
    m = delayed_decay()
    return {
        "Model default": lambda: fn.Model({x: -k * x(fn.t - T)}, {k: v, T: 0.5}),
        "with_params": lambda: m.with_params(k=v),
        "simulate": lambda: fn.simulate(m, 1.0, params={"k": v}),
        "simulate_ensemble": lambda: fn.simulate_ensemble(m, 1.0, params={"k": [1.0, v]}),
        "equilibrium": lambda: m.equilibrium(params={"k": v}),
        "linearize": lambda: m.linearize(params={"k": v}),
        "linearize keyword": lambda: m.linearize(k=v),
        "loop_gain": lambda: m.loop_gain("x", params={"k": v}),
        "critical_value params": lambda: fn.critical_value(m, "T", 0.1, 2.0, params={"k": v}),
        "critical_value grid": lambda: fn.critical_value(m, "T", 0.1, 2.0, grid={"k": [1.0, v]}),
        "critical_value lo": lambda: fn.critical_value(m, "k", v, 2.0),
        "critical_value hi": lambda: fn.critical_value(m, "k", 0.1, v),
        "stability_switches": lambda: fn.stability_switches(m, "T", 0.1, 2.0, params={"k": v}),
        "stability_chart params": lambda: fn.stability_chart(m, {"T": [0.5]}, params={"k": v}),
        "stability_chart grid": lambda: fn.stability_chart(m, {"k": [1.0, v]}),
        "stability_boundary range": lambda: fn.stability_boundary(
            m, "k", "T", x_range=(v, 2.0), y_range=(0.1, 1.0)
        ),
        "stability_boundary params": lambda: fn.stability_boundary(
            fn.models.rcp(),
            "alpha",
            "beta",
            x_range=(0.1, 1.0),
            y_range=(0.1, 0.5),
            params={"d0": v},
        ),
        "phase_portrait": lambda: fn.phase_portrait(
            m, [{"x": 1.5}], x="x", y="x", t_end=1.0, params={"k": v}
        ),
        "nonlinear_chart": lambda: fn.nonlinear_chart(m, {"k": [v]}, ics=[{"x": 1.5}], t_end=1.0),
        "sweep": lambda: fn.sweep.sweep(lambda k: k, {"k": [1.0, v]}),
        "hopf_point": lambda: fn.hopf_point(m, "k", v, 3.0),
    }


@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
def test_parameter_values_must_be_real_numbers_at_every_entry_point(value):
    for where, call in _entry_points(value).items():
        with pytest.raises(fn.ParameterError, match=r"not a real number") as err:
            call()
        msg = str(err.value)
        # the message names the parameter (or the end of the range) and the value
        assert ("'k'" in msg or "'T'" in msg or "'d0'" in msg) and repr(value)[:5] in msg, (
            where,
            msg,
        )


def test_none_is_no_override():
    m = delayed_decay()
    with pytest.raises(fn.ParameterError, match=r"'k': None is not a real number"):
        fn.simulate(m, 1.0, params={"k": None})
    with pytest.raises(fn.ParameterError, match=r"'k': None is not a real number"):
        m.linearize(params={"k": None})
    # as a default, None means "give it later"
    assert m.with_params(k=None).values["k"] is None


def test_a_complex_grid_value_is_a_parameter_error_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning
        with pytest.raises(fn.ParameterError, match=r"grid of 'alpha': \(0\.1\+1j\) .*complex"):
            fn.stability_chart(fn.models.rcp(), {"alpha": [0.1 + 1j, 0.2], "beta": [0.3]})


def test_real_numbers_of_every_kind_give_the_same_answer():
    import sympy

    m = delayed_decay()
    ref = m.linearize(params={"k": 0.5}).A[0][0, 0]
    assert ref == -0.5
    for v in (np.float32(0.5), np.float64(0.5), np.array(0.5), sympy.Rational(1, 2)):
        assert m.linearize(params={"k": v}).A[0][0, 0] == ref
    assert m.linearize(params={"k": np.int64(2)}).A[0][0, 0] == -2.0
    # a grid of numpy integers, an interval of numpy scalars: x' = 1 - k x(t - T) is stable iff
    # k T < pi / 2
    ds = fn.stability_chart(m, {"k": np.array([1, 4], dtype=np.int64)})
    assert ds["stable"].values.tolist() == [True, False]
    cv = fn.critical_value(m, "T", np.float32(0.25), np.array(3.0))
    assert cv.value == pytest.approx(np.pi / 2, rel=1e-12)
