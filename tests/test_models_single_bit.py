"""SBRM fluid model (seed 002, (6.4.1)-(6.4.7)) against closed forms and hand derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.models.single_bit import (
    sbrm,
    sbrm_network,
    sbrm_printed_linear,
    sbrm_printed_loop_gain,
    sbrm_steady_state,
)

KB, W_TP, GAMMA, B0 = 0.2, 20.0, 0.006, 50.0  # Table 6.6.1


def closed_form(N, c, d):
    """Table 5.5.1, written out by hand: p* = N w/c, b* = b0 - ln(1 - p*)/gamma."""
    p = N * W_TP / c
    b = B0 - math.log(1 - p) / GAMMA
    R = d + b / c
    return p, b, R, c * R / N


def note_loop_gain(s, N, c, d, paper=True):
    """Note 002 §10 reference sketch of (6.5.21), re-typed in numpy (independent of fluidnet)."""
    p = N * W_TP / c
    b = B0 - np.log(1 - p) / GAMMA
    R = d + b / c
    cw = c * R / N
    tf = R / 2
    g = GAMMA * np.exp(-GAMMA * (b - B0))
    if paper:
        num = (KB * cw * np.exp(-R * s) - KB * W_TP / c * np.exp(-2 * tf * s)) * g
    else:
        num = KB * cw * g * np.exp(-R * s) - KB * W_TP / c * np.exp(-2 * tf * s)
    return N * num / (R**2 * (s + KB * W_TP / cw)) / (s + (N / c) * cw / R**2 * np.exp(-tf * s))


@pytest.mark.parametrize("N, c, d", [(30, 10_000.0, 0.086), (20, 15_000.0, 0.05), (60, 8e3, 0.1)])
def test_equilibrium_matches_table_5_5_1(N, c, d):
    p, b, R, W = closed_form(N, c, d)
    eq = sbrm(N=N, c=c, d=d).equilibrium()
    assert eq["b"] == pytest.approx(b, rel=1e-9)
    assert eq["W"] == pytest.approx(W, rel=1e-9)
    ss = sbrm_steady_state(N, c, d)
    assert ss["p"] == pytest.approx(p, rel=1e-15)
    assert ss["rtt"] == pytest.approx(R, rel=1e-15)


def test_steady_state_numbers_of_note():
    ss = sbrm_steady_state(30, 10_000.0, 0.086)
    assert round(ss["b"], 2) == 60.31
    assert round(1e3 * ss["rtt"], 1) == 92.0
    assert round(ss["W"], 2) == 30.68
    assert round(sbrm_steady_state(60, 8_000.0, 0.05)["b"], 2) == 77.09


def test_steady_state_errors():
    with pytest.raises(fn.ParameterError, match="N w / c"):
        sbrm_steady_state(600, 10_000.0, 0.05)
    with pytest.raises(fn.ParameterError, match="d = -0.1"):
        sbrm_steady_state(30, 10_000.0, -0.1)
    with pytest.raises(fn.ParameterError, match="gamma"):
        sbrm_steady_state(30, 10_000.0, 0.1, gamma=0.0)


def test_linearization_matches_6_5_1_to_6_5_6():
    N, c, d = 30, 10_000.0, 0.086
    p, b, R, W = closed_form(N, c, d)
    lin = sbrm(N=N, c=c, d=d).linearize()
    iW, ib = lin.state_names.index("W"), lin.state_names.index("b")
    # (6.5.1): undelayed -kb w/W* dW + kb w/(RTT* c) db (the RTT in w RTT/cwnd, M10: current b)
    assert lin.A0[iW, iW] == pytest.approx(-KB * W_TP / W, rel=1e-9)
    assert lin.A0[iW, ib] == pytest.approx(KB * W_TP / (R * c), rel=1e-9)
    delays = {round(tau, 12): A for tau, A in zip(lin.delays, lin.A, strict=True)}
    # tau^f = tau^b = RTT*/2 merge; the ACK-clock lag x(t - RTT) multiplies a bracket that
    # vanishes at the equilibrium, so its matrix is zero up to rounding
    for tau, Ak in delays.items():
        if tau != round(R / 2, 12):
            assert tau == pytest.approx(R, rel=1e-12)
            assert np.max(np.abs(Ak)) < 1e-9
    A = delays[round(R / 2, 12)]
    # (6.5.5)/(6.5.6): marking path -kb (W*/RTT*) gamma e^{-gamma(b*-b0)} db(t - tau^b)
    assert A[iW, ib] == pytest.approx(-KB * W / R * GAMMA * (1 - p), rel=1e-9)
    # (6.5.2): dy = N (dW(t - tau^f)/RTT* - W*/RTT*^2 db(t - tau^f)/c)
    assert A[ib, iW] == pytest.approx(N / R, rel=1e-9)
    assert A[ib, ib] == pytest.approx(-N * W / (R**2 * c), rel=1e-9)


def test_loop_gain_cut_at_p_matches_hand_derivation():
    N, c, d = 30, 10_000.0, 0.086
    p, b, R, W = closed_form(N, c, d)
    L = sbrm(N=N, c=c, d=d).loop_gain("p")
    s = 1j * np.array([0.3, 2.0, 11.0, 40.0])
    a = KB * W_TP / W
    x = W / R
    Gb = N / R * np.exp(-s * R / 2) / (s + N * W / (R**2 * c) * np.exp(-s * R / 2))
    hand = (
        GAMMA * (1 - p) * np.exp(-s * R / 2) * Gb * KB * x / (s + a - KB * x * W_TP / (W * c) * Gb)
    )
    np.testing.assert_allclose(L(s), hand, rtol=1e-10)


@pytest.mark.parametrize("form", ["printed", "corrected"])
def test_printed_loop_gain_matches_note_sketch(form):
    s = 1j * np.logspace(-1, 2, 30)
    for N, c, d in ((30, 10_000.0, 0.086), (50, 13_000.0, 0.07)):
        L = sbrm_printed_loop_gain(N, c, d, form=form)
        np.testing.assert_allclose(L(s), note_loop_gain(s, N, c, d, form == "printed"), rtol=1e-12)


@pytest.mark.parametrize("form", ["printed", "corrected"])
def test_printed_linear_model_reproduces_6_5_21(form):
    s = 1j * np.logspace(-1, 2, 25)
    m = sbrm_printed_linear(form, N=40, c=12_000.0, d=0.07)
    np.testing.assert_allclose(
        m.loop_gain("q")(s), sbrm_printed_loop_gain(40, 12_000.0, 0.07, form=form)(s), rtol=1e-10
    )


def test_critical_delay_of_printed_form_matches_note():
    cv = fn.critical_value(sbrm_printed_linear(N=30, c=10_000.0), "d", 0.08, 0.095)
    assert cv.value == pytest.approx(0.0873, abs=5e-5)  # note 002 Table 6.6.2 'cont. d*'


def test_network_with_one_class_equals_homogeneous_model():
    net = sbrm_network([[1]], N=30, d=0.086, c=10_000.0)
    hom = sbrm(N=30, c=10_000.0, d=0.086)
    e1, e2 = net.equilibrium(), hom.equilibrium()
    assert e1["W_1"] == pytest.approx(e2["W"], rel=1e-9)
    assert e1["b_1"] == pytest.approx(e2["b"], rel=1e-9)
    s = 1j * np.array([0.5, 5.0, 12.0])
    np.testing.assert_allclose(net.loop_gain("p_1")(s), hom.loop_gain("p")(s), rtol=1e-9)


def test_heterogeneous_equilibrium_5_5_5():
    w = [10.0, 20.0, 40.0]
    d = [0.02, 0.05, 0.1]
    net = sbrm_network([[1, 1, 1]], N=[10, 10, 10], d=d, w=w, c=10_000.0)
    eq = net.equilibrium()
    for n in range(3):
        rtt = d[n] + eq["b_1"] / 10_000.0
        assert eq[f"W_{n + 1}"] / rtt == pytest.approx(w[n] / 700.0 * 10_000.0, rel=1e-8)
    assert eq["b_1"] == pytest.approx(B0 - math.log(1 - 0.07) / GAMMA, rel=1e-8)


def test_double_bottleneck_sum_and_product_marking():
    # users A (link 1), B (both), C (link 2), one flow each, equal w and c: with m the marking of
    # each link, sum marking (6.4.3) gives w/m + w/(2m) = c; the exact product gives
    # w/m + w/(2m - m^2) = c, i.e. c m^2 - (2c + w) m + 3w = 0
    c, w = 1000.0, 20.0
    m_sum = 1.5 * w / c
    m_prod = ((2 * c + w) - math.sqrt((2 * c + w) ** 2 - 12 * c * w)) / (2 * c)
    guess = {"W_1": 45.0, "W_2": 22.0, "W_3": 45.0, "b_1": 13.0, "b_2": 13.0}
    for marking, m_exact in (("sum", m_sum), ("product", m_prod)):
        net = sbrm_network(
            [[1, 1, 0], [0, 1, 1]], N=1, d=0.05, w=w, c=c, gamma=0.01, b0=10.0, marking=marking
        )
        eq = net.equilibrium(guess=guess)
        for link in ("b_1", "b_2"):
            assert 1 - math.exp(-0.01 * (eq[link] - 10.0)) == pytest.approx(m_exact, rel=1e-8)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(A=[[1, 2]]), fn.ModelError, "only 0 and 1"),
        (dict(A=[[1, 0]]), fn.ModelError, "source 2"),
        (dict(A=[[1], [0]]), fn.ModelError, "link 2"),
        (dict(A=[[1, 1]], N=[1, 2, 3]), fn.ParameterError, "N must be"),
        (dict(A=[[1]], forward=1.5), fn.ParameterError, "forward"),
        (dict(A=[[1]], marking="max"), fn.ModelError, "marking"),
    ],
)
def test_network_errors(kwargs, exc, match):
    A = kwargs.pop("A")
    with pytest.raises(exc, match=match):
        sbrm_network(A, **kwargs)


def test_form_and_parameter_errors():
    with pytest.raises(fn.ParameterError, match="form"):
        sbrm_printed_loop_gain(30, 1e4, 0.08, form="exact")
    with pytest.raises(fn.ParameterError, match="form"):
        sbrm_printed_linear("exact")
    with pytest.raises(fn.ParameterError, match="split"):
        sbrm(split=1.5)
    with pytest.raises(fn.ParameterError, match="unknown parameter 'rtt'"):
        sbrm(rtt=0.1)


def test_library_function_survives_importing_its_module():
    import importlib
    import types

    import fluidnet.models.single_bit as module

    assert isinstance(module, types.ModuleType)
    importlib.import_module("fluidnet.models.reno")
    assert fn.models.sbrm(N=20).values["N"] == 20.0
    assert fn.models.reno_red().state_names


def test_no_model_module_is_shadowed_by_a_function():
    # ``import fluidnet.models.<x> as m`` binds the attribute of the package: a module named
    # like an exported function would silently give the function.
    import importlib
    import pkgutil
    import types

    for info in pkgutil.iter_modules(fn.models.__path__):
        importlib.import_module(f"fluidnet.models.{info.name}")
        assert isinstance(getattr(fn.models, info.name), types.ModuleType), info.name


def test_nonlinear_run_settles_below_and_keeps_queue_nonnegative():
    m = sbrm(N=30, c=10_000.0, d=0.06)
    p, b, R, W = closed_form(30, 10_000.0, 0.06)
    sol = fn.simulate(m, 30.0, history={"W": 1.3 * W, "b": 0.0})
    assert np.min(sol["b"]) >= 0.0
    assert sol["b"][-1] == pytest.approx(b, abs=0.05)
    assert sol["W"][-1] == pytest.approx(W, abs=0.01)


def test_printed_network_loop_gain_reduces_to_6_5_21():
    from fluidnet.models.single_bit import sbrm_printed_loop_gain_network

    s = 1j * np.logspace(-1, 2, 15)
    for form in ("printed", "corrected"):
        one = sbrm_printed_loop_gain_network([30], [0.086], 10_000.0, form=form)
        split = sbrm_printed_loop_gain_network([10, 20], [0.086, 0.086], 10_000.0, form=form)
        ref = note_loop_gain(s, 30, 10_000.0, 0.086, form == "printed")
        np.testing.assert_allclose(one(s), ref, rtol=1e-12)
        np.testing.assert_allclose(split(s), ref, rtol=1e-12)
    with pytest.raises(fn.ParameterError, match="sum N w"):
        sbrm_printed_loop_gain_network([600], [0.05], 10_000.0)
