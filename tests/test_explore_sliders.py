"""The explorer's sliders: ranges, steps, units and meanings from each parameter's Param."""

from __future__ import annotations

import pytest

import fluidnet as fn
from fluidnet.explore.sliders import SPAN, SliderSpec, slider_specs


def test_default_ranges_span_a_factor_four_within_bounds():
    m = fn.models.mgt_red()
    specs = {s.name: s for s in slider_specs(m, ["Tp", "p_max", "weight"])}
    tp = specs["Tp"]  # 0.2 s, bounds (0, None)
    assert (tp.lo, tp.hi, tp.value) == (0.2 / SPAN, 0.2 * SPAN, 0.2)
    assert tp.step == pytest.approx((tp.hi - tp.lo) / 200)
    assert tp.unit == "s" and tp.label == "Tp [s]" and tp.doc == m.params["Tp"].doc
    pmax = specs["p_max"]  # 0.1, bounds (0, 1): 0.4 is inside, so the range is 0.025..0.4
    assert (pmax.lo, pmax.hi) == (0.025, 0.4)
    w = m.params["weight"].value
    assert specs["weight"].hi == pytest.approx(4 * w) and specs["weight"].lo == w / 4


def test_a_range_is_cut_at_the_bounds():
    t = fn.t
    x = fn.states("x")
    p = fn.params("p")
    m = fn.Model(rhs={x: -p * x(t)}, params={p: fn.Param(0.5, bounds=(0.2, 1.0))})
    (s,) = slider_specs(m, ["p"])
    assert (s.lo, s.hi) == (0.2, 1.0)


def test_zero_values_use_finite_bounds_or_ask_for_a_range():
    t = fn.t
    x = fn.states("x")
    p, q = fn.params("p q")
    m = fn.Model(rhs={x: -x(t) + p + q}, params={p: fn.Param(0.0, bounds=(-1.0, 2.0)), q: 0.0})
    (s,) = slider_specs(m, ["p"])
    assert (s.lo, s.hi) == (-1.0, 2.0)
    with pytest.raises(fn.ParameterError, match=r"'q' is 0 .* sliders=\{'q': \(lo, hi\)\}"):
        slider_specs(m, ["q"])
    (s,) = slider_specs(m, {"q": (-3, 3)})
    assert (s.lo, s.hi, s.value) == (-3.0, 3.0, 0.0)


def test_given_ranges_and_starting_values():
    m = fn.models.rcp()
    specs = slider_specs(m, {"alpha": (0.1, 2.0), "beta": None}, params={"beta": 0.3})
    assert [(s.name, s.lo, s.hi, s.value) for s in specs] == [
        ("alpha", 0.1, 2.0, 0.4),
        ("beta", 0.3 / SPAN, 0.3 * SPAN, 0.3),
    ]
    assert all(isinstance(s, SliderSpec) for s in specs)


def test_every_parameter_by_default_and_one_name_as_a_string():
    m = fn.models.rcp()
    assert [s.name for s in slider_specs(m)] == list(m.params)
    assert [s.name for s in slider_specs(m, "d0")] == ["d0"]


@pytest.mark.parametrize(
    "sliders, params, match",
    [
        (["gamma"], None, "no parameter 'gamma' in model 'rcp'"),
        ({"alpha": (1.0, 0.5)}, None, r"range \(1, 0.5\) needs finite lo < hi"),
        ({"alpha": (-1.0, 1.0)}, None, "leaves the parameter's bounds"),
        ({"alpha": "wide"}, None, "is not a pair"),
        ({"alpha": (0.5, 1.0)}, None, r"its value 0.4 is outside the range \(0.5, 1\)"),
        ([], None, "no slider"),
    ],
)
def test_bad_sliders_are_refused(sliders, params, match):
    with pytest.raises(fn.ParameterError, match=match):
        slider_specs(fn.models.rcp(), sliders, params)


def test_a_parameter_without_a_value_needs_one():
    t = fn.t
    x = fn.states("x")
    p = fn.params("p")
    m = fn.Model(rhs={x: -p * x(t)}, params={p: None})
    with pytest.raises(fn.ParameterError, match=r"'p' has no default value: give one"):
        slider_specs(m, ["p"])
    (s,) = slider_specs(m, ["p"], params={"p": 2.0})
    assert s.value == 2.0
