"""
An ensemble of trajectories over a parameter
============================================

``fn.simulate_ensemble`` integrates many parameter sets of one model together (the compiled
integrator runs them on threads, without the GIL). Here RCP is started at twice its fair
share for 40 values of the queue gain ``beta``: the larger ``beta``, the smaller the queue
that the overload builds and the sooner it drains.
"""

import matplotlib.pyplot as plt
import numpy as np

import fluidnet as fn

m = fn.models.rcp()
betas = np.linspace(0.05, 0.5, 40)
ds = fn.simulate_ensemble(
    m, 30.0, params={"beta": betas}, history={"R": 2 * 1875.0, "q": 0.0}, n_points=601
)
q = ds["q"]  # dimensions (member, time)
fig, ax = plt.subplots(figsize=(7, 3.8))
colors = plt.cm.viridis(np.linspace(0, 1, betas.size))
for i in range(betas.size):
    ax.plot(q["time"], q.isel(member=i), color=colors[i], lw=0.8)
sm = plt.cm.ScalarMappable(cmap="viridis", norm=plt.Normalize(betas[0], betas[-1]))
fig.colorbar(sm, ax=ax, label="beta")
ax.set_xlabel("time (s)")
ax.set_ylabel("queue (packets)")
ax.set_title("RCP from twice the fair share, alpha = 0.4", fontsize="small")
