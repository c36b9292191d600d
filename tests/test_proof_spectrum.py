"""Root bounds, axis exclusion and root counts (fluidnet.proof.spectrum, .problem) against
closed forms: ordinary differential equations with known eigenvalues, and the Hayes equation."""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import pytest

import fluidnet as fn
from fluidnet.proof.arbcode import NotProved
from fluidnet.proof.exact import ball, fixed_interval
from fluidnet.proof.problem import ModelRecord, Problem
from fluidnet.proof.spectrum import (
    Characteristic,
    count_radius,
    count_roots,
    exclude_axis,
    radius_holds,
    spectral_bound,
    tree_pieces,
)


def linear_ode(matrix) -> fn.Model:
    """x' = A x, with A's entries as parameters a_ij."""
    n = len(matrix)
    xs = fn.states(" ".join(f"x{i}" for i in range(n)))
    xs = xs if isinstance(xs, tuple) else (xs,)
    ps = {}
    rhs = {}
    for i in range(n):
        terms = 0
        for j in range(n):
            p = fn.params(f"a{i}{j}")
            ps[p] = float(matrix[i][j])
            terms += p * xs[j](fn.t)
        rhs[xs[i]] = terms
    return fn.Model(rhs=rhs, params=ps)


def linearization_at(model: fn.Model):
    rec = ModelRecord.from_model(model)
    problem = Problem(rec)
    P = [ball(fixed_interval(p, model.values[p])) for p in rec.params]
    X = [ball((Fraction(0), Fraction(0)))] * problem.n
    entries, delays = problem.linearization(X + P)
    return problem, entries, delays


@pytest.mark.parametrize(
    ("matrix", "unstable"),
    [
        ([[1, -2], [2, 1]], 2),  # 1 +- 2i
        ([[-1, -2], [2, -1]], 0),  # -1 +- 2i
        ([[2, 0, 0], [0, -1, 3], [0, -3, -1]], 1),  # 2, -1 +- 3i
        ([[0.5, 4, 0], [-4, 0.5, 0], [0, 0, 3]], 3),  # 0.5 +- 4i, 3
        ([[-1, 1, 0, 0], [0, -1, 1, 0], [0, 0, -1, 1], [-64, 0, 0, -1]], 2),  # 1 +- 2i, -3 +- 2i
    ],
)
def test_counts_of_ordinary_equations_match_their_eigenvalues(matrix, unstable):
    problem, entries, delays = linearization_at(linear_ode(matrix))
    rho = spectral_bound(problem, entries)
    R = count_radius(problem.n, rho)
    radius_holds(problem.n, rho, R)
    count, tree = count_roots(Characteristic(problem, entries, delays), problem.n, R)
    assert count == unstable
    # the stored tree re-counts the same
    assert count_roots(Characteristic(problem, entries, delays), problem.n, R, tree)[0] == count


def hayes(a: float, b: float) -> fn.Model:
    x = fn.states("x")
    pa, pb = fn.params("a b")
    return fn.Model(rhs={x: pa * x(fn.t) + pb * x(fn.t - 1)}, params={pa: a, pb: b})


@pytest.mark.parametrize(
    ("a", "b", "unstable"),
    [(-1.0, 0.5, 0), (0.5, 0.1, 1), (0.0, -2.0, 2), (0.0, -9.0, 4), (0.9, -0.95, 0)],
)
def test_counts_of_the_hayes_equation(a, b, unstable):
    """Counts from Hayes' D-subdivision: at a = 0 the Hopf curves cross b = -(2k + 1/2) pi."""
    problem, entries, delays = linearization_at(hayes(a, b))
    rho = spectral_bound(problem, entries)
    assert float(rho.upper()) == pytest.approx(abs(a) + abs(b), rel=1e-6)  # M = |a| + |b|
    char = Characteristic(problem, entries, delays)
    R = count_radius(1, rho)
    assert count_roots(char, 1, R)[0] == unstable
    tree = exclude_axis(char, Fraction(math.ceil(float(rho.upper()) * 1000 + 1), 1000))
    assert tree_pieces(tree, Fraction(0), Fraction(1))  # a complete tree


def test_the_root_bound_holds_for_roots_found_by_a_second_method():
    m = fn.models.rcp()
    problem, entries, delays = linearization_at(m)  # X = 0 is not the equilibrium: redo
    rec = ModelRecord.from_model(m)
    eq = m.equilibrium()
    X = [ball(fixed_interval(s, eq[s])) for s in rec.states]
    P = [ball(fixed_interval(p, m.values[p])) for p in rec.params]
    entries, delays = problem.linearization(X + P)
    rho = float(spectral_bound(problem, entries).upper())
    for alpha, beta in ((0.4, 0.2), (1.4, 0.8), (0.1, 1.0)):
        roots = m.linearize(alpha=alpha, beta=beta).roots(region=-1.0)
        big = [abs(r.value) for r in roots if r.value.real >= 0]
        P[0], P[1] = ball(fixed_interval("a", alpha)), ball(fixed_interval("b", beta))
        rho = float(spectral_bound(problem, problem.linearization(X + P)[0]).upper())
        assert all(v <= rho for v in big)


def test_a_root_on_the_axis_is_not_excluded():
    # x' = -(pi/2) x(t - 1): roots +- i pi/2 on the axis
    problem, entries, delays = linearization_at(hayes(0.0, -math.pi / 2))
    with pytest.raises(NotProved, match="not proved nonzero near omega = 1.57"):
        exclude_axis(Characteristic(problem, entries, delays), Fraction(2))
    with pytest.raises(NotProved):
        radius_holds(2, flint.arb(3), Fraction(2))
