"""Equilibria enclosed over parameter boxes (fluidnet.proof.krawczyk) against closed forms and an
independent steady-state computation."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import fluidnet as fn
from fluidnet.models.reno import reno_red_steady_state
from fluidnet.proof.arbcode import NotProved
from fluidnet.proof.exact import ball, fixed_interval
from fluidnet.proof.krawczyk import enclose_equilibrium, krawczyk_holds
from fluidnet.proof.problem import ModelRecord, Problem


def balls(model, box: dict) -> tuple[Problem, list]:
    rec = ModelRecord.from_model(model)
    P = [
        ball(tuple(Fraction(v) for v in box[p])) if p in box
        else ball(fixed_interval(p, model.values[p]))
        for p in rec.params
    ]  # fmt: skip
    return Problem(rec), P


def test_both_equilibria_of_a_quadratic_law_are_enclosed_each_uniquely():
    x = fn.states("x")
    p = fn.params("p")
    m = fn.Model(rhs={x: p - x(fn.t) ** 2}, params={p: 1.5})
    problem, P = balls(m, {"p": ("1.4", "1.6")})
    for sign in (1, -1):
        X = enclose_equilibrium(problem, P, [sign * math.sqrt(1.5)])
        (lo, hi) = X[0]
        for v in (1.4, 1.5, 1.6):  # x* = +-sqrt(p) for every p of the box
            assert lo <= sign * math.sqrt(v) <= hi
        assert not lo <= -sign * math.sqrt(1.5) <= hi
    # a box holding both equilibria fails the test (no unique zero in it)
    with pytest.raises(NotProved, match="Krawczyk"):
        krawczyk_holds(problem, [(Fraction(-1), Fraction(2))], P)


def test_the_red_steady_state_is_enclosed_over_a_range_of_delays():
    """Reno+RED (Zimmermann Ch. 6): the fixed point p = 2/(2 + W^2), found by bracketing."""
    m = fn.models.reno_red(N=30, c=10000)
    problem, P = balls(m, {"d": ("0.06", "0.062")})
    eq = m.equilibrium(d=0.061)
    X = enclose_equilibrium(problem, P, [eq[s] for s in m.state_names])
    for d in (0.06, 0.061, 0.062):
        ss = reno_red_steady_state(30, 10000, d)
        for (lo, hi), v in zip(X, (ss["W"], ss["b"], ss["b"]), strict=True):
            assert lo <= v <= hi
    # tight: W* = c RTT*/N varies by about 0.67 packets over the box
    spread = (
        reno_red_steady_state(30, 10000, 0.062)["W"] - reno_red_steady_state(30, 10000, 0.06)["W"]
    )
    assert spread < float(X[0][1] - X[0][0]) < 1.5 * spread


def test_a_singular_steady_state_is_refused():
    x, y = fn.states("x y")
    m = fn.Model(rhs={x: -x(fn.t) + y(fn.t), y: x(fn.t) - y(fn.t)})  # x = y: a line of rest
    problem, P = balls(m, {})
    with pytest.raises(NotProved, match="singular"):
        enclose_equilibrium(problem, P, [0.0, 0.0])
