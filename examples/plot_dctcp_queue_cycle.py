"""
DCTCP's queue oscillation against its marking threshold
========================================================

Alizadeh, Javanmard & Prabhakar's fluid model of DCTCP marks every packet above a queue
threshold ``K``. The marking is a step, so the equilibrium is on a switching surface and the
queue settles on a periodic orbit around ``K`` instead of at a point. Its amplitude, which
the DCTCP papers compute from the sawtooth of the windows, shrinks relative to ``K`` as
``K`` grows; fluidnet's ``fn.oscillation`` measures it on the nonlinear model.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

m = fn.models.dctcp()
fig, ax = plt.subplots(figsize=(7, 3.6))
for K in (20.0, 40.0, 80.0):
    start = {"W": 1.0, "alpha": 1.0, "q": 0.0}  # one packet each, full marking memory
    sol = fn.simulate(m, 0.1, params={"K": K}, history=start)
    osc = fn.oscillation(sol, "q")
    ax.plot(sol.t * 1e3, sol["q"], lw=0.8, label=f"K = {K:g}: amplitude {osc.amplitude:.1f} pkts")
    print(
        f"K = {K:g}: {osc.status}, amplitude {osc.amplitude:.2f}, period {osc.period * 1e6:.1f} us"
    )
ax.set_xlim(90, 100)
ax.set_xlabel("time (ms)")
ax.set_ylabel("queue (packets)")
ax.legend(fontsize="small")
