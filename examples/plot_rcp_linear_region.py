"""
RCP's linear stability region and its exact boundary
====================================================

Dukkipati & McKeown's Rate Control Protocol has two gains, ``alpha`` (on spare capacity)
and ``beta`` (on the queue). The stability chart evaluates the certified rightmost
characteristic root of the linearized model at every grid point; the exact boundary is
traced separately by D-subdivision (the parameter curves where a root sits on the imaginary
axis), so the two are independent checks of each other.
"""

import matplotlib.pyplot as plt
import numpy as np

import fluidnet as fn

m = fn.models.rcp()
alphas = np.linspace(0.05, 1.6, 60)
betas = np.linspace(0.05, 1.6, 60)
chart = fn.stability_chart(m, {"alpha": alphas, "beta": betas})
boundary = fn.stability_boundary(m, "alpha", "beta", x_range=(0.05, 1.6), y_range=(0.05, 1.6))

fig, ax = plt.subplots(figsize=(5, 4.5))
chart.stability.plot(ax=ax)
boundary.plot(ax=ax, all_curves=False)
ax.plot(0.4, 0.2, "k*", ms=10, label="paper's defaults (0.4, 0.2)")
ax.legend(loc="upper right", fontsize="small")
ax.set_title("RCP: stable gains (shaded) and the exact boundary")
print(
    f"{int(chart['stable'].sum())} of {chart['stable'].size} grid points stable, "
    f"all certified: {bool(np.isfinite(chart['abscissa']).all())}"
)
