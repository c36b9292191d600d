"""
Floquet multipliers of a periodic orbit
=======================================

Hutchinson's delayed logistic equation ``x' = r x (1 - x(t - 1))`` has a Hopf point at
``r = pi / 2``; past it a stable cycle appears. fluidnet computes the cycle by collocation
(piecewise polynomials on an adapted mesh) and its Floquet multipliers from the monodromy
operator. One multiplier is exactly 1 (the phase direction of any autonomous cycle), a check
on the computation; the others lie inside the unit circle, so the cycle is stable.
"""

import matplotlib.pyplot as plt
import numpy as np

import fluidnet as fn

t = fn.t
x = fn.states("x")
r = fn.params("r")
m = fn.Model(rhs={x: r * x(t) * (1 - x(t - 1))}, params={r: 1.5}, name="hutchinson")
hp = fn.hopf_point(m, "r", 1.0, 2.0)
orbit = fn.periodic_orbit(hp, 1.8)
mu = np.asarray(orbit.multipliers)
print(orbit)
print(f"trivial multiplier: |mu - 1| = {np.min(np.abs(mu - 1)):.1e}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
orbit.plot(ax=ax1)
theta = np.linspace(0, 2 * np.pi, 300)
ax2.plot(np.cos(theta), np.sin(theta), color="0.6", lw=0.8)
ax2.plot(mu.real, mu.imag, "o", color="C3")
ax2.set_aspect("equal")
ax2.set_xlabel("Re mu")
ax2.set_ylabel("Im mu")
ax2.set_title("Floquet multipliers (unit circle in grey)", fontsize="small")
fig.tight_layout()
