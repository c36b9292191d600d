"""Linearization: RCP eq (8), closed forms, frozen state-dependent delays, merging, errors."""

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import AnalysisError, ModelError

t = fn.t


def test_rcp_matches_eq8_numerically():
    a, b, N, d0 = 0.4, 0.2, 10.0, 0.2
    lin = fn.models.rcp().linearize()
    assert lin.state_names == ("R", "q")
    assert lin.delays == (d0,)
    np.testing.assert_allclose(lin.A0, [[0.0, -b / (N * d0**2)], [0.0, 0.0]], rtol=1e-14)
    np.testing.assert_allclose(lin.A[0], [[-a / d0, 0.0], [N, 0.0]], rtol=1e-14)
    assert lin.equilibrium == {"R": 1875.0, "q": 0.0}
    assert lin.params["alpha"] == 0.4


def test_rcp_symbolic_jacobians():
    alpha, beta, N, d0, T = sympy.symbols("alpha beta N d0 T", real=True)
    jac = fn.models.rcp().linearize().jacobians
    assert set(jac) == {sympy.S.Zero, d0, T}
    assert sympy.simplify(jac[sympy.S.Zero][0, 1] + beta / (N * d0**2)) == 0
    assert jac[d0][0, 0] == -alpha / d0 and jac[d0][1, 0] == N
    assert jac[T] == sympy.zeros(2, 2)  # df/dR_T = 0 at the equilibrium


def test_delayed_kelly_primal_closed_form():
    # x' = kappa (w - x(t-T) p(x(t-T))), p(y) = (y/c)^B: at x*, d/dx [x p(x)] = (B+1) p*
    x = fn.states("x")
    kappa, w, c, B, T = fn.params("kappa w c B T")
    m = fn.Model(
        {x: kappa * (w - x(t - T) * (x(t - T) / c) ** B)},
        {kappa: 0.5, w: 2.0, c: 10.0, B: 3.0, T: 0.3},
    )
    eq = m.equilibrium(guess={"x": 5.0})
    xs = 10.0 * (2.0 / 10.0) ** (1 / 4)  # x p(x) = w  ->  x^(B+1) = w c^B
    assert eq["x"] == pytest.approx(xs, rel=1e-10)
    lin = m.linearize(equilibrium=eq)
    pstar = (xs / 10.0) ** 3
    assert lin.A0[0, 0] == 0.0
    assert lin.delays == (0.3,)
    assert lin.A[0][0, 0] == pytest.approx(-0.5 * 4 * pstar, rel=1e-12)


def test_state_dependent_delay_is_frozen_at_equilibrium():
    # x' = a - x(t - (1 + x(t)^2)): x* = a, delay frozen at 1 + a^2
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a - x(t - (1 + x(t) ** 2))}, {a: 0.5})
    lin = m.linearize()
    assert lin.delays == (1.25,)
    assert lin.A[0][0, 0] == -1.0 and lin.A0[0, 0] == 0.0


def test_equal_delays_are_merged_and_zero_blocks_dropped():
    x, y = fn.states("x y")
    T1, T2 = fn.params("T1 T2")
    m = fn.Model({x: -x(t - T1) - y(t - T2), y: x(t) - y(t)}, {T1: 0.5, T2: 0.5})
    lin = m.linearize()
    assert lin.delays == (0.5,)
    np.testing.assert_array_equal(lin.A[0], [[-1.0, -1.0], [0.0, 0.0]])
    lin2 = m.linearize(T2=0.7)
    assert lin2.delays == (0.5, 0.7)


def test_projected_state_is_linearized_without_projection():
    # queue at its boundary: b' = x - c linearizes to delta b' = delta x, not max(.,0)
    lin = fn.models.rcp().linearize()
    assert lin.A[0][1, 0] == 10.0


def test_negative_delay_at_equilibrium():
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: a - x(t - (2 - x(t)))}, {a: 3.0})
    with pytest.raises(ModelError, match=r"delay of x\(t - \(2 - x\)\) is -1 < 0"):
        m.linearize()


def test_not_differentiable_at_equilibrium():
    x = fn.states("x")
    m = fn.Model({x: -sympy.sqrt(sympy.Abs(x(t))) * sympy.sign(x(t))}, {})
    # the kink of Abs at 0 is named first (the surface check comes before the entries)
    with pytest.raises(AnalysisError, match=r"x = 0 of Abs\(x\).*not differentiable"):
        m.linearize(equilibrium={"x": 0.0})


def test_time_varying_model_cannot_be_linearized():
    x = fn.states("x")
    m = fn.Model({x: -x(t) * (1 + sympy.Heaviside(t - 1))}, {})
    with pytest.raises(ModelError, match="explicitly on t"):
        m.linearize(equilibrium={"x": 0.0})


def test_explicit_equilibrium_must_name_every_state():
    with pytest.raises(ModelError, match="misses states"):
        fn.models.rcp().linearize(equilibrium={"R": 1875.0})


@pytest.mark.parametrize(
    "value, match",
    [
        ("x", r"equilibrium value of state 'R' is 'x': not a real number"),
        ("1875", r"equilibrium value of state 'R' is '1875': not a real number"),
        (1875 + 1j, r"equilibrium value of state 'R' is \(1875\+1j\): not a real number"),
        (float("nan"), r"equilibrium value of state 'R' is nan: not finite"),
        (True, r"equilibrium value of state 'R' is True: not a real number"),
        (None, r"equilibrium value of state 'R' is None: not a real number"),
    ],
)
def test_explicit_equilibrium_values_must_be_real_numbers(value, match):
    # issue 23: equilibrium={'R': 'x'} raised a raw ValueError from float('x')
    with pytest.raises(ModelError, match=match):
        fn.models.rcp().linearize(equilibrium={"R": value, "q": 0.0})


def test_explicit_equilibrium_names_only_states():
    with pytest.raises(ModelError, match=r"names unknown states \['rate'\]"):
        fn.models.rcp().linearize(equilibrium={"R": 1875.0, "q": 0.0, "rate": 1.0})
    # numpy and sympy numbers are numbers
    lin = fn.models.rcp().linearize(equilibrium={"R": np.float32(1875.0), "q": sympy.Integer(0)})
    assert lin.equilibrium == {"R": 1875.0, "q": 0.0}


def test_switching_terms_linearize_away_from_their_kinks():
    # x' = k (w - Max(x(t-T) - b0, 0)) (1 + Heaviside(x - 10)): smooth at x* = w + b0 = 4
    x = fn.states("x")
    k, w, b0, T = fn.params("k w b0 T")
    m = fn.Model(
        {x: k * (w - sympy.Max(x(t - T) - b0, 0)) * (1 + sympy.Heaviside(x(t) - 10))},
        {k: 2.0, w: 3.0, b0: 1.0, T: 0.5},
    )
    assert m.equilibrium(guess={"x": 4.0}) == pytest.approx({"x": 4.0})
    lin = m.linearize(equilibrium={"x": 4.0})
    assert lin.delays == (0.5,) and lin.A[0][0, 0] == -2.0
    # on the kink of Max the derivative is undefined: a clear error, not a number
    with pytest.raises(AnalysisError, match="not differentiable"):
        m.linearize(equilibrium={"x": 1.0}, w=0.0)


def test_sliding_equilibrium_has_no_jacobian():
    """Two flows on a link with binary congestion feedback slide on x1 + x2 = B; the sliding
    equilibrium (x1, x2) = (B mu1, B mu2) / (mu1 + mu2) found by a simulation sits a rounding
    error off the surface. Linearizing there must fail, not return one side's Jacobian."""
    x1, x2 = fn.states("x1 x2")
    mu1, mu2, B = fn.params("mu1 mu2 B")
    cg = sympy.Heaviside(x1(t) + x2(t) - B)
    m = fn.Model(
        {x1: mu1 * (1 - cg) - x1(t) * cg, x2: mu2 * (1 - cg) - x2(t) * cg},
        {mu1: 1.0, mu2: 3.0, B: 10.0},
    )
    sol = fn.simulate(m, 60.0, history={"x1": 1.0, "x2": 1.0})
    eq = dict(zip(("x1", "x2"), sol(60.0), strict=True))
    assert eq["x1"] == pytest.approx(2.5, abs=1e-6) and eq["x2"] == pytest.approx(7.5, abs=1e-6)
    for point in (eq, {"x1": 2.5, "x2": 7.5}, {"x1": 2.5, "x2": 7.5 + 1e-13}):
        with pytest.raises(
            AnalysisError, match=r"(switching surface -B \+ x1 \+ x2 = 0|not differentiable)"
        ):
            m.linearize(equilibrium=point)
    # off the surface the one-sided field is smooth (Jacobian -I), but (6, 6) is not an
    # equilibrium (x' = -x there): a given point must be one (issue 18)
    with pytest.raises(AnalysisError, match=r"not an equilibrium.*dx1/dt = -6"):
        m.linearize(equilibrium={"x1": 6.0, "x2": 6.0})


def test_sparse_jacobians_equal_the_dense_ones_on_a_network():
    """Parking-lot network (one long flow over three links, one short flow per link): the
    sparse, forward-differentiated plan against sympy's dense Jacobian of the same form."""
    from fluidnet.symbolic.linearize import jacobian_blocks

    A = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]])
    m = fn.models.kelly_primal(A, T=[0.05, 0.07, 0.09, 0.11], c=2.0, B=4.0)
    eq = {k: float(v) for k, v in m.equilibrium().items()}
    lin = m.linearize(equilibrium=eq)
    form = m.form
    J0, Jlag = jacobian_blocks(form)
    rep = {x: eq[n] for x, n in zip(form.x, form.states, strict=True)}
    rep.update({lag.symbol: eq[form.states[lag.state]] for lag in form.lags})
    rep.update({sympy.Symbol(k, real=True): v for k, v in m.values.items()})
    rep.update({p: m.values[str(p)] for p in form.p})
    A0 = np.array(J0.xreplace(rep).evalf(), dtype=float)
    np.testing.assert_allclose(lin.A0, A0, rtol=1e-13, atol=1e-13)
    for tau, Ak in zip(lin.delays, lin.A, strict=True):
        dense = np.zeros((4, 4))
        for lag, col in zip(form.lags, Jlag, strict=True):
            if abs(float(lag.delay.xreplace(rep)) - tau) < 1e-12:
                dense[:, lag.state] += np.array(col.xreplace(rep).evalf(), dtype=float)[:, 0]
        np.testing.assert_allclose(Ak, dense, rtol=1e-13, atol=1e-13)
    assert len(lin.delays) == 4 and len(form.lags) > 4  # lags merged by delay


def test_batched_equilibria_and_linearizations_equal_the_per_point_ones():
    from fluidnet.symbolic.linearize import equilibria_batch, linearize_batch

    x = fn.states("x")
    a, b = fn.params("a b")
    logistic = fn.Model({x: x(t) * (a - x(t - b))}, {a: 1.0, b: 0.5}, nonnegative=[x])
    values = np.array([-1.0, 0.0, 0.5, 2.0])  # a < 0: only x = 0 is admissible
    X, ok = equilibria_batch(logistic, {"a": values})
    assert ok.all()
    for v, xb in zip(values, X[:, 0], strict=True):
        assert xb == logistic.equilibrium(a=v)["x"]
    rcp = fn.models.rcp()
    grid = {"alpha": np.array([0.1, 0.4, 1.3]), "N": np.array([5.0, 10.0, 1e6])}
    lb = linearize_batch(rcp, grid)
    for k in range(3):
        lin = rcp.linearize(alpha=grid["alpha"][k], N=grid["N"][k])
        s = 0.3 + 2.0j
        f = lb.stack.det_logderiv(np.array([s]), np.array([k]))[0][0]
        assert f == pytest.approx(lin.characteristic(s), rel=1e-13)
    # a parameter out of its bounds is left to the per-point path (which raises)
    assert not linearize_batch(rcp, {"alpha": [-1.0, 0.4]}).ok[0]


def test_abs_is_differentiated_and_its_kink_is_named():
    """Issue 33: Abs in a model made linearize fail with sympy's PrintMethodNotImplementedError
    (Derivative_im). d|u|/du = sign(u) off the kink: x' = -a |x(t - 1)| - x + 1 has x* = 1/(1 + a)
    and A1 = -a sign(x*) = -a; on the kink (x* = 0, or |x(t-1) - 1| at x* = 1) the
    linearization refuses with the surface named, like Max and Min."""
    x = fn.states("x")
    a = fn.params("a")
    m = fn.Model({x: -a * sympy.Abs(x(t - 1)) - x(t) + 1}, {a: 0.5})
    lin = m.linearize()
    assert m.equilibrium()["x"] == pytest.approx(1 / 1.5, rel=1e-14)
    assert lin.A0.tolist() == [[-1.0]] and lin.A[0].tolist() == [[-0.5]]
    below = fn.Model({x: -a * sympy.Abs(x(t - 1)) - x(t) - 1}, {a: 0.5})  # x* = -1/(1 - a)
    assert below.linearize().A[0].tolist() == [[0.5]]
    for rhs in (-a * sympy.Abs(x(t - 1)) - x(t), -a * sympy.Abs(x(t - 1) - 1) - x(t) + 1):
        with pytest.raises(AnalysisError, match=r"switching surface .* of Abs"):
            fn.Model({x: rhs}, {a: 0.5}).linearize()
