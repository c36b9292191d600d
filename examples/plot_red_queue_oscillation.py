"""
TCP with RED: a quiet queue, then an oscillating one as the round-trip time grows
=================================================================================

Misra, Gong & Towsley's fluid model of ``N`` TCP flows through a RED queue (window ``W``, queue
``q``, RED's averaged queue ``x``). Hollot et al. showed that the loop loses stability as the
round-trip time grows or the number of flows falls. The certified critical propagation delay
separates a queue that settles from one that oscillates (and empties, which the projection
at ``q = 0`` handles exactly).
"""

import matplotlib.pyplot as plt

import fluidnet as fn

m = fn.models.mgt_red()
cv = fn.critical_value(m, "Tp", 0.05, 2.0)
print(cv)

fig, ax = plt.subplots(figsize=(7, 3.6))
for Tp in (0.8 * cv.value, 1.3 * cv.value):
    eq = m.equilibrium(params={"Tp": Tp})
    start = {"W": 0.5 * eq["W"], "q": 0.0, "x": eq["x"]}  # half the windows, an empty queue
    sol = fn.simulate(m, 300.0, params={"Tp": Tp}, history=start)
    ax.plot(sol.t, sol["q"], lw=1, label=f"Tp = {Tp:.3f} s")
ax.set_xlabel("time (s)")
ax.set_ylabel("queue (packets)")
ax.legend(fontsize="small")
ax.set_title(f"critical propagation delay {cv.value:.4f} s (N = 60 flows)", fontsize="small")
