"""Equilibria: symbolic, numeric, on the boundary of projected states, and the failure cases."""

import math
import warnings

import numpy as np
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


def test_numeric_equilibrium_with_tiny_terms_is_polished_to_its_own_scale():
    # every term is about 1e-12: a residual test against max(1, term) would accept any point
    # the root finder stops at; x* = 2, y* = 3 exactly
    x, y = fn.states("x y")
    k = fn.params("k")
    m = fn.Model({x: k * (2 - x(t)) * sympy.exp(y(t) - 3), y: k * (x(t) * y(t) - 6)}, {k: 1e-12})
    eq = m.equilibrium()
    assert eq == pytest.approx({"x": 2.0, "y": 3.0}, rel=1e-14)
    assert eq.residual <= 1e-14


def test_switching_surface_named_when_no_smooth_equilibrium():
    # x' = 1 - 3 H(x - 1): +1 below 1, -2 above, so x slides on x = 1; no smooth equilibrium
    x = fn.states("x")
    m = fn.Model({x: 1 - 3 * sympy.Heaviside(x(t) - 1)}, {})
    with pytest.raises(AnalysisError, match=r"no isolated smooth equilibrium.*x - 1 = 0"):
        m.equilibrium()


def test_guess_ranks_by_scaled_distance_and_nonnegative_first():
    # x (bytes, ~1e6) and w (packets, ~10); x* = 1e6 + a(w) with a(10) = 200, a(200) = a(-10) = 0:
    # equilibria A = (1e6 + 200, 10), B = (1e6, 200), C = (1e6, -10). From the guess (1e6, 10),
    # the unscaled distances are 200, 190, 20 (C, B, A: wrong); per-state relative distances
    # are 2e-4, 19, 2, and C has a negative window: A, B, C.
    x, w = fn.states("x w")
    a = 200 * (w(t) - 200) * (w(t) + 10) / ((10 - 200) * (10 + 10))
    m = fn.Model({x: 1e6 + a - x(t), w: (w(t) - 10) * (w(t) - 200) * (w(t) + 10)}, {})
    eqs = m.equilibrium(guess={"x": 1e6, "w": 10.0}, all=True)
    expected = [{"x": 1e6 + 200, "w": 10.0}, {"x": 1e6, "w": 200.0}, {"x": 1e6, "w": -10.0}]
    assert len(eqs) == 3
    for e, want in zip(eqs, expected, strict=True):
        assert e == pytest.approx(want, rel=1e-12)
    assert m.equilibrium(guess={"x": 1e6, "w": 10.0}) == pytest.approx(expected[0], rel=1e-12)


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
    with pytest.warns(fn.EquilibriumWarning, match=r"x=2 \(returned\); x=-2.*no negative state"):
        assert m.equilibrium() == {"x": 2.0}
    assert [e["x"] for e in m.equilibrium(all=True)] == [2.0, -2.0]


def test_singular_closed_form_falls_back_to_numeric_search():
    # closed forms x = (-1 +- sqrt(1 + 4a)) / (2a) are 0/0 and -2/0 at a = 0, where x* = 1
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a * x(t) ** 2 + x(t) - 1}, {a: 0.0})
    assert m.equilibrium() == pytest.approx({"x": 1.0}, rel=1e-12)
    with pytest.warns(fn.EquilibriumWarning, match=r"x=0.5 \(returned\); x=-1"):
        assert m.equilibrium(a=2.0) == pytest.approx({"x": 0.5}, rel=1e-12)


def test_closed_form_equilibria_are_polished_to_rounding():
    # x' = x^2 - b x + c, b = 1e8, c = 1: the closed form (b - sqrt(b^2 - 4c))/2 of the small
    # root cancels catastrophically (it evaluates to 7.45e-9 and the root was dropped); the
    # stable form 2c/(b + sqrt(b^2 - 4c)) is the reference
    x = fn.states("x")
    b, c = fn.params("b c")
    m = fn.Model({x: x(fn.t) ** 2 - b * x(fn.t) + c}, {b: 1e8, c: 1.0})
    eqs = m.equilibrium(all=True)
    small = 2.0 / (1e8 + math.sqrt(1e16 - 4.0))
    assert sorted(e["x"] for e in eqs) == [
        pytest.approx(small, rel=1e-15),
        pytest.approx(1e8 - small, rel=1e-15),
    ]
    assert all(e.residual <= 1e-15 for e in eqs)


def test_residual_and_boundary_are_reported():
    eq = fn.models.rcp().equilibrium()
    assert eq == {"R": 1875.0, "q": 0.0} and eq.residual <= 1e-15 and eq.boundary == ()
    assert eq.isolated


def test_undefined_right_hand_side_is_not_an_equilibrium():
    # (x^2 - x)/x: sympy cancels it to x - 1 once x(t) is set equal to itself, and x = 0 (where
    # the right-hand side is 0/0) was returned as an equilibrium held at 0 by the projection
    x = fn.states("x")
    m = fn.Model({x: (x(fn.t) ** 2 - x(fn.t)) / x(fn.t)}, {}, nonnegative=[x])
    assert m.equilibrium(all=True) == [{"x": 1.0}]


def test_a_continuum_of_equilibria_is_not_a_list_of_points():
    # x' = y - x, y' = x - y: every x = y is an equilibrium (x + y is conserved)
    x, y = fn.states("x y")
    m = fn.Model({x: y(fn.t) - x(fn.t), y: x(fn.t) - y(fn.t)}, {})
    with pytest.raises(
        AnalysisError, match=r"not isolated.*direction \(x: [+-]0.707, y: [+-]0.707"
    ):
        m.equilibrium(all=True)
    # a delayed ratio: x' = x(t - 1)/x(t) - 1 holds for every x > 0
    m2 = fn.Model({x: x(fn.t - 1) / x(fn.t) - 1}, {})
    with pytest.raises(AnalysisError, match="not isolated"):
        m2.equilibrium(all=True)
    # nor is one point of it returned as if it were isolated (issue 23: its linearization has
    # a zero root that says nothing about stability), by equilibrium() nor by linearize()
    with pytest.warns(
        fn.EquilibriumWarning, match=r"not isolated.*zero root, whose left null vector is x \+ y"
    ) as record:
        eq = m.equilibrium()
    assert len(record) == 1  # its other points found are not listed as further equilibria
    assert not eq.isolated and eq["x"] == pytest.approx(eq["y"], rel=1e-14)
    with pytest.warns(fn.EquilibriumWarning, match="not isolated"):
        m.linearize()
    # a point of it chosen by the caller is linearized quietly: x + y conserved, the zero root
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        roots = m.linearize(equilibrium={"x": 1.0, "y": 1.0}).roots(k=2).values
    assert sorted(roots.real) == pytest.approx([-2.0, 0.0], abs=1e-12)


def test_a_multiple_isolated_equilibrium_is_isolated():
    # x' = -x^3: a triple root at 0, isolated although the Jacobian vanishes there
    x = fn.states("x")
    m = fn.Model({x: -(x(fn.t) ** 3)}, {})
    eqs = m.equilibrium(all=True)
    assert eqs == [{"x": 0.0}] and eqs[0].isolated


def test_linearize_refuses_a_point_that_is_not_an_equilibrium():
    m = fn.models.rcp()
    with pytest.raises(AnalysisError, match=r"not an equilibrium.*dq/dt|not an equilibrium.*dR/dt"):
        m.linearize(equilibrium={"R": 1800.0, "q": 0.0})
    with pytest.raises(AnalysisError, match="projected state 'q' = -1 is negative"):
        m.linearize(equilibrium={"R": 1875.0, "q": -1.0})
    x = fn.states("x")
    m1 = fn.Model({x: (x(fn.t) ** 2 - x(fn.t)) / x(fn.t)}, {})
    with pytest.raises(AnalysisError, match="undefined|not differentiable"):
        m1.linearize(equilibrium={"x": 0.0})
    # the equilibrium itself, and one rounded to 1e-9, are accepted
    assert m.linearize(equilibrium={"R": 1875.0 * (1 + 1e-9), "q": 0.0}).n == 2


def test_a_given_equilibrium_is_checked_without_the_search_plan():
    # Kelly's primal law on one link (Zimmermann 2005, (3.2.16)): x' = k (w - x(t-T) (x/c)^B),
    # equilibrium x = (w c^B)^(1/(B+1)) = 8^(1/4) for w = 1, c = 2, B = 3
    m = fn.models.kelly_primal([[1]], w=1.0, kappa=0.5, c=2.0, B=3.0, T=0.1)
    x = 8.0**0.25
    m.linearize(equilibrium={"x_1": x})
    # a clean steady state is confirmed from the right-hand sides alone: the plan of the
    # equilibrium search (expanded equations, dense Jacobian) is not built
    assert "equilibrium plan" not in m._cache
    # a point that is not one is still refused, with the residual of the steady-state equation
    # x' = 0.5 (1 - 1.1 (1.1/2)^3) = 0.40849375
    with pytest.raises(AnalysisError, match=r"not an equilibrium.*dx_1/dt = 0\.408494 "):
        m.linearize(equilibrium={"x_1": 1.1})
    # 0.1 % off: x' = 0.5 (1 - 1.001^4) = -2.003e-3
    with pytest.raises(AnalysisError, match=r"not an equilibrium.*dx_1/dt = -0\.002003"):
        m.linearize(equilibrium={"x_1": x * (1 + 1e-3)})


def test_high_degree_steady_state_is_solved_numerically():
    """Kelly's law with the price (x/c)^10: x^11 = w c^10, so x = (w c^10)^(1/11). The degree-11
    polynomial has no useful closed form (sympy spent 25 s verifying its complex roots): the
    numeric search answers."""
    from fluidnet.symbolic.equilibrium import symbolic_equilibria

    x = fn.states("x")
    kappa, w, c, T = fn.params("kappa w c T")
    m = fn.Model(
        rhs={x: kappa * (w - x(t) * (x(t - T) / c) ** 10)},
        params={kappa: 0.2, w: 3.0, c: 1.5, T: 1.0},
    )
    assert symbolic_equilibria(m) is None
    assert m.equilibrium()["x"] == pytest.approx((3.0 * 1.5**10) ** (1 / 11), rel=1e-12)
    low = fn.Model(rhs={x: kappa * (w - x(t) * x(t - T) ** 3)}, params={kappa: 0.2, w: 8.0, T: 1})
    sols = symbolic_equilibria(low)  # degree 4: still in closed form, w symbolic
    roots = [complex(sol["x"].subs(w, 8)) for sol in sols]
    assert any(abs(r - 8.0 ** (1 / 4)) < 1e-12 for r in roots)
    with pytest.warns(fn.EquilibriumWarning, match="no negative state first"):
        assert low.equilibrium()["x"] == pytest.approx(8.0 ** (1 / 4), rel=1e-12)


# ---------------------------------------------------------------- issue 23: items 4, 7, 9
def test_several_equilibria_are_listed_not_chosen_silently():
    # z' = z^2 - 1: the unstable z = 1 was returned and nothing said that z = -1 exists
    z = fn.states("z")
    m = fn.Model({z: z(t) ** 2 - 1}, {}, name="two roots")
    with pytest.warns(fn.EquilibriumWarning) as record:
        assert m.equilibrium() == {"z": 1.0}
    message = str(record[0].message)
    assert "2 equilibria" in message and "z=1 (returned); z=-1" in message
    assert "guess=" in message and "all=True" in message
    # the caller's choice is quiet
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.equilibrium(guess={"z": -0.8}) == {"z": -1.0}
        assert [e["z"] for e in m.equilibrium(all=True)] == [1.0, -1.0]
        assert m.linearize(equilibrium={"z": -1.0}).A0.tolist() == [[-2.0]]
    # an equilibrium held at the boundary by the projection does not compete with f = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn.models.rcp().equilibrium() == {"R": 1875.0, "q": 0.0}


def test_equilibria_tied_by_the_order_are_listed():
    x = fn.states("x")
    m = fn.Model({x: (x(t) - 1) * (x(t) - 3) * (x(t) + 2)}, {})
    with pytest.warns(fn.EquilibriumWarning, match=r"3 equilibria.*x=-2.*the order they were"):
        m.equilibrium()


def _chain(n: int, a=0.5):
    """x_0' = 1 - x_0, x_i' = -x_i + a x_{i-1}(t - 1): the equilibrium is x_i = a^i."""
    xs = [sympy.Function(f"x_{i}", real=True) for i in range(n)]
    rhs = {xs[0]: 1 - xs[0](t)}
    for i in range(1, n):
        rhs[xs[i]] = -xs[i](t) + a * xs[i - 1](t - 1)
    return fn.Model(rhs=rhs, params={}, name="chain")


def test_a_small_model_whose_states_span_117_decades_is_solved():
    # 40 states (the dense search): x_39 = 1e-117; the root finder's point is right to about
    # 1e-16 absolute, and the scaled polish recovers every state to its own precision
    eq = _chain(40, 1e-3).equilibrium()
    x = np.array([eq[f"x_{i}"] for i in range(40)])
    np.testing.assert_allclose(x, 1e-3 ** np.arange(40), rtol=1e-14, atol=0)
    assert eq.residual <= 1e-15


def test_an_equilibrium_falling_geometrically_to_1e_minus_90_is_found():
    # 300 states, x_299 = 2^-299 = 1.6e-90: "no isolated smooth equilibrium" (issue 23, item 7)
    eq = _chain(300).equilibrium()
    x = np.array([eq[f"x_{i}"] for i in range(300)])
    np.testing.assert_allclose(x, 0.5 ** np.arange(300), rtol=1e-14, atol=0)
    assert eq.isolated and eq.residual <= 1e-15


def _kelly_ring(n: int):
    A = np.zeros((n, n), dtype=int)
    for i in range(n):
        A[i, i] = A[(i + 1) % n, i] = 1
    return fn.models.kelly_primal(
        A, w=1.0, kappa=0.5, c=2.0, B=4.0, T=list(np.linspace(0.05, 0.15, n))
    )


def test_a_large_network_is_solved_sparsely():
    """Kelly's primal law on a ring of 60 flows and links (Zimmermann (3.2.16)): flow i uses
    links i and i + 1, each priced (load / c)^B, so 2 x (2 x / c)^B = w: x = (1/2)^(1/5) for
    w = 1, c = 2, B = 4. Sixty states are solved by the sparse Newton iteration, without the
    dense Jacobian whose million symbolic derivatives made a 1000-flow network take minutes."""
    from fluidnet.symbolic.equilibrium import _plan

    m = _kelly_ring(60)
    eq = m.equilibrium()
    assert list(eq.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
    assert eq.isolated and eq.residual <= 1e-15
    plan = _plan(m)
    assert plan.large and "jac" not in plan.__dict__  # the dense Jacobian was never built
    # a guess elsewhere finds the same point; a point that is not one is still refused
    assert m.equilibrium(guess={"x_1": 5.0}) == pytest.approx(eq, rel=1e-14)
    with pytest.raises(AnalysisError, match="not an equilibrium"):
        m.linearize(equilibrium={k: 1.0 for k in eq})


def test_a_large_models_batch_over_gains_builds_no_dense_code(monkeypatch):
    """Equilibria of the 60-flow ring at many gains (which do not move them): one full search
    settles every point, and the dense steady code the continuation would need (0.28 s of
    sympy for a 100-state network) is not built; a plane over a price w_1 (which moves them)
    builds it once. The values: x = (1/2)^(1/5) at every gain (Zimmermann (3.2.16))."""
    import fluidnet.symbolic.steadycode as sc
    from fluidnet.symbolic.linearize import equilibria_batch

    built = []
    original = sc.steady_code
    monkeypatch.setattr(sc, "steady_code", lambda model: built.append(1) or original(model))
    m = _kelly_ring(60)
    X, ok = equilibria_batch(m, {"kappa_1": np.array([0.3, 0.9, 1.5]), "kappa_2": 2.0})
    assert ok.all() and not built
    assert X == pytest.approx(np.full((3, 60), 0.5**0.2), rel=1e-14)
    X, ok = equilibria_batch(m, {"w_1": np.array([0.9, 1.0, 1.1])})
    assert ok.all() and built == [1]
    assert X[1] == pytest.approx(np.full(60, 0.5**0.2), rel=1e-14)


def test_a_large_model_recalls_its_search_at_values_it_solved(monkeypatch, tmp_path):
    """The 60-flow ring again at the same values: the search's points are checked again instead
    of searching (a critical value's anchor, a repeated analysis; 220 ms a call at 100 states),
    and the answer is the closed form, as a new model's full search gives it."""
    from fluidnet.symbolic import newton

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs

    m = _kelly_ring(60)
    first = m.equilibrium(kappa_1=0.7)
    runs = []
    solve = newton.SparseSteadyState.solve
    monkeypatch.setattr(
        newton.SparseSteadyState,
        "solve",
        lambda self, *a, **k: runs.append(1) or solve(self, *a, **k),
    )
    again = m.equilibrium(kappa_1=0.7)
    assert not runs  # recalled, not searched
    assert list(again.values()) == list(first.values())
    assert list(again.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
    assert again.isolated and again.residual <= 1e-15
    # another gain only multiplies rows: the same equations up to a positive factor, recalled
    gain = m.equilibrium(kappa_1=0.8)
    assert not runs and list(gain.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
    # another marking exponent moves the equilibrium to 2 x^(B + 1) = 1: searched
    other = m.equilibrium(B=5.0)
    assert runs and list(other.values()) == pytest.approx([0.5 ** (1 / 6)] * 60, rel=1e-14)


def test_the_first_equilibrium_of_a_large_model_stops_at_its_leading_start(monkeypatch, tmp_path):
    """first_equilibrium of the 60-flow ring (a critical value's branch check) stops the sparse
    search once its leading start settles an isolated point free of the boundary with no zero
    or negative state (nothing found after it ranks before it): the closed form
    x = (1/2)^(1/5), bit for bit the point a new model's full search returns first."""
    from fluidnet.symbolic import newton
    from fluidnet.symbolic.equilibrium import first_equilibrium

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs

    verdicts = []
    solve = newton.SparseSteadyState.solve

    def spied(self, *a, until=None, **k):
        def judged(*args):
            verdicts.append(bool(until(*args)))
            return verdicts[-1]

        return solve(self, *a, until=None if until is None else judged, **k)

    monkeypatch.setattr(newton.SparseSteadyState, "solve", spied)
    got = first_equilibrium(_kelly_ring(60), kappa_1=0.9)
    assert verdicts and verdicts[-1]  # stopped by the judge, before the other starts finished
    assert list(got.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
    assert got.isolated and got.boundary == ()
    full = _kelly_ring(60).equilibrium(kappa_1=0.9)
    assert list(got.values()) == list(full.values())


def test_projected_states_of_a_large_model_settle_on_their_boundary():
    """45 flows x_i' = w_i - x_i(t - 0.1)(1 + q_i) into queues q_i' = x_i - 1 (q_i >= 0): where
    w_i <= 1 the queue is held empty (q_i' = w_i - 1 < 0) and x_i = w_i, elsewhere x_i = 1 and
    q_i = w_i - 1."""
    n = 45
    w = np.where(np.arange(n) % 2 == 0, 2.0, 0.5)
    rhs, queues = {}, []
    for i in range(n):
        x, q = sympy.Function(f"x_{i}", real=True), sympy.Function(f"q_{i}", real=True)
        rhs[x] = w[i] - x(t - 0.1) * (1 + q(t))
        rhs[q] = x(t) - 1
        queues.append(q)
    eq = fn.Model(rhs=rhs, params={}, nonnegative=queues).equilibrium()
    assert [eq[f"x_{i}"] for i in range(n)] == pytest.approx(np.minimum(w, 1.0), rel=1e-14)
    assert [eq[f"q_{i}"] for i in range(n)] == pytest.approx(np.maximum(w - 1, 0.0), abs=1e-14)
    assert eq.boundary == tuple(f"q_{i}" for i in range(1, n, 2))


def test_a_search_is_kept_in_the_process_and_checked_again(monkeypatch, tmp_path):
    # an analysis that returns to parameter values solved before (critical_value after a
    # chart, a repeated call) used to run the numeric search again: only the first search of
    # a process was kept (on disk). The tandem law of tests/user_laws.py has no closed form.
    from user_laws import tandem_two_class

    import fluidnet.symbolic.equilibrium as E

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs
    m = tandem_two_class()
    calls = []
    search = E._numeric_candidates
    monkeypatch.setattr(
        E, "_numeric_candidates", lambda *a, **k: calls.append(a) or search(*a, **k)
    )
    first = [m.equilibrium(d1=d) for d in (0.37, 0.52)]
    searched = len(calls)
    assert searched >= 2
    checked = []
    admissible = E._admissible
    monkeypatch.setattr(E, "_admissible", lambda *a: checked.append(a) or admissible(*a))
    again = [m.equilibrium(d1=d) for d in (0.37, 0.52)]
    assert len(calls) == searched  # no new search
    assert len(checked) == 2  # the kept points are checked again like any candidate
    for a, b in zip(first, again, strict=True):
        assert a == b
    m.equilibrium(d1=0.61)
    assert len(calls) > searched  # other values are searched


def test_a_recalled_search_keeps_only_the_points_that_gave_equilibria(monkeypatch, tmp_path):
    # the model's record kept every point the numeric search converged to, and the next
    # process polished them all again: for the three-route Kelly law of tests/user_laws.py, 8
    # points (one per boundary configuration), 7 of them with a rate at 0 whose equation is
    # positive there (not held) -- refused again, most of a cached first equilibrium().
    # Only the point that gave the equilibrium is kept; checked again it gives the same list.
    from user_laws import kelly_three_routes

    import fluidnet.symbolic.equilibrium as E
    from fluidnet.symbolic.steadycode import record

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs
    searched = E.equilibria(kelly_three_routes(), B=8.0)
    m = kelly_three_routes()  # a new model reads the record, as a new process does
    ((_, _, points),) = record(m)["recalled"]
    assert len(points) == 1

    def no_search(*a, **k):
        raise AssertionError("searched again")

    monkeypatch.setattr(E, "_numeric_candidates", no_search)
    recalled = E.equilibria(m, B=8.0)
    assert recalled == searched
    assert [e.residual for e in recalled] == [e.residual for e in searched]
    assert [(e.boundary, e.isolated) for e in recalled] == [((), True)]
    # the law's own equations ([KMT] eq. (5) at rest): x_r q_r = w_r = 1, q_r the sum of the
    # prices exp(B (y_l / C_l - 1)) / 100 of its links (C_l = 10)
    x = np.array([recalled[0][f"x{r}"] for r in range(3)])
    y = np.array([x[0] + x[1], x[0] + x[2]])
    price = np.exp(8.0 * (y / 10.0 - 1.0)) / 100.0
    q = np.array([price[0] + price[1], price[0], price[1]])
    np.testing.assert_allclose(x * q, 1.0, rtol=1e-12)


def _assert_hundred_state_equilibrium(eq) -> None:
    """The 100-state network's own equations at ``eq`` (tests/user_laws.py, C = 10, marking
    (u/10)^4): each flow's rate is w_r over the sum of its links' prices, each load filter u_l
    its link's load."""
    x = np.array([eq[f"x{r}"] for r in range(90)])
    u = np.array([eq[f"u{link}"] for link in range(10)])
    routes = [tuple((r + j) % 10 for j in range(1 + r % 3)) for r in range(90)]
    load = np.array([sum(x[r] for r in range(90) if link in routes[r]) for link in range(10)])
    np.testing.assert_allclose(u, load, rtol=1e-9)
    price = (u / 10.0) ** 4
    w = np.array([1.0 + ((3 * r) % 7) / 7 for r in range(90)])
    np.testing.assert_allclose(x * np.array([price[list(rt)].sum() for rt in routes]), w, rtol=1e-9)


def test_hundred_state_network_equilibrium_without_numpy_warnings():
    # the sparse Newton search of a 100-state network (tests/user_laws.py) printed numpy's
    # "overflow encountered in dot" about thirty times: a trial step whose residual norm is
    # beyond the doubles is simply no decrease. Second method for the point: every flow's
    # rate equals w_r / (sum of its links' prices), the link filters their loads.
    from user_laws import kelly_hundred

    m = kelly_hundred()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        eq = m.equilibrium()
    _assert_hundred_state_equilibrium(eq)


def test_a_large_models_search_is_recalled_by_the_next_process(monkeypatch, tmp_path):
    # a large model's (sparse) search was kept in this process only: every new process searched
    # the 100-state network again (0.55-0.6 s of its 0.6 s cached first equilibrium). Its record
    # now keeps the points that gave the equilibrium, as a small model's does.
    from user_laws import kelly_hundred

    import fluidnet.symbolic.equilibrium as E
    from fluidnet.symbolic.steadycode import record

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing recalled from earlier runs
    searched = kelly_hundred().equilibrium(kappa=0.2)
    m = kelly_hundred()  # a new model reads the record, as a new process does
    assert E._plan(m).large
    ((_, _, points),) = record(m)["recalled"]
    assert len(points) == 1 and len(points[0]) == 100

    def no_search(*a, **k):
        raise AssertionError("searched again")

    monkeypatch.setattr(E, "_numeric_candidates", no_search)
    recalled = m.equilibrium(kappa=0.2)
    assert recalled == searched and recalled.residual == searched.residual
    _assert_hundred_state_equilibrium(recalled)
    # another capacity moves the equilibrium: searched
    with pytest.raises(AssertionError, match="searched again"):
        m.equilibrium(kappa=0.2, C=11.0)


def test_the_sparse_search_builds_the_matrix_scipy_builds_from_coordinates():
    # the compressed-column layout kept per set of held states gives, entry for entry, the
    # matrix scipy's conversion from coordinates gives (the same factors, so the same steps);
    # a pattern with two entries at one place is left to the conversion (which sums them)
    from scipy import sparse
    from user_laws import kelly_hundred

    from fluidnet.symbolic.equilibrium import _plan

    m = kelly_hundred()
    steady = _plan(m).sparse
    p = np.array([m.params[k].value for k in m.param_names], dtype=float)
    rng = np.random.default_rng(7)
    for t in range(6):
        x = rng.uniform(0.1, 5.0, steady.n)
        E = steady._real(steady.evaluate(x, p))[steady.n :]
        held = np.zeros(steady.n, dtype=bool)
        held[rng.choice(steady.n, 3 * (t % 3), replace=False)] = True
        scale = rng.uniform(0.5, 2.0, steady.n)
        got = steady._system(E, held, scale)
        keep = ~held[steady.rows]
        h = np.flatnonzero(held)
        rows = np.concatenate([steady.rows[keep], h])
        cols = np.concatenate([steady.cols[keep], h])
        vals = np.concatenate([E[keep] / scale[steady.rows[keep]], np.ones(h.size)])
        want = sparse.csc_matrix((vals, (rows, cols)), shape=(steady.n, steady.n))
        assert np.array_equal(got.indptr, want.indptr)
        assert np.array_equal(got.indices, want.indices)
        assert np.array_equal(got.data, want.data)
        # the dense path's matrix (up to 400 states): the same entries
        assert np.array_equal(steady._dense_system(E, held, scale), want.toarray())
    # a pattern with an entry twice (rows 0, 1, 0; columns 2, 1, 2): the conversion sums them
    from fluidnet.symbolic.newton import SparseSteadyState

    twice = object.__new__(SparseSteadyState)
    twice.n, twice._layouts = 3, {}
    twice.rows, twice.cols = np.array([0, 1, 0]), np.array([2, 1, 2])
    free = np.zeros(3, dtype=bool)
    assert twice._layout(free, np.ones(3, dtype=bool), np.zeros(0, dtype=np.intp)) is None
    summed = twice._system(np.array([1.0, 2.0, 3.0]), free, np.ones(3))
    assert summed.toarray()[0, 2] == 4.0 and summed.toarray()[1, 1] == 2.0


def test_a_large_models_dense_and_sparse_paths_agree(monkeypatch, tmp_path):
    """Up to 400 states the large search's Newton steps and isolation test are dense (NumPy's
    LAPACK), beyond it sparse (SciPy's LU): the 60-flow ring solved both ways gives the closed
    form x = (1/2)^(1/5) (Zimmermann (3.2.16)) to 1e-14, isolated (the dense active system is
    checked against SciPy's in the test above); a Jacobian that is exactly singular is refused
    by both paths."""
    import fluidnet.symbolic.newton as newton

    built = []
    for name in ("_system", "_dense_system"):
        real = getattr(newton.SparseSteadyState, name)

        def spy(self, *args, real=real, name=name):
            built.append(name)
            return real(self, *args)

        monkeypatch.setattr(newton.SparseSteadyState, name, spy)
    for limit, used in ((newton.DENSE_STATES, "_dense_system"), (0, "_system")):
        monkeypatch.setattr(newton, "DENSE_STATES", limit)
        monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / used))  # searched from the starts
        built.clear()
        eq = _kelly_ring(60).equilibrium()
        assert built and set(built) == {used}
        assert list(eq.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
        assert eq.isolated and eq.residual <= 1e-15
    monkeypatch.undo()
    # x_0 + x_1 = 2 twice over (2 x_0 + 2 x_1 = 4) and x_i = 1 for the 43 others: singular
    xs = sympy.symbols("x0:45")
    eqs = [xs[0] + xs[1] - 2, 2 * xs[0] + 2 * xs[1] - 4] + [xi - 1 for xi in xs[2:]]
    singular = newton.SparseSteadyState(eqs, xs, ())
    for limit in (newton.DENSE_STATES, 0):
        monkeypatch.setattr(newton, "DENSE_STATES", limit)
        assert not singular.well_conditioned(np.ones(45), np.zeros(0), range(45))
        assert singular.well_conditioned(np.ones(45), np.zeros(0), range(1, 45))


def test_a_large_models_code_is_kept_in_its_record(monkeypatch, tmp_path):
    """A large model's equations, differentiated and printed once (0.1 s of the 100-state
    network's first equilibrium in every process), are kept in its record: a new model of the
    same law (a later process) reads them without differentiating, and finds the 60-flow
    ring's closed form x = (1/2)^(1/5) again. The generated values and Jacobian entries are
    sympy's own (lambdify of the equations and of their derivatives) to 1e-13 at random
    points."""
    import fluidnet.symbolic.jacobians as jacobians
    from fluidnet.symbolic.equilibrium import _plan

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))
    m = _kelly_ring(60)
    eq = m.equilibrium()
    first = _plan(m).sparse_form
    assert first.source is not None

    def no_derivatives(*args, **kwargs):
        raise AssertionError("the equations were differentiated again")

    monkeypatch.setattr(jacobians, "forward_jacobian", no_derivatives)
    later = _kelly_ring(60)
    again = later.equilibrium()
    assert list(again.values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
    assert again == pytest.approx(eq, rel=1e-15)
    monkeypatch.undo()
    steady = _plan(later).sparse_form
    assert steady.source == first.source
    form = later.form
    rep = {lag.symbol: form.x[lag.state] for lag in form.lags}
    eqs = [e.xreplace(rep) for e in form.rhs]
    f = sympy.lambdify([form.x, form.p], eqs, "numpy")
    rows = [0, 17, 59]  # three rows of the Jacobian (all 60 cost sympy seconds)
    derivatives = [[sympy.diff(eqs[i], xj) for xj in form.x] for i in rows]
    jac = sympy.lambdify([form.x, form.p], derivatives, "numpy")
    p = np.array([later.params[k].value for k in later.param_names], dtype=float)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.uniform(0.2, 3.0, 60)
        want_f, want_j = np.array(f(x, p), dtype=float), np.array(jac(x, p), dtype=float)
        np.testing.assert_allclose(steady.f(x, p), want_f, rtol=1e-13, atol=1e-13)
        got_j = steady.dense_jacobian(x, p)[rows]
        np.testing.assert_allclose(got_j, want_j, rtol=1e-13, atol=1e-13)
        X = rng.uniform(0.2, 3.0, (4, 60))
        got = steady.evaluate.batch(X.T, p)
        for k in range(4):
            np.testing.assert_allclose(got[k, :60], np.array(f(X[k], p)), rtol=1e-13, atol=1e-13)


def test_a_stale_kept_code_is_built_again(monkeypatch, tmp_path):
    """A record whose large code does not load (not Python, or another number of states) is
    built again and kept in its place: the 60-flow ring's closed form x = (1/2)^(1/5)."""
    from fluidnet.symbolic.equilibrium import _plan
    from fluidnet.symbolic.steadycode import keep, record

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))
    good = _plan(_kelly_ring(60)).sparse_form.source
    for stale in ("this is not ( python", good.replace("N = 60", "N = 59", 1)):
        keep(_kelly_ring(60), "sparse", stale)
        m = _kelly_ring(60)
        assert list(m.equilibrium().values()) == pytest.approx([0.5**0.2] * 60, rel=1e-14)
        assert record(_kelly_ring(60))["sparse"] == good
