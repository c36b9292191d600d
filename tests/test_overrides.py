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
