"""
A Hopf curve in two parameters against its closed form
======================================================

Continuing a Hopf point of the delayed primal law in the gain ``kappa`` and the round-trip
time ``T`` traces the curve where cycles are born. Here it is the hyperbola
``kappa (B + 1) T = pi / 2``, with frequency ``omega = pi / (2 T)``, so the continuation can be
checked point by point; the first Lyapunov coefficient along it says that every point is
supercritical.
"""

import matplotlib.pyplot as plt
import numpy as np

import fluidnet as fn

t = fn.t
x = fn.states("x")
kappa, w, c, B, T = fn.params("kappa w c B T")
m = fn.Model(
    rhs={x: kappa * (w - x(t - T) * (x(t - T) / c) ** B)},
    params={kappa: 0.2, w: 1.0, c: 1.0, B: 4, T: 1.0},
    name="primal",
)
hp = fn.hopf_point(m, "kappa", 0.1, 0.5)
curve = fn.continue_hopf(hp, "T", n_points=30, y_range=(0.3, 3.0))
kappas, Ts = np.asarray(curve.x), np.asarray(curve.y)
print(
    f"{len(Ts)} points, largest deviation from kappa (B+1) T = pi/2: "
    f"{np.max(np.abs(kappas * 5 * Ts - np.pi / 2)):.2e}"
)

fig, ax = plt.subplots(figsize=(6, 4))
curve.plot(ax=ax)
TT = np.linspace(Ts.min(), Ts.max(), 200)
ax.plot(np.pi / (10 * TT), TT, ":", color="k", label="kappa (B+1) T = pi/2")
ax.legend(fontsize="small")
