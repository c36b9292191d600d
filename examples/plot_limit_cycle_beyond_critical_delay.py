"""
What the linear picture misses: a limit cycle past the critical delay
=====================================================================

A primal-dual congestion controller: each of ``N`` sources adjusts its rate ``x`` to the price
``p`` it saw one round-trip time ago, and the link raises the price while its load exceeds
capacity; neither rates nor the price can be negative.

The critical round-trip time from the linearization is exact, and below it the nonlinear model
settles. Past it the linear model only says "unstable"; the nonlinear one settles on a limit
cycle whose amplitude grows with the delay, and once a rate or the price touches zero, the
projection bends the cycle.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

t = fn.t
x, p = fn.states("x p")
k, w, gamma, N, C, T = fn.params("k w gamma N C T")
m = fn.Model(
    rhs={x: k * (w - x(t - T) * p(t - T)), p: gamma * (N * x(t - T / 2) - C)},
    params={k: 1.0, w: 10.0, gamma: 0.01, N: 10, C: 100.0, T: 0.2},
    nonnegative=[x, p],
    name="primal-dual",
)
cv = fn.critical_value(m, "T", 0.05, 10.0)
print(cv)

fig, ax = plt.subplots(figsize=(7, 3.6))
for factor in (0.8, 1.1, 1.3):
    Tv = factor * cv.value
    sol = fn.simulate(m, 80 * cv.value, params={"T": Tv}, history={"x": 12.0, "p": 1.0})
    ax.plot(sol.t / cv.value, sol["x"], lw=1, label=f"T = {factor} T*")
ax.axhline(10.0, color="0.5", lw=0.8)
ax.set_xlabel("time / T*")
ax.set_ylabel("rate x")
ax.legend(fontsize="small")
ax.set_title(f"critical round-trip time T* = {cv.value:.4g} s (certified)", fontsize="small")
