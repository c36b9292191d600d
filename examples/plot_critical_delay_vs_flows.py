"""
Critical round-trip times of SBRM and Reno/RED against the number of flows
==========================================================================

Zimmermann's Table 6.6.2 compares the largest round-trip propagation delay for which Single
Bit Resource Marking (SBRM) and TCP Reno with RED stay stable, as the number of flows grows.
Each point below is a certified critical value: the first delay at which a pair of
characteristic roots crosses into the right half plane, with the root counts on both sides
checked. A grid of parameter sets makes it one batched computation.
"""

import matplotlib.pyplot as plt
import numpy as np

import fluidnet as fn

flows = np.array([10, 25, 50, 75, 100])
sbrm = fn.critical_value(fn.models.sbrm(), "d", 0.001, 2.0, grid={"N": flows})
reno = fn.critical_value(fn.models.reno_red(), "d", 0.001, 2.0, grid={"N": flows})

fig, ax = plt.subplots(figsize=(6, 3.8))
ax.plot(flows, sbrm.value.values * 1e3, "o-", label="SBRM")
ax.plot(flows, reno.value.values * 1e3, "s-", label="Reno/RED")
ax.set_xlabel("number of flows N")
ax.set_ylabel("critical round-trip propagation delay (ms)")
ax.legend()
ax.set_title("largest stable RTT (certified critical values)", fontsize="small")
print(np.c_[flows, sbrm.value.values, reno.value.values])
