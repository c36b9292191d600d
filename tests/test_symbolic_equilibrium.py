"""Equilibria: symbolic, numeric, on the boundary of projected states, and the failure cases."""

import math

import pytest
import sympy

import fluidnet as fn
from fluidnet import AnalysisError, ModelError

t = fn.t


def test_rcp_equilibrium_is_c_over_n():
    m = fn.models.rcp()
    assert m.equilibrium() == {"R": 18750.0 / 10, "q": 0.0}
    assert m.equilibrium(N=30, C=1e4) == pytest.approx({"R": 1e4 / 30, "q": 0.0}, rel=1e-14)


def test_rcp_all_equilibria_include_the_empty_boundary_point():
    # R = 0 with q = 0 held at the boundary (q' = -C < 0): an equilibrium of the projected system
    eqs = fn.models.rcp().equilibrium(all=True)
    assert eqs == [{"R": 1875.0, "q": 0.0}, {"R": 0.0, "q": 0.0}]


def test_guess_selects_the_nearest():
    assert fn.models.rcp().equilibrium(guess={"R": 1.0, "q": 0.0}) == {"R": 0.0, "q": 0.0}


def _marked_queue(**kw):
    # x' = k (w - x p), b' = x - c, p = 1 - exp(-g b): not rational -> numeric path
    x, b = fn.states("x b")
    k, w, c, g = fn.params("k w c g")
    return fn.Model(
        rhs={x: k * (w - x(t) * (1 - sympy.exp(-g * b(t - 0.1)))), b: x(t - 0.2) - c},
        params={k: 1.0, w: 20.0, c: 1000.0, g: 0.006, **kw},
        nonnegative=[b],
    )


def test_numeric_equilibrium_matches_closed_form():
    m = _marked_queue()
    eq = m.equilibrium()
    # closed form: x* = c, p* = w/c, b* = -ln(1 - w/c)/g
    assert eq["x"] == pytest.approx(1000.0, rel=1e-10)
    assert eq["b"] == pytest.approx(-math.log(1 - 20 / 1000) / 0.006, rel=1e-10)


def test_boundary_only_equilibrium():
    # demand w below capacity c: the queue rests at 0 with b' = w - c < 0
    x, b = fn.states("x b")
    k, w, c = fn.params("k w c")
    m = fn.Model({x: k * (w - x(t)), b: x(t) - c}, {k: 1.0, w: 5.0, c: 8.0}, nonnegative=[b])
    assert m.equilibrium() == {"x": 5.0, "b": 0.0}
    with pytest.raises(AnalysisError, match="no equilibrium"):
        m.equilibrium(w=9.0)  # demand above capacity: the queue grows for ever


def test_no_equilibrium_numeric_path():
    x = fn.states("x")
    m = fn.Model({x: 1 + sympy.exp(-x(t))}, {})
    with pytest.raises(AnalysisError, match="no equilibrium"):
        m.equilibrium()


def test_time_varying_model_has_no_equilibrium():
    x = fn.states("x")
    m = fn.Model({x: -x(t) + sympy.sin(t)}, {})
    with pytest.raises(ModelError, match="depends explicitly on t"):
        m.equilibrium()


def test_guess_with_unknown_state():
    with pytest.raises(ModelError, match="unknown states"):
        fn.models.rcp().equilibrium(guess={"rate": 1.0})


def test_several_interior_equilibria_sorted_by_guess():
    x = fn.states("x")
    m = fn.Model({x: (x(t) - 1) * (x(t) - 3) * (x(t) + 2)}, {})
    assert sorted(e["x"] for e in m.equilibrium(all=True)) == [-2.0, 1.0, 3.0]
    assert m.equilibrium(guess={"x": 2.9}) == {"x": 3.0}


def test_nonnegative_equilibria_come_first():
    x = fn.states("x")
    m = fn.Model({x: 4 - x(t) ** 2}, {})
    assert m.equilibrium() == {"x": 2.0}
    assert [e["x"] for e in m.equilibrium(all=True)] == [2.0, -2.0]


def test_singular_closed_form_falls_back_to_numeric_search():
    # closed forms x = (-1 +- sqrt(1 + 4a)) / (2a) are 0/0 and -2/0 at a = 0, where x* = 1
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a * x(t) ** 2 + x(t) - 1}, {a: 0.0})
    assert m.equilibrium() == pytest.approx({"x": 1.0}, rel=1e-12)
    assert m.equilibrium(a=2.0) == pytest.approx({"x": 0.5}, rel=1e-12)
