"""Laws written from scratch for the equilibrium tests of issue 34 (not from fluidnet.models),
with independent references: closed forms, one-dimensional reductions solved by Brent's
method, scipy's root finder from many starts on residuals written here by hand."""

from __future__ import annotations

import numpy as np
import sympy
from scipy import optimize

import fluidnet as fn

t = fn.t


def window_red(**values):
    """Window/queue TCP with linear RED and an RTT including the queue (issue 34):
    W' = 1/R - W W(t-R) p(t-R)/(2R), q' = N W/R - C, p = K q, R = d + q/C."""
    W, q = fn.states("W q")
    N, C, d, K = fn.params("N C d K")
    R = d + q(t) / C
    return fn.Model(
        rhs={W: 1 / R - W(t) * W(t - R) * K * q(t - R) / (2 * R), q: N * W(t) / R - C},
        params={N: 50, C: 3750.0, d: 0.2, K: 1e-4},
        nonnegative=[q],
        name="window RED",
    ).with_params(**values)


def kelly3(**values):
    """Kelly's primal law on three routes over two links, route 3 crossing both, with
    exponential marking p_l = exp(B (y_l/C_l - 1))/100 (issue 34)."""
    x1, x2, x3 = fn.states("x1 x2 x3")
    k, w, C1, C2, B, T = fn.params("k w C1 C2 B T")
    y1 = x1(t - T) + x3(t - T)
    y2 = x2(t - T) + x3(t - T)
    p1 = sympy.exp(B * (y1 / C1 - 1)) / 100
    p2 = sympy.exp(B * (y2 / C2 - 1)) / 100
    return fn.Model(
        rhs={
            x1: k * (w - x1(t - T) * p1),
            x2: k * (w - x2(t - T) * p2),
            x3: k * (w - x3(t - T) * (p1 + p2)),
        },
        params={k: 0.1, w: 2.0, C1: 3.0, C2: 4.0, B: 12.0, T: 0.1},
        name="Kelly three routes",
    ).with_params(**values)


def kelly_by_scipy(B: float, w=2.0, C1=3.0, C2=4.0) -> list[np.ndarray]:
    """Every equilibrium scipy's hybr finds from 400 starts, on residuals written here."""

    def f(x):
        p1 = np.exp(B * ((x[0] + x[2]) / C1 - 1)) / 100
        p2 = np.exp(B * ((x[1] + x[2]) / C2 - 1)) / 100
        return [w - x[0] * p1, w - x[1] * p2, w - x[2] * (p1 + p2)]

    found: list[np.ndarray] = []
    rng = np.random.default_rng(7)
    for x0 in rng.uniform(0.0, 8.0, size=(400, 3)):
        with np.errstate(all="ignore"):
            sol = optimize.root(f, x0, method="hybr", options={"xtol": 1e-14})
        if sol.success and np.max(np.abs(f(sol.x))) < 1e-10:
            if not any(np.allclose(sol.x, y, rtol=1e-8) for y in found):
                found.append(sol.x)
    return found


def tandem(**values):
    """Two TCP classes over two RED links in tandem (issue 34): class 1 crosses both links,
    class 2 only the second; RTTs include the queues they cross."""
    W1, W2, q1, q2 = fn.states("W1 W2 q1 q2")
    N1, N2, C1, C2, d1, d2, K1, K2 = fn.params("N1 N2 C1 C2 d1 d2 K1 K2")
    R1 = d1 + q1(t) / C1 + q2(t) / C2
    R2 = d2 + q2(t) / C2
    return fn.Model(
        rhs={
            W1: 1 / R1 - W1(t) * W1(t - R1) * (K1 * q1(t - R1) + K2 * q2(t - R1)) / (2 * R1),
            W2: 1 / R2 - W2(t) * W2(t - R2) * K2 * q2(t - R2) / (2 * R2),
            q1: N1 * W1(t) / R1 - C1,
            q2: N1 * W1(t) / R1 + N2 * W2(t) / R2 - C2,
        },
        params={N1: 20, N2: 30, C1: 2000.0, C2: 3750.0, d1: 0.1, d2: 0.15, K1: 1e-4, K2: 1e-4},
        nonnegative=[q1, q2],
        name="tandem RED",
    ).with_params(**values)


def tandem_reference(
    C1: float = 2000.0,
    *,
    N1: float = 20,
    N2: float = 30,
    C2: float = 3750.0,
    d1: float = 0.1,
    d2: float = 0.15,
    K1: float = 1e-4,
    K2: float = 1e-4,
) -> dict[str, float]:
    """The equilibrium by one-dimensional roots (Brent): W2^2 K2 q2 = 2 and, when link 1
    is a bottleneck, N2 W2/R2 = C2 - C1 for q2, then N1 W1/R1 = C1 for q1; otherwise q1 = 0,
    W1 = W2 and N1 W/R1 + N2 W/R2 = C2."""

    def both(q2):
        return (
            N1 * np.sqrt(2 / (K2 * q2)) / (d1 + q2 / C2)
            + N2 * np.sqrt(2 / (K2 * q2)) / (d2 + q2 / C2)
            - C2
        )

    q2 = optimize.brentq(both, 1e-6, 1e6, xtol=1e-13, rtol=1e-15)
    W = float(np.sqrt(2 / (K2 * q2)))
    if N1 * W / (d1 + q2 / C2) < C1:  # link 1 is not a bottleneck: its queue is empty
        return {"W1": W, "W2": W, "q1": 0.0, "q2": q2}
    q2 = optimize.brentq(
        lambda q: N2 * np.sqrt(2 / (K2 * q)) / (d2 + q / C2) - (C2 - C1), 1e-6, 1e6, rtol=1e-15
    )
    W2 = float(np.sqrt(2 / (K2 * q2)))

    def link1(q1):
        return N1 * np.sqrt(2 / (K1 * q1 + K2 * q2)) / (d1 + q1 / C1 + q2 / C2) - C1

    q1 = optimize.brentq(link1, 1e-9, 1e6, xtol=1e-13, rtol=1e-15)
    W1 = float(np.sqrt(2 / (K1 * q1 + K2 * q2)))
    return {"W1": W1, "W2": W2, "q1": q1, "q2": q2}


def window_reference(N=50.0, C=3750.0, d=0.2, K=1e-4) -> dict[str, float]:
    """W = R C/N and W^2 K q = 2 with R = d + q/C: (d C + q)^2 K q = 2 N^2, a cubic in q whose
    one positive root numpy finds from its coefficients."""
    a = d * C
    roots = np.roots([K, 2 * a * K, a * a * K, -2 * N * N])
    q = float(max(r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 0))
    return {"W": (a + q) / N, "q": q}
