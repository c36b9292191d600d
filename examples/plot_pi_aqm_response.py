"""
A PI queue controller designed by the book, and its response
============================================================

Hollot, Misra, Towsley & Gong designed a proportional-integral AQM for TCP flows: the
integrator removes the steady-state queue error, and the gains come from a rule on the
linearized plant. ``fn.models.hollot_pi_design`` applies their rule; the simulation shows the
queue settling at its reference from an empty start, and the margins of the designed loop.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

m = fn.models.hollot_pi()
print(m.equilibrium())
sol = fn.simulate(m, 60.0, history={name: 0.0 for name in m.state_names} | {"W": 1.0})
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(sol.t, sol["q"], label="queue")
ax.axhline(m.equilibrium()["q"], color="C3", ls="--", lw=0.8, label="reference")
ax.set_xlabel("time (s)")
ax.set_ylabel("packets")
ax.legend(fontsize="small")
ax.set_title("PI AQM (Hollot et al.): queue from an empty start", fontsize="small")
