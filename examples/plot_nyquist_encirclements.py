"""
Nyquist plots with exact delays: counting encirclements
========================================================

RCP's loop gain cut at the rate, eq (9) of Dukkipati & McKeown,
``L(s) = e^{-s d0} (alpha s d0 + beta) / (s d0)^2``, has a double pole at the origin and a pure
delay. fluidnet evaluates it with the exact ``e^{-s d0}`` (no Padé approximation), indents the
contour around the poles on the imaginary axis and counts the encirclements of -1:
``Z = N + P`` closed-loop roots in the right half plane. Inside the region (alpha, beta) =
(0.4, 0.2) the count is 0; at (0.4, 1.0) the curve wraps around -1 twice.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

m = fn.models.rcp()
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
for ax, (a, b) in zip(axes, [(0.4, 0.2), (0.4, 1.0)], strict=True):
    L = m.loop_gain("R", params={"alpha": a, "beta": b})
    ny = fn.nyquist(L)
    ny.plot(ax=ax, max_magnitude=4.0)
    ax.set_title(
        f"alpha={a}, beta={b}: N={ny.encirclements}, P={ny.open_loop_rhp_poles}, "
        f"Z={ny.closed_loop_rhp_roots}",
        fontsize="small",
    )
    print(
        f"(alpha, beta) = ({a}, {b}): {'stable' if ny.stable else 'unstable'}, "
        f"{ny.closed_loop_rhp_roots} closed-loop roots in the right half plane"
    )
fig.tight_layout()
