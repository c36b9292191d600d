"""
A Hopf bifurcation and its branch of limit cycles
=================================================

Kelly's primal law with a delayed price ``p(y) = (y/c)^B``,
``x'(t) = kappa (w - x(t - T) p(x(t - T)))``, loses stability where
``kappa (B + 1) T = pi/2`` (a pair of roots crosses at ``omega = pi / (2 T)``). The first
Lyapunov coefficient of the Hopf point says whether the cycles born there are stable
(supercritical) and predicts their amplitude; continuing the branch by collocation shows where
the prediction of the normal form stops being enough, and the Floquet multipliers give each
cycle's stability.
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
print(hp)
print(f"closed form: kappa = pi/10 = {np.pi / 10:.10f}")

branch = fn.continue_orbits(hp, lo=hp.value, hi=0.55, n_orbits=30)
fig, ax = plt.subplots(figsize=(6, 4))
branch.plot(ax=ax, state="x")
k = np.linspace(hp.value, 0.45, 50)
ax.plot(
    k,
    [hp.predict(v)["amplitude"]["x"] for v in k],
    ":",
    color="0.4",
    label="normal form prediction",
)
ax.legend(fontsize="small")
ax.set_title("cycles of the delayed primal law (peak-to-peak amplitude of x)")
