"""
Binary feedback and a sliding mode on the capacity surface
==========================================================

Ye et al. model TCP with a one-bit congestion signal: a flow's rate grows by its increase law
while the link is below capacity and falls by its decrease law once the load exceeds it. The
feedback switches, so the rates reach the surface ``x_1 + x_2 = C`` and *slide* along it
(Filippov's equivalent control), ending at the allocation where both laws see the same
fraction of congestion. fluidnet integrates the switching model directly, locating every
crossing of the surface and sliding on it.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

laws = [fn.models.tcp_law(1.0), fn.models.tcp_law(3.0)]  # additive increase 1 and 3 per RTT
net = fn.models.single_link_network(laws, capacity=100.0)
m = net.model()
sol = fn.simulate(m, 120.0, history={"x_1": 5.0, "x_2": 60.0})
x1, x2 = sol["x_1"], sol["x_2"]
print(f"final rates: {x1[-1]:.3f} + {x2[-1]:.3f} = {x1[-1] + x2[-1]:.3f}")

fig, ax = plt.subplots(figsize=(5, 4.5))
ax.plot(x1, x2, lw=1)
ax.plot([0, 100], [100, 0], "--", color="0.5", lw=0.8, label="capacity x_1 + x_2 = C")
ax.plot(x1[0], x2[0], "o", color="C0")
ax.plot(x1[-1], x2[-1], "*", color="C3", ms=12, label="equilibrium")
ax.set_xlabel("rate x_1")
ax.set_ylabel("rate x_2")
ax.set_aspect("equal")
ax.legend(fontsize="small")
