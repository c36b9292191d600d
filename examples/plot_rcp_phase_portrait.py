"""
Phase portraits of RCP inside and outside its nonlinear region
==============================================================

Dukkipati & McKeown judge nonlinear stability from six initial states: rates of 0.5, 0.1 and
0.01 of the capacity, each with an empty queue and with a queue of two bandwidth-delay
products. Inside the region every trajectory spirals into the equilibrium (rate ``C/N``,
empty queue). Past the onset ``alpha*(beta)`` (1.5 at ``beta = 0.2``, Fig 44) they settle
on a limit cycle in which the queue empties every period, something the linearization cannot
show.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

m = fn.models.rcp()
C, N, d0 = 18750.0, 10, 0.2
ics = [{"R": g * C, "q": q} for g in (0.5, 0.1, 0.01) for q in (2 * C * d0, 0.0)]
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, (alpha, beta) in zip(axes, [(0.4, 0.2), (1.8, 0.2)], strict=True):
    pp = fn.phase_portrait(m, ics, x="R", y="q", t_end=120.0, params={"alpha": alpha, "beta": beta})
    pp.plot(ax=ax, x_scale=1 / C)
    ax.set_xlabel("rate R / C")
    ax.set_title(f"alpha = {alpha}, beta = {beta}", fontsize="small")
for ax in axes:
    ax.set_ylabel("queue q (packets)")
fig.tight_layout()
