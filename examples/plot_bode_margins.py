"""
Bode plot with gain, phase and delay margins
============================================

The margins of RCP's loop gain at the paper's default gains, computed from the exact
frequency response: the gain crossover where ``|L| = 1``, the phase crossover where
``arg L = -180 deg``, and the delay margin ``PM / omega_c``: the extra round-trip time the loop
tolerates before it loses stability.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

L = fn.models.rcp().loop_gain("R")
mg = fn.margins(L)
print(mg)

resp = fn.bode(L, w_range=(0.1, 100.0))
mag_ax, phase_ax = resp.plot()  # marks the crossovers and the margins
mag_ax.set_title(
    f"phase margin {mg.phase_margin:.1f} deg at {mg.gain_crossover:.2f} rad/s, "
    f"delay margin {mg.delay_margin * 1e3:.0f} ms",
    fontsize="small",
)
plt.gcf().tight_layout()
