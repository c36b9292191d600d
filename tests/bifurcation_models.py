"""Models shared by the bifurcation tests (and benchmarks/bench_bifurcation.py)."""

import sympy

import fluidnet as fn


def neuron(**values):
    """Shayer & Campbell's two coupled neurons (SIAM J. Appl. Math. 61, 2000), DDE-BIFTOOL's
    demo: x1' = -k x1 + b tanh(x1(t-ts)) + a12 tanh(x2(t-t2)), symmetric for x2 with a21, t1."""
    x1, x2 = fn.states("x1 x2")
    k, b, a12, a21, t1, t2, ts = fn.params("kappa beta a12 a21 tau1 tau2 taus")
    t = fn.t
    defaults = {k: 0.5, b: -1.0, a12: 1.0, a21: 0.8, t1: 0.2, t2: 0.2, ts: 1.5}
    m = fn.Model(
        {
            x1: -k * x1(t) + b * sympy.tanh(x1(t - ts)) + a12 * sympy.tanh(x2(t - t2)),
            x2: -k * x2(t) + b * sympy.tanh(x2(t - ts)) + a21 * sympy.tanh(x1(t - t1)),
        },
        defaults,
        name="neuron",
    )
    return m.with_params(**values) if values else m


def hutchinson():
    """Hutchinson's (delayed logistic) equation x' = r x (1 - x(t - 1))."""
    x = fn.states("x")
    r = fn.params("r")
    return fn.Model({x: r * x(fn.t) * (1 - x(fn.t - 1))}, {r: 1.0}, name="hutchinson")


def mackey_glass():
    """Mackey & Glass (Science 197, 1977): x' = beta x(t-tau) / (1 + x(t-tau)^n) - gamma x."""
    x = fn.states("x")
    b, g, n, tau = fn.params("beta gamma n tau")
    z = x(fn.t - tau)
    return fn.Model(
        {x: b * z / (1 + z**n) - g * x(fn.t)},
        {b: 2.0, g: 1.0, n: 10.0, tau: 0.5},
        name="mackey_glass",
    )
