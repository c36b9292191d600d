"""The canonical form: lags, nested state-dependent delays from delayed signals, kinds."""

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
