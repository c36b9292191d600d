"""The canonical form: lags, nested state-dependent delays from delayed signals, kinds."""

import numpy as np
import sympy

import fluidnet as fn

t = fn.t


def test_rcp_lags_and_kinds():
    form = fn.models.rcp().form
    assert form.states == ("R", "q")
    assert [(lag.state, str(lag.delay), lag.kind) for lag in form.lags] == [
        (0, "d0", "parameter"),
        (0, "T", "parameter"),
    ]
    assert form.nonnegative == (1,)
    assert not form.explicit_time
    # the RTT d0 + q/C inside the gains stays a current-state expression
    assert form.rhs[0].has(form.x[1])


def test_constant_and_merged_lags():
    x, y = fn.states("x y")
    m = fn.Model({x: -x(t - 1) + y(t - 1), y: x(t - 1) - 2 * y(t)}, {})
    lags = m.form.lags
    assert {(lag.state, lag.delay) for lag in lags} == {(0, 1), (1, 1)}
    assert all(lag.kind == "constant" for lag in lags)
    # the same delayed value used twice is one lag
    assert len(lags) == 2


def test_delayed_signal_gives_nested_state_dependent_delays():
    # window w, queue b; RTT = d + b/c; mark m(b); p(t) = m(t - RTT(t)/2) (SBRM-like)
    w, b = fn.states("w b")
    m_, p = fn.signals("m p")
    d, c, g = fn.params("d c g")
    rtt = d + b(t) / c
    model = fn.Model(
        rhs={w: 1 - p(t) * w(t), b: w(t) / rtt - c},
        params={d: 0.1, c: 10.0, g: 0.5},
        signals={m_: 1 - sympy.exp(-g * b(t)), p: m_(t - rtt / 2)},
        nonnegative=[b],
    )
    form = model.form
    assert len(form.lags) == 1
    lag = form.lags[0]
    assert lag.state == 1 and lag.kind == "state"
    assert sympy.simplify(lag.delay - (d / 2 + form.x[1] / (2 * c))) == 0
    # p expanded: 1 - exp(-g * b(t - RTT/2))
    assert form.rhs[0].has(lag.symbol)
    assert set(form.signals) == {"m", "p"}


def test_doubly_nested_delays_are_ordered():
    # p(t) = m(t - b(t)) with m(t) = b(t - b(t)): b at t - b(t) - b(t - b(t))
    x, b = fn.states("x b")
    m_, p = fn.signals("m p")
    model = fn.Model(
        rhs={x: -p(t), b: x(t) - b(t)},
        params={},
        signals={m_: b(t - b(t)), p: m_(t - b(t))},
    )
    lags = model.form.lags
    syms = [lag.symbol for lag in lags]
    for k, lag in enumerate(lags):
        # every delay uses only earlier lags
        assert not (lag.delay.free_symbols & set(syms[k:]))
    assert len(lags) == 2
    inner, outer = lags
    assert outer.delay.has(inner.symbol)


def test_explicit_time_flag():
    x = fn.states("x")
    m = fn.Model({x: -x(t) + sympy.Heaviside(t - 40)}, {})
    assert m.form.explicit_time


# Kelly's primal law with a feedback delay per flow (Zimmermann 2005, (3.2.15)/(3.2.16)):
# x_n' = kappa_n (w_n - x_n(t - T_n) p_n(t - T_n)), p_n = sum_{l in n} (y_l / c_l)^B,
# y_l = sum_{m in l} x_m. On a ring of 5 links (flow n uses links n and n+1) plus one long
# flow over three links, every flow's equation reads the rates of its link neighbours one
# round trip ago: the signals y, lam, p are expanded at the shifted time t - T_n.
_RING = [
    [1, 0, 0, 0, 1, 1],
    [1, 1, 0, 0, 0, 1],
    [0, 1, 1, 0, 0, 1],
    [0, 0, 1, 1, 0, 0],
    [0, 0, 0, 1, 1, 0],
]


def _kelly_ring():
    A = np.array(_RING)
    L, S = A.shape
    rng = np.random.default_rng(7)
    w, kappa = rng.uniform(0.5, 2, S), rng.uniform(0.2, 1, S)
    c, T = rng.uniform(1, 3, L), rng.uniform(0.05, 0.2, S)
    m = fn.models.kelly_primal(A, w=w, kappa=kappa, c=c, B=3.5, T=T)
    return m, A, dict(w=w, kappa=kappa, c=c, T=T, B=3.5)


def test_kelly_network_rhs_matches_the_equations_at_random_points():
    m, A, v = _kelly_ring()
    L, S = A.shape
    form = m.form
    # the lags are exactly x_m(t - T_n) for m sharing a link with n (m = n included)
    T = sympy.symbols([f"T_{n + 1}" for n in range(S)], real=True)
    want = {(k, T[n]) for n in range(S) for k in range(S) if np.any(A[:, n] & A[:, k])}
    assert {(lag.state, lag.delay) for lag in form.lags} == want
    assert len(form.lags) == len(want)
    rng = np.random.default_rng(11)
    for _ in range(5):
        z = {key: rng.uniform(0.1, 2.0) for key in want}  # x_k(t - T_n)
        x = rng.uniform(0.1, 2.0, S)
        subs = {lag.symbol: z[(lag.state, lag.delay)] for lag in form.lags}
        subs.update({xs: x[i] for i, xs in enumerate(form.x)})
        subs.update({p: m.values[p.name] for p in form.p})
        for n in range(S):
            price = sum(
                (sum(z[(k, T[n])] for k in range(S) if A[ll, k]) / v["c"][ll]) ** v["B"]
                for ll in range(L)
                if A[ll, n]
            )
            expected = v["kappa"][n] * (v["w"][n] - z[(n, T[n])] * price)
            got = float(form.rhs[n].xreplace(subs))
            assert abs(got - expected) <= 1e-14 * max(1.0, abs(expected))


def test_kelly_network_rhs_equals_the_model_written_without_signals():
    m, A, _ = _kelly_ring()
    L, S = A.shape
    xs = [sympy.Function(f"x_{n + 1}", real=True) for n in range(S)]
    w, T = (sympy.symbols([f"{a}_{n + 1}" for n in range(S)], real=True) for a in "wT")
    k = sympy.symbols([f"kappa_{n + 1}" for n in range(S)], real=True)
    c = sympy.symbols([f"c_{ll + 1}" for ll in range(L)], real=True)
    B = sympy.Symbol("B", real=True)
    rhs = {}
    for n in range(S):
        at = t - T[n]
        price = sum(
            (sum(xs[j](at) for j in range(S) if A[ll, j]) / c[ll]) ** B
            for ll in range(L)
            if A[ll, n]
        )
        rhs[xs[n]] = k[n] * (w[n] - xs[n](at) * price)
    plain = fn.Model(rhs, m.params, name="kelly by hand").form
    form = m.form
    assert {(lag.symbol, lag.state, lag.delay) for lag in plain.lags} == {
        (lag.symbol, lag.state, lag.delay) for lag in form.lags
    }
    for a, b in zip(form.rhs, plain.rhs, strict=True):
        assert sympy.expand(a - b) == 0
