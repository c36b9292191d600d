"""
Stability switches: a delay that destabilizes, then stabilizes, then destabilizes again
========================================================================================

Cooke and Grossman's oscillator ``x'' + 2 zeta x' + x = -K x(t - tau)`` with ``zeta = 0.1``
and ``K = 0.25`` is stable without delay. As ``tau`` grows, pairs of roots cross the imaginary
axis at two frequencies: the faster one destabilizes, the slower one stabilizes, and the
delay intervals of stability alternate until the destabilizing crossings outpace the others.
:func:`fluidnet.stability_switches` finds every crossing in ``[0, 80]`` exactly (delays are
handled by a finite eigenvalue problem, not by sampling) and certifies each by counting the
right-half-plane roots on both sides.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

t = fn.t
x, v = fn.states("x v")
zeta, K, tau = fn.params("zeta K tau")
m = fn.Model(
    rhs={x: v(t), v: -2 * zeta * v(t) - x(t) - K * x(t - tau)},
    params={zeta: 0.1, K: 0.25, tau: 1.0},
    name="cooke-grossman",
)
sw = fn.stability_switches(m, "tau", 0.0, 80.0)
print(sw)
fig, ax = plt.subplots(figsize=(8, 3.2))
sw.plot(ax=ax)
ax.set_xlabel("delay tau")
fig.tight_layout()
